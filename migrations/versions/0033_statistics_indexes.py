"""statistics indexes

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-06 10:05:00.000000

Camunda's statistics count failed jobs, open incidents and resolved incidents per definition and
node: partial indexes that hold only those rows, with the instance and the tenant that narrow a
principal's reads, so that the counts read the indexes alone.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0033"
down_revision: str | Sequence[str] | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_job_failed",
        "job",
        ["definition_id", "node_id"],
        unique=False,
        postgresql_include=["instance_id", "tenant_id"],
        postgresql_where=sa.text("retries = 0"),
    )
    op.create_index(
        "ix_incident_open_definition",
        "incident",
        ["definition_id", "node_id", "type"],
        unique=False,
        postgresql_include=["instance_id", "tenant_id"],
        postgresql_where=sa.text("state = 'Open'"),
    )
    op.create_index(
        "ix_incident_resolved_definition",
        "incident",
        ["definition_id", "node_id"],
        unique=False,
        postgresql_include=["instance_id", "tenant_id"],
        postgresql_where=sa.text("state = 'Resolved'"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_incident_resolved_definition",
        table_name="incident",
        postgresql_where=sa.text("state = 'Resolved'"),
    )
    op.drop_index(
        "ix_incident_open_definition",
        table_name="incident",
        postgresql_where=sa.text("state = 'Open'"),
    )
    op.drop_index("ix_job_failed", table_name="job", postgresql_where=sa.text("retries = 0"))
