"""Crashes anywhere: the driver runs here and the engine in another process
(tests/models/engine_process.py, tests/models/crash_driver.py), which runs each round's actions
on two threads and is killed with SIGKILL at random moments: between rounds, after a random
number of a round's replies, or a random short time into a round, with calls in flight. A new
process takes over and the driver goes on. A call killed in flight counts as a decision exactly
when its idempotency key's row committed.

After every kill the invariants of the committed rows hold. Once the waits left are served,
history and the outbox agree with the live rows, and the same committed decisions, in the order
they committed, replayed one at a time without crashes into new instances of the same model,
end in the same final state."""

from __future__ import annotations

import os
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, cast
from uuid import UUID

import psycopg
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.executor import fingerprint
from engine.core.settings import EngineSettings
from tests.engine.clock import ManualClock
from tests.models.driver import register
from tests.models.engine_process import (
    CrashDriver,
    EngineProcess,
    NotCommitted,
    RemoteHandle,
    commit_order,
)
from tests.models.invariants import Checker
from tests.models.replay import final_state, replay, replay_mismatches
from tests.models.strategies import Spec, specs
from tests.waiting import wait_until

pytestmark = pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")

CRASHES = settings(
    max_examples=int(os.environ.get("INTERLOCK_CRASH_EXAMPLES", "2")),
    derandomize=True,
    database=None,
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),  # each example takes seconds
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    print_blob=True,
)
ROUNDS = 6


@dataclass
class Rig:
    url: str
    local: Engine
    clock: ManualClock
    process: EngineProcess | None = None
    checker: Checker | None = None
    checking: threading.Lock = field(default_factory=threading.Lock)
    counts: Counter[str] = field(default_factory=Counter)

    def check(self) -> None:
        with self.checking:
            if self.checker is not None:
                self.checker.check()


@pytest.fixture(scope="module")
def rig(module_database_url: str) -> Iterator[Rig]:
    clock = ManualClock()
    settings = EngineSettings(default_retries=1)
    with Engine(
        module_database_url, migrate=False, pool_size=4, clock=clock, settings=settings
    ) as local:
        register(local)
        made = Rig(module_database_url, local, clock)
        made.process = EngineProcess(module_database_url, clock, local, on_kill=made.check)
        started = time.monotonic()
        made.process.start()
        try:
            yield made
        finally:
            made.process.close()
            counts = made.counts
            print(
                f"\ncrashes: {counts['models']} models, {counts['rounds']} rounds, "
                f"{counts['decisions']} decisions, {counts['kills']} kills, "
                f"{counts['kills in flight']} with calls in flight: "
                f"{counts['in flight, committed']} calls committed, "
                f"{counts['in flight, not committed']} not committed; "
                f"{counts['replayed']} decisions replayed in {time.monotonic() - started:.1f}s"
            )


def plan_kill(process: EngineProcess, rng: random.Random) -> str:
    """Arm a kill for this round: after a number of its replies, or a moment after one of its
    calls is sent, or some time into it, or (returned "between") once it is over."""
    how = rng.choice(["between", "replies", "request", "request", "delay"])
    if how == "replies":
        process.kill_after_replies(rng.randint(1, 2))
    elif how == "request":
        process.kill_after_request(rng.randint(1, 2), rng.uniform(0.0, 0.01))
    elif how == "delay":
        process.kill_after(rng.uniform(0.0, 0.03))
    return how


def drive_with_kills(rig: Rig, driver: CrashDriver, seed: int) -> None:
    """`Driver.run` with kills: starts, rounds of one step per thread, kills, the drain."""
    process = rig.process
    assert process is not None and driver.checker is not None
    driver.checker.pin(driver.spec.key, driver.spec.model)
    master = random.Random(seed)
    plans = random.Random(seed ^ 0x5EED)
    killed = set(plans.sample(range(ROUNDS), plans.randint(2, 3)))
    for _ in range(driver.starts):
        driver.start(master)
    rig.check()
    sources = [random.Random(master.random()) for _ in range(driver.threads)]
    with ThreadPoolExecutor(driver.threads) as pool:
        for round_ in range(ROUNDS):
            # A plan that does not fire in its round (a round may send no call) stays armed
            # until the next plan's round, or the last round, which fire it at their start.
            how = None
            if round_ in killed:
                if process.armed():
                    process.kill()
                    process.settle()
                how = plan_kill(process, plans)
            for future in [pool.submit(driver.step, rng) for rng in sources]:
                future.result()
            if how == "between" or (round_ == ROUNDS - 1 and process.armed()):
                process.kill()
            process.settle()
            rig.check()
    process.disarm()
    rig.counts["rounds"] += ROUNDS
    driver.drain(master)


@CRASHES
@given(spec=specs(), seed=st.integers(0, 2**16))
def test_killed_engine_processes_keep_every_invariant_and_the_final_state(
    rig: Rig, spec: Spec, seed: int
) -> None:
    note(f"model {spec.describe()}\nseed {seed}")
    assert rig.process is not None
    spec.deploy(rig.local)
    rig.checker = Checker(rig.url)
    driver = CrashDriver(
        cast(Engine, rig.process), rig.clock, spec, seed, threads=2, checker=rig.checker
    )
    replayed: list[UUID] = []
    stats = Counter(rig.process.stats)
    try:
        drive_with_kills(rig, driver, seed)
        rig.counts.update(rig.process.stats - stats)
        rig.counts["models"] += 1
        rig.counts["decisions"] += len(driver.decisions)
        assert replay_mismatches(rig.url, driver.instances) == []
        decisions, instances, problems = commit_order(
            rig.url, driver.decisions, driver.keys, driver.instances, driver.cancelled
        )
        assert problems == []
        crashed = final_state(rig.url, instances)
        note(f"decisions in commit order {decisions}")
        cancel_left(rig.local, driver.instances)  # the replay's signals reach its own only
        refused: list[str] = []
        replayed = replay(rig.local, spec, decisions, refused)
        rig.counts["replayed"] += len(decisions)
        note(f"refused in the replay: {refused}")
        assert replay_mismatches(rig.url, replayed) == []
        assert final_state(rig.url, replayed) == crashed
    finally:
        rig.checker = None
        cancel_left(rig.local, [*driver.instances, *replayed])


def cancel_left(engine: Engine, instances: list[UUID]) -> None:
    for instance in instances:
        if engine.instance(instance).info().ended_at is None:
            engine.instance(instance).cancel()


# -- the call killed in flight, made to happen ----------------------------------------------------

INFLIGHT = "crash-inflight"


def _deploy_inflight(rig: Rig) -> None:
    model = (
        ProcessBuilder(INFLIGHT)
        .start_event("Start")
        .user_task("T")
        .end_event("End")
        .chain("Start", "T", "End")
        .build()
    )
    rig.local.deploy(model)


def _started(rig: Rig) -> int:
    with rig.local.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM process_instance WHERE definition_key = %s", (INFLIGHT,)
        ).fetchone()
    return int(row[0]) if row else 0


def _kill_while_blocked(rig: Rig, blocker: psycopg.Connection[Any], call: Callable[[], Any]) -> Any:
    """Run `call` on a thread; once the engine process's session waits for the lock `blocker`
    holds, kill the process, and release the lock only once it is dead. What `call` returned or
    raised."""
    process = rig.process
    assert process is not None and process.current is not None
    child = process.current
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except Exception as error:
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()

    def waiting() -> bool:
        with rig.local.connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                "AND wait_event_type = 'Lock'",
                (child.name,),
            ).fetchone()
        return bool(row and row[0])

    wait_until(waiting, "the call to wait for the lock")
    process.kill()
    wait_until(lambda: child.process.poll() is not None, "the engine process to die")
    blocker.rollback()
    thread.join(120)
    process.settle()
    return outcome.get("error", outcome.get("value"))


def test_a_call_killed_after_sending_its_commit_counts_as_committed(rig: Rig) -> None:
    """The start's transaction waits to write its idempotency row behind an uncommitted row of
    the same key, its COMMIT already sent in the same pipeline; the process is killed there. Once
    the other row is gone, the orphaned session commits the start: the call is found committed,
    sent again and answered from its key's row, and the instance started once."""
    _deploy_inflight(rig)
    process = rig.process
    assert process is not None
    before, committed = _started(rig), process.stats["in flight, committed"]
    key = f"inflight-{uuid.uuid4().hex}"
    with psycopg.connect(rig.url) as blocker:
        blocker.execute(
            "INSERT INTO idempotency (principal, key, command, fingerprint, result) "
            "VALUES ('', %s, 'StartInstance', '', '{}')",
            (key,),
        )
        handle = _kill_while_blocked(
            rig,
            blocker,
            lambda: process.start_latest(INFLIGHT, {"pick": 0}, idempotency_key=key),
        )
    assert isinstance(handle, RemoteHandle), handle
    assert process.stats["in flight, committed"] == committed + 1
    assert _started(rig) == before + 1
    assert [t.node_id for t in rig.local.instance(handle.id).user_tasks()] == ["T"]
    handle.cancel()


def test_a_call_killed_before_sending_its_commit_counts_as_not_committed(rig: Rig) -> None:
    """The start waits for its key's advisory lock, which is taken before anything is written;
    the process is killed there: the orphaned session never commits, and the call raises
    NotCommitted, which a driver passes over as a refusal."""
    _deploy_inflight(rig)
    process = rig.process
    assert process is not None
    before, lost = _started(rig), process.stats["in flight, not committed"]
    key = f"inflight-{uuid.uuid4().hex}"
    lock = int.from_bytes(bytes.fromhex(fingerprint("", key))[:8], "big") - 2**63
    with psycopg.connect(rig.url) as blocker:
        blocker.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        error = _kill_while_blocked(
            rig,
            blocker,
            lambda: process.start_latest(INFLIGHT, {"pick": 0}, idempotency_key=key),
        )
    assert isinstance(error, NotCommitted), error
    assert process.stats["in flight, not committed"] == lost + 1
    assert _started(rig) == before
