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

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SUMMARISED = ("process_instance", "token", "incident", "history")

TRIGGERS = r"""
CREATE FUNCTION interlock_summarise_process_instance() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH c AS (SELECT 1 AS sign, definition_id, state, started_at, ended_at FROM new_rows)
        INSERT INTO summary_delta (definition_id, state, bucket, instances, started, completed)
        SELECT definition_id, state, NULL::timestamptz, sum(sign), 0, 0 FROM c
        GROUP BY definition_id, state HAVING sum(sign) <> 0
        UNION ALL
        SELECT definition_id, NULL::text, bucket, 0, sum(started), sum(completed) FROM (
            SELECT definition_id, date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                sign AS started, 0 AS completed FROM c
            UNION ALL
            SELECT definition_id, date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sign FROM c
            WHERE state = 'Completed' AND ended_at IS NOT NULL
        ) b
        GROUP BY definition_id, bucket HAVING sum(started) <> 0 OR sum(completed) <> 0;
    ELSIF TG_OP = 'DELETE' THEN
        WITH c AS (SELECT -1 AS sign, definition_id, state, started_at, ended_at FROM old_rows)
        INSERT INTO summary_delta (definition_id, state, bucket, instances, started, completed)
        SELECT definition_id, state, NULL::timestamptz, sum(sign), 0, 0 FROM c
        GROUP BY definition_id, state HAVING sum(sign) <> 0
        UNION ALL
        SELECT definition_id, NULL::text, bucket, 0, sum(started), sum(completed) FROM (
            SELECT definition_id, date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                sign AS started, 0 AS completed FROM c
            UNION ALL
            SELECT definition_id, date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sign FROM c
            WHERE state = 'Completed' AND ended_at IS NOT NULL
        ) b
        GROUP BY definition_id, bucket HAVING sum(started) <> 0 OR sum(completed) <> 0;
    ELSE
        WITH c AS (SELECT 1 AS sign, definition_id, state, started_at, ended_at FROM new_rows
            UNION ALL SELECT -1 AS sign, definition_id, state, started_at, ended_at FROM old_rows)
        INSERT INTO summary_delta (definition_id, state, bucket, instances, started, completed)
        SELECT definition_id, state, NULL::timestamptz, sum(sign), 0, 0 FROM c
        GROUP BY definition_id, state HAVING sum(sign) <> 0
        UNION ALL
        SELECT definition_id, NULL::text, bucket, 0, sum(started), sum(completed) FROM (
            SELECT definition_id, date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                sign AS started, 0 AS completed FROM c
            UNION ALL
            SELECT definition_id, date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sign FROM c
            WHERE state = 'Completed' AND ended_at IS NOT NULL
        ) b
        GROUP BY definition_id, bucket HAVING sum(started) <> 0 OR sum(completed) <> 0;
        -- An instance moved to another definition (a version migration): its tokens', incidents' and
        -- visits' counts move with it. A statement that moves an instance must not also write those
        -- rows of it: their triggers count them under the definition the instance has afterwards.
        IF EXISTS (
            SELECT 1 FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE n.definition_id <> o.definition_id
        ) THEN
            WITH m AS (
                SELECT n.id, o.definition_id, -1 AS sign FROM new_rows n JOIN old_rows o ON o.id = n.id
                WHERE n.definition_id <> o.definition_id
                UNION ALL
                SELECT n.id, n.definition_id, 1 FROM new_rows n JOIN old_rows o ON o.id = n.id
                WHERE n.definition_id <> o.definition_id
            )
            INSERT INTO summary_delta (definition_id, node_id, bucket, active_tokens, open_incidents,
                visits, completed_visits, total_seconds, incidents)
            SELECT definition_id, node_id, NULL::timestamptz, sum(a), sum(o), sum(v), sum(cv),
                sum(s), 0
            FROM (
                SELECT m.definition_id, t.node_id, m.sign AS a, 0 AS o, 0 AS v, 0 AS cv,
                    0::numeric AS s
                FROM m JOIN token t ON t.instance_id = m.id WHERE t.state NOT IN ('Completed', 'Terminated')
            UNION ALL
            SELECT m.definition_id, i.node_id, 0, m.sign, 0, 0, 0
            FROM m JOIN incident i ON i.instance_id = m.id WHERE i.state = 'Open'
            UNION ALL
            SELECT m.definition_id, h.node_id, 0, 0, m.sign,
                CASE WHEN h.ended_at IS NULL THEN 0 ELSE m.sign END,
                coalesce(m.sign * extract(epoch FROM h.ended_at - h.started_at), 0)
            FROM m JOIN history h ON h.instance_id = m.id
        ) x
        GROUP BY definition_id, node_id
        UNION ALL
        SELECT m.definition_id, NULL::text, date_bin('5 minutes', i.created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
            0, 0, 0, 0, 0, sum(m.sign)
        FROM m JOIN incident i ON i.instance_id = m.id
        GROUP BY 1, 3;
    END IF;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER process_instance_summarise_insert
AFTER INSERT ON process_instance
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_process_instance();

CREATE TRIGGER process_instance_summarise_update
AFTER UPDATE ON process_instance
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_process_instance();

CREATE TRIGGER process_instance_summarise_delete
AFTER DELETE ON process_instance
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_process_instance();

CREATE FUNCTION interlock_summarise_token() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO summary_delta (definition_id, node_id, active_tokens)
        SELECT p.definition_id, c.node_id, sum(c.sign)
        FROM (SELECT 1 AS sign, instance_id, node_id, state FROM new_rows) c
        JOIN process_instance p ON p.id = c.instance_id
        WHERE c.state NOT IN ('Completed', 'Terminated')
        GROUP BY p.definition_id, c.node_id
        HAVING sum(c.sign) <> 0;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO summary_delta (definition_id, node_id, active_tokens)
        SELECT p.definition_id, c.node_id, sum(c.sign)
        FROM (SELECT -1 AS sign, instance_id, node_id, state FROM old_rows) c
        JOIN process_instance p ON p.id = c.instance_id
        WHERE c.state NOT IN ('Completed', 'Terminated')
        GROUP BY p.definition_id, c.node_id
        HAVING sum(c.sign) <> 0;
    ELSE
        INSERT INTO summary_delta (definition_id, node_id, active_tokens)
        SELECT p.definition_id, c.node_id, sum(c.sign)
        FROM (SELECT 1 AS sign, instance_id, node_id, state FROM new_rows
            UNION ALL SELECT -1 AS sign, instance_id, node_id, state FROM old_rows) c
        JOIN process_instance p ON p.id = c.instance_id
        WHERE c.state NOT IN ('Completed', 'Terminated')
        GROUP BY p.definition_id, c.node_id
        HAVING sum(c.sign) <> 0;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER token_summarise_insert
AFTER INSERT ON token
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_token();

CREATE TRIGGER token_summarise_update
AFTER UPDATE ON token
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_token();

CREATE TRIGGER token_summarise_delete
AFTER DELETE ON token
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_token();

CREATE FUNCTION interlock_summarise_incident() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH c AS (
            SELECT c.sign, p.definition_id, c.node_id, c.state, c.created_at
            FROM (SELECT 1 AS sign, instance_id, node_id, state, created_at FROM new_rows) c
            JOIN process_instance p ON p.id = c.instance_id
        )
        INSERT INTO summary_delta (definition_id, node_id, bucket, open_incidents, incidents)
        SELECT definition_id, node_id, NULL::timestamptz, sum(sign), 0 FROM c
        WHERE state = 'Open' GROUP BY definition_id, node_id HAVING sum(sign) <> 0
        UNION ALL
        SELECT definition_id, NULL::text, date_bin('5 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sum(sign)
        FROM c GROUP BY 1, 3 HAVING sum(sign) <> 0;
    ELSIF TG_OP = 'DELETE' THEN
        WITH c AS (
            SELECT c.sign, p.definition_id, c.node_id, c.state, c.created_at
            FROM (SELECT -1 AS sign, instance_id, node_id, state, created_at FROM old_rows) c
            JOIN process_instance p ON p.id = c.instance_id
        )
        INSERT INTO summary_delta (definition_id, node_id, bucket, open_incidents, incidents)
        SELECT definition_id, node_id, NULL::timestamptz, sum(sign), 0 FROM c
        WHERE state = 'Open' GROUP BY definition_id, node_id HAVING sum(sign) <> 0
        UNION ALL
        SELECT definition_id, NULL::text, date_bin('5 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sum(sign)
        FROM c GROUP BY 1, 3 HAVING sum(sign) <> 0;
    ELSE
        WITH c AS (
            SELECT c.sign, p.definition_id, c.node_id, c.state, c.created_at
            FROM (SELECT 1 AS sign, instance_id, node_id, state, created_at FROM new_rows
            UNION ALL SELECT -1 AS sign, instance_id, node_id, state, created_at FROM old_rows) c
            JOIN process_instance p ON p.id = c.instance_id
        )
        INSERT INTO summary_delta (definition_id, node_id, bucket, open_incidents, incidents)
        SELECT definition_id, node_id, NULL::timestamptz, sum(sign), 0 FROM c
        WHERE state = 'Open' GROUP BY definition_id, node_id HAVING sum(sign) <> 0
        UNION ALL
        SELECT definition_id, NULL::text, date_bin('5 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sum(sign)
        FROM c GROUP BY 1, 3 HAVING sum(sign) <> 0;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER incident_summarise_insert
AFTER INSERT ON incident
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_incident();

CREATE TRIGGER incident_summarise_update
AFTER UPDATE ON incident
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_incident();

CREATE TRIGGER incident_summarise_delete
AFTER DELETE ON incident
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_incident();

CREATE FUNCTION interlock_summarise_history() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO summary_delta (definition_id, node_id, visits, completed_visits, total_seconds)
        SELECT s.* FROM (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS visits,
                sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) AS completed_visits,
                coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) AS seconds
            FROM (SELECT 1 AS sign, instance_id, node_id, started_at, ended_at FROM new_rows) c
            JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        ) s
        WHERE s.visits <> 0 OR s.completed_visits <> 0 OR s.seconds <> 0;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO summary_delta (definition_id, node_id, visits, completed_visits, total_seconds)
        SELECT s.* FROM (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS visits,
                sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) AS completed_visits,
                coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) AS seconds
            FROM (SELECT -1 AS sign, instance_id, node_id, started_at, ended_at FROM old_rows) c
            JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        ) s
        WHERE s.visits <> 0 OR s.completed_visits <> 0 OR s.seconds <> 0;
    ELSE
        INSERT INTO summary_delta (definition_id, node_id, visits, completed_visits, total_seconds)
        SELECT s.* FROM (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS visits,
                sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) AS completed_visits,
                coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) AS seconds
            FROM (SELECT 1 AS sign, instance_id, node_id, started_at, ended_at FROM new_rows
            UNION ALL SELECT -1 AS sign, instance_id, node_id, started_at, ended_at FROM old_rows) c
            JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        ) s
        WHERE s.visits <> 0 OR s.completed_visits <> 0 OR s.seconds <> 0;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER history_summarise_insert
AFTER INSERT ON history
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_history();

CREATE TRIGGER history_summarise_update
AFTER UPDATE ON history
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_history();

CREATE TRIGGER history_summarise_delete
AFTER DELETE ON history
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT
EXECUTE FUNCTION interlock_summarise_history();
"""

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
    op.execute(TRIGGERS)
    op.execute(BACKFILL)


def downgrade() -> None:
    for table in SUMMARISED:
        for event in ("insert", "update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {table}_summarise_{event} ON {table}")
        op.execute(f"DROP FUNCTION IF EXISTS interlock_summarise_{table}()")
    for table in ("summary_delta", "activity_bucket", "node_summary", "instance_summary"):
        op.drop_table(table)
