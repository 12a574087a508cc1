"""Real Interlock processes over a database that goes away: a server (with its job executor), a
standalone job executor and an external-task worker, light load over HTTP, an event-stream
reader that resumes with Last-Event-ID, and the checks that nothing was lost or doubled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

from engine.builder import ProcessBuilder
from engine.model import ProcessModel, TimerDefinition
from tests.server import free_port

ROOT = Path(__file__).resolve().parents[2]
KEY = "outage"
# Every node of the model, each visited exactly once by every instance.
NODES = ("start", "review", "charge", "wait", "end")


def model() -> ProcessModel:
    return (
        ProcessBuilder(KEY)
        .start_event("start")
        .user_task("review")
        .service_task("charge", topic="charge")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="duration", text="PT1S"))
        .end_event("end")
        .chain(*NODES)
        .build()
    )


@dataclass
class Answer:
    """One request made while the database was down (or coming back)."""

    surface: str
    status: int | None
    seconds: float
    retry_after: str | None
    body: Any


@dataclass
class Cluster:
    """`interlock serve`, `interlock jobs` and `interlock worker` over one database: the
    embedded one under `home`, or the server at `database_url`."""

    home: Path
    database_url: str | None = None
    port: int = field(default_factory=free_port)
    procs: list[subprocess.Popen[str]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        env["PYTHONPATH"] = str(ROOT)
        env["INTERLOCK_HOME"] = str(self.home)
        if self.database_url is not None:
            env["DATABASE_URL"] = self.database_url
        return env

    def spawn(self, name: str, *args: str) -> subprocess.Popen[str]:
        log = self.home.parent / f"{name}.log"
        self.logs.append(log)
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "app.cli", *args],
                cwd=ROOT,
                env=self.env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
            )
        self.procs.append(proc)
        return proc

    def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.spawn("serve", "serve", "--port", str(self.port), "--no-auth")
        self.wait_healthy(60)
        self.spawn("jobs", "jobs")
        self.spawn("worker", "worker", "tests.outage.outage_worker")
        self.wait_logged("jobs.log", "started", 60)

    def wait_logged(self, name: str, text: str, timeout: float) -> None:
        log = self.home.parent / name
        deadline = time.monotonic() + timeout
        while text not in log.read_text():
            if time.monotonic() > deadline or not self.alive():
                raise AssertionError(f"{name} never said {text!r}\n{self.tail()}")
            time.sleep(0.1)

    def wait_healthy(self, timeout: float) -> float:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            for proc in self.procs:
                if proc.poll() is not None:
                    raise AssertionError(f"a process exited: {proc.args!r}\n{self.tail()}")
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"the server did not become healthy in {timeout}s\n{self.tail()}")

    def tail(self) -> str:
        return "\n".join(f"== {log.name}\n{log.read_text()[-3000:]}" for log in self.logs)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def alive(self) -> bool:
        return all(proc.poll() is None for proc in self.procs)

    # -- requests --------------------------------------------------------------------------------

    def probe(self, client: httpx.Client, surface: str) -> Answer:
        """One request of `surface` (api, camunda, page, fragment, stream, health, start)."""
        headers: dict[str, str] = {}
        method, path = "GET", "/api/v1/definitions"
        if surface == "camunda":
            path = "/engine-rest/process-definition"
        elif surface == "page":
            path, headers = "/instances", {"Accept": "text/html"}
        elif surface == "fragment":
            path, headers = "/instances", {"Accept": "text/html", "HX-Request": "true"}
        elif surface == "stream":
            path = "/api/v1/stream"
        elif surface == "health":
            path = "/health"
        elif surface == "start":
            method, path = "POST", f"/api/v1/definitions/key/{KEY}/start"
            headers = {"Idempotency-Key": f"probe-{uuid.uuid4().hex[:10]}"}
        started = time.monotonic()
        try:
            if surface == "stream":
                with client.stream(method, path, headers=headers, timeout=5) as response:
                    status = response.status_code
                    body = response.read() if status != 200 else b""
                    retry_after = response.headers.get("retry-after")
            else:
                kwargs: dict[str, Any] = {"json": {}} if method == "POST" else {}
                response = client.request(method, path, headers=headers, timeout=5, **kwargs)
                status, body = response.status_code, response.content
                retry_after = response.headers.get("retry-after")
        except httpx.HTTPError as exc:
            return Answer(surface, None, time.monotonic() - started, None, repr(exc))
        seconds = time.monotonic() - started
        parsed: Any = body.decode(errors="replace")
        if status == 503 and surface != "page":
            parsed = httpx.Response(503, content=body).json()
        return Answer(surface, status, seconds, retry_after, parsed)


SURFACES = ("api", "camunda", "page", "fragment", "stream", "health", "start")


class Load:
    """Starts instances (each under its own business key and idempotency key, sent again until
    answered 201) and completes their user tasks, a few a second, until stopped."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.keys: list[str] = []
        self.statuses: Counter[int | None] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=5) as client:
            pending: str | None = None
            while not self._stop.is_set():
                key = pending or f"bk-{uuid.uuid4().hex[:10]}"
                pending = None if self._start(client, key) else key
                self._complete_tasks(client)
                self._stop.wait(0.15)
            # The last start may still be unanswered: it counts only once it was.
            while pending is not None and not self._start(client, pending):
                time.sleep(0.2)

    def _start(self, client: httpx.Client, key: str) -> bool:
        """Start an instance under business and idempotency key `key`; whether it was answered
        (a start sent again with its key is answered once, and never doubled)."""
        status = self._send(
            client,
            "POST",
            f"/api/v1/definitions/key/{KEY}/start",
            json={"business_key": key},
            headers={"Idempotency-Key": key},
        )
        if status != 201:
            return False
        self.keys.append(key)
        return True

    def _send(self, client: httpx.Client, method: str, path: str, **kwargs: Any) -> int | None:
        try:
            status: int | None = client.request(method, path, **kwargs).status_code
        except httpx.HTTPError:
            status = None
        self.statuses[status] += 1
        return status

    def _complete_tasks(self, client: httpx.Client) -> None:
        try:
            listed = client.get("/api/v1/user-tasks", params={"definition_key": KEY})
        except httpx.HTTPError:
            return
        if listed.status_code != 200:
            return
        for task in listed.json()["items"][:5]:
            self._send(client, "POST", f"/api/v1/user-tasks/{task['id']}/complete", json={})

    def complete_remaining(self, timeout: float) -> None:
        """Complete every open user task until none is left (after the load stopped)."""
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.url, timeout=5) as client:
            while time.monotonic() < deadline:
                items = client.get("/api/v1/user-tasks", params={"definition_key": KEY}).json()
                if not items["items"]:
                    return
                for task in items["items"]:
                    client.post(f"/api/v1/user-tasks/{task['id']}/complete", json={})
        raise AssertionError("user tasks were still open")


class StreamReader:
    """Reads /api/v1/stream; when the stream ends or breaks, connects again with the
    Last-Event-ID of the last event received (refused with 503 while the database is down)."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.headers = headers or {}
        self.seqs: list[int] = []
        self.controls: list[str] = []
        self.connects = 0
        self.refused = 0
        self.first_ready: int | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(20), "the event stream did not become ready"

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(15)

    def _run(self) -> None:
        last: int | None = None
        while not self._stop.is_set():
            headers = {"Last-Event-ID": str(last)} if last is not None else {}
            headers.update(self.headers)
            try:
                with (
                    httpx.Client(base_url=self.url) as client,
                    client.stream(
                        "GET",
                        "/api/v1/stream",
                        headers=headers,
                        timeout=httpx.Timeout(5, read=3),
                    ) as response,
                ):
                    if response.status_code != 200:
                        self.refused += 1
                        self._stop.wait(0.3)
                        continue
                    self.connects += 1
                    for event_id, event in _events(response.iter_lines(), self._stop):
                        if event == "ready" and event_id is not None:
                            if self.first_ready is None:
                                self.first_ready = int(event_id)
                            last = int(event_id) if last is None else last
                            self._ready.set()
                        elif event_id is not None:
                            self.seqs.append(int(event_id))
                            last = int(event_id)
                        else:
                            self.controls.append(event)
            except httpx.HTTPError:
                self._stop.wait(0.3)


def _events(lines: Iterator[str], stop: threading.Event) -> Iterator[tuple[str | None, str]]:
    event_id: str | None = None
    event = "message"
    for line in lines:
        if stop.is_set():
            return
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line == "":
            if event_id is not None or event != "message":
                yield event_id, event
            event_id, event = None, "message"


def wait_completed(url: str, timeout: float) -> None:
    """Wait until every instance of the model completed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with psycopg.connect(url) as conn:
            open_ = conn.execute(
                "SELECT count(*) FROM process_instance WHERE definition_key = %s"
                " AND state <> 'Completed'",
                (KEY,),
            ).fetchone()
        if open_ == (0,):
            return
        time.sleep(0.3)
    raise AssertionError("not every instance completed")


def check_exactly_once(url: str, keys: list[str], stream_from: int, seqs: list[int]) -> None:
    """Every started key has one instance, completed, each node visited once; the stream
    delivered every outbox row after `stream_from` once, in order."""
    with psycopg.connect(url) as conn:
        per_key = conn.execute(
            "SELECT business_key, count(*), min(state) FROM process_instance"
            " WHERE definition_key = %s GROUP BY business_key",
            (KEY,),
        ).fetchall()
        visits = conn.execute(
            "SELECT h.node_id, count(*) FROM history h JOIN process_instance i"
            " ON i.id = h.instance_id WHERE i.definition_key = %s"
            " GROUP BY h.instance_id, h.node_id",
            (KEY,),
        ).fetchall()
        outbox = [
            row[0]
            for row in conn.execute(
                "SELECT seq FROM outbox_event WHERE seq > %s ORDER BY seq", (stream_from,)
            ).fetchall()
        ]
    started = {key: (count, state) for key, count, state in per_key}
    # The load's keys start with "bk-"; the probes' starts and the test's own have other keys.
    loaded = sorted(key for key in started if key is not None and key.startswith("bk-"))
    assert loaded == sorted(keys), "an instance was lost, or one nobody started exists"
    assert all(count == 1 for count, _ in started.values()), "a start was doubled"
    assert {state for _, state in started.values()} == {"Completed"}
    assert {node for node, _ in visits} == set(NODES)
    assert {count for _, count in visits} == {1}, "a node was visited twice"
    assert len(seqs) == len(set(seqs)), "the stream delivered an event twice"
    assert seqs == sorted(seqs), "the stream delivered out of order"
    assert seqs[: len(outbox)] == outbox, "the stream lost an event"
