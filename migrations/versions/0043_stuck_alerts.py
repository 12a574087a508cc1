"""stuck-instance alerts

Revision ID: 0043
Revises: 0042
Create Date: 2026-12-06 16:00:00.000000

Alert thresholds per definition key, node and kind (a token waiting, an incident open), set by an
operator or declared in a model, and the crossings recorded once each; the indexes that serve
"open visits or incidents at a node since before a time" as one range read.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0043"
down_revision: str | Sequence[str] | None = "0042"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "alert_threshold",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("definition_key", sa.Text(), nullable=False),
        sa.Column("node_id", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("duration", sa.Text(), nullable=False),
        sa.Column("seconds", sa.BigInteger(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("node_shared", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("raised_until", _TS, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.CheckConstraint(
            "kind IN ('waiting', 'incident')", name=op.f("ck_alert_threshold_kind_allowed")
        ),
        sa.CheckConstraint(
            "source IN ('console', 'model')", name=op.f("ck_alert_threshold_source_allowed")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_threshold")),
        sa.UniqueConstraint(
            "definition_key",
            "node_id",
            "kind",
            name=op.f("uq_alert_threshold_definition_key_node_id_kind"),
        ),
    )
    op.create_table(
        "alert_crossing",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("threshold_id", sa.Uuid(), nullable=False),
        sa.Column("subject_id", sa.Uuid(), nullable=False),
        sa.Column("instance_id", sa.Uuid(), nullable=False),
        sa.Column("definition_key", sa.Text(), nullable=False),
        sa.Column("node_id", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("since", _TS, nullable=False),
        sa.Column("crossed_at", _TS, nullable=False),
        sa.Column("raised_at", _TS, nullable=False),
        sa.CheckConstraint(
            "kind IN ('waiting', 'incident')", name=op.f("ck_alert_crossing_kind_allowed")
        ),
        sa.ForeignKeyConstraint(
            ["threshold_id"],
            ["alert_threshold.id"],
            name=op.f("fk_alert_crossing_threshold_id_alert_threshold"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_crossing")),
        sa.UniqueConstraint(
            "threshold_id",
            "subject_id",
            name=op.f("uq_alert_crossing_threshold_id_subject_id"),
        ),
    )
    op.create_index("ix_alert_crossing_instance_id", "alert_crossing", ["instance_id"])
    op.create_index(
        "ix_history_open_node",
        "history",
        ["node_id", "started_at"],
        unique=False,
        postgresql_include=["instance_id"],
        postgresql_where=sa.text("state = 'Active'"),
    )
    op.create_index(
        "ix_incident_open_since",
        "incident",
        ["definition_id", "node_id", "created_at"],
        unique=False,
        postgresql_include=["instance_id", "tenant_id"],
        postgresql_where=sa.text("state = 'Open'"),
    )


def downgrade() -> None:
    op.drop_index("ix_incident_open_since", table_name="incident")
    op.drop_index("ix_history_open_node", table_name="history")
    op.drop_index("ix_alert_crossing_instance_id", table_name="alert_crossing")
    op.drop_table("alert_crossing")
    op.drop_table("alert_threshold")
