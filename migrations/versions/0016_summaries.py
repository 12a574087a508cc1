"""summaries

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05 08:00:00.000000

Summary rows the console reads instead of scanning the big tables: instances per definition and
state, per-node counts (live tokens, open incidents, visits, ended visits and their durations),
five-minute activity buckets (started, completed, incidents), and the append-only deltas that
statement triggers on process_instance, token, incident and history write in every writing
transaction. The summaries are filled from the existing rows; the triggers are created first,
in the same transaction, whose locks hold writers back until it commits.
"""

import hashlib
from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SUMMARISED = ("process_instance", "token", "incident", "history")

# The summary functions and triggers, as this revision created them: the text sits in
# 0016_summaries.sql beside this file, which engine/sql/functions.sql includes as the current
# definition of these objects (one text, not two copies). A migration is history, so the file
# must never change: its digest is written here and checked before the text runs. A later
# revision that changes these objects writes its own SQL, and functions.sql then holds the new
# text in place of the include.
TRIGGERS_FILE = Path(__file__).with_name("0016_summaries.sql")
TRIGGERS_SHA256 = "f5c67b04ceebffad2dbdc7d6546ee51beb636ed03589d765088b9de7c92ab1ae"


def _triggers() -> str:
    text = TRIGGERS_FILE.read_bytes()
    if hashlib.sha256(text).hexdigest() != TRIGGERS_SHA256:
        raise RuntimeError(f"{TRIGGERS_FILE} differs from what revision 0016 ran; restore it")
    return text.decode("utf-8")


BACKFILL = """
INSERT INTO instance_summary (definition_id, state, instances)
SELECT definition_id, state, count(*) AS instances FROM process_instance GROUP BY definition_id, state;

INSERT INTO node_summary (definition_id, node_id, active_tokens, open_incidents, visits,
    completed_visits, total_seconds)
SELECT definition_id, node_id, sum(a) AS active_tokens, sum(o) AS open_incidents,
    sum(v) AS visits, sum(cv) AS completed_visits, sum(s) AS total_seconds
FROM (
    SELECT p.definition_id, t.node_id, count(*) AS a, 0 AS o, 0 AS v, 0 AS cv, 0::numeric AS s
    FROM token t JOIN process_instance p ON p.id = t.instance_id
    WHERE t.state NOT IN ('Completed', 'Terminated') GROUP BY 1, 2
    UNION ALL
    SELECT p.definition_id, i.node_id, 0, count(*), 0, 0, 0
    FROM incident i JOIN process_instance p ON p.id = i.instance_id
    WHERE i.state = 'Open' GROUP BY 1, 2
    UNION ALL
    SELECT p.definition_id, h.node_id, 0, 0, count(*), count(h.ended_at),
        coalesce(sum(extract(epoch FROM h.ended_at - h.started_at)), 0)
    FROM history h JOIN process_instance p ON p.id = h.instance_id GROUP BY 1, 2
) x
GROUP BY definition_id, node_id;

INSERT INTO activity_bucket (bucket, definition_id, started, completed, incidents)
SELECT bucket, definition_id, sum(st) AS started, sum(co) AS completed, sum(inc) AS incidents
FROM (
    SELECT date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket, definition_id, count(*) AS st, 0 AS co,
        0 AS inc
    FROM process_instance GROUP BY 1, 2
    UNION ALL
    SELECT date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), definition_id, 0, count(*), 0 FROM process_instance
    WHERE state = 'Completed' AND ended_at IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT date_bin('5 minutes', i.created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), p.definition_id, 0, 0, count(*)
    FROM incident i JOIN process_instance p ON p.id = i.instance_id GROUP BY 1, 2
) x
GROUP BY bucket, definition_id;
"""


def _counts(*names: str) -> list[sa.Column[int]]:
    return [sa.Column(name, sa.BigInteger(), nullable=False) for name in names]


def upgrade() -> None:
    op.create_table(
        "instance_summary",
        sa.Column("definition_id", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        *_counts("instances"),
        sa.PrimaryKeyConstraint("definition_id", "state", name=op.f("pk_instance_summary")),
    )
    op.create_table(
        "node_summary",
        sa.Column("definition_id", sa.Text(), nullable=False),
        sa.Column("node_id", sa.Text(), nullable=False),
        *_counts("active_tokens", "open_incidents", "visits", "completed_visits"),
        sa.Column("total_seconds", sa.Numeric(), nullable=False),
        sa.PrimaryKeyConstraint("definition_id", "node_id", name=op.f("pk_node_summary")),
    )
    op.create_table(
        "activity_bucket",
        sa.Column("bucket", sa.DateTime(timezone=True), nullable=False),
        sa.Column("definition_id", sa.Text(), nullable=False),
        *_counts("started", "completed", "incidents"),
        sa.PrimaryKeyConstraint("bucket", "definition_id", name=op.f("pk_activity_bucket")),
    )
    op.create_table(
        "summary_delta",
        sa.Column("seq", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("definition_id", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=True),
        sa.Column("node_id", sa.Text(), nullable=True),
        sa.Column("bucket", sa.DateTime(timezone=True), nullable=True),
        *[
            sa.Column(name, sa.BigInteger(), server_default="0", nullable=False)
            for name in (
                "instances",
                "active_tokens",
                "open_incidents",
                "visits",
                "completed_visits",
            )
        ],
        sa.Column("total_seconds", sa.Numeric(), server_default="0", nullable=False),
        *[
            sa.Column(name, sa.BigInteger(), server_default="0", nullable=False)
            for name in ("started", "completed", "incidents")
        ],
        sa.CheckConstraint(
            "num_nonnulls(state, node_id, bucket) = 1", name=op.f("ck_summary_delta_one_kind")
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_summary_delta")),
    )
    # Rows come and go every second: vacuum after a fixed number of dead rows.
    op.execute(
        "ALTER TABLE summary_delta SET (autovacuum_vacuum_scale_factor = 0, "
        "autovacuum_vacuum_threshold = 2000)"
    )
    op.execute(_triggers())
    op.execute(BACKFILL)


def downgrade() -> None:
    for table in SUMMARISED:
        for event in ("insert", "update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {table}_summarise_{event} ON {table}")
        op.execute(f"DROP FUNCTION IF EXISTS interlock_summarise_{table}()")
    for table in ("summary_delta", "activity_bucket", "node_summary", "instance_summary"):
        op.drop_table(table)
