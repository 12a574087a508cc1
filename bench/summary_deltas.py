"""What the summary triggers cost a straight-through instance, and what unfolded deltas cost the
console's counts.

    python -m bench.summary_deltas [--replays 2000] [--deltas 10000 | --instances N] [--repeat 30]

On the scratch database of bench/scratch.py (a new embedded server unless DATABASE_URL is set).

1. The triggers. One straight-through instance (bench/engine_throughput.py's model) is started
   through the engine while its statements are recorded; then its write is replayed `--replays`
   times with fresh ids (time-ordered, as the engine's) on one connection set up as the engine's
   command sessions are (bench/write_floor.py), with `track_functions = 'pl'`. The server's own
   clock of the session's functions, read before and after each write
   (pg_stat_xact_user_functions), gives the microseconds each summary trigger function took per
   instance (its queries and the summary_delta rows it inserts; capturing the transition tables
   is the statement's part), beside the summary_delta rows per instance.
2. The reads. With every delta folded, each count read of the console (the overview's counts by
   key, state and incident counts, a definition's node counts, the trends) is timed `--repeat`
   times on a pooled read connection; then the replays go on until `--deltas` deltas lie unfolded
   (or `--instances` instances' deltas, in hundreds) and the same reads are timed again. Medians
   in milliseconds.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psycopg

from bench.scratch import scratch_engine
from bench.write_floor import record
from bench.write_profile import STRAIGHT_KEY, deploy_straight
from engine.api import Engine
from engine.commands.summaries import FoldSummaries
from engine.core.executor import PLAN_CACHE_MODE
from engine.db.connections import connect_kwargs
from engine.db.ids import new_id
from engine.loops.announcer import QUIET_TRIGGERS
from engine.queries import summaries

# A lone id in the document (a JSON string that is exactly a UUID), not one inside a definition id.
_ID = re.compile(rb'"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"')

_FUNCTION_TIMES = (
    "SELECT funcname, calls, total_time FROM pg_stat_xact_user_functions "
    "WHERE funcname LIKE 'interlock_summarise_%'"
)


class Replayer:
    """The recorded write of one straight-through instance, replayed with fresh ids."""

    def __init__(self, engine: Engine, sent: list[tuple[Any, Any]]) -> None:
        self.lookup = next(item for item in sent if "DISTINCT ON" in repr(item[0]))
        self.write = next(item for item in sent if "WITH d AS" in repr(item[0]))
        document = self.write[1][0]
        body = document.obj if hasattr(document, "obj") else document
        self.text = body if isinstance(body, bytes) else str(body).encode()
        kwargs = connect_kwargs(engine.settings, PLAN_CACHE_MODE)
        self.conn = psycopg.connect(engine.database.url, **kwargs)
        self.conn.execute(QUIET_TRIGGERS)
        self.conn.execute("SET track_functions = 'pl'")
        self.conn.commit()

    def once(self, timed: dict[str, list[float]] | None = None) -> None:
        """One instance: BEGIN, the look-up, the write, (the functions' clocks), COMMIT."""
        fresh: dict[bytes, bytes] = {}

        def renew(match: re.Match[bytes]) -> bytes:
            old = match.group(1)
            if old not in fresh:
                fresh[old] = str(new_id()).encode()
            return b'"' + fresh[old] + b'"'

        conn = self.conn
        conn.execute(self.lookup[0], self.lookup[1], prepare=True).fetchall()
        # The counters a session has not reported yet (reported when idle, so never inside a
        # transaction): the write's share is their difference within it.
        before = conn.execute(_FUNCTION_TIMES).fetchall() if timed is not None else []
        conn.execute(self.write[0], (_ID.sub(renew, self.text).decode(),), prepare=True)
        if timed is not None:
            for name, calls, total in conn.execute(_FUNCTION_TIMES):
                found = timed.setdefault(name, [0.0, 0.0])
                found[0] += calls
                found[1] += total
            for name, calls, total in before:
                timed[name][0] -= calls
                timed[name][1] -= total
        conn.commit()

    def close(self) -> None:
        self.conn.close()


def delta_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM summary_delta").fetchone()
        assert row is not None
        return int(row[0])


def trigger_times(replayer: Replayer, url: str, replays: int) -> None:
    before = delta_rows(url)
    timed: dict[str, list[float]] = {}
    start = time.perf_counter()
    for _ in range(replays):
        replayer.once(timed)
    elapsed = time.perf_counter() - start
    rows = (delta_rows(url) - before) / replays
    print(f"triggers, per straight-through instance over {replays} replays:")
    total = 0.0
    for name, (calls, ms) in sorted(timed.items()):
        total += ms
        print(f"  {name:40s} {calls / replays:4.1f} calls {1000 * ms / replays:8.1f} us")
    print(f"  {'all summary triggers':40s} {'':10s} {1000 * total / replays:8.1f} us")
    print(f"  summary_delta rows {rows:.2f}; replay {1000 * elapsed / replays:.3f} ms per instance")


def time_reads(engine: Engine, definition_id: str, repeat: int) -> dict[str, float]:
    medians: dict[str, float] = {}
    with engine.connection() as conn:
        now = datetime.now(UTC)
        named: dict[str, Callable[[], Any]] = {
            "overview counts by key": lambda: summaries.key_counts(conn),
            "instances by state": lambda: summaries.state_counts(conn),
            "open incidents": lambda: summaries.open_incident_count(conn),
            "node counts of a definition": lambda: summaries.node_counts(conn, definition_id),
            "trends by key": lambda: summaries.trends_by_key(conn, now),
        }
        for name, read in named.items():
            read()
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                read()
                times.append(time.perf_counter() - start)
            medians[name] = 1000 * statistics.median(times)
    return medians


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replays", type=int, default=2000)
    parser.add_argument("--deltas", type=int, default=10_000)
    parser.add_argument("--instances", type=int, default=0, help="instead of --deltas")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with scratch_engine(None) as engine:
        url = engine.database.url
        deploy_straight(engine)
        definition_id = engine.latest_definition(STRAIGHT_KEY).id
        for n in range(50):
            engine.start_latest(STRAIGHT_KEY, {"n": n})
        replayer = Replayer(engine, record(engine))
        try:
            for _ in range(200):
                replayer.once()
            trigger_times(replayer, url, args.replays)
            engine.run(FoldSummaries())
            folded = time_reads(engine, definition_id, args.repeat)
            instances = 0
            while instances < args.instances if args.instances else delta_rows(url) < args.deltas:
                for _ in range(100):
                    replayer.once()
                instances += 100
            pending = delta_rows(url)
            unfolded = time_reads(engine, definition_id, args.repeat)
        finally:
            replayer.close()
    print(f"reads (median ms of {args.repeat}): folded, then {pending} unfolded deltas")
    print(f"  ({instances} straight-through instances' worth)")
    for name, ms in folded.items():
        later = unfolded[name]
        print(f"  {name:30s} {ms:8.2f} {later:8.2f}  x{later / ms:.1f}")


if __name__ == "__main__":
    main()
