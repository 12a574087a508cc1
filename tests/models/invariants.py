"""Invariants of committed rows, read in one REPEATABLE READ snapshot.

The state vocabularies and the token state machine are pinned here, not imported from the code
under test: a change to them must change this file too. `Checker` remembers what it saw in
earlier snapshots (each token's state and node, each closed visit) so that it can check moves
across steps, not only each snapshot alone."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import psycopg

from engine.model import ProcessModel
from engine.queries import summaries
from tests.models import firings

# -- pinned tables ---------------------------------------------------------------------------------

FINAL_TOKEN = frozenset({"Completed", "Terminated"})
LIVE_TOKEN = frozenset({"Created", "Ready", "Executing", "Waiting", "Failed"})
TOKEN_MOVES: dict[str, frozenset[str]] = {
    "Created": frozenset({"Ready", "Terminated"}),
    "Ready": frozenset({"Executing", "Failed", "Terminated"}),
    "Executing": frozenset({"Waiting", "Ready", "Completed", "Failed", "Terminated"}),
    "Waiting": frozenset({"Executing", "Ready", "Completed", "Failed", "Terminated"}),
    "Failed": frozenset({"Ready", "Waiting", "Terminated"}),
    "Completed": frozenset(),
    "Terminated": frozenset(),
}
FINAL_INSTANCE = frozenset({"Completed", "Terminated"})
VISIT_CLOSED = frozenset({"Completed", "Terminated"})
OPEN_TASK = "Open"
OPEN_INCIDENT = "Open"


def _reachable(start: str) -> frozenset[str]:
    """The states a token may be in after any number of moves from `start` (itself included)."""
    seen = {start}
    todo = [start]
    while todo:
        for state in TOKEN_MOVES[todo.pop()]:
            if state not in seen:
                seen.add(state)
                todo.append(state)
    return frozenset(seen)


REACHABLE = {state: _reachable(state) for state in TOKEN_MOVES}

Conn = psycopg.Connection[tuple[Any, ...]]


def outbox_events(
    conn: Conn, instance_id: UUID
) -> list[tuple[int, str, UUID | None, str | None, UUID | None]]:
    """The instance's outbox events as (seq, event, token_id, node_id, history_id), in order.
    The one place the outbox's row format is read."""
    rows = conn.execute(
        "SELECT seq, event, token_id, node_id, history_id FROM outbox_event "
        "WHERE instance_id = %s ORDER BY seq",
        (instance_id,),
    ).fetchall()
    return [(int(s), str(e), t, n, h) for s, e, t, n, h in rows]


def outbox_commits(conn: Conn, instance_id: UUID) -> list[int]:
    """The writing transaction of each of the instance's events, in `outbox_events`' order."""
    rows = conn.execute(
        "SELECT txid FROM outbox_event WHERE instance_id = %s ORDER BY seq", (instance_id,)
    ).fetchall()
    return [int(t) for (t,) in rows]


def family_commits(conn: Conn, root: UUID) -> list[int]:
    """The writing transaction of each event of `root`'s family (it and the instances it
    called), in outbox order."""
    rows = conn.execute(
        "SELECT txid FROM outbox_event WHERE instance_id IN "
        "(SELECT id FROM process_instance WHERE root_instance_id = %s) ORDER BY seq",
        (root,),
    ).fetchall()
    return [int(t) for (t,) in rows]


@dataclass
class Checker:
    """Checks the invariants of the instances in `instances` (the ids of roots) and of the
    instances they called, snapshot by snapshot."""

    url: str
    instances: set[UUID] = field(default_factory=set)
    token_seen: dict[UUID, tuple[str, str]] = field(default_factory=dict)
    visit_closed: dict[UUID, tuple[str, Any]] = field(default_factory=dict)
    pinned: dict[str, firings.Pins] = field(default_factory=dict)  # key -> its joins and loops
    snapshots: int = 0

    def pin(self, key: str, model: ProcessModel) -> None:
        """Check the instances of `key` against what `model` says of its joins and loops."""
        self.pinned[key] = firings.pins(model)

    def check(self) -> None:
        with psycopg.connect(self.url) as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            problems = self._check(conn)
            current = summaries.current(conn)
            counted = summaries.recount(conn)
            conn.rollback()
        if (current.instances, current.nodes) != (counted.instances, counted.nodes):
            problems.append(f"summaries differ from a recount: {current} != {counted}")
        self.snapshots += 1
        assert not problems, "\n".join(problems)

    def _check(self, conn: Conn) -> list[str]:
        # Every instance of the families of `instances`: their called instances too.
        ids = [
            i
            for (i,) in conn.execute(
                "SELECT id FROM process_instance WHERE root_instance_id = ANY(%s)",
                (list(self.instances),),
            )
        ]
        problems: list[str] = []
        instances = {
            i: (s, e, k)
            for i, s, e, k in conn.execute(
                "SELECT id, state, ended_at, definition_key FROM process_instance "
                "WHERE id = ANY(%s)",
                (ids,),
            ).fetchall()
        }
        tokens = {
            t: (i, n, s, v, m)
            for t, i, n, s, v, m in conn.execute(
                "SELECT id, instance_id, node_id, state, visit_id, merged_into FROM token "
                "WHERE instance_id = ANY(%s)",
                (ids,),
            ).fetchall()
        }
        live = {t for t, row in tokens.items() if row[2] in LIVE_TOKEN}

        # The token state machine, across snapshots.
        for token, (_, node, state, _, _) in tokens.items():
            if state not in TOKEN_MOVES:
                problems.append(f"token {token} has the unknown state {state}")
                continue
            before = self.token_seen.get(token)
            if before is not None:
                old_state, old_node = before
                if state not in REACHABLE[old_state]:
                    problems.append(f"token {token} moved {old_state} -> {state}")
                if old_state in FINAL_TOKEN and node != old_node:
                    problems.append(f"final token {token} moved {old_node} -> {node}")
            self.token_seen[token] = (state, node)
        vanished = [t for t in self.token_seen if t not in tokens]
        for token in vanished:
            if self.token_seen[token][0] in LIVE_TOKEN:
                problems.append(f"live token {token} vanished")

        # Waits and their tokens.
        waits: dict[UUID, list[str]] = defaultdict(list)
        for what, statement in (
            ("user task", "SELECT token_id, node_id FROM user_task WHERE state = 'Open' "),
            ("external task", "SELECT token_id, node_id FROM external_task WHERE state = 'Open' "),
            ("job", "SELECT token_id, node_id FROM job WHERE token_id IS NOT NULL "),
            (
                "subscription",
                "SELECT token_id, node_id FROM event_subscription "
                "WHERE token_id IS NOT NULL AND kind <> 'compensate' ",
            ),
        ):
            for token, node in conn.execute(statement + "AND instance_id = ANY(%s)", (ids,)):
                waits[token].append(what)
                if token not in live:
                    state = tokens[token][2] if token in tokens else "missing"
                    problems.append(f"{what} at {node} waits on a {state} token {token}")
        for token, called in conn.execute(
            "SELECT super_token_id, id FROM process_instance "
            "WHERE super_instance_id = ANY(%s) AND ended_at IS NULL",
            (ids,),
        ):
            waits[token].append("called instance")
            if token not in live:
                state = tokens[token][2] if token in tokens else "missing"
                problems.append(f"running instance {called} was called by a {state} token {token}")
        # A compensation throw event waits for the handlers it started: Compensation-mode
        # tokens whose parent it is (BPMN's waitForCompletion).
        for (token,) in conn.execute(
            "SELECT parent_id FROM token WHERE mode = 'Compensation' AND parent_id IS NOT NULL "
            "AND state IN ('Created', 'Ready', 'Executing', 'Waiting', 'Failed') "
            "AND instance_id = ANY(%s)",
            (ids,),
        ):
            waits[token].append("compensation")
        for _, _, arrivals in conn.execute(
            "SELECT gateway_id, scope_key, arrivals FROM join_state WHERE instance_id = ANY(%s)",
            (ids,),
        ):
            for arrival in arrivals:
                token = UUID(arrival["token"])
                waits[token].append("join")
                if token not in live:
                    problems.append(f"a join holds the arrival of a finished token {token}")
        scopes = {
            s
            for (s,) in conn.execute(
                "SELECT DISTINCT scope_id FROM token WHERE instance_id = ANY(%s) "
                "AND state IN ('Created', 'Ready', 'Executing', 'Waiting', 'Failed')",
                (ids,),
            )
        }
        failed = {
            t
            for (t,) in conn.execute(
                "SELECT token_id FROM incident WHERE state = 'Open' AND instance_id = ANY(%s)",
                (ids,),
            )
        }
        for token in live:
            instance, node, state, _, _ = tokens[token]
            if state == "Waiting" and not waits[token] and token not in scopes:
                problems.append(f"token {token} waits at {node} for nothing")
            if state == "Ready" and "job" not in waits[token]:
                problems.append(f"token {token} is Ready at {node} without a job")
            if state == "Failed" and token not in failed:
                problems.append(f"token {token} failed at {node} without an open incident")

        # Joins fire once per arrival set; loops run the iterations they are asked for.
        keys = {instance: key for instance, (_, _, key) in instances.items()}
        problems.extend(firings.check(conn, keys, self.pinned))

        # History visits open once and close once.
        visits = {
            v: (t, n, s, e)
            for v, t, n, s, e in conn.execute(
                "SELECT id, token_id, node_id, state, ended_at FROM history "
                "WHERE instance_id = ANY(%s)",
                (ids,),
            )
        }
        for visit, (token, node, state, ended) in visits.items():
            closed = self.visit_closed.get(visit)
            if closed is not None and closed != (state, ended):
                problems.append(f"visit {visit} at {node} closed as {closed}, now {state} {ended}")
            if state in VISIT_CLOSED:
                if ended is None:
                    problems.append(f"visit {visit} at {node} is {state} with no end")
                self.visit_closed[visit] = (state, ended)
            elif token not in live:
                problems.append(f"visit {visit} at {node} is open for a finished token {token}")
        for visit in self.visit_closed:
            if visit not in visits:
                problems.append(f"closed visit {visit} vanished")
        for token in live:
            visit = tokens[token][3]
            if visit is not None and visit in visits and visits[visit][2] != "Active":
                problems.append(f"live token {token} points at its closed visit {visit}")

        # Ended instances keep no live rows.
        for instance, (state, ended, _) in instances.items():
            if (state in FINAL_INSTANCE) != (ended is not None):
                problems.append(f"instance {instance} is {state} with ended_at {ended}")
            if state not in FINAL_INSTANCE:
                continue
            left = [t for t in live if tokens[t][0] == instance]
            if left:
                problems.append(f"{state} instance {instance} keeps live tokens {left}")
            for table, condition in (
                ("user_task", "state = 'Open'"),
                ("external_task", "state = 'Open'"),
                ("job", "TRUE"),
                ("event_subscription", "kind <> 'compensate'"),
                ("incident", "state = 'Open'"),
                ("history", "state = 'Active'"),
                ("join_state", "TRUE"),
            ):
                row = conn.execute(
                    f"SELECT count(*) FROM {table} WHERE instance_id = %s AND {condition}",
                    (instance,),
                ).fetchone()
                if row is not None and row[0]:
                    problems.append(f"{state} instance {instance} keeps {row[0]} {table} rows")

        # The outbox: each instance's events in commit order, each visit with its events.
        for instance in ids:
            events = outbox_events(conn, instance)
            commits = outbox_commits(conn, instance)
            ended_txids: set[int] = set()
            previous: int | None = None
            for txid in commits:
                if txid != previous:
                    if txid in ended_txids:
                        problems.append(f"instance {instance}: commit {txid}'s events interleave")
                    if previous is not None:
                        ended_txids.add(previous)
                    previous = txid
            by_visit: dict[UUID, list[str]] = defaultdict(list)
            for _, event, _, _, history_id in events:
                if history_id is not None and event.startswith("visit."):
                    by_visit[history_id].append(event)
            for visit, (token, node, state, _) in visits.items():
                if token not in tokens or tokens[token][0] != instance:
                    continue
                # One event per write of the visit: its last one says its current state, and
                # nothing follows its closing event.
                seen = by_visit.get(visit, [])
                if not seen or seen[-1] != f"visit.{state.lower()}":
                    problems.append(f"{state} visit {visit} at {node} has the events {seen}")
                if any(e != "visit.active" for e in seen[:-1]):
                    problems.append(f"visit {visit} at {node} has events after its end: {seen}")
        return problems
