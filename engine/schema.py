"""The one declaration of every table. Alembic migrations are generated from and checked against it.

Runtime SQL lives in `engine.store`; this module only says what the rows are. The store derives
the column lists its hot statements send (loading and writing back an instance) from these
tables, so a column is added here, in a migration, and in the runtime row if the engine uses it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from engine.identity.permissions import ANY, AuthorizationType
from engine.sql.filters import state_literal
from engine.states import (
    AlertKind,
    AlertSource,
    AuditChannel,
    AuditEntity,
    AuditOperation,
    BatchItemState,
    BatchState,
    BatchType,
    CleanupState,
    DefinitionState,
    DelegationState,
    DeliveryState,
    IncidentState,
    InstanceState,
    JobKind,
    ListPage,
    SubscriptionKind,
    TaskState,
    TokenMode,
    TokenState,
    VisitState,
    WorkKind,
    WorkLogState,
)

# Every table is a SQLModel class on SQLModel's metadata, with the project's constraint names.
metadata = SQLModel.metadata
metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

TS = sa.DateTime(timezone=True)
NOW = sa.text("now()")

INSTANCE_STATES = tuple(InstanceState)
DEFINITION_STATES = tuple(DefinitionState)
TOKEN_STATES = tuple(TokenState)
TOKEN_MODES = tuple(TokenMode)
VISIT_STATES = tuple(VisitState)
TASK_STATES = tuple(TaskState)
DELEGATION_STATES = tuple(DelegationState)
INCIDENT_STATES = tuple(IncidentState)
JOB_KINDS = tuple(JobKind)
CLEANUP_STATES = tuple(CleanupState)
SUBSCRIPTION_KINDS = tuple(SubscriptionKind)
DELIVERY_STATES = tuple(DeliveryState)
LIST_PAGES = tuple(ListPage)
AUDIT_CHANNELS = tuple(AuditChannel)
AUDIT_OPERATIONS = tuple(AuditOperation)
AUDIT_ENTITIES = tuple(AuditEntity)
BATCH_STATES = tuple(BatchState)
BATCH_ITEM_STATES = tuple(BatchItemState)
BATCH_TYPES = tuple(BatchType)
AUTHORIZATION_TYPES = tuple(AuthorizationType)
WORK_KINDS = tuple(WorkKind)
WORK_LOG_STATES = tuple(WorkLogState)
ALERT_KINDS = tuple(AlertKind)
ALERT_SOURCES = tuple(AlertSource)

# The partial indexes on a state write it with `state_literal`, as the statements that use them
# do (see engine/sql/filters.py).
OPEN_TASK = f"state = {state_literal(TaskState.OPEN)}"
OPEN_INCIDENT = f"state = {state_literal(IncidentState.OPEN)}"
RESOLVED_INCIDENT = f"state = {state_literal(IncidentState.RESOLVED)}"


def _one_of(column: str, values: tuple[str, ...]) -> sa.CheckConstraint:
    """The CHECK that `column` holds one of `values` (an enum's members: their values), in
    order."""
    allowed = ", ".join(f"'{v}'" for v in values)
    return sa.CheckConstraint(f"{column} IN ({allowed})", name=f"{column}_allowed")


# A column a command changes after its row was written: the write-back of an instance command
# (engine/store/persist.py) updates exactly these, besides the version it compares and bumps.
MUTABLE: dict[str, Any] = {"info": {"mutable": True}}


def is_mutable(column: sa.Column[Any]) -> bool:
    return bool(column.info.get("mutable"))


class Deployment(SQLModel, table=True):
    __tablename__ = "deployment"

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    name: str | None = Field(sa_type=sa.Text)
    source: str | None = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})
    # Camunda's tenant identifier (null: no tenant); definitions inherit their deployment's, and
    # instances and their work their definition's.
    tenant_id: str | None = Field(default=None, sa_type=sa.Text)


class DeploymentResource(SQLModel, table=True):
    """One file of a deployment, byte for byte as it was uploaded (BPMN, DMN, scripts, forms or
    any other file): Camunda's deployment resources, served by GET /deployment/{id}/resources and
    read again by a redeployment."""

    __tablename__ = "deployment_resource"
    __table_args__ = (sa.UniqueConstraint("deployment_id", "name"),)

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    deployment_id: UUID = Field(sa_type=sa.Uuid, foreign_key="deployment.id")
    name: str = Field(sa_type=sa.Text)
    content: bytes = Field(sa_type=sa.LargeBinary)


class Deployed(SQLModel):
    """The columns of a deployed definition, a process's or a decision's: one version of one key
    of one tenant (`UNIQUE (key, tenant_id, version)`, no tenant counting as a tenant of its
    own), the file it came from, when and with which deployment."""

    # Camunda-style "key:version:uuid", so ids read well in logs and in the compatible REST API.
    id: str = Field(sa_type=sa.Text, primary_key=True)
    key: str = Field(sa_type=sa.Text)
    version: int = Field(sa_type=sa.Integer)
    name: str | None = Field(sa_type=sa.Text)
    version_tag: str | None = Field(sa_type=sa.Text)
    deployment_id: UUID = Field(sa_type=sa.Uuid, foreign_key="deployment.id")
    resource_name: str = Field(sa_type=sa.Text)
    source_xml: str = Field(sa_type=sa.Text)
    content_hash: str = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})
    # camunda:historyTimeToLive in days; null: the file set none (the default setting applies).
    history_ttl_days: int | None = Field(default=None, sa_type=sa.Integer)
    # Camunda's tenant identifier (null: no tenant); definitions inherit their deployment's, and
    # instances and their work their definition's.
    tenant_id: str | None = Field(default=None, sa_type=sa.Text)


class ProcessDefinition(Deployed, table=True):
    __tablename__ = "process_definition"
    __table_args__ = (
        sa.UniqueConstraint("key", "tenant_id", "version", postgresql_nulls_not_distinct=True),
        sa.Index(
            "ix_process_definition_tenant_id",
            "tenant_id",
            postgresql_where=sa.text("tenant_id IS NOT NULL"),
        ),
        _one_of("state", DEFINITION_STATES),
    )

    # Active or Suspended (engine/commands/suspension.py): a suspended definition starts nothing.
    state: str = Field(
        default=DefinitionState.ACTIVE,
        sa_type=sa.String(16),
        sa_column_kwargs={"server_default": DefinitionState.ACTIVE.value},
    )
    # The source with a diagram layout generated at deployment (engine/bpmn/diagram.py); null:
    # the source has a layout of its own (or none could be generated). The console draws this.
    diagram_xml: str | None = Field(default=None, sa_type=sa.Text)


class DecisionDefinition(Deployed, table=True):
    """One version of one decision of a deployed DMN file (engine/commands/deployments.py): each
    decision of a file is a definition of its own, versioned per decision key as processes are;
    `source_xml` is the whole file (a decision that requires others is evaluated with the
    decisions of its own deployment)."""

    __tablename__ = "decision_definition"
    __table_args__ = (
        sa.UniqueConstraint("key", "tenant_id", "version", postgresql_nulls_not_distinct=True),
        sa.Index(
            "ix_decision_definition_tenant_id",
            "tenant_id",
            postgresql_where=sa.text("tenant_id IS NOT NULL"),
        ),
    )


class ProcessInstance(SQLModel, table=True):
    __tablename__ = "process_instance"
    __table_args__ = (
        # A tenant's instances in start order (rows without a tenant are not indexed).
        sa.Index(
            "ix_process_instance_tenant_started",
            "tenant_id",
            "started_at",
            "id",
            postgresql_where=sa.text("tenant_id IS NOT NULL"),
        ),
        _one_of("state", INSTANCE_STATES),
        # A definition's (a key's) instances in start order: lists filtered by either.
        sa.Index("ix_process_instance_definition_started", "definition_id", "started_at", "id"),
        sa.Index("ix_process_instance_key_started", "definition_key", "started_at", "id"),
        # A definition's instances that ended in a period or after it (the running ones are in
        # ix_process_instance_unfinished): the history heatmap reads their visits, and the
        # history cleanup each definition's ended roots, oldest first (the few called instances
        # skipped by a filter). Partial, so that lists by definition keep reading
        # ix_process_instance_definition_started.
        sa.Index(
            "ix_process_instance_definition_ended",
            "definition_id",
            "ended_at",
            postgresql_where=sa.text("ended_at IS NOT NULL"),
        ),
        # The console's jump box: the short id the lists show (the business key in lower case
        # is indexed below the class: its operator class needs the column).
        sa.Index("ix_process_instance_short_id", sa.text("right(id::text, 8)")),
        # The instance list in a state, and sorted by state (a rare state such as Suspended is a
        # short range here, and no other index gives the (state, started_at) order).
        sa.Index("ix_process_instance_state_started", "state", "started_at", "id"),
        # The instance list newest first; "roots only" too, skipping the few called instances.
        sa.Index("ix_process_instance_started", "started_at", "id"),
        # The instance list sorted by end or by business key (NULLs in them too), either way;
        # the latter also finds the instances of one business key (the jump box, the filter).
        sa.Index("ix_process_instance_ended", "ended_at", "id"),
        sa.Index("ix_process_instance_business_key_sort", "business_key", "id"),
        # The running instances (ended_at is set when an instance ends) in start order: small, and
        # an instance leaves it when it ends.
        sa.Index(
            "ix_process_instance_unfinished",
            "started_at",
            "id",
            postgresql_where=sa.text("ended_at IS NULL"),
        ),
        sa.Index(
            "ix_process_instance_super_instance_id",
            "super_instance_id",
            postgresql_where=sa.text("super_instance_id IS NOT NULL"),
        ),
        sa.Index(
            "ix_process_instance_root_instance_id",
            "root_instance_id",
            postgresql_where=sa.text("super_instance_id IS NOT NULL"),
        ),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    definition_id: str = Field(sa_type=sa.Text, foreign_key="process_definition.id")
    definition_key: str = Field(sa_type=sa.Text)
    business_key: str | None = Field(sa_type=sa.Text)
    state: str = Field(sa_type=sa.String(16), sa_column_kwargs=MUTABLE)
    version: int = Field(sa_type=sa.Integer)
    started_at: datetime = Field(sa_type=TS)
    ended_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    # A called instance: the instance and the token (waiting at a call activity) that called it,
    # and the root of its family (an instance that nobody called is its own root). Commands lock
    # the root's row first, so commands on one family never deadlock.
    super_instance_id: UUID | None = Field(sa_type=sa.Uuid)
    super_token_id: UUID | None = Field(sa_type=sa.Uuid)
    root_instance_id: UUID = Field(sa_type=sa.Uuid)
    # Camunda's tenant identifier, its definition's (null: no tenant).
    tenant_id: str | None = Field(default=None, sa_type=sa.Text)
    # A Terminated called instance that its caller's own flow ended (an interrupting boundary
    # event on the call activity, an error it threw to the caller, a terminate end event):
    # Camunda's INTERNALLY_TERMINATED; false for one cancelled by a request (its family's too).
    internally_terminated: bool = Field(
        default=False,
        sa_type=sa.Boolean,
        sa_column_kwargs={**MUTABLE, "server_default": sa.false()},
    )


# The console's jump box: a business key in any case, or the start of one, in key order
# (`text_pattern_ops`: a prefix is a range of the index, read in the order of `~<~`).
sa.Index(
    "ix_process_instance_business_key_folded",
    sa.func.lower(ProcessInstance.__table__.c.business_key).label("folded"),  # type: ignore[attr-defined]
    postgresql_ops={"folded": "text_pattern_ops"},
    postgresql_where=sa.text("business_key IS NOT NULL"),
)


class Token(SQLModel, table=True):
    __tablename__ = "token"
    __table_args__ = (
        _one_of("state", TOKEN_STATES),
        _one_of("mode", TOKEN_MODES),
        sa.Index("ix_token_instance_id", "instance_id"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    instance_id: UUID = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    node_id: str = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    state: str = Field(sa_type=sa.String(16), sa_column_kwargs=MUTABLE)
    mode: str = Field(sa_type=sa.String(16))
    scope_id: UUID | None = Field(sa_type=sa.Uuid)
    parent_id: UUID | None = Field(sa_type=sa.Uuid)
    parallel_group: str | None = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    merged_into: UUID | None = Field(sa_type=sa.Uuid, sa_column_kwargs=MUTABLE)
    visit_id: UUID | None = Field(sa_type=sa.Uuid, sa_column_kwargs=MUTABLE)
    version: int = Field(sa_type=sa.Integer)
    created_at: datetime = Field(sa_type=TS)
    updated_at: datetime = Field(sa_type=TS, sa_column_kwargs=MUTABLE)


class JoinState(SQLModel, table=True):
    __tablename__ = "join_state"

    instance_id: UUID = Field(sa_type=sa.Uuid, foreign_key="process_instance.id", primary_key=True)
    gateway_id: str = Field(sa_type=sa.Text, primary_key=True)
    scope_key: str = Field(sa_type=sa.Text, primary_key=True)
    # [{"token": uuid, "flow": flow id}, ...]: the arrived tokens, not a count.
    arrivals: list[Any] = Field(sa_type=JSONB, sa_column_kwargs=MUTABLE)
    version: int = Field(sa_type=sa.Integer)


class Variable(SQLModel, table=True):
    __tablename__ = "variable"
    __table_args__ = (
        # The keys of Bytes and File variables, read from the index alone by the `/data`
        # endpoints that find one by its variable instance id (which is derived from the key).
        sa.Index(
            "ix_variable_binary",
            "instance_id",
            "scope_key",
            "name",
            postgresql_where=sa.text("type IN ('bytes', 'file')"),
        ),
    )

    instance_id: UUID = Field(sa_type=sa.Uuid, foreign_key="process_instance.id", primary_key=True)
    scope_key: str = Field(sa_type=sa.Text, primary_key=True)
    name: str = Field(sa_type=sa.Text, primary_key=True)
    type: str = Field(sa_type=sa.String(16), sa_column_kwargs=MUTABLE)
    value: Any = Field(sa_type=JSONB, nullable=True, sa_column_kwargs=MUTABLE)
    updated_at: datetime = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    # When the variable was first set (a later set keeps it); null for variables set before
    # the column existed. Camunda's historic variable instance's createTime.
    created_at: datetime | None = Field(default=None, sa_type=TS)


class UserTask(SQLModel, table=True):
    __tablename__ = "user_task"
    __table_args__ = (
        sa.Index(
            "ix_user_task_tenant_id", "tenant_id", postgresql_where=sa.text("tenant_id IS NOT NULL")
        ),
        _one_of("state", TASK_STATES),
        _one_of("delegation_state", DELEGATION_STATES),
        sa.Index("ix_user_task_instance_id", "instance_id"),
        sa.Index("ix_user_task_open", "created_at", postgresql_where=sa.text(OPEN_TASK)),
        sa.Index("ix_user_task_assignee", "assignee", postgresql_where=sa.text(OPEN_TASK)),
        # The candidate filters (`@>`, `&&`) of engine/queries/camunda/tasks.py.
        sa.Index(
            "ix_user_task_candidate_users",
            "candidate_users",
            postgresql_using="gin",
            postgresql_where=sa.text(OPEN_TASK),
        ),
        sa.Index(
            "ix_user_task_candidate_groups",
            "candidate_groups",
            postgresql_using="gin",
            postgresql_where=sa.text(OPEN_TASK),
        ),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    # Null for a standalone task (Camunda's POST /task/create): no instance, token nor node.
    instance_id: UUID | None = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    token_id: UUID | None = Field(sa_type=sa.Uuid)
    node_id: str | None = Field(sa_type=sa.Text)
    # Name, description, due and follow-up dates, priority, owner and parent task: changed by
    # Camunda's PUT /task/{id} (engine/commands/task_changes.py), hence mutable.
    name: str | None = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    state: str = Field(sa_type=sa.String(16), sa_column_kwargs=MUTABLE)
    assignee: str | None = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    description: str | None = Field(default=None, sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    # Who the task belongs to while a delegate works on it (Camunda's owner).
    owner: str | None = Field(default=None, sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    delegation_state: str | None = Field(
        default=None, sa_type=sa.String(16), sa_column_kwargs=MUTABLE
    )
    follow_up_at: datetime | None = Field(default=None, sa_type=TS, sa_column_kwargs=MUTABLE)
    parent_task_id: UUID | None = Field(default=None, sa_type=sa.Uuid, sa_column_kwargs=MUTABLE)
    # Changed by the identity-link commands, hence mutable.
    candidate_users: list[str] = Field(
        sa_type=sa.ARRAY(sa.Text),
        sa_column_kwargs={"server_default": sa.text("'{}'"), **MUTABLE},
    )
    candidate_groups: list[str] = Field(
        sa_type=sa.ARRAY(sa.Text),
        sa_column_kwargs={"server_default": sa.text("'{}'"), **MUTABLE},
    )
    due_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    priority: int = Field(
        sa_type=sa.Integer, sa_column_kwargs={"server_default": sa.text("50"), **MUTABLE}
    )
    created_at: datetime = Field(sa_type=TS)
    ended_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    # Camunda's tenant identifier, its definition's (null: no tenant).
    tenant_id: str | None = Field(default=None, sa_type=sa.Text)


class TaskComment(SQLModel, table=True):
    """A comment on a user task (Camunda's task comments), kept with the task's instance: it goes
    when the instance's history goes."""

    __tablename__ = "task_comment"
    __table_args__ = (sa.Index("ix_task_comment_task_id", "task_id", "at"),)

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    task_id: UUID = Field(sa_type=sa.Uuid)
    # Null for a standalone task's.
    instance_id: UUID | None = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    user_id: str | None = Field(sa_type=sa.Text)
    at: datetime = Field(sa_type=TS)
    message: str = Field(sa_type=sa.Text)


class TaskAttachment(SQLModel, table=True):
    """A file or a link attached to a user task (Camunda's task attachments): `content` holds
    the uploaded bytes, `url` the link (either may be null)."""

    __tablename__ = "task_attachment"
    __table_args__ = (sa.Index("ix_task_attachment_task_id", "task_id", "created_at"),)

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    task_id: UUID = Field(sa_type=sa.Uuid)
    # Null for a standalone task's.
    instance_id: UUID | None = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    user_id: str | None = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS)
    name: str | None = Field(sa_type=sa.Text)
    description: str | None = Field(sa_type=sa.Text)
    type: str | None = Field(sa_type=sa.Text)
    url: str | None = Field(sa_type=sa.Text)
    content: bytes | None = Field(sa_type=sa.LargeBinary)


class ExternalTask(SQLModel, table=True):
    __tablename__ = "external_task"
    __table_args__ = (
        sa.Index(
            "ix_external_task_tenant_id",
            "tenant_id",
            postgresql_where=sa.text("tenant_id IS NOT NULL"),
        ),
        _one_of("state", TASK_STATES),
        sa.Index("ix_external_task_instance_id", "instance_id"),
        sa.Index(
            "ix_external_task_fetch",
            "topic",
            sa.text("priority DESC"),
            "created_at",
            "id",
            postgresql_where=sa.text(OPEN_TASK),
        ),
        sa.Index(
            "ix_external_task_fetch_oldest",
            "topic",
            "created_at",
            "id",
            postgresql_where=sa.text(OPEN_TASK),
        ),
        # Lists of open tasks, oldest first, whatever their topic.
        sa.Index(
            "ix_external_task_open",
            "created_at",
            "id",
            postgresql_where=sa.text(OPEN_TASK),
        ),
        # Open tasks a worker failed that have retries left: the instances retrying now.
        sa.Index(
            "ix_external_task_retrying",
            "instance_id",
            postgresql_where=sa.text(OPEN_TASK + " AND retries > 0 AND error_message IS NOT NULL"),
        ),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    instance_id: UUID = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    token_id: UUID = Field(sa_type=sa.Uuid)
    node_id: str = Field(sa_type=sa.Text)
    topic: str = Field(sa_type=sa.Text)
    state: str = Field(sa_type=sa.String(16), sa_column_kwargs=MUTABLE)
    priority: int = Field(sa_type=sa.BigInteger)
    worker_id: str | None = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    lock_expires_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    # Null until a worker reports a failure; 0 means no retries left (an incident is open).
    retries: int | None = Field(sa_type=sa.Integer, sa_column_kwargs=MUTABLE)
    error_message: str | None = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    error_details: str | None = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    created_at: datetime = Field(sa_type=TS)
    ended_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    # Camunda's tenant identifier, its definition's (null: no tenant).
    tenant_id: str | None = Field(default=None, sa_type=sa.Text)
    # The key of its instance's definition, written with the row: reads narrowed by definition
    # key (engine/sql/covers.py) test it on the row instead of looking the instance up.
    definition_key: str | None = Field(default=None, sa_type=sa.Text)


class Job(SQLModel, table=True):
    __tablename__ = "job"
    __table_args__ = (
        sa.Index(
            "ix_job_tenant_id", "tenant_id", postgresql_where=sa.text("tenant_id IS NOT NULL")
        ),
        _one_of("kind", JOB_KINDS),
        sa.Index("ix_job_due", "due_at", postgresql_where=sa.text("retries > 0")),
        # Acquisition's order: the highest priority first, then the earliest due.
        sa.Index(
            "ix_job_acquire",
            sa.text("priority DESC"),
            "due_at",
            postgresql_where=sa.text("retries > 0 AND NOT suspended"),
        ),
        sa.Index("ix_job_instance_id", "instance_id"),
        # Jobs that failed and have retries left: the instances retrying now.
        sa.Index(
            "ix_job_retrying",
            "instance_id",
            postgresql_where=sa.text("error_message IS NOT NULL AND retries > 0"),
        ),
        # Jobs whose retries ran out, counted per definition and node (Camunda's statistics;
        # with what narrows a principal's reads, so that the counts read the index alone).
        sa.Index(
            "ix_job_failed",
            "definition_id",
            "node_id",
            postgresql_include=["instance_id", "tenant_id"],
            postgresql_where=sa.text("retries = 0"),
        ),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    kind: str = Field(sa_type=sa.String(16))
    # Null for a timer start event's job: it belongs to a definition, not to an instance.
    instance_id: UUID | None = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    token_id: UUID | None = Field(sa_type=sa.Uuid)
    node_id: str = Field(sa_type=sa.Text)
    # Null for the history cleanup job only: it belongs to no definition.
    definition_id: str | None = Field(sa_type=sa.Text, foreign_key="process_definition.id")
    due_at: datetime = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    lock_owner: str | None = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    lock_expires_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    retries: int = Field(sa_type=sa.Integer, sa_column_kwargs=MUTABLE)
    # A cycle timer keeps its text and how many firings remain (null: unbounded).
    timer_text: str | None = Field(sa_type=sa.Text)
    repetitions_left: int | None = Field(sa_type=sa.Integer, sa_column_kwargs=MUTABLE)
    error_message: str | None = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    created_at: datetime = Field(sa_type=TS)
    # An asynchronous continuation before a node: the sequence flow its token arrived by (the
    # visit the job opens records it).
    flow_id: str | None = Field(default=None, sa_type=sa.Text)
    # Camunda's tenant identifier, its definition's (null: no tenant).
    tenant_id: str | None = Field(default=None, sa_type=sa.Text)
    # camunda:jobPriority as resolved when the job was made, or as set since: higher first.
    priority: int = Field(
        default=0, sa_type=sa.BigInteger, sa_column_kwargs={"server_default": "0", **MUTABLE}
    )
    # A suspended job is not acquired (nor run by hand) until it is activated.
    suspended: bool = Field(
        default=False,
        sa_type=sa.Boolean,
        sa_column_kwargs={"server_default": sa.false(), **MUTABLE},
    )
    # The last failure's full text (a traceback), served as the job's stacktrace.
    error_details: str | None = Field(default=None, sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    # A cycle timer's due date moved without cascading: how far (ms) it stands from the cycle's
    # own schedule, which the next repetition keeps to.
    due_shift_ms: int = Field(
        default=0, sa_type=sa.BigInteger, sa_column_kwargs={"server_default": "0", **MUTABLE}
    )
    # What a scheduled suspension's job changes when it runs (engine/commands/
    # scheduled_suspension.py); empty for every other job.
    configuration: Any = Field(
        default=None,
        sa_type=JSONB,
        sa_column_kwargs={"server_default": sa.text("'{}'::jsonb")},
        nullable=False,
    )


class JobDefinition(SQLModel, table=True):
    """Camunda's job definition: written when its process definition is deployed, one per
    asynchronous continuation and timer event (engine/model/job_definitions.py)."""

    __tablename__ = "job_definition"
    __table_args__ = (
        _one_of("job_kind", JOB_KINDS),
        sa.Index("ix_job_definition_definition_id", "definition_id"),
    )

    # Derived from (definition, node, job kind): a job names its definition without a column.
    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    definition_id: str = Field(sa_type=sa.Text, foreign_key="process_definition.id")
    definition_key: str = Field(sa_type=sa.Text)
    node_id: str = Field(sa_type=sa.Text)
    job_kind: str = Field(sa_type=sa.String(16))
    job_type: str = Field(sa_type=sa.Text)
    configuration: str = Field(sa_type=sa.Text)
    suspended: bool = Field(
        default=False,
        sa_type=sa.Boolean,
        sa_column_kwargs={"server_default": sa.false(), **MUTABLE},
    )
    # The overriding job priority an operator set (null: none).
    priority: int | None = Field(default=None, sa_type=sa.BigInteger, sa_column_kwargs=MUTABLE)
    tenant_id: str | None = Field(default=None, sa_type=sa.Text)


class EventSubscription(SQLModel, table=True):
    __tablename__ = "event_subscription"
    __table_args__ = (
        _one_of("kind", SUBSCRIPTION_KINDS),
        sa.Index("ix_event_subscription_name", "kind", "name"),
        sa.Index("ix_event_subscription_instance_id", "instance_id"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    kind: str = Field(sa_type=sa.String(16))
    name: str = Field(sa_type=sa.Text)
    # Null for a message or signal start event: it belongs to a definition.
    instance_id: UUID | None = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    token_id: UUID | None = Field(sa_type=sa.Uuid)
    node_id: str = Field(sa_type=sa.Text)
    definition_id: str = Field(sa_type=sa.Text, foreign_key="process_definition.id")
    created_at: datetime = Field(sa_type=TS)


class Incident(SQLModel, table=True):
    __tablename__ = "incident"
    __table_args__ = (
        sa.Index(
            "ix_incident_tenant_id", "tenant_id", postgresql_where=sa.text("tenant_id IS NOT NULL")
        ),
        _one_of("state", INCIDENT_STATES),
        sa.Index("ix_incident_instance_id", "instance_id"),
        sa.Index("ix_incident_open", "created_at", postgresql_where=sa.text(OPEN_INCIDENT)),
        # Open incidents of a type; the types there are, one index probe each.
        sa.Index("ix_incident_open_type", "type", postgresql_where=sa.text(OPEN_INCIDENT)),
        # Incidents counted per definition, node and type, open and resolved (Camunda's
        # statistics; with what narrows a principal's reads, so that the counts read the index
        # alone).
        sa.Index(
            "ix_incident_open_definition",
            "definition_id",
            "node_id",
            "type",
            postgresql_include=["instance_id", "tenant_id"],
            postgresql_where=sa.text(OPEN_INCIDENT),
        ),
        # Open incidents at a node by when they were opened: the stuck-instance alerts'
        # "incident open at NODE longer than DURATION" (engine/queries/alerts.py).
        sa.Index(
            "ix_incident_open_since",
            "definition_id",
            "node_id",
            "created_at",
            postgresql_include=["instance_id", "tenant_id"],
            postgresql_where=sa.text(OPEN_INCIDENT),
        ),
        sa.Index(
            "ix_incident_resolved_definition",
            "definition_id",
            "node_id",
            postgresql_include=["instance_id", "tenant_id"],
            postgresql_where=sa.text(RESOLVED_INCIDENT),
        ),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    type: str = Field(sa_type=sa.String(40))
    instance_id: UUID = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    definition_id: str = Field(sa_type=sa.Text)
    token_id: UUID | None = Field(sa_type=sa.Uuid)
    node_id: str = Field(sa_type=sa.Text)
    job_id: UUID | None = Field(sa_type=sa.Uuid)
    external_task_id: UUID | None = Field(sa_type=sa.Uuid)
    message: str = Field(sa_type=sa.Text)
    details: str | None = Field(sa_type=sa.Text)
    state: str = Field(sa_type=sa.String(16), sa_column_kwargs=MUTABLE)
    created_at: datetime = Field(sa_type=TS)
    resolved_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    # Camunda's tenant identifier, its definition's (null: no tenant).
    tenant_id: str | None = Field(default=None, sa_type=sa.Text)
    # An operator's note on the incident (Camunda's annotation), set and cleared at any time.
    annotation: str | None = Field(default=None, sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    # A custom incident's configuration, as its creator gave it (Camunda's `configuration`; a
    # failed job's or external task's is the id of the job or task).
    configuration: str | None = Field(default=None, sa_type=sa.Text)


class History(SQLModel, table=True):
    __tablename__ = "history"
    __table_args__ = (
        _one_of("state", VISIT_STATES),
        _one_of("mode", TOKEN_MODES),
        sa.Index("ix_history_instance_id", "instance_id", "started_at"),
        # Open visits at a node by when they began: the stuck-instance alerts' "waiting at NODE
        # longer than DURATION" (engine/queries/alerts.py), one range of this index per threshold.
        sa.Index(
            "ix_history_open_node",
            "node_id",
            "started_at",
            postgresql_include=["instance_id"],
            postgresql_where=sa.text(f"state = {state_literal(VisitState.ACTIVE)}"),
        ),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    instance_id: UUID = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    token_id: UUID = Field(sa_type=sa.Uuid)
    node_id: str = Field(sa_type=sa.Text)
    node_name: str | None = Field(sa_type=sa.Text)
    node_type: str = Field(sa_type=sa.String(40))
    state: str = Field(sa_type=sa.String(16), sa_column_kwargs=MUTABLE)
    started_at: datetime = Field(sa_type=TS)
    ended_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    # The mode of the visiting token: a compensation handler's visit is in Compensation mode.
    mode: str = Field(
        sa_type=sa.String(16), sa_column_kwargs={"server_default": sa.text("'Forward'")}
    )
    # A call activity's visit: the instance it called.
    called_instance_id: UUID | None = Field(sa_type=sa.Uuid)
    # The sequence flow the visit was entered by; null for a start event, a boundary event, an
    # event subprocess's start, a link's catch event and a multi-instance iteration.
    flow_id: str | None = Field(default=None, sa_type=sa.Text)


class DecisionEvaluation(SQLModel, table=True):
    """One decision evaluated (engine/dmn/evaluate.py), written in the evaluating command's
    transaction: the decision a business rule task or a direct evaluation asked for, and before
    it each decision it requires (their `root_id` names the asked one's row). Its inputs, the
    rules that matched and their outputs reproduce the result."""

    __tablename__ = "decision_evaluation"
    __table_args__ = (
        sa.Index("ix_decision_evaluation_definition", "definition_id", "evaluated_at"),
        sa.Index("ix_decision_evaluation_key", "decision_key", "evaluated_at", "id"),
        sa.Index(
            "ix_decision_evaluation_instance",
            "instance_id",
            "evaluated_at",
            postgresql_where=sa.text("instance_id IS NOT NULL"),
        ),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    # The evaluation of the decision that required this one; null: this one was asked for.
    root_id: UUID | None = Field(sa_type=sa.Uuid)
    definition_id: str = Field(sa_type=sa.Text, foreign_key="decision_definition.id")
    decision_key: str = Field(sa_type=sa.Text)
    evaluated_at: datetime = Field(sa_type=TS)
    # Where a business rule task evaluated it; all null for a direct evaluation.
    # Checked at commit: a business rule task of a starting instance evaluates before the
    # command writes the instance's row.
    instance_id: UUID | None = Field(
        sa_type=sa.Uuid,
        sa_column_args=[
            sa.ForeignKey("process_instance.id", deferrable=True, initially="DEFERRED")
        ],
    )
    process_definition_id: str | None = Field(sa_type=sa.Text)
    token_id: UUID | None = Field(sa_type=sa.Uuid)
    node_id: str | None = Field(sa_type=sa.Text)
    # The visit of the business rule task (Camunda's activity instance).
    history_id: UUID | None = Field(sa_type=sa.Uuid)
    # Who asked for a direct evaluation.
    user_id: str | None = Field(sa_type=sa.Text)
    # The variables the evaluation read, with their values: enough to evaluate it again.
    variables: Any = Field(sa_type=JSONB)
    # [{"id", "label", "type", "value"}] per input clause, in order.
    inputs: Any = Field(sa_type=JSONB)
    # The ids of the rules that matched, in rule order (empty for a literal expression).
    matched_rules: Any = Field(sa_type=JSONB)
    # [{"id", "label", "name", "rule_id", "rule_order", "type", "value"}] per output of each
    # rule in the result (a literal expression's one value: no rule).
    outputs: Any = Field(sa_type=JSONB)
    # The decision's result: a list of entries (output name to value).
    result: Any = Field(sa_type=JSONB)
    # COLLECT with an aggregator: the aggregated value.
    collect_value: Any = Field(default=None, sa_type=JSONB, nullable=True)


class WorkLog(SQLModel, table=True):
    """Camunda's job log and external task log in one table: one row per event of a job or an
    external task (made, an attempt failed, an attempt succeeded, removed; `WorkLogState`),
    written in the transaction of the command that caused it, with the job's or task's values at
    that moment. An instance that makes no job and no external task writes none. An instance's
    rows go with it when the history cleanup deletes it; rows of no instance (the history cleanup
    job, batch jobs, timer start events) are deleted past the default time to live."""

    __tablename__ = "work_log"
    __table_args__ = (
        _one_of("kind", WORK_KINDS),
        _one_of("state", WORK_LOG_STATES),
        # One job's or task's events; ids are time-ordered, so the primary key is the log's time
        # order (Camunda's timestamp and occurrence).
        sa.Index("ix_work_log_work_id", "work_id"),
        sa.Index("ix_work_log_instance_id", "instance_id"),
        # What the cleanup deletes by age: the rows of no instance.
        sa.Index(
            "ix_work_log_unowned",
            "logged_at",
            postgresql_where=sa.text("instance_id IS NULL"),
        ),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    kind: str = Field(sa_type=sa.String(16))
    state: str = Field(sa_type=sa.String(16))
    # The job's or external task's id (its row is gone once it ran or was completed).
    work_id: UUID = Field(sa_type=sa.Uuid)
    logged_at: datetime = Field(sa_type=TS)
    instance_id: UUID | None = Field(sa_type=sa.Uuid, foreign_key="process_instance.id")
    # The process definition (null for the history cleanup job and batch jobs); no foreign key:
    # the log outlives nothing it names, but a definition's deletion need not wait for it.
    definition_id: str | None = Field(sa_type=sa.Text)
    tenant_id: str | None = Field(sa_type=sa.Text)
    token_id: UUID | None = Field(sa_type=sa.Uuid)
    node_id: str = Field(sa_type=sa.Text)
    # A job's kind (`JobKind`), an external task's topic: null for the other kind.
    job_kind: str | None = Field(sa_type=sa.String(16))
    topic: str | None = Field(sa_type=sa.Text)
    due_at: datetime | None = Field(sa_type=TS)
    retries: int | None = Field(sa_type=sa.Integer)
    priority: int = Field(sa_type=sa.BigInteger)
    # The external task's worker; the engine's host that ran or failed a job.
    worker_id: str | None = Field(sa_type=sa.Text)
    host: str | None = Field(sa_type=sa.Text)
    # A failure's message and full text (a traceback, a worker's error details).
    error_message: str | None = Field(sa_type=sa.Text)
    error_details: str | None = Field(sa_type=sa.Text)


# A row of the outbox holds the events one command wrote for one instance, at most this many
# (more take further rows). An event's number, the `seq` every consumer sees (stream ids, webhook
# deliveries, cursors), is its row's seq times this plus its place in the row, counted from 0:
# numbers grow in commit-safe row order and within a row in the order the command wrote them.
# The view outbox_event (engine/sql/functions.sql) spells the same rule in SQL.
OUTBOX_EVENTS_PER_ROW = 1000


class Outbox(SQLModel, table=True):
    # No index besides the sequence: tails read by seq, and every index here costs every command.
    __tablename__ = "outbox"

    seq: int = Field(sa_type=sa.BigInteger, sa_column_args=[sa.Identity()], primary_key=True)
    # The writing transaction: a tail emits only rows below the oldest transaction still running.
    txid: int = Field(
        sa_type=sa.BigInteger,
        sa_column_kwargs={"server_default": sa.text("(pg_current_xact_id())::text::bigint")},
    )
    instance_id: UUID = Field(sa_type=sa.Uuid)
    # The events, in order: objects with `event` and, where set, `token_id`, `node_id` and
    # `history_id` (read one per row through the view outbox_event).
    events: list[dict[str, Any]] = Field(sa_type=JSONB)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})
    # The key of the instance's definition (null: a row of no process instance), written with
    # the row, so that reads narrowed by definition key need not look the instance up.
    definition_key: str | None = Field(default=None, sa_type=sa.Text)


class Idempotency(SQLModel, table=True):
    __tablename__ = "idempotency"
    # The history cleanup expires entries oldest first.
    __table_args__ = (sa.Index("ix_idempotency_created_at", "created_at"),)

    # A key is the caller's: the same key from another principal is another entry.
    principal: str = Field(
        sa_type=sa.Text, primary_key=True, sa_column_kwargs={"server_default": ""}
    )
    key: str = Field(sa_type=sa.Text, primary_key=True)
    command: str = Field(sa_type=sa.Text)
    # A digest of the request the key was first used with; a different request is refused.
    fingerprint: str = Field(sa_type=sa.Text, sa_column_kwargs={"server_default": ""})
    result: dict[str, Any] = Field(sa_type=JSONB)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})


class IdentityUser(SQLModel, table=True):
    """A person: their id (the name they log in with) and profile. Their password, if they have
    one, is a `credential` of kind password named by the id; what they may do comes from their
    groups (`group_membership`) and authorizations."""

    __tablename__ = "identity_user"

    id: str = Field(sa_type=sa.Text, primary_key=True)
    first_name: str | None = Field(sa_type=sa.Text)
    last_name: str | None = Field(sa_type=sa.Text)
    email: str | None = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})


class IdentityGroup(SQLModel, table=True):
    """A group of users. The built-in ones (engine/identity/permissions.py: `viewer`,
    `operator`, `admin`, `camunda-admin`, of type SYSTEM) make their members act with that
    role."""

    __tablename__ = "identity_group"

    id: str = Field(sa_type=sa.Text, primary_key=True)
    name: str | None = Field(sa_type=sa.Text)
    type: str | None = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})


class GroupMembership(SQLModel, table=True):
    __tablename__ = "group_membership"
    __table_args__ = (sa.Index("ix_group_membership_user_id", "user_id"),)

    group_id: str = Field(
        sa_type=sa.Text, foreign_key="identity_group.id", ondelete="CASCADE", primary_key=True
    )
    user_id: str = Field(
        sa_type=sa.Text, foreign_key="identity_user.id", ondelete="CASCADE", primary_key=True
    )


class Tenant(SQLModel, table=True):
    __tablename__ = "tenant"

    id: str = Field(sa_type=sa.Text, primary_key=True)
    name: str | None = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})


class TenantMembership(SQLModel, table=True):
    """A user or a group (exactly one) belonging to a tenant."""

    __tablename__ = "tenant_membership"
    __table_args__ = (
        sa.CheckConstraint("num_nonnulls(user_id, group_id) = 1", name="one_member"),
        sa.UniqueConstraint("tenant_id", "user_id"),
        sa.UniqueConstraint("tenant_id", "group_id"),
        sa.Index("ix_tenant_membership_user_id", "user_id"),
        sa.Index("ix_tenant_membership_group_id", "group_id"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    tenant_id: str = Field(sa_type=sa.Text, foreign_key="tenant.id", ondelete="CASCADE")
    user_id: str | None = Field(sa_type=sa.Text, foreign_key="identity_user.id", ondelete="CASCADE")
    group_id: str | None = Field(
        sa_type=sa.Text, foreign_key="identity_group.id", ondelete="CASCADE"
    )


class AuthorizationRule(SQLModel, table=True):
    """One of Camunda's authorizations (engine/identity/permissions.py): a global one (user id
    `*`), or a grant or revoke for one user or one group; on one resource type and one resource
    id or `*`; the permission bits it grants (a revoke: the bits it takes away). No foreign key
    to users or groups: as in Camunda, an authorization may name one that is not (yet) here."""

    __tablename__ = "authorization_rule"
    __table_args__ = (
        sa.CheckConstraint(
            f"type IN ({', '.join(str(int(t)) for t in AUTHORIZATION_TYPES)})",
            name="type_allowed",
        ),
        sa.CheckConstraint(
            f"CASE WHEN type = {int(AuthorizationType.GLOBAL)}"
            f" THEN user_id = '{ANY}' AND group_id IS NULL"
            " ELSE num_nonnulls(user_id, group_id) = 1 END",
            name="one_subject",
        ),
        sa.UniqueConstraint("type", "user_id", "resource_type", "resource_id"),
        sa.UniqueConstraint("type", "group_id", "resource_type", "resource_id"),
        sa.Index("ix_authorization_rule_user_id", "user_id"),
        sa.Index("ix_authorization_rule_group_id", "group_id"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    type: int = Field(sa_type=sa.SmallInteger)
    user_id: str | None = Field(sa_type=sa.Text)
    group_id: str | None = Field(sa_type=sa.Text)
    resource_type: int = Field(sa_type=sa.Integer)
    resource_id: str = Field(sa_type=sa.Text)
    permissions: int = Field(sa_type=sa.Integer)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})


class Credential(SQLModel, table=True):
    """A password (kind password: its user's, named by the user's id) or an API token (kind
    token: named by its label), hashed. A token belongs to a user, acting as them, or to a group
    of its own, acting as that group's members do."""

    __tablename__ = "credential"
    __table_args__ = (
        _one_of("kind", ("password", "token")),
        sa.CheckConstraint(
            "CASE kind WHEN 'password' THEN user_id = name AND group_id IS NULL"
            " ELSE num_nonnulls(user_id, group_id) = 1 END",
            name="owner",
        ),
        sa.UniqueConstraint("kind", "name"),
        sa.Index("ix_credential_secret_hash", "secret_hash"),
        sa.Index("ix_credential_user_id", "user_id"),
        sa.Index("ix_credential_group_id", "group_id"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    # Who: the user's id for a password, a label for an API token.
    name: str = Field(sa_type=sa.Text)
    kind: str = Field(sa_type=sa.String(16))
    user_id: str | None = Field(sa_type=sa.Text, foreign_key="identity_user.id", ondelete="CASCADE")
    group_id: str | None = Field(
        sa_type=sa.Text, foreign_key="identity_group.id", ondelete="CASCADE"
    )
    # A password: "pbkdf2_sha256$iterations$salt$hash". A token: its SHA-256 (tokens are random).
    secret_hash: str = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})


class ConsoleSession(SQLModel, table=True):
    __tablename__ = "console_session"
    __table_args__ = (
        sa.UniqueConstraint("token_hash"),
        sa.Index("ix_console_session_credential_id", "credential_id"),
    )

    # The public id: shown in lists and used to end a session; it cannot be used to log in.
    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    # The SHA-256 of the random id the cookie carries; the id itself is never stored.
    token_hash: str = Field(sa_type=sa.Text)
    # Whose: the user's role and name are read through it on every request.
    credential_id: UUID = Field(sa_type=sa.Uuid, foreign_key="credential.id", ondelete="CASCADE")
    # Random per session; the console sends it back in X-CSRF-Token on every mutation.
    csrf_token: str = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})
    # Updated at most once a minute: the idle timeout counts from here.
    last_seen_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})
    # The absolute end, whatever the activity.
    expires_at: datetime = Field(sa_type=TS)
    client_address: str | None = Field(sa_type=sa.Text)
    user_agent: str | None = Field(sa_type=sa.Text)


class HistoryCleanupRun(SQLModel, table=True):
    """One run of the history cleanup (engine/commands/cleanup.py): what it deleted so far, batch
    after batch, and how it ended. The latest runs are kept; older ones go with the cleanup."""

    __tablename__ = "history_cleanup_run"
    __table_args__ = (_one_of("state", CLEANUP_STATES),)

    id: int = Field(sa_type=sa.BigInteger, sa_column_args=[sa.Identity()], primary_key=True)
    state: str = Field(sa_type=sa.String(16))
    # Started by hand (it runs until nothing is left) rather than by the daily window.
    manual: bool = Field(sa_type=sa.Boolean)
    started_at: datetime = Field(sa_type=TS)
    updated_at: datetime = Field(sa_type=TS)
    finished_at: datetime | None = Field(sa_type=TS)
    batches: int = Field(sa_type=sa.Integer)
    # Instances deleted with everything of theirs, expired idempotency entries, outbox rows.
    instances: int = Field(sa_type=sa.BigInteger)
    idempotency: int = Field(sa_type=sa.BigInteger)
    outbox: int = Field(sa_type=sa.BigInteger)


class WebhookSubscription(SQLModel, table=True):
    """Where and what to deliver: committed outbox rows, POSTed as JSON to `url`."""

    __tablename__ = "webhook_subscription"

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    name: str = Field(sa_type=sa.Text)
    url: str = Field(sa_type=sa.Text)
    # The outbox events it wants; empty: every event.
    event_types: list[str] = Field(sa_type=JSONB)
    # Only events of instances of this process definition key; null: of every definition.
    definition_key: str | None = Field(sa_type=sa.Text)
    # Signs every body (HMAC-SHA256); written, never read back out of the engine's queries.
    secret: str = Field(sa_type=sa.Text)
    enabled: bool = Field(sa_type=sa.Boolean)
    # Every outbox row with seq <= this has its delivery row (or did not match): the dispatcher's
    # cursor, advanced in the transaction that inserts the deliveries.
    fanned_out_seq: int = Field(sa_type=sa.BigInteger)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})
    updated_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})


class WebhookDelivery(SQLModel, table=True):
    """One outbox row for one subscription, with its payload: the outbox row may go, this stays
    until it is delivered."""

    __tablename__ = "webhook_delivery"
    __table_args__ = (
        _one_of("state", DELIVERY_STATES),
        sa.UniqueConstraint("subscription_id", "seq"),
        sa.Index(
            "ix_webhook_delivery_due",
            "next_attempt_at",
            postgresql_where=sa.text(f"state = {state_literal(DeliveryState.PENDING)}"),
        ),
        # Delivered ones, oldest first, for their deletion.
        sa.Index(
            "ix_webhook_delivery_delivered",
            "delivered_at",
            postgresql_where=sa.text(f"state = {state_literal(DeliveryState.DELIVERED)}"),
        ),
        # Per-instance order: the undelivered deliveries of one instance for one subscription.
        sa.Index(
            "ix_webhook_delivery_undelivered",
            "subscription_id",
            "instance_id",
            "seq",
            postgresql_where=sa.text(f"state <> {state_literal(DeliveryState.DELIVERED)}"),
        ),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    subscription_id: UUID = Field(
        sa_type=sa.Uuid, foreign_key="webhook_subscription.id", ondelete="CASCADE"
    )
    seq: int = Field(sa_type=sa.BigInteger)
    instance_id: UUID = Field(sa_type=sa.Uuid)
    event: str = Field(sa_type=sa.String(40))
    payload: dict[str, Any] = Field(sa_type=JSONB)
    state: str = Field(sa_type=sa.String(16))
    # Attempts started (counted when leased).
    attempts: int = Field(sa_type=sa.Integer, sa_column_kwargs={"server_default": "0"})
    next_attempt_at: datetime = Field(sa_type=TS)
    lease_owner: str | None = Field(sa_type=sa.Text)
    lease_expires_at: datetime | None = Field(sa_type=TS)
    # What the last attempt got: "HTTP 500", "connection refused", "timeout"; never a trace.
    last_status: str | None = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})
    delivered_at: datetime | None = Field(sa_type=TS)


# -- summary rows (engine/db/summaries.py) ---------------------------------------------------------
# Counts the console shows, kept exact by statement triggers on process_instance, token, incident
# and history: each trigger appends its statement's net change to summary_delta (no row is
# locked, so writers never queue on a hot counter), and the fold moves the deltas into the base
# rows below. A read sums the base rows and the deltas not folded yet, in one statement.


class InstanceSummary(SQLModel, table=True):
    """Instances per definition and state."""

    __tablename__ = "instance_summary"

    definition_id: str = Field(sa_type=sa.Text, primary_key=True)
    state: str = Field(sa_type=sa.String(16), primary_key=True)
    instances: int = Field(sa_type=sa.BigInteger)


class NodeSummary(SQLModel, table=True):
    """One node of one definition: its live tokens (not Completed or Terminated), its open
    incidents, its visits (history rows), those ended, their durations' sum in seconds, and the
    visits ended canceled (state Terminated)."""

    __tablename__ = "node_summary"

    definition_id: str = Field(sa_type=sa.Text, primary_key=True)
    node_id: str = Field(sa_type=sa.Text, primary_key=True)
    active_tokens: int = Field(sa_type=sa.BigInteger)
    open_incidents: int = Field(sa_type=sa.BigInteger)
    visits: int = Field(sa_type=sa.BigInteger)
    completed_visits: int = Field(sa_type=sa.BigInteger)
    total_seconds: float = Field(sa_type=sa.Numeric)
    canceled_visits: int = Field(sa_type=sa.BigInteger)


class ActivityBucket(SQLModel, table=True):
    """Five minutes of one definition: instances started in it (by started_at), instances that
    ended Completed in it (by ended_at), incidents created in it."""

    __tablename__ = "activity_bucket"

    bucket: datetime = Field(sa_type=TS, primary_key=True)
    definition_id: str = Field(sa_type=sa.Text, primary_key=True)
    started: int = Field(sa_type=sa.BigInteger)
    completed: int = Field(sa_type=sa.BigInteger)
    incidents: int = Field(sa_type=sa.BigInteger)


class SummaryDelta(SQLModel, table=True):
    """One trigger statement's net change to the summary rows of one definition, appended by the
    triggers and folded away: at most one row per definition and statement. Its counts are
    arrays aligned with their key array: `states` and `instances` change instance_summary rows;
    `buckets` with `started`, `completed` and `incidents` change activity_bucket rows; `node_ids`
    with the node counts change node_summary rows. A count array is null when the statement
    changed none of its counts (zeros)."""

    __tablename__ = "summary_delta"
    __table_args__ = (
        sa.CheckConstraint("num_nonnulls(states, buckets, node_ids) >= 1", name="some_kind"),
    )

    seq: int = Field(sa_type=sa.BigInteger, sa_column_args=[sa.Identity()], primary_key=True)
    definition_id: str = Field(sa_type=sa.Text)
    states: list[str] | None = Field(default=None, sa_type=sa.ARRAY(sa.Text))
    instances: list[int] | None = Field(default=None, sa_type=sa.ARRAY(sa.BigInteger))
    buckets: list[datetime] | None = Field(default=None, sa_type=sa.ARRAY(TS))
    started: list[int] | None = Field(default=None, sa_type=sa.ARRAY(sa.BigInteger))
    completed: list[int] | None = Field(default=None, sa_type=sa.ARRAY(sa.BigInteger))
    incidents: list[int] | None = Field(default=None, sa_type=sa.ARRAY(sa.BigInteger))
    node_ids: list[str] | None = Field(default=None, sa_type=sa.ARRAY(sa.Text))
    active_tokens: list[int] | None = Field(default=None, sa_type=sa.ARRAY(sa.BigInteger))
    open_incidents: list[int] | None = Field(default=None, sa_type=sa.ARRAY(sa.BigInteger))
    visits: list[int] | None = Field(default=None, sa_type=sa.ARRAY(sa.BigInteger))
    completed_visits: list[int] | None = Field(default=None, sa_type=sa.ARRAY(sa.BigInteger))
    total_seconds: list[float] | None = Field(default=None, sa_type=sa.ARRAY(sa.Numeric))
    canceled_visits: list[int] | None = Field(default=None, sa_type=sa.ARRAY(sa.BigInteger))


class SavedView(SQLModel, table=True):
    """A user's named filters of one list page: opening it opens the page with them. A view of
    the task inbox is also Camunda's task filter (/engine-rest/filter): one made over REST keeps
    Camunda's task query as given (`task_query`), one made in the console is listed as a filter
    with its query mapped (app/camunda/filters.py)."""

    __tablename__ = "saved_view"
    __table_args__ = (
        _one_of("page", LIST_PAGES),
        sa.UniqueConstraint("owner", "page", "name"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    # Whose: the console user's name (the views of one user name, whoever logs in with it); a
    # Camunda filter may have none.
    owner: str | None = Field(sa_type=sa.Text, nullable=True)
    page: str = Field(sa_type=sa.String(16))
    name: str = Field(sa_type=sa.Text)
    # The filters, as the page's normalized query string (only its filter names, in its order).
    query: str = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS, sa_column_kwargs={"server_default": NOW})
    # A Camunda task filter's saved query (the fields POST /task takes), as given; None: a view
    # made in the console, whose `query` stands for it.
    task_query: dict[str, Any] | None = Field(default=None, sa_type=JSONB, nullable=True)
    # A Camunda filter's properties (any JSON object its client keeps); None: none given.
    properties: dict[str, Any] | None = Field(default=None, sa_type=JSONB, nullable=True)


class AuditEntry(SQLModel, table=True):
    """One operator mutation (engine/core/audit.py): who, when, through which channel, what, on
    which instance or entity; a variable's value before and after; the operator's annotation.
    Written
    in the mutation's own transaction, so it exists exactly when the mutation committed."""

    __tablename__ = "audit_entry"
    __table_args__ = (
        _one_of("channel", AUDIT_CHANNELS),
        _one_of("operation", AUDIT_OPERATIONS),
        _one_of("entity", AUDIT_ENTITIES),
        # The audit page, newest first; an instance's entries (the inspector's timeline).
        sa.Index("ix_audit_entry_at", "at", "id"),
        sa.Index(
            "ix_audit_entry_instance",
            "instance_id",
            "at",
            postgresql_where=sa.text("instance_id IS NOT NULL"),
        ),
        sa.Index("ix_audit_entry_user", "user_id", "at"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    at: datetime = Field(sa_type=TS)
    user_id: str = Field(sa_type=sa.Text)
    channel: str = Field(sa_type=sa.String(16))
    operation: str = Field(sa_type=sa.String(40))
    entity: str = Field(sa_type=sa.String(40))
    # The changed entity's id (a task's, a job's, a deployment's, a user's name...).
    entity_id: str | None = Field(sa_type=sa.Text)
    # No foreign key: an entry outlives the instance it names (the history cleanup deletes it).
    instance_id: UUID | None = Field(sa_type=sa.Uuid)
    definition_id: str | None = Field(sa_type=sa.Text)
    definition_key: str | None = Field(sa_type=sa.Text)
    batch_id: UUID | None = Field(sa_type=sa.Uuid)
    # The changed property (a variable's name, "retries", an instance's "state"...) and its values.
    property: str | None = Field(sa_type=sa.Text)
    before: Any = Field(default=None, sa_type=JSONB, nullable=True)
    after: Any = Field(default=None, sa_type=JSONB, nullable=True)
    annotation: str | None = Field(sa_type=sa.Text)
    # The operation's other parameters (a modification's instructions, a migration's plan...).
    details: Any = Field(default=None, sa_type=JSONB, nullable=True)


class Batch(SQLModel, table=True):
    """One operation over many items (engine/commands/batches.py), worked through by the job
    executors a chunk at a time. Its items were fixed when it was created; the counters move
    with them, in the same transactions."""

    __tablename__ = "batch"
    __table_args__ = (
        sa.Index(
            "ix_batch_tenant_id", "tenant_id", postgresql_where=sa.text("tenant_id IS NOT NULL")
        ),
        _one_of("type", BATCH_TYPES),
        _one_of("state", BATCH_STATES),
        sa.Index("ix_batch_created_at", "created_at", "id"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    type: str = Field(sa_type=sa.String(40))
    state: str = Field(sa_type=sa.String(16), sa_column_kwargs=MUTABLE)
    # The operation's parameters: retries, variables, a modification's instructions, a plan...
    payload: Any = Field(default=None, sa_type=JSONB, nullable=False)
    total: int = Field(sa_type=sa.Integer)
    done: int = Field(sa_type=sa.Integer, sa_column_kwargs=MUTABLE)
    failed: int = Field(sa_type=sa.Integer, sa_column_kwargs=MUTABLE)
    # The operator who created it, as whom its items run (null: nobody's, not audited).
    created_by: str | None = Field(sa_type=sa.Text)
    created_at: datetime = Field(sa_type=TS)
    updated_at: datetime = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    ended_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)
    # Camunda's tenant identifier, its definition's (null: no tenant).
    tenant_id: str | None = Field(default=None, sa_type=sa.Text)


class BatchItem(SQLModel, table=True):
    """One item of a batch: an incident's, a job's, an external task's or an instance's id,
    in the order it was found; done or failed in the transaction that ran it."""

    __tablename__ = "batch_item"
    __table_args__ = (
        _one_of("state", BATCH_ITEM_STATES),
        # The next pending items of a batch, in order.
        sa.Index(
            "ix_batch_item_pending",
            "batch_id",
            "seq",
            postgresql_where=sa.text(f"state = {state_literal(BatchItemState.PENDING)}"),
        ),
    )

    batch_id: UUID = Field(sa_type=sa.Uuid, foreign_key="batch.id", primary_key=True)
    seq: int = Field(sa_type=sa.Integer, primary_key=True)
    item_id: str = Field(sa_type=sa.Text)
    state: str = Field(sa_type=sa.String(16), sa_column_kwargs=MUTABLE)
    error: str | None = Field(sa_type=sa.Text, sa_column_kwargs=MUTABLE)
    attempts: int = Field(sa_type=sa.Integer, sa_column_kwargs=MUTABLE)
    updated_at: datetime | None = Field(sa_type=TS, sa_column_kwargs=MUTABLE)


def table_of(model: type[SQLModel]) -> sa.Table:
    """The table `model` declares."""
    table = model.__table__  # type: ignore[attr-defined]
    assert isinstance(table, sa.Table)
    return table


deployment = table_of(Deployment)
deployment_resource = table_of(DeploymentResource)
process_definition = table_of(ProcessDefinition)
decision_definition = table_of(DecisionDefinition)
decision_evaluation = table_of(DecisionEvaluation)
process_instance = table_of(ProcessInstance)
token = table_of(Token)
join_state = table_of(JoinState)
variable = table_of(Variable)
user_task = table_of(UserTask)
task_comment = table_of(TaskComment)
task_attachment = table_of(TaskAttachment)
external_task = table_of(ExternalTask)
job = table_of(Job)
event_subscription = table_of(EventSubscription)
incident = table_of(Incident)
history = table_of(History)
outbox = table_of(Outbox)
work_log = table_of(WorkLog)
idempotency = table_of(Idempotency)
credential = table_of(Credential)
console_session = table_of(ConsoleSession)
history_cleanup_run = table_of(HistoryCleanupRun)
webhook_subscription = table_of(WebhookSubscription)
webhook_delivery = table_of(WebhookDelivery)
instance_summary = table_of(InstanceSummary)
node_summary = table_of(NodeSummary)
activity_bucket = table_of(ActivityBucket)
summary_delta = table_of(SummaryDelta)
saved_view = table_of(SavedView)
audit_entry = table_of(AuditEntry)
batch = table_of(Batch)
batch_item = table_of(BatchItem)

OUTBOX_CHANNEL = "interlock_outbox"
JOB_CHANNEL = "interlock_job"
EXTERNAL_TASK_CHANNEL = "interlock_external_task"


# -- stuck-instance alerts (engine/commands/alerts.py) ---------------------------------------------


class AlertThreshold(SQLModel, table=True):
    """How long a token may wait, or an incident stay open, at one node of every version of a
    process definition key before an alert is raised. One per key, node and kind: set by an
    operator, or declared in the latest deployed version's model."""

    __tablename__ = "alert_threshold"
    __table_args__ = (
        _one_of("kind", ALERT_KINDS),
        _one_of("source", ALERT_SOURCES),
        sa.UniqueConstraint("definition_key", "node_id", "kind"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    definition_key: str = Field(sa_type=sa.Text)
    node_id: str = Field(sa_type=sa.Text)
    kind: str = Field(sa_type=sa.String(16))
    # The ISO 8601 duration as given, and its length in seconds.
    duration: str = Field(sa_type=sa.Text)
    seconds: int = Field(sa_type=sa.BigInteger)
    source: str = Field(sa_type=sa.String(16))
    # Whether a deployed definition of another key may have a node of this id (its file names
    # the id): then the node's open visits are told apart by their instance's key; else the
    # count of an unrestricted reader is the range of ix_history_open_node alone.
    node_shared: bool = Field(
        default=False, sa_type=sa.Boolean, sa_column_kwargs={"server_default": sa.false()}
    )
    # Every visit or incident that began before this has had its crossing recorded (or had
    # ended before crossing): the raising tick's cursor, advanced in the transaction that records.
    raised_until: datetime = Field(sa_type=TS)
    created_at: datetime = Field(sa_type=TS)
    updated_at: datetime = Field(sa_type=TS)


class AlertCrossing(SQLModel, table=True):
    """One open visit or incident that crossed one threshold: written once, with the
    `alert.raised` outbox row its webhooks deliver, so that an alert is raised exactly once."""

    __tablename__ = "alert_crossing"
    __table_args__ = (
        _one_of("kind", ALERT_KINDS),
        sa.UniqueConstraint("threshold_id", "subject_id"),
        sa.Index("ix_alert_crossing_instance_id", "instance_id"),
    )

    id: UUID = Field(sa_type=sa.Uuid, primary_key=True)
    threshold_id: UUID = Field(
        sa_type=sa.Uuid, foreign_key="alert_threshold.id", ondelete="CASCADE"
    )
    # The visit (history row) or the incident that crossed it.
    subject_id: UUID = Field(sa_type=sa.Uuid)
    instance_id: UUID = Field(sa_type=sa.Uuid)
    definition_key: str = Field(sa_type=sa.Text)
    node_id: str = Field(sa_type=sa.Text)
    kind: str = Field(sa_type=sa.String(16))
    # When the visit began or the incident was opened, and when the threshold was crossed.
    since: datetime = Field(sa_type=TS)
    crossed_at: datetime = Field(sa_type=TS)
    raised_at: datetime = Field(sa_type=TS)


alert_threshold = table_of(AlertThreshold)
alert_crossing = table_of(AlertCrossing)
