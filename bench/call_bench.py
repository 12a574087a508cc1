"""A parent whose one call activity runs a three-task automatic child, against the same run's
straight-through instances and minimal transactions.

(a) one connection loops minimal transactions: INSERT one row, UPDATE one row, COMMIT;
(b) straight through: start -> one -> two -> three -> end, three handler tasks, one instance per
    `start_latest`;
(c) a tree: start -> call -> end, whose call activity calls (b)'s three tasks as a process of
    its own, started through the Python API: two instances per `start_latest`;
(d) the same tree whose call activity is a parallel multi-instance of 10 iterations: eleven
    instances per `start_latest`.
(b), (c) and (d) run in alternating turns, so all see the same server. For each kind the cost of one
instance (or tree) is also counted: write transactions (transaction ids the server hands out),
statements the client sends, and round trips, counted at the wire by a relay between the client
and the server (a round trip begins each time the client sends after the server has answered).
Starting and completing the called instance inside the command that reaches the call activity
should add work to the command's statements, not round trips or transactions: (c) and (d) cost
one more round trip than (b), the look-up of the called process's latest version (a deployment
elsewhere may change it at any moment), whatever the number of called instances. The NOTIFYs
announcing the commits (each a transaction and a round trip of the announcer's connection, off
the command's path, folded when commits come quickly) are counted apart.
"""

from __future__ import annotations

import argparse
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg.conninfo import conninfo_to_dict

from bench.engine_throughput import flag_handler, minimal_transactions
from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from engine.states import InstanceState

TASKS = ("one", "two", "three")
COUNTED = 200  # instances (or trees, or minimal transactions) each count is taken over


def three_tasks(key: str) -> ProcessModel:
    return (
        ProcessBuilder(key)
        .start_event("start")
        .service_task("one", handler="one")
        .service_task("two", handler="two")
        .service_task("three", handler="three")
        .end_event("end")
        .chain("start", *TASKS, "end")
        .build()
    )


def tree(key: str, iterations: int | None = None) -> ProcessModel:
    builder = (
        ProcessBuilder(key)
        .start_event("start")
        .call_activity("call", called_element="bench-call-child")
        .end_event("end")
        .chain("start", "call", "end")
    )
    if iterations is not None:
        builder.multi_instance("call", cardinality=iterations)
    return builder.build()


FAN_OUT = 10
KINDS = {"straight": "bench-call-straight", "tree": "bench-call-parent", "fan": "bench-call-fan"}


def rate(engine: Engine, key: str, seconds: float) -> tuple[int, float]:
    """(instances started, seconds it took), starting `key` for about `seconds`."""
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline or count < 3:
        engine.start_latest(key, {"n": count})
        count += 1
    return count, time.perf_counter() - start


NOTIFY = b"pg_notify"


class Relay:
    """Relays connections from a TCP port of its own to the server, counting round trips: a
    client's send after the server last sent to it begins one. Those of the connection the
    engine's announcer sends its NOTIFYs on are counted apart (`announced`)."""

    def __init__(self, url: str) -> None:
        info = conninfo_to_dict(url)
        host = str(info.get("host") or "localhost")
        port = int(info.get("port") or 5432)
        self.target: tuple[int, Any] = (
            (socket.AF_UNIX, os.path.join(host, f".s.PGSQL.{port}"))
            if host.startswith("/")
            else (socket.AF_INET, (host, port))
        )
        self.listener = socket.create_server(("127.0.0.1", 0))
        user = quote(str(info.get("user") or ""), safe="")
        password = info.get("password")
        login = f"{user}:{quote(str(password), safe='')}" if password else user
        self.url = (
            f"postgresql://{login}@127.0.0.1:{self.listener.getsockname()[1]}/"
            f"{quote(str(info['dbname']), safe='')}?sslmode=disable"
        )
        self.round_trips = 0
        self.announced = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            family, address = self.target
            server = socket.socket(family, socket.SOCK_STREAM)
            server.connect(address)
            answered = [True, False]  # the server spoke last; the announcer's connection
            threading.Thread(
                target=self._pump, args=(client, server, answered, True), daemon=True
            ).start()
            threading.Thread(
                target=self._pump, args=(server, client, answered, False), daemon=True
            ).start()

    def _pump(
        self, source: socket.socket, sink: socket.socket, answered: list[bool], from_client: bool
    ) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                with self._lock:
                    if from_client:
                        answered[1] = answered[1] or NOTIFY in data
                    if from_client and answered[0]:
                        if answered[1]:
                            self.announced += 1
                        else:
                            self.round_trips += 1
                    answered[0] = not from_client
                sink.sendall(data)
        for end in (source, sink):
            with suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.listener.close()


@contextmanager
def counted_statements() -> Iterator[list[int]]:
    """Counts every statement any psycopg cursor of this process sends while in the block (the
    engine's `conn.execute` runs through a cursor), BEGIN and COMMIT included: [the commands',
    the announcer's NOTIFYs]."""
    counter = [0, 0]
    cursor = psycopg.Cursor
    execute, executemany = cursor.execute, cursor.executemany

    def counting_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        counter[NOTIFY.decode() in str(args[0])] += 1
        return execute(self, *args, **kwargs)

    def counting_executemany(self: Any, query: Any, params_seq: Any, **kwargs: Any) -> Any:
        params = list(params_seq)
        counter[0] += len(params)
        return executemany(self, query, params, **kwargs)

    cursor.execute = counting_execute  # type: ignore[method-assign]
    cursor.executemany = counting_executemany  # type: ignore[method-assign]
    try:
        yield counter
    finally:
        cursor.execute = execute  # type: ignore[method-assign]
        cursor.executemany = executemany  # type: ignore[method-assign]


@dataclass(frozen=True)
class Cost:
    transactions: float
    statements: float
    round_trips: float
    announcements: float = 0.0  # NOTIFY transactions (each a round trip), folded by the announcer


def cost(url: str, relay: Relay, action: Callable[[int], None]) -> Cost:
    """What `action(i)`, run COUNTED times, costs each time: write transactions, statements
    and round trips (the relay carries the connections `action` uses)."""

    def next_xid() -> int:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()
        assert row is not None
        return int(row[0])

    before = next_xid()
    trips = relay.round_trips
    with counted_statements() as statements:
        for i in range(COUNTED):
            action(i)
        time.sleep(0.1)  # the announcer's last NOTIFY
    round_trips = relay.round_trips - trips
    notifies = statements[1]
    transactions = next_xid() - before - 1 - notifies  # the second probe takes one
    return Cost(
        transactions / COUNTED, statements[0] / COUNTED, round_trips / COUNTED, notifies / COUNTED
    )


def minimal_cost(url: str, relay: Relay) -> Cost:
    with psycopg.connect(relay.url) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_minimal (id bigserial PRIMARY KEY, n int)")
        conn.commit()

        def one(i: int) -> None:
            row = conn.execute("INSERT INTO bench_minimal (n) VALUES (0) RETURNING id").fetchone()
            assert row is not None
            conn.execute("UPDATE bench_minimal SET n = n + 1 WHERE id = %s", (row[0],))
            conn.commit()

        found = cost(url, relay, one)
        conn.execute("DROP TABLE bench_minimal")
        conn.commit()
    # psycopg's BEGIN and COMMIT are statements the client sends, but not through a cursor.
    return Cost(found.transactions, found.statements + 2, found.round_trips, 0.0)


def register(engine: Engine) -> None:
    for name in TASKS:
        engine.register_handler(name, flag_handler(name))


def run(url: str | None, seconds: float) -> dict[str, Any]:
    with scratch_engine(url) as engine:
        register(engine)
        engine.deploy(
            three_tasks("bench-call-straight"),
            three_tasks("bench-call-child"),
            tree(KINDS["tree"]),
            tree(KINDS["fan"], FAN_OUT),
        )
        db_url = engine.database.url
        baseline = minimal_transactions(db_url, seconds)
        for key in KINDS.values():
            for _ in range(50):  # the pool, the definition cache and prepared statements
                engine.start_latest(key)
        totals = {kind: [0, 0.0] for kind in KINDS}
        turns = 4
        for _ in range(turns):
            for kind, key in KINDS.items():
                count, took = rate(engine, key, seconds / turns)
                totals[kind][0] += count
                totals[kind][1] += took
        baseline_after = minimal_transactions(db_url, seconds)
        last = engine.start_latest(KINDS["tree"])
        assert last.state is InstanceState.COMPLETED
        [child] = last.children()
        assert child.state is InstanceState.COMPLETED
        relay = Relay(db_url)
        try:
            costs = {"minimal": minimal_cost(db_url, relay)}
            with Engine(relay.url, migrate=False, pool_size=2) as counted:
                register(counted)
                for kind, key in KINDS.items():
                    for _ in range(20):
                        counted.start_latest(key)

                    def start(i: int, key: str = key) -> None:
                        counted.start_latest(key, {"n": i})

                    costs[kind] = cost(db_url, relay, start)
        finally:
            relay.close()
    minimal = (baseline + baseline_after) / 2
    per_second = {kind: count / took for kind, (count, took) in totals.items()}
    return {"minimal_tx_per_s": minimal, "per_second": per_second, "costs": costs}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    figures = run(args.database_url, args.seconds)
    minimal = figures["minimal_tx_per_s"]
    rates = {"minimal": minimal, **figures["per_second"]}
    costs: dict[str, Cost] = figures["costs"]
    names = {
        "minimal": "(a) minimal transaction",
        "straight": "(b) straight through, 3 tasks",
        "tree": "(c) tree: call -> 3-task child",
        "fan": f"(d) tree: {FAN_OUT} calls, parallel MI",
    }
    print(
        f"{'':32} {'per s':>8} {'of (a)':>7} {'tx each':>8} {'stmts each':>11} "
        f"{'trips each':>11} {'NOTIFYs each':>13}"
    )
    for kind, name in names.items():
        c = costs[kind]
        print(
            f"{name:32} {rates[kind]:>8.0f} {rates[kind] / minimal:>7.3f} "
            f"{c.transactions:>8.2f} {c.statements:>11.2f} {c.round_trips:>11.2f} "
            f"{c.announcements:>13.2f}"
        )
    tree, straight = figures["per_second"]["tree"], figures["per_second"]["straight"]
    print(
        f"trees/s against straight-through instances/s: {tree / straight:.3f}; a tree runs "
        "two instances (8 visits against 5)"
    )


if __name__ == "__main__":
    main()
