"""definition key on external tasks and outbox rows

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-06 09:30:00.000000

A nullable `definition_key` on `external_task` and `outbox`: the key of the instance's
definition, written with each new row, so that a read narrowed by definition key (a user whose
grants cover a few definitions) tests it on the row instead of looking each row's instance up.
Existing rows take their instance's key; an outbox row of no process instance (a direct decision
evaluation) keeps none.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0028"
down_revision: str | Sequence[str] | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("external_task", sa.Column("definition_key", sa.Text(), nullable=True))
    op.add_column("outbox", sa.Column("definition_key", sa.Text(), nullable=True))
    op.execute(
        "UPDATE external_task e SET definition_key = p.definition_key "
        "FROM process_instance p WHERE p.id = e.instance_id"
    )
    op.execute(
        "UPDATE outbox o SET definition_key = p.definition_key "
        "FROM process_instance p WHERE p.id = o.instance_id"
    )


def downgrade() -> None:
    op.drop_column("outbox", "definition_key")
    op.drop_column("external_task", "definition_key")
