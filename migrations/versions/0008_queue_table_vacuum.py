"""vacuum the queue tables after a fixed number of dead rows, not a fraction of the table

Revision ID: 0008
Revises: 0007

Fetch-and-lock and job acquisition read their partial indexes from the head, oldest first. A
task that completes (a job that fires) leaves its entry at that head until VACUUM removes it, so
every fetch steps over all the entries finished since the last vacuum. Autovacuum's default
waits until a fifth of the table is dead: with a long history that is hundreds of thousands of
entries, read on every fetch. A fixed threshold keeps the head short however large the table.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

QUEUE_TABLES = ("external_task", "job")
DEAD_ROWS_BEFORE_VACUUM = 2000


def upgrade() -> None:
    for table in QUEUE_TABLES:
        op.execute(
            f"ALTER TABLE {table} SET (autovacuum_vacuum_scale_factor = 0, "
            f"autovacuum_vacuum_threshold = {DEAD_ROWS_BEFORE_VACUUM})"
        )


def downgrade() -> None:
    for table in QUEUE_TABLES:
        op.execute(
            f"ALTER TABLE {table} RESET (autovacuum_vacuum_scale_factor, "
            "autovacuum_vacuum_threshold)"
        )
