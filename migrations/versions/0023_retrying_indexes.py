"""retrying indexes

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05 12:10:00.000000

The instances retrying now (a job or an open external task failed and has retries left) come
from two small partial indexes on instance_id over those rows only.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | Sequence[str] | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_job_retrying",
        "job",
        ["instance_id"],
        postgresql_where=sa.text("error_message IS NOT NULL AND retries > 0"),
    )
    op.create_index(
        "ix_external_task_retrying",
        "external_task",
        ["instance_id"],
        postgresql_where=sa.text("state = 'Open' AND retries > 0 AND error_message IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_external_task_retrying", table_name="external_task")
    op.drop_index("ix_job_retrying", table_name="job")
