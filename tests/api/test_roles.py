"""The role matrix: every mutation route against every role. A viewer is refused everything and
nothing changes; an operator is refused the admin routes and succeeds on the others; an admin
succeeds everywhere. Every target is made fresh, so each success acts on something that can act."""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from starlette.routing import Route

from app.api import OPERATIONS, routes
from app.gates import Gate
from engine.api import Engine
from engine.commands.accounts import CreateToken, CreateUser, StartSession
from engine.commands.batches import BatchResult, CreateBatch, RunBatchItems, SuspendBatch
from engine.commands.suspension import SuspendDefinition
from engine.commands.webhooks import CreateSubscription
from engine.core.executor import Result, Tx
from engine.identity import accounts
from engine.identity.accounts import Role
from engine.queries import accounts as account_reads
from engine.queries import batches as batch_reads
from engine.queries import webhooks as webhook_reads
from engine.states import BatchType
from tests.api import identity_scenarios, processes
from tests.server import LiveServer

Call = tuple[str, dict[str, Any]]
DMN = Path(__file__).resolve().parents[1] / "data" / "dmn"
_serial = itertools.count()


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_serial)}"


def instance_of(engine: Engine, key: str) -> str:
    return str(engine.start_latest(key).id)


def review_task(engine: Engine) -> str:
    handle = engine.start_latest("review")
    return str(handle.user_tasks()[0].id)


def locked_external(engine: Engine) -> str:
    """An external task of a topic of its own, locked by worker `w`."""
    topic = unique("topic")
    engine.deploy(processes.external(key=topic, topic=topic))
    engine.start_latest(topic)
    (task,) = engine.fetch_and_lock("w", {topic: 60_000})
    return str(task["id"])


def incident(engine: Engine) -> str:
    task_id = locked_external(engine)
    engine.fail_external_task(task_id, "w", "broken")
    (found,) = engine.incidents(instance_id=engine.external_task(task_id).instance_id)
    return str(found.id)


def timer_job(engine: Engine) -> str:
    handle = engine.start_latest("timer")
    (job,) = engine.jobs(handle.id)
    return str(job.id)


def deploy(engine: Engine) -> Call:
    source = processes.xml(processes.straight(unique("deployed"))).encode()
    return "/deployments", {"files": {"files": ("p.bpmn", source)}}


def fresh_definition(engine: Engine) -> str:
    """A process of a key of its own: suspending it stops no other scenario's starts."""
    key = unique("suspendable")
    engine.deploy(processes.straight(key))
    return key


def suspended_definition(engine: Engine) -> str:
    key = fresh_definition(engine)
    engine.run(SuspendDefinition(key=key))
    return key


def evaluation(engine: Engine) -> Call:
    """The decision `dish` (deployed once: the same file again is unchanged)."""
    engine.deploy(DMN / "dish_first.dmn")
    body = {"variables": {"season": "Winter", "guestCount": 4}}
    return "/decisions/dish/evaluate", {"json": body}


def fetch(engine: Engine) -> Call:
    topic = unique("fetch")
    engine.deploy(processes.external(key=topic, topic=topic))
    engine.start_latest(topic)
    body = {"worker_id": "w", "topics": [{"topic": topic, "lock_duration_ms": 1000}]}
    return "/external-tasks/fetch-and-lock", {"json": body}


def suspended(engine: Engine) -> str:
    handle = engine.start_latest("waiting")
    handle.suspend()
    return str(handle.id)


def claimed(engine: Engine) -> str:
    task_id = review_task(engine)
    engine.claim_task(task_id, "someone")
    return task_id


def message(engine: Engine) -> Call:
    business_key = unique("order")
    engine.start_latest("paid", business_key=business_key)
    return "/messages", {"json": {"message_name": "paid", "business_key": business_key}}


def signal(engine: Engine) -> Call:
    instance_of(engine, "signalled")
    return "/signals", {"json": {"signal_name": "ping"}}


def user(engine: Engine) -> str:
    name = unique("user")
    engine.run(CreateUser(name, Role.VIEWER, "a-long-password"))
    return name


def token(engine: Engine) -> str:
    name = unique("token")
    engine.run(CreateToken(name, Role.VIEWER, accounts.new_token()))
    return name


def user_with_session(engine: Engine) -> str:
    name = user(engine)
    record = account_reads.password_record(engine, name)
    assert record is not None
    new = accounts.new_session()
    engine.run(StartSession(record.id, name, new, max_seconds=3600, idle_seconds=1800))
    return name


def session(engine: Engine) -> str:
    name = user_with_session(engine)
    with engine.connection() as conn:
        return str(
            next(
                s.id for s in account_reads.list_sessions(conn, idle_seconds=1800) if s.user == name
            )
        )


def webhook(engine: Engine) -> str:
    """A disabled subscription (nothing is delivered to its address) with one dead letter."""
    made = engine.run(
        CreateSubscription(
            unique("hook"), "http://127.0.0.1:9/", "a-secret-of-16-chars", enabled=False
        )
    )
    with engine.connection() as conn:
        conn.execute(
            "INSERT INTO webhook_delivery (id, subscription_id, seq, instance_id, event, payload, "
            "state, attempts, next_attempt_at) VALUES (%s, %s, 1, %s, 'instance.started', '{}', "
            "'dead', 3, now())",
            (uuid.uuid4(), made.subscription_id, uuid.uuid4()),
        )
    return made.subscription_id


def dead_letter(engine: Engine) -> Call:
    hook = webhook(engine)
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT id FROM webhook_delivery WHERE subscription_id = %s", (hook,)
        ).fetchone()
    assert row is not None
    return f"/webhooks/{hook}/deliveries/{row[0]}/replay", {}


@dataclass(frozen=True)
class _HeldBatch:
    """A batch whose job has no retries left: running, and left alone by the job executors."""

    name: ClassVar[str] = "HeldBatch"
    result_type: ClassVar[type[Result]] = BatchResult

    create: CreateBatch

    def execute(self, tx: Tx) -> BatchResult:
        result = self.create.execute(tx)
        tx.conn.execute("UPDATE job SET retries = 0 WHERE id = %s", (result.batch_id,))
        return result


def held_batch(engine: Engine, *items: str) -> str:
    kind = BatchType.RETRY_INCIDENTS if items else BatchType.CANCEL_INSTANCES
    create = CreateBatch(kind, items or (instance_of(engine, "waiting"),))
    return engine.run(_HeldBatch(create)).batch_id


def suspended_batch(engine: Engine) -> str:
    batch_id = held_batch(engine)
    engine.run(SuspendBatch(uuid.UUID(batch_id)))
    return batch_id


def failed_batch(engine: Engine) -> str:
    """A completed batch with one failed item."""
    batch_id = held_batch(engine, str(uuid.uuid4()))
    engine.run(RunBatchItems(uuid.UUID(batch_id)))
    return batch_id


def _at(path: str, target: Callable[[Engine], str], **request: Any) -> Callable[[Engine], Call]:
    return lambda engine: (path.format(target(engine)), request)


WORKER = {"worker_id": "w"}
SCENARIOS: dict[tuple[str, str], Callable[[Engine], Call]] = {
    ("POST", "/deployments"): deploy,
    ("POST", "/definitions/key/{key}/start"): lambda e: ("/definitions/key/straight/start", {}),
    ("POST", "/definitions/key/{key}/versions/{version:int}/start"): lambda e: (
        "/definitions/key/straight/versions/1/start",
        {},
    ),
    ("POST", "/definitions/{id}/start"): lambda e: (
        f"/definitions/{e.latest_definition('straight').id}/start",
        {},
    ),
    ("POST", "/definitions/{id}/suspend"): _at(
        "/definitions/{}/suspend", lambda e: e.latest_definition(fresh_definition(e)).id
    ),
    ("POST", "/definitions/{id}/activate"): _at(
        "/definitions/{}/activate", lambda e: e.latest_definition(suspended_definition(e)).id
    ),
    ("POST", "/definitions/key/{key}/suspend"): _at(
        "/definitions/key/{}/suspend", fresh_definition
    ),
    ("POST", "/definitions/key/{key}/activate"): _at(
        "/definitions/key/{}/activate", suspended_definition
    ),
    ("POST", "/instances/{id}/variables"): _at(
        "/instances/{}/variables",
        lambda e: instance_of(e, "waiting"),
        json={"variables": {"x": 1}},
    ),
    ("POST", "/instances/{id}/cancel"): _at(
        "/instances/{}/cancel", lambda e: instance_of(e, "waiting")
    ),
    ("POST", "/instances/{id}/suspend"): _at(
        "/instances/{}/suspend", lambda e: instance_of(e, "waiting")
    ),
    ("POST", "/instances/{id}/resume"): _at("/instances/{}/resume", suspended),
    ("POST", "/user-tasks/{id}/complete"): _at("/user-tasks/{}/complete", review_task),
    ("POST", "/user-tasks/{id}/claim"): _at("/user-tasks/{}/claim", review_task),
    ("POST", "/user-tasks/{id}/unclaim"): _at("/user-tasks/{}/unclaim", claimed),
    ("POST", "/user-tasks/{id}/assignee"): _at(
        "/user-tasks/{}/assignee", review_task, json={"user_id": "x"}
    ),
    ("POST", "/decisions/{key}/evaluate"): evaluation,
    ("POST", "/external-tasks/fetch-and-lock"): fetch,
    ("POST", "/external-tasks/{id}/complete"): _at(
        "/external-tasks/{}/complete", locked_external, json=WORKER
    ),
    ("POST", "/external-tasks/{id}/failure"): _at(
        "/external-tasks/{}/failure",
        locked_external,
        json={**WORKER, "error_message": "no", "retries": 1},
    ),
    ("POST", "/external-tasks/{id}/bpmn-error"): _at(
        "/external-tasks/{}/bpmn-error", locked_external, json={**WORKER, "error_code": "E"}
    ),
    ("POST", "/external-tasks/{id}/extend-lock"): _at(
        "/external-tasks/{}/extend-lock",
        locked_external,
        json={**WORKER, "new_duration_ms": 90_000},
    ),
    ("POST", "/external-tasks/{id}/unlock"): _at("/external-tasks/{}/unlock", locked_external),
    ("POST", "/external-tasks/{id}/retries"): _at(
        "/external-tasks/{}/retries", locked_external, json={"retries": 4}
    ),
    ("POST", "/messages"): message,
    ("POST", "/signals"): signal,
    ("POST", "/incidents/{id}/retry"): _at("/incidents/{}/retry", incident),
    ("POST", "/incidents/{id}/resolve"): _at("/incidents/{}/resolve", incident),
    ("POST", "/incidents/{id}/retries"): _at(
        "/incidents/{}/retries", incident, json={"retries": 2}
    ),
    ("POST", "/jobs/{id}/execute"): _at("/jobs/{}/execute", timer_job),
    ("POST", "/jobs/{id}/retries"): _at("/jobs/{}/retries", timer_job, json={"retries": 7}),
    ("POST", "/users"): lambda e: (
        "/users",
        {"json": {"name": unique("new-user"), "role": "viewer"}},
    ),
    ("DELETE", "/users/{name}"): _at("/users/{}", user),
    ("POST", "/users/{name}/password"): _at(
        "/users/{}/password", user_with_session, json={"password": "another-long-password"}
    ),
    ("POST", "/users/{name}/role"): _at("/users/{}/role", user, json={"role": "operator"}),
    ("POST", "/tokens/{name}/role"): _at("/tokens/{}/role", token, json={"role": "operator"}),
    ("POST", "/tokens"): lambda e: (
        "/tokens",
        {"json": {"name": unique("new-token"), "role": "viewer"}},
    ),
    ("DELETE", "/tokens/{name}"): _at("/tokens/{}", token),
    ("DELETE", "/users/{name}/sessions"): _at("/users/{}/sessions", user_with_session),
    ("DELETE", "/sessions/{id}"): _at("/sessions/{}", session),
    ("POST", "/webhooks"): lambda e: (
        "/webhooks",
        {"json": {"name": unique("hook"), "url": "https://example.com/", "secret": "s" * 16}},
    ),
    ("POST", "/webhooks/{id}"): _at("/webhooks/{}", webhook, json={"name": "renamed"}),
    ("DELETE", "/webhooks/{id}"): _at("/webhooks/{}", webhook),
    ("POST", "/webhooks/{id}/replay"): _at("/webhooks/{}/replay", webhook),
    ("POST", "/webhooks/{id}/deliveries/{delivery_id}/replay"): dead_letter,
    ("POST", "/batches"): lambda e: (
        "/batches",
        {"json": {"type": "cancel-instances", "items": [instance_of(e, "waiting")]}},
    ),
    ("POST", "/batches/{id}/suspend"): _at("/batches/{}/suspend", held_batch),
    ("POST", "/batches/{id}/resume"): _at("/batches/{}/resume", suspended_batch),
    ("POST", "/batches/{id}/cancel"): _at("/batches/{}/cancel", held_batch),
    ("POST", "/batches/{id}/retry"): _at("/batches/{}/retry", failed_batch),
    **identity_scenarios.SCENARIOS,
}
# The routes whose commands need what only the built-in admin groups are granted (USER, GROUP,
# TENANT, AUTHORIZATION permissions, ALL on authorizations, CREATE on deployments): an operator
# is refused them by the command's permits, not by a role of the route.
ADMIN_ONLY: set[tuple[str, str]] = {
    ("POST", "/deployments"),
    ("POST", "/definitions/{id}/suspend"),
    ("POST", "/definitions/{id}/activate"),
    ("POST", "/definitions/key/{key}/suspend"),
    ("POST", "/definitions/key/{key}/activate"),
    ("POST", "/users"),
    ("DELETE", "/users/{name}"),
    ("POST", "/users/{name}/password"),
    ("POST", "/users/{name}/role"),
    ("POST", "/tokens/{name}/role"),
    ("POST", "/tokens"),
    ("DELETE", "/tokens/{name}"),
    ("DELETE", "/users/{name}/sessions"),
    ("DELETE", "/sessions/{id}"),
    ("POST", "/users/{name}/profile"),
    ("POST", "/groups"),
    ("POST", "/groups/{id}"),
    ("DELETE", "/groups/{id}"),
    ("POST", "/groups/{id}/members/{name}"),
    ("DELETE", "/groups/{id}/members/{name}"),
    ("POST", "/tenants"),
    ("POST", "/tenants/{id}"),
    ("DELETE", "/tenants/{id}"),
    ("POST", "/tenants/{id}/users/{name}"),
    ("DELETE", "/tenants/{id}/users/{name}"),
    ("POST", "/tenants/{id}/groups/{name}"),
    ("DELETE", "/tenants/{id}/groups/{name}"),
    ("POST", "/authorizations"),
    ("POST", "/authorizations/{id}"),
    ("DELETE", "/authorizations/{id}"),
    ("POST", "/webhooks"),
    ("POST", "/webhooks/{id}"),
    ("DELETE", "/webhooks/{id}"),
}


def snapshot(engine: Engine, target: Call) -> list[Any]:
    """Everything a mutation of `target` could change, read through the engine."""
    with engine.connection() as conn:
        credentials = account_reads.list_all(conn)
        sessions = [s.id for s in account_reads.list_sessions(conn, idle_seconds=1800)]
        dead_letters = conn.execute(
            "SELECT id FROM webhook_delivery WHERE state = 'dead' ORDER BY id"
        ).fetchall()
        evaluations = conn.execute("SELECT id FROM decision_evaluation ORDER BY id").fetchall()
        alert_thresholds = conn.execute(
            "SELECT id, duration FROM alert_threshold ORDER BY id"
        ).fetchall()
        identity = identity_scenarios.identity_rows(conn)
    path = target[0]
    named = path.split("/")[2] if path.startswith("/instances/") else ""
    variables = (
        engine.instance(named).typed_variables() if re.fullmatch(r"[0-9a-f-]{36}", named) else None
    )
    return [
        [(i.id, i.state) for i in engine.list_instances(limit=500).items],
        variables,
        [(t.id, t.state, t.assignee) for t in engine.user_tasks(state=None)],
        [(t.id, t.worker_id, t.lock_expires_at, t.retries) for t in engine.external_tasks()],
        [(i.id, i.state) for i in engine.incidents(state=None)],
        [(j.id, j.retries, j.due_at) for j in engine.jobs()],
        [(d.id, d.state) for d in engine.definitions()],
        credentials,
        sessions,
        [(s.id, s.name, s.url, s.enabled) for s in webhook_reads.subscriptions(engine)],
        dead_letters,
        [(b.id, b.state, b.done, b.failed) for b in batch_reads.batches(engine)],
        evaluations,
        identity,
        alert_thresholds,
    ]


def audit_entries(engine: Engine) -> int:
    with engine.connection() as conn:
        row = conn.execute("SELECT count(*) FROM audit_entry").fetchone()
    return int(row[0]) if row else 0


def mutation_routes() -> set[tuple[str, str]]:
    return {
        (method, route.path)
        for route in routes
        if isinstance(route, Route)
        for method in route.methods or ()
        if method not in ("GET", "HEAD")
    }


FETCH = ("POST", "/external-tasks/fetch-and-lock")
# A user's own API tokens: every signed-in user's to create and revoke (test_route_gates.py).
OWN_ROUTES = {("POST", "/account/tokens"), ("DELETE", "/account/tokens/{name}")}


def test_the_matrix_covers_every_mutation_route() -> None:
    assert set(SCENARIOS) == mutation_routes() - OWN_ROUTES
    assert set(SCENARIOS) >= ADMIN_ONLY
    # A mutation route asks nothing but a signed-in caller; its command decides (the worker's
    # fetch locks only what the worker may update: engine/store/external_tasks.py).
    gated = {
        (op.method, op.path)
        for op in OPERATIONS
        if op.is_mutation and op.gate is not Gate.SIGNED_IN
    }
    assert gated == set()


def call(client: httpx.Client, method: str, target: Call) -> httpx.Response:
    path, request = target
    return client.request(method, path, **request)


@pytest.mark.parametrize("route", sorted(SCENARIOS), ids=" ".join)
def test_viewer_is_refused_and_nothing_changes(
    route: tuple[str, str], api: LiveServer, viewer: httpx.Client
) -> None:
    method, _ = route
    target = SCENARIOS[route](api.engine)
    before = snapshot(api.engine, target)
    entries = audit_entries(api.engine)
    response = call(viewer, method, target)
    if route == FETCH:  # narrowed, not refused: a viewer may update no instance, locks nothing
        assert response.status_code == 200, response.text
        assert response.json()["items"] == []
    else:
        assert response.status_code == 403, response.text
        assert response.json()["type"] == "Forbidden"
    assert snapshot(api.engine, target) == before
    assert audit_entries(api.engine) == entries  # a refused request is no operation


@pytest.mark.parametrize("route", sorted(SCENARIOS), ids=" ".join)
def test_operator(route: tuple[str, str], api: LiveServer, operator: httpx.Client) -> None:
    method, _ = route
    target = SCENARIOS[route](api.engine)
    before = snapshot(api.engine, target)
    response = call(operator, method, target)
    if route in ADMIN_ONLY:
        assert response.status_code == 403, response.text
        assert snapshot(api.engine, target) == before
    else:
        assert response.status_code in (200, 201, 204), response.text
        assert snapshot(api.engine, target) != before


@pytest.mark.parametrize("route", sorted(SCENARIOS), ids=" ".join)
def test_admin_succeeds(route: tuple[str, str], api: LiveServer, admin: httpx.Client) -> None:
    method, _ = route
    target = SCENARIOS[route](api.engine)
    before = snapshot(api.engine, target)
    response = call(admin, method, target)
    assert response.status_code in (200, 201, 204), response.text
    assert snapshot(api.engine, target) != before


@pytest.mark.parametrize("path", ["/users", "/tokens"])
def test_listing_credentials_is_for_admins(
    path: str, viewer: httpx.Client, operator: httpx.Client, admin: httpx.Client
) -> None:
    assert viewer.get(path).status_code == 403
    assert operator.get(path).status_code == 403
    assert admin.get(path).status_code == 200
