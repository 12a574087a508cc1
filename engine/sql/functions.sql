-- The current definition of every SQL function, trigger and view in Interlock's database.
--
-- The migrations in migrations/versions/ are history: they created and replaced these objects
-- step by step (0001, 0002, 0005, 0007, 0016, 0040, 0044, 0046) and stay as they were written. This
-- file says what the newest migration leaves behind, in one place. To change a function, trigger
-- or view, or to add or drop one, change it here and write a new migration that does the same,
-- together
-- (where this file includes a migration's frozen SQL, put the new text here in place of the
-- include; the migration's file never changes):
-- tests/integration/test_sql_functions.py creates this file's objects in a scratch schema and
-- fails unless a migrated database holds exactly the same functions, triggers and views, with the
-- same definitions (pg_get_functiondef, pg_get_triggerdef, pg_get_viewdef; whitespace in function
-- bodies aside).
--
-- Names are unqualified: the file is run with its target schema first on the search path.

-- The persist statement ------------------------------------------------------------------------

-- The rows of a JSON array, one per element. Not inlined (STRICT), so the planner keeps its
-- estimate of a few rows per list.
CREATE FUNCTION interlock_rows(items jsonb) RETURNS SETOF jsonb
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE ROWS 4
AS $$ SELECT jsonb_array_elements(items) $$;

-- The last step of the engine's write statement: the compare-and-swap updates matched `expected`
-- rows, or the statement (and with it the transaction) fails with SQLSTATE IL409.
CREATE FUNCTION interlock_expect_rows(matched bigint[], expected jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF to_jsonb(matched) IS DISTINCT FROM expected THEN
        RAISE EXCEPTION 'rows changed underneath the command: matched %, expected %',
            matched, expected USING ERRCODE = 'IL409';
    END IF;
END $$;

-- The outbox's events ---------------------------------------------------------------------------

-- One row per event of the outbox (engine/schema.py, class Outbox): its number `seq` (its row's
-- seq times 1000, OUTBOX_EVENTS_PER_ROW, plus its place in the row from 0) and its row's seq
-- (`row_seq`, which a read bounds so that it reads the outbox's primary key).
CREATE VIEW outbox_event AS
SELECT o.seq * 1000 + e.place - 1 AS seq, o.seq AS row_seq, o.txid, e.event, o.instance_id,
    e.token_id, e.node_id, e.history_id, o.created_at, o.definition_key
FROM outbox o,
    ROWS FROM (jsonb_to_recordset(o.events) AS (event text, token_id uuid, node_id text,
        history_id uuid)) WITH ORDINALITY AS e(event, token_id, node_id, history_id, place);

-- Notifications --------------------------------------------------------------------------------
--
-- Once per statement, not per row: the payload carries nothing, listeners read the rows
-- themselves. Sessions that set interlock.notify = 'after_commit' (the engine's, see
-- engine/loops/announcer.py) skip these triggers and announce after committing, because a NOTIFY makes
-- its transaction's commit wait for a database-wide lock held through the flush. Other writers
-- (psql, scripts) keep notifying through them.

-- Wakes outbox tails when a transaction that wrote events commits (NOTIFY is delivered at commit,
-- and identical notifications in one transaction fold into one).
CREATE FUNCTION interlock_notify_outbox() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('interlock_outbox', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER outbox_notify
AFTER INSERT ON outbox
FOR EACH STATEMENT
WHEN (current_setting('interlock.notify', true) IS DISTINCT FROM 'after_commit')
EXECUTE FUNCTION interlock_notify_outbox();

-- Wake job executors and long-polling workers only when a statement made work available: a job
-- without a lock owner, an open external task without a worker. Acquisitions and fetch-and-lock
-- statements (which take work) wake nobody, or idle waiters would spin. A trigger with a
-- transition table serves one event, hence one trigger per event.
CREATE FUNCTION interlock_notify_job() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed_rows WHERE lock_owner IS NULL AND retries > 0) THEN
        PERFORM pg_notify('interlock_job', '');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_notify_insert
AFTER INSERT ON job
REFERENCING NEW TABLE AS changed_rows
FOR EACH STATEMENT
WHEN (current_setting('interlock.notify', true) IS DISTINCT FROM 'after_commit')
EXECUTE FUNCTION interlock_notify_job();

CREATE TRIGGER job_notify_update
AFTER UPDATE ON job
REFERENCING NEW TABLE AS changed_rows
FOR EACH STATEMENT
WHEN (current_setting('interlock.notify', true) IS DISTINCT FROM 'after_commit')
EXECUTE FUNCTION interlock_notify_job();

CREATE FUNCTION interlock_notify_external_task() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed_rows WHERE state = 'Open' AND worker_id IS NULL) THEN
        PERFORM pg_notify('interlock_external_task', '');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER external_task_notify_insert
AFTER INSERT ON external_task
REFERENCING NEW TABLE AS changed_rows
FOR EACH STATEMENT
WHEN (current_setting('interlock.notify', true) IS DISTINCT FROM 'after_commit')
EXECUTE FUNCTION interlock_notify_external_task();

CREATE TRIGGER external_task_notify_update
AFTER UPDATE ON external_task
REFERENCING NEW TABLE AS changed_rows
FOR EACH STATEMENT
WHEN (current_setting('interlock.notify', true) IS DISTINCT FROM 'after_commit')
EXECUTE FUNCTION interlock_notify_external_task();

-- Summary rows (engine/db/summaries.py) -------------------------------------------------------------
--
-- Each statement that writes process_instance, token, incident or history appends its net change
-- to the console's counts as rows of summary_delta, one INSERT per trigger, one row per definition
-- with its counts in arrays, and nothing when the change nets out. Token, incident and visit rows
-- count under the definition their instance has when the trigger runs (the end of the statement).

-- The functions of all four tables, as migration 0044 replaced them (one delta row per definition
-- and statement, the counts in arrays aligned with their keys): its frozen text is their
-- definition (psql's \ir, which engine/sql/functions_sql() expands too).
\ir ../../migrations/versions/0044_summary_delta_rows.sql

-- The triggers: created by migration 0016 and unchanged since (0016_summaries.sql holds them as
-- that revision ran them).

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
