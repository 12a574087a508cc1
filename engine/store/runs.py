"""Lock and load the instances a command works on; claim a ready token.

An instance loads in one round trip however many tokens and open tasks it has: its row is locked,
then one statement returns everything else as JSON. `engine/store/persist.py` writes it back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from engine.errors import InvariantViolation, InvariantViolationKind, NotFound
from engine.runtime import (
    ExternalTaskRow,
    IncidentRow,
    InstanceRow,
    InstanceRun,
    JobRow,
    Join,
    Subscription,
    Token,
    UserTaskRow,
)
from engine.states import InstanceState, TokenState
from engine.variables import from_row

LIVE_STATES = [s.value for s in TokenState if not s.is_final]

INSTANCE_FIELDS = (
    "id",
    "definition_id",
    "definition_key",
    "business_key",
    "state",
    "version",
    "started_at",
    "ended_at",
)
_INSTANCE_COLUMNS = ", ".join(INSTANCE_FIELDS)
_TOKEN_FIELDS = (
    "id",
    "instance_id",
    "node_id",
    "state",
    "mode",
    "scope_id",
    "parent_id",
    "parallel_group",
    "merged_into",
    "visit_id",
    "version",
    "created_at",
    "updated_at",
)


def _instance(row: tuple[Any, ...]) -> InstanceRow:
    return InstanceRow(
        id=row[0],
        definition_id=row[1],
        definition_key=row[2],
        business_key=row[3],
        state=InstanceState(row[4]),
        version=row[5],
        started_at=row[6],
        ended_at=row[7],
    )


# Where the instance to load is: given by id, or as the owner of an external or a user task.
BY_ID = "%(key)s::uuid"
BY_EXTERNAL_TASK = "(SELECT instance_id FROM external_task WHERE id = %(key)s)"
BY_USER_TASK = "(SELECT instance_id FROM user_task WHERE id = %(key)s)"

_LOCK = "SELECT {columns} FROM process_instance WHERE id = {where} FOR UPDATE"


def load_run(
    conn: psycopg.Connection[Any],
    instance_id: UUID,
    now: datetime,
    *,
    extra_token_ids: list[UUID] | None = None,
    locate: str = BY_ID,
    lock: bool = True,
) -> InstanceRun:
    """Load an instance with its live tokens, joins, variables and open work, its row locked.

    Two statements in the command's pipeline, one round trip: the lock first, then everything
    else in one statement. The load must come after the lock has been granted, in a statement
    of its own: in READ COMMITTED a statement sees what committed before it began, so a load in
    the locking statement would miss the writes of the transaction it waited for.

    `instance_id` is the key `locate` looks up (a task's id for BY_EXTERNAL_TASK, BY_USER_TASK).
    `extra_token_ids` also loads those tokens when they are final, so a command can report
    precisely that it was asked to move a finished token.

    Without `lock` (an optimistic command, see engine/executor.py) the instance and everything
    else load in one statement, which sees one committed state of the instance."""
    key = {"key": instance_id, "live": LIVE_STATES, "extra": extra_token_ids or []}
    if not lock:
        found = conn.execute(_LOAD_UNLOCKED.format(where=locate), key, prepare=True).fetchone()
        if found is None:
            raise NotFound(
                f"process instance {instance_id} does not exist", instance_id=str(instance_id)
            )
        return run_of(found, now)
    instance_cur = conn.execute(
        _LOCK.format(columns=_INSTANCE_COLUMNS, where=locate), key, prepare=True
    )
    rows_cur = conn.execute(_LOAD_ONE.format(where=locate), key, prepare=True)
    row = instance_cur.fetchone()
    if row is None:
        raise NotFound(
            f"process instance {instance_id} does not exist", instance_id=str(instance_id)
        )
    loaded = rows_cur.fetchone()
    assert loaded is not None
    return _run(row, loaded, now)


def run_of(row: tuple[Any, ...], now: datetime) -> InstanceRun:
    """The run of a row that holds the instance's columns (INSTANCE_FIELDS) followed by
    `loaded_columns`."""
    width = len(INSTANCE_FIELDS)
    return _run(row[:width], row[width:], now)


def load_runs(
    conn: psycopg.Connection[Any], instance_ids: list[UUID], now: datetime
) -> dict[UUID, InstanceRun]:
    """`load_run` for several instances at once, locked in id order (so two such loads cannot
    deadlock); instances that do not exist are left out."""
    key = {"keys": sorted(instance_ids), "live": LIVE_STATES, "extra": []}
    instance_cur = conn.execute(_LOCK_MANY, key, prepare=True)
    rows_cur = conn.execute(_LOAD_MANY, key, prepare=True)
    instances = {row[0]: row for row in instance_cur.fetchall()}
    return {
        loaded[0]: _run(instances[loaded[0]], loaded, now)
        for loaded in rows_cur.fetchall()
        if loaded[0] in instances
    }


def _run(instance: tuple[Any, ...], loaded: tuple[Any, ...], now: datetime) -> InstanceRun:
    run = InstanceRun(instance=_instance(instance), now=now)
    _, tokens, joins, variables, *work = loaded
    for values in tokens or ():
        token = _token(values)
        run.tokens[token.id] = token
    for gateway_id, scope_key, arrivals, version in joins or ():
        run.put_join(Join(gateway_id, scope_key, list(arrivals), version))
    for name, type_name, value in variables or ():
        run.variables[name] = from_row(type_name, value)
    for (kind, (_, columns, _)), found in zip(_WORK.items(), work, strict=True):
        items = (kind(**_from_json(columns, values)) for values in found or ())
        getattr(run, _WORK_FIELDS[kind]).update({item.id: item for item in items})
    for task in run.external_tasks.values():
        task.loaded_worker_id = task.worker_id
    return run


def _uuid(value: str | None) -> UUID | None:
    return None if value is None else UUID(value)


def _timestamp(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


# Columns that JSON carries as strings but the rows hold as UUIDs and timestamps.
_FROM_JSON = {
    **dict.fromkeys(
        (
            "id",
            "token_id",
            "job_id",
            "external_task_id",
            "scope_id",
            "parent_id",
            "merged_into",
            "visit_id",
            "instance_id",
        ),
        _uuid,
    ),
    **dict.fromkeys(
        ("created_at", "updated_at", "due_at", "lock_expires_at", "ended_at", "resolved_at"),
        _timestamp,
    ),
}


def _from_json(columns: tuple[str, ...], values: list[Any]) -> dict[str, Any]:
    return {
        column: _FROM_JSON[column](value) if column in _FROM_JSON else value
        for column, value in zip(columns, values, strict=True)
    }


def _token(row: tuple[Any, ...] | list[Any]) -> Token:
    values = _from_json(_TOKEN_FIELDS, list(row))
    values["state"] = TokenState(values["state"])
    return Token(**values)


# The open work an instance command may have to retire or act on: (table, columns, condition).
_WORK: dict[type[Any], tuple[str, tuple[str, ...], str]] = {
    UserTaskRow: (
        "user_task",
        (
            "id",
            "token_id",
            "node_id",
            "name",
            "state",
            "created_at",
            "assignee",
            "candidate_users",
            "candidate_groups",
            "due_at",
            "priority",
        ),
        "AND state = 'Open'",
    ),
    ExternalTaskRow: (
        "external_task",
        (
            "id",
            "token_id",
            "node_id",
            "topic",
            "state",
            "priority",
            "created_at",
            "worker_id",
            "lock_expires_at",
            "retries",
            "error_message",
            "error_details",
        ),
        "AND state = 'Open'",
    ),
    JobRow: (
        "job",
        (
            "id",
            "kind",
            "token_id",
            "node_id",
            "due_at",
            "retries",
            "created_at",
            "timer_text",
            "repetitions_left",
            "lock_owner",
            "lock_expires_at",
            "error_message",
        ),
        "",
    ),
    Subscription: (
        "event_subscription",
        ("id", "kind", "name", "token_id", "node_id", "created_at"),
        "",
    ),
    IncidentRow: (
        "incident",
        (
            "id",
            "type",
            "token_id",
            "node_id",
            "message",
            "state",
            "created_at",
            "job_id",
            "external_task_id",
            "details",
        ),
        "AND state = 'Open'",
    ),
}
_WORK_FIELDS = {
    UserTaskRow: "tasks",
    ExternalTaskRow: "external_tasks",
    JobRow: "jobs",
    Subscription: "subscriptions",
    IncidentRow: "incidents",
}


# Everything of an instance but its row, in the order `_run` reads it: (table, columns,
# condition). The statements pass %(live)s (LIVE_STATES) and %(extra)s (token ids to load even
# when final).
_LOADED_PARTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("token", _TOKEN_FIELDS, "AND (state = ANY(%(live)s) OR id = ANY(%(extra)s))"),
    ("join_state", ("gateway_id", "scope_key", "arrivals", "version"), ""),
    ("variable", ("name", "type", "value"), "AND scope_key = ''"),
    *_WORK.values(),
)


def _json_list(columns: tuple[str, ...]) -> str:
    """The aggregate of the rows' `columns` as one JSON list of lists, as `_run` reads it."""
    return f"json_agg(json_build_array({', '.join(columns)}))"


def _rows(alias: str, table: str, columns: tuple[str, ...], condition: str) -> str:
    return f"(SELECT {_json_list(columns)} FROM {table} WHERE instance_id = {alias}.id {condition})"


def loaded_columns(alias: str) -> str:
    """The columns that load everything of the instance `alias` names but its row: its id, then
    one JSON list each of live tokens, joins, variables and open work."""
    return ", ".join([f"{alias}.id", *(_rows(alias, *part) for part in _LOADED_PARTS)])


def _load_many() -> str:
    """`loaded_columns` for the instances %(keys)s: one scan per table for all of them, grouped
    by instance, instead of one look-up per table and instance (a batch of timers loads hundreds
    of instances at once)."""
    lists, joins = [], []
    for n, (table, columns, condition) in enumerate(_LOADED_PARTS):
        lists.append(f"w{n}.rows")
        joins.append(
            f"LEFT JOIN (SELECT instance_id, {_json_list(columns)} AS rows FROM {table} "
            f"WHERE instance_id = ANY(%(keys)s) {condition} "
            f"GROUP BY instance_id) AS w{n} ON w{n}.instance_id = i.id"
        )
    return f"SELECT i.id, {', '.join(lists)} FROM unnest(%(keys)s::uuid[]) AS i(id) " + " ".join(
        joins
    )


def instance_columns(alias: str) -> str:
    return ", ".join(f"{alias}.{column}" for column in INSTANCE_FIELDS)


_LOADED = loaded_columns("i")
_LOAD_ONE = f"SELECT {_LOADED} FROM (SELECT {{where}} AS id) AS i"
_LOAD_UNLOCKED = (
    f"SELECT {instance_columns('i')}, {_LOADED} FROM process_instance i WHERE i.id = {{where}}"
)
_LOAD_MANY = _load_many()
_LOCK_MANY = (
    f"SELECT {_INSTANCE_COLUMNS} FROM process_instance WHERE id = ANY(%(keys)s) "
    "ORDER BY id FOR UPDATE"
)


def claim_token(conn: psycopg.Connection[Any], token: Token, now: datetime) -> None:
    """The compare-and-swap claim: Ready -> Executing only if nobody moved the token since it
    was read. Exactly one of any number of racing claimers wins."""
    cur = conn.execute(
        "UPDATE token SET state = 'Executing', version = version + 1, updated_at = %s "
        "WHERE id = %s AND state = 'Ready' AND version = %s RETURNING id",
        (now, token.id, token.version),
    )
    if cur.fetchone() is None:
        raise InvariantViolation(
            InvariantViolationKind.TOKEN_CLAIM_CONFLICT,
            f"token {token.id} was claimed by another command",
            token_id=str(token.id),
        )
    token.record_claim(now)


def instance_of_token(conn: psycopg.Connection[Any], token_id: UUID) -> UUID | None:
    row = conn.execute("SELECT instance_id FROM token WHERE id = %s", (token_id,)).fetchone()
    return row[0] if row else None
