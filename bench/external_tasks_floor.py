"""How near the external-task round trip is to its floor, against the same run's minimal rate.

Five figures from one run, each with four threads (one connection each) against a backlog of open
tasks topped up before each window:
(a) minimal transactions: INSERT one row, UPDATE one row, COMMIT;
(b) the engine: fetch-and-lock one task, complete it (as `bench.external_tasks_bench` measures);
(c) the store alone: the engine's own fetch and write statements, sent as the executor sends them
    for an optimistic report over the fetch's snapshot, with the write document built by hand
    instead of by commands and semantics;
(d) a lower bound: one statement that locks a task, then one statement that writes only what any
    completion must change (the task, its token, the instance, the reported variable): no lock,
    no load, no history, no outbox.
(e) the store's fetch-and-lock (which loads the task's instance) followed by the bare write.
Read b/c as what the engine's Python costs, and d as the best any implementation keeping each
report in its own committed transaction could do on this machine; e/d is what the store's fetch
costs over the bare one, c/e what its write (history, outbox, the compare-and-swap checks) costs
over the bare one. The windows alternate in rounds (see `bench.external_tasks_bench` for why).
"""

from __future__ import annotations

import argparse
import statistics
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psycopg

from bench.external_tasks_bench import (
    TOPIC,
    WORKERS,
    minimal_transactions,
    prepare,
    race,
    replenish,
    round_trips,
    warm_up,
)
from bench.scratch import scratch_engine
from engine.core.executor import GENERIC_PLANS
from engine.core.runtime import InstanceRun
from engine.db.ids import new_id
from engine.loops.announcer import QUIET_TRIGGERS
from engine.store import external_tasks, persist

LOCK_MS = 60_000

# (d): the fewest statements a fetch and a completion can be.
_BARE_FETCH = """
UPDATE external_task SET worker_id = %(worker)s,
    lock_expires_at = %(now)s + interval '1 minute'
WHERE id = (
    SELECT id FROM external_task
    WHERE state = 'Open' AND topic = %(topic)s
      AND (lock_expires_at IS NULL OR lock_expires_at <= %(now)s)
    ORDER BY priority DESC, created_at, id
    LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id
"""
_BARE_COMPLETE = """
WITH task AS (
    UPDATE external_task SET state = 'Completed', ended_at = %(now)s
    WHERE id = %(task)s AND worker_id = %(worker)s
    RETURNING instance_id, token_id
), token_moved AS (
    UPDATE token SET node_id = 'end', state = 'Completed', updated_at = %(now)s,
        version = version + 1
    WHERE id = (SELECT token_id FROM task)
), instance_ended AS (
    UPDATE process_instance SET state = 'Completed', ended_at = %(now)s, version = version + 1
    WHERE id = (SELECT instance_id FROM task)
)
INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at)
SELECT instance_id, '', 'done', 'boolean', 'true', %(now)s FROM task
"""


def _bare_round_trip(conn: psycopg.Connection[Any], worker: str) -> bool:
    now = datetime.now(UTC)
    row = conn.execute(
        _BARE_FETCH, {"worker": worker, "now": now, "topic": TOPIC}, prepare=True
    ).fetchone()
    if row is None:
        return False
    conn.execute(
        _BARE_COMPLETE, {"task": row[0], "worker": worker, "now": datetime.now(UTC)}, prepare=True
    )
    return True


def _store_fetch(
    conn: psycopg.Connection[Any], worker: str
) -> tuple[external_tasks.ExternalTaskInfo, InstanceRun] | None:
    """The engine's fetch-and-lock of one task: the task and its instance, or None."""
    locked = external_tasks.fetch_and_lock(
        conn,
        worker_id=worker,
        lock_ms_by_topic={TOPIC: LOCK_MS},
        max_tasks=1,
        use_priority=True,
        now=datetime.now(UTC),
    )
    return locked[0] if locked else None


def _store_fetch_bare_write(conn: psycopg.Connection[Any], worker: str) -> bool:
    locked = _store_fetch(conn, worker)
    if locked is None:
        return False
    conn.execute(
        _BARE_COMPLETE,
        {"task": locked[0].id, "worker": worker, "now": datetime.now(UTC)},
        prepare=True,
    )
    return True


def _store_round_trip(conn: psycopg.Connection[Any], worker: str) -> bool:
    locked = _store_fetch(conn, worker)
    if locked is None:
        return False
    task, run = locked
    now = datetime.now(UTC)
    # As an optimistic report runs: over the instance the fetch loaded, the write as its own
    # transaction.
    token = run.tokens[task.token_id]
    doc = _completion(run.instance.id, run.instance.version, token, task.id, worker, now)
    conn.execute(persist.save_statement(doc), (persist.encode(doc),), prepare=True)
    return True


def _completion(
    instance_id: Any, instance_version: int, token: Any, task_id: Any, worker: str, now: datetime
) -> dict[str, Any]:
    """The write document the engine makes for start -> work -> end completing at `work`."""
    end_visit = new_id()
    doc = persist.merged([])  # every list, empty
    doc["changed_instance"] = [
        {"id": instance_id, "version": instance_version, "state": "Completed", "ended_at": now}
    ]
    doc["changed_tokens"] = [
        {
            "id": token.id,
            "version": token.version,
            "node_id": "end",
            "state": "Completed",
            "parallel_group": None,
            "merged_into": None,
            "visit_id": None,
            "updated_at": now,
        }
    ]
    doc["variables"] = [
        {
            "instance_id": instance_id,
            "name": "done",
            "type": "boolean",
            "value": True,
            "updated_at": now,
        }
    ]
    doc["changed_external_tasks"] = [
        {
            "id": task_id,
            "state": "Completed",
            "worker_id": None,
            "lock_expires_at": None,
            "retries": None,
            "error_message": None,
            "error_details": None,
            "ended_at": now,
            "loaded_worker_id": worker,
        }
    ]
    doc["new_visits"] = [
        {
            "id": end_visit,
            "instance_id": instance_id,
            "token_id": token.id,
            "node_id": "end",
            "node_name": None,
            "node_type": "endEvent",
            "state": "Completed",
            "started_at": now,
            "ended_at": now,
        }
    ]
    doc["ended_visits"] = [{"id": token.visit_id, "state": "Completed", "ended_at": now}]
    events = [
        ("visit.completed", "work", token.visit_id),
        ("visit.completed", "end", end_visit),
        ("external_task.completed", "work", None),
        ("instance.completed", None, None),
        ("variables.updated", None, None),
    ]
    doc["outbox"] = [
        {
            "event": event,
            "instance_id": instance_id,
            "token_id": token.id,
            "node_id": node,
            "history_id": visit,
            "ordinality": ordinal,
        }
        for ordinal, (event, node, visit) in enumerate(events)
    ]
    doc["expected"] = persist.expected_rows(doc)
    return doc


RoundTrip = Callable[[psycopg.Connection[Any], str], bool]


def rate(url: str, seconds: float, round_trip: RoundTrip) -> float:
    """Round trips per second of WORKERS threads, each on a connection of its own set up as the
    engine sets up its own."""

    def loop(index: int, ready: threading.Barrier, stop: threading.Event) -> int:
        made = 0
        with psycopg.connect(url, autocommit=True, options=GENERIC_PLANS) as conn:
            conn.execute(QUIET_TRIGGERS)
            ready.wait()
            while not stop.is_set() and round_trip(conn, f"floor-worker-{index}"):
                made += 1
        return made

    per_second, _ = race(WORKERS, seconds, loop)
    return per_second


# The windows after (b), by key: what each prints as, and its round trip.
WINDOWS: dict[str, tuple[str, RoundTrip]] = {
    "store": ("(c) the store alone", _store_round_trip),
    "bare": ("(d) bare lower bound", _bare_round_trip),
    "fetch": ("(e) store fetch, bare write", _store_fetch_bare_write),
}


def run(url: str | None, seconds: float, backlog: int, rounds: int) -> dict[str, Any]:
    """Rounds of windows a, b, c, d, e, then a last a: each of b to e against the mean of the
    (a) windows that open and close its round, and the median over the rounds."""
    rates: dict[str, list[float]] = {"engine": [], **{key: [] for key in WINDOWS}}
    ratios: dict[str, list[float]] = {key: [] for key in rates}
    with scratch_engine(url, pool_size=WORKERS * 2) as engine:
        db_url = engine.database.url
        warm_up(engine)
        prepare(engine)
        replenish(engine, backlog)
        minimal = [minimal_transactions(db_url, seconds)]
        for _ in range(rounds):
            rates["engine"].append(round_trips(engine, seconds)[0])
            replenish(engine, backlog)
            for key, (_, round_trip) in WINDOWS.items():
                rates[key].append(rate(db_url, seconds, round_trip))
                replenish(engine, backlog)
            minimal.append(minimal_transactions(db_url, seconds))
            around = (minimal[-2] + minimal[-1]) / 2
            for key, measured in rates.items():
                ratios[key].append(measured[-1] / around)
    return {
        "minimal": statistics.median(minimal),
        **{key: statistics.median(values) for key, values in ratios.items()},
        **{f"{key}_rate": statistics.median(values) for key, values in rates.items()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each window")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--backlog", type=int, default=10000, help="open tasks at the start of each window"
    )
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    figures = run(args.database_url, args.seconds, args.backlog, args.rounds)
    print(
        f"medians of {args.rounds} rounds; (a) minimal transactions/s over {WORKERS} connections: "
        f"{figures['minimal']:.0f}"
    )
    labels = {"engine": "(b) the engine", **{key: label for key, (label, _) in WINDOWS.items()}}
    for key, label in labels.items():
        print(f"{label:28s} {figures[key + '_rate']:6.0f} round trips/s   /a = {figures[key]:.2f}")


if __name__ == "__main__":
    main()
