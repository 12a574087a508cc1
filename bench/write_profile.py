"""What one instance costs the database: rows, index entries, WAL and disk, per table.

    python -m bench.write_profile [--instances 2000] [--orders 300] [--database-url URL]

Two shapes, each on the engine's own connections, measured from the server's statistics:
- straight-through: start -> three handler tasks -> end (bench/engine_throughput.py's model), one
  command per instance;
- the parallel demo order (app/demo.py's model): the start runs the check and splits, a worker
  fetches and completes the external task, the user task is completed, the timer job is run,
  and the instance ends shipped; five commands per instance besides the fetch.
Per instance it prints the rows written to each table (inserted, updated, deleted; from
pg_stat_user_tables), the index entries those writes added (each insert and each update that is
not HOT adds one entry to every index of its table), the WAL bytes (pg_current_wal_lsn before and
after), the bytes the tables and their indexes grew by, and the triggers on the tables written.
With `--python` it also profiles the straight-through command path in this process (cProfile): the
statements sent per instance and how the time splits between Python and waiting on the server.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from dataclasses import dataclass
from typing import Any

import psycopg

from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import Handler

STRAIGHT_KEY = "bench-straight"

_TABLES = """
SELECT s.relname, s.n_tup_ins, s.n_tup_upd, s.n_tup_hot_upd, s.n_tup_del,
    pg_total_relation_size(s.relid),
    (SELECT count(*) FROM pg_index i WHERE i.indrelid = s.relid),
    (SELECT count(*) FROM pg_trigger t WHERE t.tgrelid = s.relid AND NOT t.tgisinternal)
FROM pg_stat_user_tables s WHERE s.schemaname = current_schema()
"""


@dataclass(frozen=True)
class TableFigures:
    inserted: int
    updated: int
    hot_updated: int
    deleted: int
    total_bytes: int
    indexes: int
    triggers: int


@dataclass(frozen=True)
class Snapshot:
    wal_lsn: str
    tables: dict[str, TableFigures]


def snapshot(conn: psycopg.Connection[Any]) -> Snapshot:
    lsn = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    assert lsn is not None
    tables = {row[0]: TableFigures(*row[1:]) for row in conn.execute(_TABLES)}
    return Snapshot(lsn[0], tables)


def wait_for_statistics(
    engine: Engine,
    conn: psycopg.Connection[Any],
    before: Snapshot,
    inserted: int,
    updated: int = 0,
) -> None:
    """Until the server's statistics count `inserted` more instances than `before` did, and
    `updated` more instance updates. A backend reports its counts when it exits (or at an idle
    moment, up to ten seconds late): the engine's pools are drained, so their sessions exit."""
    engine.command_pool.drain()
    engine.pool.drain()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        now, then = snapshot(conn).tables["process_instance"], before.tables["process_instance"]
        if now.inserted - then.inserted >= inserted and now.updated - then.updated >= updated:
            return
        time.sleep(0.05)
    raise TimeoutError(f"the statistics never counted {inserted} new instances")


@dataclass(frozen=True)
class Cost:
    """What `instances` instances cost between two snapshots, per instance."""

    instances: int
    rows: dict[str, tuple[float, float, float]]  # table -> inserted, updated, deleted
    index_entries: dict[str, float]
    bytes_by_table: dict[str, float]
    triggers: dict[str, int]
    wal_bytes: float

    @property
    def rows_written(self) -> float:
        return sum(sum(r) for r in self.rows.values())

    @property
    def total_index_entries(self) -> float:
        return sum(self.index_entries.values())

    @property
    def table_bytes(self) -> float:
        return sum(self.bytes_by_table.values())


def cost(conn: psycopg.Connection[Any], before: Snapshot, after: Snapshot, n: int) -> Cost:
    wal = conn.execute(
        "SELECT pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)", (after.wal_lsn, before.wal_lsn)
    ).fetchone()
    assert wal is not None
    rows: dict[str, tuple[float, float, float]] = {}
    entries: dict[str, float] = {}
    sizes: dict[str, float] = {}
    triggers: dict[str, int] = {}
    for name, a in after.tables.items():
        b = before.tables.get(name, TableFigures(0, 0, 0, 0, 0, a.indexes, a.triggers))
        ins, upd, hot, dele = (
            a.inserted - b.inserted,
            a.updated - b.updated,
            a.hot_updated - b.hot_updated,
            a.deleted - b.deleted,
        )
        if ins or upd or dele:
            rows[name] = (ins / n, upd / n, dele / n)
            entries[name] = (ins + upd - hot) * a.indexes / n
            if a.triggers:
                triggers[name] = a.triggers
        if a.total_bytes != b.total_bytes:
            sizes[name] = (a.total_bytes - b.total_bytes) / n
    return Cost(n, rows, entries, sizes, triggers, float(wal[0]) / n)


def flag_handler(name: str) -> Handler:
    """A handler that sets the variable `name` to true."""
    return lambda ctx: {name: True}


def deploy_straight(engine: Engine) -> None:
    for name in ("one", "two", "three"):
        engine.register_handler(name, flag_handler(name))
    model = (
        ProcessBuilder(STRAIGHT_KEY)
        .start_event("start")
        .service_task("one", handler="one")
        .service_task("two", handler="two")
        .service_task("three", handler="three")
        .end_event("end")
        .chain("start", "one", "two", "three", "end")
        .build()
    )
    engine.deploy(model)


def straight_cost(engine: Engine, instances: int) -> Cost:
    """Run `instances` straight-through instances and say what each cost."""
    with psycopg.connect(engine.database.url, autocommit=True) as conn:
        before = snapshot(conn)
        for n in range(instances):
            engine.start_latest(STRAIGHT_KEY, {"n": n})
        wait_for_statistics(engine, conn, before, instances)
        return cost(conn, before, snapshot(conn), instances)


def deploy_order(engine: Engine) -> None:
    from app.demo import ORDER_BPMN, register_handlers

    register_handlers(engine)
    engine.deploy(ORDER_BPMN, name="demo-order")


def order_cost(engine: Engine, orders: int) -> Cost:
    """Run `orders` demo orders to their end and say what each cost: start (check, split), fetch
    and complete the external task, complete the user task, run the timer (ship, end)."""
    from app.demo import ORDER_KEY

    with psycopg.connect(engine.database.url, autocommit=True) as conn:
        before = snapshot(conn)
        started = [
            engine.start_latest(ORDER_KEY, {"customer": "c", "amount": 10.0 + n}).id
            for n in range(orders)
        ]
        done = 0
        while done < orders:
            tasks = engine.fetch_and_lock("profile", {"reserve-stock": 60_000}, max_tasks=50)
            assert tasks, "the external tasks ran out before every order had one"
            for locked in tasks:
                engine.complete_external_task(locked["id"], "profile", {"reserved": True})
            done += len(tasks)
        for user_task in engine.user_tasks(definition_key=ORDER_KEY):
            engine.complete_task(user_task.id, {"approved": True})
        for instance_id in started:
            for job in engine.jobs(instance_id=instance_id):
                engine.execute_job(job.id)
        states = {str(engine.instance(instance_id).state) for instance_id in started}
        assert states == {"Completed"}, states
        wait_for_statistics(engine, conn, before, orders, orders)
        return cost(conn, before, snapshot(conn), orders)


def warm(engine: Engine, instances: int = 50) -> None:
    """Warm the pool, the definition cache and prepared statements, and wait until the server's
    statistics count the warming instances, so no later measure counts them."""
    with psycopg.connect(engine.database.url, autocommit=True) as conn:
        before = snapshot(conn)
        for n in range(instances):
            engine.start_latest(STRAIGHT_KEY, {"n": n})
        wait_for_statistics(engine, conn, before, instances)


def python_profile(engine: Engine, instances: int) -> tuple[float, float, float]:
    """Straight-through instances under cProfile: statements sent per instance, seconds per
    instance in all and waiting on the server (psycopg's execute, its round trip included)."""
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    for n in range(instances):
        engine.start_latest(STRAIGHT_KEY, {"n": n})
    profiler.disable()
    elapsed = time.perf_counter() - start
    stats = pstats.Stats(profiler)
    calls = 0
    waiting = 0.0
    for (path, _line, name), row in stats.stats.items():  # type: ignore[attr-defined]
        if name == "execute" and "psycopg" in path:
            calls += row[1]
            waiting += row[3]
    return calls / instances, elapsed / instances, waiting / instances


def report(title: str, figures: Cost) -> None:
    print(f"{title}: per instance, over {figures.instances} instances")
    print(f"  {'table':24} {'ins':>6} {'upd':>6} {'del':>6} {'idx entries':>12} {'bytes':>9}")
    for name in sorted(figures.rows, key=lambda t: -sum(figures.rows[t])):
        ins, upd, dele = figures.rows[name]
        print(
            f"  {name:24} {ins:6.2f} {upd:6.2f} {dele:6.2f} "
            f"{figures.index_entries[name]:12.2f} {figures.bytes_by_table.get(name, 0):9.0f}"
        )
    print(
        f"  rows written {figures.rows_written:.2f}, index entries "
        f"{figures.total_index_entries:.2f}, WAL {figures.wal_bytes:.0f} B, "
        f"table+index bytes {figures.table_bytes:.0f} B"
    )
    triggers = ", ".join(f"{t} {n}" for t, n in sorted(figures.triggers.items()))
    print(f"  triggers on the tables written: {triggers or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", type=int, default=2000)
    parser.add_argument("--orders", type=int, default=300)
    parser.add_argument("--python", action="store_true", help="also profile the Python side")
    parser.add_argument("--database-url")
    args = parser.parse_args()
    with scratch_engine(args.database_url) as engine:
        deploy_straight(engine)
        deploy_order(engine)
        warm(engine)
        report("straight-through", straight_cost(engine, args.instances))
        report("parallel demo order", order_cost(engine, args.orders))
        if args.python:
            statements, seconds, waiting = python_profile(engine, min(args.instances, 1000))
            print(
                f"python side (cProfile, straight-through): {statements:.2f} statements, "
                f"{seconds * 1000:.2f} ms per instance under the profiler, of which "
                f"{waiting * 1000:.2f} ms in psycopg's execute (round trip and server work)"
            )


if __name__ == "__main__":
    main()
