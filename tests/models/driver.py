"""A driver of random schedules over a generated model.

It starts instances, then runs rounds: in each round several threads, each with its own random
source drawn from the seed and its own pooled connections, perform one random enabled action at
once (complete a user task, fetch and complete, fail or throw from an external task, move the
injected clock and run the due jobs, correlate a message, broadcast a signal, set a variable,
retry an incident, modify or cancel an instance); after every round the invariants are checked
on the committed rows. Every action that took effect is recorded as a decision (what it did to
which node of which instance), so that a run can be repeated sequentially on one connection.
Each action's command runs under an idempotency key of its own, recorded with its decision: the
key's entry is written in the command's transaction, which tells the outbox rows of that
transaction, and so the order the overlapping actions committed in (tests/models/replay.py). A
final drain serves every wait left until each instance ends."""

from __future__ import annotations

import contextlib
import random
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

from engine.api import Engine
from engine.commands.external_tasks import (
    CompleteExternalTask,
    ExternalTaskBpmnError,
    FailExternalTask,
)
from engine.commands.incidents import RetryIncident
from engine.commands.instances import CancelInstance, SetVariables
from engine.commands.modification import ModifyInstance
from engine.core.handlers import TaskContext
from engine.errors import InterlockError
from engine.language.variables import infer
from engine.model import BoundaryEvent
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
    """One action that took effect: its name, the index of its instance and the node acted on;
    `key`, the idempotency key its command ran under (None: the drain's own, one at a time)."""

    action: str
    instance: int
    node: str | None
    value: Any = None
    key: str | None = None


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

    def _record(
        self,
        action: str,
        instance: UUID,
        node: str | None,
        value: Any = None,
        key: str | None = None,
    ) -> None:
        root = self.root(instance)  # a called instance's decision names its family's root
        with self.lock:
            self.decisions.append(Decision(action, self.instances.index(root), node, value, key))

    def _key(self) -> str:
        """A fresh idempotency key for one command."""
        return f"model-{uuid4()}"

    # -- actions ----------------------------------------------------------------------------------

    def start(self, rng: random.Random) -> None:
        pick = rng.choice(PICKS)
        key = self._key()
        variables = {"pick": pick, "flaky": False}
        handle = self.engine.start_latest(self.spec.key, variables, idempotency_key=key)
        with self.lock:
            self.instances.append(handle.id)
            if self.checker is not None:
                self.checker.instances.add(handle.id)
        self._record("start", handle.id, None, pick, key)

    def complete_task(self, rng: random.Random) -> None:
        found = self._pick(
            rng,
            "SELECT id, instance_id, node_id FROM user_task "
            "WHERE instance_id = ANY(%s) AND state = 'Open'",
        )
        if found is not None:
            key = self._key()
            self.engine.complete_task(found[0], idempotency_key=key)
            self._record("complete_task", found[1], found[2], key=key)

    def external(self, rng: random.Random) -> None:
        for task in self.engine.fetch_and_lock(WORKER, {TOPIC: 600_000}, max_tasks=1):
            roll = rng.random()
            instance = UUID(str(task["instance_id"]))
            node = str(task["node_id"])
            task_id, key = UUID(str(task["id"])), self._key()
            mine = self.rows(
                "SELECT 1 FROM process_instance WHERE id = ANY(%s) AND id = %s", instance
            )
            if not mine:
                self.engine.unlock_external_task(task["id"])
            elif roll < 0.6:
                self.engine.run(CompleteExternalTask(task_id, WORKER), idempotency_key=key)
                self._record("complete_external", instance, node, key=key)
            elif roll < 0.8:
                self.engine.run(
                    FailExternalTask(task_id, WORKER, "down", retries=0), idempotency_key=key
                )
                self._record("fail_external", instance, node, key=key)
            else:
                self.engine.run(
                    ExternalTaskBpmnError(task_id, WORKER, ERROR_CODE), idempotency_key=key
                )
                if not self._caught(node):
                    # Uncaught, the error ends its token's path there (as Camunda's): a
                    # parallel join after it waits for good, like after a cancelled token.
                    with self.lock:
                        self.modified.add(instance)
                self._record("bpmn_error", instance, node, key=key)

    def _caught(self, node: str) -> bool:
        """Whether an error boundary event of the node catches the BPMN error thrown there."""
        return any(
            isinstance(n, BoundaryEvent) and n.attached_to == node and n.is_error
            for n in self.spec.model.nodes
        )

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
            key = self._key()
            outcome = self.engine.run_job(found[0], idempotency_key=key).outcome
            self._record("run_job", found[1], found[2], outcome, key)

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
            key = self._key()
            self.engine.correlate_message(
                found[0], instance_id=found[1], all=every, idempotency_key=key
            )
            self._record("message", found[1], found[2], every, key)

    def signal(self, rng: random.Random, starts: bool = True) -> None:
        """Broadcast a signal some instance waits for (to an event subprocess's start too when
        `starts`). It is recorded once for each instance it reached, with the signal's name and
        how many of that instance's subscriptions it reached: the broadcast reads the
        subscriptions before it locks their instances, so it may miss one that an overlapping
        command creates, which a replay must miss too."""
        found = self._pick(
            rng,
            "SELECT name, instance_id, node_id FROM event_subscription "
            "WHERE instance_id = ANY(%s) AND kind = 'signal' AND (%s OR node_id NOT LIKE %s)",
            starts,
            f"{EVENT_START}%",
        )
        if found is not None:
            key = self._key()
            delivered = self.engine.signal(found[0], idempotency_key=key).deliveries
            family = {UUID(str(i)) for (i,) in self.rows("SELECT unnest(%s::uuid[])")}
            reached = Counter(
                self.root(UUID(d["instance_id"]))
                for d in delivered
                if d["kind"] == "instance" and UUID(d["instance_id"]) in family
            )  # (by family root; another run's instances waiting for it are not ours)
            for instance, count in sorted(
                reached.items(), key=lambda i: self.instances.index(i[0])
            ):
                self._record("signal", instance, found[2], (found[0], count), key)

    def set_variable(self, rng: random.Random) -> None:
        found = self._pick(rng, ROOTS_OPEN)  # (a called instance's are set by the drain)
        if found is not None:
            values = {"pick": rng.choice(PICKS), "flaky": rng.random() < 0.3}
            self._set_variables(found[0], values)

    def retry_incident(self, rng: random.Random) -> None:
        found = self._pick(
            rng,
            "SELECT id, instance_id, node_id FROM incident "
            "WHERE instance_id = ANY(%s) AND state = 'Open'",
        )
        if found is not None:
            self._set_variables(found[1], {"flaky": False})
            key = self._key()
            self.engine.run(RetryIncident(found[0]), idempotency_key=key)
            self._record("retry_incident", found[1], found[2], key=key)

    def _set_variables(self, instance: UUID, values: dict[str, Any]) -> None:
        key = self._key()
        typed = {name: infer(value) for name, value in values.items()}
        self.engine.run(SetVariables(instance, typed), idempotency_key=key)
        self._record("set_variables", instance, self.calling_node(instance), values, key)

    def calling_node(self, instance: UUID) -> str | None:
        """The call activity that called `instance` (None: a root). Node ids are unique across
        a family, so the node names where in it a decision set variables."""
        if instance in self.instances:
            return None
        with self.engine.connection() as conn:
            row = conn.execute(
                "SELECT t.node_id FROM process_instance p JOIN token t ON t.id = p.super_token_id "
                "WHERE p.id = %s",
                (instance,),
            ).fetchone()
        return None if row is None else str(row[0])

    def modify(self, rng: random.Random) -> None:
        """Cancel a waiting token, or start a token before a top-level task."""
        if rng.random() < 0.5:
            found = self._pick(
                rng,
                "SELECT id, instance_id, node_id FROM token WHERE instance_id = ANY(%s) "
                "AND state = 'Waiting'",
            )
            if found is not None:
                key = self._key()
                self.engine.run(
                    ModifyInstance(found[1], (CancelToken(found[0]),)), idempotency_key=key
                )
                with self.lock:
                    self.modified.add(found[1])
                # The node it was cancelled at: it may have moved on since it was read.
                with self.engine.connection() as conn:
                    row = conn.execute(
                        "SELECT node_id FROM token WHERE id = %s", (found[0],)
                    ).fetchone()
                self._record("cancel_token", found[1], found[2] if row is None else row[0], key=key)
            return
        tasks = sorted(
            n.id for n in self.spec.model.nodes if n.parent is None and n.id.startswith("T")
        )
        found = self._pick(rng, ROOTS_OPEN)
        if tasks and found is not None:
            node = rng.choice(tasks)
            key = self._key()
            self.engine.run(
                ModifyInstance(found[0], (StartBefore(node_id=node),)), idempotency_key=key
            )
            with self.lock:
                self.modified.add(found[0])
            self._record("start_before", found[0], node, key=key)

    def cancel(self, rng: random.Random) -> None:
        found = self._pick(rng, ROOTS_OPEN)
        if found is not None:
            key = self._key()
            self.engine.run(CancelInstance(found[0]), idempotency_key=key)
            self._record("cancel", found[0], None, key=key)

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
        with contextlib.suppress(InterlockError):
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
        """Serve every wait, one action at a time, until every instance has ended. The start
        events of event subprocesses are left alone: a scope ends without them, and each message
        or signal to a non-interrupting one starts one more run, so that serving it in every
        pass (beside one task completed a pass) would keep its scope open for good."""
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
                with self.engine.connection() as conn:
                    current = dict(
                        conn.execute(
                            "SELECT name, value FROM variable WHERE instance_id = %s "
                            "AND scope_key = '' AND name = ANY(%s)",
                            (instance, list(settled)),
                        ).fetchall()
                    )
                if current != settled:
                    with contextlib.suppress(InterlockError):
                        self._set_variables(instance, settled)
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
