"""The script processes every script of this process runs in.

V8 is never loaded into the engine's own process. mini-racer's isolates crash the whole process
(SIGSEGV, or V8's fatal checks) when two threads create or drive them at once, and a script's
left-over promise jobs can keep an isolate busy where no time limit reaches them. So each isolate
lives in a process of its own (`host.py`), driven by that process's only thread, one script at
a time; request threads, job executor threads, batch chunks and the CLI all hand their scripts to
this pool. A fault of V8 costs one script process, never the server: the script running there
fails with a `HostFailure`, and the next script gets a new process.

The pool starts processes when scripts need them, up to `INTERLOCK_SCRIPT_PROCESSES` (default:
the number of CPUs, at least 2, at most 4); a caller waits while all are busy. A process that
does not answer within its script's time limit plus `GRACE_SECONDS` is killed.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Literal

PROCESSES_ENV = "INTERLOCK_SCRIPT_PROCESSES"
HOST_FILE = Path(__file__).with_name("host.py")
HEADER = struct.Struct(">I")
# How long a process may take to start (import mini-racer, build its sandbox) on a busy machine.
START_SECONDS = 60.0
# Past its script's time limit, how long a process may take to answer before it is killed.
GRACE_SECONDS = 5.0

FailureReason = Literal["timeout", "memory", "threw", "crashed", "unavailable"]


class HostFailure(Exception):
    """A script ended without an answer from the prelude: `reason` says how."""

    def __init__(self, reason: FailureReason, message: str = "") -> None:
        super().__init__(message or reason)
        self.reason: FailureReason = reason
        self.message = message


def configured_size() -> int:
    """INTERLOCK_SCRIPT_PROCESSES, else the CPUs (2 to 4)."""
    text = os.environ.get(PROCESSES_ENV, "").strip()
    if text:
        try:
            size = int(text)
        except ValueError:
            raise ValueError(f"{PROCESSES_ENV} must be a whole number, not {text!r}") from None
        if size < 1:
            raise ValueError(f"{PROCESSES_ENV} must be at least 1, not {size}")
        return size
    return min(4, max(2, os.cpu_count() or 2))


class Host:
    """One script process and the two ends of its pipes."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", str(HOST_FILE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin
        self._out = self.process.stdout.fileno()
        self.alive = True
        try:
            self._receive(time.monotonic() + START_SECONDS)
        except HostFailure:
            self.kill()
            raise HostFailure("unavailable", "the script process did not start") from None

    @property
    def pid(self) -> int:
        return self.process.pid

    def call(self, code: str, timeout: float, memory: int) -> dict[str, Any]:
        """Run `code`; the host's answer. Raises HostFailure when the process died or hung."""
        request = json.dumps({"code": code, "timeout": timeout, "memory": memory}).encode()
        try:
            self._in.write(HEADER.pack(len(request)) + request)
            self._in.flush()
        except (BrokenPipeError, OSError):
            self.kill()
            raise HostFailure("crashed") from None
        return self._receive(time.monotonic() + timeout + GRACE_SECONDS)

    def _receive(self, deadline: float) -> dict[str, Any]:
        header = self._read(HEADER.size, deadline)
        (size,) = HEADER.unpack(header)
        answer: dict[str, Any] = json.loads(self._read(size, deadline))
        return answer

    def _read(self, size: int, deadline: float) -> bytes:
        chunks: list[bytes] = []
        wanted = size
        while wanted:
            left = deadline - time.monotonic()
            ready = select.select([self._out], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self.kill()
                raise HostFailure("timeout")
            chunk = os.read(self._out, wanted)
            if not chunk:
                self.kill()
                raise HostFailure("crashed")
            chunks.append(chunk)
            wanted -= len(chunk)
        return b"".join(chunks)

    def retire(self) -> None:
        """Let the process end by itself (it exits after an answer that retired it, or when its
        input closes) and reap it; kill it if it does not end."""
        self.alive = False
        with suppress(OSError):
            self._in.close()
        try:
            self.process.wait(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()
        self._close_pipes()

    def kill(self) -> None:
        self.alive = False
        with suppress(OSError):
            self.process.kill()
        with suppress(subprocess.TimeoutExpired, OSError):
            self.process.wait(timeout=GRACE_SECONDS)
        self._close_pipes()

    def _close_pipes(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with suppress(OSError):
                    pipe.close()


class HostPool:
    """Up to `size` script processes, each serving one caller at a time."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._idle: list[Host] = []
        self._live: set[Host] = set()
        self._count = 0
        self._ready = threading.Condition()
        self.started = 0  # processes started so far (tests and benchmarks read it)

    @contextmanager
    def host(self) -> Iterator[Host]:
        """A process of the pool for one script: an idle one, a new one, or the first one that
        comes free."""
        host = self._take()
        try:
            yield host
        finally:
            self._give_back(host)

    def _take(self) -> Host:
        with self._ready:
            while not self._idle and self._count >= self.size:
                self._ready.wait()
            if self._idle:
                return self._idle.pop()
            self._count += 1
            self.started += 1
        try:
            host = Host()
        except BaseException:
            with self._ready:
                self._count -= 1
                self._ready.notify()
            raise
        with self._ready:
            self._live.add(host)
        return host

    def _give_back(self, host: Host) -> None:
        with self._ready:
            if host.alive and host.process.poll() is None:
                self._idle.append(host)
            else:
                self._count -= 1
                self._live.discard(host)
            self._ready.notify()

    def idle_pids(self) -> list[int]:
        with self._ready:
            return [host.pid for host in self._idle]

    def pids(self) -> list[int]:
        """The processes of the pool, idle or serving a script."""
        with self._ready:
            return sorted(host.pid for host in self._live)

    def close(self) -> None:
        """End the idle processes (at exit; busy ones end when their input closes)."""
        with self._ready:
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._live.difference_update(idle)
        for host in idle:
            host.retire()


_POOL: HostPool | None = None
_POOL_PID = 0
_POOL_LOCK = threading.Lock()


def pool() -> HostPool:
    """This process's pool (a forked child makes its own)."""
    global _POOL, _POOL_PID
    with _POOL_LOCK:
        if _POOL is None or os.getpid() != _POOL_PID:
            _POOL = HostPool(configured_size())
            _POOL_PID = os.getpid()
        return _POOL


@atexit.register
def _close_pool() -> None:
    if _POOL is not None and os.getpid() == _POOL_PID:
        _POOL.close()


def run(code: str, timeout: float, memory: int) -> str:
    """Run `code` in a script process of the pool; the prelude's answer text. Raises
    HostFailure."""
    with pool().host() as host:
        try:
            answer = host.call(code, timeout, memory)
        except HostFailure:
            host.alive = False
            raise
        if "failure" in answer:
            host.retire()
            raise HostFailure(answer["failure"], str(answer.get("message", "")))
        text = str(answer["answer"])
        if not text.startswith("[true,"):
            host.retire()
        return text
