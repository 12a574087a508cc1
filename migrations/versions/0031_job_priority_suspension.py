"""job priority and suspension

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-06 09:58:00.000000

A job's priority (camunda:jobPriority, higher acquired first), whether it is suspended (not
acquired until activated) and its last failure's full text. Existing jobs have priority 0, are
active and keep only their failure's message; a cycle timer's due date moved without
cascading keeps its shift from the cycle's schedule.

Job definitions (`job_definition`), one per asynchronous continuation and timer event of a
deployed process, as Camunda writes them at deployment; the definitions deployed before get
theirs here, read from their sources.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

from engine.bpmn.parser import parse_bpmn
from engine.errors import ModelError
from engine.model.job_definitions import job_definition_id, job_definitions

revision: str = "0031"
down_revision: str | Sequence[str] | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("job", sa.Column("priority", sa.BigInteger(), server_default="0", nullable=False))
    op.add_column(
        "job", sa.Column("suspended", sa.Boolean(), server_default=sa.false(), nullable=False)
    )
    op.add_column("job", sa.Column("error_details", sa.Text(), nullable=True))
    op.add_column(
        "job", sa.Column("due_shift_ms", sa.BigInteger(), server_default="0", nullable=False)
    )
    op.create_index(
        "ix_job_acquire",
        "job",
        [sa.text("priority DESC"), "due_at"],
        unique=False,
        postgresql_where=sa.text("retries > 0 AND NOT suspended"),
    )

    op.create_table(
        "job_definition",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("definition_id", sa.Text(), nullable=False),
        sa.Column("definition_key", sa.Text(), nullable=False),
        sa.Column("node_id", sa.Text(), nullable=False),
        sa.Column("job_kind", sa.String(length=16), nullable=False),
        sa.Column("job_type", sa.Text(), nullable=False),
        sa.Column("configuration", sa.Text(), nullable=False),
        sa.Column("suspended", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("priority", sa.BigInteger(), nullable=True),
        sa.Column("tenant_id", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "job_kind IN ('async', 'async-after', 'timer', 'timer-start', 'history-cleanup', "
            "'batch')",
            name=op.f("ck_job_definition_job_kind_allowed"),
        ),
        sa.ForeignKeyConstraint(["definition_id"], ["process_definition.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_job_definition_definition_id", "job_definition", ["definition_id"], unique=False
    )
    conn = op.get_bind()
    ids = conn.execute(sa.text("SELECT id FROM process_definition ORDER BY id")).scalars()
    for definition_id in list(ids):
        key, name, source = conn.execute(
            sa.text("SELECT key, resource_name, source_xml FROM process_definition WHERE id = :id"),
            {"id": definition_id},
        ).one()
        try:
            models = [m for m in parse_bpmn(source, name, None) if m.key == key]
        except ModelError:
            # A stored source today's parser refuses keeps no job definitions (it starts
            # nothing new either); the migration goes on with the others.
            continue
        for model in models[:1]:
            for spec in job_definitions(model):
                conn.execute(
                    sa.text(
                        "INSERT INTO job_definition (id, definition_id, definition_key, node_id, "
                        "job_kind, job_type, configuration, tenant_id) SELECT :id, d.id, d.key, "
                        ":node, :kind, :type, :configuration, d.tenant_id "
                        "FROM process_definition d WHERE d.id = :definition"
                    ),
                    {
                        "id": job_definition_id(definition_id, spec.node_id, spec.job_kind),
                        "node": spec.node_id,
                        "kind": spec.job_kind.value,
                        "type": spec.job_type,
                        "configuration": spec.configuration,
                        "definition": definition_id,
                    },
                )


def downgrade() -> None:
    op.drop_index("ix_job_definition_definition_id", table_name="job_definition")
    op.drop_table("job_definition")
    op.drop_index(
        "ix_job_acquire",
        table_name="job",
        postgresql_where=sa.text("retries > 0 AND NOT suspended"),
    )
    op.drop_column("job", "due_shift_ms")
    op.drop_column("job", "error_details")
    op.drop_column("job", "suspended")
    op.drop_column("job", "priority")
