"""Load one instance for a command, and write back what the command changed.

Writes are one statement per table (arrays through `unnest`), sent in one pipeline, so a command
costs a fixed handful of round trips however many tokens it moved.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from engine.errors import InvariantViolation, InvariantViolationKind, NotFound
from engine.runtime import InstanceRow, InstanceRun, Join, Token, UserTaskRow
from engine.states import InstanceState, TokenState
from engine.variables import from_row

LIVE_STATES = [s.value for s in TokenState if not s.is_final]

_INSTANCE_COLUMNS = "id, definition_id, definition_key, business_key, state, version, started_at, ended_at"
_TOKEN_COLUMNS = (
    "id, instance_id, node_id, state, mode, scope_id, parent_id, parallel_group, merged_into, "
    "visit_id, version, created_at, updated_at"
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


def _token(row: tuple[Any, ...]) -> Token:
    return Token(
        id=row[0],
        instance_id=row[1],
        node_id=row[2],
        state=TokenState(row[3]),
        mode=row[4],
        scope_id=row[5],
        parent_id=row[6],
        parallel_group=row[7],
        merged_into=row[8],
        visit_id=row[9],
        version=row[10],
        created_at=row[11],
        updated_at=row[12],
    )


def load_run(
    conn: psycopg.Connection[Any],
    instance_id: UUID,
    now: datetime,
    *,
    extra_token_ids: list[UUID] | None = None,
) -> InstanceRun:
    """Lock the instance row and load its live tokens, joins and variables (one round trip).

    `extra_token_ids` also loads those tokens when they are final, so a command can report
    precisely that it was asked to move a finished token."""
    # Run inside the command's pipeline: the four queries travel together; the first fetch syncs.
    instance_cur = conn.execute(
        f"SELECT {_INSTANCE_COLUMNS} FROM process_instance WHERE id = %s FOR UPDATE",
        (instance_id,),
    )
    token_cur = conn.execute(
        f"SELECT {_TOKEN_COLUMNS} FROM token WHERE instance_id = %s "
        "AND (state = ANY(%s) OR id = ANY(%s))",
        (instance_id, LIVE_STATES, extra_token_ids or []),
    )
    join_cur = conn.execute(
        "SELECT gateway_id, scope_key, arrivals, version FROM join_state WHERE instance_id = %s",
        (instance_id,),
    )
    variable_cur = conn.execute(
        "SELECT name, type, value FROM variable WHERE instance_id = %s AND scope_key = ''",
        (instance_id,),
    )
    row = instance_cur.fetchone()
    if row is None:
        raise NotFound(f"process instance {instance_id} does not exist", instance_id=str(instance_id))
    run = InstanceRun(instance=_instance(row), now=now)
    for token_row in token_cur.fetchall():
        token = _token(token_row)
        run.tokens[token.id] = token
    for gateway_id, scope_key, arrivals, version in join_cur.fetchall():
        run.joins[(gateway_id, scope_key)] = Join(gateway_id, scope_key, list(arrivals), version)
    for name, type_name, value in variable_cur.fetchall():
        run.variables[name] = from_row(type_name, value)
    return run


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
    token.state = TokenState.EXECUTING
    token.version += 1


Checks = list[tuple[psycopg.Cursor[Any], int, str]]


def save_run(conn: psycopg.Connection[Any], run: InstanceRun) -> Checks:
    """Queue every change of the command: instance, tokens, joins, variables, tasks, history and
    outbox. Returns the compare-and-swap updates for `verify` once the pipeline has synced."""
    checks: Checks = []
    _save_instance(conn, run, checks)
    _save_tokens(conn, run, checks)
    _save_joins(conn, run, checks)
    _save_variables(conn, run)
    _save_tasks(conn, run)
    _save_history_and_outbox(conn, run)
    return checks


def verify(checks: Checks) -> None:
    """Raise StaleWrite when a compare-and-swap update matched fewer rows than it should."""
    for cursor, expected, what in checks:
        if cursor.rowcount != expected:
            raise InvariantViolation(
                InvariantViolationKind.STALE_WRITE,
                f"{what} changed underneath the command ({cursor.rowcount} of {expected} rows matched)",
            )


def _save_instance(
    conn: psycopg.Connection[Any], run: InstanceRun, checks: Checks
) -> None:
    inst = run.instance
    if inst.is_new:
        conn.execute(
            f"INSERT INTO process_instance ({_INSTANCE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                inst.id,
                inst.definition_id,
                inst.definition_key,
                inst.business_key,
                inst.state.value,
                inst.version,
                inst.started_at,
                inst.ended_at,
            ),
        )
    elif inst.dirty:
        cur = conn.execute(
            "UPDATE process_instance SET state = %s, ended_at = %s, version = version + 1 "
            "WHERE id = %s AND version = %s",
            (inst.state.value, inst.ended_at, inst.id, inst.version),
        )
        checks.append((cur, 1, f"instance {inst.id}"))


def _save_tokens(
    conn: psycopg.Connection[Any], run: InstanceRun, checks: Checks
) -> None:
    new = [t for t in run.tokens.values() if t.is_new]
    changed = [t for t in run.tokens.values() if t.dirty and not t.is_new]
    if new:
        conn.execute(
            f"INSERT INTO token ({_TOKEN_COLUMNS}) SELECT * FROM unnest("
            "%s::uuid[], %s::uuid[], %s::text[], %s::text[], %s::text[], %s::uuid[], %s::uuid[], "
            "%s::text[], %s::uuid[], %s::uuid[], %s::int[], %s::timestamptz[], %s::timestamptz[])",
            _columns(
                new,
                lambda t: (
                    t.id,
                    t.instance_id,
                    t.node_id,
                    t.state.value,
                    t.mode,
                    t.scope_id,
                    t.parent_id,
                    t.parallel_group,
                    t.merged_into,
                    t.visit_id,
                    0,
                    t.created_at,
                    t.updated_at,
                ),
                13,
            ),
        )
    if changed:
        cur = conn.execute(
            "UPDATE token SET node_id = u.node_id, state = u.state, parallel_group = u.parallel_group, "
            "merged_into = u.merged_into, visit_id = u.visit_id, updated_at = u.updated_at, "
            "version = token.version + 1 "
            "FROM unnest(%s::uuid[], %s::int[], %s::text[], %s::text[], %s::text[], %s::uuid[], "
            "%s::uuid[], %s::timestamptz[]) "
            "AS u(id, version, node_id, state, parallel_group, merged_into, visit_id, updated_at) "
            "WHERE token.id = u.id AND token.version = u.version",
            _columns(
                changed,
                lambda t: (
                    t.id,
                    t.version,
                    t.node_id,
                    t.state.value,
                    t.parallel_group,
                    t.merged_into,
                    t.visit_id,
                    t.updated_at,
                ),
                8,
            ),
        )
        checks.append((cur, len(changed), "a token"))


def _save_joins(
    conn: psycopg.Connection[Any], run: InstanceRun, checks: Checks
) -> None:
    iid = run.instance.id
    for gateway_id, scope_key in run.deleted_joins:
        conn.execute(
            "DELETE FROM join_state WHERE instance_id = %s AND gateway_id = %s AND scope_key = %s",
            (iid, gateway_id, scope_key),
        )
    for join in run.joins.values():
        if join.version is None:
            conn.execute(
                "INSERT INTO join_state (instance_id, gateway_id, scope_key, arrivals, version) "
                "VALUES (%s, %s, %s, %s, 0)",
                (iid, join.gateway_id, join.scope_key, Jsonb(join.arrivals)),
            )
        else:
            cur = conn.execute(
                "UPDATE join_state SET arrivals = %s, version = version + 1 "
                "WHERE instance_id = %s AND gateway_id = %s AND scope_key = %s AND version = %s",
                (Jsonb(join.arrivals), iid, join.gateway_id, join.scope_key, join.version),
            )
            checks.append((cur, 1, f"join {join.gateway_id}"))


def _save_variables(conn: psycopg.Connection[Any], run: InstanceRun) -> None:
    if not run.changed_variables:
        return
    names = sorted(run.changed_variables)
    conn.execute(
        "INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at) "
        "SELECT %s, '', n, t, v, %s FROM unnest(%s::text[], %s::text[], %s::jsonb[]) AS u(n, t, v) "
        "ON CONFLICT (instance_id, scope_key, name) "
        "DO UPDATE SET type = excluded.type, value = excluded.value, updated_at = excluded.updated_at",
        (
            run.instance.id,
            run.now,
            names,
            [run.variables[n].type for n in names],
            [Jsonb(run.variables[n].to_json()) for n in names],
        ),
    )


def _save_tasks(conn: psycopg.Connection[Any], run: InstanceRun) -> None:
    iid = run.instance.id
    new = [t for t in run.tasks if t.is_new]
    if new:
        conn.execute(
            "INSERT INTO user_task (id, instance_id, token_id, node_id, name, state, created_at) "
            "SELECT u.id, %s, u.token_id, u.node_id, u.name, u.state, u.created_at FROM unnest("
            "%s::uuid[], %s::uuid[], %s::text[], %s::text[], %s::text[], %s::timestamptz[]) "
            "AS u(id, token_id, node_id, name, state, created_at)",
            (iid, *_columns(new, lambda t: (t.id, t.token_id, t.node_id, t.name, t.state, t.created_at), 6)),
        )
    for task in run.tasks:
        if task.dirty and not task.is_new:
            conn.execute(
                "UPDATE user_task SET state = %s, ended_at = %s WHERE id = %s",
                (task.state, task.ended_at, task.id),
            )
    if run.retire_work_of:
        conn.execute(
            "UPDATE user_task SET state = 'Retired', ended_at = %s "
            "WHERE instance_id = %s AND token_id = ANY(%s) AND state = 'Open'",
            (run.now, iid, list(run.retire_work_of)),
        )


def _save_history_and_outbox(conn: psycopg.Connection[Any], run: InstanceRun) -> None:
    iid = run.instance.id
    new = [v for v in run.visits if v.is_new]
    ended = [v for v in run.visits if not v.is_new]
    if new:
        conn.execute(
            "INSERT INTO history (id, instance_id, token_id, node_id, node_name, node_type, state, "
            "started_at, ended_at) SELECT u.id, %s, u.token_id, u.node_id, u.node_name, u.node_type, "
            "u.state, u.started_at, u.ended_at FROM unnest(%s::uuid[], %s::uuid[], %s::text[], "
            "%s::text[], %s::text[], %s::text[], %s::timestamptz[], %s::timestamptz[]) "
            "AS u(id, token_id, node_id, node_name, node_type, state, started_at, ended_at)",
            (
                iid,
                *_columns(
                    new,
                    lambda v: (
                        v.id,
                        v.token_id,
                        v.node_id,
                        v.node_name,
                        v.node_type,
                        v.state,
                        v.started_at,
                        v.ended_at,
                    ),
                    8,
                ),
            ),
        )
    if ended:
        conn.execute(
            "UPDATE history SET state = u.state, ended_at = u.ended_at "
            "FROM unnest(%s::uuid[], %s::text[], %s::timestamptz[]) AS u(id, state, ended_at) "
            "WHERE history.id = u.id",
            _columns(ended, lambda v: (v.id, v.state, v.ended_at), 3),
        )
    # One outbox row per history row written, then the instance-level and token events.
    rows: list[tuple[str, UUID | None, str | None, UUID | None]] = [
        (f"visit.{v.state.lower()}", v.token_id, v.node_id, v.id) for v in run.visits
    ]
    rows.extend((e.event, e.token_id, e.node_id, e.history_id) for e in run.events)
    if run.changed_variables:
        rows.append(("variables.updated", None, None, None))
    if rows:
        conn.execute(
            "INSERT INTO outbox (event, instance_id, token_id, node_id, history_id) "
            "SELECT u.event, %s, u.token_id, u.node_id, u.history_id "
            "FROM unnest(%s::text[], %s::uuid[], %s::text[], %s::uuid[]) "
            "AS u(event, token_id, node_id, history_id)",
            (iid, *_columns(rows, lambda r: r, 4)),
        )


def _columns(items: list[Any], row: Any, width: int) -> tuple[list[Any], ...]:
    """Turn a list of rows into one list per column, for `unnest`."""
    columns: tuple[list[Any], ...] = tuple([] for _ in range(width))
    for item in items:
        for column, value in zip(columns, row(item), strict=True):
            column.append(value)
    return columns


def instance_of_token(conn: psycopg.Connection[Any], token_id: UUID) -> UUID | None:
    row = conn.execute("SELECT instance_id FROM token WHERE id = %s", (token_id,)).fetchone()
    return row[0] if row else None
