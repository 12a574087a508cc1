"""job priority and suspension

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-06 09:58:00.000000

A job's priority (camunda:jobPriority, higher acquired first), whether it is suspended (not
acquired until activated) and its last failure's full text. Existing jobs have priority 0, are
active and keep only their failure's message; a cycle timer's due date moved without
cascading keeps its shift from the cycle's schedule.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0031"
down_revision: str | Sequence[str] | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("job", sa.Column("priority", sa.BigInteger(), server_default="0", nullable=False))
    op.add_column(
        "job", sa.Column("suspended", sa.Boolean(), server_default=sa.false(), nullable=False)
    )
    op.add_column("job", sa.Column("error_details", sa.Text(), nullable=True))
    op.add_column(
        "job", sa.Column("due_shift_ms", sa.BigInteger(), server_default="0", nullable=False)
    )
    op.create_index(
        "ix_job_acquire",
        "job",
        [sa.text("priority DESC"), "due_at"],
        unique=False,
        postgresql_where=sa.text("retries > 0 AND NOT suspended"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_job_acquire",
        table_name="job",
        postgresql_where=sa.text("retries > 0 AND NOT suspended"),
    )
    op.drop_column("job", "due_shift_ms")
    op.drop_column("job", "error_details")
    op.drop_column("job", "suspended")
    op.drop_column("job", "priority")
