-- Migration 0040: the summary triggers of process_instance and history also count the visits
-- ended canceled (history rows in state Terminated) per definition and node, and move them with
-- an instance that changes definition. Frozen: revision 0040 checks its digest before running it.

CREATE OR REPLACE FUNCTION interlock_summarise_process_instance() RETURNS trigger
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
                visits, completed_visits, total_seconds, canceled_visits, incidents)
            SELECT definition_id, node_id, NULL::timestamptz, sum(a), sum(o), sum(v), sum(cv),
                sum(s), sum(cn), 0
            FROM (
                SELECT m.definition_id, t.node_id, m.sign AS a, 0 AS o, 0 AS v, 0 AS cv,
                    0::numeric AS s, 0 AS cn
                FROM m JOIN token t ON t.instance_id = m.id WHERE t.state NOT IN ('Completed', 'Terminated')
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
        UNION ALL
        SELECT m.definition_id, NULL::text, date_bin('5 minutes', i.created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
            0, 0, 0, 0, 0, 0, sum(m.sign)
        FROM m JOIN incident i ON i.instance_id = m.id
        GROUP BY 1, 3;
    END IF;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION interlock_summarise_history() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO summary_delta (definition_id, node_id, visits, completed_visits, total_seconds,
            canceled_visits)
        SELECT s.* FROM (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS visits,
                sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) AS completed_visits,
                coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) AS seconds,
                sum(CASE WHEN c.state = 'Terminated' THEN c.sign ELSE 0 END) AS canceled_visits
            FROM (SELECT 1 AS sign, instance_id, node_id, state, started_at, ended_at FROM new_rows) c
            JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        ) s
        WHERE s.visits <> 0 OR s.completed_visits <> 0 OR s.seconds <> 0
            OR s.canceled_visits <> 0;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO summary_delta (definition_id, node_id, visits, completed_visits, total_seconds,
            canceled_visits)
        SELECT s.* FROM (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS visits,
                sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) AS completed_visits,
                coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) AS seconds,
                sum(CASE WHEN c.state = 'Terminated' THEN c.sign ELSE 0 END) AS canceled_visits
            FROM (SELECT -1 AS sign, instance_id, node_id, state, started_at, ended_at FROM old_rows) c
            JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        ) s
        WHERE s.visits <> 0 OR s.completed_visits <> 0 OR s.seconds <> 0
            OR s.canceled_visits <> 0;
    ELSE
        INSERT INTO summary_delta (definition_id, node_id, visits, completed_visits, total_seconds,
            canceled_visits)
        SELECT s.* FROM (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS visits,
                sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) AS completed_visits,
                coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) AS seconds,
                sum(CASE WHEN c.state = 'Terminated' THEN c.sign ELSE 0 END) AS canceled_visits
            FROM (SELECT 1 AS sign, instance_id, node_id, state, started_at, ended_at FROM new_rows
            UNION ALL SELECT -1 AS sign, instance_id, node_id, state, started_at, ended_at FROM old_rows) c
            JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        ) s
        WHERE s.visits <> 0 OR s.completed_visits <> 0 OR s.seconds <> 0
            OR s.canceled_visits <> 0;
    END IF;
    RETURN NULL;
END
$$;
