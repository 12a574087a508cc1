"""decisions

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-05 16:00:00.000000

DMN decisions deploy as decision definitions, versioned per decision key; every evaluation of a
decision (by a business rule task or directly) is a decision_evaluation row written in the
evaluating transaction, with its inputs, matched rules and outputs.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0024"
down_revision: str | Sequence[str] | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "decision_definition",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("version_tag", sa.Text(), nullable=True),
        sa.Column("deployment_id", sa.Uuid(), nullable=False),
        sa.Column("resource_name", sa.Text(), nullable=False),
        sa.Column("source_xml", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.Text(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("history_ttl_days", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["deployment_id"],
            ["deployment.id"],
            name=op.f("fk_decision_definition_deployment_id_deployment"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decision_definition")),
        sa.UniqueConstraint("key", "version", name=op.f("uq_decision_definition_key_version")),
    )
    op.create_table(
        "decision_evaluation",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("root_id", sa.Uuid(), nullable=True),
        sa.Column("definition_id", sa.Text(), nullable=False),
        sa.Column("decision_key", sa.Text(), nullable=False),
        sa.Column("evaluated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("instance_id", sa.Uuid(), nullable=True),
        sa.Column("process_definition_id", sa.Text(), nullable=True),
        sa.Column("token_id", sa.Uuid(), nullable=True),
        sa.Column("node_id", sa.Text(), nullable=True),
        sa.Column("history_id", sa.Uuid(), nullable=True),
        sa.Column("user_id", sa.Text(), nullable=True),
        sa.Column("variables", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("inputs", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("matched_rules", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("outputs", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("result", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("collect_value", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.ForeignKeyConstraint(
            ["definition_id"],
            ["decision_definition.id"],
            name=op.f("fk_decision_evaluation_definition_id_decision_definition"),
        ),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["process_instance.id"],
            name=op.f("fk_decision_evaluation_instance_id_process_instance"),
            deferrable=True,
            initially="DEFERRED",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decision_evaluation")),
    )
    op.create_index(
        "ix_decision_evaluation_definition",
        "decision_evaluation",
        ["definition_id", "evaluated_at"],
        unique=False,
    )
    op.create_index(
        "ix_decision_evaluation_key",
        "decision_evaluation",
        ["decision_key", "evaluated_at", "id"],
        unique=False,
    )
    op.create_index(
        "ix_decision_evaluation_instance",
        "decision_evaluation",
        ["instance_id", "evaluated_at"],
        unique=False,
        postgresql_where=sa.text("instance_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_decision_evaluation_instance",
        table_name="decision_evaluation",
        postgresql_where=sa.text("instance_id IS NOT NULL"),
    )
    op.drop_index("ix_decision_evaluation_key", table_name="decision_evaluation")
    op.drop_index("ix_decision_evaluation_definition", table_name="decision_evaluation")
    op.drop_table("decision_evaluation")
    op.drop_table("decision_definition")
