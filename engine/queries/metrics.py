"""What `/metrics` reads from the database when it is scraped: one count over an index, under a
short timeout. A database that does not answer in time makes `interlock_database_up` 0 and
leaves the count out; the scrape itself still succeeds."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import psycopg

from engine.errors import DatabaseUnavailable
from engine.observe import metrics
from engine.queries import Connection, query
from engine.queries import alerts as alert_reads
from engine.sql.filters import state_literal
from engine.states import IncidentState

if TYPE_CHECKING:
    from engine.api import Engine

# How long a scrape waits for a pooled connection and for its statement.
SCRAPE_TIMEOUT_SECONDS = 1.0


@dataclass(frozen=True)
class Readings:
    """What a scrape reads from the database."""

    open_incidents: int
    # How long the oldest due job that no executor holds has waited (0: none waits).
    overdue_seconds: float
    # Instances past a stuck-instance alert threshold: (definition key, kind) -> how many.
    open_alerts: dict[tuple[str, str], int] = field(default_factory=dict)


@query
def readings(conn: Connection, timeout_ms: int, now: datetime | None = None) -> Readings:
    """Open incidents (the partial index `ix_incident_open` holds exactly those) and the wait of
    the oldest acquirable due job (`ix_job_due`, read from its start: only jobs some executor
    holds right now are stepped over): job executor lag across every process."""
    with conn.transaction():
        conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(timeout_ms),))
        row = conn.execute(
            "SELECT (SELECT count(*) FROM incident WHERE state = "
            + state_literal(IncidentState.OPEN)
            + "), "
            "(SELECT extract(epoch FROM now() - min(due_at)) FROM job "
            " WHERE retries > 0 AND due_at <= now() "
            " AND (lock_expires_at IS NULL OR lock_expires_at < now()))"
        ).fetchone()
        found = alert_reads.counts(conn, now) if now is not None else []
    if row is None:
        return Readings(0, 0.0)
    open_alerts = {(count.definition_key, count.kind): count.alerts for count in found}
    return Readings(int(row[0]), max(0.0, float(row[1] or 0)), open_alerts)


def exposition(engine: Engine, timeout: float = SCRAPE_TIMEOUT_SECONDS) -> bytes:
    """The process's metrics in the Prometheus text format, with the engine's pools and the
    database read now."""
    read: Readings | None
    availability = engine.availability
    try:
        # Fails at once while the engine knows the database is down (engine/db/outage.py).
        availability.admit()
        with availability.translating(), engine.pool.connection(timeout=timeout) as conn:
            read = readings(conn, max(1, int(timeout * 1000)), engine.clock())
    except (psycopg.Error, DatabaseUnavailable):
        read = None
    metrics.DATABASE_UP.set(0 if read is None else 1)
    pools = {"read": engine.pool, "command": engine.command_pool}
    if read is None:
        return metrics.render(pools, None, None)
    return metrics.render(pools, read.open_incidents, read.overdue_seconds, read.open_alerts)
