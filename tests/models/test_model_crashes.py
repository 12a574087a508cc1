"""Crashes anywhere: the engine process driving a generated model is killed with SIGKILL after a
random number of rounds, started again and killed again; after every kill the invariants of the
committed rows hold, and once the waits left are served every instance ends, with history and
the outbox still agreeing with the live rows."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from engine.api import Engine
from engine.core.settings import EngineSettings
from tests.engine.clock import ManualClock
from tests.models.crash_driver import instances_of
from tests.models.driver import Driver, register
from tests.models.invariants import Checker
from tests.models.replay import replay_mismatches
from tests.models.strategies import Spec, specs

ROOT = Path(__file__).resolve().parents[2]

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

counts = {"models": 0, "crashes": 0, "rounds": 0}


@pytest.fixture(scope="module")
def crash_engine(module_database_url: str) -> Iterator[tuple[Engine, ManualClock, str]]:
    clock = ManualClock()
    settings = EngineSettings(default_retries=1)
    with Engine(
        module_database_url, migrate=False, pool_size=4, clock=clock, settings=settings
    ) as engine:
        register(engine)
        started = time.monotonic()
        yield engine, clock, module_database_url
        print(
            f"\ncrashes: {counts['models']} models, {counts['crashes']} kills after "
            f"{counts['rounds']} rounds in {time.monotonic() - started:.1f}s"
        )


def run_and_kill(url: str, key: str, seed: int, incarnation: int, rounds: int) -> None:
    """Start the engine process, wait for `rounds` of its steps, then SIGKILL it mid-round."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.models.crash_driver", url, key, str(seed), str(incarnation)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT))},
    )
    assert worker.stdout is not None
    try:
        assert worker.stdout.readline().strip() == b"ready"
        for _ in range(rounds):
            assert worker.stdout.readline().strip() == b"step"
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
        worker.stdout.close()


@CRASHES
@given(spec=specs(), seed=st.integers(0, 2**16))
def test_killed_engine_processes_leave_every_invariant(
    crash_engine: tuple[Engine, ManualClock, str], spec: Spec, seed: int
) -> None:
    engine, clock, url = crash_engine
    note(f"model {spec.describe()}\nseed {seed}")
    spec.deploy(engine)
    checker = Checker(url)
    checker.pin(spec.key, spec.model)
    rng = random.Random(seed)
    for incarnation in range(3):
        rounds = rng.randint(0, 6)
        run_and_kill(url, spec.key, seed, incarnation, rounds)
        counts["crashes"] += 1
        counts["rounds"] += rounds
        checker.instances = {UUID(i) for i in instances_of(engine, spec.key)}
        checker.check()
    counts["models"] += 1
    # Served here to the end: every instance ends, and still agrees with its history.
    clock.now = max(clock.now, clock.now.replace(year=2027))
    driver = Driver(engine, clock, spec, seed, checker=checker)
    driver.instances.extend(checker.instances)
    driver.drain(random.Random(seed))
    assert replay_mismatches(url, driver.instances) == []
