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

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson
import psycopg
import sqlalchemy as sa

from engine.core.runtime import Event, InstanceRun
from engine.schema import (
    EXTERNAL_TASK_CHANNEL,
    JOB_CHANNEL,
    OUTBOX_CHANNEL,
    OUTBOX_EVENTS_PER_ROW,
)
from engine.states import DefinitionState, TaskState
from engine.store import columns, work_log
from engine.store.definitions import DefinitionRow

# What a list of the document is read from: a lone row (the usual case) is read as a record
# straight from the document, without a call of the set-returning function.
_ONE_ROW = "jsonb_to_record(d.doc->'{key}'->0)"
_ROWS = "interlock_rows(d.doc->'{key}') AS x, jsonb_to_record(x)"


@dataclass(frozen=True)
class _Cte:
    """One data-modifying CTE, reading the document's list `key`, whose rows carry `fields`:
    its text for a list of one row and for a longer list. Its rows come from runtime rows of
    `held_by`, and `context` names the fields the command supplies instead (the instance's id,
    its definition's). A `checked` CTE is a compare-and-swap that returns the rows it matched
    (see `_CHECKED`)."""

    key: str
    fields: tuple[str, ...]
    one: str
    many: str
    held_by: type[Any] | None = None
    context: tuple[str, ...] = ()
    checked: bool = False

    def text(self, count: int) -> str:
        return self.one if count == 1 else self.many

    @cached_property
    def _whole(self) -> bool:
        """Whether a runtime row is sent whole: its fields are all plain values (the statement
        reads the `fields` it needs by name), which costs less than picking them one by one."""
        return self.held_by is not None and all(f.init for f in dataclasses.fields(self.held_by))

    @cached_property
    def _pick(self) -> Callable[[Any], dict[str, Any]]:
        own = [name for name in self.fields if name not in self.context]
        return lambda item: {name: getattr(item, name) for name in own}

    def rows(self, items: Iterable[Any], **context: Any) -> list[dict[str, Any]]:
        """The document rows of runtime rows `items`, with `context`'s values."""
        if self._whole:
            return [{**vars(item), **context} for item in items]
        pick = self._pick
        return [{**pick(item), **context} for item in items]


def _cte(
    key: str,
    fields: tuple[str, ...],
    body: Callable[[str], str],
    *,
    held_by: type[Any] | None = None,
    context: tuple[str, ...] = (),
    checked: bool = False,
) -> _Cte:
    """`body` is the CTE's text around the rows it reads, given as their FROM item."""
    one, many = body(_ONE_ROW.format(key=key)), body(_ROWS.format(key=key))
    return _Cte(key, fields, one, many, held_by, context, checked)


def _record(table: sa.Table, names: Iterable[str], *extra: str) -> str:
    """The column definitions of a record of `table`'s columns `names`, then `extra` ones."""
    found = [f"{name} {columns.record_type(table.columns[name])}" for name in names]
    return ", ".join([*found, *extra])


def _keys(table: sa.Table) -> tuple[str, ...]:
    return tuple(column.name for column in table.primary_key.columns)


def _insert(
    key: str,
    table: sa.Table,
    held_by: type[Any] | None,
    *,
    name: str | None = None,
    constants: dict[str, str] | None = None,
    context: tuple[str, ...] = (),
    extra: tuple[tuple[str, str], ...] = (),
    tail: str = "",
) -> _Cte:
    """Insert the rows of `key`. Every column is written but those the database fills that
    neither the runtime row `held_by` holds nor the command supplies (`context`: the instance's
    id, its definition's); a new row's version is 0; `constants` gives other columns' values;
    `extra` are (name, type) of fields the statement reads besides columns."""
    held = (columns.field_names(held_by) if held_by else frozenset()) | set(context)
    written = [c for c in table.columns if c.name in held or not columns.generated(c)]
    fixed = {"version": "0", **(constants or {})}
    read = tuple(c.name for c in written if c.name not in fixed)
    values = ", ".join(fixed.get(c.name) or columns.record_value(c) for c in written)
    record = _record(table, read, *(f"{n} {t}" for n, t in extra))
    fields = read + tuple(n for n, _ in extra)
    return _cte(
        key,
        fields,
        lambda rows: (
            f"{name or key} AS (INSERT INTO {table.name} ({', '.join(c.name for c in written)}) "
            f"SELECT {values} FROM d, {rows} AS r({record}){tail})"
        ),
        held_by=held_by,
        context=context,
    )


def _update(
    key: str,
    table: sa.Table,
    held_by: type[Any],
    alias: str,
    *,
    compare: tuple[str, str] | None = None,
    context: tuple[str, ...] = (),
) -> _Cte:
    """Update the mutable columns (see `schema.MUTABLE`) of the rows of `key`, found by their
    primary key. With a version column, only rows still at the version the command loaded are
    updated and the version goes up; `compare` is (field, column): only rows whose column is
    still the field's value are updated. Either way the CTE returns what it matched."""
    keys = _keys(table)
    changed = columns.mutable(table)
    versioned = "version" in table.columns
    read = keys + (("version",) if versioned else ()) + changed
    extra = () if compare is None else (f"{compare[0]} {columns.record_type(table.c[compare[1]])}",)
    sets = [f"{c} = {columns.record_value(table.columns[c])}" for c in changed]
    where = [f"{alias}.{k} = r.{k}" for k in keys]
    if versioned:
        sets.append(f"version = {alias}.version + 1")
        where.append(f"{alias}.version = r.version")
    if compare is not None:
        where.append(f"{alias}.{compare[1]} IS NOT DISTINCT FROM r.{compare[0]}")
    checked = versioned or compare is not None
    returning = " RETURNING 1" if checked else ""
    record = _record(table, read, *extra)
    fields = read + (() if compare is None else (compare[0],))
    return _cte(
        key,
        fields,
        lambda rows: (
            f"{key} AS (UPDATE {table.name} {alias} SET {', '.join(sets)} "
            f"FROM d, {rows} AS r({record}) WHERE {' AND '.join(where)}{returning})"
        ),
        held_by=held_by,
        context=context,
        checked=checked,
    )


def _delete_versioned(key: str, table: sa.Table, alias: str) -> _Cte:
    """Delete the rows of `key` still at the version the command loaded; returns what matched."""
    read = (*_keys(table), "version")
    where = " AND ".join(f"{alias}.{k} = r.{k}" for k in read)
    record = _record(table, read)
    return _cte(
        key,
        read,
        lambda rows: (
            f"{key} AS (DELETE FROM {table.name} {alias} USING d, {rows} AS r({record}) "
            f"WHERE {where} RETURNING 1)"
        ),
        checked=True,
    )


def _delete_by_id(key: str, table: sa.Table, alias: str) -> _Cte:
    """Delete the rows whose ids the list `key` holds (a list of ids, not of rows)."""
    text = (
        f"{key} AS (DELETE FROM {table.name} {alias} USING d WHERE {alias}.id IN ("
        f"SELECT (jsonb_build_array(x) ->> 0)::uuid FROM interlock_rows(d.doc->'{key}') AS x))"
    )
    return _Cte(key, ("id",), text, text)


def _variables(table: sa.Table) -> _Cte:
    """Insert or update variables of any scope (scope_key '' is the root scope)."""
    keys = ", ".join(_keys(table))
    sets = ", ".join(f"{c} = excluded.{c}" for c in columns.mutable(table))
    return _insert(
        "variables",
        table,
        None,
        context=("instance_id",),
        tail=f" ON CONFLICT ({keys}) DO UPDATE SET {sets}",
    )


def _deleted_variables(table: sa.Table) -> _Cte:
    """Delete variables: one by (scope_key, name), or a whole scope's when the name is null.
    A row the same statement writes (a scope left and entered again by its token, with a local
    of the same name) is the written one's: it is not deleted."""
    record = _record(table, ("instance_id", "scope_key", "name"))
    return _cte(
        "deleted_variables",
        ("instance_id", "scope_key", "name"),
        lambda rows: (
            f"deleted_variables AS (DELETE FROM {table.name} v USING d, {rows} AS r({record}) "
            "WHERE v.instance_id = r.instance_id AND v.scope_key = r.scope_key "
            "AND (r.name IS NULL OR v.name = r.name) AND NOT EXISTS (SELECT 1 FROM "
            "jsonb_to_recordset(d.doc->'variables') AS w(instance_id uuid, scope_key text, "
            "name text) WHERE (w.instance_id, w.scope_key, w.name) = "
            "(v.instance_id, v.scope_key, v.name)))"
        ),
    )


# A job made while its job definition is suspended is made suspended, and with the job
# definition's overriding priority if it has one, as Camunda makes them.
_SUSPENDED_BY_DEFINITION = (
    "EXISTS (SELECT 1 FROM job_definition jd WHERE jd.definition_id = r.definition_id "
    "AND jd.node_id = r.node_id AND jd.job_kind = r.kind AND jd.suspended)"
)


_PRIORITY = (
    "coalesce((SELECT jd.priority FROM job_definition jd WHERE jd.definition_id = "
    "r.definition_id AND jd.node_id = r.node_id AND jd.job_kind = r.kind), r.priority)"
)


def _latest_definitions(table: sa.Table) -> _Cte:
    """The latest definitions a start took on trust (engine/core/definitions.py), each still
    active and the latest of its key, with no definition of the key of another tenant; returns
    those that are (a compare-and-swap: one that is not fails the statement)."""
    record = _record(table, ("id", "key", "tenant_id", "version"))
    active = DefinitionState.ACTIVE.value
    return _cte(
        "latest_definitions",
        ("id", "key", "tenant_id", "version"),
        lambda rows: (
            f"latest_definitions AS (SELECT 1 FROM d, {rows} AS r({record}) WHERE EXISTS ("
            f"SELECT 1 FROM {table.name} p WHERE p.id = r.id AND p.state = '{active}') "
            f"AND NOT EXISTS (SELECT 1 FROM {table.name} p WHERE p.key = r.key AND p.id <> r.id "
            "AND (p.version >= r.version OR p.tenant_id IS DISTINCT FROM r.tenant_id)))"
        ),
        checked=True,
    )


def ctes(tables: Mapping[str, sa.Table] = columns.TABLES) -> dict[str, _Cte]:
    """One data-modifying CTE per kind of change, keyed by its list in the document, derived
    from the tables. A statement holds only the CTEs whose lists are not empty: an empty INSERT
    still fires its statement triggers and every CTE costs executor set-up, so a command pays
    for what it changed, not for every table."""

    def held(name: str) -> tuple[sa.Table, type[Any]]:
        """The table `name` and the runtime row it is written from."""
        return tables[name], columns.HELD_BY[name]

    join, job = tables["join_state"], tables["job"]
    found = [
        _insert("new_instance", *held("process_instance")),
        _update("changed_instance", *held("process_instance"), "p"),
        _insert("new_tokens", *held("token")),
        _update("changed_tokens", *held("token"), "t"),
        _insert("new_joins", *held("join_state"), context=("instance_id",)),
        _update("changed_joins", *held("join_state"), "j", context=("instance_id",)),
        _delete_versioned("deleted_joins", join, "j"),
        _variables(tables["variable"]),
        _deleted_variables(tables["variable"]),
        _insert("new_tasks", *held("user_task"), context=("instance_id", "tenant_id")),
        _update("changed_tasks", *held("user_task"), "u"),
        _insert(
            "new_external_tasks",
            *held("external_task"),
            context=("instance_id", "tenant_id", "definition_key"),
        ),
        _update(
            "changed_external_tasks",
            *held("external_task"),
            "e",
            compare=("loaded_worker_id", "worker_id"),
        ),
        _insert(
            "new_jobs",
            *held("job"),
            context=("instance_id", "definition_id", "tenant_id"),
            constants={"suspended": _SUSPENDED_BY_DEFINITION, "priority": _PRIORITY},
            # The model's priority, read beside the columns: the job definition's overrides it.
            extra=(("priority", "bigint"),),
        ),
        _update("changed_jobs", *held("job"), "j"),
        _delete_by_id("deleted_jobs", job, "j"),
        _insert(
            "new_subscriptions",
            *held("event_subscription"),
            context=("instance_id", "definition_id"),
        ),
        _delete_by_id("deleted_subscriptions", tables["event_subscription"], "e"),
        _insert(
            "new_incidents",
            *held("incident"),
            context=("instance_id", "definition_id", "tenant_id"),
        ),
        _update("changed_incidents", *held("incident"), "i"),
        _insert("new_visits", *held("history"), context=("instance_id",)),
        _insert("work_log", tables["work_log"], None),
        _update("ended_visits", *held("history"), "h"),
        _insert(
            "outbox",
            tables["outbox"],
            None,
            name="events",
            context=("instance_id", "definition_key", "events"),
            extra=(("ordinality", "int"),),
            tail=" ORDER BY r.ordinality",
        ),
        _latest_definitions(tables["process_definition"]),
    ]
    return {cte.key: cte for cte in found}


_CTES = ctes()

# The compare-and-swap updates and how many rows each must match; a shortfall means another
# transaction changed the rows the command loaded, and interlock_expect_rows() aborts the statement.
_CHECKED = frozenset(key for key, cte in _CTES.items() if cte.checked)


def save_statement(doc: dict[str, Any], ctes: Mapping[str, _Cte] | None = None) -> str:
    """The statement that writes `doc`: its non-empty lists only, then the row-count check."""
    known = _CTES if ctes is None else ctes
    present = [key for key in known if doc[key]]
    checked = [key for key in present if key in _CHECKED]
    parts = ",\n".join(
        ["d AS (SELECT %s::jsonb AS doc)", *(known[key].text(len(doc[key])) for key in present)]
    )
    if not checked:
        return f"WITH {parts}\nSELECT NULL"
    counts = ", ".join(f"(SELECT count(*) FROM {key})" for key in checked)
    return f"WITH {parts}\nSELECT interlock_expect_rows(ARRAY[{counts}], d.doc->'expected') FROM d"


def expected_rows(doc: dict[str, Any]) -> list[int]:
    """What the statement's compare-and-swap updates must match, in `save_statement`'s order."""
    return [len(doc[key]) for key in _CTES if key in _CHECKED and doc[key]]


def save_runs(
    conn: psycopg.Connection[Any],
    runs: list[InstanceRun],
    assumed: Iterable[DefinitionRow] = (),
) -> set[str]:
    """Queue the one statement that writes the changes of the command's instances; the channels
    to announce after the commit (see engine/loops/announcer.py). `assumed`: the latest
    definitions the command took on trust, which the statement checks.

    Nothing waits for the statement: when a compare-and-swap update matches fewer rows than it
    must (another transaction changed what the command loaded), it fails with
    STALE_WRITE_SQLSTATE and the transaction cannot commit."""
    doc = document(runs[0]) if len(runs) == 1 else merged([document(run) for run in runs])
    doc["latest_definitions"] = [
        {"id": row.id, "key": row.key, "tenant_id": row.tenant_id, "version": row.version}
        for row in assumed
    ]
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


def document(run: InstanceRun, ctes: Mapping[str, _Cte] | None = None) -> dict[str, Any]:
    """The command's changes as plain JSON-ready rows, one list per kind of change; each row
    carries the fields its CTE reads (see `ctes`)."""
    cte = _CTES if ctes is None else ctes
    inst = run.instance
    iid = inst.id
    tokens = run.tokens.values()
    joins = run.joins.values()
    # One event per history row written, then the instance-level and token events: one outbox
    # row holds them (a further row per OUTBOX_EVENTS_PER_ROW events).
    events = [Event(f"visit.{v.state.lower()}", v.token_id, v.node_id, v.id) for v in run.visits]
    events.extend(run.events)
    if run.changed_variables or run.changed_locals or run.deleted_variables:
        events.append(Event("variables.updated"))
    outbox = outbox_rows(events, iid, inst.definition_key)
    changes = {
        "new_tokens": cte["new_tokens"].rows(t for t in tokens if t.is_new),
        "changed_tokens": cte["changed_tokens"].rows(t for t in tokens if t.dirty and not t.is_new),
        "new_joins": cte["new_joins"].rows(
            (j for j in joins if j.version is None), instance_id=iid
        ),
        "changed_joins": cte["changed_joins"].rows(
            (j for j in joins if j.version is not None), instance_id=iid
        ),
        "deleted_joins": [
            {"instance_id": iid, "gateway_id": g, "scope_key": s, "version": version}
            for (g, s), version in run.deleted_joins.items()
        ],
        "variables": _variable_rows(run),
        "deleted_variables": [
            {"instance_id": iid, "scope_key": scope, "name": name}
            for scope, name in sorted(run.deleted_variables, key=lambda d: (d[0], d[1] or ""))
        ],
        **_work(run, cte),
        "new_visits": cte["new_visits"].rows((v for v in run.visits if v.is_new), instance_id=iid),
        "ended_visits": cte["ended_visits"].rows(v for v in run.visits if not v.is_new),
        "work_log": work_log.rows_of(run),
        "outbox": outbox,
    }
    # Every write to an existing instance bumps its version, so that a command which loaded the
    # instance without its lock (see engine/core/executor.py) can tell nobody wrote in between.
    changed = not inst.is_new and (inst.dirty or any(changes.values()))
    return {
        "new_instance": cte["new_instance"].rows([inst] if inst.is_new else []),
        "changed_instance": cte["changed_instance"].rows([inst] if changed else []),
        **changes,
        "latest_definitions": [],
    }


def outbox_rows(
    events: list[Event], instance_id: Any, definition_key: str | None
) -> list[dict[str, Any]]:
    """The outbox rows of one instance's `events`, in order: each holds up to
    OUTBOX_EVENTS_PER_ROW events, as objects without their unset fields."""
    found = [{k: v for k, v in vars(event).items() if v is not None} for event in events]
    return [
        {
            "instance_id": instance_id,
            "definition_key": definition_key,
            "events": found[start : start + OUTBOX_EVENTS_PER_ROW],
            "ordinality": ordinal,
        }
        for ordinal, start in enumerate(range(0, len(found), OUTBOX_EVENTS_PER_ROW))
    ]


def _variable_rows(run: InstanceRun) -> list[dict[str, Any]]:
    """The variables the command set: the root scope's, then the locals still alive."""
    rows = [("", name, run.variables[name]) for name in sorted(run.changed_variables)]
    rows.extend(
        (str(owner), name, run.locals[owner][name])
        for owner, name in sorted(run.changed_locals, key=lambda c: (str(c[0]), c[1]))
        if name in run.locals.get(owner, ())
    )
    return [
        {
            "instance_id": run.instance.id,
            "scope_key": scope,
            "name": name,
            "type": typed.type,
            "value": typed.to_json(),
            "updated_at": run.now,
            "created_at": run.now,  # kept by a later update (not a mutable column)
        }
        for scope, name, typed in rows
    ]


def _work(run: InstanceRun, cte: Mapping[str, _Cte]) -> dict[str, list[Any]]:
    """User tasks, external tasks, jobs, subscriptions and incidents: new, changed, deleted."""
    iid = run.instance.id
    definition_id = run.instance.definition_id
    tenant_id = run.instance.tenant_id
    tasks = run.tasks.values()
    externals = run.external_tasks.values()
    jobs = run.jobs.values()
    subscriptions = run.subscriptions.values()
    incidents = run.incidents.values()
    return {
        "new_tasks": cte["new_tasks"].rows(
            (t for t in tasks if t.is_new), instance_id=iid, tenant_id=tenant_id
        ),
        "changed_tasks": cte["changed_tasks"].rows(t for t in tasks if t.dirty and not t.is_new),
        "new_external_tasks": cte["new_external_tasks"].rows(
            (e for e in externals if e.is_new),
            instance_id=iid,
            tenant_id=tenant_id,
            definition_key=run.instance.definition_key,
        ),
        "changed_external_tasks": cte["changed_external_tasks"].rows(
            e for e in externals if e.dirty and not e.is_new
        ),
        "new_jobs": cte["new_jobs"].rows(
            (j for j in jobs if j.is_new and not j.deleted),
            instance_id=iid,
            definition_id=definition_id,
            tenant_id=tenant_id,
        ),
        "changed_jobs": cte["changed_jobs"].rows(
            j for j in jobs if j.dirty and not j.is_new and not j.deleted
        ),
        "deleted_jobs": [str(j.id) for j in jobs if j.deleted and not j.is_new],
        "new_subscriptions": cte["new_subscriptions"].rows(
            (s for s in subscriptions if s.is_new and not s.deleted),
            instance_id=iid,
            definition_id=definition_id,
        ),
        "deleted_subscriptions": [str(s.id) for s in subscriptions if s.deleted and not s.is_new],
        "new_incidents": cte["new_incidents"].rows(
            (i for i in incidents if i.is_new),
            instance_id=iid,
            definition_id=definition_id,
            tenant_id=tenant_id,
        ),
        "changed_incidents": cte["changed_incidents"].rows(
            i for i in incidents if i.dirty and not i.is_new
        ),
    }
