"""generated layout

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 08:00:00.000000

A definition keeps the diagram generated for it at deployment when its source has no layout of
its own (process_definition.diagram_xml); the definitions deployed before get theirs here.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from engine.bpmn.diagram import diagram_for_deployment

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("process_definition", sa.Column("diagram_xml", sa.Text(), nullable=True))
    conn = op.get_bind()
    # One definition at a time: a source can be megabytes.
    ids = conn.execute(
        sa.text(
            "SELECT id FROM process_definition WHERE source_xml NOT LIKE '%BPMNShape%' ORDER BY id"
        )
    ).scalars()
    for definition_id in list(ids):
        key, name, source = conn.execute(
            sa.text("SELECT key, resource_name, source_xml FROM process_definition WHERE id = :id"),
            {"id": definition_id},
        ).one()
        diagram = diagram_for_deployment(source, name, key)
        if diagram is not None:
            conn.execute(
                sa.text("UPDATE process_definition SET diagram_xml = :diagram WHERE id = :id"),
                {"diagram": diagram, "id": definition_id},
            )


def downgrade() -> None:
    op.drop_column("process_definition", "diagram_xml")
