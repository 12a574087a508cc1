"""Every read shows only the rows its principal may read: `ann`, a member of a group granted
READ_INSTANCE, READ_TASK, READ_HISTORY and READ on the definition `order` only, sees exactly the
order instances, tasks and incidents (never the payroll ones) over the console (lists, exports,
overview, inspector, jump box, audit), /api/v1, /engine-rest and the event stream; a user-level
REVOKE beats a global grant; the built-in roles see everything as before.

The identity rows (ann's user, her group, the authorizations) are written as fixture rows: the
commands and REST that write them are another part of the work."""

from __future__ import annotations

import base64
import csv
import io
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest

from engine.builder import ProcessBuilder
from engine.commands.accounts import CreateUser
from engine.core.actors import Actor, acting
from engine.identity.accounts import Role
from engine.identity.permissions import (
    ANY,
    AuthorizationType,
    ResourceType,
    permission_bits,
)
from engine.queries import audit, console, grants
from engine.queries.audit import AuditFilter
from engine.states import AuditChannel
from tests.api.helpers import start
from tests.api.test_sessions import Browser
from tests.server import PASSWORD, LiveServer, live_server
from tests.stream.harness import SSEClient

PD = ResourceType.PROCESS_DEFINITION
KEYS = ("order", "payroll")
# Per definition: instances started, and how many of them get an incident.
STARTED, FAILED = 3, 1


def _process(key: str) -> Any:
    """start -> fork -> (a user task | an external task) -> join -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .parallel_gateway("fork")
        .user_task("approve", "Approve")
        .service_task("charge", topic=key)
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "fork", "approve", "join", "end")
        .chain("fork", "charge", "join")
        .build()
    )


@dataclass
class World:
    server: LiveServer
    database_url: str
    # Instance ids by definition key.
    instances: dict[str, set[str]]
    # Incident ids by definition key.
    incidents: dict[str, set[str]]


def _sql(database_url: str, statement: str, *params: Any) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(statement, params)


def _authorize(
    url: str, kind: AuthorizationType, *, user: str | None, group: str | None, key: str, bits: int
) -> None:
    _sql(
        url,
        "INSERT INTO authorization_rule"
        " (id, type, user_id, group_id, resource_type, resource_id, permissions)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
        uuid.uuid4(),
        int(kind),
        user,
        group,
        int(PD),
        key,
        bits,
    )


@pytest.fixture(scope="module")
def world(module_database_url: str) -> Iterator[World]:
    yield from _world(module_database_url)


def _world(database_url: str) -> Iterator[World]:
    with live_server(database_url, run_jobs=False) as server:
        engine = server.engine
        instances: dict[str, set[str]] = {}
        incidents: dict[str, set[str]] = {}
        for key in KEYS:
            engine.deploy(_process(key), name=key)
            instances[key] = {str(engine.start_latest(key).id) for _ in range(STARTED)}
            for task in engine.fetch_and_lock("w", {key: 60_000}, max_tasks=FAILED):
                engine.fail_external_task(task["id"], "w", "declined", retries=0)
            incidents[key] = {str(i.id) for i in engine.incidents(definition_key=key)}
            assert len(incidents[key]) == FAILED
        # ann: a viewer by her group of her own, which is granted reads of `order` only.
        engine.run(CreateUser("ann", Role.VIEWER, PASSWORD))
        _sql(database_url, "DELETE FROM group_membership WHERE user_id = 'ann'")
        _sql(database_url, "INSERT INTO identity_group (id, name) VALUES ('order-team', 'Orders')")
        _sql(database_url, "INSERT INTO group_membership VALUES ('order-team', 'ann')")
        bits = permission_bits(PD, ["READ", "READ_INSTANCE", "READ_TASK", "READ_HISTORY"])
        grant = AuthorizationType.GRANT
        _authorize(database_url, grant, user=None, group="order-team", key="order", bits=bits)
        yield World(server, database_url, instances, incidents)


def _ann_api(world: World, base: str) -> httpx.Client:
    return httpx.Client(base_url=f"{world.server.url}{base}", auth=("ann", PASSWORD), timeout=30.0)


def _ids(text: str, ids: set[str]) -> set[str]:
    """Which of `ids` the page shows."""
    return {i for i in ids if i in text}


def test_the_console_shows_ann_only_order(world: World) -> None:
    order, payroll = world.instances["order"], world.instances["payroll"]
    everyone = order | payroll
    ann = Browser(world.server.url, "ann")
    admin = Browser(world.server.url, "admin")
    try:
        listed = ann.get("/instances")
        assert listed.status_code == 200
        assert _ids(listed.text, everyone) == order
        assert _ids(admin.get("/instances").text, everyone) == everyone

        exported = ann.get("/instances/export.csv")
        assert exported.status_code == 200
        rows = list(csv.DictReader(io.StringIO(exported.text)))
        assert _ids(exported.text, everyone) == order and len(rows) == len(order)
        as_json = ann.get("/instances/export.json")
        assert _ids(as_json.text, everyone) == order

        incidents = ann.get("/incidents")
        all_incidents = world.incidents["order"] | world.incidents["payroll"]
        assert _ids(incidents.text, all_incidents | everyone) == (
            world.incidents["order"] | _ids(incidents.text, order)
        )
        assert not _ids(incidents.text, payroll | world.incidents["payroll"])
        assert not _ids(ann.get("/incidents/export.csv").text, payroll)
        assert _ids(ann.get("/incidents/export.csv").text, order)

        # Ann's groups are her work groups: her inbox opens on her groups' tasks; all of them
        # that she may read are one view away.
        tasks = ann.get("/tasks?show=all")
        assert _ids(tasks.text, order) == order and not _ids(tasks.text, payroll)
        assert not _ids(ann.get("/tasks/export.csv?show=all").text, payroll)

        # The inspector of a payroll instance does not exist for her; an order one does.
        assert ann.get(f"/instances/{next(iter(payroll))}").status_code == 404
        assert ann.get(f"/instances/{next(iter(order))}").status_code == 200
        assert admin.get(f"/instances/{next(iter(payroll))}").status_code == 200

        # The jump box finds an order instance and its incident, never a payroll one.
        assert ann.get(f"/jump?q={next(iter(payroll))}").status_code == 404
        assert ann.get(f"/jump?q={next(iter(world.incidents['payroll']))}").status_code == 404
        assert ann.get(f"/jump?q={next(iter(order))}").status_code == 303
        assert ann.get("/jump?q=payroll").status_code == 404
        assert admin.get("/jump?q=payroll").status_code == 303

        # Definitions and the overview count only order's instances.
        definitions = ann.get("/definitions").text
        assert "order" in definitions and "payroll" not in definitions
        assert "payroll" in admin.get("/definitions").text
        assert ann.get("/definitions/payroll").status_code == 404
        for page in ("/workers", "/decisions", "/batches", "/", "/overview/body"):
            assert ann.get(page).status_code == 200, page
    finally:
        ann.close()
        admin.close()


def test_the_overview_counts_only_what_ann_reads(world: World) -> None:
    ann_grants = grants.grants(world.server.engine, "ann")
    with acting(Actor("ann", AuditChannel.CONSOLE, grants=ann_grants)):
        mine = console.activity(world.server.engine, datetime.now(UTC))
    everything = console.activity(world.server.engine, datetime.now(UTC))
    assert sum(mine.states.values()) == STARTED
    assert sum(everything.states.values()) == STARTED * len(KEYS)
    assert mine.open_incidents == FAILED
    assert everything.open_incidents == FAILED * len(KEYS)
    assert mine.trends.hour_started == STARTED
    assert mine.external_open > 0
    assert everything.external_open == 2 * mine.external_open
    # The last hour's events and the workers' locks, counted from the rows' definition keys.
    assert mine.events_last_hour
    assert {e: 2 * n for e, n in mine.events_last_hour.items()} == everything.events_last_hour
    [(worker, locks)] = mine.workers
    assert everything.workers == [(worker, 2 * locks)]
    ann = Browser(world.server.url, "ann")
    try:
        page = ann.get("/overview/body")
        assert page.status_code == 200
    finally:
        ann.close()


def test_the_native_api_shows_ann_only_order(world: World) -> None:
    order, payroll = world.instances["order"], world.instances["payroll"]
    with _ann_api(world, "/api/v1") as api:
        listed = api.get("/instances", params={"limit": 100})
        assert listed.status_code == 200, listed.text
        assert {i["id"] for i in listed.json()["items"]} == order
        tasks = api.get("/user-tasks").json()["items"]
        assert {t["instance_id"] for t in tasks} == order
        incidents = api.get("/incidents").json()["items"]
        assert {i["id"] for i in incidents} == world.incidents["order"]
        for part in ("", "/variables", "/tokens", "/history"):
            assert api.get(f"/instances/{next(iter(payroll))}{part}").status_code == 404, part
            assert api.get(f"/instances/{next(iter(order))}{part}").status_code == 200, part
        # /metrics counts over every instance: not for a principal narrowed to some.
        assert api.get(f"{world.server.url}/metrics").status_code == 403
        viewer = world.server.bearer("viewer")
        assert httpx.get(f"{world.server.url}/metrics", headers=viewer).status_code == 200
        payroll_incident = next(iter(world.incidents["payroll"]))
        assert api.get(f"/incidents/{payroll_incident}").status_code == 404


def test_engine_rest_shows_ann_only_order(world: World) -> None:
    order, payroll = world.instances["order"], world.instances["payroll"]
    with _ann_api(world, "/engine-rest") as rest:
        listed = rest.get("/process-instance")
        assert listed.status_code == 200, listed.text
        assert {i["id"] for i in listed.json()} == order
        assert rest.get("/process-instance/count").json() == {"count": len(order)}
        tasks = rest.get("/task").json()
        assert {t["processInstanceId"] for t in tasks} == order
        assert rest.get("/task/count").json() == {"count": len(order)}
        incidents = rest.get("/incident").json()
        assert {i["id"] for i in incidents} == world.incidents["order"]
        assert rest.get("/incident/count").json() == {"count": FAILED}
        history = rest.get("/history/process-instance").json()
        assert {i["id"] for i in history} == order
        assert rest.get("/history/process-instance/count").json() == {"count": len(order)}
        assert rest.get(f"/process-instance/{next(iter(payroll))}").status_code == 404
        assert rest.get(f"/process-instance/{next(iter(order))}").status_code == 200
        assert rest.get(f"/history/process-instance/{next(iter(payroll))}").status_code == 404
        jobs_and_tasks = rest.get("/external-task").json()
        assert {t["processInstanceId"] for t in jobs_and_tasks} <= order
        definitions = rest.get("/process-definition").json()
        assert {d["key"] for d in definitions} == {"order"}
    admin = httpx.Client(
        base_url=f"{world.server.url}/engine-rest", headers=world.server.bearer("viewer")
    )
    with admin:
        assert admin.get("/process-instance/count").json() == {"count": len(order | payroll)}
        assert admin.get("/task/count").json() == {"count": len(order | payroll)}


def test_ann_stream_carries_order_events_only(world: World) -> None:
    engine = world.server.engine
    stream = SSEClient(f"{world.server.url}/api/v1/stream", headers=_basic_header())
    watcher = SSEClient(f"{world.server.url}/api/v1/stream", headers=world.server.bearer())
    try:
        stream.ready_cursor()
        watcher.ready_cursor()
        payroll = str(engine.start_latest("payroll").id)
        order = str(engine.start_latest("order").id)

        def started(client: SSEClient, instance: str) -> bool:
            return any(e.data.get("instance_id") == instance for e in client.events)

        # The admin's stream sees both; ann's sees the order one, which started after the
        # payroll one: had the payroll event reached her, it would be there by now.
        watcher.wait_for(lambda c: started(c, payroll) and started(c, order))
        stream.wait_for(lambda c: started(c, order))
        assert not started(stream, payroll)
        assert {
            e.data.get("instance_id") for e in stream.events if e.id and e.event != "ready"
        } <= (world.instances["order"] | {order})
        # A replay (Last-Event-ID from before both) reads only order rows too.
        first = min(e.id for e in watcher.events if e.id is not None and e.event != "ready")
        replay = SSEClient(
            f"{world.server.url}/api/v1/stream",
            headers={**_basic_header(), "Last-Event-ID": str(first - 1)},
        )
        try:
            replay.wait_for(lambda c: started(c, order))
            assert not started(replay, payroll)
        finally:
            replay.close()
    finally:
        stream.close()
        watcher.close()


def _basic_header() -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"ann:{PASSWORD}".encode()).decode()}


def test_the_audit_entries_are_those_of_readable_instances(world: World) -> None:
    engine = world.server.engine
    headers = world.server.bearer("admin")
    with httpx.Client(base_url=f"{world.server.url}/api/v1", headers=headers) as admin:
        started = {key: start(admin, key)["id"] for key in KEYS}
        for instance in started.values():
            assert admin.post(f"/instances/{instance}/suspend").status_code == 200
    with acting(Actor("ann", AuditChannel.CONSOLE, grants=grants.grants(engine, "ann"))):
        mine = {str(e.instance_id) for e in audit.entries(engine, AuditFilter())}
    everything = {str(e.instance_id) for e in audit.entries(engine, AuditFilter())}
    assert set(started.values()) <= everything
    assert started["order"] in mine and started["payroll"] not in mine
    assert mine <= world.instances["order"] | {started["order"]}


def test_a_user_revoke_beats_a_global_grant(world: World) -> None:
    order, payroll = world.instances["order"], world.instances["payroll"]
    read_instance = permission_bits(PD, ["READ_INSTANCE"])
    _authorize(
        world.database_url,
        AuthorizationType.GLOBAL,
        user=ANY,
        group=None,
        key=ANY,
        bits=read_instance,
    )
    _authorize(
        world.database_url,
        AuthorizationType.REVOKE,
        user="ann",
        group=None,
        key="order",
        bits=read_instance,
    )
    with _ann_api(world, "/engine-rest") as rest:
        seen = {i["id"] for i in rest.get("/process-instance").json()}
        # The global grant shows payroll (and any instance started since); her revoke hides
        # every order instance, although her group is granted them.
        assert payroll <= seen and not seen & order
        assert rest.get(f"/process-instance/{next(iter(order))}").status_code == 404
