"""list indexes

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05 09:00:00.000000

Lists filtered by a definition id or key come in start order from an index on (definition_id,
started_at, id), which replaces the one on definition_id alone, and one on (definition_key,
started_at, id); the running instances (ended_at null) have a partial index in start order.
Open external tasks are listed oldest first from a partial index on (created_at, id); open
incidents have a partial index on their type.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_process_instance_definition_started",
        "process_instance",
        ["definition_id", "started_at", "id"],
    )
    op.drop_index("ix_process_instance_definition_id", table_name="process_instance")
    op.create_index(
        "ix_process_instance_key_started",
        "process_instance",
        ["definition_key", "started_at", "id"],
    )
    op.create_index(
        "ix_process_instance_unfinished",
        "process_instance",
        ["started_at", "id"],
        postgresql_where=sa.text("ended_at IS NULL"),
    )
    op.create_index(
        "ix_external_task_open",
        "external_task",
        ["created_at", "id"],
        postgresql_where=sa.text("state = 'Open'"),
    )
    op.create_index(
        "ix_incident_open_type",
        "incident",
        ["type"],
        postgresql_where=sa.text("state = 'Open'"),
    )


def downgrade() -> None:
    op.drop_index("ix_incident_open_type", table_name="incident")
    op.drop_index("ix_external_task_open", table_name="external_task")
    op.drop_index("ix_process_instance_unfinished", table_name="process_instance")
    op.drop_index("ix_process_instance_key_started", table_name="process_instance")
    op.create_index("ix_process_instance_definition_id", "process_instance", ["definition_id"])
    op.drop_index("ix_process_instance_definition_started", table_name="process_instance")
