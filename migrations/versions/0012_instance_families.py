"""instance families, compensation history, conditional and compensate subscriptions

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 02:40:00.000000

A called instance names the instance and token that called it and the root of its family (an
instance nobody called is its own root). A history row keeps the mode of its token (a
compensation handler's visit is in Compensation mode) and, for a call activity, the instance it
called. Event subscriptions may be conditional events and compensable activities.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("process_instance", sa.Column("super_instance_id", sa.Uuid(), nullable=True))
    op.add_column("process_instance", sa.Column("super_token_id", sa.Uuid(), nullable=True))
    op.add_column("process_instance", sa.Column("root_instance_id", sa.Uuid(), nullable=True))
    op.execute("UPDATE process_instance SET root_instance_id = id")
    op.alter_column("process_instance", "root_instance_id", nullable=False)
    op.create_index(
        "ix_process_instance_super_instance_id",
        "process_instance",
        ["super_instance_id"],
        postgresql_where=sa.text("super_instance_id IS NOT NULL"),
    )
    op.create_index(
        "ix_process_instance_root_instance_id",
        "process_instance",
        ["root_instance_id"],
        postgresql_where=sa.text("super_instance_id IS NOT NULL"),
    )
    op.add_column(
        "history",
        sa.Column(
            "mode", sa.String(length=16), server_default=sa.text("'Forward'"), nullable=False
        ),
    )
    op.create_check_constraint(
        op.f("ck_history_mode_allowed"), "history", "mode IN ('Forward', 'Compensation')"
    )
    op.add_column("history", sa.Column("called_instance_id", sa.Uuid(), nullable=True))
    op.drop_constraint(
        op.f("ck_event_subscription_kind_allowed"), "event_subscription", type_="check"
    )
    op.create_check_constraint(
        op.f("ck_event_subscription_kind_allowed"),
        "event_subscription",
        "kind IN ('message', 'signal', 'conditional', 'compensate')",
    )


def downgrade() -> None:
    op.execute(
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM process_instance WHERE super_instance_id IS NOT "
        "NULL AND state NOT IN ('Completed', 'Terminated')) THEN RAISE EXCEPTION 'called "
        "instances are running: end them before downgrading'; END IF; END $$"
    )
    op.execute("DELETE FROM event_subscription WHERE kind IN ('conditional', 'compensate')")
    op.drop_constraint(
        op.f("ck_event_subscription_kind_allowed"), "event_subscription", type_="check"
    )
    op.create_check_constraint(
        op.f("ck_event_subscription_kind_allowed"),
        "event_subscription",
        "kind IN ('message', 'signal')",
    )
    op.drop_column("history", "called_instance_id")
    op.drop_constraint(op.f("ck_history_mode_allowed"), "history", type_="check")
    op.drop_column("history", "mode")
    op.drop_index("ix_process_instance_root_instance_id", table_name="process_instance")
    op.drop_index("ix_process_instance_super_instance_id", table_name="process_instance")
    op.drop_column("process_instance", "root_instance_id")
    op.drop_column("process_instance", "super_token_id")
    op.drop_column("process_instance", "super_instance_id")
