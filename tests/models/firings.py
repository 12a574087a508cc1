"""Joins fire exactly once per arrival set; looping activities run the iterations they are asked
for. Checks of the committed rows of one snapshot against what the model says of its joins and
loops (`Pins`, read from the drawn model by `pins`), called by `Checker` after every round.

What the rows say of a join. A token arriving at a join opens a visit there (a history row naming
the flow it came by) and waits. When the join fires, the tokens it merges end Completed at the
join with `merged_into` naming the token that goes on (the survivor), whose own visit at the join
closes Completed in the same commit. So each Completed visit at a join of a token not merged there
is one firing, and its arrival set is that token with the tokens merged into it. What a token
descends from is its `parent_id` chain (a fork's children, a boundary event's token, a
subprocess's and a multi-instance body's inner tokens name the token they came from).

Commits are ordered by the instance's outbox (the events of one transaction are contiguous there,
which `Checker` checks): a visit's first event is its arrival, its last one its end; a token's
`token.terminated` event is when it was ended early.

What the rows say of a looping activity (a multi-instance body or a standard loop). The token
arriving there is the body's host: its visit at the activity is the body's (a multi-instance
body's visit has the node type `multiInstanceBody`, as Camunda names it); each run of the
activity is a token at the same node whose scope and parent are the host; the host's local
variables hold the counters while the body runs. The host alone leaves the activity once the body
completes; an iteration that completes just ends."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

import psycopg

from engine.model import (
    BoundaryEvent,
    InclusiveGateway,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    MultiInstance,
    ParallelGateway,
    ProcessModel,
    StandardLoop,
)

Conn = psycopg.Connection[tuple[Any, ...]]

# -- pinned ----------------------------------------------------------------------------------------

LIVE = frozenset({"Created", "Ready", "Executing", "Waiting", "Failed"})
BODY = "multiInstanceBody"  # the node type of a multi-instance body's visit (Camunda's)
# The counters of a multi-instance body and of a standard loop (Camunda's names).
INSTANCES, ACTIVE, COMPLETED = "nrOfInstances", "nrOfActiveInstances", "nrOfCompletedInstances"
COUNTER = "loopCounter"
# How tests/models/strategies.py writes a completion condition, and names a split's join.
NEEDED = re.compile(r"\$\{nrOfCompletedInstances >= (\d+)\}")
JOIN_ID = re.compile(r"Gj(\d+)")


@dataclass(frozen=True)
class JoinPins:
    """A converging gateway: its incoming flows; an inclusive one's split (whose activations
    send it its arrival sets) and the nodes of its scope from which a token can still reach it."""

    kind: Literal["parallel", "inclusive"]
    incoming: frozenset[str]
    split: str | None = None
    upstream: frozenset[str] = frozenset()


@dataclass(frozen=True)
class LoopPins:
    """A looping activity: a multi-instance body of `count` iterations that completes once
    `needed` of them have (None: all), or a standard loop running at most `count` times; the
    flows it leaves by."""

    kind: Literal["parallel", "sequential", "loop"]
    count: int
    needed: int | None
    outgoing: frozenset[str]


@dataclass(frozen=True)
class Pins:
    joins: Mapping[str, JoinPins]
    loops: Mapping[str, LoopPins]


def pins(model: ProcessModel) -> Pins:
    """What a model drawn by tests/models/strategies.py says of its joins and loops."""
    joins: dict[str, JoinPins] = {}
    loops: dict[str, LoopPins] = {}
    ids = {node.id for node in model.nodes}
    for node in model.nodes:
        if isinstance(node, ParallelGateway) and len(node.incoming) > 1:
            joins[node.id] = JoinPins("parallel", frozenset(node.incoming))
        elif isinstance(node, InclusiveGateway) and len(node.incoming) > 1:
            named = JOIN_ID.fullmatch(node.id)
            assert named is not None, f"inclusive join {node.id} is not named as a split's"
            split = f"Gs{int(named.group(1)) - 1}"  # the strategies draw a split's ids in turn
            assert split in ids, f"inclusive join {node.id} has no split {split}"
            joins[node.id] = JoinPins(
                "inclusive", frozenset(node.incoming), split, _upstream(model, node.id)
            )
        loop = node.loop
        if isinstance(loop, StandardLoop):
            assert loop.maximum is not None and loop.condition is None
            loops[node.id] = LoopPins("loop", loop.maximum, None, frozenset(node.outgoing))
        elif isinstance(loop, MultiInstance):
            assert loop.cardinality is not None
            needed = None
            if loop.completion_condition is not None:
                found = NEEDED.fullmatch(loop.completion_condition.source)
                assert found is not None, loop.completion_condition.source
                needed = int(found.group(1))
            kind: Literal["parallel", "sequential"] = (
                "sequential" if loop.sequential else "parallel"
            )
            loops[node.id] = LoopPins(kind, int(loop.cardinality), needed, frozenset(node.outgoing))
    return Pins(joins, loops)


def _upstream(model: ProcessModel, target: str) -> frozenset[str]:
    """The nodes from which a token can reach `target` within its scope: along sequence flows,
    from an activity to its boundary events, from a link throw event to its catch event."""
    before: dict[str, set[str]] = defaultdict(set)
    for flow in model.flows:
        before[flow.target].add(flow.source)
    catches = {
        (n.parent, n.link_name): n.id
        for n in model.nodes
        if isinstance(n, IntermediateCatchEvent) and n.link_name is not None
    }
    for node in model.nodes:
        if isinstance(node, BoundaryEvent):
            before[node.id].add(node.attached_to)
        elif isinstance(node, IntermediateThrowEvent) and node.link_name is not None:
            before[catches[(node.parent, node.link_name)]].add(node.id)
    seen: set[str] = set()
    todo = [target]
    while todo:
        for source in before[todo.pop()]:
            if source not in seen:
                seen.add(source)
                todo.append(source)
    seen.discard(target)
    return frozenset(seen)


# -- the rows of one instance ----------------------------------------------------------------------


@dataclass(frozen=True)
class TokenRow:
    id: UUID
    node: str
    state: str
    scope: UUID | None
    parent: UUID | None
    merged_into: UUID | None


@dataclass(frozen=True)
class VisitRow:
    id: UUID
    token: UUID
    node: str
    state: str
    flow: str | None
    kind: str


NEVER = 1 << 62  # the commit of what has not happened yet


class Rows:
    """An instance's tokens, visits, joins and loop counters, with the commit (its index in the
    instance's outbox) of each visit's first and last event and of each early end of a token."""

    def __init__(self, conn: Conn, instance: UUID) -> None:
        self.tokens = {
            row[0]: TokenRow(*row)
            for row in conn.execute(
                "SELECT id, node_id, state, scope_id, parent_id, merged_into FROM token "
                "WHERE instance_id = %s",
                (instance,),
            )
        }
        self.visits = [
            VisitRow(*row)
            for row in conn.execute(
                "SELECT id, token_id, node_id, state, flow_id, node_type FROM history "
                "WHERE instance_id = %s ORDER BY started_at, id",
                (instance,),
            )
        ]
        self.joins: list[tuple[str, str, list[dict[str, str]]]] = [
            (str(g), str(s), list(a))
            for g, s, a in conn.execute(
                "SELECT gateway_id, scope_key, arrivals FROM join_state WHERE instance_id = %s",
                (instance,),
            )
        ]
        self.counters: dict[tuple[str, str], Any] = {
            (str(s), str(n)): v
            for s, n, v in conn.execute(
                "SELECT scope_key, name, value FROM variable WHERE instance_id = %s "
                "AND name = ANY(%s)",
                (instance, [INSTANCES, ACTIVE, COMPLETED, COUNTER]),
            )
        }
        self.opened: dict[UUID, int] = {}
        self.closed: dict[UUID, int] = {}
        self.terminated: dict[UUID, int] = {}
        rows = conn.execute(
            "SELECT txid, event, token_id, history_id FROM outbox_event "
            "WHERE instance_id = %s ORDER BY seq",
            (instance,),
        ).fetchall()
        commit, previous = -1, None
        for txid, event, token, visit in rows:
            if txid != previous:
                commit, previous = commit + 1, txid
            if visit is not None and str(event).startswith("visit."):
                self.opened.setdefault(visit, commit)
                self.closed[visit] = commit
            if event == "token.terminated" and token is not None:
                self.terminated.setdefault(token, commit)
        self.children: dict[UUID, list[UUID]] = defaultdict(list)
        for token in self.tokens.values():
            if token.parent is not None:
                self.children[token.parent].append(token.id)

    def arrival(self, visit: VisitRow) -> int:
        return self.opened.get(visit.id, NEVER)

    def end(self, visit: VisitRow) -> int:
        """The commit that closed the visit (NEVER while it is open)."""
        return NEVER if visit.state == "Active" else self.closed.get(visit.id, NEVER)

    def lineage(self, token: UUID) -> set[UUID]:
        """The token and every token descending from it."""
        found = {token}
        todo = [token]
        while todo:
            for child in self.children.get(todo.pop(), ()):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        return found

    def is_live(self, token: UUID) -> bool:
        return self.tokens[token].state in LIVE

    def counter(self, owner: UUID, name: str) -> int | None:
        value = self.counters.get((str(owner), name))
        return None if value is None else int(value)


def check(conn: Conn, instances: Mapping[UUID, str], pinned: Mapping[str, Pins]) -> list[str]:
    """The problems of the joins and loops of `instances` (id -> definition key)."""
    problems: list[str] = []
    for instance, key in sorted(instances.items(), key=lambda i: str(i[0])):
        found = pinned.get(key)
        if found is None or not (found.joins or found.loops):
            continue
        rows = Rows(conn, instance)
        said = [
            *(p for j, pins in found.joins.items() for p in _join(rows, j, pins)),
            *(p for n, pins in found.loops.items() for p in _loop(rows, n, pins)),
        ]
        problems.extend(f"{key} instance {instance}: {problem}" for problem in said)
    return problems


# -- joins -----------------------------------------------------------------------------------------


def _join(rows: Rows, join: str, pins: JoinPins) -> list[str]:
    problems: list[str] = []
    at: dict[UUID, VisitRow] = {}
    for visit in rows.visits:
        if visit.node != join:
            continue
        if visit.token in at:
            problems.append(f"token {visit.token} arrived at {join} twice")
        at[visit.token] = visit
    merged = sorted(
        (t for t in rows.tokens.values() if t.merged_into is not None and t.node == join),
        key=lambda t: str(t.id),
    )
    merged_ids = {t.id for t in merged}
    # Each firing: its survivor, then the tokens merged into it.
    firings = {
        token: [token]
        for token, visit in at.items()
        if visit.state == "Completed" and token not in merged_ids
    }
    for row in merged:
        assert row.merged_into is not None
        if row.id not in at:
            problems.append(f"token {row.id} was merged at {join} without arriving there")
            continue
        if row.merged_into not in firings:
            problems.append(
                f"token {row.id} was merged at {join} into {row.merged_into}, "
                "which did not leave the join"
            )
            continue
        firings[row.merged_into].append(row.id)
    fired_in = {t: survivor for survivor, arrivals in firings.items() for t in arrivals}
    for survivor, arrivals in firings.items():
        fired = rows.end(at[survivor])
        flows = sorted(at[t].flow or "-" for t in arrivals)
        scope = rows.tokens[survivor].scope
        if pins.kind == "parallel" and flows != sorted(pins.incoming):
            problems.append(
                f"parallel join {join} fired with {arrivals} by the flows {flows}, not one token "
                f"on each of {sorted(pins.incoming)}"
            )
        for token in arrivals[1:]:
            if rows.arrival(at[token]) > fired:
                problems.append(
                    f"join {join} merged {token}, arrived after it fired, into {survivor}"
                )
            if rows.tokens[token].scope != scope:
                problems.append(f"join {join} merged {token} of another scope into {survivor}")
        # What waited there when the join fired and stayed: a parallel join takes the first
        # arrival on each flow, an inclusive join every arrival.
        first = {at[t].flow: rows.arrival(at[t]) for t in arrivals}
        for token, visit in at.items():
            if token in fired_in and fired_in[token] == survivor:
                continue
            if rows.tokens[token].scope != scope:
                continue
            came = rows.arrival(visit)
            if came < fired < rows.end(visit) and (
                pins.kind == "inclusive" or first.get(visit.flow, NEVER) > came
            ):
                problems.append(
                    f"join {join} fired with {arrivals}, leaving {token} waiting there since "
                    "before it fired"
                )
    if pins.kind == "inclusive":
        problems.extend(_inclusive(rows, join, pins, at, firings, fired_in))
    return problems


def _inclusive(
    rows: Rows,
    join: str,
    pins: JoinPins,
    at: Mapping[UUID, VisitRow],
    firings: Mapping[UUID, list[UUID]],
    fired_in: Mapping[UUID, UUID],
) -> list[str]:
    """An inclusive join fires once per activation of its split: with every token of that
    activation that arrives (unless every incoming flow has a token, which fires it at once),
    and not while a token of its scope can still reach it."""
    problems: list[str] = []
    assert pins.split is not None
    for visit in rows.visits:
        if visit.node != pins.split or visit.state != "Completed":
            continue
        came = [t for t in rows.lineage(visit.token) if t in at]
        for survivor in sorted({fired_in[t] for t in came if t in fired_in}, key=str):
            arrivals = firings[survivor]
            if {at[t].flow for t in arrivals} >= pins.incoming:
                continue
            fired = rows.end(at[survivor])
            late = sorted(
                (t for t in came if t not in arrivals and rows.arrival(at[t]) >= fired), key=str
            )
            if late:
                problems.append(
                    f"inclusive join {join} fired with {arrivals} before {late}, sent by the "
                    f"same activation of {pins.split} (by {visit.token}), arrived"
                )
    for gateway, scope_key, arrived in rows.joins:
        if gateway != join:
            continue
        waiting = {UUID(a["token"]) for a in arrived}
        if {a["flow"] for a in arrived} >= pins.incoming:
            problems.append(f"inclusive join {join} has a token on every incoming flow: {arrived}")
        blockers = [
            t
            for t in rows.tokens.values()
            if t.state in LIVE
            and (str(t.scope) if t.scope else "") == scope_key
            and t.id not in waiting
            and (t.node in pins.upstream or t.node == join)
        ]
        if not blockers:
            problems.append(
                f"inclusive join {join} waits with {sorted(waiting, key=str)} though no token "
                "of its scope can still reach it"
            )
    return problems


# -- loops -----------------------------------------------------------------------------------------


def _loop(rows: Rows, node: str, pins: LoopPins) -> list[str]:
    problems: list[str] = []
    visits: dict[UUID, list[VisitRow]] = defaultdict(list)
    for visit in rows.visits:
        visits[visit.token].append(visit)
    at = {t for t, seen in visits.items() if any(v.node == node for v in seen)}
    iterations: dict[UUID, list[TokenRow]] = defaultdict(list)
    for row in rows.tokens.values():
        if row.scope in at and row.scope == row.parent and row.node == node:
            assert row.scope is not None
            iterations[row.scope].append(row)
    inner = {t.id for found in iterations.values() for t in found}
    hosts = sorted(at - inner, key=str)
    completed_bodies: set[UUID] = set()
    for host in hosts:
        bodies = [v for v in visits[host] if v.node == node]
        if len(bodies) != 1:
            problems.append(f"token {host} entered the body of {node} {len(bodies)} times")
            continue
        body = bodies[0]
        if body.state == "Completed":
            completed_bodies.add(host)
        problems.extend(
            f"body of {node} by {host} ({body.state}): {problem}"
            for problem in _body(rows, node, pins, host, body, iterations[host], visits)
        )
    # The host alone goes on, once.
    left: dict[UUID, int] = defaultdict(int)
    for visit in rows.visits:
        if visit.flow in pins.outgoing:
            left[visit.token] += 1
    for token, times in sorted(left.items(), key=lambda t: str(t[0])):
        if token not in completed_bodies or times != 1:
            problems.append(f"token {token} left {node} {times} times ({node}'s body: {hosts})")
    return problems


def _body(
    rows: Rows,
    node: str,
    pins: LoopPins,
    host: UUID,
    body: VisitRow,
    iterations: list[TokenRow],
    visits: Mapping[UUID, list[VisitRow]],
) -> list[str]:
    problems: list[str] = []
    if pins.kind != "loop" and body.kind != BODY:
        problems.append(f"the body's visit has the node type {body.kind}")
    for iteration in iterations:
        elsewhere = [v.node for v in visits.get(iteration.id, []) if v.node != node]
        if len(visits.get(iteration.id, [])) > 1 or elsewhere or iteration.merged_into:
            problems.append(f"iteration {iteration.id} went on to {elsewhere or 'a join'}")
    closed = rows.end(body)
    live = [t for t in iterations if t.state in LIVE]
    done = [t for t in iterations if t.state == "Completed"]
    ended = [t for t in iterations if t.state == "Terminated"]
    ends = {t.id: rows.terminated.get(t.id, closed) for t in ended}
    cancelled = [t for t in ended if ends[t.id] < closed]  # ended on their own: modification
    if any(end > closed for end in ends.values()):
        problems.append(f"iterations ended after the body: {ends}")
    if body.state != "Active" and live:
        problems.append(f"iterations outlive the body: {[t.id for t in live]}")
    counts = f"{len(done)} completed, {len(live)} live, {len(ended)} ended early"
    n, needed = pins.count, pins.needed
    if pins.kind == "loop":
        if len(iterations) > n:
            problems.append(f"a loop of at most {n} runs ran {len(iterations)} times ({counts})")
        if body.state == "Active" and len(live) != 1:
            problems.append(f"a running loop has {counts}")
        if body.state == "Completed" and (ended or not done):
            problems.append(f"a completed loop has {counts}")
        if body.state == "Active":
            problems.extend(_runs_one_by_one(rows, host, live, done, counts))
        return problems
    total = n - len(cancelled) if pins.kind == "parallel" else n
    goal = total if needed is None else min(total, needed)
    started = n if pins.kind == "parallel" else len(done) + len(live) + len(ended)
    if len(iterations) != started or started > n:
        problems.append(f"{len(iterations)} of {n} iterations started ({counts})")
    if len(done) > goal:
        problems.append(f"{len(done)} iterations completed where {goal} complete the body")
    if body.state == "Completed" and len(done) != goal:
        problems.append(f"completed with {counts}; {goal} complete it")
    if body.state == "Completed" and pins.kind == "sequential" and ended:
        problems.append(f"a completed sequential body has {counts}")
    if body.state != "Active":
        return problems
    if len(done) >= goal:
        problems.append(f"still running with {counts}; {goal} complete it")
    if pins.kind == "sequential" and (len(live) != 1 or cancelled):
        problems.append(f"a running sequential body has {counts}")
    expected = {
        INSTANCES: total,
        COMPLETED: len(done),
        ACTIVE: len(live) if pins.kind == "parallel" else 1,
    }
    actual = {name: rows.counter(host, name) for name in expected}
    if actual != expected:
        problems.append(f"the counters are {actual}, the iterations {counts}")
    if pins.kind == "sequential":
        return problems + _runs_one_by_one(rows, None, live, done, counts)
    indexes = sorted(rows.counter(t.id, COUNTER) or 0 for t in live)
    if len(set(indexes)) != len(indexes) or any(not 0 <= i < n for i in indexes):
        problems.append(f"the live iterations' {COUNTER}s are {indexes}")
    return problems


def _runs_one_by_one(
    rows: Rows, host: UUID | None, live: list[TokenRow], done: list[TokenRow], counts: str
) -> list[str]:
    """A running sequential body or standard loop: the live iteration is the one after those
    completed (its loopCounter, and a standard loop's own, counts them)."""
    counters = [rows.counter(t.id, COUNTER) for t in live]
    if host is not None:
        counters.append(rows.counter(host, COUNTER))
    if counters != [len(done)] * len(counters):
        return [f"the {COUNTER}s are {counters} with {counts}"]
    return []
