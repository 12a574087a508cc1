"""task delegation and details

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-06 10:05:00.000000

A user task's description, owner, delegation state (PENDING or RESOLVED, engine/states.py
DelegationState), follow-up date and parent task, as Camunda keeps them. Existing tasks have
none of them. The audit trail's operations gain Camunda's Delegate.
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
    "{delegate}'Complete', 'CorrelateMessage', 'StartProcessInstance', 'DeleteHistory', "
    "'CreateBatch', 'RetryBatch', 'CleanupHistory', 'SetAnnotation'"
)


def _operations(*, delegate: bool) -> None:
    """The audit entries' operations, with Delegate or without it."""
    name = op.f("ck_audit_entry_operation_allowed")
    op.drop_constraint(name, "audit_entry", type_="check")
    allowed = _OPERATIONS.format(delegate="'Delegate', " if delegate else "")
    op.create_check_constraint(name, "audit_entry", f"operation IN ({allowed})")


def upgrade() -> None:
    _operations(delegate=True)
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
    op.execute("DELETE FROM audit_entry WHERE operation = 'Delegate'")
    _operations(delegate=False)
    op.drop_constraint(op.f("ck_user_task_delegation_state_allowed"), "user_task", type_="check")
    op.drop_column("user_task", "parent_task_id")
    op.drop_column("user_task", "follow_up_at")
    op.drop_column("user_task", "delegation_state")
    op.drop_column("user_task", "owner")
    op.drop_column("user_task", "description")
