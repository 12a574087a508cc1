"""The one waiting fetch-and-lock (engine/loops/fetching.py), through its blocking and awaiting
faces."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.external_tasks import FetchAndLock, TopicRequest
from engine.loops import fetching
from engine.model import ProcessModel

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Runs a coroutine on an event loop of its own thread: the suite's browser tests keep one
    running on the main thread."""
    result: list[T] = []
    failure: list[BaseException] = []

    def main() -> None:
        try:
            result.append(asyncio.run(coroutine))
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=main)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]


def external(key: str = "fetched", topic: str = "work") -> ProcessModel:
    return (
        ProcessBuilder(key)
        .start_event("start")
        .service_task("work", "Work", topic=topic)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )


def command(worker: str = "w", **options: bool) -> FetchAndLock:
    return FetchAndLock(worker, 1, (TopicRequest("work", 60_000),), **options)


def start_later(engine: Engine, seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, lambda: engine.start_latest("fetched"))
    timer.start()
    return timer


def test_no_timeout_is_one_look(engine: Engine) -> None:
    engine.deploy(external())
    began = time.monotonic()
    assert fetching.fetch_and_lock(engine, command()) == []
    assert time.monotonic() - began < 0.5
    instance = engine.start_latest("fetched")
    [task] = fetching.fetch_and_lock(engine, command())
    assert task["instance_id"] == str(instance.id)


def test_the_blocking_face_is_woken_by_new_work(engine: Engine) -> None:
    engine.deploy(external())
    start_later(engine, 0.3)
    began = time.monotonic()
    [task] = fetching.fetch_and_lock(engine, command(), 10)
    assert time.monotonic() - began < 3
    assert task["worker_id"] == "w"


def test_a_stop_ends_the_blocking_wait(engine: Engine) -> None:
    engine.deploy(external())
    stopping = threading.Event()
    threading.Timer(0.3, stopping.set).start()
    began = time.monotonic()
    assert fetching.fetch_and_lock(engine, command(), 20, stopping=stopping) == []
    assert time.monotonic() - began < 1.5


def test_the_awaiting_face_is_woken_by_new_work_and_holds_no_thread(engine: Engine) -> None:
    engine.deploy(external())
    in_threads = [0]

    async def run_blocking(fn: Callable[[], Any]) -> Any:
        in_threads[0] += 1
        try:
            return await asyncio.to_thread(fn)
        finally:
            in_threads[0] -= 1

    async def main() -> list[list[str]]:
        waits = [
            asyncio.ensure_future(
                fetching.fetch_and_lock_async(
                    engine, command(f"w{n}"), 10, run_blocking=run_blocking
                )
            )
            for n in range(20)
        ]
        await asyncio.sleep(0.5)
        assert in_threads == [0], "waiting fetches hold threads"
        for _ in range(20):
            await asyncio.to_thread(engine.start_latest, "fetched")
        return [[t["id"] for t in tasks] for tasks in await asyncio.gather(*waits)]

    locked = run(main())
    assert all(len(ids) == 1 for ids in locked)
    assert len({ids[0] for ids in locked}) == 20


def test_a_client_gone_ends_the_awaiting_wait(engine: Engine) -> None:
    engine.deploy(external())
    began = time.monotonic()

    async def gone() -> bool:
        return time.monotonic() - began > 0.2

    found = run(fetching.fetch_and_lock_async(engine, command(), 20, gone=gone))
    assert found == []
    assert time.monotonic() - began < 2


def test_a_key_is_spent_only_on_a_fetch_that_locked_tasks(engine: Engine) -> None:
    engine.deploy(external())
    fetch = command(roll_back_if_empty=True)
    assert fetching.fetch_and_lock(engine, fetch, 0.2, idempotency_key="k") == []
    start_later(engine, 0.2)
    [task] = run(fetching.fetch_and_lock_async(engine, fetch, 10, idempotency_key="k"))
    engine.start_latest("fetched")
    assert fetching.fetch_and_lock(engine, fetch, idempotency_key="k") == [task]
    [other] = engine.fetch_and_lock("w", {"work": 60_000})
    assert other["id"] != task["id"]
