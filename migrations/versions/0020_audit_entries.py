"""audit entries

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05 12:00:00.000000

The audit log: one row per operator mutation, written in its transaction.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_entry",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("operation", sa.String(length=40), nullable=False),
        sa.Column("entity", sa.String(length=40), nullable=False),
        sa.Column("entity_id", sa.Text(), nullable=True),
        sa.Column("instance_id", sa.Uuid(), nullable=True),
        sa.Column("definition_id", sa.Text(), nullable=True),
        sa.Column("definition_key", sa.Text(), nullable=True),
        sa.Column("batch_id", sa.Uuid(), nullable=True),
        sa.Column("property", sa.Text(), nullable=True),
        sa.Column("before", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("after", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("annotation", sa.Text(), nullable=True),
        sa.Column("details", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.CheckConstraint(
            "channel IN ('console', 'api', 'engine-rest', 'cli', 'batch')",
            name=op.f("ck_audit_entry_channel_allowed"),
        ),
        sa.CheckConstraint(
            "entity IN ('ProcessInstance', 'ProcessDefinition', 'Deployment', 'Variable', 'Task', 'Job', 'ExternalTask', 'Incident', 'Batch', 'User', 'ApiToken', 'ProcessInstanceHistory', 'Configuration')",
            name=op.f("ck_audit_entry_entity_allowed"),
        ),
        sa.CheckConstraint(
            "operation IN ('Create', 'Update', 'Delete', 'Suspend', 'Activate', 'ModifyProcessInstance', 'Migrate', 'SetVariable', 'ModifyVariable', 'RemoveVariable', 'SetJobRetries', 'SetExternalTaskRetries', 'Execute', 'Unlock', 'Retry', 'Resolve', 'Claim', 'Assign', 'Complete', 'CorrelateMessage', 'StartProcessInstance', 'DeleteHistory', 'CreateBatch', 'RetryBatch', 'CleanupHistory', 'SetAnnotation')",
            name=op.f("ck_audit_entry_operation_allowed"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_entry")),
    )
    op.create_index("ix_audit_entry_at", "audit_entry", ["at", "id"], unique=False)
    op.create_index(
        "ix_audit_entry_instance",
        "audit_entry",
        ["instance_id", "at"],
        unique=False,
        postgresql_where=sa.text("instance_id IS NOT NULL"),
    )
    op.create_index("ix_audit_entry_user", "audit_entry", ["user_id", "at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_audit_entry_user", table_name="audit_entry")
    op.drop_index(
        "ix_audit_entry_instance",
        table_name="audit_entry",
        postgresql_where=sa.text("instance_id IS NOT NULL"),
    )
    op.drop_index("ix_audit_entry_at", table_name="audit_entry")
    op.drop_table("audit_entry")
