"""async-after jobs

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05 00:10:00.000000

A job may be an asynchronous continuation after its node (camunda:asyncAfter): the kind
'async-after' joins the kinds a job row may hold.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_constraint(op.f("ck_job_kind_allowed"), "job", type_="check")
    op.create_check_constraint(
        op.f("ck_job_kind_allowed"),
        "job",
        "kind IN ('async', 'async-after', 'timer', 'timer-start')",
    )


def downgrade() -> None:
    # A waiting continuation after a node has no kind before this revision: refuse to lose it.
    op.execute(
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM job WHERE kind = 'async-after') THEN "
        "RAISE EXCEPTION 'async-after jobs are waiting: run them before downgrading'; "
        "END IF; END $$"
    )
    op.drop_constraint(op.f("ck_job_kind_allowed"), "job", type_="check")
    op.create_check_constraint(
        op.f("ck_job_kind_allowed"), "job", "kind IN ('async', 'timer', 'timer-start')"
    )
