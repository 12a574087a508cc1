"""executed path

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-05 12:10:00.000000

A visit records the sequence flow it was entered by (history.flow_id), and an asynchronous
continuation before a node the flow its token arrived by (job.flow_id), so the executed path of
an instance is its visits' flows. The history heatmap finds a definition's instances that ended
in or after a period by ix_process_instance_definition_ended (the running ones by
ix_process_instance_unfinished). A variable keeps when it was first set
(variable.created_at; null for those set before).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | Sequence[str] | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("history", sa.Column("flow_id", sa.Text(), nullable=True))
    op.add_column("job", sa.Column("flow_id", sa.Text(), nullable=True))
    op.add_column("variable", sa.Column("created_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_process_instance_definition_ended",
        "process_instance",
        ["definition_id", "ended_at"],
        unique=False,
        postgresql_where=sa.text("ended_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_process_instance_definition_ended", table_name="process_instance")
    op.drop_column("variable", "created_at")
    op.drop_column("job", "flow_id")
    op.drop_column("history", "flow_id")
