"""one summary delta row per definition and trigger statement

Revision ID: 0044
Revises: 0043
Create Date: 2026-12-06 19:45:00.000000

The summary triggers wrote one summary_delta row per node they changed, and an instance's state
and its five-minute bucket in two more: a straight-through instance of five nodes left seven
rows. Now each trigger statement writes at most one row per definition, its counts in arrays
aligned with their keys (`states`, `buckets`, `node_ids`; see 0044_summary_delta_rows.sql), and
a statement that changes nothing counted returns after one look at its rows. Unfolded deltas
are rewritten in the new form (a row of one element each).
"""

import hashlib
from collections.abc import Sequence
from pathlib import Path

import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel types)
from alembic import op

revision: str = "0044"
down_revision: str | Sequence[str] | None = "0043"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The replaced trigger functions, as this revision runs them: the text sits in
# 0044_summary_delta_rows.sql beside this file, which engine/sql/functions.sql includes as their
# current definition. A migration is history, so the file must never change: its digest is
# checked before the text runs.
FUNCTIONS_FILE = Path(__file__).with_name("0044_summary_delta_rows.sql")
FUNCTIONS_SHA256 = "8f8e222801feaa4b942095d8ae3c35c3884a3fbe610d01220df2888359739e93"

# The count columns of each kind of old row (its key column), which become arrays.
COUNTS = {
    "state": ("instances",),
    "bucket": ("started", "completed", "incidents"),
    "node_id": (
        "active_tokens",
        "open_incidents",
        "visits",
        "completed_visits",
        "total_seconds",
        "canceled_visits",
    ),
}
# The array holding each kind's keys.
KEYS = {"state": "states", "bucket": "buckets", "node_id": "node_ids"}
KEY_TYPES = {"state": "text", "bucket": "timestamptz", "node_id": "text"}


def _type(column: str) -> str:
    return "numeric" if column == "total_seconds" else "bigint"


def _functions() -> str:
    text = FUNCTIONS_FILE.read_bytes()
    if hashlib.sha256(text).hexdigest() != FUNCTIONS_SHA256:
        raise RuntimeError(f"{FUNCTIONS_FILE} differs from what revision 0044 ran; restore it")
    return text.decode("utf-8")


def _lock() -> None:
    # Every writer of the summarised tables waits until this commits: no trigger writes a delta
    # of either form while the deltas are rewritten.
    op.execute(
        "LOCK TABLE process_instance, token, incident, history, summary_delta "
        "IN SHARE ROW EXCLUSIVE MODE"
    )


def upgrade() -> None:
    _lock()
    op.drop_constraint(op.f("ck_summary_delta_one_kind"), "summary_delta", type_="check")
    # A row of the old form counts one kind: its key becomes a one-element array, and so do the
    # counts of that kind (those of the other kinds become null).
    op.execute(
        "ALTER TABLE summary_delta "
        + ", ".join(f"ADD COLUMN {KEYS[key]} {KEY_TYPES[key]}[]" for key in COUNTS)
    )
    op.execute(
        "UPDATE summary_delta SET "
        + ", ".join(
            f"{KEYS[key]} = CASE WHEN {key} IS NOT NULL THEN ARRAY[{key}] END" for key in COUNTS
        )
    )
    for key, counts in COUNTS.items():
        for column in counts:
            op.execute(
                f"ALTER TABLE summary_delta ALTER COLUMN {column} DROP DEFAULT, "
                f"ALTER COLUMN {column} DROP NOT NULL"
            )
            op.execute(
                f"ALTER TABLE summary_delta ALTER COLUMN {column} TYPE {_type(column)}[] "
                f"USING CASE WHEN {key} IS NOT NULL THEN ARRAY[{column}] END"
            )
    for key in COUNTS:
        op.drop_column("summary_delta", key)
    op.create_check_constraint(
        op.f("ck_summary_delta_some_kind"),
        "summary_delta",
        "num_nonnulls(states, buckets, node_ids) >= 1",
    )
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
    _lock()
    op.drop_constraint(op.f("ck_summary_delta_some_kind"), "summary_delta", type_="check")
    op.execute(
        "ALTER TABLE summary_delta ADD COLUMN state varchar(16), ADD COLUMN bucket timestamptz, "
        "ADD COLUMN node_id text"
    )
    # A row of the new form becomes one row per element of each of its key arrays, its counts
    # one-element arrays still (a null count array: zeros), then the counts become plain again.
    for key, counts in COUNTS.items():
        arrays = ", ".join(counts)
        values = ", ".join(f"ARRAY[coalesce(u.{column}, 0)]" for column in counts)
        op.execute(
            f"INSERT INTO summary_delta (definition_id, {key}, {arrays}) "
            f"SELECT d.definition_id, u.{key}, {values} FROM summary_delta d "
            f"CROSS JOIN LATERAL unnest(d.{KEYS[key]}, {', '.join('d.' + c for c in counts)}) "
            f"u({key}, {arrays}) WHERE d.{KEYS[key]} IS NOT NULL"
        )
    op.execute("DELETE FROM summary_delta WHERE num_nonnulls(state, bucket, node_id) = 0")
    for counts in COUNTS.values():
        for column in counts:
            op.execute(
                f"ALTER TABLE summary_delta ALTER COLUMN {column} TYPE {_type(column)} "
                f"USING coalesce({column}[1], 0)"
            )
            op.execute(
                f"ALTER TABLE summary_delta ALTER COLUMN {column} SET DEFAULT 0, "
                f"ALTER COLUMN {column} SET NOT NULL"
            )
    for key in COUNTS:
        op.drop_column("summary_delta", KEYS[key])
    op.create_check_constraint(
        op.f("ck_summary_delta_one_kind"),
        "summary_delta",
        "num_nonnulls(state, node_id, bucket) = 1",
    )
    op.execute(_earlier_functions())
