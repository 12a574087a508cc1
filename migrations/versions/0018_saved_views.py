"""saved views

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05 09:00:00.000000

Saved views: a console user's named filters of a list page (instances, incidents, tasks), one
name per user and page.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "saved_view",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("page", sa.String(length=16), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "page IN ('instances', 'incidents', 'tasks')",
            name=op.f("ck_saved_view_page_allowed"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_saved_view")),
        sa.UniqueConstraint("owner", "page", "name", name=op.f("uq_saved_view_owner_page_name")),
    )


def downgrade() -> None:
    op.drop_table("saved_view")
