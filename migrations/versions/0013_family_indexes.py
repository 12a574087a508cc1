"""family indexes

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 03:20:00.000000

The instance list can show only the instances nobody called (the roots of their families),
newest first: a partial index on (started_at, id) of those instances serves it in order.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_process_instance_roots_started",
        "process_instance",
        ["started_at", "id"],
        postgresql_where=sa.text("super_instance_id IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_process_instance_roots_started", table_name="process_instance")
