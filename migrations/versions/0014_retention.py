"""retention

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 06:00:00.000000

History retention: a definition keeps its camunda:historyTimeToLive; one job of the kind
'history-cleanup', belonging to no definition, deletes ended instances past their time to live;
each run of it is recorded; indexes find each definition's ended roots and the oldest
idempotency entries.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("process_definition", sa.Column("history_ttl_days", sa.Integer(), nullable=True))
    op.alter_column("job", "definition_id", existing_type=sa.Text(), nullable=True)
    op.drop_constraint(op.f("ck_job_kind_allowed"), "job", type_="check")
    op.create_check_constraint(
        op.f("ck_job_kind_allowed"),
        "job",
        "kind IN ('async', 'async-after', 'timer', 'timer-start', 'history-cleanup')",
    )
    op.create_index(
        "ix_process_instance_roots_ended",
        "process_instance",
        ["definition_id", "ended_at"],
        postgresql_where=sa.text("super_instance_id IS NULL AND ended_at IS NOT NULL"),
    )
    op.create_index("ix_idempotency_created_at", "idempotency", ["created_at"])
    op.create_table(
        "history_cleanup_run",
        sa.Column("id", sa.BigInteger(), sa.Identity(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("manual", sa.Boolean(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("batches", sa.Integer(), nullable=False),
        sa.Column("instances", sa.BigInteger(), nullable=False),
        sa.Column("idempotency", sa.BigInteger(), nullable=False),
        sa.Column("outbox", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(
            "state IN ('Running', 'Finished', 'Stopped')",
            name=op.f("ck_history_cleanup_run_state_allowed"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_history_cleanup_run")),
    )


def downgrade() -> None:
    op.drop_table("history_cleanup_run")
    op.drop_index("ix_idempotency_created_at", table_name="idempotency")
    op.drop_index("ix_process_instance_roots_ended", table_name="process_instance")
    # The cleanup job has no place before this revision; it is scheduled again after an upgrade.
    op.execute("DELETE FROM job WHERE kind = 'history-cleanup'")
    op.drop_constraint(op.f("ck_job_kind_allowed"), "job", type_="check")
    op.create_check_constraint(
        op.f("ck_job_kind_allowed"),
        "job",
        "kind IN ('async', 'async-after', 'timer', 'timer-start')",
    )
    op.alter_column("job", "definition_id", existing_type=sa.Text(), nullable=False)
    op.drop_column("process_definition", "history_ttl_days")
