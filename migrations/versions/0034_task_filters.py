"""task filters

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-06 13:00:00.000000

A saved view of the task inbox is also Camunda's task filter: a filter made over REST keeps its
task query as given and its properties, and may have no owner. As Camunda grants a filter's owner
every permission on it, each task-inbox view already saved gets that grant.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0034"
down_revision: str | Sequence[str] | None = "0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here: Camunda's FILTER resource type, a GRANT, ALL.
_FILTER, _GRANT, _ALL = 5, 1, 2**31 - 1


def upgrade() -> None:
    op.add_column("saved_view", sa.Column("task_query", JSONB(), nullable=True))
    op.add_column("saved_view", sa.Column("properties", JSONB(), nullable=True))
    op.alter_column("saved_view", "owner", existing_type=sa.Text(), nullable=True)
    op.execute(
        "INSERT INTO authorization_rule"
        " (id, type, user_id, group_id, resource_type, resource_id, permissions)"
        f" SELECT gen_random_uuid(), {_GRANT}, v.owner, NULL, {_FILTER}, v.id::text, {_ALL}"
        " FROM saved_view v WHERE v.page = 'tasks' AND v.owner IS NOT NULL"
        " ON CONFLICT DO NOTHING"
    )


def downgrade() -> None:
    op.execute(
        f"DELETE FROM authorization_rule WHERE resource_type = {_FILTER}"
        " AND resource_id IN (SELECT id::text FROM saved_view WHERE page = 'tasks')"
    )
    op.execute("DELETE FROM saved_view WHERE owner IS NULL")
    op.alter_column("saved_view", "owner", existing_type=sa.Text(), nullable=False)
    op.drop_column("saved_view", "properties")
    op.drop_column("saved_view", "task_query")
