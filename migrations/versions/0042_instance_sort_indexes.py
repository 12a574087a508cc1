"""instance list sort indexes

Revision ID: 0042
Revises: 0041
Create Date: 2026-12-06 16:30:00.000000

The console's instance list sorts by end and by business key as well as by start, state and
definition key: an index on (ended_at, id) and one on (business_key, id), so that a page of either
sort, in either direction and continued after a cursor, reads the index instead of sorting every
instance. (State and definition key sort by the start next, served by the existing indexes.)
"""

from collections.abc import Sequence

import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0042"
down_revision: str | Sequence[str] | None = "0041"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_process_instance_ended", "process_instance", ["ended_at", "id"], unique=False
    )
    op.create_index(
        "ix_process_instance_business_key_sort",
        "process_instance",
        ["business_key", "id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_process_instance_business_key_sort", table_name="process_instance")
    op.drop_index("ix_process_instance_ended", table_name="process_instance")
