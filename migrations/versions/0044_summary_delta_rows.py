"""one summary delta row per definition and trigger statement

Revision ID: 0044
Revises: 0043
Create Date: 2026-12-06 19:45:00.000000

The summary triggers wrote one summary_delta row per node they changed, and an instance's state
and its five-minute bucket in two more: a straight-through instance of five nodes left seven
rows. Now each trigger statement writes at most one row per definition (per bucket, when its rows
fall into several): the node counts travel together in `nodes` ({node_id: [active_tokens,
open_incidents, visits, completed_visits, total_seconds, canceled_visits]}), and a state change
shares its row with a bucket change. Unfolded node rows are rewritten in the new form.
"""

import hashlib
from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0044"
down_revision: str | Sequence[str] | None = "0043"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The replaced trigger functions, as this revision runs them: the text sits in
# 0044_summary_delta_rows.sql beside this file, which engine/sql/functions.sql includes as their
# current definition. A migration is history, so the file must never change: its digest is
# checked before the text runs.
FUNCTIONS_FILE = Path(__file__).with_name("0044_summary_delta_rows.sql")
FUNCTIONS_SHA256 = "2d9bfba936fe23c73f9d7596bc44a3f39c31624a19e1179706330771bb97250b"

NODE_COLUMNS = (
    "active_tokens",
    "open_incidents",
    "visits",
    "completed_visits",
    "total_seconds",
    "canceled_visits",
)

NEW_CHECK = (
    "num_nonnulls(state, bucket, nodes) >= 1 AND (state IS NOT NULL OR instances = 0) "
    "AND (bucket IS NOT NULL OR (started, completed, incidents) = (0, 0, 0))"
)


def _functions() -> str:
    text = FUNCTIONS_FILE.read_bytes()
    if hashlib.sha256(text).hexdigest() != FUNCTIONS_SHA256:
        raise RuntimeError(f"{FUNCTIONS_FILE} differs from what revision 0044 ran; restore it")
    return text.decode("utf-8")


def upgrade() -> None:
    # Every writer of the summarised tables waits until this commits: no trigger writes a delta
    # of either form while the deltas are rewritten.
    op.execute(
        "LOCK TABLE process_instance, token, incident, history, summary_delta "
        "IN SHARE ROW EXCLUSIVE MODE"
    )
    op.add_column("summary_delta", sa.Column("nodes", JSONB(), nullable=True))
    op.drop_constraint(op.f("ck_summary_delta_one_kind"), "summary_delta", type_="check")
    array = ", ".join(NODE_COLUMNS)
    op.execute(
        f"UPDATE summary_delta SET nodes = jsonb_build_object(node_id, jsonb_build_array({array})) "
        "WHERE node_id IS NOT NULL"
    )
    for column in ("node_id", *NODE_COLUMNS):
        op.drop_column("summary_delta", column)
    op.create_check_constraint(op.f("ck_summary_delta_some_kind"), "summary_delta", NEW_CHECK)
    op.execute(_functions())


def _earlier_functions() -> str:
    """The four functions as revisions 0016 and 0040 left them (their frozen files), made
    replacements."""
    here = FUNCTIONS_FILE.parent
    found = [(here / "0040_canceled_visits.sql").read_text(encoding="utf-8")]
    text = (here / "0016_summaries.sql").read_text(encoding="utf-8")
    for table in ("token", "incident"):
        start = text.index(f"CREATE FUNCTION interlock_summarise_{table}()")
        end = text.index("\n$$;", start) + len("\n$$;")
        found.append(text[start:end].replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1))
    return "\n\n".join(found)


def downgrade() -> None:
    op.execute(
        "LOCK TABLE process_instance, token, incident, history, summary_delta "
        "IN SHARE ROW EXCLUSIVE MODE"
    )
    op.drop_constraint(op.f("ck_summary_delta_some_kind"), "summary_delta", type_="check")
    op.add_column("summary_delta", sa.Column("node_id", sa.Text(), nullable=True))
    for column in NODE_COLUMNS:
        kind = sa.Numeric() if column == "total_seconds" else sa.BigInteger()
        op.add_column("summary_delta", sa.Column(column, kind, server_default="0", nullable=False))
    # A row of the new form becomes one row per kind: its state, its bucket, each of its nodes.
    values = ", ".join(
        f"(n.value->>{i})::{'numeric' if column == 'total_seconds' else 'bigint'}"
        for i, column in enumerate(NODE_COLUMNS)
    )
    op.execute(
        f"INSERT INTO summary_delta (definition_id, node_id, {', '.join(NODE_COLUMNS)}) "
        f"SELECT d.definition_id, n.key, {values} "
        "FROM summary_delta d CROSS JOIN LATERAL jsonb_each(d.nodes) n"
    )
    op.execute(
        "INSERT INTO summary_delta (definition_id, bucket, started, completed, incidents) "
        "SELECT definition_id, bucket, started, completed, incidents FROM summary_delta "
        "WHERE state IS NOT NULL AND bucket IS NOT NULL"
    )
    op.execute(
        "UPDATE summary_delta SET bucket = NULL, started = 0, completed = 0, incidents = 0 "
        "WHERE state IS NOT NULL AND bucket IS NOT NULL"
    )
    op.execute(
        "DELETE FROM summary_delta WHERE nodes IS NOT NULL AND state IS NULL AND bucket IS NULL"
    )
    op.drop_column("summary_delta", "nodes")
    op.create_check_constraint(
        op.f("ck_summary_delta_one_kind"),
        "summary_delta",
        "num_nonnulls(state, node_id, bucket) = 1",
    )
    op.execute(_earlier_functions())
