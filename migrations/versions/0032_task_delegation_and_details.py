"""task delegation, details, comments and attachments

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-06 10:05:00.000000

A user task's description, owner, delegation state (PENDING or RESOLVED, engine/states.py
DelegationState), follow-up date and parent task, as Camunda keeps them. Existing tasks have
none of them. Comments (`task_comment`) and attachments (`task_attachment`) of a task are rows
of its instance. The audit trail's operations gain Camunda's Delegate, AddComment,
AddAttachment and DeleteAttachment.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0032"
down_revision: str | Sequence[str] | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


_OPERATIONS = (
    "'Create', 'Update', 'Delete', 'Suspend', 'Activate', 'ModifyProcessInstance', 'Migrate', "
    "'SetVariable', 'ModifyVariable', 'RemoveVariable', 'SetJobRetries', "
    "'SetExternalTaskRetries', 'Execute', 'Unlock', 'Retry', 'Resolve', 'Claim', 'Assign', "
    "{added}'Complete', 'CorrelateMessage', 'StartProcessInstance', 'DeleteHistory', "
    "'CreateBatch', 'RetryBatch', 'CleanupHistory', 'SetAnnotation'"
)


_ADDED = ("Delegate", "AddComment", "AddAttachment", "DeleteAttachment")


def _operations(*, added: bool) -> None:
    """The audit entries' operations, with the ones this revision adds or without them."""
    name = op.f("ck_audit_entry_operation_allowed")
    op.drop_constraint(name, "audit_entry", type_="check")
    allowed = _OPERATIONS.format(added="".join(f"'{o}', " for o in _ADDED) if added else "")
    op.create_check_constraint(name, "audit_entry", f"operation IN ({allowed})")


def upgrade() -> None:
    _operations(added=True)
    op.create_table(
        "task_comment",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("task_id", sa.Uuid(), nullable=False),
        sa.Column("instance_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["process_instance.id"],
            name=op.f("fk_task_comment_instance_id_process_instance"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_comment")),
    )
    op.create_index("ix_task_comment_task_id", "task_comment", ["task_id", "at"], unique=False)
    op.create_table(
        "task_attachment",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("task_id", sa.Uuid(), nullable=False),
        sa.Column("instance_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("type", sa.Text(), nullable=True),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("content", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["process_instance.id"],
            name=op.f("fk_task_attachment_instance_id_process_instance"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_attachment")),
    )
    op.create_index(
        "ix_task_attachment_task_id", "task_attachment", ["task_id", "created_at"], unique=False
    )
    op.add_column("user_task", sa.Column("description", sa.Text(), nullable=True))
    op.add_column("user_task", sa.Column("owner", sa.Text(), nullable=True))
    op.add_column("user_task", sa.Column("delegation_state", sa.String(length=16), nullable=True))
    op.add_column("user_task", sa.Column("follow_up_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("user_task", sa.Column("parent_task_id", sa.Uuid(), nullable=True))
    op.create_check_constraint(
        op.f("ck_user_task_delegation_state_allowed"),
        "user_task",
        "delegation_state IN ('PENDING', 'RESOLVED')",
    )


def downgrade() -> None:
    added = ", ".join(f"'{o}'" for o in _ADDED)
    op.execute(f"DELETE FROM audit_entry WHERE operation IN ({added})")
    _operations(added=False)
    op.drop_index("ix_task_attachment_task_id", table_name="task_attachment")
    op.drop_table("task_attachment")
    op.drop_index("ix_task_comment_task_id", table_name="task_comment")
    op.drop_table("task_comment")
    op.drop_constraint(op.f("ck_user_task_delegation_state_allowed"), "user_task", type_="check")
    op.drop_column("user_task", "parent_task_id")
    op.drop_column("user_task", "follow_up_at")
    op.drop_column("user_task", "delegation_state")
    op.drop_column("user_task", "owner")
    op.drop_column("user_task", "description")
