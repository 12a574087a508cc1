"""The generated database of bench/console_at_scale.py: real models deployed through the engine,
then rows written with INSERT ... SELECT over generate_series, in chunks, as plain INSERTs (any
trigger on the tables sees them). See that module's docstring for what is written."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg
import psycopg.types.json

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import ProcessModel, TimerDefinition
from engine.queries.camunda import deployments as deployment_reads
from engine.states import (
    IncidentState,
    InstanceState,
    JobKind,
    OutboxEvent,
    TaskState,
    TokenMode,
    TokenState,
    VisitState,
)

PARALLEL = "scale-parallel"
APPROVAL = "scale-approval"
EXTERNAL = "scale-external"
SERVICE = "scale-service"
# The definitions ended instances spread over, by n % 4; running instances are all PARALLEL's.
KEYS = (PARALLEL, APPROVAL, EXTERNAL, SERVICE)
# The order each model's visits are generated in, cycled through `--history-per-instance`.
PATHS: dict[str, tuple[str, ...]] = {
    PARALLEL: ("start", "fork", "review", "check", "join", "join", "notify", "end"),
    APPROVAL: ("start", "approve", "end"),
    EXTERNAL: ("start", "work", "end"),
    SERVICE: ("start", "compute", "end"),
}
# Generated ids: uuid(kind, n), monotonic in n, so every index grows at its end while filling.
KIND_INSTANCE, KIND_VISIT, KIND_TOKEN, KIND_USER_TASK = 1, 2, 3, 4
KIND_EXTERNAL_TASK, KIND_INCIDENT, KIND_JOB = 5, 6, 7
MAX_HISTORY_PER_INSTANCE = 60  # visit ids are n * 64 + k
CHUNK = 100_000


def models() -> list[ProcessModel]:
    parallel = (
        ProcessBuilder(PARALLEL, "Parallel review")
        .start_event("start")
        .parallel_gateway("fork")
        .user_task("review", "Review", candidate_groups="clerks")
        .service_task("check", "Check", topic="check")
        .boundary_event(
            "remind",
            "review",
            "Remind",
            cancel_activity=False,
            timer=TimerDefinition(kind="duration", text="PT1H"),
        )
        .end_event("reminded")
        .parallel_gateway("join")
        .service_task("notify", "Notify", handler="scale_notify")
        .end_event("end")
        .chain("start", "fork", "review", "join")
        .chain("fork", "check", "join")
        .chain("join", "notify", "end")
        .chain("remind", "reminded")
        .build()
    )
    approval = (
        ProcessBuilder(APPROVAL, "Approval")
        .start_event("start")
        .user_task("approve", "Approve", candidate_groups="managers")
        .end_event("end")
        .chain("start", "approve", "end")
        .build()
    )
    external = (
        ProcessBuilder(EXTERNAL, "External work")
        .start_event("start")
        .service_task("work", "Work", topic="work")
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )
    service = (
        ProcessBuilder(SERVICE, "Straight through")
        .start_event("start")
        .service_task("compute", "Compute", handler="scale_compute")
        .end_event("end")
        .chain("start", "compute", "end")
        .build()
    )
    return [parallel, approval, external, service]


# -- the fill -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    instances: int = 1_000_000
    history_per_instance: int = 10
    active: int = 100_000
    outbox: int = 200_000
    variables_every: int = 5

    def __post_init__(self) -> None:
        if not 2 <= self.history_per_instance <= MAX_HISTORY_PER_INSTANCE:
            raise ValueError(f"--history-per-instance: 2 to {MAX_HISTORY_PER_INSTANCE}")
        if not 1 <= self.active <= self.instances:
            raise ValueError("--active: 1 to --instances")
        if self.variables_every < 1 or self.outbox < 0:
            raise ValueError("--variables-every >= 1, --outbox >= 0")

    @property
    def every(self) -> int:
        """Instance n runs when n % every = 0 (and n / every <= active)."""
        return self.instances // self.active


def uid(kind: int, n: int) -> str:
    """The id the fill gives row n of a kind (the SQL function pg_temp.uid computes the same)."""
    return f"{kind:08x}-0000-4000-8000-{n:012x}"


_FUNCTION = (
    "CREATE OR REPLACE FUNCTION pg_temp.uid(kind int, n bigint) RETURNS uuid "
    "LANGUAGE sql IMMUTABLE AS $$ SELECT (lpad(to_hex(kind), 8, '0') || '-0000-4000-8000-' "
    "|| lpad(to_hex(n), 12, '0'))::uuid $$"
)

# The generated instances of one chunk: n, whether it runs, its start, its definition index.
_G = (
    "g AS (SELECT n, a, s, CASE WHEN a THEN 0 ELSE n %% 4 END AS idx FROM ("
    "  SELECT n, (n %% %(every)s = 0 AND n / %(every)s <= %(active)s) AS a, "
    "  now() - interval '1 hour' - (%(instances)s - n) * interval '2 seconds' AS s "
    "  FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS n) AS raw), "
    "d AS (SELECT * FROM unnest(%(def_idx)s::int[], %(def_id)s::text[], %(def_key)s::text[]) "
    "  AS d(idx, id, key))"
)

_INSTANCES = (
    "WITH " + _G + " INSERT INTO process_instance (id, root_instance_id, definition_id, "
    "definition_key, business_key, state, version, started_at, ended_at) "
    "SELECT pg_temp.uid(1, n), pg_temp.uid(1, n), d.id, d.key, "
    "CASE WHEN n %% 3 = 0 THEN 'order-' || n END, "
    "CASE WHEN a AND (n / %(every)s) %% 50 = 7 THEN %(suspended)s WHEN a THEN %(active_state)s "
    "WHEN n %% 20 = 1 THEN %(terminated)s ELSE %(completed)s END, 0, s, "
    "CASE WHEN a THEN NULL ELSE s + (n %% 600 + 20) * interval '1 second' END "
    "FROM g JOIN d ON d.idx = g.idx"
)

# A running instance's last two visits are its waiting tokens' (Active); a Terminated
# instance's last visit, and the third visit of every twentieth PARALLEL instance (as an
# interrupting boundary event ends it), ended Terminated (canceled); every other one Completed.
_HISTORY = (
    "WITH " + _G + ", "
    "nd AS (SELECT * FROM unnest(%(nd_idx)s::int[], %(nd_pos)s::int[], %(nd_id)s::text[], "
    "  %(nd_name)s::text[], %(nd_type)s::text[]) AS nd(idx, pos, node_id, node_name, node_type)), "
    "v AS (SELECT g.n, g.s, g.idx, k, CASE WHEN g.a AND k = %(h)s - 1 THEN -1 "
    "  WHEN g.a AND k = %(h)s THEN -2 ELSE (k - 1) %% (%(lens)s::int[])[g.idx + 1] END AS pos "
    "  FROM g CROSS JOIN generate_series(1, %(h)s::int) AS k) "
    "INSERT INTO history (id, instance_id, token_id, node_id, node_name, node_type, state, "
    "started_at, ended_at) "
    "SELECT pg_temp.uid(2, v.n * 64 + v.k), pg_temp.uid(1, v.n), "
    "pg_temp.uid(3, v.n * 4 + CASE v.pos WHEN -1 THEN 1 WHEN -2 THEN 2 ELSE 0 END), "
    "nd.node_id, nd.node_name, nd.node_type, "
    "CASE WHEN v.pos < 0 THEN %(visit_active)s "
    "  WHEN (v.n %% 20 = 1 AND v.k = %(h)s) OR (v.n %% 20 = 4 AND v.k = 3) "
    "  THEN %(visit_terminated)s ELSE %(visit_completed)s END, "
    "v.s + v.k * interval '1 second', CASE WHEN v.pos < 0 THEN NULL "
    "  ELSE v.s + (v.k + 1 + (v.n + v.k) %% 30) * interval '1 second' END "
    "FROM v JOIN nd ON nd.idx = v.idx AND nd.pos = v.pos"
)

_TOKENS = (
    "WITH " + _G + " INSERT INTO token (id, instance_id, node_id, state, mode, scope_id, "
    "parent_id, parallel_group, merged_into, visit_id, version, created_at, updated_at) "
    "SELECT pg_temp.uid(3, n * 4 + slot), pg_temp.uid(1, n), node, "
    "CASE slot WHEN 0 THEN %(token_completed)s ELSE %(token_waiting)s END, %(forward)s, NULL, "
    "CASE WHEN slot > 0 THEN pg_temp.uid(3, n * 4) END, "
    "CASE WHEN slot > 0 THEN lpad(to_hex(n), 12, '0') END, NULL, "
    "CASE slot WHEN 1 THEN pg_temp.uid(2, n * 64 + %(h)s - 1) "
    "  WHEN 2 THEN pg_temp.uid(2, n * 64 + %(h)s) END, 0, s, s "
    "FROM g CROSS JOIN (VALUES (0, 'fork'), (1, 'review'), (2, 'check')) AS t(slot, node) "
    "WHERE a"
)

_USER_TASKS = (
    "WITH " + _G + " INSERT INTO user_task (id, instance_id, token_id, node_id, name, state, "
    "created_at, assignee, candidate_groups, priority) "
    "SELECT pg_temp.uid(4, n), pg_temp.uid(1, n), pg_temp.uid(3, n * 4 + 1), 'review', 'Review', "
    "%(task_open)s, s, CASE WHEN (n / %(every)s) %% 3 = 0 THEN %(assignee)s END, "
    "ARRAY['clerks'], 50 + (n / %(every)s) %% 3 FROM g WHERE a"
)

_EXTERNAL_TASKS = (
    "WITH " + _G + " INSERT INTO external_task (id, instance_id, token_id, node_id, topic, state, "
    "priority, worker_id, lock_expires_at, retries, error_message, created_at, definition_key) "
    "SELECT pg_temp.uid(5, n), pg_temp.uid(1, n), pg_temp.uid(3, n * 4 + 2), 'check', 'check', "
    "%(task_open)s, (n / %(every)s) %% 3, "
    "CASE WHEN (n / %(every)s) %% 7 IN (1, 3) THEN 'worker-' || (n %% 5) END, "
    "CASE WHEN (n / %(every)s) %% 7 = 1 THEN now() + interval '1 hour' "
    "  WHEN (n / %(every)s) %% 7 = 3 THEN now() - interval '1 hour' END, "
    "CASE WHEN (n / %(every)s) %% 2 = 0 THEN 0 END, "
    "CASE WHEN (n / %(every)s) %% 2 = 0 THEN 'service unavailable' END, s, d.key "
    "FROM g JOIN d ON d.idx = g.idx WHERE a"
)

_JOBS = (
    "WITH " + _G + " INSERT INTO job (id, kind, instance_id, token_id, node_id, definition_id, "
    "due_at, retries, error_message, created_at) "
    "SELECT pg_temp.uid(7, n), %(timer)s, pg_temp.uid(1, n), pg_temp.uid(3, n * 4 + 1), 'remind', "
    "d.id, now() + interval '1 hour' + (n %% 3600) * interval '1 second', "
    "CASE WHEN (n / %(every)s) %% 2 = 1 THEN 0 ELSE 3 END, "
    "CASE WHEN (n / %(every)s) %% 2 = 1 THEN 'reminder failed' END, s "
    "FROM g JOIN d ON d.idx = g.idx WHERE a"
)

_INCIDENTS = (
    "WITH " + _G + " INSERT INTO incident (id, type, instance_id, definition_id, token_id, "
    "node_id, job_id, external_task_id, message, state, created_at) "
    "SELECT pg_temp.uid(6, n), CASE WHEN odd THEN 'failedJob' ELSE 'failedExternalTask' END, "
    "pg_temp.uid(1, n), d.id, pg_temp.uid(3, n * 4 + CASE WHEN odd THEN 1 ELSE 2 END), "
    "CASE WHEN odd THEN 'remind' ELSE 'check' END, "
    "CASE WHEN odd THEN pg_temp.uid(7, n) END, CASE WHEN NOT odd THEN pg_temp.uid(5, n) END, "
    "CASE WHEN odd THEN 'reminder failed' ELSE 'service unavailable' END, %(incident_open)s, "
    "s + interval '5 seconds' "
    "FROM (SELECT *, (n / %(every)s) %% 2 = 1 AS odd FROM g) AS g JOIN d ON d.idx = g.idx "
    "WHERE a"
)

_VARIABLES = (
    "WITH " + _G + " INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at) "
    "SELECT pg_temp.uid(1, n), '', name, type, "
    "CASE name WHEN 'amount' THEN to_jsonb(n %% 1000) ELSE to_jsonb('customer-' || n %% 5000) END, "
    "s FROM g CROSS JOIN (VALUES ('amount', 'integer'), ('customer', 'string')) AS v(name, type) "
    "WHERE n %% %(variables_every)s = 0"
)

_OUTBOX = (
    "INSERT INTO outbox (events, instance_id, created_at, definition_key) "
    "SELECT jsonb_build_array(jsonb_build_object('event', "
    "(%(events)s::text[])[1 + i %% cardinality(%(events)s::text[])])), o.id, "
    "now() - (%(outbox)s - i) * (interval '3600 seconds' / greatest(%(outbox)s, 1)), "
    "(SELECT p.definition_key FROM process_instance p WHERE p.id = o.id) "
    "FROM generate_series(1, %(outbox)s::bigint) AS i, "
    "LATERAL (SELECT pg_temp.uid(1, greatest(1, %(instances)s - i %% %(instances)s)) AS id) o"
)

_CHUNKED = {
    "instances": _INSTANCES,
    "history": _HISTORY,
    "tokens": _TOKENS,
    "user tasks": _USER_TASKS,
    "external tasks": _EXTERNAL_TASKS,
    "jobs": _JOBS,
    "incidents": _INCIDENTS,
    "variables": _VARIABLES,
}


# Not process keys (a BPMN id has no colon): where deploy() names PARALLEL's deployment and file.
DEPLOYMENT = ":deployment"
RESOURCE = ":resource"


def deploy(engine: Engine) -> dict[str, str]:
    """Deploy the models; the latest definition id of each key, and under DEPLOYMENT and
    RESOURCE the ids of PARALLEL's deployment and of its file."""
    engine.deploy(*models(), name="console-at-scale")
    found = {key: engine.latest_definition(key) for key in KEYS}
    parallel = found[PARALLEL]
    files = deployment_reads.resources(engine, parallel.deployment_id)
    (resource,) = (f for f in files if f.name == parallel.resource_name)
    return {
        **{key: row.id for key, row in found.items()},
        DEPLOYMENT: str(parallel.deployment_id),
        RESOURCE: str(resource.id),
    }


def _parameters(sizes: Sizes, definitions: dict[str, str]) -> dict[str, Any]:
    by_id = {m.key: {n.id: n for n in m.nodes} for m in models()}
    nd: dict[str, list[Any]] = {"idx": [], "pos": [], "id": [], "name": [], "type": []}

    def node(idx: int, pos: int, key: str, node_id: str) -> None:
        found = by_id[key][node_id]
        for column, value in zip(
            nd, (idx, pos, node_id, found.name, found.kind.value), strict=True
        ):
            nd[column].append(value)

    for idx, key in enumerate(KEYS):
        for pos, node_id in enumerate(PATHS[key]):
            node(idx, pos, key, node_id)
    node(0, -1, PARALLEL, "review")  # a running instance's open visits
    node(0, -2, PARALLEL, "check")
    return {
        "every": sizes.every,
        "active": sizes.active,
        "instances": sizes.instances,
        "h": sizes.history_per_instance,
        "variables_every": sizes.variables_every,
        "outbox": sizes.outbox,
        "def_idx": list(range(len(KEYS))),
        "def_id": [definitions[k] for k in KEYS],
        "def_key": list(KEYS),
        "nd_idx": nd["idx"],
        "nd_pos": nd["pos"],
        "nd_id": nd["id"],
        "nd_name": nd["name"],
        "nd_type": nd["type"],
        "lens": [len(PATHS[k]) for k in KEYS],
        "suspended": InstanceState.SUSPENDED.value,
        "active_state": InstanceState.ACTIVE.value,
        "terminated": InstanceState.TERMINATED.value,
        "completed": InstanceState.COMPLETED.value,
        "visit_active": VisitState.ACTIVE.value,
        "visit_completed": VisitState.COMPLETED.value,
        "visit_terminated": VisitState.TERMINATED.value,
        "token_completed": TokenState.COMPLETED.value,
        "token_waiting": TokenState.WAITING.value,
        "forward": TokenMode.FORWARD.value,
        "task_open": TaskState.OPEN.value,
        "incident_open": IncidentState.OPEN.value,
        "timer": JobKind.TIMER.value,
        "assignee": ADMIN,
        "events": [
            OutboxEvent.INSTANCE_STARTED.value,
            OutboxEvent.VISIT_ACTIVE.value,
            OutboxEvent.VISIT_COMPLETED.value,
            OutboxEvent.INSTANCE_COMPLETED.value,
        ],
    }


def filled(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT 1 FROM process_instance WHERE id = %s", (uid(KIND_INSTANCE, 1),)
        ).fetchone()
    return row is not None


def fill(url: str, sizes: Sizes, definitions: dict[str, str], *, quiet: bool = False) -> float:
    """Write the generated rows and ANALYZE; the seconds it took."""
    began = time.perf_counter()
    params = _parameters(sizes, definitions)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET synchronous_commit = off")
        conn.execute(_FUNCTION)
        for label, statement in _CHUNKED.items():
            started = time.perf_counter()
            for lo in range(1, sizes.instances + 1, CHUNK):
                hi = min(sizes.instances, lo + CHUNK - 1)
                conn.execute(statement, {**params, "lo": lo, "hi": hi})
            if not quiet:
                print(f"  {label}: {time.perf_counter() - started:.1f} s", flush=True)
        conn.execute(_OUTBOX, params)
        conn.execute(
            "INSERT INTO webhook_subscription (id, name, url, event_types, definition_key, "
            "secret, enabled, fanned_out_seq) VALUES (%s, 'scale', 'http://127.0.0.1:9/hook', "
            "'[]', NULL, 'secret', false, (SELECT coalesce(max(seq), 0) FROM outbox_event))",
            (WEBHOOK_ID,),
        )
        # One task filter (a saved view of the inbox): its open tasks of PARALLEL, newest first.
        conn.execute(
            "INSERT INTO saved_view (id, owner, page, name, query, created_at, task_query) "
            "VALUES (%s, %s, 'tasks', 'scale review', '', now(), %s)",
            (FILTER_ID, ADMIN, psycopg.types.json.Jsonb(FILTER_QUERY)),
        )
        # Stuck-instance alert thresholds on PARALLEL: its running instances' review visits and
        # their open incidents at check are read against them (the Alerts page, the counts).
        conn.execute(
            "INSERT INTO alert_threshold (id, definition_key, node_id, kind, duration, seconds, "
            "source, raised_until, created_at, updated_at) VALUES "
            "(gen_random_uuid(), %(key)s, 'review', 'waiting', 'PT1H', 3600, 'console', now(), "
            "now(), now()), "
            "(gen_random_uuid(), %(key)s, 'check', 'incident', 'PT15M', 900, 'console', now(), "
            "now(), now())",
            {"key": PARALLEL},
        )
        started = time.perf_counter()
        # VACUUM as autovacuum soon would: index-only scans need the visibility map.
        conn.execute("VACUUM ANALYZE")
        if not quiet:
            print(f"  vacuum analyze: {time.perf_counter() - started:.1f} s", flush=True)
    return time.perf_counter() - began


WEBHOOK_ID = "8ca1e000-0000-4000-8000-000000000001"
FILTER_ID = "f11e7000-0000-4000-8000-000000000001"
FILTER_QUERY = {
    "processDefinitionKey": PARALLEL,
    "sorting": [{"sortBy": "created", "sortOrder": "desc"}],
}
ADMIN = "scale-admin"
