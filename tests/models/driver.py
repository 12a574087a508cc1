"""A driver of random schedules over a generated model.

It starts instances, then runs rounds: in each round several threads, each with its own random
source drawn from the seed and its own pooled connections, perform one random enabled action at
once (complete a user task, fetch and complete, fail or throw from an external task, move the
injected clock and run the due jobs, correlate a message, broadcast a signal, set a variable,
retry an incident, modify or cancel an instance); after every round the invariants are checked
on the committed rows. Every action that took effect is recorded as a decision (what it did to
which node of which instance), so that a run can be repeated sequentially on one connection. A
final drain serves every wait left until each instance ends."""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from engine.api import Engine
from engine.core.handlers import TaskContext
from engine.errors import InterlockError
from engine.semantics.modification import CancelToken, StartBefore
from tests.engine.clock import ManualClock
from tests.models.invariants import Checker
from tests.models.strategies import ERROR_CODE, EVENT_START, HANDLER, PICKS, TOPIC, Spec

WORKER = "fuzz-worker"
# The roots still running: the instances a modification or a cancellation acts on (the model's
# nodes are the root's; a called instance ends with its call activity).
ROOTS_OPEN = (
    "SELECT id FROM process_instance WHERE id = ANY(%s) AND ended_at IS NULL "
    "AND super_instance_id IS NULL"
)


def flaky_handler(ctx: TaskContext) -> dict[str, Any]:
    """The handler of every handler task: fails while `flaky` is true."""
    if ctx.get("flaky"):
        raise RuntimeError(f"{ctx.node_id} is flaky")
    return {f"h_{ctx.node_id}": True}


@dataclass(frozen=True)
class Decision:
    """One action that took effect: its name, the index of its instance and the node acted on."""

    action: str
    instance: int
    node: str | None
    value: Any = None


@dataclass
class Driver:
    engine: Engine
    clock: ManualClock
    spec: Spec
    seed: int
    threads: int = 3
    starts: int = 2
    checker: Checker | None = None
    instances: list[UUID] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    steps: int = 0
    modified: set[UUID] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # With `ordered`, one action at a time (each thread still on its own connections), so that
    # the decisions are recorded in the order they committed: what a sequential replay needs.
    ordered: bool = False
    order: threading.Lock = field(default_factory=threading.Lock)

    # -- reading the rows -------------------------------------------------------------------------

    def rows(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        """The rows of `statement`, whose first parameter is the ids of every instance of the
        roots' families (the roots and the instances their call activities started)."""
        with self.engine.connection() as conn:
            family = [
                row[0]
                for row in conn.execute(
                    "SELECT id FROM process_instance WHERE root_instance_id = ANY(%s)",
                    (self.instances,),
                )
            ]
            return conn.execute(statement, (family, *params)).fetchall()

    def root(self, instance: UUID) -> UUID:
        """The root of `instance`'s family."""
        if instance in self.instances:
            return instance
        with self.engine.connection() as conn:
            row = conn.execute(
                "SELECT root_instance_id FROM process_instance WHERE id = %s", (instance,)
            ).fetchone()
        assert row is not None
        return UUID(str(row[0]))

    def _pick(self, rng: random.Random, statement: str, *params: Any) -> tuple[Any, ...] | None:
        found = sorted(self.rows(statement, *params), key=str)
        return rng.choice(found) if found else None

    def _record(self, action: str, instance: UUID, node: str | None, value: Any = None) -> None:
        root = self.root(instance)  # a called instance's decision names its family's root
        with self.lock:
            self.decisions.append(Decision(action, self.instances.index(root), node, value))

    # -- actions ----------------------------------------------------------------------------------

    def start(self, rng: random.Random) -> None:
        pick = rng.choice(PICKS)
        handle = self.engine.start_latest(self.spec.key, {"pick": pick, "flaky": False})
        with self.lock:
            self.instances.append(handle.id)
            if self.checker is not None:
                self.checker.instances.add(handle.id)
        self._record("start", handle.id, None, pick)

    def complete_task(self, rng: random.Random) -> None:
        found = self._pick(
            rng,
            "SELECT id, instance_id, node_id FROM user_task "
            "WHERE instance_id = ANY(%s) AND state = 'Open'",
        )
        if found is not None:
            self.engine.complete_task(found[0])
            self._record("complete_task", found[1], found[2])

    def external(self, rng: random.Random) -> None:
        for task in self.engine.fetch_and_lock(WORKER, {TOPIC: 600_000}, max_tasks=1):
            roll = rng.random()
            instance = UUID(str(task["instance_id"]))
            node = str(task["node_id"])
            mine = self.rows(
                "SELECT 1 FROM process_instance WHERE id = ANY(%s) AND id = %s", instance
            )
            if not mine:
                self.engine.unlock_external_task(task["id"])
            elif roll < 0.6:
                self.engine.complete_external_task(task["id"], WORKER)
                self._record("complete_external", instance, node)
            elif roll < 0.8:
                self.engine.fail_external_task(task["id"], WORKER, "down", retries=0)
                self._record("fail_external", instance, node)
            else:
                self.engine.external_task_bpmn_error(task["id"], WORKER, ERROR_CODE)
                self._record("bpmn_error", instance, node)

    def timers(self, rng: random.Random) -> None:
        """Move the clock past the next due job, then run one due job."""
        with self.lock:
            if rng.random() < 0.5:
                self.clock.advance(hours=1, seconds=1)
            now = self.clock.now
        found = self._pick(
            rng,
            "SELECT id, instance_id, node_id FROM job WHERE instance_id = ANY(%s) "
            "AND retries > 0 AND due_at <= %s",
            now,
        )
        if found is not None:
            outcome = self.engine.run_job(found[0]).outcome
            self._record("run_job", found[1], found[2], outcome)

    def message(self, rng: random.Random, every: bool | None = None, starts: bool = True) -> None:
        """Correlate a waiting message to its instance; to all its subscriptions there when
        `every` (by chance when None: one alone is refused where several wait); to an event
        subprocess's start too when `starts`."""
        found = self._pick(
            rng,
            "SELECT name, instance_id, node_id FROM event_subscription "
            "WHERE instance_id = ANY(%s) AND kind = 'message' AND (%s OR node_id NOT LIKE %s)",
            starts,
            f"{EVENT_START}%",
        )
        if found is not None:
            every = rng.random() < 0.5 if every is None else every
            self.engine.correlate_message(found[0], instance_id=found[1], all=every)
            self._record("message", found[1], found[2], every)

    def signal(self, rng: random.Random, starts: bool = True) -> None:
        found = self._pick(
            rng,
            "SELECT name, instance_id, node_id FROM event_subscription "
            "WHERE instance_id = ANY(%s) AND kind = 'signal' AND (%s OR node_id NOT LIKE %s)",
            starts,
            f"{EVENT_START}%",
        )
        if found is not None:
            self.engine.signal(found[0])
            self._record("signal", found[1], found[2])

    def set_variable(self, rng: random.Random) -> None:
        found = self._pick(
            rng, "SELECT id FROM process_instance WHERE id = ANY(%s) AND ended_at IS NULL"
        )
        if found is not None:
            values = {"pick": rng.choice(PICKS), "flaky": rng.random() < 0.3}
            self.engine.instance(found[0]).set_variables(values)
            self._record("set_variables", found[0], None, values)

    def retry_incident(self, rng: random.Random) -> None:
        found = self._pick(
            rng,
            "SELECT id, instance_id, node_id FROM incident "
            "WHERE instance_id = ANY(%s) AND state = 'Open'",
        )
        if found is not None:
            self.engine.instance(found[1]).set_variables({"flaky": False})
            self.engine.retry_incident(found[0])
            self._record("retry_incident", found[1], found[2])

    def modify(self, rng: random.Random) -> None:
        """Cancel a waiting token, or start a token before a top-level task."""
        if rng.random() < 0.5:
            found = self._pick(
                rng,
                "SELECT id, instance_id, node_id FROM token WHERE instance_id = ANY(%s) "
                "AND state = 'Waiting'",
            )
            if found is not None:
                self.engine.modify(found[1], CancelToken(found[0]))
                with self.lock:
                    self.modified.add(found[1])
                self._record("cancel_token", found[1], found[2])
            return
        tasks = sorted(
            n.id for n in self.spec.model.nodes if n.parent is None and n.id.startswith("T")
        )
        found = self._pick(rng, ROOTS_OPEN)
        if tasks and found is not None:
            node = rng.choice(tasks)
            self.engine.modify(found[0], StartBefore(node_id=node))
            with self.lock:
                self.modified.add(found[0])
            self._record("start_before", found[0], node)

    def cancel(self, rng: random.Random) -> None:
        found = self._pick(rng, ROOTS_OPEN)
        if found is not None:
            self.engine.instance(found[0]).cancel()
            self._record("cancel", found[0], None)

    ACTIONS: tuple[tuple[str, int], ...] = (
        ("start", 1),
        ("complete_task", 6),
        ("external", 6),
        ("timers", 5),
        ("message", 4),
        ("signal", 2),
        ("set_variable", 2),
        ("retry_incident", 3),
        ("modify", 1),
        ("cancel", 1),
    )

    def step(self, rng: random.Random) -> None:
        names = [n for n, _ in self.ACTIONS]
        name = rng.choices(names, [w for _, w in self.ACTIONS])[0]
        action: Callable[[random.Random], None] = getattr(self, name)
        # A refusal is a lost race: already done, locked by another, no longer there.
        ordering = self.order if self.ordered else contextlib.nullcontext()
        with ordering, contextlib.suppress(InterlockError):
            action(rng)
        with self.lock:
            self.steps += 1

    # -- runs -------------------------------------------------------------------------------------

    def run(self, rounds: int) -> None:
        if self.checker is not None:
            for model in (self.spec.model, *self.spec.callees):
                self.checker.pin(model.key, model)
        master = random.Random(self.seed)
        for _ in range(self.starts):
            self.start(master)
        self.check()
        sources = [random.Random(master.random()) for _ in range(self.threads)]
        with ThreadPoolExecutor(self.threads) as pool:
            for _ in range(rounds):
                for future in [pool.submit(self.step, rng) for rng in sources]:
                    future.result()
                self.check()
        self.drain(master)

    def check(self) -> None:
        if self.checker is not None:
            self.checker.check()

    def drain(self, rng: random.Random, limit: int = 200) -> None:
        """Serve every wait, one action at a time, until every instance has ended."""
        for _ in range(limit):
            open_ = self.rows(
                "SELECT id FROM process_instance WHERE id = ANY(%s) AND ended_at IS NULL"
            )
            if not open_:
                return
            before = len(self.decisions)
            # Handlers succeed, and every conditional event's `${pick >= k}` holds.
            settled = {"flaky": False, "pick": PICKS[-1]}
            for (instance,) in open_:
                with contextlib.suppress(InterlockError):
                    handle = self.engine.instance(instance)
                    if {k: handle.variables().get(k) for k in settled} != settled:
                        handle.set_variables(settled)
                        self._record("set_variables", instance, None, settled)
            due = self.rows(
                "SELECT min(due_at) FROM job WHERE instance_id = ANY(%s) AND retries > 0"
            )[0][0]
            with self.lock:
                if due is not None and due > self.clock.now:
                    self.clock.now = due  # the next timer is due
            for action in (
                self.retry_incident,
                self.complete_task,
                # Not an event subprocess's start: a non-interrupting one would start again on
                # every pass, and no instance waits for one to end.
                lambda rng: self.message(rng, every=True, starts=False),
                lambda rng: self.signal(rng, starts=False),
                self.timers,
            ):
                with contextlib.suppress(InterlockError):
                    action(rng)
            try:
                for task in self.engine.fetch_and_lock(WORKER, {TOPIC: 600_000}, max_tasks=5):
                    self.engine.complete_external_task(task["id"], WORKER)
                    self._record(
                        "complete_external",
                        UUID(str(task["instance_id"])),
                        str(task["node_id"]),
                    )
            except InterlockError:
                pass
            with self.lock:
                self.clock.advance(hours=1, seconds=1)
            self.steps += 1
            self.check()
            if len(self.decisions) == before:
                # Nothing left to serve: what still runs waits for what no action gives.
                break
        open_ = self.rows(
            "SELECT id, root_instance_id FROM process_instance WHERE id = ANY(%s) "
            "AND ended_at IS NULL"
        )
        excused = {self.root(i) for i in self.modified}  # a modified instance's whole family
        stuck = [i for i, root in open_ if root not in excused]
        assert not stuck, f"instances {stuck} never ended:\n" + self.describe(stuck)

    def describe(self, instances: list[UUID]) -> str:
        """What the instances still hold: live tokens, open work, open incidents."""
        with self.engine.connection() as conn:
            lines: list[str] = []
            for statement in (
                "SELECT 'token', id, node_id, state, scope_id FROM token "
                "WHERE instance_id = ANY(%s) AND state NOT IN ('Completed', 'Terminated')",
                "SELECT 'user_task', id, node_id, state FROM user_task "
                "WHERE instance_id = ANY(%s) AND state = 'Open'",
                "SELECT 'external_task', id, node_id, retries, worker_id, lock_expires_at "
                "FROM external_task WHERE instance_id = ANY(%s) AND state = 'Open'",
                "SELECT 'job', id, node_id, kind, retries, due_at FROM job "
                "WHERE instance_id = ANY(%s)",
                "SELECT 'subscription', id, node_id, kind, name FROM event_subscription "
                "WHERE instance_id = ANY(%s)",
                "SELECT 'incident', id, node_id, type, message FROM incident "
                "WHERE instance_id = ANY(%s) AND state = 'Open'",
                "SELECT 'join', gateway_id, arrivals FROM join_state WHERE instance_id = ANY(%s)",
            ):
                lines.extend(str(row) for row in conn.execute(statement, (instances,)))
        return "\n".join(lines)


def register(engine: Engine) -> None:
    engine.register_handler(HANDLER, flaky_handler)
