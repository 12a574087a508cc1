"""batches

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05 12:01:24.102970

Batches: one row per operation over many items, the items it was created with (each pending,
done or failed), and a job kind 'batch' that the job executors run a chunk at a time.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0021"
down_revision: str | Sequence[str] | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JOB_KINDS = "'async', 'async-after', 'timer', 'timer-start', 'history-cleanup'"


def upgrade() -> None:
    op.drop_constraint(op.f("ck_job_kind_allowed"), "job", type_="check")
    op.create_check_constraint(
        op.f("ck_job_kind_allowed"), "job", f"kind IN ({JOB_KINDS}, 'batch')"
    )
    op.create_table(
        "batch",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "state IN ('Running', 'Suspended', 'Completed', 'Cancelled')",
            name=op.f("ck_batch_state_allowed"),
        ),
        sa.CheckConstraint(
            "type IN ('retry-incidents', 'set-job-retries', 'set-external-task-retries', "
            "'cancel-instances', 'suspend-instances', 'resume-instances', 'set-variables', "
            "'delete-history', 'modify', 'migrate')",
            name=op.f("ck_batch_type_allowed"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_batch")),
    )
    op.create_index("ix_batch_created_at", "batch", ["created_at", "id"], unique=False)
    op.create_table(
        "batch_item",
        sa.Column("batch_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "state IN ('Pending', 'Done', 'Failed')", name=op.f("ck_batch_item_state_allowed")
        ),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["batch.id"], name=op.f("fk_batch_item_batch_id_batch")
        ),
        sa.PrimaryKeyConstraint("batch_id", "seq", name=op.f("pk_batch_item")),
    )
    op.create_index(
        "ix_batch_item_pending",
        "batch_item",
        ["batch_id", "seq"],
        unique=False,
        postgresql_where=sa.text("state = 'Pending'"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_batch_item_pending",
        table_name="batch_item",
        postgresql_where=sa.text("state = 'Pending'"),
    )
    op.drop_table("batch_item")
    op.drop_index("ix_batch_created_at", table_name="batch")
    op.drop_table("batch")
    # Batch jobs have no place before this revision.
    op.execute("DELETE FROM job WHERE kind = 'batch'")
    op.drop_constraint(op.f("ck_job_kind_allowed"), "job", type_="check")
    op.create_check_constraint(op.f("ck_job_kind_allowed"), "job", f"kind IN ({JOB_KINDS})")
