"""What `/metrics` reads from the database when it is scraped: one count over an index, under a
short timeout. A database that does not answer in time makes `interlock_database_up` 0 and
leaves the count out; the scrape itself still succeeds."""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg

from engine import metrics
from engine.errors import DatabaseUnavailable
from engine.queries import Connection, query

if TYPE_CHECKING:
    from engine.api import Engine

# How long a scrape waits for a pooled connection and for its statement.
SCRAPE_TIMEOUT_SECONDS = 1.0


@query
def open_incidents(conn: Connection, timeout_ms: int) -> int:
    """Open incidents (the partial index `ix_incident_open` holds exactly those)."""
    with conn.transaction():
        conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(timeout_ms),))
        row = conn.execute("SELECT count(*) FROM incident WHERE state = 'Open'").fetchone()
    return int(row[0]) if row else 0


def exposition(engine: Engine, timeout: float = SCRAPE_TIMEOUT_SECONDS) -> bytes:
    """The process's metrics in the Prometheus text format, with the engine's pools and the
    database read now."""
    count: int | None
    availability = engine.availability
    try:
        # Fails at once while the engine knows the database is down (engine/outage.py).
        availability.admit()
        with availability.translating(), engine.pool.connection(timeout=timeout) as conn:
            count = open_incidents(conn, max(1, int(timeout * 1000)))
    except (psycopg.Error, DatabaseUnavailable):
        count = None
    metrics.DATABASE_UP.set(0 if count is None else 1)
    pools = {"read": engine.pool, "command": engine.command_pool}
    return metrics.render(pools, count)
