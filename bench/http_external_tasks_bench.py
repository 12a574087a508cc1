"""External-task round trips per second over HTTP against the same work in process.

A round trip is what a worker does per task: fetch-and-lock one task, then complete it. Four
workers (threads) share one topic. (a) in process: they call the Python API of this process's
engine. (b) over HTTP: they call /engine-rest on an Interlock server in a separate process on
127.0.0.1, as Camunda's clients do (HTTP Basic, keep-alive, `asyncResponseTimeout` long polls).
Both run against the same database in the same run; the figure that matters is b/a.

Without --database-url the run uses a throwaway embedded database with synchronous_commit off,
so that waiting for commit flushes, the same in both figures, does not hide the cost of HTTP.

    python -m bench.http_external_tasks_bench [--tasks 2000] [--workers 4] [--database-url URL]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.scratch import scratch_engine
from bench.serving import free_port
from engine.api import Engine
from engine.commands.accounts import CreateUser
from engine.identity.accounts import Role
from engine.queries import accounts

TOPIC = "bench-http"
KEY = "bench-http-external"
USER, PASSWORD = "bench-worker", "bench-password"
PROCESS = f"""<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Definitions_bench"
    targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="{KEY}" isExecutable="true">
    <bpmn:startEvent id="Start" />
    <bpmn:serviceTask id="Work" camunda:type="external" camunda:topic="{TOPIC}" />
    <bpmn:endEvent id="End" />
    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Work" />
    <bpmn:sequenceFlow id="f2" sourceRef="Work" targetRef="End" />
  </bpmn:process>
</bpmn:definitions>
"""
SERVER = """
import sys
import uvicorn
from app.main import create_app
from app.settings import Settings
settings = Settings(database_url=sys.argv[1], auth=True, run_jobs=False, secret="bench")
uvicorn.run(create_app(settings), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"""

# One worker's loop: returns True when it handled a task, False when none was left.
RoundTrip = Callable[[], bool]


def _start_instances(engine: Engine, count: int) -> None:
    for n in range(count):
        engine.start_latest(KEY, {"n": n, "payload": "x" * 64})


def _run_workers(make_worker: Callable[[int], RoundTrip], workers: int, tasks: int) -> float:
    """Round trips per second of `workers` threads until `tasks` tasks are done."""
    done = [0] * workers
    barrier = threading.Barrier(workers + 1)

    def loop(index: int) -> None:
        round_trip = make_worker(index)
        barrier.wait()
        while round_trip():
            done[index] += 1

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    barrier.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    assert sum(done) == tasks, (sum(done), tasks)
    return tasks / elapsed


def in_process(engine: Engine, workers: int, tasks: int) -> float:
    _start_instances(engine, tasks)

    def make_worker(index: int) -> RoundTrip:
        worker_id = f"py-{index}"

        def round_trip() -> bool:
            found = engine.fetch_and_lock(worker_id, {TOPIC: 60_000}, max_tasks=1)
            if not found:
                return False
            engine.complete_external_task(found[0]["id"], worker_id, {"done": True})
            return True

        return round_trip

    return _run_workers(make_worker, workers, tasks)


def over_http(engine: Engine, base: str, workers: int, tasks: int) -> float:
    _start_instances(engine, tasks)
    clients: list[httpx.Client] = []

    def make_worker(index: int) -> RoundTrip:
        worker_id = f"http-{index}"
        client = httpx.Client(base_url=base, auth=(USER, PASSWORD), timeout=30)
        clients.append(client)
        fetch = {
            "workerId": worker_id,
            "maxTasks": 1,
            "usePriority": True,
            "asyncResponseTimeout": 100,
            "topics": [{"topicName": TOPIC, "lockDuration": 60_000}],
        }
        complete = {"workerId": worker_id, "variables": {"done": {"value": True}}}

        def round_trip() -> bool:
            response = client.post("/external-task/fetchAndLock", json=fetch)
            response.raise_for_status()
            found: list[dict[str, Any]] = response.json()
            if not found:
                return False
            done = client.post(f"/external-task/{found[0]['id']}/complete", json=complete)
            if done.status_code != 204:
                raise RuntimeError(f"complete answered {done.status_code}: {done.text}")
            return True

        return round_trip

    try:
        return _run_workers(make_worker, workers, tasks)
    finally:
        for client in clients:
            client.close()


def _serve(database_url: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    process = subprocess.Popen([sys.executable, "-c", SERVER, database_url, str(port)], env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return process, f"{base}/engine-rest"
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("the benchmark server did not start")
        time.sleep(0.1)


def run(database_url: str | None, workers: int, tasks: int) -> dict[str, float]:
    with scratch_engine(database_url) as engine:
        if engine.database.embedded:  # its own server: a setting of a given one stays as it is
            with engine.connection() as conn:
                conn.execute("ALTER SYSTEM SET synchronous_commit = off")
                conn.execute("SELECT pg_reload_conf()")
        engine.deploy(PROCESS, name="bench")
        if accounts.verify_password(engine, USER, PASSWORD) is None:
            engine.run(CreateUser(USER, Role.OPERATOR, PASSWORD))
        server, base = _serve(engine.database.url)
        try:
            warm = min(200, tasks)
            in_process(engine, workers, warm)
            over_http(engine, base, workers, warm)
            local = in_process(engine, workers, tasks)
            remote = over_http(engine, base, workers, tasks)
            local_after = in_process(engine, workers, tasks)
        finally:
            server.terminate()
            server.wait(timeout=30)
    local_mean = (local + local_after) / 2
    return {"in_process_per_s": local_mean, "http_per_s": remote, "ratio": remote / local_mean}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=2000, help="tasks per measured phase")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = run(args.database_url, args.workers, args.tasks)
    print(
        f"(a) in process: {figures['in_process_per_s']:.0f} fetch-and-lock + complete "
        f"round trips/s ({args.workers} workers)"
    )
    print(f"(b) over HTTP (/engine-rest, HTTP Basic): {figures['http_per_s']:.0f} round trips/s")
    print(f"b/a = {figures['ratio']:.2f}")


if __name__ == "__main__":
    main()
