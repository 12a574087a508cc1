"""Commit-to-browser latency of the live event stream.

A server runs in a subprocess (uvicorn, the real app with the stream). This process starts
straight-through instances (start -> three handler tasks -> end, one commit each) at a steady rate
and notes the wall-clock time each commit returned. N SSE clients, logged in like a browser and
subscribed to the global `/stream`, run in other processes and note when each instance's
`instance.completed` event arrives. Latency = arrival - commit, over every (instance, client)
pair; every client's ids are also checked to be strictly ascending and to miss nothing.

The minimal-transaction rate (INSERT + UPDATE + COMMIT on one connection) is measured in the same
run so the steady instance rate can be read against what this machine does at all.

    python -m bench.stream_bench [--rate 20] [--seconds 10] [--streams 1 50] [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import secrets
import statistics
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

import httpx

from bench import serving
from bench.engine_throughput import minimal_transactions
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.accounts import CreateUser
from engine.db.database import Database
from engine.identity.accounts import Role

PROCESS_KEY = "stream-bench"
CLIENTS_PER_PROCESS = 25


# -- the clients (other processes) -----------------------------------------------------------------


@dataclass
class StreamResult:
    arrivals: dict[str, float]  # instance id -> wall-clock arrival of instance.completed
    ids: list[int]


async def _client(
    url: str, cookies: dict[str, str], ready: asyncio.Event, result: StreamResult
) -> None:
    """A lean SSE reader (a browser parses in native code): HTTP/1.0, so the body is the plain
    event stream until the server closes it."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    writer.write(
        f"GET /stream HTTP/1.0\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
        f"Cookie: {cookie}\r\n\r\n".encode()
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:40]
    buffer = b""
    try:
        while True:
            chunk = await reader.read(1 << 16)
            if not chunk:
                return
            arrived = time.time()
            buffer += chunk
            *blocks, buffer = buffer.split(b"\n\n")
            for block in blocks:
                if not block.startswith(b"id: "):
                    continue
                newline = block.index(b"\n")
                if block.startswith(b"event: ready", newline + 1):
                    ready.set()
                    continue
                result.ids.append(int(block[4:newline]))
                if block.startswith(b"event: instance.completed", newline + 1):
                    data = block[block.index(b"data: ") + 6 :]
                    result.arrivals[json.loads(data)["instance_id"]] = arrived
    finally:
        writer.close()


def client_process(
    url: str,
    cookies: dict[str, str],
    count: int,
    ready: EventType,
    stop: EventType,
    results: Any,
) -> None:
    async def main() -> list[StreamResult]:
        found = [StreamResult({}, []) for _ in range(count)]
        readies = [asyncio.Event() for _ in range(count)]
        tasks = [
            asyncio.create_task(_client(url, cookies, readies[n], found[n])) for n in range(count)
        ]
        for event in readies:
            await event.wait()
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return found

    found = asyncio.run(main())
    results.put([(r.arrivals, [i for i in r.ids]) for r in found])


# -- the writer (this process) ---------------------------------------------------------------------


def deploy(engine: Engine) -> None:
    def handler(ctx: Any) -> None:
        return None

    for name in ("one", "two", "three"):
        engine.register_handler(name, handler)
    model = (
        ProcessBuilder(PROCESS_KEY)
        .start_event("start")
        .service_task("one", handler="one")
        .service_task("two", handler="two")
        .service_task("three", handler="three")
        .end_event("end")
        .chain("start", "one", "two", "three", "end")
        .build()
    )
    engine.deploy(model)
    for _ in range(20):
        engine.start_latest(PROCESS_KEY)


def steady_writes(engine: Engine, rate: float, seconds: float) -> tuple[dict[str, float], float]:
    """Start instances at `rate` per second for `seconds`; commit times by instance id."""
    commits: dict[str, float] = {}
    total = int(rate * seconds)
    start = time.monotonic()
    for n in range(total):
        delay = start + n / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        handle = engine.start_latest(PROCESS_KEY, {"n": n})
        commits[str(handle.id)] = time.time()
    return commits, total / (time.monotonic() - start)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(
    engine: Engine, url: str, cookies: dict[str, str], streams: int, rate: float, seconds: float
) -> dict[str, float]:
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    stop = context.Event()
    processes = []
    readies = []
    remaining = streams
    while remaining > 0:
        count = min(CLIENTS_PER_PROCESS, remaining)
        remaining -= count
        ready = context.Event()
        proc = context.Process(
            target=client_process, args=(url, cookies, count, ready, stop, results)
        )
        proc.start()
        processes.append(proc)
        readies.append(ready)
    for ready in readies:
        if not ready.wait(60):
            raise RuntimeError("the SSE clients did not connect")
    commits, achieved = steady_writes(engine, rate, seconds)
    time.sleep(2.0)
    stop.set()
    gathered: list[tuple[dict[str, float], list[int]]] = []
    for _ in processes:
        gathered.extend(results.get(timeout=60))
    for proc in processes:
        proc.join(timeout=30)

    with engine.connection() as conn:
        all_ids = [int(r[0]) for r in conn.execute("SELECT seq FROM outbox_event ORDER BY seq")]
    latencies: list[float] = []
    missing = 0
    for arrivals, ids in gathered:
        assert ids == sorted(set(ids)), "ids not strictly ascending"
        assert ids and set(ids) == {i for i in all_ids if ids[0] <= i <= ids[-1]}, "an id missed"
        for instance_id, committed in commits.items():
            arrived = arrivals.get(instance_id)
            if arrived is None:
                missing += 1
            else:
                latencies.append((arrived - committed) * 1000)
    return {
        "streams": streams,
        "instances": len(commits),
        "rate": achieved,
        "p50_ms": percentile(latencies, 0.50),
        "p99_ms": percentile(latencies, 0.99),
        "max_ms": max(latencies),
        "mean_ms": statistics.fmean(latencies),
        "missing": missing,
    }


def run(
    database_url: str | None, rate: float, seconds: float, streams: list[int]
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="stream-bench-") as home:
        database = Database.open(database_url, home=Path(home))
        try:
            with Engine(database.url, pool_size=4) as engine:
                name = f"bench-{secrets.token_hex(4)}"
                password = secrets.token_urlsafe(12)
                engine.run(CreateUser(name, Role.VIEWER, password))
                deploy(engine)
                baseline = minimal_transactions(database.url, 3.0)
                server, url = serving.start(database.url)
                try:
                    with httpx.Client(base_url=url) as client:
                        serving.console_login(client, name, password)
                        cookies = {"interlock_session": client.cookies["interlock_session"]}
                    runs = [measure(engine, url, cookies, n, rate, seconds) for n in streams]
                finally:
                    serving.stop(server)
                baseline_after = minimal_transactions(database.url, 3.0)
        finally:
            database.close()
    return {"minimal_tx_per_s": (baseline + baseline_after) / 2, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=float, default=20.0, help="instances per second")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 50])
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = run(args.database_url, args.rate, args.seconds, args.streams)
    minimal = figures["minimal_tx_per_s"]
    print(f"minimal transactions/s (INSERT+UPDATE+COMMIT, same run): {minimal:.0f}")
    for r in figures["runs"]:
        print(
            f"{r['streams']:>3} streams: {r['instances']} instances at {r['rate']:.1f}/s "
            f"({r['rate'] / minimal:.3f} of the minimal rate); commit -> SSE client "
            f"p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, max {r['max_ms']:.1f} ms; "
            f"missing {r['missing']}"
        )


if __name__ == "__main__":
    main()
