"""Replay equals live.

`rebuilt` reads only `history` and the outbox (through `outbox_events`) and says where each token
ended (the node of its last visit, the visits ordered by their first outbox event) and what state
the instance is in (its last instance event); `live` reads the same from the live rows.

`commit_order` puts the decisions of an overlapping run in an order their commits had: every
command on an instance locks the instance's row first and writes its outbox rows before it
commits, so the outbox's numbers order the commands of one instance; each decision's command ran
under an idempotency key whose entry was written in its transaction (the entry's xmin is that
transaction, the outbox rows' txid its 64-bit id), which tells its outbox rows. The orders of
the instances are merged into one (a topological order; the locks make them consistent), ties
going to the order the decisions were recorded in.

`replay` drives the same model by the same decisions sequentially, on one thread, with whatever
engine it is given (the test gives it one connection: an Engine with a pool of one, its reads
too on that pool's connection), in new instances, and `final_state` is what both runs are
compared by: the instance states, the variable values and where the tokens ended (ids differ
between runs, so tokens are compared as a multiset of (node, state)). A broadcast signal is
replayed to the instances it reached, to as many of each one's subscriptions to it, oldest
first: another instance's overlapping command may have created a subscription the broadcast
never saw, which a broadcast replayed in commit order would reach."""

from __future__ import annotations

import contextlib
import heapq
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from engine.api import Engine
from engine.errors import InterlockError, NotFound
from engine.semantics.modification import CancelToken, StartBefore
from tests.models.driver import WORKER, Decision
from tests.models.invariants import family_commits, outbox_events
from tests.models.strategies import ERROR_CODE, TOPIC, Spec

Conn = psycopg.Connection[tuple[Any, ...]]

# The rows of an instance's family (it and the instances it called): node ids are unique
# across a family, so a node names its work wherever in the family it is.
IN_FAMILY = "instance_id IN (SELECT id FROM process_instance WHERE root_instance_id = %s)"


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


def final_state(
    url: str, instances: list[UUID]
) -> list[tuple[str, dict[str, Any], Counter[Any], Counter[Any]]]:
    """Each instance's state, variables and its family's tokens' (node, state), with its called
    instances' (process, state), in start order (node ids are unique across a family)."""
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
                    "SELECT node_id, state FROM token WHERE " + IN_FAMILY, (instance,)
                ).fetchall()
            )
            called = Counter(
                conn.execute(
                    "SELECT definition_key, state FROM process_instance "
                    "WHERE root_instance_id = %s AND id <> %s",
                    (instance, instance),
                ).fetchall()
            )
            found.append((str(state), variables, tokens, called))
    return found


XID_MODULUS = 2**32  # an xmin is the low 32 bits of the 64-bit transaction id


def commit_order(
    url: str, instances: list[UUID], decisions: list[Decision]
) -> tuple[list[Decision], list[Decision]]:
    """The decisions in an order their commits had, and those whose command wrote no outbox row
    (it changed no instance: a job another thread had already run)."""
    keys = sorted({d.key for d in decisions if d.key is not None})
    groups: dict[str, list[int]] = defaultdict(list)  # a transaction: its decisions
    for index, decision in enumerate(decisions):
        groups[decision.key or f"#{index}"].append(index)
    with psycopg.connect(url) as conn:
        by_xmin = {
            int(xmin): key
            for key, xmin in conn.execute(
                "SELECT key, xmin::text::bigint FROM idempotency "
                "WHERE principal = '' AND key = ANY(%s)",
                (keys,),
            )
        }
        assert len(by_xmin) == len(keys), "a decision's command left no idempotency entry"
        # Each family's transactions, in the order of their outbox rows (every command on a
        # family locks its root first: seq order is their commit order).
        chains = []
        for instance in instances:
            chain: list[str] = []
            for txid in family_commits(conn, instance):
                key = by_xmin.get(txid % XID_MODULUS)
                if key is not None and (not chain or chain[-1] != key):
                    chain.append(key)
            assert len(chain) == len(set(chain)), f"instance {instance}: {chain}"
            chains.append(chain)
    after: dict[str, set[str]] = defaultdict(set)
    waits: Counter[str] = Counter()
    for chain in chains:
        for before, then in zip(chain, chain[1:], strict=False):
            if then not in after[before]:
                after[before].add(then)
                waits[then] += 1
    written = {key for chain in chains for key in chain}
    ready = [(min(indices), group) for group, indices in groups.items() if not waits[group]]
    heapq.heapify(ready)
    ordered: list[Decision] = []
    without_rows: list[Decision] = []
    while ready:
        _, group = heapq.heappop(ready)
        found = [decisions[i] for i in groups[group]]
        (ordered if group in written or group.startswith("#") else without_rows).extend(found)
        for then in after[group]:
            waits[then] -= 1
            if not waits[then]:
                heapq.heappush(ready, (min(groups[then]), then))
    assert len(ordered) + len(without_rows) == len(decisions), "the commit orders form a cycle"
    return ordered, without_rows


@contextmanager
def _connection(engine: Engine) -> Iterator[psycopg.Connection[Any]]:
    """The connection the engine's commands run on (with a command pool of one, its only one)."""
    with engine.command_pool.connection() as conn:
        yield conn


def _first(engine: Engine, statement: str, *params: Any) -> tuple[Any, ...] | None:
    with _connection(engine) as conn:
        return conn.execute(statement + " ORDER BY created_at, id LIMIT 1", params).fetchone()


def replay(
    engine: Engine, spec: Spec, decisions: list[Decision], refused: list[str] | None = None
) -> list[UUID]:
    """Apply `decisions` in order, one at a time; the instances started, in start order. A
    decision whose target is gone is skipped, as the live run's lost races were."""
    engine.deploy(spec.model)
    # By the live run's numbering: two starts that overlapped may have committed in the other
    # order than they were numbered in.
    started: dict[int, UUID] = {}
    for decision in decisions:
        if decision.action == "start":
            handle = engine.start_latest(spec.key, {"pick": decision.value, "flaky": False})
            started[decision.instance] = handle.id
            continue
        instance = started[decision.instance]
        try:
            _apply(engine, instance, decision)
        except InterlockError as error:
            if refused is not None:
                refused.append(f"{decision}: {error}")
    return [started[index] for index in sorted(started)]


def _apply(engine: Engine, instance: UUID, decision: Decision) -> None:
    action, node = decision.action, decision.node
    if action == "complete_task":
        row = _first(
            engine,
            "SELECT id FROM user_task WHERE " + IN_FAMILY + " AND node_id = %s AND state = 'Open'",
            instance,
            node,
        )
        if row is not None:
            engine.complete_task(row[0])
    elif action in ("complete_external", "fail_external", "bpmn_error"):
        with _connection(engine) as conn:
            family = {
                str(i)
                for (i,) in conn.execute(
                    "SELECT id FROM process_instance WHERE root_instance_id = %s", (instance,)
                )
            }
        locked = engine.fetch_and_lock(WORKER, {TOPIC: 600_000}, max_tasks=100)
        mine = [t for t in locked if t["instance_id"] in family and t["node_id"] == node]
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
            "SELECT id FROM job WHERE " + IN_FAMILY + " AND node_id = %s AND retries > 0",
            instance,
            node,
        )
        if row is not None:
            engine.run_job(row[0])
    elif action == "message":
        row = _first(
            engine,
            "SELECT name, instance_id FROM event_subscription WHERE "
            + IN_FAMILY
            + " AND node_id = %s AND kind = 'message'",
            instance,
            node,
        )
        if row is not None:
            engine.correlate_message(row[0], instance_id=row[1], all=bool(decision.value))
    elif action == "signal":
        name, count = decision.value
        with _connection(engine) as conn:
            executions = conn.execute(
                "SELECT coalesce(token_id, instance_id) FROM event_subscription WHERE "
                + IN_FAMILY
                + " AND kind = 'signal' AND name = %s ORDER BY id LIMIT %s",
                (instance, name, count),
            ).fetchall()
        for (execution,) in executions:
            with contextlib.suppress(NotFound):  # gone with a delivery before it
                engine.signal(name, execution_id=execution)
    elif action == "set_variables":
        if node is None:
            engine.instance(instance).set_variables(decision.value)
            return
        # Set in a called instance: those called at the node `node` whose variables differ.
        with _connection(engine) as conn:
            called = conn.execute(
                "SELECT p.id FROM process_instance p JOIN token t ON t.id = p.super_token_id "
                "WHERE p.root_instance_id = %s AND t.node_id = %s AND p.ended_at IS NULL "
                "AND EXISTS (SELECT 1 FROM jsonb_each(%s::jsonb) AS w(name, value) WHERE "
                "w.value IS DISTINCT FROM (SELECT v.value FROM variable v WHERE "
                "v.instance_id = p.id AND v.scope_key = '' AND v.name = w.name)) "
                "ORDER BY p.started_at, p.id",
                (instance, node, Jsonb(decision.value)),
            ).fetchall()
        for (child,) in called:
            engine.instance(child).set_variables(decision.value)
    elif action == "retry_incident":
        row = _first(
            engine,
            "SELECT id FROM incident WHERE " + IN_FAMILY + " AND node_id = %s AND state = 'Open'",
            instance,
            node,
        )
        if row is not None:  # the flag was cleared by a decision of its own before
            engine.retry_incident(row[0])
    elif action == "cancel_token":
        row = _first(
            engine,
            "SELECT id, instance_id FROM token WHERE "
            + IN_FAMILY
            + " AND node_id = %s AND state = 'Waiting'",
            instance,
            node,
        )
        if row is not None:
            engine.modify(row[1], CancelToken(row[0]))
    elif action == "start_before":
        engine.modify(instance, StartBefore(node_id=str(node)))
    elif action == "cancel":
        engine.instance(instance).cancel()
    else:
        raise AssertionError(f"unknown decision {decision}")
