"""drop process_instance indexes another index serves

Revision ID: 0045
Revises: 0044
Create Date: 2026-12-06 20:00:00.000000

Every index of process_instance costs each started instance an entry (a straight-through
instance is inserted once, already ended). Three served no read that another index does not
serve as well:

- ix_process_instance_business_key (business_key, partial): equality on the business key (the
  jump box, the list's filter, Camunda's processInstanceBusinessKey) reads
  ix_process_instance_business_key_sort (business_key, id).
- ix_process_instance_roots_started (started_at, id where nobody called it): the list's "roots
  only" walks ix_process_instance_started and skips the called instances, which are few.
- ix_process_instance_roots_ended (definition_id, ended_at where a root ended): the history
  cleanup reads ix_process_instance_definition_ended (the same columns, ended ones) and skips
  the called instances by a filter.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0045"
down_revision: str | Sequence[str] | None = "0044"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_process_instance_business_key", table_name="process_instance")
    op.drop_index("ix_process_instance_roots_started", table_name="process_instance")
    op.drop_index("ix_process_instance_roots_ended", table_name="process_instance")


def downgrade() -> None:
    op.create_index(
        "ix_process_instance_roots_ended",
        "process_instance",
        ["definition_id", "ended_at"],
        unique=False,
        postgresql_where=sa.text("super_instance_id IS NULL AND ended_at IS NOT NULL"),
    )
    op.create_index(
        "ix_process_instance_roots_started",
        "process_instance",
        ["started_at", "id"],
        unique=False,
        postgresql_where=sa.text("super_instance_id IS NULL"),
    )
    op.create_index(
        "ix_process_instance_business_key",
        "process_instance",
        ["business_key"],
        unique=False,
        postgresql_where=sa.text("business_key IS NOT NULL"),
    )
