"""Camunda's metrics sums and telemetry data, answered from the summary rows
(engine/db/summaries.py) and the database's own description, never from a scan of the big
tables.

Which Camunda metric each summary counts:
- `root-process-instance-start` (and its older name `process-instances`): instances started,
  from the five-minute activity buckets, so a period is read to the bucket its bounds fall in;
- `activity-instance-start` (`flow-node-instances`) and `activity-instance-end`: node visits and
  ended visits still in history, from the per-node summaries, which are not kept by time.

Camunda's other metric names are known but not counted by Interlock: their sum is 0.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from psycopg import sql

from engine.queries import Connection, query
from engine.queries.summaries import LIVE_BUCKETS, LIVE_NODES
from engine.sql import covers
from engine.sql.filters import Where


class CountedBy(StrEnum):
    """The summary a metric is answered from."""

    STARTED_INSTANCES = "started-instances"
    VISITS = "visits"
    ENDED_VISITS = "ended-visits"
    NOT_COUNTED = "not-counted"


# Camunda's metric names (its REST reference's list for GET /metrics/{name}/sum) and what counts
# each here.
METRICS: dict[str, CountedBy] = {
    "root-process-instance-start": CountedBy.STARTED_INSTANCES,
    "process-instances": CountedBy.STARTED_INSTANCES,
    "activity-instance-start": CountedBy.VISITS,
    "flow-node-instances": CountedBy.VISITS,
    "activity-instance-end": CountedBy.ENDED_VISITS,
    **{
        name: CountedBy.NOT_COUNTED
        for name in (
            "job-acquisition-attempt",
            "job-acquired-success",
            "job-acquired-failure",
            "job-execution-rejected",
            "job-successful",
            "job-failed",
            "job-locked-exclusive",
            "executed-decision-elements",
            "executed-decision-instances",
            "decision-instances",
            "history-cleanup-removed-process-instances",
            "history-cleanup-removed-case-instances",
            "history-cleanup-removed-decision-instances",
            "history-cleanup-removed-batch-operations",
            "history-cleanup-removed-task-metrics",
            "task-users",
            "unique-task-workers",
        )
    },
}

# The summaries are history: a principal reads the counts of the definitions whose history they
# may read, of their tenants.
_READABLE = covers.history_of("d.key", tenant="d.tenant_id")
_DEFINED = " JOIN process_definition d ON d.id = s.definition_id"


@query
def metric_sum(
    conn: Connection, name: str, start: datetime | None = None, end: datetime | None = None
) -> int:
    """The sum of Camunda's metric `name` (a key of METRICS) from `start` (inclusive) to `end`
    (exclusive); the started instances are read by five-minute bucket."""
    counted = METRICS[name]
    if counted is CountedBy.NOT_COUNTED:
        return 0
    where = Where()
    if counted is CountedBy.STARTED_INSTANCES:
        where.when(start, "s.bucket >= date_bin('5 minutes', {}, TIMESTAMPTZ '2000-01-01Z')")
        where.when(end, "s.bucket < {}")
        source, column = LIVE_BUCKETS, "started"
    else:
        source = LIVE_NODES
        column = "visits" if counted is CountedBy.VISITS else "completed_visits"
    where.authorized(_READABLE)
    statement = (
        sql.SQL(f"SELECT coalesce(sum(s.{column}), 0) FROM {source} s{_DEFINED}") + where.sql()
    )
    row = conn.execute(statement, where.params()).fetchone()
    assert row is not None
    return int(row[0])


@dataclass(frozen=True)
class DatabaseInfo:
    """The database an installation keeps its rows in: its server's version, and an id that
    stays the same for every engine on that database."""

    vendor: str
    version: str
    installation: str


# The server's cluster id and the database's oid name one database of one server.
_DATABASE = (
    "SELECT current_setting('server_version'), "
    "(SELECT oid FROM pg_database WHERE datname = current_database()), "
    "current_database(), inet_server_port()"
)


@query
def database_info(conn: Connection) -> DatabaseInfo:
    row = conn.execute(_DATABASE).fetchone()
    assert row is not None
    version, oid, name, port = row
    installation = uuid.uuid5(uuid.NAMESPACE_URL, f"postgresql:{port}/{name}/{oid}")
    return DatabaseInfo("PostgreSQL", str(version), str(installation))
