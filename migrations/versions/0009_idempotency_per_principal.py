"""idempotency keys scoped to the principal, with a fingerprint of the first request

Revision ID: 0009
Revises: 0008

A key was global: another user repeating it got the first caller's result. The primary key now
includes the principal, and the fingerprint of the request the key was first used with lets a
different request under the same key be refused.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "idempotency", sa.Column("principal", sa.Text(), server_default="", nullable=False)
    )
    op.add_column(
        "idempotency", sa.Column("fingerprint", sa.Text(), server_default="", nullable=False)
    )
    op.drop_constraint("pk_idempotency", "idempotency", type_="primary")
    op.create_primary_key("pk_idempotency", "idempotency", ["principal", "key"])


def downgrade() -> None:
    op.execute("DELETE FROM idempotency WHERE principal <> ''")
    op.drop_constraint("pk_idempotency", "idempotency", type_="primary")
    op.create_primary_key("pk_idempotency", "idempotency", ["key"])
    op.drop_column("idempotency", "fingerprint")
    op.drop_column("idempotency", "principal")
