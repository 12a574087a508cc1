"""How a straight-through instance's time splits between the engine's Python and PostgreSQL.

    python -m bench.write_floor [--seconds 5] [--database-url URL]

One straight-through instance (bench/engine_throughput.py's model) is started through the engine
while its statements are recorded. Then, on one connection set up as the engine's command
sessions are (generic plans, the notify triggers quiet), the same transaction is replayed with no
engine code at all: BEGIN, the definition's look-up if the start sent one, the one write statement
with the recorded document (every id in it replaced by a fresh one of the engine's time-ordered
kind, so each replay writes new rows where the engine's would go), COMMIT. Beside
the minimal transaction (INSERT one row, UPDATE one row, COMMIT) and the engine's own rate, the
replay's rate is the floor of b/a for these writes: what the database alone costs per instance.
"""

from __future__ import annotations

import argparse
import re
import time
from typing import Any

import psycopg

from bench.engine_throughput import minimal_transactions
from bench.scratch import scratch_engine
from bench.write_profile import STRAIGHT_KEY, deploy_straight
from engine.core.executor import PLAN_CACHE_MODE
from engine.db.connections import connect_kwargs
from engine.db.ids import new_id
from engine.loops.announcer import QUIET_TRIGGERS

# A lone id in the document (a JSON string that is exactly a UUID), not one inside a definition id.
_ID = re.compile(rb'"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"')


def record(engine: Any) -> list[tuple[Any, Any]]:
    """The statements and parameters one straight-through start sends."""
    sent: list[tuple[Any, Any]] = []
    execute = psycopg.Cursor.execute

    def recording(self: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        sent.append((query, params))
        return execute(self, query, params, **kwargs)

    psycopg.Cursor.execute = recording  # type: ignore[method-assign]
    try:
        engine.start_latest(STRAIGHT_KEY, {"n": 0})
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    return sent


def replay(url: str, engine: Any, sent: list[tuple[Any, Any]], seconds: float) -> float:
    """Instances per second of the recorded transaction replayed with fresh ids."""
    # A start by key takes the latest definition it remembered: no look-up once warm.
    lookup = next((item for item in sent if "DISTINCT ON" in repr(item[0])), None)
    write = next(item for item in sent if "WITH d AS" in repr(item[0]))
    document = write[1][0]
    body = document.obj if hasattr(document, "obj") else document
    text = body if isinstance(body, bytes) else str(body).encode()
    kwargs = connect_kwargs(engine.settings, PLAN_CACHE_MODE)
    with psycopg.connect(url, **kwargs) as conn:
        conn.execute(QUIET_TRIGGERS)
        conn.commit()
        count = 0
        deadline = time.perf_counter() + seconds
        start = time.perf_counter()
        while time.perf_counter() < deadline:
            fresh: dict[bytes, bytes] = {}

            def renew(match: re.Match[bytes], fresh: dict[bytes, bytes] = fresh) -> bytes:
                old = match.group(1)
                if old not in fresh:
                    fresh[old] = str(new_id()).encode()
                return b'"' + fresh[old] + b'"'

            if lookup is not None:
                conn.execute(lookup[0], lookup[1], prepare=True).fetchall()
            conn.execute(write[0], (_ID.sub(renew, text).decode(),), prepare=True).fetchall()
            conn.commit()
            count += 1
        return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    with scratch_engine(args.database_url) as engine:
        url = engine.database.url
        deploy_straight(engine)
        for n in range(50):
            engine.start_latest(STRAIGHT_KEY, {"n": n})
        sent = record(engine)
        a = minimal_transactions(url, args.seconds)
        start = time.perf_counter()
        count = 0
        while time.perf_counter() - start < args.seconds:
            engine.start_latest(STRAIGHT_KEY, {"n": count})
            count += 1
        b = count / (time.perf_counter() - start)
        floor = replay(url, engine, sent, args.seconds)
        a_after = minimal_transactions(url, args.seconds)
    a = (a + a_after) / 2
    print(f"(a) minimal transactions/s: {a:.0f}")
    print(f"(b) straight-through instances/s through the engine: {b:.0f}  b/a = {b / a:.2f}")
    print(
        f"(c) the same transaction replayed without the engine: {floor:.0f}/s  "
        f"c/a = {floor / a:.2f}"
    )
    print(
        f"per instance: {1000 / b:.3f} ms in all, of which the database's part (c) "
        f"{1000 / floor:.3f} ms and the engine's Python {1000 / b - 1000 / floor:.3f} ms"
    )


if __name__ == "__main__":
    main()
