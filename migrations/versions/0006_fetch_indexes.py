"""ordered indexes for fetch-and-lock, by priority and oldest first

Revision ID: 0006
Revises: 0005
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OPEN = sa.text("state = 'Open'")


def upgrade() -> None:
    op.drop_index("ix_external_task_fetch", table_name="external_task")
    op.create_index(
        "ix_external_task_fetch",
        "external_task",
        ["topic", sa.text("priority DESC"), "created_at", "id"],
        postgresql_where=OPEN,
    )
    op.create_index(
        "ix_external_task_fetch_oldest",
        "external_task",
        ["topic", "created_at", "id"],
        postgresql_where=OPEN,
    )


def downgrade() -> None:
    op.drop_index("ix_external_task_fetch_oldest", table_name="external_task")
    op.drop_index("ix_external_task_fetch", table_name="external_task")
    op.create_index(
        "ix_external_task_fetch",
        "external_task",
        ["topic", sa.text("priority DESC"), "created_at"],
        postgresql_where=OPEN,
    )
