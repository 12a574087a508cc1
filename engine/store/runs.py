"""Load one instance for a command, and write back what the command changed.

Writes are one statement per table (arrays through `unnest`), sent in one pipeline, so a command
costs a fixed handful of round trips however many tokens it moved.
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

_INSTANCE_COLUMNS = (
    "id, definition_id, definition_key, business_key, state, version, started_at, ended_at"
)
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
    work_cursors = [
        (
            kind,
            conn.execute(
                f"SELECT {', '.join(columns)} FROM {table} WHERE instance_id = %s {condition}",
                (instance_id,),
            ),
        )
        for kind, (table, columns, condition) in _WORK.items()
    ]
    row = instance_cur.fetchone()
    if row is None:
        raise NotFound(
            f"process instance {instance_id} does not exist", instance_id=str(instance_id)
        )
    run = InstanceRun(instance=_instance(row), now=now)
    for token_row in token_cur.fetchall():
        token = _token(token_row)
        run.tokens[token.id] = token
    for gateway_id, scope_key, arrivals, version in join_cur.fetchall():
        run.joins[(gateway_id, scope_key)] = Join(gateway_id, scope_key, list(arrivals), version)
    for name, type_name, value in variable_cur.fetchall():
        run.variables[name] = from_row(type_name, value)
    for kind, cursor in work_cursors:
        table, columns, _ = _WORK[kind]
        items = (kind(**dict(zip(columns, values, strict=True))) for values in cursor)
        getattr(run, _WORK_FIELDS[kind]).update({item.id: item for item in items})
    return run


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


def instance_of_token(conn: psycopg.Connection[Any], token_id: UUID) -> UUID | None:
    row = conn.execute("SELECT instance_id FROM token WHERE id = %s", (token_id,)).fetchone()
    return row[0] if row else None
