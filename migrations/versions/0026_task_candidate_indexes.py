"""task candidate indexes

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-06 06:45:00.000000

The task filters by candidate (`candidateUser`, `candidateGroups`, the inbox's "my groups'
tasks") test the open tasks' candidate arrays with `@>` and `&&`: two partial GIN indexes over
the open tasks serve them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | Sequence[str] | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for column in ("candidate_users", "candidate_groups"):
        op.create_index(
            f"ix_user_task_{column}",
            "user_task",
            [column],
            postgresql_using="gin",
            postgresql_where=sa.text("state = 'Open'"),
        )


def downgrade() -> None:
    op.drop_index("ix_user_task_candidate_groups", table_name="user_task")
    op.drop_index("ix_user_task_candidate_users", table_name="user_task")
