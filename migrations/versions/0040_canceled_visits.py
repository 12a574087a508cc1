"""visits ended canceled in the node summaries

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-06 14:30:00.000000

node_summary (and its deltas) also counts, per definition and node, the visits ended canceled
(history rows in state Terminated), so Camunda's historic activity statistics answer `canceled`
from the summary rows instead of counting the definition's visits. The summary triggers of
history and process_instance are replaced to write the new count in the delta rows they already
write (one more column, no more rows), and the count is filled from the existing visits.
"""

import hashlib
from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0040"
down_revision: str | Sequence[str] | None = "0039"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The replaced trigger functions, as this revision runs them: the text sits in
# 0040_canceled_visits.sql beside this file, which engine/sql/functions.sql includes as their
# current definition. A migration is history, so the file must never change: its digest is
# checked before the text runs.
FUNCTIONS_FILE = Path(__file__).with_name("0040_canceled_visits.sql")
FUNCTIONS_SHA256 = "7bb77b579cf3c4ca5fdd7d08ab0ce7d59af564768a31688155dcac9d5c727cc4"

# The count, from the visits as they are. Written as deltas, which the fold moves into the base
# rows: a (definition, node) whose counts are still only in deltas has no base row to update.
BACKFILL = """
INSERT INTO summary_delta (definition_id, node_id, canceled_visits)
SELECT p.definition_id, h.node_id, count(*)
FROM history h JOIN process_instance p ON p.id = h.instance_id
WHERE h.state = 'Terminated'
GROUP BY 1, 2
"""


def _functions() -> str:
    text = FUNCTIONS_FILE.read_bytes()
    if hashlib.sha256(text).hexdigest() != FUNCTIONS_SHA256:
        raise RuntimeError(f"{FUNCTIONS_FILE} differs from what revision 0040 ran; restore it")
    return text.decode("utf-8")


def upgrade() -> None:
    # Writers of visits and instances wait until this commits: none writes a visit with the old
    # functions after the backfill has read the visits.
    op.execute("LOCK TABLE process_instance, history IN SHARE ROW EXCLUSIVE MODE")
    op.add_column(
        "summary_delta",
        sa.Column("canceled_visits", sa.BigInteger(), server_default="0", nullable=False),
    )
    op.add_column(
        "node_summary",
        sa.Column("canceled_visits", sa.BigInteger(), server_default="0", nullable=False),
    )
    op.alter_column("node_summary", "canceled_visits", server_default=None)
    op.execute(_functions())
    op.execute(BACKFILL)


def _earlier_functions() -> str:
    """The two functions as revision 0016 created them (its frozen file), made replacements."""
    text = FUNCTIONS_FILE.with_name("0016_summaries.sql").read_text(encoding="utf-8")
    found = []
    for table in ("process_instance", "history"):
        start = text.index(f"CREATE FUNCTION interlock_summarise_{table}()")
        end = text.index("\n$$;", start) + len("\n$$;")
        found.append(text[start:end].replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1))
    return "\n\n".join(found)


def downgrade() -> None:
    op.execute(_earlier_functions())
    op.drop_column("node_summary", "canceled_visits")
    op.drop_column("summary_delta", "canceled_visits")
