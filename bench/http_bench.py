"""Latency of `POST /api/v1/definitions/key/{key}/start` under concurrent clients.

The server runs as its own process (`interlock serve`, job executor off) over the embedded
PostgreSQL in a temporary folder, or over `--database-url`. Each client thread keeps one
HTTP/1.1 connection and starts a straight-through process (start -> two tasks -> end, completed
inside the request) with a Bearer token, as fast as answers come back. Reports p50/p90/p99/max
latency and the throughput, after a warm-up that is not counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.serving import free_port
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.accounts import CreateToken
from engine.db.database import Database
from engine.identity import accounts
from engine.identity.accounts import Role

KEY = "bench-http-straight"
ROOT = Path(__file__).resolve().parents[1]


def straight_through() -> ProcessBuilder:
    return (
        ProcessBuilder(KEY)
        .start_event("start")
        .task("one")
        .task("two")
        .end_event("end")
        .chain("start", "one", "two", "end")
    )


def prepare(url: str) -> str:
    """Migrate, deploy the process and return a fresh admin token."""
    with Engine(url) as engine:
        engine.deploy(straight_through().build())
        token = accounts.new_token()
        engine.run(CreateToken(f"bench-{time.time_ns()}", Role.ADMIN, token))
        return token


@contextmanager
def serving(url: str) -> Iterator[str]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--no-jobs"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": url},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the server did not start")
            time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def clients(base: str, token: str, concurrency: int, seconds: float) -> list[float]:
    """Latencies (seconds) of every start that completed within `seconds`."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.perf_counter() + seconds
    path = f"{base}/api/v1/definitions/key/{KEY}/start"

    def loop(n: int) -> None:
        mine: list[float] = []
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(headers=headers, timeout=30) as client:
            count = 0
            while time.perf_counter() < stop:
                began = time.perf_counter()
                response = client.post(path, json={"variables": {"client": n, "n": count}})
                mine.append(time.perf_counter() - began)
                if response.status_code != 201 or response.json()["state"] != "Completed":
                    raise RuntimeError(f"start failed: {response.status_code} {response.text}")
                count += 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=loop, args=(n,)) for n in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run(url: str | None, concurrency: int, seconds: float, warmup: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="interlock-bench-") as home:
        database = Database.open(url, home=Path(home))
        try:
            token = prepare(database.url)
            with serving(database.url) as base:
                clients(base, token, concurrency, warmup)
                began = time.perf_counter()
                latencies = clients(base, token, concurrency, seconds)
                elapsed = time.perf_counter() - began
        finally:
            database.close()
    return {
        "requests": len(latencies),
        "per_second": len(latencies) / elapsed,
        "p50_ms": percentile(latencies, 0.50) * 1000,
        "p90_ms": percentile(latencies, 0.90) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "max_ms": max(latencies) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    args = parser.parse_args()
    figures = run(args.database_url, args.clients, args.seconds, args.warmup)
    print(
        f"POST /api/v1/definitions/key/{KEY}/start, {args.clients} clients, "
        f"{args.seconds:.0f} s: {figures['requests']:.0f} requests, "
        f"{figures['per_second']:.0f}/s"
    )
    print(
        f"latency ms: p50 {figures['p50_ms']:.1f}  p90 {figures['p90_ms']:.1f}  "
        f"p99 {figures['p99_ms']:.1f}  max {figures['max_ms']:.1f}  mean {figures['mean_ms']:.1f}"
    )


if __name__ == "__main__":
    main()
