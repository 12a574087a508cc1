"""Tenants narrow every read: two tenants deploy the same keys and start instances; alice, an
operator who belongs to tenant A, and the `viewer` API token, owned by the built-in group
`viewer` which belongs to tenant A, see exactly A's rows and those of no tenant in every console
list, count and export, the overview, the jump box, the audit page, the /api/v1 lists, the
/engine-rest runtime and history lists and counts, and the event stream; B's inspector and
`GET /engine-rest/process-instance/{id}` of B's instance answer 404. A start by key from alice
resolves to A's definition; a call activity of A calls A's process; batches carry their items'
tenant; a message or signal alice sends reaches only A's and tenantless subscriptions.

The tenants and memberships are written as fixture rows: their commands are another part of the
work (tests/compat/test_identity_tenants.py)."""

from __future__ import annotations

import base64
import csv
import io
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from engine.builder import ProcessBuilder
from engine.commands.accounts import CreateUser
from engine.commands.batches import CreateBatch
from engine.core.actors import Actor, acting
from engine.identity.accounts import Role
from engine.queries import console
from engine.states import AuditChannel, BatchType
from tests.api.test_sessions import Browser
from tests.server import PASSWORD, LiveServer, live_server
from tests.stream.harness import SSEClient

A, B = "tenant-a", "tenant-b"
# Instances of `order` (and of `common`, which has no tenant) started per tenant.
STARTED = 2
DMN = Path(__file__).parent.parent / "data" / "dmn" / "dish_first.dmn"

HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="t">\n'
)


def _waiting_for(key: str, kind: str, name: str) -> str:
    """start -> a catch of the message or signal `name` -> end."""
    return (
        HEADER + f'<bpmn:process id="{key}" isExecutable="true">'
        '<bpmn:startEvent id="Start" />'
        f'<bpmn:intermediateCatchEvent id="Wait"><bpmn:{kind}EventDefinition {kind}Ref="R" />'
        "</bpmn:intermediateCatchEvent>"
        '<bpmn:endEvent id="End" />'
        '<bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Wait" />'
        '<bpmn:sequenceFlow id="f2" sourceRef="Wait" targetRef="End" />'
        f'</bpmn:process><bpmn:{kind} id="R" name="{name}" /></bpmn:definitions>'
    )


def _process(key: str) -> Any:
    """start -> fork -> (a user task | an external task) -> join -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .parallel_gateway("fork")
        .user_task("approve", "Approve")
        .service_task("charge", topic="charge")
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "fork", "approve", "join", "end")
        .chain("fork", "charge", "join")
        .build()
    )


def _child(tenant: str) -> Any:
    return (
        ProcessBuilder("child")
        .start_event("start")
        .user_task("work", f"Work of {tenant}")
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )


def _parent() -> Any:
    return (
        ProcessBuilder("parent")
        .start_event("start")
        .call_activity("call", called_element="child")
        .end_event("end")
        .chain("start", "call", "end")
        .build()
    )


@dataclass
class World:
    server: LiveServer
    database_url: str
    # Instance ids by tenant (None: of no tenant).
    instances: dict[str | None, set[str]]
    incidents: dict[str | None, set[str]]
    # The id of each tenant's definition of `order`, and of its called `child`.
    order: dict[str, str]
    child: dict[str, str]
    # Each tenant's batch over its order instances.
    batches: dict[str, str]
    # Each tenant's decision definition and the id of its evaluation.
    decisions: dict[str, str]
    evaluations: dict[str, str]
    # The instance of each tenant suspended by the admin over /api/v1 (audited).
    suspended: dict[str, str]
    # The instances waiting at their call activity (they have no user task).
    parents: set[str]

    def seen(self) -> set[str]:
        """Every instance alice may see: A's and those of no tenant."""
        return self.instances[A] | self.instances[None]

    def everyone(self) -> set[str]:
        return self.instances[A] | self.instances[B] | self.instances[None]


def _sql(database_url: str, statement: str, *params: Any) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(statement, params)


@pytest.fixture(scope="module")
def world(module_database_url: str) -> Iterator[World]:
    yield from _world(module_database_url)


def _world(url: str) -> Iterator[World]:
    # No job executor: the batches stay as created.
    with live_server(url, run_jobs=False) as server:
        engine = server.engine
        instances: dict[str | None, set[str]] = {A: set(), B: set(), None: set()}
        order: dict[str, str] = {}
        child: dict[str, str] = {}
        decisions: dict[str, str] = {}
        evaluations: dict[str, str] = {}
        for tenant in (A, B):
            deployed = engine.deploy(_process("order"), name=f"order {tenant}", tenant_id=tenant)
            order[tenant] = str(deployed.definitions[0]["id"])
            called = engine.deploy(_child(tenant), _parent(), tenant_id=tenant)
            child[tenant] = next(d["id"] for d in called.definitions if d["key"] == "child")
            dmn = engine.deploy(DMN, tenant_id=tenant)
            decisions[tenant] = dmn.decisions[0]["id"]
            evaluated = engine.evaluate_decision(
                definition_id=decisions[tenant], variables={"season": "Fall", "guestCount": 4}
            )
            evaluations[tenant] = evaluated.evaluation_id
        engine.deploy(_process("common"), name="common")
        for of in (A, B, None):
            key = "common" if of is None else "order"
            for _ in range(STARTED):
                started = engine.start_latest(key, {"owner": of or "nobody"}, tenant_id=of)
                instances[of].add(str(started.id))
        # Every external task fails without retries: an incident per instance.
        for task in engine.fetch_and_lock("w", {"charge": 60_000}, max_tasks=100):
            engine.fail_external_task(task["id"], "w", "declined", retries=0)
        incidents: dict[str | None, set[str]] = {A: set(), B: set(), None: set()}
        for of, ids in instances.items():
            for instance in ids:
                incidents[of] |= {str(i.id) for i in engine.incidents(instance_id=instance)}
            assert len(incidents[of]) == STARTED
        parents: set[str] = set()
        for tenant in (A, B):
            parent = engine.start_latest("parent", tenant_id=tenant)
            instances[tenant].add(str(parent.id))
            parents.add(str(parent.id))
            [called_instance] = parent.children()
            instances[tenant].add(str(called_instance.id))
        batches = {
            tenant: engine.run(
                CreateBatch(BatchType.SUSPEND_INSTANCES, tuple(sorted(instances[tenant])))
            ).batch_id
            for tenant in (A, B)
        }
        suspended: dict[str, str] = {}
        with httpx.Client(base_url=f"{server.url}/api/v1", headers=server.bearer()) as admin:
            for tenant in (A, B):
                suspended[tenant] = min(instances[tenant])
                answer = admin.post(f"/instances/{suspended[tenant]}/suspend")
                assert answer.status_code == 200, answer.text
        # alice operates and belongs to tenant A; the built-in group `viewer` (which owns the
        # `viewer` API token) belongs to tenant A too.
        engine.run(CreateUser("alice", Role.OPERATOR, PASSWORD))
        for tenant in (A, B):
            _sql(url, "INSERT INTO tenant (id, name) VALUES (%s, %s)", tenant, tenant)
        _sql(
            url,
            "INSERT INTO tenant_membership (id, tenant_id, user_id) VALUES (%s, %s, 'alice')",
            uuid.uuid4(),
            A,
        )
        _sql(
            url,
            "INSERT INTO tenant_membership (id, tenant_id, group_id) VALUES (%s, %s, 'viewer')",
            uuid.uuid4(),
            A,
        )
        yield World(
            server,
            url,
            instances,
            incidents,
            order,
            child,
            batches,
            decisions,
            evaluations,
            suspended,
            parents,
        )


def _shown(text: str, ids: set[str]) -> set[str]:
    """Which of `ids` the page shows."""
    return {i for i in ids if i in text}


def _alice_basic() -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()}


def _clients(world: World, base: str) -> list[httpx.Client]:
    """alice (HTTP Basic) and the group-owned `viewer` token, at `base`."""
    url = f"{world.server.url}{base}"
    return [
        httpx.Client(base_url=url, headers=_alice_basic(), timeout=30.0),
        httpx.Client(base_url=url, headers=world.server.bearer("viewer"), timeout=30.0),
    ]


# The console takes sessions, not tokens: its second user is `viewer`, in tenant A through the
# built-in group `viewer`.
@pytest.mark.parametrize("who", ["alice", "viewer"])
def test_the_console_shows_only_tenant_a_and_tenantless_rows(world: World, who: str) -> None:
    seen, everyone = world.seen(), world.everyone()
    mine = Browser(world.server.url, who)
    try:
        listed = mine.get("/instances")
        assert listed.status_code == 200, listed.text
        assert _shown(listed.text, everyone) == seen
        exported = mine.get("/instances/export.csv")
        assert exported.status_code == 200
        rows = list(csv.DictReader(io.StringIO(exported.text)))
        assert _shown(exported.text, everyone) == seen and len(rows) == len(seen)
        assert _shown(mine.get("/instances/export.json").text, everyone) == seen

        all_incidents = world.incidents[A] | world.incidents[B] | world.incidents[None]
        own_incidents = world.incidents[A] | world.incidents[None]
        incidents = mine.get("/incidents")
        assert incidents.status_code == 200
        assert _shown(incidents.text, all_incidents) == own_incidents
        exported = mine.get("/incidents/export.csv")
        assert _shown(exported.text, all_incidents) == own_incidents
        assert len(list(csv.DictReader(io.StringIO(exported.text)))) == len(own_incidents)

        tasks = mine.get("/tasks?show=all")
        assert tasks.status_code == 200
        assert _shown(tasks.text, everyone - world.parents) == seen - world.parents
        task_export = mine.get("/tasks/export.csv?show=all").text
        assert _shown(task_export, everyone - world.parents) == seen - world.parents

        # The inspector of B's instance does not exist for them; A's and a tenantless one do.
        b_instance = next(iter(world.instances[B]))
        assert mine.get(f"/instances/{b_instance}").status_code == 404
        assert mine.get(f"/instances/{next(iter(world.instances[A]))}").status_code == 200
        assert mine.get(f"/instances/{next(iter(world.instances[None]))}").status_code == 200
        assert mine.get(f"/instances/{b_instance}/live?parts=tokens").status_code == 404

        # The jump box finds nothing of B's.
        assert mine.get(f"/jump?q={b_instance}").status_code == 404
        assert mine.get(f"/jump?q={next(iter(world.incidents[B]))}").status_code == 404
        assert mine.get(f"/jump?q={next(iter(world.instances[A]))}").status_code == 303
        assert mine.get(f"/jump?q={world.order[B]}").status_code == 404
        assert mine.get(f"/jump?q={world.order[A]}").status_code == 303

        if who == "alice":
            # The audit page (for operators): the admin suspended an instance of each tenant.
            audit = mine.get("/audit")
            assert audit.status_code == 200
            assert world.suspended[A] in audit.text and world.suspended[B] not in audit.text

        # The definition page (its heatmap) and the overview count only what they see.
        definition = mine.get("/definitions/order")
        assert definition.status_code == 200
        assert world.order[B] not in definition.text
        for page in ("/", "/overview/body", "/definitions", "/batches", "/workers"):
            assert mine.get(page).status_code == 200, page
        batches = mine.get("/batches").text
        assert world.batches[A] in batches and world.batches[B] not in batches
    finally:
        mine.close()


def test_the_overview_counts_only_what_tenant_a_sees(world: World) -> None:
    engine = world.server.engine
    now = datetime.now(UTC)
    with acting(Actor("alice", AuditChannel.CONSOLE, tenant_ids=frozenset({A}))):
        mine = console.activity(engine, now)
        summaries = {s.key: s for s in console.definition_summaries(engine)}
        keys = console.definition_keys(engine)
    everything = console.activity(engine, now)
    seen, everyone = len(world.seen()), len(world.everyone())
    assert sum(mine.states.values()) == seen
    assert sum(everything.states.values()) == everyone
    assert mine.open_incidents == 2 * STARTED
    assert everything.open_incidents == 3 * STARTED
    # Started in the last hour: the trends.
    assert mine.trends.hour_started == seen
    assert everything.trends.hour_started == everyone
    assert mine.external_open == 2 * STARTED
    assert everything.external_open == 3 * STARTED
    # The definitions of A and of no tenant, with A's counts only.
    assert set(keys) == {"order", "common", "child", "parent"}
    assert summaries["order"].latest_id == world.order[A]
    assert sum(summaries["order"].states.values()) == STARTED
    assert summaries["order"].open_incidents == STARTED


def test_the_native_api_shows_only_tenant_a_and_tenantless_rows(world: World) -> None:
    seen = world.seen()
    for api in _clients(world, "/api/v1"):
        with api:
            listed = api.get("/instances", params={"limit": 100})
            assert listed.status_code == 200, listed.text
            assert {i["id"] for i in listed.json()["items"]} == seen
            tasks = api.get("/user-tasks").json()["items"]
            assert {t["instance_id"] for t in tasks} == seen - world.parents
            incidents = api.get("/incidents").json()["items"]
            assert {i["id"] for i in incidents} == world.incidents[A] | world.incidents[None]
            external = api.get("/external-tasks").json()["items"]
            assert {t["instance_id"] for t in external} <= seen and len(external) == 2 * STARTED
            definitions = api.get("/definitions").json()["items"]
            assert world.order[A] in {d["id"] for d in definitions}
            assert world.order[B] not in {d["id"] for d in definitions}
            if api.headers["Authorization"].startswith("Basic"):
                # The audit log, for operators such as alice.
                audit = api.get("/audit").json()["items"]
                audited = {e["instance_id"] for e in audit}
                assert world.suspended[A] in audited and world.suspended[B] not in audited
            batches = {b["id"] for b in api.get("/batches").json()["items"]}
            assert world.batches[A] in batches and world.batches[B] not in batches
            b_instance = next(iter(world.instances[B]))
            for part in ("", "/variables", "/tokens", "/history"):
                assert api.get(f"/instances/{b_instance}{part}").status_code == 404, part
            assert api.get(f"/definitions/{world.order[B]}").status_code == 404
            assert api.get(f"/definitions/{world.order[A]}").status_code == 200
            assert api.get(f"/batches/{world.batches[B]}").status_code == 404
            assert api.get(f"/incidents/{next(iter(world.incidents[B]))}").status_code == 404


def _listed(rest: httpx.Client, path: str, **params: Any) -> list[dict[str, Any]]:
    """The list at `path`, checked against its count."""
    answer = rest.get(path, params=params)
    assert answer.status_code == 200, (path, answer.text)
    rows: list[dict[str, Any]] = answer.json()
    counted = rest.get(f"{path}/count", params=params)
    assert counted.status_code == 200, (path, counted.text)
    assert counted.json() == {"count": len(rows)}, path
    return rows


def _instances_of(rows: list[dict[str, Any]], field: str = "processInstanceId") -> set[str]:
    return {row[field] for row in rows}


def test_engine_rest_shows_only_tenant_a_and_tenantless_rows(world: World) -> None:
    seen = world.seen()
    own_incidents = world.incidents[A] | world.incidents[None]
    for rest in _clients(world, "/engine-rest"):
        with rest:
            assert _instances_of(_listed(rest, "/process-instance"), "id") == seen
            assert _instances_of(_listed(rest, "/history/process-instance"), "id") == seen
            assert _instances_of(_listed(rest, "/task")) == seen - world.parents
            assert {i["id"] for i in _listed(rest, "/incident")} == own_incidents
            assert {i["id"] for i in _listed(rest, "/history/incident")} == own_incidents
            assert _instances_of(_listed(rest, "/external-task")) <= seen
            assert len(_listed(rest, "/external-task")) == 2 * STARTED
            assert _instances_of(_listed(rest, "/history/activity-instance")) == seen
            variables = _listed(rest, "/variable-instance", variableName="owner")
            assert {v["value"] for v in variables} == {A, "nobody"}
            assert _instances_of(variables) <= seen
            historic = _listed(rest, "/history/variable-instance", variableName="owner")
            assert {v["value"] for v in historic} == {A, "nobody"}
            assert {s["tenantId"] for s in _listed(rest, "/process-definition")} == {A, None}
            assert {d["id"] for d in _listed(rest, "/decision-definition")} == {world.decisions[A]}
            decided = _listed(rest, "/history/decision-instance")
            assert {d["id"] for d in decided} == {world.evaluations[A]}
            deployments = _listed(rest, "/deployment")
            assert {d["tenantId"] for d in deployments} == {A, None}
            batches = rest.get("/batch").json()
            assert {b["id"] for b in batches} == {world.batches[A]}
            assert {b["tenantId"] for b in batches} == {A}
            assert rest.get("/batch/count").json() == {"count": 1}
            # By id: B's rows are not there.
            b_instance = next(iter(world.instances[B]))
            assert rest.get(f"/process-instance/{b_instance}").status_code == 404
            assert rest.get(f"/history/process-instance/{b_instance}").status_code == 404
            assert rest.get(f"/process-definition/{world.order[B]}").status_code == 404
            assert rest.get(f"/batch/{world.batches[B]}").status_code == 404
            assert rest.get(f"/process-instance/{next(iter(seen))}").status_code == 200
    with httpx.Client(
        base_url=f"{world.server.url}/engine-rest", headers=world.server.bearer("admin")
    ) as admin:
        assert admin.get("/process-instance/count").json() == {"count": len(world.everyone())}
        assert {b["tenantId"] for b in admin.get("/batch").json()} == {A, B}


def test_event_subscriptions_are_narrowed_and_messages_reach_only_seen_tenants(
    world: World,
) -> None:
    engine = world.server.engine
    waiting: dict[str | None, dict[str, str]] = {}
    for tenant in (A, B, None):
        engine.deploy(_waiting_for("payer", "message", "Paid"), tenant_id=tenant)
        engine.deploy(_waiting_for("goer", "signal", "Go"), tenant_id=tenant)
        waiting[tenant] = {
            key: str(engine.start_latest(key, tenant_id=tenant, without_tenant=tenant is None).id)
            for key in ("payer", "goer")
        }
    alice, token = _clients(world, "/engine-rest")
    token.close()
    with alice:
        subscriptions = alice.get("/event-subscription").json()
        assert _instances_of(subscriptions) == {
            waiting[t][k] for t in (A, None) for k in ("payer", "goer")
        }
        # Without a tenant, alice's message reaches A's and the tenantless instance only.
        answer = alice.post(
            "/message", json={"messageName": "Paid", "all": True, "resultEnabled": True}
        )
        assert answer.status_code == 200, answer.text
        reached = {r["execution"]["processInstanceId"] for r in answer.json()}
        assert reached == {waiting[A]["payer"], waiting[None]["payer"]}
        # Naming B's tenant reaches nothing of hers.
        foreign = alice.post("/message", json={"messageName": "Paid", "tenantId": B})
        assert foreign.status_code in (400, 404), foreign.text
        signalled = alice.post("/signal", json={"name": "Go"})
        assert signalled.status_code == 204, signalled.text
    states = {
        (tenant, key): engine.instance(instance_id).state.value
        for tenant, ids in waiting.items()
        for key, instance_id in ids.items()
    }
    assert states == {
        (A, "payer"): "Completed",
        (None, "payer"): "Completed",
        (B, "payer"): "Active",
        (A, "goer"): "Completed",
        (None, "goer"): "Completed",
        (B, "goer"): "Active",
    }


def test_a_start_by_key_resolves_within_the_tenant_and_calls_its_own_process(
    world: World,
) -> None:
    engine = world.server.engine
    alice, token = _clients(world, "/api/v1")
    token.close()
    with alice:
        started = alice.post("/definitions/key/order/start", json={})
        assert started.status_code == 201, started.text
        assert started.json()["definition_id"] == world.order[A]
        parent = alice.post("/definitions/key/parent/start", json={})
        assert parent.status_code == 201, parent.text
        parent_id = parent.json()["id"]
    [called] = engine.instance(parent_id).children()
    assert (called.info().definition_id, called.info().tenant_id) == (world.child[A], A)
    assert engine.instance(parent_id).info().tenant_id == A
    # The call activities of the world's parents called their own tenant's child as well.
    with httpx.Client(
        base_url=f"{world.server.url}/engine-rest", headers=world.server.bearer("admin")
    ) as admin:
        children = admin.get("/process-instance", params={"processDefinitionKey": "child"}).json()
        assert {(c["definitionId"], c["tenantId"]) for c in children} == {
            (world.child[A], A),
            (world.child[B], B),
        }
    alice_rest, token = _clients(world, "/engine-rest")
    token.close()
    with alice_rest:
        # Naming tenant B's definition is as if it did not exist.
        foreign = alice_rest.post("/process-definition/key/order/tenant-id/tenant-b/start", json={})
        assert foreign.status_code == 404, foreign.text
        own = alice_rest.post("/process-definition/key/order/tenant-id/tenant-a/start", json={})
        assert own.status_code == 200, own.text
        assert own.json()["definitionId"] == world.order[A]


def test_the_stream_carries_only_tenant_a_and_tenantless_events(world: World) -> None:
    engine = world.server.engine
    url = f"{world.server.url}/api/v1/stream"
    streams = {
        "alice": SSEClient(url, headers=_alice_basic()),
        "token": SSEClient(url, headers=world.server.bearer("viewer")),
    }
    watcher = SSEClient(url, headers=world.server.bearer())
    try:
        for client in (*streams.values(), watcher):
            client.ready_cursor()
        of_b = str(engine.start_latest("order", tenant_id=B).id)
        of_none = str(engine.start_latest("common").id)
        of_a = str(engine.start_latest("order", tenant_id=A).id)

        def started(client: SSEClient, instance: str) -> bool:
            return any(e.data.get("instance_id") == instance for e in client.events)

        watcher.wait_for(lambda c: all(started(c, i) for i in (of_a, of_b, of_none)))
        for client in streams.values():
            # A's instance started last: had B's events reached the stream, they would be here.
            client.wait_for(lambda c: started(c, of_a) and started(c, of_none))
            assert not started(client, of_b)
        first = min(e.id for e in watcher.events if e.id is not None and e.event != "ready")
        replay = SSEClient(url, headers={**_alice_basic(), "Last-Event-ID": str(first - 1)})
        try:
            replay.wait_for(lambda c: started(c, of_a))
            assert started(replay, of_none) and not started(replay, of_b)
        finally:
            replay.close()
    finally:
        for client in (*streams.values(), watcher):
            client.close()
