"""the job log and the external task log

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-06 12:50:00.000000

One row per event of a job or an external task (created, failed, successful, deleted), written
in the transaction of the command that caused it: Camunda's job log and external task log in one
table (`kind` tells them apart). Jobs and tasks that existed before this revision have no
creation row.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0035"
down_revision: str | Sequence[str] | None = "0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "work_log",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("work_id", sa.Uuid(), nullable=False),
        sa.Column("logged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("instance_id", sa.Uuid(), nullable=True),
        sa.Column("definition_id", sa.Text(), nullable=True),
        sa.Column("tenant_id", sa.Text(), nullable=True),
        sa.Column("token_id", sa.Uuid(), nullable=True),
        sa.Column("node_id", sa.Text(), nullable=False),
        sa.Column("job_kind", sa.String(length=16), nullable=True),
        sa.Column("topic", sa.Text(), nullable=True),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("retries", sa.Integer(), nullable=True),
        sa.Column("priority", sa.BigInteger(), nullable=False),
        sa.Column("worker_id", sa.Text(), nullable=True),
        sa.Column("host", sa.Text(), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("error_details", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "kind IN ('job', 'external-task')", name=op.f("ck_work_log_kind_allowed")
        ),
        sa.CheckConstraint(
            "state IN ('created', 'failed', 'successful', 'deleted')",
            name=op.f("ck_work_log_state_allowed"),
        ),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["process_instance.id"],
            name=op.f("fk_work_log_instance_id_process_instance"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_work_log")),
    )
    op.create_index("ix_work_log_work_id", "work_log", ["work_id"], unique=False)
    op.create_index("ix_work_log_instance_id", "work_log", ["instance_id"], unique=False)
    op.create_index(
        "ix_work_log_unowned",
        "work_log",
        ["logged_at"],
        unique=False,
        postgresql_where=sa.text("instance_id IS NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_work_log_unowned",
        table_name="work_log",
        postgresql_where=sa.text("instance_id IS NULL"),
    )
    op.drop_index("ix_work_log_instance_id", table_name="work_log")
    op.drop_index("ix_work_log_work_id", table_name="work_log")
    op.drop_table("work_log")
