"""binary variable index

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-06 12:55:00.000000

Bytes and File variables: a partial index of their keys, so that the `/data` endpoints that find
one by its variable instance id (derived from the key) read the index and not every variable.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0038"
down_revision: str | Sequence[str] | None = "0037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_variable_binary",
        "variable",
        ["instance_id", "scope_key", "name"],
        unique=False,
        postgresql_where=sa.text("type IN ('bytes', 'file')"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_variable_binary",
        table_name="variable",
        postgresql_where=sa.text("type IN ('bytes', 'file')"),
    )
