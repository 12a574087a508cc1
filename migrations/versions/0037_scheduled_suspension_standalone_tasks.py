"""scheduled suspension, standalone tasks

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-06 12:40:00.000000

A suspension or activation scheduled for later is a job of kind 'suspension' whose configuration
says what it changes. A standalone task (Camunda's POST /task/create) is a user task of no
instance, token nor node; its comments and attachments belong to no instance either.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0037"
down_revision: str | Sequence[str] | None = "0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KINDS = "'async', 'async-after', 'timer', 'timer-start', 'history-cleanup', 'batch'"


def _kinds(kinds: str) -> None:
    op.drop_constraint(op.f("ck_job_kind_allowed"), "job", type_="check")
    op.create_check_constraint(op.f("ck_job_kind_allowed"), "job", f"kind IN ({kinds})")
    op.drop_constraint(op.f("ck_job_definition_job_kind_allowed"), "job_definition", type_="check")
    op.create_check_constraint(
        op.f("ck_job_definition_job_kind_allowed"), "job_definition", f"job_kind IN ({kinds})"
    )


def upgrade() -> None:
    _kinds(f"{KINDS}, 'suspension'")
    op.add_column(
        "job",
        sa.Column(
            "configuration",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
    )
    for column in ("instance_id", "token_id", "node_id"):
        op.alter_column("user_task", column, nullable=True)
    op.alter_column("task_comment", "instance_id", nullable=True)
    op.alter_column("task_attachment", "instance_id", nullable=True)


def downgrade() -> None:
    # Standalone tasks and their notes have no place before this revision.
    op.execute("DELETE FROM task_comment WHERE instance_id IS NULL")
    op.execute("DELETE FROM task_attachment WHERE instance_id IS NULL")
    op.execute("DELETE FROM user_task WHERE instance_id IS NULL")
    op.alter_column("task_attachment", "instance_id", nullable=False)
    op.alter_column("task_comment", "instance_id", nullable=False)
    for column in ("instance_id", "token_id", "node_id"):
        op.alter_column("user_task", column, nullable=False)
    op.drop_column("job", "configuration")
    # Scheduled suspensions have no place before this revision.
    op.execute("DELETE FROM job WHERE kind = 'suspension'")
    _kinds(KINDS)
