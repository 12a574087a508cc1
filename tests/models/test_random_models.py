"""Random models under concurrency: every generated model deploys, and random schedules from
several threads at once keep every invariant of the committed rows after every round."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from engine.api import Engine
from engine.core.settings import EngineSettings
from tests.engine.clock import ManualClock
from tests.fuzz_support import DEFAULT
from tests.fuzz_support import SLOW as SLOW_FUZZ
from tests.models.driver import Driver, register
from tests.models.invariants import Checker
from tests.models.replay import commit_order, final_state, replay, replay_mismatches
from tests.models.strategies import Spec, specs

# The engine's connection pools draw from the `random` module on their own threads (reconnection
# jitter) while a strategy draws, which Hypothesis takes for the strategy's own use.
pytestmark = pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")

SUPPRESSED = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
# INTERLOCK_MODEL_SHRINK=0 reports the first failure as drawn, unshrunk.
PHASES = (
    tuple(Phase)
    if os.environ.get("INTERLOCK_MODEL_SHRINK", "1") == "1"
    else (Phase.explicit, Phase.reuse, Phase.generate)
)
# The fuzz tests' settings (always the same examples, or random ones), with this module's phases.
SHORT = settings(DEFAULT, max_examples=30, phases=PHASES, suppress_health_check=SUPPRESSED)
SLOW = settings(
    SLOW_FUZZ,
    max_examples=int(os.environ.get("INTERLOCK_MODEL_EXAMPLES", "2000")),
    phases=PHASES,
    suppress_health_check=SUPPRESSED,
)


@dataclass
class Bench:
    engine: Engine
    clock: ManualClock
    url: str
    models: int = 0
    steps: int = 0
    snapshots: int = 0
    # Replays compared, their decisions, and how many of those the commit order moved.
    replays: int = 0
    decisions: int = 0
    overlapped: int = 0


@pytest.fixture(scope="module")
def bench(module_database_url: str) -> Iterator[Bench]:
    clock = ManualClock()
    with Engine(
        module_database_url,
        migrate=False,
        pool_size=8,
        clock=clock,
        settings=EngineSettings(default_retries=1),
    ) as engine:
        register(engine)
        made = Bench(engine, clock, module_database_url)
        started = time.monotonic()
        yield made
        print(
            f"\nrandom models: {made.models} models, {made.steps} steps, "
            f"{made.snapshots} snapshots checked in {time.monotonic() - started:.1f}s; "
            f"{made.replays} replays of {made.decisions} decisions, {made.overlapped} of them "
            "put in another place by their commit order"
        )


def drive(
    bench: Bench,
    spec: Spec,
    seed: int,
    rounds: int,
    cancel_left: bool = True,
) -> Driver:
    note(f"model {spec.describe()}\nseed {seed}")
    spec.deploy(bench.engine)
    checker = Checker(bench.url)
    driver = Driver(bench.engine, bench.clock, spec, seed, checker=checker)
    try:
        driver.run(rounds)
    finally:
        bench.models += 1
        bench.steps += driver.steps
        bench.snapshots += driver.checker.snapshots if driver.checker else 0
        for instance in driver.instances:  # leave no work behind for the next model
            if cancel_left and bench.engine.instance(instance).info().ended_at is None:
                bench.engine.instance(instance).cancel()
    return driver


@settings(SHORT, max_examples=60)
@given(spec=specs())
def test_every_generated_model_deploys(bench: Bench, spec: Spec) -> None:
    note(spec.describe())
    [definition] = spec.deploy(bench.engine).definitions
    assert definition["key"] == spec.key


@SHORT
@given(spec=specs(), seed=st.integers(0, 2**32 - 1))
def test_random_schedules_keep_every_invariant(bench: Bench, spec: Spec, seed: int) -> None:
    drive(bench, spec, seed, rounds=6)


@pytest.mark.slow
@pytest.mark.timeout(7200)
@SLOW
@given(spec=specs(), seed=st.integers(0, 2**32 - 1))
def test_many_random_schedules_keep_every_invariant(bench: Bench, spec: Spec, seed: int) -> None:
    drive(bench, spec, seed, rounds=12)


@settings(SHORT, max_examples=15)
@given(spec=specs(), seed=st.integers(0, 2**32 - 1))
def test_replay_equals_live(bench: Bench, spec: Spec, seed: int) -> None:
    """History and the outbox rebuild where every token ended and the instance's state; the
    same decisions applied one at a time, in the order they committed (`commit_order`), on one
    connection, end in the same state as the threaded run, whose actions overlap."""
    driver = drive(bench, spec, seed, rounds=6, cancel_left=False)
    assert replay_mismatches(bench.url, driver.instances) == []
    concurrent = final_state(bench.url, driver.instances)
    ordered, without_rows = commit_order(bench.url, driver.instances, driver.decisions)
    # The order comes from the commits, not from the order the decisions were recorded in:
    # recorded backwards, each instance's commands come out in the same order.
    backwards, _ = commit_order(bench.url, driver.instances, driver.decisions[::-1])
    for index in range(len(driver.instances)):
        assert [d for d in backwards if d.instance == index and d.key] == [
            d for d in ordered if d.instance == index and d.key
        ]
    note(f"decisions in commit order {ordered}\nwithout outbox rows {without_rows}")
    # Only a job is run without a row of any instance: one another thread ran first (or
    # retired), or one run again by another thread once its token had failed (the claim of the
    # failed token is refused, and counted down as the job's failure: only the job row changes).
    assert {(d.action, d.value) for d in without_rows} <= {
        ("run_job", "gone"),
        ("run_job", "not-owner"),
        ("run_job", "instance-not-active"),
        ("run_job", "failed"),
    }
    for instance in driver.instances:  # the replay's work must be its own instances' only
        if bench.engine.instance(instance).info().ended_at is None:
            bench.engine.instance(instance).cancel()
    refused: list[str] = []
    with Engine(
        bench.url,
        migrate=False,
        pool_size=1,
        clock=bench.clock,
        settings=EngineSettings(default_retries=1),
    ) as one:
        register(one)
        replayed = replay(one, spec, ordered, refused)
    note(f"refused in the replay: {refused}")
    bench.replays += 1
    bench.decisions += len(ordered)
    skipped = {id(d) for d in without_rows}
    recorded = [d for d in driver.decisions if id(d) not in skipped]
    bench.overlapped += sum(a is not b for a, b in zip(ordered, recorded, strict=True))
    assert replay_mismatches(bench.url, replayed) == []
    assert final_state(bench.url, replayed) == concurrent
    for instance in replayed:  # leave nothing waiting for the next model's signals
        if bench.engine.instance(instance).info().ended_at is None:
            bench.engine.instance(instance).cancel()
