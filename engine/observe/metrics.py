"""The process's metrics, declared once: every counter, histogram and gauge Interlock exposes.

Each process (server replica, job executor, worker) counts what it does itself; `/metrics`
renders this process's registry in the Prometheus text format. Values that live in the database
(open incidents, job lag, whether the database answers) are read when scraped, by collectors
registered on the same registry.

Code that does work imports the metric it moves from here; nothing else declares a metric.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

# No `_created` series: they double the exposition and no dashboard here reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]
REGISTRY = CollectorRegistry(auto_describe=True)

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

# -- commands ---------------------------------------------------------------------------------
COMMANDS = Counter(
    "interlock_commands",
    "Commands run, by command name and outcome (ok, conflict, bad_request, not_found, error; "
    "empty: a fetch that locked nothing and rolled back).",
    ("command", "outcome"),
    registry=REGISTRY,
)
COMMAND_SECONDS = Histogram(
    "interlock_command_duration_seconds",
    "Time a command took, retries included, by command name.",
    ("command",),
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)

# -- jobs -------------------------------------------------------------------------------------
JOBS = Counter(
    "interlock_jobs",
    "Jobs the executors of this process ran, by outcome (executed, failed, gone, ...).",
    ("outcome",),
    registry=REGISTRY,
)
JOB_LAG_SECONDS = Histogram(
    "interlock_job_lag_seconds",
    "How late a job was acquired: acquisition time minus its due time.",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
    registry=REGISTRY,
)

# -- external tasks ---------------------------------------------------------------------------
EXTERNAL_TASK_FETCHES = Counter(
    "interlock_external_task_fetches",
    "Fetch-and-lock requests answered, by whether they locked any task (locked, empty).",
    ("result",),
    registry=REGISTRY,
)
EXTERNAL_TASKS_LOCKED = Counter(
    "interlock_external_tasks_locked",
    "External tasks locked for workers.",
    registry=REGISTRY,
)
EXTERNAL_TASK_LOCK_EXPIRIES = Counter(
    "interlock_external_task_lock_expiries",
    "External tasks locked again after another worker's lock expired on them.",
    registry=REGISTRY,
)

# -- outbox, streams, webhooks ----------------------------------------------------------------
OUTBOX_TAIL_LAG_SECONDS = Gauge(
    "interlock_outbox_tail_lag_seconds",
    "Age of the newest outbox row the tail of this process has emitted, when it emitted it.",
    registry=REGISTRY,
)
SSE_CLIENTS = Gauge(
    "interlock_sse_clients",
    "Server-sent-event streams open on this process.",
    registry=REGISTRY,
)
WEBHOOK_DELIVERIES = Counter(
    "interlock_webhook_deliveries",
    "Webhook delivery attempts, by outcome (delivered, failed, dead_letter).",
    ("outcome",),
    registry=REGISTRY,
)

# -- the database -----------------------------------------------------------------------------
DATABASE_UP = Gauge(
    "interlock_database_up",
    "1 when the last look at the database from this process succeeded, else 0.",
    registry=REGISTRY,
)
DATABASE_UP.set(1)

# -- retention --------------------------------------------------------------------------------
CLEANUP_DELETED = Counter(
    "interlock_history_cleanup_deleted",
    "Rows the history cleanup deleted, by what they were (instances, outbox, ...).",
    ("kind",),
    registry=REGISTRY,
)


# -- read when scraped ------------------------------------------------------------------------


class _Scraped(Collector):
    """What `/metrics` reads at the moment it is scraped: the usage of the engine's connection
    pools (psycopg_pool's `get_stats()`) and the open incidents the database counted. `render`
    hands both over for the one scrape it renders; between scrapes this collector yields
    nothing, so a registry shared by several engines never shows one engine's numbers as
    another's."""

    # get_stats() key -> (metric name, help); gauges of the pool as it is now.
    GAUGES = {
        "pool_size": ("interlock_pool_connections", "Connections the pool holds (in use or not)."),
        "pool_available": ("interlock_pool_available", "Idle connections ready in the pool."),
        "pool_max": ("interlock_pool_max_connections", "The most connections the pool may hold."),
        "requests_waiting": ("interlock_pool_requests_waiting", "Callers waiting for one."),
    }
    # get_stats() key -> (metric name, help); counts since the pool opened.
    COUNTERS = {
        "requests_num": ("interlock_pool_requests", "Connections asked of the pool."),
        "requests_errors": ("interlock_pool_request_errors", "Requests the pool could not serve."),
        "connections_errors": ("interlock_pool_connection_errors", "Failed connection attempts."),
    }

    def __init__(self) -> None:
        self.pools: Mapping[str, Any] = {}
        self.open_incidents: int | None = None
        self.overdue_seconds: float | None = None
        # Stuck-instance alerts open now: (definition key, kind) -> instances past a threshold.
        self.open_alerts: Mapping[tuple[str, str], int] | None = None

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        stats = {name: pool.get_stats() for name, pool in self.pools.items()}
        if stats:
            for key, (metric, text) in self.GAUGES.items():
                gauge = GaugeMetricFamily(metric, text, labels=("pool",))
                for name, values in stats.items():
                    gauge.add_metric((name,), values.get(key, 0))
                yield gauge
            for key, (metric, text) in self.COUNTERS.items():
                counter = CounterMetricFamily(metric, text, labels=("pool",))
                for name, values in stats.items():
                    counter.add_metric((name,), values.get(key, 0))
                yield counter
        if self.open_incidents is not None:
            yield GaugeMetricFamily(
                "interlock_open_incidents",
                "Incidents open in the database, counted when scraped.",
                value=self.open_incidents,
            )
        if self.overdue_seconds is not None:
            yield GaugeMetricFamily(
                "interlock_jobs_overdue_seconds",
                "How long the oldest due job that no executor holds has waited (0: none), read "
                "when scraped: the lag of the job executors of every process.",
                value=self.overdue_seconds,
            )
        if self.open_alerts is not None:
            alerts = GaugeMetricFamily(
                "interlock_open_alerts",
                "Instances past a stuck-instance alert threshold, per definition key and kind "
                "(waiting, incident), read when scraped.",
                labels=("definition_key", "kind"),
            )
            for (key, kind), count in sorted(self.open_alerts.items()):
                alerts.add_metric((key, kind), count)
            yield alerts


_SCRAPED = _Scraped()
REGISTRY.register(_SCRAPED)
_SCRAPE_LOCK = threading.Lock()


def render(
    pools: Mapping[str, Any],
    open_incidents: int | None,
    overdue_seconds: float | None,
    open_alerts: Mapping[tuple[str, str], int] | None = None,
) -> bytes:
    """This process's metrics in the Prometheus text format, with `pools` (name -> psycopg_pool
    pool), `open_incidents` and `overdue_seconds` (None: the database did not answer) read for
    this scrape."""
    with _SCRAPE_LOCK:
        _SCRAPED.pools = pools
        _SCRAPED.open_incidents, _SCRAPED.overdue_seconds = open_incidents, overdue_seconds
        _SCRAPED.open_alerts = open_alerts
        try:
            return generate_latest(REGISTRY)
        finally:
            _SCRAPED.pools = {}
            _SCRAPED.open_incidents = _SCRAPED.overdue_seconds = None
            _SCRAPED.open_alerts = None
