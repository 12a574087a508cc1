"""The driver's side of the crash variant: `EngineProcess` stands for an `Engine` whose commands
run in another process (tests/models/crash_driver.py), which the test kills with SIGKILL at
random moments and replaces; `CrashDriver` is the `Driver` over it.

Every call goes out with an idempotency key (the caller's `idempotency_key`, or one made here).
When the process dies with calls in flight, the process's sessions are waited out (their
backends end once they have finished what they had received), then each key is looked up: a
call whose key is in the `idempotency` table committed, and is sent again to the next process,
which answers it from that row (nothing runs twice); a call whose key is not there did not
commit and raises `NotCommitted`, a refusal the driver passes over as it does a lost race. Reads
(`connection()`) run in this process on an engine of its own.

A standby process is started ahead of need (importing the engine takes seconds on a busy
machine), so a restart takes as long as a handshake."""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any
from uuid import UUID

import psycopg

from engine.api import Engine
from engine.errors import InterlockError
from engine.semantics.modification import CancelToken
from tests.engine.clock import ManualClock
from tests.models.driver import Decision, Driver
from tests.models.wire import InstanceRef, receive, send
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


class NotCommitted(InterlockError):
    """The engine process was killed while this call was in flight, and its command did not
    commit."""

    code = "NotCommitted"


class _Reply:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: tuple[str, Any] = ("", None)

    def set(self, status: str, value: Any) -> None:
        self.value = (status, value)
        self.done.set()

    def wait(self) -> tuple[str, Any]:
        if not self.done.wait(300):
            raise AssertionError("no reply from the engine process")
        return self.value


@dataclass
class _Child:
    process: subprocess.Popen[bytes]
    name: str  # its sessions' application_name

    @property
    def stdin(self) -> IO[bytes]:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def stdout(self) -> IO[bytes]:
        assert self.process.stdout is not None
        return self.process.stdout


@dataclass
class _Pending:
    key: str
    reply: _Reply = field(default_factory=_Reply)


class RemoteHandle:
    """`engine.instance(id)` over the process: its methods are calls `instance.<name>`."""

    def __init__(self, process: EngineProcess, instance_id: UUID) -> None:
        self.process = process
        self.id = instance_id

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.process.call(f"instance.{name}", self.id, *args, **kwargs)

        return call


class EngineProcess:
    """An Engine whose methods run in a child process, killed and replaced at will."""

    def __init__(
        self,
        url: str,
        clock: ManualClock,
        local: Engine,
        on_kill: Callable[[], None] = lambda: None,
    ) -> None:
        self.url, self.clock, self.local, self.on_kill = url, clock, local, on_kill
        self.lock = threading.Lock()
        self.alive = threading.Event()
        self.pending: dict[int, _Pending] = {}
        self.requests = itertools.count()
        self.current: _Child | None = None
        self.standby: _Child | None = None
        self.last = threading.local()
        self.stats: Counter[str] = Counter()
        self.failure: BaseException | None = None
        self.killing = False
        self.replies_left: int | None = None
        self.requests_left: int | None = None
        self.request_delay = 0.0
        self.timer: threading.Timer | None = None

    # -- the Engine's face ------------------------------------------------------------------------

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        with self.local.connection() as conn:
            yield conn

    def instance(self, instance_id: UUID | str) -> RemoteHandle:
        return RemoteHandle(self, UUID(str(instance_id)))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call(name, *args, **kwargs)

        return call

    def last_key(self) -> str | None:
        """The key of the last call this thread made."""
        key: str | None = getattr(self.last, "key", None)
        return key

    def last_cancelled(self) -> UUID | None:
        """The token the last call this thread made cancelled, if it was a CancelToken."""
        args = getattr(self.last, "args", ())
        found = [a.id for a in args if isinstance(a, CancelToken)]
        return found[0] if found else None

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        given = kwargs.get("idempotency_key")
        if method == "run" and len(args) > 1:
            given = args[1]
        given = getattr(given, "key", given)
        key = str(given) if given is not None else f"crash-{uuid.uuid4().hex}"
        self.last.key, self.last.args = key, args
        while True:
            status, value = self._send(method, args, kwargs, key).wait()
            if status == "ok":
                return RemoteHandle(self, value.id) if isinstance(value, InstanceRef) else value
            if status == "error":
                data, text = value
                error = _unpickle(data)
                if isinstance(error, InterlockError):
                    raise error
                raise AssertionError(f"{method} failed in the engine process:\n{text}")
            if status == "failed":
                raise AssertionError("the engine process or a kill's aftermath failed") from value
            if not value:  # killed in flight, not committed
                raise NotCommitted(f"{method} was in flight when its process was killed")
            # Killed in flight after its commit: the next process answers from its key's row.

    def _send(self, method: str, args: Any, kwargs: Any, key: str) -> _Reply:
        pending = _Pending(key)
        while True:
            if not self.alive.wait(300):
                raise AssertionError("the engine process never came back")
            with self.lock:
                if self.failure is not None:
                    raise AssertionError(
                        "the engine process or a kill's aftermath failed"
                    ) from self.failure
                if not self.alive.is_set():
                    continue
                request = next(self.requests)
                self.pending[request] = pending
                child = self.current
                assert child is not None
                message = (request, method, args, kwargs, key, self.clock.now)
                # If it died, its reader resolves the call by its key.
                with contextlib.suppress(OSError):
                    send(child.stdin, message)
                if self.requests_left is not None:
                    self.requests_left -= 1
                    if self.requests_left <= 0:
                        self.requests_left = None
                        self.timer = threading.Timer(self.request_delay, self.kill)
                        self.timer.start()
                return pending.reply

    # -- the process ------------------------------------------------------------------------------

    def start(self) -> None:
        self.standby = self._spawn()
        self._activate()

    def close(self) -> None:
        """End the processes (the current one by closing its input: it finishes its calls)."""
        if self.timer is not None:
            self.timer.cancel()
        with contextlib.suppress(AssertionError):
            self.settle()
        with self.lock:
            self.alive.clear()
            children = [c for c in (self.current, self.standby) if c is not None]
            self.current = self.standby = None
        for child in children:
            with contextlib.suppress(OSError):
                child.stdin.close()
        for child in children:
            try:
                child.process.wait(60)
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
            child.stdout.close()

    def _spawn(self) -> _Child:
        name = f"crash-engine-{uuid.uuid4().hex[:12]}"
        path = os.environ.get("PYTHONPATH", str(ROOT))
        env = {**os.environ, "PGAPPNAME": name, "PYTHONPATH": path}
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.models.crash_driver", self.url],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        return _Child(process, name)

    def _activate(self) -> None:
        """Make the standby the current process once it is ready; start the next standby."""
        child = self.standby
        assert child is not None
        ready = receive(child.stdout)
        if ready != ("ready", "ok", None):
            raise AssertionError(f"the engine process did not start: {ready!r}")
        self.standby = self._spawn()
        threading.Thread(target=self._read, args=(child,), daemon=True).start()
        with self.lock:
            self.current = child
            self.alive.set()

    def _read(self, child: _Child) -> None:
        try:
            self._serve_replies(child)
            self._died(child)
        except BaseException as error:
            self._fail(error)

    def _serve_replies(self, child: _Child) -> None:
        while (message := receive(child.stdout)) is not None:
            request, status, value = message
            with self.lock:
                pending = self.pending.pop(request, None)
                kill = False
                if self.replies_left is not None:
                    self.replies_left -= 1
                    kill = self.replies_left <= 0
            if pending is not None:
                pending.reply.set(status, value)
            if kill:
                self.kill()

    def _fail(self, error: BaseException) -> None:
        with self.lock:
            self.failure = error
            orphans, self.pending = self.pending, {}
            self.alive.set()  # callers waiting to send find the failure
        for pending in orphans.values():
            pending.reply.set("failed", error)

    def _died(self, child: _Child) -> None:
        code = child.process.wait(60)
        child.stdout.close()
        child.stdin.close()
        with self.lock:
            if not self.killing:
                raise AssertionError(f"the engine process ended by itself with {code}")
            self.alive.clear()
            orphans, self.pending = self.pending, {}
            self.current = None
        # Its sessions end once they have done what they had received (a COMMIT sent ahead in a
        # pipeline still commits): only then does the idempotency table say what committed.
        wait_until(lambda: not self._sessions(child.name), f"the sessions of {child.name} to end")
        self.on_kill()
        self.stats["kills"] += 1
        if orphans:
            self.stats["kills in flight"] += 1
        committed = self._committed([p.key for p in orphans.values()])
        for pending in orphans.values():
            done = pending.key in committed
            self.stats["in flight, committed" if done else "in flight, not committed"] += 1
            pending.reply.set("died", done)
        self._activate()
        with self.lock:
            self.killing = False

    def _sessions(self, name: str) -> int:
        with self.local.connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchone()
        return int(row[0]) if row else 0

    def _committed(self, keys: list[str]) -> set[str]:
        with self.local.connection() as conn:
            rows = conn.execute(
                "SELECT key FROM idempotency WHERE principal = '' AND key = ANY(%s)", (keys,)
            ).fetchall()
        return {str(key) for (key,) in rows}

    # -- killing ----------------------------------------------------------------------------------

    def kill(self) -> None:
        """SIGKILL the current process (once); it is replaced when its reader sees it end."""
        with self.lock:
            child = self.current
            if child is None or self.killing:
                return
            self.killing = True
            self.replies_left = self.requests_left = None
            timer, self.timer = self.timer, None
        if timer is not None:
            timer.cancel()  # a plan fires once
        os.kill(child.process.pid, signal.SIGKILL)

    def kill_after_replies(self, count: int) -> None:
        with self.lock:
            self.replies_left = count

    def kill_after_request(self, count: int, seconds: float) -> None:
        """Kill `seconds` after the `count`th call from now is sent."""
        with self.lock:
            self.requests_left, self.request_delay = count, seconds

    def kill_after(self, seconds: float) -> None:
        with self.lock:
            self.timer = threading.Timer(seconds, self.kill)
            self.timer.start()

    def armed(self) -> bool:
        """Whether a kill is planned that has not fired yet."""
        with self.lock:
            if self.replies_left is not None or self.requests_left is not None:
                return True
            return self.timer is not None and self.timer.is_alive()

    def disarm(self) -> None:
        """No kill planned any more; one under way is waited out (the next process is up)."""
        with self.lock:
            self.replies_left = self.requests_left = None
            timer, self.timer = self.timer, None
        if timer is not None:
            timer.cancel()
        self.settle()

    def settle(self) -> None:
        """Wait until no kill is under way."""
        wait_until(lambda: self.failure is not None or not self.killing, "the restart")
        if self.failure is not None:
            raise AssertionError(
                "the engine process or a kill's aftermath failed"
            ) from self.failure


def _unpickle(data: bytes | None) -> object:
    return None if data is None else pickle.loads(data)


@dataclass
class CrashDriver(Driver):
    """The Driver over an `EngineProcess`: it records with each decision the key of the call
    that took effect, so that the decisions can be put in the order they committed."""

    keys: list[str | None] = field(default_factory=list)
    # The token a cancel_token decision's command cancelled, by the decision's place.
    cancelled: dict[int, UUID] = field(default_factory=dict)
    recording: threading.Lock = field(default_factory=threading.Lock)

    def _record(self, *args: Any, **kwargs: Any) -> None:
        engine: Any = self.engine
        key = engine.last_key() if isinstance(engine, EngineProcess) else None
        token = engine.last_cancelled() if isinstance(engine, EngineProcess) else None
        with self.recording:
            before = len(self.decisions)
            super()._record(*args, **kwargs)
            decision = self.decisions[-1] if len(self.decisions) > before else None
            if decision is None:
                return
            if decision.action == "run_job" and decision.value not in ("executed", "failed"):
                # A job another thread ran first (or retired): nothing took effect.
                with self.lock:
                    self.decisions.pop()
                return
            if decision.action == "cancel_token" and token is not None:
                self.cancelled[len(self.keys)] = token
            self.keys.append(key)


def commit_order(
    url: str,
    decisions: list[Decision],
    keys: list[str | None],
    instances: list[UUID],
    cancelled: dict[int, UUID] | None = None,
) -> tuple[list[Decision], list[UUID], list[str]]:
    """The decisions that changed anything, in the order their commands committed; the
    instances renumbered in the order of their starts there; the problems found on the way.

    Commands on one instance commit one at a time under its lock, and each writes its outbox rows
    after taking its locks, so the first outbox row of a command's transaction orders it after
    every command it waited for, on every instance it wrote. A command that committed without an
    outbox row changed no instance (a signal nobody waited for any more, a modification of a
    token already gone): its decision is left out, for no place in the order would replay it as
    the nothing it did.

    A token is cancelled by its id, and may have moved on between the driver's read and the
    cancel's commit: the decision names the node the token was cancelled at (its terminated
    visit), not the node the driver read."""
    cancelled = cancelled or {}
    wanted = [k for k in keys if k is not None]
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT i.key, min(o.seq) FROM idempotency i "
            "LEFT JOIN outbox o ON o.txid %% 4294967296 = i.xmin::text::bigint "
            "WHERE i.principal = '' AND i.key = ANY(%s) GROUP BY i.key",
            (wanted,),
        ).fetchall()
        ended: dict[UUID, str] = dict(
            conn.execute(
                "SELECT token_id, node_id FROM history WHERE token_id = ANY(%s) "
                "AND state = 'Terminated'",
                (list(cancelled.values()),),
            ).fetchall()
        )
    first = {str(key): seq for key, seq in rows}
    problems = []
    order: list[tuple[int, int, int]] = []
    for index, (decision, key) in enumerate(zip(decisions, keys, strict=True)):
        if key is None or key not in first:
            problems.append(f"decision {decision} has no committed key {key}")
            continue
        seq = first[key]
        if seq is None:
            if decision.action in ("start", "complete_task", "complete_external", "cancel"):
                problems.append(f"decision {decision} committed without an outbox row")
            continue
        order.append((int(seq), index, index))
    placed = list(decisions)
    for index, token in cancelled.items():
        if token in ended:
            placed[index] = replace(placed[index], node=str(ended[token]))
        else:
            problems.append(f"decision {decisions[index]} cancelled no token visit")
    ordered = [placed[i] for _, _, i in sorted(order)]
    starts = [d.instance for d in ordered if d.action == "start"]
    renumber = {old: new for new, old in enumerate(starts)}
    renumbered = [replace(d, instance=renumber[d.instance]) for d in ordered]
    return renumbered, [instances[old] for old in starts], problems
