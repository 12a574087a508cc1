"""The engine process of the crash variant: drives the instances of one deployed generated model
with random steps from two threads until it is killed, printing "step" after every round.

python -m tests.models.crash_driver DATABASE_URL KEY SEED INCARNATION

Each incarnation starts one more instance and continues the ones already there; its clock starts
thirty days after the previous one's, so the timers the killed process left are due."""

from __future__ import annotations

import random
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from engine.api import Engine
from engine.core.settings import EngineSettings
from tests.engine.clock import ManualClock
from tests.models.driver import Driver, register
from tests.models.strategies import Spec, Task

# Modification can leave a parallel join waiting for good; the crash variant drives without it,
# so that every instance ends once the waits left are served.
CRASH_ACTIONS = tuple((name, weight) for name, weight in Driver.ACTIONS if name != "modify")


def instances_of(engine: Engine, key: str) -> list[str]:
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT id FROM process_instance WHERE definition_key = %s ORDER BY started_at, id",
            (key,),
        ).fetchall()
    return [str(row[0]) for row in rows]


def main(url: str, key: str, seed: int, incarnation: int) -> None:
    start = datetime(2026, 6, 1, 9, 0, tzinfo=UTC) + timedelta(days=30 * incarnation)
    clock = ManualClock(start)
    settings = EngineSettings(default_retries=1)
    with Engine(url, migrate=False, pool_size=4, clock=clock, settings=settings) as engine:
        register(engine)
        definition = engine.latest_definition(key)
        spec = Spec(key, Task("none"), engine.model(definition.id, key))
        driver = Driver(engine, clock, spec, seed, threads=2, starts=1)
        driver.ACTIONS = CRASH_ACTIONS
        driver.instances.extend(engine.instance(i).id for i in instances_of(engine, key))
        master = random.Random(seed * 1000 + incarnation)
        driver.start(master)
        print("ready", flush=True)
        sources = [random.Random(master.random()) for _ in range(driver.threads)]
        with ThreadPoolExecutor(driver.threads) as pool:
            while True:
                for future in [pool.submit(driver.step, rng) for rng in sources]:
                    future.result()
                print("step", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
