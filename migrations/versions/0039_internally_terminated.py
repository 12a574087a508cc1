"""internally terminated instances

Revision ID: 0039
Revises: 0038
Create Date: 2026-12-06 13:40:00.000000

A called instance that its caller's own flow ended (an interrupting boundary event on the call
activity, an error thrown to the caller, a terminate end event) is marked, so that the history
tells it from one cancelled by a request, as Camunda's INTERNALLY_TERMINATED and
EXTERNALLY_TERMINATED do. Instances that ended before keep false.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0039"
down_revision: str | Sequence[str] | None = "0038"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "process_instance",
        sa.Column("internally_terminated", sa.Boolean(), server_default=sa.false(), nullable=False),
    )


def downgrade() -> None:
    op.drop_column("process_instance", "internally_terminated")
