"""Write back everything one command changed, in one statement.

The command's changes travel as one JSON document; one statement of data-modifying CTEs spreads it
over the tables, one CTE for each kind of change the command made, and ends by checking that its
compare-and-swap updates matched. One parameter, and one prepared statement per shape of change:
this is what keeps a whole straight-through instance near the cost of a minimal transaction.

Rows inserted here already carry their final state (the command computed it in memory), so no
CTE ever touches a row another CTE of the same statement writes. A list of several rows is
unpacked with `interlock_rows`, a function that tells the planner to expect a handful of rows:
with the default estimate of a hundred, updates would join against whole-table scans once the
tables grow. A list of one row, the usual case, is read as one record, which costs no function
call at all.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import psycopg

from engine.runtime import InstanceRun
from engine.schema import EXTERNAL_TASK_CHANNEL, JOB_CHANNEL, OUTBOX_CHANNEL
from engine.states import TaskState

# One data-modifying CTE per kind of change, keyed by its list in the document. A statement holds
# only the CTEs whose lists are not empty: an empty INSERT still fires its statement triggers and
# every CTE costs executor set-up, so a command pays for what it changed, not for every table.
# `{rows}` stands for the list's rows (see `_cte`).
_CTES: dict[str, str] = {
    "new_instance": """
new_instance AS (
    INSERT INTO process_instance
        (id, definition_id, definition_key, business_key, state, version, started_at, ended_at)
    SELECT r.id, r.definition_id, r.definition_key, r.business_key, r.state, 0,
           r.started_at, r.ended_at
    FROM d, {rows} AS r(
        id uuid, definition_id text, definition_key text, business_key text, state text,
        started_at timestamptz, ended_at timestamptz)
)""",
    "changed_instance": """
changed_instance AS (
    UPDATE process_instance p SET state = r.state, ended_at = r.ended_at, version = p.version + 1
    FROM d, {rows} AS r(
        id uuid, version int, state text, ended_at timestamptz)
    WHERE p.id = r.id AND p.version = r.version
    RETURNING 1
)""",
    "new_tokens": """
new_tokens AS (
    INSERT INTO token (id, instance_id, node_id, state, mode, scope_id, parent_id, parallel_group,
                       merged_into, visit_id, version, created_at, updated_at)
    SELECT r.id, r.instance_id, r.node_id, r.state, r.mode, r.scope_id, r.parent_id,
           r.parallel_group, r.merged_into, r.visit_id, 0, r.created_at, r.updated_at
    FROM d, {rows} AS r(
        id uuid, instance_id uuid, node_id text, state text, mode text, scope_id uuid,
        parent_id uuid, parallel_group text, merged_into uuid, visit_id uuid,
        created_at timestamptz, updated_at timestamptz)
)""",
    "changed_tokens": """
changed_tokens AS (
    UPDATE token t SET node_id = r.node_id, state = r.state, parallel_group = r.parallel_group,
        merged_into = r.merged_into, visit_id = r.visit_id, updated_at = r.updated_at,
        version = t.version + 1
    FROM d, {rows} AS r(
        id uuid, version int, node_id text, state text, parallel_group text, merged_into uuid,
        visit_id uuid, updated_at timestamptz)
    WHERE t.id = r.id AND t.version = r.version
    RETURNING 1
)""",
    "new_joins": """
new_joins AS (
    INSERT INTO join_state (instance_id, gateway_id, scope_key, arrivals, version)
    SELECT r.instance_id, r.gateway_id, r.scope_key, r.arrivals, 0
    FROM d, {rows} AS r(
        instance_id uuid, gateway_id text, scope_key text, arrivals jsonb)
)""",
    "changed_joins": """
changed_joins AS (
    UPDATE join_state j SET arrivals = r.arrivals, version = j.version + 1
    FROM d, {rows} AS r(
        instance_id uuid, gateway_id text, scope_key text, arrivals jsonb, version int)
    WHERE j.instance_id = r.instance_id AND j.gateway_id = r.gateway_id
      AND j.scope_key = r.scope_key AND j.version = r.version
    RETURNING 1
)""",
    "deleted_joins": """
deleted_joins AS (
    DELETE FROM join_state j
    USING d, {rows} AS r(
        instance_id uuid, gateway_id text, scope_key text, version int)
    WHERE j.instance_id = r.instance_id AND j.gateway_id = r.gateway_id
      AND j.scope_key = r.scope_key AND j.version = r.version
    RETURNING 1
)""",
    "variables": """
variables AS (
    INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at)
    SELECT r.instance_id, '', r.name, r.type, r.value, r.updated_at
    FROM d, {rows} AS r(
        instance_id uuid, name text, type text, value jsonb, updated_at timestamptz)
    ON CONFLICT (instance_id, scope_key, name)
    DO UPDATE SET type = excluded.type, value = excluded.value, updated_at = excluded.updated_at
)""",
    "new_tasks": """
new_tasks AS (
    INSERT INTO user_task (id, instance_id, token_id, node_id, name, state, assignee,
                           candidate_users, candidate_groups, due_at, priority, created_at,
                           ended_at)
    SELECT r.id, r.instance_id, r.token_id, r.node_id, r.name, r.state, r.assignee,
           ARRAY(SELECT jsonb_array_elements_text(r.candidate_users)),
           ARRAY(SELECT jsonb_array_elements_text(r.candidate_groups)),
           r.due_at, r.priority, r.created_at, r.ended_at
    FROM d, {rows} AS r(
        id uuid, instance_id uuid, token_id uuid, node_id text, name text, state text,
        assignee text, candidate_users jsonb, candidate_groups jsonb, due_at timestamptz,
        priority int, created_at timestamptz, ended_at timestamptz)
)""",
    "changed_tasks": """
changed_tasks AS (
    UPDATE user_task u SET state = r.state, ended_at = r.ended_at, assignee = r.assignee
    FROM d, {rows} AS r(
        id uuid, state text, ended_at timestamptz, assignee text)
    WHERE u.id = r.id
)""",
    "new_external_tasks": """
new_external_tasks AS (
    INSERT INTO external_task (id, instance_id, token_id, node_id, topic, state, priority,
                               worker_id, lock_expires_at, retries, error_message, error_details,
                               created_at, ended_at)
    SELECT r.id, r.instance_id, r.token_id, r.node_id, r.topic, r.state, r.priority, r.worker_id,
           r.lock_expires_at, r.retries, r.error_message, r.error_details, r.created_at,
           r.ended_at
    FROM d, {rows} AS r(
        id uuid, instance_id uuid, token_id uuid, node_id text, topic text, state text,
        priority bigint, worker_id text, lock_expires_at timestamptz, retries int,
        error_message text, error_details text, created_at timestamptz, ended_at timestamptz)
)""",
    "changed_external_tasks": """
changed_external_tasks AS (
    UPDATE external_task e SET state = r.state, worker_id = r.worker_id,
        lock_expires_at = r.lock_expires_at, retries = r.retries, error_message = r.error_message,
        error_details = r.error_details, ended_at = r.ended_at
    FROM d, {rows} AS r(
        id uuid, state text, worker_id text, lock_expires_at timestamptz, retries int,
        error_message text, error_details text, ended_at timestamptz, loaded_worker_id text)
    WHERE e.id = r.id AND e.worker_id IS NOT DISTINCT FROM r.loaded_worker_id
    RETURNING 1
)""",
    "new_jobs": """
new_jobs AS (
    INSERT INTO job (id, kind, instance_id, token_id, node_id, definition_id, due_at, lock_owner,
                     lock_expires_at, retries, timer_text, repetitions_left, error_message,
                     created_at)
    SELECT r.id, r.kind, r.instance_id, r.token_id, r.node_id, r.definition_id, r.due_at,
           r.lock_owner, r.lock_expires_at, r.retries, r.timer_text, r.repetitions_left,
           r.error_message, r.created_at
    FROM d, {rows} AS r(
        id uuid, kind text, instance_id uuid, token_id uuid, node_id text, definition_id text,
        due_at timestamptz, lock_owner text, lock_expires_at timestamptz, retries int,
        timer_text text, repetitions_left int, error_message text, created_at timestamptz)
)""",
    "changed_jobs": """
changed_jobs AS (
    UPDATE job j SET due_at = r.due_at, lock_owner = r.lock_owner,
        lock_expires_at = r.lock_expires_at, retries = r.retries,
        repetitions_left = r.repetitions_left, error_message = r.error_message
    FROM d, {rows} AS r(
        id uuid, due_at timestamptz, lock_owner text, lock_expires_at timestamptz, retries int,
        repetitions_left int, error_message text)
    WHERE j.id = r.id
)""",
    "deleted_jobs": """
deleted_jobs AS (
    DELETE FROM job j USING d
    WHERE j.id IN (
        SELECT (jsonb_build_array(x) ->> 0)::uuid FROM interlock_rows(d.doc->'deleted_jobs') AS x)
)""",
    "new_subscriptions": """
new_subscriptions AS (
    INSERT INTO event_subscription (id, kind, name, instance_id, token_id, node_id,
                                    definition_id, created_at)
    SELECT r.id, r.kind, r.name, r.instance_id, r.token_id, r.node_id, r.definition_id,
           r.created_at
    FROM d, {rows} AS r(
        id uuid, kind text, name text, instance_id uuid, token_id uuid, node_id text,
        definition_id text, created_at timestamptz)
)""",
    "deleted_subscriptions": """
deleted_subscriptions AS (
    DELETE FROM event_subscription e USING d
    WHERE e.id IN (
        SELECT (jsonb_build_array(x) ->> 0)::uuid
        FROM interlock_rows(d.doc->'deleted_subscriptions') AS x)
)""",
    "new_incidents": """
new_incidents AS (
    INSERT INTO incident (id, type, instance_id, definition_id, token_id, node_id, job_id,
                          external_task_id, message, details, state, created_at, resolved_at)
    SELECT r.id, r.type, r.instance_id, r.definition_id, r.token_id, r.node_id, r.job_id,
           r.external_task_id, r.message, r.details, r.state, r.created_at, r.resolved_at
    FROM d, {rows} AS r(
        id uuid, type text, instance_id uuid, definition_id text, token_id uuid, node_id text,
        job_id uuid, external_task_id uuid, message text, details text, state text,
        created_at timestamptz, resolved_at timestamptz)
)""",
    "changed_incidents": """
changed_incidents AS (
    UPDATE incident i SET state = r.state, resolved_at = r.resolved_at
    FROM d, {rows} AS r(
        id uuid, state text, resolved_at timestamptz)
    WHERE i.id = r.id
)""",
    "new_visits": """
new_visits AS (
    INSERT INTO history (id, instance_id, token_id, node_id, node_name, node_type, state,
                         started_at, ended_at)
    SELECT r.id, r.instance_id, r.token_id, r.node_id, r.node_name, r.node_type, r.state,
           r.started_at, r.ended_at
    FROM d, {rows} AS r(
        id uuid, instance_id uuid, token_id uuid, node_id text, node_name text, node_type text,
        state text, started_at timestamptz, ended_at timestamptz)
)""",
    "ended_visits": """
ended_visits AS (
    UPDATE history h SET state = r.state, ended_at = r.ended_at
    FROM d, {rows} AS r(
        id uuid, state text, ended_at timestamptz)
    WHERE h.id = r.id
)""",
    "outbox": """
events AS (
    INSERT INTO outbox (event, instance_id, token_id, node_id, history_id)
    SELECT r.event, r.instance_id, r.token_id, r.node_id, r.history_id
    FROM d, {rows} AS r(
        event text, instance_id uuid, token_id uuid, node_id text, history_id uuid,
        ordinality int)
    ORDER BY r.ordinality
)""",
}

# The compare-and-swap updates and how many rows each must match; a shortfall means another
# transaction changed the rows the command loaded, and interlock_expect_rows() aborts the statement.
_CHECKED = (
    "changed_instance",
    "changed_tokens",
    "changed_joins",
    "deleted_joins",
    "changed_external_tasks",
)


def save_statement(doc: dict[str, Any]) -> str:
    """The statement that writes `doc`: its non-empty lists only, then the row-count check."""
    present = [key for key in _CTES if doc[key]]
    checked = [key for key in present if key in _CHECKED]
    ctes = ",\n".join(
        ["d AS (SELECT %s::jsonb AS doc)", *(_cte(key, len(doc[key])) for key in present)]
    )
    if not checked:
        return f"WITH {ctes}\nSELECT NULL"
    counts = ", ".join(f"(SELECT count(*) FROM {key})" for key in checked)
    return f"WITH {ctes}\nSELECT interlock_expect_rows(ARRAY[{counts}], d.doc->'expected') FROM d"


def _cte(key: str, count: int) -> str:
    """The CTE of `key` reading its `count` rows. A lone row (the usual case) is read as a record
    straight from the document, without a call of the set-returning function."""
    rows = (
        f"jsonb_to_record(d.doc->'{key}'->0)"
        if count == 1
        else f"interlock_rows(d.doc->'{key}') AS x, jsonb_to_record(x)"
    )
    return _CTES[key].replace("{rows}", rows)


def expected_rows(doc: dict[str, Any]) -> list[int]:
    """What the statement's compare-and-swap updates must match, in `save_statement`'s order."""
    return [len(doc[key]) for key in _CTES if key in _CHECKED and doc[key]]


def save_runs(conn: psycopg.Connection[Any], runs: list[InstanceRun]) -> set[str]:
    """Queue the one statement that writes the changes of the command's instances; the channels
    to announce after the commit (see engine/announcer.py).

    Nothing waits for the statement: when a compare-and-swap update matches fewer rows than it
    must (another transaction changed what the command loaded), it fails with
    STALE_WRITE_SQLSTATE and the transaction cannot commit."""
    doc = document(runs[0]) if len(runs) == 1 else merged([document(run) for run in runs])
    doc["expected"] = expected_rows(doc)
    conn.execute(save_statement(doc), (encode(doc),), prepare=True)
    return announcements(doc)


def encode(doc: dict[str, Any]) -> str:
    """The document as JSON text. orjson writes ids and timestamps itself, several times faster
    than the standard encoder calling back for each; what it refuses (integers beyond 64 bits,
    keys that are not strings) the standard encoder takes."""
    try:
        return orjson.dumps(doc).decode()
    except orjson.JSONEncodeError:
        return json.dumps(doc, default=str)


def merged(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One document with every list of `docs` concatenated, outbox rows in order."""
    doc = {key: [row for part in docs for row in part[key]] for key in _CTES}
    for ordinal, row in enumerate(doc["outbox"]):
        row["ordinality"] = ordinal
    return doc


def announcements(doc: dict[str, Any]) -> set[str]:
    """New outbox rows, and work that became available to job executors and workers."""
    channels = {OUTBOX_CHANNEL} if doc["outbox"] else set()
    if any(
        job["lock_owner"] is None and job["retries"] > 0
        for job in (*doc["new_jobs"], *doc["changed_jobs"])
    ):
        channels.add(JOB_CHANNEL)
    if any(
        task["state"] == TaskState.OPEN and task["worker_id"] is None
        for task in (*doc["new_external_tasks"], *doc["changed_external_tasks"])
    ):
        channels.add(EXTERNAL_TASK_CHANNEL)
    return channels


def document(run: InstanceRun) -> dict[str, Any]:
    """The command's changes as plain JSON-ready rows, one list per kind of change."""
    inst = run.instance
    iid = inst.id
    instance_row = {
        "id": iid,
        "version": inst.version,
        "definition_id": inst.definition_id,
        "definition_key": inst.definition_key,
        "business_key": inst.business_key,
        "state": inst.state.value,
        "started_at": inst.started_at,
        "ended_at": inst.ended_at,
    }
    tokens = list(run.tokens.values())
    token_rows = [
        {
            "id": t.id,
            "instance_id": iid,
            "version": t.version,
            "node_id": t.node_id,
            "state": t.state.value,
            "mode": t.mode,
            "scope_id": t.scope_id,
            "parent_id": t.parent_id,
            "parallel_group": t.parallel_group,
            "merged_into": t.merged_into,
            "visit_id": t.visit_id,
            "created_at": t.created_at,
            "updated_at": t.updated_at,
            "_new": t.is_new,
        }
        for t in tokens
        if t.is_new or t.dirty
    ]
    joins = [
        {
            "instance_id": iid,
            "gateway_id": j.gateway_id,
            "scope_key": j.scope_key,
            "arrivals": j.arrivals,
            "version": j.version,
        }
        for j in run.joins.values()
    ]
    visits = [
        {
            "id": v.id,
            "instance_id": iid,
            "token_id": v.token_id,
            "node_id": v.node_id,
            "node_name": v.node_name,
            "node_type": v.node_type,
            "state": v.state,
            "started_at": v.started_at,
            "ended_at": v.ended_at,
        }
        for v in run.visits
    ]
    # One outbox row per history row written, then the instance-level and token events.
    outbox: list[dict[str, Any]] = [
        {
            "event": f"visit.{v.state.lower()}",
            "token_id": v.token_id,
            "node_id": v.node_id,
            "history_id": v.id,
        }
        for v in run.visits
    ]
    outbox.extend(
        {"event": e.event, "token_id": e.token_id, "node_id": e.node_id, "history_id": e.history_id}
        for e in run.events
    )
    if run.changed_variables:
        outbox.append({"event": "variables.updated"})
    for ordinal, row in enumerate(outbox):
        row["instance_id"] = iid
        row["ordinality"] = ordinal
    changes = {
        "new_tokens": [t for t in token_rows if t["_new"]],
        "changed_tokens": [t for t in token_rows if not t["_new"]],
        "new_joins": [j for j in joins if j["version"] is None],
        "changed_joins": [j for j in joins if j["version"] is not None],
        "deleted_joins": [
            {"instance_id": iid, "gateway_id": g, "scope_key": s, "version": version}
            for (g, s), version in run.deleted_joins.items()
        ],
        "variables": [
            {
                "instance_id": iid,
                "name": name,
                "type": run.variables[name].type,
                "value": run.variables[name].to_json(),
                "updated_at": run.now,
            }
            for name in sorted(run.changed_variables)
        ],
        **_work(run),
        "new_visits": [v for v, visit in zip(visits, run.visits, strict=True) if visit.is_new],
        "ended_visits": [
            v for v, visit in zip(visits, run.visits, strict=True) if not visit.is_new
        ],
        "outbox": outbox,
    }
    # Every write to an existing instance bumps its version, so that a command which loaded the
    # instance without its lock (see engine/executor.py) can tell nobody wrote in between.
    changed = not inst.is_new and (inst.dirty or any(changes.values()))
    return {
        "new_instance": [instance_row] if inst.is_new else [],
        "changed_instance": [instance_row] if changed else [],
        **changes,
    }


def _work(run: InstanceRun) -> dict[str, list[Any]]:
    """User tasks, external tasks, jobs, subscriptions and incidents: new, changed, deleted."""
    iid = run.instance.id
    definition_id = run.instance.definition_id

    def rows(items: Any, **extra: Any) -> list[dict[str, Any]]:
        return [{**vars(item), **extra} for item in items]

    tasks = run.tasks.values()
    externals = run.external_tasks.values()
    jobs = run.jobs.values()
    subscriptions = run.subscriptions.values()
    incidents = run.incidents.values()
    return {
        "new_tasks": rows((t for t in tasks if t.is_new), instance_id=iid),
        "changed_tasks": rows(t for t in tasks if t.dirty and not t.is_new),
        "new_external_tasks": rows((e for e in externals if e.is_new), instance_id=iid),
        "changed_external_tasks": rows(e for e in externals if e.dirty and not e.is_new),
        "new_jobs": rows(
            (j for j in jobs if j.is_new and not j.deleted),
            instance_id=iid,
            definition_id=definition_id,
        ),
        "changed_jobs": rows(j for j in jobs if j.dirty and not j.is_new and not j.deleted),
        "deleted_jobs": [str(j.id) for j in jobs if j.deleted and not j.is_new],
        "new_subscriptions": rows(
            (s for s in subscriptions if s.is_new and not s.deleted),
            instance_id=iid,
            definition_id=definition_id,
        ),
        "deleted_subscriptions": [str(s.id) for s in subscriptions if s.deleted and not s.is_new],
        "new_incidents": rows(
            (i for i in incidents if i.is_new), instance_id=iid, definition_id=definition_id
        ),
        "changed_incidents": rows(i for i in incidents if i.dirty and not i.is_new),
    }
