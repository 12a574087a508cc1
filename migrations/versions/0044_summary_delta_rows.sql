-- Migration 0044: each summary trigger appends at most one summary_delta row per definition it
-- changed (one per bucket when its rows fall into several buckets of a definition): the changes of
-- every node travel together in the row's `nodes`, {node_id: [active_tokens, open_incidents,
-- visits, completed_visits, total_seconds, canceled_visits]}, and an instance_summary change
-- shares its row with an activity_bucket change (a definition's state groups and bucket groups are
-- paired in order). What the triggers count is unchanged (see 0016_summaries.sql and
-- 0040_canceled_visits.sql). Frozen: revision 0044 checks its digest before running it.

CREATE OR REPLACE FUNCTION interlock_summarise_process_instance() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH c AS (
            SELECT 1 AS sign, definition_id, state, started_at, ended_at FROM new_rows
        ),
        s AS (
            SELECT definition_id, state, sum(sign) AS n,
                row_number() OVER (PARTITION BY definition_id ORDER BY state) AS rn
            FROM c GROUP BY definition_id, state HAVING sum(sign) <> 0
        ),
        b AS (
            SELECT definition_id, bucket, started, completed,
                row_number() OVER (PARTITION BY definition_id ORDER BY bucket) AS rn
            FROM (
                SELECT definition_id, bucket, sum(started) AS started, sum(completed) AS completed
                FROM (
                    SELECT definition_id, date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                        sign AS started, 0 AS completed FROM c
                    UNION ALL
                    SELECT definition_id, date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sign FROM c
                    WHERE state = 'Completed' AND ended_at IS NOT NULL
                ) x
                GROUP BY definition_id, bucket HAVING sum(started) <> 0 OR sum(completed) <> 0
            ) y
        )
        INSERT INTO summary_delta (definition_id, state, instances, bucket, started, completed)
        SELECT coalesce(s.definition_id, b.definition_id), s.state, coalesce(s.n, 0), b.bucket,
            coalesce(b.started, 0), coalesce(b.completed, 0)
        FROM s FULL JOIN b ON b.definition_id = s.definition_id AND b.rn = s.rn;
    ELSIF TG_OP = 'DELETE' THEN
        WITH c AS (
            SELECT -1 AS sign, definition_id, state, started_at, ended_at FROM old_rows
        ),
        s AS (
            SELECT definition_id, state, sum(sign) AS n,
                row_number() OVER (PARTITION BY definition_id ORDER BY state) AS rn
            FROM c GROUP BY definition_id, state HAVING sum(sign) <> 0
        ),
        b AS (
            SELECT definition_id, bucket, started, completed,
                row_number() OVER (PARTITION BY definition_id ORDER BY bucket) AS rn
            FROM (
                SELECT definition_id, bucket, sum(started) AS started, sum(completed) AS completed
                FROM (
                    SELECT definition_id, date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                        sign AS started, 0 AS completed FROM c
                    UNION ALL
                    SELECT definition_id, date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sign FROM c
                    WHERE state = 'Completed' AND ended_at IS NOT NULL
                ) x
                GROUP BY definition_id, bucket HAVING sum(started) <> 0 OR sum(completed) <> 0
            ) y
        )
        INSERT INTO summary_delta (definition_id, state, instances, bucket, started, completed)
        SELECT coalesce(s.definition_id, b.definition_id), s.state, coalesce(s.n, 0), b.bucket,
            coalesce(b.started, 0), coalesce(b.completed, 0)
        FROM s FULL JOIN b ON b.definition_id = s.definition_id AND b.rn = s.rn;
    ELSE
        WITH c AS (
            SELECT 1 AS sign, definition_id, state, started_at, ended_at FROM new_rows
            UNION ALL SELECT -1 AS sign, definition_id, state, started_at, ended_at FROM old_rows
        ),
        s AS (
            SELECT definition_id, state, sum(sign) AS n,
                row_number() OVER (PARTITION BY definition_id ORDER BY state) AS rn
            FROM c GROUP BY definition_id, state HAVING sum(sign) <> 0
        ),
        b AS (
            SELECT definition_id, bucket, started, completed,
                row_number() OVER (PARTITION BY definition_id ORDER BY bucket) AS rn
            FROM (
                SELECT definition_id, bucket, sum(started) AS started, sum(completed) AS completed
                FROM (
                    SELECT definition_id, date_bin('5 minutes', started_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                        sign AS started, 0 AS completed FROM c
                    UNION ALL
                    SELECT definition_id, date_bin('5 minutes', ended_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), 0, sign FROM c
                    WHERE state = 'Completed' AND ended_at IS NOT NULL
                ) x
                GROUP BY definition_id, bucket HAVING sum(started) <> 0 OR sum(completed) <> 0
            ) y
        )
        INSERT INTO summary_delta (definition_id, state, instances, bucket, started, completed)
        SELECT coalesce(s.definition_id, b.definition_id), s.state, coalesce(s.n, 0), b.bucket,
            coalesce(b.started, 0), coalesce(b.completed, 0)
        FROM s FULL JOIN b ON b.definition_id = s.definition_id AND b.rn = s.rn;
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
            ),
            n AS (
                SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(a, o, v, cv, s, cn))
                    AS nodes, 1::bigint AS rn
                FROM g WHERE (a, o, v, cv, s, cn) <> (0, 0, 0, 0, 0, 0) GROUP BY definition_id
            ),
            b AS (
                SELECT definition_id, bucket, incidents,
                    row_number() OVER (PARTITION BY definition_id ORDER BY bucket) AS rn
                FROM (
                    SELECT m.definition_id, date_bin('5 minutes', i.created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                        sum(m.sign) AS incidents
                    FROM m JOIN incident i ON i.instance_id = m.id
                    GROUP BY 1, 2 HAVING sum(m.sign) <> 0
                ) y
            )
            INSERT INTO summary_delta (definition_id, nodes, bucket, incidents)
            SELECT coalesce(n.definition_id, b.definition_id), n.nodes, b.bucket,
                coalesce(b.incidents, 0)
            FROM n FULL JOIN b ON b.definition_id = n.definition_id AND b.rn = n.rn;
        END IF;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION interlock_summarise_token() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH g AS (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS a
            FROM (
                SELECT 1 AS sign, instance_id, node_id, state FROM new_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
            WHERE c.state NOT IN ('Completed', 'Terminated')
            GROUP BY p.definition_id, c.node_id HAVING sum(c.sign) <> 0
        )
        INSERT INTO summary_delta (definition_id, nodes)
        SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(a, 0, 0, 0, 0, 0))
        FROM g GROUP BY definition_id;
    ELSIF TG_OP = 'DELETE' THEN
        WITH g AS (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS a
            FROM (
                SELECT -1 AS sign, instance_id, node_id, state FROM old_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
            WHERE c.state NOT IN ('Completed', 'Terminated')
            GROUP BY p.definition_id, c.node_id HAVING sum(c.sign) <> 0
        )
        INSERT INTO summary_delta (definition_id, nodes)
        SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(a, 0, 0, 0, 0, 0))
        FROM g GROUP BY definition_id;
    ELSE
        WITH g AS (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS a
            FROM (
                SELECT 1 AS sign, instance_id, node_id, state FROM new_rows
                    UNION ALL SELECT -1 AS sign, instance_id, node_id, state FROM old_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
            WHERE c.state NOT IN ('Completed', 'Terminated')
            GROUP BY p.definition_id, c.node_id HAVING sum(c.sign) <> 0
        )
        INSERT INTO summary_delta (definition_id, nodes)
        SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(a, 0, 0, 0, 0, 0))
        FROM g GROUP BY definition_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION interlock_summarise_incident() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH c AS (
            SELECT c.sign, p.definition_id, c.node_id, c.state, c.created_at
            FROM (
                SELECT 1 AS sign, instance_id, node_id, state, created_at FROM new_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
        ),
        n AS (
            SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(0, o, 0, 0, 0, 0)) AS nodes,
                1::bigint AS rn
            FROM (
                SELECT definition_id, node_id, sum(sign) AS o FROM c WHERE state = 'Open'
                GROUP BY definition_id, node_id HAVING sum(sign) <> 0
            ) g
            GROUP BY definition_id
        ),
        b AS (
            SELECT definition_id, bucket, incidents,
                row_number() OVER (PARTITION BY definition_id ORDER BY bucket) AS rn
            FROM (
                SELECT definition_id, date_bin('5 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                    sum(sign) AS incidents
                FROM c GROUP BY 1, 2 HAVING sum(sign) <> 0
            ) y
        )
        INSERT INTO summary_delta (definition_id, nodes, bucket, incidents)
        SELECT coalesce(n.definition_id, b.definition_id), n.nodes, b.bucket, coalesce(b.incidents, 0)
        FROM n FULL JOIN b ON b.definition_id = n.definition_id AND b.rn = n.rn;
    ELSIF TG_OP = 'DELETE' THEN
        WITH c AS (
            SELECT c.sign, p.definition_id, c.node_id, c.state, c.created_at
            FROM (
                SELECT -1 AS sign, instance_id, node_id, state, created_at FROM old_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
        ),
        n AS (
            SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(0, o, 0, 0, 0, 0)) AS nodes,
                1::bigint AS rn
            FROM (
                SELECT definition_id, node_id, sum(sign) AS o FROM c WHERE state = 'Open'
                GROUP BY definition_id, node_id HAVING sum(sign) <> 0
            ) g
            GROUP BY definition_id
        ),
        b AS (
            SELECT definition_id, bucket, incidents,
                row_number() OVER (PARTITION BY definition_id ORDER BY bucket) AS rn
            FROM (
                SELECT definition_id, date_bin('5 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                    sum(sign) AS incidents
                FROM c GROUP BY 1, 2 HAVING sum(sign) <> 0
            ) y
        )
        INSERT INTO summary_delta (definition_id, nodes, bucket, incidents)
        SELECT coalesce(n.definition_id, b.definition_id), n.nodes, b.bucket, coalesce(b.incidents, 0)
        FROM n FULL JOIN b ON b.definition_id = n.definition_id AND b.rn = n.rn;
    ELSE
        WITH c AS (
            SELECT c.sign, p.definition_id, c.node_id, c.state, c.created_at
            FROM (
                SELECT 1 AS sign, instance_id, node_id, state, created_at FROM new_rows
                    UNION ALL SELECT -1 AS sign, instance_id, node_id, state, created_at FROM old_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
        ),
        n AS (
            SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(0, o, 0, 0, 0, 0)) AS nodes,
                1::bigint AS rn
            FROM (
                SELECT definition_id, node_id, sum(sign) AS o FROM c WHERE state = 'Open'
                GROUP BY definition_id, node_id HAVING sum(sign) <> 0
            ) g
            GROUP BY definition_id
        ),
        b AS (
            SELECT definition_id, bucket, incidents,
                row_number() OVER (PARTITION BY definition_id ORDER BY bucket) AS rn
            FROM (
                SELECT definition_id, date_bin('5 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
                    sum(sign) AS incidents
                FROM c GROUP BY 1, 2 HAVING sum(sign) <> 0
            ) y
        )
        INSERT INTO summary_delta (definition_id, nodes, bucket, incidents)
        SELECT coalesce(n.definition_id, b.definition_id), n.nodes, b.bucket, coalesce(b.incidents, 0)
        FROM n FULL JOIN b ON b.definition_id = n.definition_id AND b.rn = n.rn;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION interlock_summarise_history() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH g AS (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS v,
                sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) AS cv,
                coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) AS s,
                sum(CASE WHEN c.state = 'Terminated' THEN c.sign ELSE 0 END) AS cn
            FROM (
                SELECT 1 AS sign, instance_id, node_id, state, started_at, ended_at FROM new_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        )
        INSERT INTO summary_delta (definition_id, nodes)
        SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(0, 0, v, cv, s, cn))
        FROM g WHERE v <> 0 OR cv <> 0 OR s <> 0 OR cn <> 0
        GROUP BY definition_id;
    ELSIF TG_OP = 'DELETE' THEN
        WITH g AS (
            SELECT p.definition_id, c.node_id, sum(c.sign) AS v,
                sum(CASE WHEN c.ended_at IS NULL THEN 0 ELSE c.sign END) AS cv,
                coalesce(sum(c.sign * extract(epoch FROM c.ended_at - c.started_at)), 0) AS s,
                sum(CASE WHEN c.state = 'Terminated' THEN c.sign ELSE 0 END) AS cn
            FROM (
                SELECT -1 AS sign, instance_id, node_id, state, started_at, ended_at FROM old_rows
            ) c
            JOIN process_instance p ON p.id = c.instance_id
            GROUP BY p.definition_id, c.node_id
        )
        INSERT INTO summary_delta (definition_id, nodes)
        SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(0, 0, v, cv, s, cn))
        FROM g WHERE v <> 0 OR cv <> 0 OR s <> 0 OR cn <> 0
        GROUP BY definition_id;
    ELSE
        WITH g AS (
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
        )
        INSERT INTO summary_delta (definition_id, nodes)
        SELECT definition_id, jsonb_object_agg(node_id, jsonb_build_array(0, 0, v, cv, s, cn))
        FROM g WHERE v <> 0 OR cv <> 0 OR s <> 0 OR cn <> 0
        GROUP BY definition_id;
    END IF;
    RETURN NULL;
END
$$;
