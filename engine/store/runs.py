"""Lock and load the instances a command works on; claim a ready token.

An instance loads in one round trip however many tokens and open tasks it has: its row is locked,
then one statement returns everything else as JSON. `engine/store/persist.py` writes it back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
import sqlalchemy as sa

from engine.core.runtime import InstanceRow, InstanceRun, Join, Token
from engine.errors import InvariantViolation, InvariantViolationKind, NotFound
from engine.language.variables import from_row
from engine.states import IncidentState, InstanceState, TaskState, TokenState
from engine.store import columns

LIVE_STATES = [s.value for s in TokenState if not s.is_final]
# The states a load names, the parameters of every statement that loads instances: %(live)s
# tokens, %(open_task)s tasks and %(open_incident)s incidents.
LOAD_STATES: dict[str, Any] = {
    "live": LIVE_STATES,
    "open_task": TaskState.OPEN.value,
    "open_incident": IncidentState.OPEN.value,
}

# Where the instance to load is: given by id, or as the owner of an external or a user task.
BY_ID = "%(key)s::uuid"
BY_EXTERNAL_TASK = "(SELECT instance_id FROM external_task WHERE id = %(key)s)"
BY_USER_TASK = "(SELECT instance_id FROM user_task WHERE id = %(key)s)"

# The open work an instance command may have to retire or act on, loaded with the instance:
# (the run's map of it, table, condition). A row loads the columns its runtime row holds
# (`columns.HELD_BY`).
_WORK: tuple[tuple[str, str, str], ...] = (
    ("tasks", "user_task", "AND state = %(open_task)s"),
    ("external_tasks", "external_task", "AND state = %(open_task)s"),
    ("jobs", "job", ""),
    ("subscriptions", "event_subscription", ""),
    ("incidents", "incident", "AND state = %(open_incident)s"),
)


@dataclass(frozen=True)
class _Part:
    """One list the load returns besides the instance's row: the `columns` of the instance's
    rows of `table` that meet `condition`, each read into a dict by `read`."""

    table: str
    columns: tuple[str, ...]
    condition: str
    read: Callable[[list[Any]], dict[str, Any]]


def _part(
    tables: Mapping[str, sa.Table], table: str, condition: str, cls: type[Any] | None = None
) -> _Part:
    """The part of `table`'s rows; each loads the columns `cls` (by default the table's runtime
    row) holds."""
    found = columns.shared(tables[table], cls or columns.HELD_BY[table])
    return _Part(table, found, condition, columns.json_reader(tables[table], found))


class Loader:
    """The statements that load instances and how their rows become runs, derived from the
    tables: a column the table and the runtime row share loads without another edit.

    Everything of an instance but its row comes in the order `run` reads it: live tokens (and
    %(extra)s, token ids to load even when final), joins, variables of every scope, then the
    open work of `_WORK`; the states they name are the parameters LOAD_STATES."""

    def __init__(
        self, tables: Mapping[str, sa.Table] = columns.TABLES, token_class: type[Token] = Token
    ) -> None:
        self.instance_fields = columns.names(tables["process_instance"])
        self.token_class = token_class
        variable = tables["variable"]
        self.parts: tuple[_Part, ...] = (
            _part(
                tables, "token", "AND (state = ANY(%(live)s) OR id = ANY(%(extra)s))", token_class
            ),
            _part(tables, "join_state", ""),
            _Part(
                "variable",
                ("scope_key", "name", "type", "value"),
                "",
                columns.json_reader(variable, ("scope_key", "name", "type", "value")),
            ),
            *(_part(tables, table, condition) for _, table, condition in _WORK),
        )
        instance = ", ".join(self.instance_fields)
        loaded = self.loaded_columns("i")
        # The instance's family root is locked first (the instance alone when it is the
        # root): every command on a family of called instances queues on the root's row, so
        # two of them never hold each other's rows. The instance's own row comes last.
        self.lock = (
            f"SELECT {instance} FROM process_instance WHERE id = {{where}} OR id = "
            "(SELECT root_instance_id FROM process_instance WHERE id = {where}) "
            "ORDER BY id = {where} FOR UPDATE"
        )
        self.load_one = f"SELECT {loaded} FROM (SELECT {{where}} AS id) AS i"
        self.load_unlocked = (
            f"SELECT {self.instance_columns('i')}, {loaded} FROM process_instance i "
            "WHERE i.id = {where}"
        )
        self.load_many = self._load_many()
        # Roots first, in id order, then the other instances in id order (see `lock`).
        self.lock_many = (
            f"SELECT {instance} FROM process_instance WHERE id = ANY(%(keys)s) OR id IN "
            "(SELECT root_instance_id FROM process_instance WHERE id = ANY(%(keys)s)) "
            "ORDER BY id <> root_instance_id, id FOR UPDATE"
        )

    def instance_columns(self, alias: str) -> str:
        return ", ".join(f"{alias}.{column}" for column in self.instance_fields)

    def loaded_columns(self, alias: str) -> str:
        """The columns that load everything of the instance `alias` names but its row: its id,
        then one JSON list each of live tokens, joins, variables and open work."""
        return ", ".join(
            [
                f"{alias}.id",
                *(
                    f"(SELECT {_json_list(part.columns)} FROM {part.table} "
                    f"WHERE instance_id = {alias}.id {part.condition})"
                    for part in self.parts
                ),
            ]
        )

    def _load_many(self) -> str:
        """`loaded_columns` for the instances %(keys)s: one scan per table for all of them,
        grouped by instance, instead of one look-up per table and instance (a batch of timers
        loads hundreds of instances at once)."""
        lists, joins = [], []
        for n, part in enumerate(self.parts):
            lists.append(f"w{n}.rows")
            joins.append(
                f"LEFT JOIN (SELECT instance_id, {_json_list(part.columns)} AS rows "
                f"FROM {part.table} WHERE instance_id = ANY(%(keys)s) {part.condition} "
                f"GROUP BY instance_id) AS w{n} ON w{n}.instance_id = i.id"
            )
        return (
            f"SELECT i.id, {', '.join(lists)} FROM unnest(%(keys)s::uuid[]) AS i(id) "
            + " ".join(joins)
        )

    def run(self, instance: Sequence[Any], loaded: Sequence[Any], now: datetime) -> InstanceRun:
        """The run of the instance's row (`instance_fields`) and its `loaded_columns`."""
        values = dict(zip(self.instance_fields, instance, strict=True))
        values["state"] = InstanceState(values["state"])
        run = InstanceRun(instance=InstanceRow(**values), now=now)
        _, tokens, joins, variables, *work = loaded
        tokens_part, joins_part, variables_part, *work_parts = self.parts
        for found in tokens or ():
            row = tokens_part.read(found)
            row["state"] = TokenState(row["state"])
            token = self.token_class(**row)
            run.tokens[token.id] = token
        for found in joins or ():
            run.put_join(Join(**joins_part.read(found)))
        for found in variables or ():
            row = variables_part.read(found)
            value = from_row(row["type"], row["value"])
            if row["scope_key"]:
                run.locals.setdefault(UUID(row["scope_key"]), {})[row["name"]] = value
            else:
                run.variables[row["name"]] = value
        for (attribute, table, _), part, rows in zip(_WORK, work_parts, work, strict=True):
            cls = columns.HELD_BY[table]
            items = (cls(**part.read(found)) for found in rows or ())
            getattr(run, attribute).update({item.id: item for item in items})
        for task in run.external_tasks.values():
            task.loaded_worker_id = task.worker_id
        return run

    def run_of(self, row: Sequence[Any], now: datetime) -> InstanceRun:
        """The run of a row that holds the instance's columns (`instance_fields`) followed by
        `loaded_columns`."""
        width = len(self.instance_fields)
        return self.run(row[:width], row[width:], now)


def _json_list(names: tuple[str, ...]) -> str:
    """The aggregate of the rows' `names` as one JSON list of lists, as `Loader.run` reads it."""
    return f"json_agg(json_build_array({', '.join(names)}))"


LOADER = Loader()
INSTANCE_FIELDS = LOADER.instance_fields
instance_columns = LOADER.instance_columns
loaded_columns = LOADER.loaded_columns
run_of = LOADER.run_of
_LOAD_ONE = LOADER.load_one
_LOAD_UNLOCKED = LOADER.load_unlocked
_LOAD_MANY = LOADER.load_many
_LOCK_MANY = LOADER.lock_many


def load_run(
    conn: psycopg.Connection[Any],
    instance_id: UUID,
    now: datetime,
    *,
    extra_token_ids: list[UUID] | None = None,
    locate: str = BY_ID,
    lock: bool = True,
    loader: Loader = LOADER,
) -> InstanceRun:
    """Load an instance with its live tokens, joins, variables and open work, its row locked.

    Two statements in the command's pipeline, one round trip: the lock first, then everything
    else in one statement. The load must come after the lock has been granted, in a statement
    of its own: in READ COMMITTED a statement sees what committed before it began, so a load in
    the locking statement would miss the writes of the transaction it waited for.

    `instance_id` is the key `locate` looks up (a task's id for BY_EXTERNAL_TASK, BY_USER_TASK).
    `extra_token_ids` also loads those tokens when they are final, so a command can report
    precisely that it was asked to move a finished token.

    Without `lock` (an optimistic command, see engine/core/executor.py) the instance and everything
    else load in one statement, which sees one committed state of the instance."""
    key = {"key": instance_id, **LOAD_STATES, "extra": extra_token_ids or []}
    if not lock:
        found = conn.execute(
            loader.load_unlocked.format(where=locate), key, prepare=True
        ).fetchone()
        if found is None:
            raise NotFound(
                f"process instance {instance_id} does not exist", instance_id=str(instance_id)
            )
        return loader.run_of(found, now)
    instance_cur = conn.execute(loader.lock.format(where=locate), key, prepare=True)
    rows_cur = conn.execute(loader.load_one.format(where=locate), key, prepare=True)
    locked = instance_cur.fetchall()
    row = locked[-1] if locked else None  # after its root's row, if it has another root
    if row is None:
        raise NotFound(
            f"process instance {instance_id} does not exist", instance_id=str(instance_id)
        )
    loaded = rows_cur.fetchone()
    assert loaded is not None
    return loader.run(row, loaded, now)


def load_runs(
    conn: psycopg.Connection[Any], instance_ids: list[UUID], now: datetime
) -> dict[UUID, InstanceRun]:
    """`load_run` for several instances at once, locked in id order (so two such loads cannot
    deadlock); instances that do not exist are left out."""
    key = {"keys": sorted(instance_ids), **LOAD_STATES, "extra": []}
    instance_cur = conn.execute(_LOCK_MANY, key, prepare=True)
    rows_cur = conn.execute(_LOAD_MANY, key, prepare=True)
    instances = {row[0]: row for row in instance_cur.fetchall()}
    return {
        loaded[0]: LOADER.run(instances[loaded[0]], loaded, now)
        for loaded in rows_cur.fetchall()
        if loaded[0] in instances
    }


def claim_token(conn: psycopg.Connection[Any], token: Token, now: datetime) -> None:
    """The compare-and-swap claim: Ready -> Executing only if nobody moved the token since it
    was read. Exactly one of any number of racing claimers wins."""
    cur = conn.execute(
        "UPDATE token SET state = %s, version = version + 1, updated_at = %s "
        "WHERE id = %s AND state = %s AND version = %s RETURNING id",
        (TokenState.EXECUTING, now, token.id, TokenState.READY, token.version),
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


def called_instance(
    conn: psycopg.Connection[Any], instance_id: UUID, token_id: UUID
) -> UUID | None:
    """The instance the token `token_id` of `instance_id` called that has not ended, if any."""
    row = conn.execute(
        "SELECT id FROM process_instance WHERE super_instance_id = %s "
        "AND super_token_id = %s AND state <> ALL(%s)",
        (instance_id, token_id, [state.value for state in InstanceState if state.is_final]),
    ).fetchone()
    return row[0] if row else None
