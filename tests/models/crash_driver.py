"""The engine process of the crash variant: it runs the Engine calls a driver in another process
sends it, until it is killed (or its input ends).

python -m tests.models.crash_driver DATABASE_URL

The calls come over stdin and the replies go back over stdout, each a pickled tuple behind its
length (our own test processes talking to each other, never request text):

    request (id, method, args, kwargs, key, now)   reply (id, "ok" | "error", value)

`method` names an `Engine` method, or `instance.<name>` for a method of the handle of the
instance `args[0]`. Every call runs under its idempotency `key`: a method that takes
`idempotency_key` is given it (unless the caller passed one), and every other command the call
runs through `Engine.run` gets it there, so that whether a call killed in flight committed is
in the rows (its `idempotency` row is written in the command's own transaction). A call that ran
no command under its key is an error. Each call runs at the time `now` the driver sent with it,
on one of two threads, so a round's calls run concurrently."""

from __future__ import annotations

import inspect
import pickle
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, TypeVar

from engine.api import Engine
from engine.core.executor import Command, Idempotency, Result
from engine.core.settings import EngineSettings
from engine.handle import InstanceHandle
from tests.engine.clock import ManualClock
from tests.models.driver import register
from tests.models.wire import InstanceRef, receive, send

THREADS = 2
T = TypeVar("T", bound=Result)


class CallClock(ManualClock):
    """The time of the call each thread is serving (calls of one round run concurrently, each
    at the time its driver sent); outside a call, the latest time sent."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def __call__(self) -> datetime:
        now: datetime | None = getattr(self.local, "now", None)
        return self.now if now is None else now


class _Call(threading.local):
    key: str | None = None
    runs: int = 0


class KeyedEngine(Engine):
    """An Engine whose commands run under the idempotency key of the call being served."""

    call = _Call()

    def run(self, command: Command[T], idempotency_key: str | Idempotency | None = None) -> T:
        key = self.call.key
        if idempotency_key is None:
            idempotency_key = key
        given = idempotency_key.key if isinstance(idempotency_key, Idempotency) else idempotency_key
        if key is not None and given == key:
            self.call.runs += 1
        return super().run(command, idempotency_key)


def serve(engine: KeyedEngine, clock: CallClock, message: tuple[Any, ...]) -> tuple[Any, ...]:
    request, method, args, kwargs, key, now = message
    clock.local.now = now
    clock.now = max(clock.now, now)
    engine.call.key, engine.call.runs = key, 0
    try:
        if method.startswith("instance."):
            target: Any = engine.instance(args[0])
            args = args[1:]
            method = method.removeprefix("instance.")
        else:
            target = engine
        function = getattr(target, method)
        if "idempotency_key" in inspect.signature(function).parameters:
            kwargs = {"idempotency_key": key, **kwargs}
        result = function(*args, **kwargs)
        if engine.call.runs == 0:
            raise AssertionError(f"{method} ran no command under its idempotency key")
        if isinstance(result, InstanceHandle):
            result = InstanceRef(result.id)
        return (request, "ok", result)
    except Exception as error:
        return (request, "error", pack_error(error))
    finally:
        engine.call.key = None
        clock.local.now = None


def pack_error(error: Exception) -> tuple[bytes | None, str]:
    """The error pickled (None when it does not pickle back), and its traceback as text."""
    text = "".join(traceback.format_exception(error))
    try:
        data = pickle.dumps(error)
        pickle.loads(data)
    except Exception:
        return None, text
    return data, text


def main(url: str) -> None:
    replies = sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries the replies only
    clock = CallClock()
    settings = EngineSettings(default_retries=1)
    written = threading.Lock()
    engine = KeyedEngine(url, migrate=False, pool_size=4, clock=clock, settings=settings)
    with engine:
        register(engine)

        def answer(message: tuple[Any, ...]) -> None:
            reply = serve(engine, clock, message)
            with written:
                send(replies, reply)

        send(replies, ("ready", "ok", None))
        with ThreadPoolExecutor(THREADS) as pool:
            while (message := receive(sys.stdin.buffer)) is not None:
                pool.submit(answer, message)


if __name__ == "__main__":
    main(sys.argv[1])
