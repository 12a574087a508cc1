"""Replay equals live.

`rebuilt` reads only `history` and the outbox (through `outbox_events`) and says where each token
ended (the node of its last visit, the visits ordered by their first outbox event) and what state
the instance is in (its last instance event); `live` reads the same from the live rows.

`replay` drives the same model by the same decisions sequentially, on one thread and one
connection at a time, in a database of its own, and `final_state` is what both runs are compared
by: the instance states, the variable values and where the tokens ended (ids differ between
runs, so tokens are compared as a multiset of (node, state))."""

from __future__ import annotations

from collections import Counter
from typing import Any
from uuid import UUID

import psycopg

from engine.api import Engine
from engine.errors import InterlockError
from engine.semantics.modification import CancelToken, StartBefore
from tests.models.driver import WORKER, Decision
from tests.models.invariants import outbox_events
from tests.models.strategies import ERROR_CODE, TOPIC, Spec

Conn = psycopg.Connection[tuple[Any, ...]]

# The instance events and the state each leaves the instance in (pinned).
INSTANCE_EVENTS = {
    "instance.started": "Active",
    "instance.completed": "Completed",
    "instance.terminated": "Terminated",
    "instance.suspended": "Suspended",
    "instance.resumed": "Active",
}


def rebuilt(conn: Conn, instance_id: UUID) -> tuple[str | None, dict[UUID, str]]:
    """The instance's state and each token's last node, from history and the outbox alone."""
    events = outbox_events(conn, instance_id)
    state = None
    first_seq: dict[UUID, int] = {}
    for seq, event, _, _, history_id in events:
        if event in INSTANCE_EVENTS:
            state = INSTANCE_EVENTS[event]
        if history_id is not None:
            first_seq.setdefault(history_id, seq)
    last: dict[UUID, tuple[int, str]] = {}
    for visit, token, node in conn.execute(
        "SELECT id, token_id, node_id FROM history WHERE instance_id = %s", (instance_id,)
    ):
        order = first_seq.get(visit, -1)
        if token not in last or order > last[token][0]:
            last[token] = (order, node)
    return state, {token: node for token, (_, node) in last.items()}


def live(conn: Conn, instance_id: UUID) -> tuple[str, dict[UUID, str]]:
    statement = "SELECT state FROM process_instance WHERE id = %s"
    row = conn.execute(statement, (instance_id,)).fetchone()
    assert row is not None
    tokens = conn.execute(
        "SELECT id, node_id FROM token WHERE instance_id = %s AND visit_id IS NOT NULL",
        (instance_id,),
    ).fetchall()
    return str(row[0]), {token: node for token, node in tokens}


def replay_mismatches(url: str, instances: list[UUID]) -> list[str]:
    """Where history and the outbox disagree with the live rows."""
    problems = []
    with psycopg.connect(url) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        for instance in instances:
            state, nodes = rebuilt(conn, instance)
            live_state, live_nodes = live(conn, instance)
            if state != live_state:
                problems.append(f"instance {instance}: history says {state}, live {live_state}")
            for token, node in live_nodes.items():
                if nodes.get(token) != node:
                    problems.append(
                        f"token {token}: history ends it at {nodes.get(token)}, live at {node}"
                    )
        conn.rollback()
    return problems


def final_state(url: str, instances: list[UUID]) -> list[tuple[str, dict[str, Any], Counter[Any]]]:
    """Each instance's state, variables and tokens' (node, state), in start order."""
    found = []
    with psycopg.connect(url) as conn:
        for instance in instances:
            row = conn.execute(
                "SELECT state FROM process_instance WHERE id = %s", (instance,)
            ).fetchone()
            assert row is not None
            state = row[0]
            variables: dict[str, Any] = dict(
                conn.execute(
                    "SELECT name, value FROM variable WHERE instance_id = %s AND scope_key = ''",
                    (instance,),
                ).fetchall()
            )
            tokens = Counter(
                conn.execute(
                    "SELECT node_id, state FROM token WHERE instance_id = %s", (instance,)
                ).fetchall()
            )
            found.append((str(state), variables, tokens))
    return found


def _first(engine: Engine, statement: str, *params: Any) -> tuple[Any, ...] | None:
    with engine.connection() as conn:
        return conn.execute(statement + " ORDER BY created_at, id LIMIT 1", params).fetchone()


def replay(
    engine: Engine, spec: Spec, decisions: list[Decision], refused: list[str] | None = None
) -> list[UUID]:
    """Apply `decisions` in order, one at a time; the instances started, in start order. A
    decision whose target is gone is skipped, as the live run's lost races were."""
    engine.deploy(spec.model)
    instances: list[UUID] = []
    for decision in decisions:
        if decision.action == "start":
            handle = engine.start_latest(spec.key, {"pick": decision.value, "flaky": False})
            instances.append(handle.id)
            continue
        instance = instances[decision.instance]
        try:
            _apply(engine, instance, decision)
        except InterlockError as error:
            if refused is not None:
                refused.append(f"{decision}: {error}")
    return instances


def _apply(engine: Engine, instance: UUID, decision: Decision) -> None:
    action, node = decision.action, decision.node
    if action == "complete_task":
        row = _first(
            engine,
            "SELECT id FROM user_task WHERE instance_id = %s AND node_id = %s AND state = 'Open'",
            instance,
            node,
        )
        if row is not None:
            engine.complete_task(row[0])
    elif action in ("complete_external", "fail_external", "bpmn_error"):
        locked = engine.fetch_and_lock(WORKER, {TOPIC: 600_000}, max_tasks=100)
        mine = [t for t in locked if t["instance_id"] == str(instance) and t["node_id"] == node]
        for other in locked:
            if other is not (mine[0] if mine else None):
                engine.unlock_external_task(other["id"])
        if not mine:
            return
        task = mine[0]["id"]
        if action == "complete_external":
            engine.complete_external_task(task, WORKER)
        elif action == "fail_external":
            engine.fail_external_task(task, WORKER, "down", retries=0)
        else:
            engine.external_task_bpmn_error(task, WORKER, ERROR_CODE)
    elif action == "run_job":
        row = _first(
            engine,
            "SELECT id FROM job WHERE instance_id = %s AND node_id = %s AND retries > 0",
            instance,
            node,
        )
        if row is not None:
            engine.run_job(row[0])
    elif action in ("message", "signal"):
        row = _first(
            engine,
            "SELECT name FROM event_subscription WHERE instance_id = %s AND node_id = %s "
            "AND kind = %s",
            instance,
            node,
            action,
        )
        if row is None:
            return
        if action == "message":
            engine.correlate_message(row[0], instance_id=instance, all=bool(decision.value))
        else:
            engine.signal(row[0])
    elif action == "set_variables":
        engine.instance(instance).set_variables(decision.value)
    elif action == "retry_incident":
        row = _first(
            engine,
            "SELECT id FROM incident WHERE instance_id = %s AND node_id = %s AND state = 'Open'",
            instance,
            node,
        )
        if row is not None:
            engine.instance(instance).set_variables({"flaky": False})
            engine.retry_incident(row[0])
    elif action == "cancel_token":
        row = _first(
            engine,
            "SELECT id FROM token WHERE instance_id = %s AND node_id = %s AND state = 'Waiting'",
            instance,
            node,
        )
        if row is not None:
            engine.modify(instance, CancelToken(row[0]))
    elif action == "start_before":
        engine.modify(instance, StartBefore(node_id=str(node)))
    elif action == "cancel":
        engine.instance(instance).cancel()
    else:
        raise AssertionError(f"unknown decision {decision}")
