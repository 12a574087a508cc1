"""The one declaration of every table. Alembic migrations are generated from and checked against it.

Runtime SQL lives in `engine.store`; this module only says what the rows are.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from engine.states import (
    IncidentState,
    InstanceState,
    JobKind,
    SubscriptionKind,
    TaskState,
    TokenMode,
    TokenState,
    VisitState,
)

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

TS = sa.DateTime(timezone=True)
NOW = sa.text("now()")

INSTANCE_STATES = tuple(InstanceState)
TOKEN_STATES = tuple(TokenState)
TOKEN_MODES = tuple(TokenMode)
VISIT_STATES = tuple(VisitState)
TASK_STATES = tuple(TaskState)
INCIDENT_STATES = tuple(IncidentState)
JOB_KINDS = tuple(JobKind)
SUBSCRIPTION_KINDS = tuple(SubscriptionKind)


def _one_of(column: str, values: tuple[str, ...]) -> sa.CheckConstraint:
    """The CHECK that `column` holds one of `values` (an enum's members: their values), in
    order."""
    allowed = ", ".join(f"'{v}'" for v in values)
    return sa.CheckConstraint(f"{column} IN ({allowed})", name=f"{column}_allowed")


deployment = sa.Table(
    "deployment",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("name", sa.Text, nullable=True),
    sa.Column("source", sa.Text, nullable=True),
    sa.Column("created_at", TS, nullable=False, server_default=NOW),
)

process_definition = sa.Table(
    "process_definition",
    metadata,
    # Camunda-style "key:version:uuid", so ids read well in logs and in the compatible REST API.
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("name", sa.Text, nullable=True),
    sa.Column("version_tag", sa.Text, nullable=True),
    sa.Column("deployment_id", sa.Uuid, sa.ForeignKey("deployment.id"), nullable=False),
    sa.Column("resource_name", sa.Text, nullable=False),
    sa.Column("source_xml", sa.Text, nullable=False),
    sa.Column("content_hash", sa.Text, nullable=False),
    sa.Column("created_at", TS, nullable=False, server_default=NOW),
    sa.UniqueConstraint("key", "version"),
)

process_instance = sa.Table(
    "process_instance",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("definition_id", sa.Text, sa.ForeignKey("process_definition.id"), nullable=False),
    sa.Column("definition_key", sa.Text, nullable=False),
    sa.Column("business_key", sa.Text, nullable=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("started_at", TS, nullable=False),
    sa.Column("ended_at", TS, nullable=True),
    _one_of("state", INSTANCE_STATES),
    sa.Index("ix_process_instance_definition_id", "definition_id"),
    sa.Index(
        "ix_process_instance_business_key",
        "business_key",
        postgresql_where=sa.text("business_key IS NOT NULL"),
    ),
    sa.Index("ix_process_instance_state_started", "state", "started_at", "id"),
    sa.Index("ix_process_instance_started", "started_at", "id"),
)

token = sa.Table(
    "token",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("instance_id", sa.Uuid, sa.ForeignKey("process_instance.id"), nullable=False),
    sa.Column("node_id", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("mode", sa.String(16), nullable=False),
    sa.Column("scope_id", sa.Uuid, nullable=True),
    sa.Column("parent_id", sa.Uuid, nullable=True),
    sa.Column("parallel_group", sa.Text, nullable=True),
    sa.Column("merged_into", sa.Uuid, nullable=True),
    sa.Column("visit_id", sa.Uuid, nullable=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
    _one_of("state", TOKEN_STATES),
    _one_of("mode", TOKEN_MODES),
    sa.Index("ix_token_instance_id", "instance_id"),
)

join_state = sa.Table(
    "join_state",
    metadata,
    sa.Column("instance_id", sa.Uuid, sa.ForeignKey("process_instance.id"), primary_key=True),
    sa.Column("gateway_id", sa.Text, primary_key=True),
    sa.Column("scope_key", sa.Text, primary_key=True),
    # [{"token": uuid, "flow": flow id}, ...]: the arrived tokens, not a count.
    sa.Column("arrivals", JSONB, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
)

variable = sa.Table(
    "variable",
    metadata,
    sa.Column("instance_id", sa.Uuid, sa.ForeignKey("process_instance.id"), primary_key=True),
    sa.Column("scope_key", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("type", sa.String(16), nullable=False),
    sa.Column("value", JSONB, nullable=True),
    sa.Column("updated_at", TS, nullable=False),
)

user_task = sa.Table(
    "user_task",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("instance_id", sa.Uuid, sa.ForeignKey("process_instance.id"), nullable=False),
    sa.Column("token_id", sa.Uuid, nullable=False),
    sa.Column("node_id", sa.Text, nullable=False),
    sa.Column("name", sa.Text, nullable=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("assignee", sa.Text, nullable=True),
    sa.Column("candidate_users", sa.ARRAY(sa.Text), nullable=False, server_default=sa.text("'{}'")),
    sa.Column(
        "candidate_groups", sa.ARRAY(sa.Text), nullable=False, server_default=sa.text("'{}'")
    ),
    sa.Column("due_at", TS, nullable=True),
    sa.Column("priority", sa.Integer, nullable=False, server_default=sa.text("50")),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("ended_at", TS, nullable=True),
    _one_of("state", TASK_STATES),
    sa.Index("ix_user_task_instance_id", "instance_id"),
    sa.Index("ix_user_task_open", "created_at", postgresql_where=sa.text("state = 'Open'")),
    sa.Index("ix_user_task_assignee", "assignee", postgresql_where=sa.text("state = 'Open'")),
)

external_task = sa.Table(
    "external_task",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("instance_id", sa.Uuid, sa.ForeignKey("process_instance.id"), nullable=False),
    sa.Column("token_id", sa.Uuid, nullable=False),
    sa.Column("node_id", sa.Text, nullable=False),
    sa.Column("topic", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("priority", sa.BigInteger, nullable=False),
    sa.Column("worker_id", sa.Text, nullable=True),
    sa.Column("lock_expires_at", TS, nullable=True),
    # Null until a worker reports a failure; 0 means no retries left (an incident is open).
    sa.Column("retries", sa.Integer, nullable=True),
    sa.Column("error_message", sa.Text, nullable=True),
    sa.Column("error_details", sa.Text, nullable=True),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("ended_at", TS, nullable=True),
    _one_of("state", TASK_STATES),
    sa.Index("ix_external_task_instance_id", "instance_id"),
    sa.Index(
        "ix_external_task_fetch",
        "topic",
        sa.text("priority DESC"),
        "created_at",
        "id",
        postgresql_where=sa.text("state = 'Open'"),
    ),
    sa.Index(
        "ix_external_task_fetch_oldest",
        "topic",
        "created_at",
        "id",
        postgresql_where=sa.text("state = 'Open'"),
    ),
)

job = sa.Table(
    "job",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    # Null for a timer start event's job: it belongs to a definition, not to an instance.
    sa.Column("instance_id", sa.Uuid, sa.ForeignKey("process_instance.id"), nullable=True),
    sa.Column("token_id", sa.Uuid, nullable=True),
    sa.Column("node_id", sa.Text, nullable=False),
    sa.Column("definition_id", sa.Text, sa.ForeignKey("process_definition.id"), nullable=False),
    sa.Column("due_at", TS, nullable=False),
    sa.Column("lock_owner", sa.Text, nullable=True),
    sa.Column("lock_expires_at", TS, nullable=True),
    sa.Column("retries", sa.Integer, nullable=False),
    # A cycle timer keeps its text and how many firings remain (null: unbounded).
    sa.Column("timer_text", sa.Text, nullable=True),
    sa.Column("repetitions_left", sa.Integer, nullable=True),
    sa.Column("error_message", sa.Text, nullable=True),
    sa.Column("created_at", TS, nullable=False),
    _one_of("kind", JOB_KINDS),
    sa.Index("ix_job_due", "due_at", postgresql_where=sa.text("retries > 0")),
    sa.Index("ix_job_instance_id", "instance_id"),
)

event_subscription = sa.Table(
    "event_subscription",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    # Null for a message or signal start event: it belongs to a definition.
    sa.Column("instance_id", sa.Uuid, sa.ForeignKey("process_instance.id"), nullable=True),
    sa.Column("token_id", sa.Uuid, nullable=True),
    sa.Column("node_id", sa.Text, nullable=False),
    sa.Column("definition_id", sa.Text, sa.ForeignKey("process_definition.id"), nullable=False),
    sa.Column("created_at", TS, nullable=False),
    _one_of("kind", SUBSCRIPTION_KINDS),
    sa.Index("ix_event_subscription_name", "kind", "name"),
    sa.Index("ix_event_subscription_instance_id", "instance_id"),
)

incident = sa.Table(
    "incident",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("type", sa.String(40), nullable=False),
    sa.Column("instance_id", sa.Uuid, sa.ForeignKey("process_instance.id"), nullable=False),
    sa.Column("definition_id", sa.Text, nullable=False),
    sa.Column("token_id", sa.Uuid, nullable=True),
    sa.Column("node_id", sa.Text, nullable=False),
    sa.Column("job_id", sa.Uuid, nullable=True),
    sa.Column("external_task_id", sa.Uuid, nullable=True),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("details", sa.Text, nullable=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("resolved_at", TS, nullable=True),
    _one_of("state", INCIDENT_STATES),
    sa.Index("ix_incident_instance_id", "instance_id"),
    sa.Index("ix_incident_open", "created_at", postgresql_where=sa.text("state = 'Open'")),
)

history = sa.Table(
    "history",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    sa.Column("instance_id", sa.Uuid, sa.ForeignKey("process_instance.id"), nullable=False),
    sa.Column("token_id", sa.Uuid, nullable=False),
    sa.Column("node_id", sa.Text, nullable=False),
    sa.Column("node_name", sa.Text, nullable=True),
    sa.Column("node_type", sa.String(40), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("started_at", TS, nullable=False),
    sa.Column("ended_at", TS, nullable=True),
    _one_of("state", VISIT_STATES),
    sa.Index("ix_history_instance_id", "instance_id", "started_at"),
)

outbox = sa.Table(
    "outbox",
    metadata,
    sa.Column("seq", sa.BigInteger, sa.Identity(), primary_key=True),
    # The writing transaction: a tail emits only rows below the oldest transaction still running.
    sa.Column(
        "txid",
        sa.BigInteger,
        nullable=False,
        server_default=sa.text("(pg_current_xact_id())::text::bigint"),
    ),
    sa.Column("event", sa.String(40), nullable=False),
    sa.Column("instance_id", sa.Uuid, nullable=False),
    sa.Column("token_id", sa.Uuid, nullable=True),
    sa.Column("node_id", sa.Text, nullable=True),
    sa.Column("history_id", sa.Uuid, nullable=True),
    sa.Column("created_at", TS, nullable=False, server_default=NOW),
    # No index besides the sequence: tails read by seq, and every index here costs every command.
)

idempotency = sa.Table(
    "idempotency",
    metadata,
    # A key is the caller's: the same key from another principal is another entry.
    sa.Column("principal", sa.Text, primary_key=True, server_default=""),
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("command", sa.Text, nullable=False),
    # A digest of the request the key was first used with; a different request is refused.
    sa.Column("fingerprint", sa.Text, nullable=False, server_default=""),
    sa.Column("result", JSONB, nullable=False),
    sa.Column("created_at", TS, nullable=False, server_default=NOW),
)

credential = sa.Table(
    "credential",
    metadata,
    sa.Column("id", sa.Uuid, primary_key=True),
    # Who: the user name for a password, a label for an API token.
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    # A password: "pbkdf2_sha256$iterations$salt$hash". A token: its SHA-256 (tokens are random).
    sa.Column("secret_hash", sa.Text, nullable=False),
    sa.Column("created_at", TS, nullable=False, server_default=NOW),
    _one_of("kind", ("password", "token")),
    _one_of("role", ("viewer", "operator", "admin")),
    sa.UniqueConstraint("kind", "name"),
    sa.Index("ix_credential_secret_hash", "secret_hash"),
)

console_session = sa.Table(
    "console_session",
    metadata,
    # The public id: shown in lists and used to end a session; it cannot be used to log in.
    sa.Column("id", sa.Uuid, primary_key=True),
    # The SHA-256 of the random id the cookie carries; the id itself is never stored.
    sa.Column("token_hash", sa.Text, nullable=False),
    # Whose: the user's role and name are read through it on every request.
    sa.Column(
        "credential_id",
        sa.Uuid,
        sa.ForeignKey("credential.id", ondelete="CASCADE"),
        nullable=False,
    ),
    # Random per session; the console sends it back in X-CSRF-Token on every mutation.
    sa.Column("csrf_token", sa.Text, nullable=False),
    sa.Column("created_at", TS, nullable=False, server_default=NOW),
    # Updated at most once a minute: the idle timeout counts from here.
    sa.Column("last_seen_at", TS, nullable=False, server_default=NOW),
    # The absolute end, whatever the activity.
    sa.Column("expires_at", TS, nullable=False),
    sa.Column("client_address", sa.Text, nullable=True),
    sa.Column("user_agent", sa.Text, nullable=True),
    sa.UniqueConstraint("token_hash"),
    sa.Index("ix_console_session_credential_id", "credential_id"),
)

OUTBOX_CHANNEL = "interlock_outbox"
JOB_CHANNEL = "interlock_job"
EXTERNAL_TASK_CHANNEL = "interlock_external_task"
