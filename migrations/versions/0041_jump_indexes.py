"""jump box indexes

Revision ID: 0041
Revises: 0040
Create Date: 2026-12-06 16:10:00.000000

The console's jump box finds an instance by its business key in any case or by the start of one
(in key order), and by the short id the lists show (the id's last 8 characters): an index for
each, so that neither reads every instance.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0041"
down_revision: str | Sequence[str] | None = "0040"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_process_instance_business_key_folded ON process_instance "
        "(lower(business_key) text_pattern_ops) WHERE business_key IS NOT NULL"
    )
    op.create_index(
        "ix_process_instance_short_id",
        "process_instance",
        [sa.text("right(id::text, 8)")],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_process_instance_short_id", table_name="process_instance")
    op.drop_index("ix_process_instance_business_key_folded", table_name="process_instance")
