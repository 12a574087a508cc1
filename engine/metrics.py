"""The process's metrics, declared once: every counter, histogram and gauge Interlock exposes.

Each process (server replica, job executor, worker) counts what it does itself; `/metrics`
renders this process's registry in the Prometheus text format. Values that live in the database
(open incidents, job lag, whether the database answers) are read when scraped, by collectors
registered on the same registry.

Code that does work imports the metric it moves from here; nothing else declares a metric.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

# -- commands ---------------------------------------------------------------------------------
COMMANDS = Counter(
    "interlock_commands",
    "Commands run, by command name and outcome (ok, conflict, bad_request, not_found, error).",
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
