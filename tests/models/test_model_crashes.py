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
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import cast
from uuid import UUID

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from engine.api import Engine
from engine.core.settings import EngineSettings
from engine.model import ParallelGateway
from tests.engine.clock import ManualClock
from tests.models.driver import register
from tests.models.engine_process import CrashDriver, EngineProcess, commit_order
from tests.models.invariants import Checker
from tests.models.replay import final_state, replay, replay_mismatches
from tests.models.strategies import Spec, specs

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
ROUNDS = 8


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
            counts = made.counts + made.process.stats
            print(
                f"\ncrashes: {counts['models']} models, {counts['rounds']} rounds, "
                f"{counts['decisions']} decisions, {counts['kills']} kills, "
                f"{counts['kills in flight']} with calls in flight: "
                f"{counts['in flight, committed']} calls committed, "
                f"{counts['in flight, not committed']} not committed; "
                f"{counts['replayed']} decisions replayed in {time.monotonic() - started:.1f}s"
            )


def plan_kill(process: EngineProcess, rng: random.Random) -> str:
    """Arm a kill for this round: after a number of its replies, or some time into it, or
    (returned "between") once it is over."""
    how = rng.choice(["between", "replies", "replies", "delay"])
    if how == "replies":
        process.kill_after_replies(rng.randint(1, 2))
    elif how == "delay":
        process.kill_after(rng.uniform(0.0, 0.03))
    return how


def drive_with_kills(rig: Rig, driver: CrashDriver, seed: int) -> None:
    """`Driver.run` with kills: starts, rounds of one step per thread, kills, the drain."""
    process = rig.process
    assert process is not None and driver.checker is not None
    driver.checker.parallel_joins[driver.spec.key] = {
        node.id: len(node.incoming)
        for node in driver.spec.model.nodes
        if isinstance(node, ParallelGateway) and len(node.incoming) > 1
    }
    master = random.Random(seed)
    plans = random.Random(seed ^ 0x5EED)
    killed = set(plans.sample(range(ROUNDS), plans.randint(2, 3)))
    for _ in range(driver.starts):
        driver.start(master)
    rig.check()
    sources = [random.Random(master.random()) for _ in range(driver.threads)]
    with ThreadPoolExecutor(driver.threads) as pool:
        for round_ in range(ROUNDS):
            how = plan_kill(process, plans) if round_ in killed else None
            for future in [pool.submit(driver.step, rng) for rng in sources]:
                future.result()
            if how is not None:
                process.kill()  # now, if the plan did not fire during the round
            process.disarm()
            rig.check()
    rig.counts["rounds"] += ROUNDS
    driver.drain(master)


@CRASHES
@given(spec=specs(), seed=st.integers(0, 2**16))
def test_killed_engine_processes_keep_every_invariant_and_the_final_state(
    rig: Rig, spec: Spec, seed: int
) -> None:
    note(f"model {spec.describe()}\nseed {seed}")
    assert rig.process is not None
    rig.local.deploy(spec.model)
    rig.checker = Checker(rig.url)
    driver = CrashDriver(
        cast(Engine, rig.process), rig.clock, spec, seed, threads=2, checker=rig.checker
    )
    replayed: list[UUID] = []
    try:
        drive_with_kills(rig, driver, seed)
        rig.counts["models"] += 1
        rig.counts["decisions"] += len(driver.decisions)
        assert replay_mismatches(rig.url, driver.instances) == []
        decisions, instances, problems = commit_order(
            rig.url, driver.decisions, driver.keys, driver.instances
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
