"""incident annotations and custom incidents; signalled executions

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-06 13:00:00.000000

An incident keeps an operator's annotation (Camunda's PUT /incident/{id}/annotation) and, when
it is a custom incident created on an execution, the configuration its creator gave. Existing
incidents have neither. The audit trail's operations gain Camunda's ClearAnnotation and
CreateIncident, and Signal (an execution continued by POST /execution/{id}/signal).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0036"
down_revision: str | Sequence[str] | None = "0035"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


_OPERATIONS = (
    "'Create', 'Update', 'Delete', 'Suspend', 'Activate', 'ModifyProcessInstance', 'Migrate', "
    "'SetVariable', 'ModifyVariable', 'RemoveVariable', 'SetJobRetries', "
    "'SetExternalTaskRetries', 'Execute', 'Unlock', 'Retry', 'Resolve', 'Claim', 'Assign', "
    "'Delegate', 'AddComment', 'AddAttachment', 'DeleteAttachment', "
    "'Complete', 'CorrelateMessage', 'StartProcessInstance', 'DeleteHistory', "
    "'CreateBatch', 'RetryBatch', 'CleanupHistory', 'SetAnnotation'{added}"
)


_ADDED = ("ClearAnnotation", "CreateIncident", "Signal")


def _operations(*, added: bool) -> None:
    """The audit entries' operations, with the ones this revision adds or without them."""
    name = op.f("ck_audit_entry_operation_allowed")
    op.drop_constraint(name, "audit_entry", type_="check")
    allowed = _OPERATIONS.format(added="".join(f", '{o}'" for o in _ADDED) if added else "")
    op.create_check_constraint(name, "audit_entry", f"operation IN ({allowed})")


def upgrade() -> None:
    _operations(added=True)
    op.add_column("incident", sa.Column("annotation", sa.Text(), nullable=True))
    op.add_column("incident", sa.Column("configuration", sa.Text(), nullable=True))


def downgrade() -> None:
    added = ", ".join(f"'{o}'" for o in _ADDED)
    op.execute(f"DELETE FROM audit_entry WHERE operation IN ({added})")
    _operations(added=False)
    op.drop_column("incident", "configuration")
    op.drop_column("incident", "annotation")
