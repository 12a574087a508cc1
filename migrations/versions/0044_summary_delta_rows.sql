-- Migration 0044: each summary trigger appends at most one summary_delta row per definition it
-- changed, its counts in arrays: `states` and `instances` change instance_summary rows; `buckets`
-- with `started`, `completed` and `incidents` change activity_bucket rows; `node_ids` with
-- `active_tokens`, `open_incidents`, `visits`, `completed_visits`, `total_seconds` and
-- `canceled_visits` change node_summary rows. A count array is aligned with its key array, and
-- null when the trigger changes none of its counts (zeros). What the triggers count is unchanged
-- (see 0016_summaries.sql and 0040_canceled_visits.sql). A statement that changes nothing the
-- summaries count (an instance's version bump, a token inserted already ended) returns after one
-- look at its rows. Frozen: revision 0044 checks its digest before running it.

CREATE OR REPLACE FUNCTION interlock_summarise_process_instance() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed boolean;
    moved boolean;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO summary_delta (definition_id, states, instances, buckets, started, completed)
        SELECT definition_id,
            array_agg(state) FILTER (WHERE state IS NOT NULL),
            array_agg(n) FILTER (WHERE state IS NOT NULL),
            array_agg(bucket) FILTER (WHERE state IS NULL),
            array_agg(n) FILTER (WHERE state IS NULL),
            array_agg(co) FILTER (WHERE state IS NULL)
        FROM (
            SELECT definition_id, state, NULL::timestamptz AS bucket, count(*) AS n, 0::bigint AS co
            FROM new_rows GROUP BY definition_id, state
            UNION ALL
            SELECT definition_id, NULL::text, bucket, sum(st), sum(co) FROM (
                SELECT definition_id, date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                    1 AS st, 0 AS co FROM new_rows
                UNION ALL
                SELECT definition_id, date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, 1 FROM new_rows
                WHERE state = 'Completed' AND ended_at IS NOT NULL
            ) b
            GROUP BY definition_id, bucket
        ) g
        GROUP BY definition_id;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO summary_delta (definition_id, states, instances, buckets, started, completed)
        SELECT definition_id,
            array_agg(state) FILTER (WHERE state IS NOT NULL),
            array_agg(n) FILTER (WHERE state IS NOT NULL),
            array_agg(bucket) FILTER (WHERE state IS NULL),
            array_agg(n) FILTER (WHERE state IS NULL),
            array_agg(co) FILTER (WHERE state IS NULL)
        FROM (
            SELECT definition_id, state, NULL::timestamptz AS bucket, -count(*) AS n, 0::bigint AS co
            FROM old_rows GROUP BY definition_id, state
            UNION ALL
            SELECT definition_id, NULL::text, bucket, sum(st), sum(co) FROM (
                SELECT definition_id, date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                    -1 AS st, 0 AS co FROM old_rows
                UNION ALL
                SELECT definition_id, date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, -1 FROM old_rows
                WHERE state = 'Completed' AND ended_at IS NOT NULL
            ) b
            GROUP BY definition_id, bucket
        ) g
        GROUP BY definition_id;
    ELSE
        -- Most updates (a command's version bump) change nothing counted: one look at the rows.
        -- A row whose id changed has no old row to match and counts as changed.
        SELECT bool_or(o.id IS NULL OR (n.definition_id, n.state, n.started_at, n.ended_at)
                IS DISTINCT FROM (o.definition_id, o.state, o.started_at, o.ended_at)),
            bool_or(n.definition_id <> o.definition_id)
        INTO changed, moved
        FROM new_rows n LEFT JOIN old_rows o ON o.id = n.id;
        IF changed THEN
            WITH c AS (
                SELECT 1 AS sign, definition_id, state, started_at, ended_at FROM new_rows
                UNION ALL SELECT -1 AS sign, definition_id, state, started_at, ended_at FROM old_rows
            )
            INSERT INTO summary_delta (definition_id, states, instances, buckets, started, completed)
            SELECT definition_id,
                array_agg(state) FILTER (WHERE state IS NOT NULL),
                array_agg(n) FILTER (WHERE state IS NOT NULL),
                array_agg(bucket) FILTER (WHERE state IS NULL),
                array_agg(n) FILTER (WHERE state IS NULL),
                array_agg(co) FILTER (WHERE state IS NULL)
            FROM (
                SELECT definition_id, state, NULL::timestamptz AS bucket, sum(sign) AS n, 0::bigint AS co
                FROM c GROUP BY definition_id, state HAVING sum(sign) <> 0
                UNION ALL
                SELECT definition_id, NULL::text, bucket, sum(st), sum(co) FROM (
                    SELECT definition_id, date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                        sign AS st, 0 AS co FROM c
                    UNION ALL
                    SELECT definition_id, date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sign FROM c
                    WHERE state = 'Completed' AND ended_at IS NOT NULL
                ) b
                GROUP BY definition_id, bucket HAVING sum(st) <> 0 OR sum(co) <> 0
            ) g
            GROUP BY definition_id;
        END IF;
        -- An instance moved to another definition (a version migration): its tokens', incidents' and
        -- visits' counts move with it. A statement that moves an instance must not also write those
        -- rows of it: their triggers count them under the definition the instance has afterwards.
        IF moved THEN
            WITH m AS (
                SELECT n.id, o.definition_id, -1 AS sign FROM new_rows n JOIN old_rows o ON o.id = n.id
                WHERE n.definition_id <> o.definition_id
                UNION ALL
                SELECT n.id, n.definition_id, 1 FROM new_rows n JOIN old_rows o ON o.id = n.id
                WHERE n.definition_id <> o.definition_id
            ),
            g AS (
                SELECT definition_id, node_id, sum(a) AS a, sum(o) AS o, sum(v) AS v,
                    sum(cv) AS cv, sum(s) AS s, sum(cn) AS cn
                FROM (
                    SELECT m.definition_id, t.node_id, m.sign AS a, 0 AS o, 0 AS v, 0 AS cv,
                        0::numeric AS s, 0 AS cn
                    FROM m JOIN token t ON t.instance_id = m.id
                    WHERE t.state NOT IN ('Completed', 'Terminated')
                    UNION ALL
                    SELECT m.definition_id, i.node_id, 0, m.sign, 0, 0, 0, 0
                    FROM m JOIN incident i ON i.instance_id = m.id WHERE i.state = 'Open'
                    UNION ALL
                    SELECT m.definition_id, h.node_id, 0, 0, m.sign,
                        CASE WHEN h.ended_at IS NULL THEN 0 ELSE m.sign END,
                        coalesce(m.sign * extract(epoch FROM h.ended_at - h.started_at), 0),
                        CASE WHEN h.state = 'Terminated' THEN m.sign ELSE 0 END
                    FROM m JOIN history h ON h.instance_id = m.id
                ) x
                GROUP BY definition_id, node_id
                HAVING (sum(a), sum(o), sum(v), sum(cv), sum(s), sum(cn)) <> (0, 0, 0, 0, 0, 0)
            ),
            n AS (
                SELECT definition_id, array_agg(node_id) AS node_ids, array_agg(a) AS a,
                    array_agg(o) AS o, array_agg(v) AS v, array_agg(cv) AS cv, array_agg(s) AS s,
                    array_agg(cn) AS cn
                FROM g GROUP BY definition_id
            ),
            b AS (
                SELECT definition_id, array_agg(bucket) AS buckets, array_agg(incidents) AS incidents
                FROM (
                    SELECT m.definition_id, date_bin('5 minutes', i.created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                        sum(m.sign) AS incidents
                    FROM m JOIN incident i ON i.instance_id = m.id
                    GROUP BY 1, 2 HAVING sum(m.sign) <> 0
                ) y
                GROUP BY definition_id
            )
            INSERT INTO summary_delta (definition_id, node_ids, active_tokens, open_incidents, visits,
                completed_visits, total_seconds, canceled_visits, buckets, incidents)
            SELECT coalesce(n.definition_id, b.definition_id), n.node_ids, n.a, n.o, n.v, n.cv, n.s,
                n.cn, b.buckets, b.incidents
            FROM n FULL JOIN b ON b.definition_id = n.definition_id;
        END IF;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION interlock_summarise_token() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- A token inserted already ended (a straight-through instance's) counts nothing.
        IF NOT EXISTS (SELECT FROM new_rows WHERE state NOT IN ('Completed', 'Terminated')) THEN
            RETURN NULL;
        END IF;
        INSERT INTO summary_delta (definition_id, node_ids, active_tokens)
        SELECT definition_id, array_agg(node_id), array_agg(a) FROM (
            SELECT p.definition_id, c.node_id, count(*) AS a
            FROM new_rows c JOIN process_instance p ON p.id = c.instance_id
            WHERE c.state NOT IN ('Completed', 'Terminated')
            GROUP BY p.definition_id, c.node_id
        ) g
        GROUP BY definition_id;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO summary_delta (definition_id, node_ids, active_tokens)
        SELECT definition_id, array_agg(node_id), array_agg(a) FROM (
            SELECT p.definition_id, c.node_id, -count(*) AS a
            FROM old_rows c JOIN process_instance p ON p.id = c.instance_id
            WHERE c.state NOT IN ('Completed', 'Terminated')
            GROUP BY p.definition_id, c.node_id
        ) g
        GROUP BY definition_id;
    ELSE
        INSERT INTO summary_delta (definition_id, node_ids, active_tokens)
        SELECT definition_id, array_agg(node_id), array_agg(a) FROM (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS a
            FROM (
                SELECT 1 AS sign, instance_id, node_id, state FROM new_rows
                UNION ALL SELECT -1 AS sign, instance_id, node_id, state FROM old_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
            WHERE c.state NOT IN ('Completed', 'Terminated')
            GROUP BY p.definition_id, c.node_id HAVING sum(c.sign) <> 0
        ) g
        GROUP BY definition_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION interlock_summarise_incident() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH c AS (
            SELECT 1 AS sign, p.definition_id, c.node_id, c.state, c.created_at
            FROM new_rows c JOIN process_instance p ON p.id = c.instance_id
        )
        INSERT INTO summary_delta (definition_id, node_ids, open_incidents, buckets, incidents)
        SELECT definition_id,
            array_agg(node_id) FILTER (WHERE node_id IS NOT NULL),
            array_agg(n) FILTER (WHERE node_id IS NOT NULL),
            array_agg(bucket) FILTER (WHERE node_id IS NULL),
            array_agg(n) FILTER (WHERE node_id IS NULL)
        FROM (
            SELECT definition_id, node_id, NULL::timestamptz AS bucket, sum(sign) AS n FROM c
            WHERE state = 'Open' GROUP BY definition_id, node_id
            UNION ALL
            SELECT definition_id, NULL::text, date_bin('5 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), sum(sign)
            FROM c GROUP BY 1, 3
        ) g
        GROUP BY definition_id;
    ELSIF TG_OP = 'DELETE' THEN
        WITH c AS (
            SELECT -1 AS sign, p.definition_id, c.node_id, c.state, c.created_at
            FROM old_rows c JOIN process_instance p ON p.id = c.instance_id
        )
        INSERT INTO summary_delta (definition_id, node_ids, open_incidents, buckets, incidents)
        SELECT definition_id,
            array_agg(node_id) FILTER (WHERE node_id IS NOT NULL),
            array_agg(n) FILTER (WHERE node_id IS NOT NULL),
            array_agg(bucket) FILTER (WHERE node_id IS NULL),
            array_agg(n) FILTER (WHERE node_id IS NULL)
        FROM (
            SELECT definition_id, node_id, NULL::timestamptz AS bucket, sum(sign) AS n FROM c
            WHERE state = 'Open' GROUP BY definition_id, node_id
            UNION ALL
            SELECT definition_id, NULL::text, date_bin('5 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), sum(sign)
            FROM c GROUP BY 1, 3
        ) g
        GROUP BY definition_id;
    ELSE
        WITH c AS (
            SELECT c.sign, p.definition_id, c.node_id, c.state, c.created_at
            FROM (
                SELECT 1 AS sign, instance_id, node_id, state, created_at FROM new_rows
                UNION ALL SELECT -1 AS sign, instance_id, node_id, state, created_at FROM old_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
        )
        INSERT INTO summary_delta (definition_id, node_ids, open_incidents, buckets, incidents)
        SELECT definition_id,
            array_agg(node_id) FILTER (WHERE node_id IS NOT NULL),
            array_agg(n) FILTER (WHERE node_id IS NOT NULL),
            array_agg(bucket) FILTER (WHERE node_id IS NULL),
            array_agg(n) FILTER (WHERE node_id IS NULL)
        FROM (
            SELECT definition_id, node_id, NULL::timestamptz AS bucket, sum(sign) AS n FROM c
            WHERE state = 'Open' GROUP BY definition_id, node_id HAVING sum(sign) <> 0
            UNION ALL
            SELECT definition_id, NULL::text, date_bin('5 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), sum(sign)
            FROM c GROUP BY 1, 3 HAVING sum(sign) <> 0
        ) g
        GROUP BY definition_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION interlock_summarise_history() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO summary_delta (definition_id, node_ids, visits, completed_visits, total_seconds,
            canceled_visits)
        SELECT definition_id, array_agg(node_id), array_agg(v), array_agg(cv), array_agg(s),
            CASE WHEN bool_or(cn <> 0) THEN array_agg(cn) END
        FROM (
            SELECT p.definition_id, c.node_id, count(*) AS v, count(c.ended_at) AS cv,
                coalesce(sum(extract(epoch FROM c.ended_at - c.started_at)), 0) AS s,
                count(*) FILTER (WHERE c.state = 'Terminated') AS cn
            FROM new_rows c JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        ) g
        GROUP BY definition_id;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO summary_delta (definition_id, node_ids, visits, completed_visits, total_seconds,
            canceled_visits)
        SELECT definition_id, array_agg(node_id), array_agg(v), array_agg(cv), array_agg(s),
            CASE WHEN bool_or(cn <> 0) THEN array_agg(cn) END
        FROM (
            SELECT p.definition_id, c.node_id, -count(*) AS v, -count(c.ended_at) AS cv,
                -coalesce(sum(extract(epoch FROM c.ended_at - c.started_at)), 0) AS s,
                -count(*) FILTER (WHERE c.state = 'Terminated') AS cn
            FROM old_rows c JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        ) g
        GROUP BY definition_id;
    ELSE
        INSERT INTO summary_delta (definition_id, node_ids, visits, completed_visits, total_seconds,
            canceled_visits)
        SELECT definition_id, array_agg(node_id), array_agg(v), array_agg(cv), array_agg(s),
            CASE WHEN bool_or(cn <> 0) THEN array_agg(cn) END
        FROM (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS v,
                sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) AS cv,
                coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) AS s,
                sum(CASE WHEN c.state = 'Terminated' THEN c.sign ELSE 0 END) AS cn
            FROM (
                SELECT 1 AS sign, instance_id, node_id, state, started_at, ended_at FROM new_rows
                UNION ALL SELECT -1 AS sign, instance_id, node_id, state, started_at, ended_at FROM old_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
            HAVING sum(c.sign) <> 0 OR sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) <> 0
                OR coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) <> 0
                OR sum(CASE WHEN c.state = 'Terminated' THEN c.sign ELSE 0 END) <> 0
        ) g
        GROUP BY definition_id;
    END IF;
    RETURN NULL;
END
$$;
