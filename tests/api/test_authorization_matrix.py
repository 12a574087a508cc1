"""The authorization matrix, mutations: for each Camunda resource type and permission, every
route of the console, /api/v1 and /engine-rest that needs it (the table:
tests/api/matrix_table.py; its targets: tests/api/matrix_routes.py) is called by three users,
each in a fresh group of their own (never a built-in one) that may read everything and change
nothing:

- WITH: their group is granted exactly the permission on the target's resource id: the call
  answers the row's status and the target's rows change;
- WITHOUT: only the reads: 403 naming the permission, and nothing changes;
- REVOKED: their group is granted the permission on `*`, and they are revoked it on the
  target's id (a user's revoke beats a group's grant, Camunda's precedence): 403, nothing changes.

Every call has a fresh target. Every mutation route of the three surfaces is in the table or in
the short list of routes that need nothing beyond being signed in, so none escapes the matrix.
The read half (lists, counts, exports, the stream) is tests/api/test_authorized_reads.py."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from app import api, camunda, console
from engine.commands.identity import CreateGroup
from engine.commands.identity_tenants import AddTenantMember, CreateTenant
from engine.store import accounts as account_store
from tests.api import processes
from tests.api.matrix_routes import (
    AUTHORIZATION,
    DECISION_DEFINITION,
    DMN,
    GROUP_MEMBERSHIP,
    PROCESS_DEFINITION,
    PROCESS_INSTANCE,
    PROCESSES,
    READS,
    TENANT_ID,
    TENANTED,
    USER,
    Resource,
    Row,
    Surface,
    Target,
    identity_counts,
    scalar,
    unique,
)
from tests.api.matrix_table import DISH, ROWS
from tests.api.test_sessions import Browser
from tests.server import PASSWORD, LiveServer, live_server

READERS = "matrix-readers"
# PASSWORD as a stored password hash names it (pbkdf2_sha256$rounds$salt$digest), with few
# rounds: each of the matrix's hundreds of principals signs in once, checked in a moment.
_SALT = "matrix-salt"
PASSWORD_HASH = "pbkdf2_sha256$1000${}${}".format(
    _SALT, hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), _SALT.encode(), 1000).hex()
)
_serial = itertools.count(1)


class Who(StrEnum):
    WITH = "with"
    WITHOUT = "without"
    REVOKED = "revoked"


@dataclass
class World:
    server: LiveServer
    rest: httpx.Client  # /engine-rest as the built-in admin: the grants are made through it

    def grant(
        self,
        kind: int,
        resource: Resource,
        permissions: list[str],
        resource_id: str,
        *,
        user: str | None = None,
        group: str | None = None,
    ) -> None:
        body = {
            "type": kind,
            "permissions": permissions,
            "userId": user,
            "groupId": group,
            "resourceType": resource.id,
            "resourceId": resource_id,
        }
        answer = self.rest.post("/authorization/create", json=body)
        assert answer.status_code == 200, answer.text


GRANT, REVOKE = 1, 2  # Camunda's authorization types


@pytest.fixture(scope="module")
def world(module_database_url: str) -> Iterator[World]:
    with live_server(module_database_url, run_jobs=False) as server:
        for model in PROCESSES:
            server.engine.deploy(model)
        server.engine.deploy(DMN / "dish_first.dmn")
        server.engine.run(CreateTenant(TENANT_ID, "Matrix"))
        server.engine.deploy(processes.straight(TENANTED), tenant_id=TENANT_ID)
        with httpx.Client(
            base_url=f"{server.url}/engine-rest", headers=server.bearer("admin"), timeout=30
        ) as rest:
            made = World(server, rest)
            server.engine.run(CreateGroup(READERS, "Matrix readers"))
            server.engine.run(AddTenantMember(TENANT_ID, group_id=READERS))
            for resource, permissions in READS:
                made.grant(GRANT, resource, list(permissions), "*", group=READERS)
            yield made


def _member(world: World, label: str) -> tuple[str, str]:
    """A fresh user, signing in with PASSWORD, in a fresh group of their own and the readers'
    group: (user, group). Fixture rows: the commands that write them are not tested here."""
    serial = next(_serial)
    user, group = f"matrix-{serial}-{label}", f"matrix-group-{serial}-{label}"
    with world.server.engine.connection() as conn:
        conn.execute("INSERT INTO identity_user (id) VALUES (%s)", (user,))
        conn.execute("INSERT INTO identity_group (id, name) VALUES (%s, 'Matrix')", (group,))
        conn.execute(
            "INSERT INTO group_membership (group_id, user_id) VALUES (%s, %s), (%s, %s)",
            (group, user, READERS, user),
        )
        account_store.insert_credential(conn, user, "password", PASSWORD_HASH, user_id=user)
    return user, group


def principal(world: World, row: Row, who: Who, target: Target) -> str:
    """A fresh user in a fresh group of their own (and the readers' group), granted as `who`
    is; their name."""
    user, group = _member(world, who.value)
    # The group's grants, one authorization per resource and id (as Camunda keeps them).
    granted: dict[tuple[Resource, str], list[str]] = {}
    for also in row.also:
        on = target.resource_id if also.on_target else "*"
        granted.setdefault((also.resource, on), []).append(also.permission)
    named = "*" if row.on_any else target.resource_id
    if who is not Who.WITHOUT:
        on = named if who is Who.WITH else "*"
        granted.setdefault((row.resource, on), []).append(row.permission)
    for (resource, on), permissions in granted.items():
        world.grant(GRANT, resource, permissions, on, group=group)
    if who is Who.REVOKED:
        world.grant(REVOKE, row.resource, [row.permission], named, user=user)
    return user


def call(world: World, row: Row, user: str, target: Target) -> httpx.Response:
    if row.surface is Surface.CONSOLE:
        browser = Browser(world.server.url, user)
        try:
            return browser.post(target.path, **target.request)
        finally:
            browser.close()
    base = f"{world.server.url}{row.surface.value}"
    with httpx.Client(base_url=base, auth=(user, PASSWORD), timeout=30) as client:
        return client.request(row.method, target.path, **target.request)


def assert_refused(row: Row, user: str, named: str, answer: httpx.Response) -> None:
    """Refused as the surface says it: 403 naming the row's permission on the resource `named`
    (Camunda's `AuthorizationException` on /engine-rest, the JSON error on /api/v1, the
    console's words)."""
    assert answer.status_code == 403, answer.text
    if row.surface is Surface.CONSOLE:
        assert "Not allowed." in answer.text and row.permission in answer.text, answer.text
        return
    body = answer.json()
    if row.surface is Surface.REST:
        assert body["type"] == "AuthorizationException", body
        assert body["userId"] == user
        assert row.permission in body["message"]
        missing = {
            (m["permissionName"], m["resourceName"], m["resourceId"])
            for m in body["missingAuthorizations"]
        }
    else:
        assert body["type"] == "Forbidden", body
        assert row.permission in body["message"]
        missing = {
            (m["permission"], m["resource_type"], m["resource_id"])
            for m in body["detail"]["missing"]
        }
    assert (row.permission, row.resource.name, named) in missing, body


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
@pytest.mark.parametrize("who", list(Who))
def test_a_mutation_needs_its_permission(world: World, row: Row, who: Who) -> None:
    engine = world.server.engine
    target = row.make(engine)
    user = principal(world, row, who, target)
    before = target.probe(engine)
    answer = call(world, row, user, target)
    if who is Who.WITH:
        assert answer.status_code == row.status, answer.text
        assert target.probe(engine) != before, "the call changed nothing"
    else:
        assert_refused(row, user, "*" if row.on_any else target.resource_id, answer)
        assert target.probe(engine) == before


# -- no mutation route escapes the matrix ---------------------------------------------------------

FETCH_NARROWED = (
    "narrowed, never refused: locks only the tasks of instances the worker may READ and UPDATE "
    "(test_a_fetch_locks_only_what_it_may_update)"
)
TASK_QUERY = "a query: its rows are narrowed by the caller's grants, never refused"
INSTANCE_QUERY = TASK_QUERY
FILTER_RUN = "runs a filter's query (a read): READ on the filter, as its GET (test_filters_rest)"
# Routes that need nothing beyond being signed in, and why.
SIGNED_IN: dict[tuple[str, str, str], str] = {
    ("console", "POST", "/views"): "the caller's own saved view",
    ("console", "POST", "/views/{view_id:uuid}/delete"): "the caller's own saved view",
    ("console", "POST", "/account/profile"): "the caller's own profile",
    ("console", "POST", "/account/password"): "the caller's own password (the current one asked)",
    ("console", "POST", "/account/sessions/end-others"): "the caller's own sessions",
    ("console", "POST", "/account/sessions/{session_id:uuid}/end"): "the caller's own session",
    ("console", "POST", "/sessions/end-others"): "the caller's own sessions",
    ("console", "POST", "/sessions/{session_id:uuid}/end"): "the caller's own session",
    ("console", "POST", "/account/tokens"): "the caller's own API token",
    ("console", "POST", "/account/tokens/{label}/revoke"): "the caller's own API token",
    ("/api/v1", "POST", "/account/tokens"): "the caller's own API token",
    ("/api/v1", "DELETE", "/account/tokens/{name}"): "the caller's own API token",
    ("console", "POST", "/instances/{instance_id:uuid}/modify/preview"): "rolls back: reads only",
    ("/engine-rest", "POST", "/identity/verify"): "checks a password: changes nothing",
    ("/engine-rest", "POST", "/migration/generate"): "a plan, computed: changes nothing",
    ("/engine-rest", "POST", "/migration/validate"): "a report, computed: changes nothing",
    ("console", "POST", "/definitions/{key}/migrate/validate"): "a report: changes nothing",
    ("/engine-rest", "POST", "/group"): "Camunda's POST form of the group query: a read",
    ("/api/v1", "POST", "/external-tasks/fetch-and-lock"): FETCH_NARROWED,
    ("/engine-rest", "POST", "/external-task/fetchAndLock"): FETCH_NARROWED,
    ("/engine-rest", "POST", "/task"): TASK_QUERY,
    ("/engine-rest", "POST", "/task/count"): TASK_QUERY,
    ("/engine-rest", "POST", "/process-instance"): INSTANCE_QUERY,
    ("/engine-rest", "POST", "/process-instance/count"): INSTANCE_QUERY,
    ("/engine-rest", "POST", "/filter/{id}/list"): FILTER_RUN,
    ("/engine-rest", "POST", "/filter/{id}/count"): FILTER_RUN,
    ("/engine-rest", "POST", "/filter/{id}/singleResult"): FILTER_RUN,
    ("/engine-rest", "POST", "/execution"): "Camunda's POST form of the execution query: a read",
    ("/engine-rest", "POST", "/execution/count"): "Camunda's POST form of the execution count",
}


def mutation_routes() -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    for surface, routes in (
        (Surface.CONSOLE, console.routes),
        (Surface.API, api.routes),
        (Surface.REST, camunda.routes),
    ):
        for route in routes:
            if not isinstance(route, Route) or route.path == "/{path:path}":
                continue
            for method in (route.methods or set()) - {"GET", "HEAD", "OPTIONS"}:
                found.add((surface.value, method, route.path))
    return found


def test_every_mutation_route_is_in_the_matrix() -> None:
    in_table = {row.key for row in ROWS}
    listed = in_table | set(SIGNED_IN)
    routes = mutation_routes()
    assert sorted(routes - listed) == [], "a mutation route the matrix does not name"
    assert sorted(listed - routes) == [], "the matrix names a route that does not exist"
    assert not in_table & set(SIGNED_IN), "a route both needs a permission and does not"


# Each Camunda resource type and permission the matrix must ask about (Camunda 7's names).
PERMISSIONS: dict[str, set[str]] = {
    "ProcessDefinition": {
        "CREATE_INSTANCE",
        "UPDATE_INSTANCE",
        "DELETE_INSTANCE",
        "RETRY_JOB",
        "SUSPEND_INSTANCE",
        "MIGRATE_INSTANCE",
        "TASK_WORK",
        "TASK_ASSIGN",
        "UPDATE_INSTANCE_VARIABLE",
        "UPDATE_HISTORY",
        "DELETE_HISTORY",
        "DELETE",
    },
    "ProcessInstance": {"CREATE", "UPDATE", "DELETE", "RETRY_JOB", "SUSPEND", "UPDATE_VARIABLE"},
    "Task": {"TASK_WORK", "TASK_ASSIGN", "UPDATE"},
    "Deployment": {"CREATE"},
    "DecisionDefinition": {"CREATE_INSTANCE"},
    "Batch": {"CREATE", "UPDATE", "DELETE"},
    "User": {"CREATE", "UPDATE", "DELETE"},
    "Group": {"CREATE", "UPDATE", "DELETE"},
    "Tenant": {"CREATE", "UPDATE", "DELETE"},
    "Authorization": {"CREATE", "UPDATE", "DELETE"},
    "Group membership": {"CREATE", "DELETE"},
    "TenantMembership": {"CREATE", "DELETE"},
    "Filter": {"CREATE", "UPDATE", "DELETE"},
}


def test_each_resource_type_and_permission_has_its_rows() -> None:
    asked: dict[str, set[str]] = {}
    for row in ROWS:
        asked.setdefault(row.resource.name, set()).add(row.permission)
    for resource, permissions in PERMISSIONS.items():
        assert permissions <= asked.get(resource, set()), resource
    # Each asked on every surface that has a route for it: the three for the common ones.
    surfaces: dict[tuple[str, str], set[Surface]] = {
        (row.resource.name, row.permission): set() for row in ROWS
    }
    for row in ROWS:
        surfaces[(row.resource.name, row.permission)].add(row.surface)
    for key in [("ProcessDefinition", "CREATE_INSTANCE"), ("ProcessDefinition", "DELETE_INSTANCE")]:
        assert surfaces[key] == set(Surface), key


# -- what the table cannot say: narrowing, and grants that depend on the body ---------------------


def someone(world: World, grants: list[tuple[Resource, list[str], str]]) -> str:
    """A fresh user in a fresh group of their own (and the readers'), the group granted
    `grants` (resource, permissions, resource id); their name."""
    user, group = _member(world, "someone")
    for resource, permissions, on in grants:
        world.grant(GRANT, resource, permissions, on, group=group)
    return user


def api_as(world: World, user: str) -> httpx.Client:
    return httpx.Client(base_url=f"{world.server.url}/api/v1", auth=(user, PASSWORD), timeout=30)


def test_a_role_needs_the_membership_of_its_group(world: World) -> None:
    """CREATE on users alone makes no admin (who would then make an admin token): putting a
    user or a token into a built-in group needs CREATE on that group's memberships too."""
    engine = world.server.engine
    creator = someone(world, [(USER, ["CREATE"], "*"), (GROUP_MEMBERSHIP, ["CREATE"], "viewer")])
    with api_as(world, creator) as api_client:
        before = identity_counts(engine)
        answer = api_client.post("/users", json={"name": unique("climber"), "role": "admin"})
        assert answer.status_code == 403, answer.text
        missing = answer.json()["detail"]["missing"]
        assert {k: missing[0][k] for k in ("permission", "resource_type")} == {
            "permission": "CREATE",
            "resource_type": "Group membership",
        }, missing
        assert missing[0]["resource_id"] == "admin", missing
        assert identity_counts(engine) == before, "a refused creation wrote nothing"
        viewer = unique("viewer")
        answer = api_client.post("/users", json={"name": viewer, "role": "viewer"})
        assert answer.status_code == 201, answer.text
        joined = "SELECT count(*) FROM group_membership WHERE group_id = 'viewer' AND user_id = %s"
        assert scalar(engine, joined, viewer) == 1
    # An administrator of tokens and roles needs the membership of the group too.
    admin_ = someone(
        world, [(AUTHORIZATION, ["ALL"], "*"), (GROUP_MEMBERSHIP, ["CREATE"], "operator")]
    )
    with api_as(world, admin_) as api_client:
        before = identity_counts(engine)
        refused = [
            api_client.post("/tokens", json={"name": unique("t"), "role": "admin"}),
            api_client.post(f"/users/{viewer}/role", json={"role": "admin"}),
        ]
        for answer in refused:
            assert answer.status_code == 403, answer.text
            assert "Group membership" in answer.text and "'admin'" in answer.text, answer.text
        assert identity_counts(engine) == before, "a refused change wrote nothing"
        answer = api_client.post(f"/users/{viewer}/role", json={"role": "operator"})
        assert answer.status_code == 204, answer.text
        answer = api_client.post("/tokens", json={"name": unique("t"), "role": "operator"})
        assert answer.status_code == 201, answer.text
    # With the membership of the admin group, the creator may make an admin after all.
    world.grant(GRANT, GROUP_MEMBERSHIP, ["CREATE"], "admin", user=creator)
    with api_as(world, creator) as api_client:
        answer = api_client.post("/users", json={"name": unique("admin"), "role": "admin"})
        assert answer.status_code == 201, answer.text


def test_an_evaluation_answers_without_history_reads(world: World) -> None:
    """CREATE_INSTANCE on the decision is all an evaluation needs; its answer is its own."""
    user = someone(world, [(DECISION_DEFINITION, ["CREATE_INSTANCE"], "dish")])
    with api_as(world, user) as api_client:
        answer = api_client.post("/decisions/dish/evaluate", json={"variables": DISH})
        assert answer.status_code == 200, answer.text
        assert answer.json()["key"] == "dish" and answer.json()["result"], answer.text
        # Reading evaluations back later is history, which they may not read.
        listed = api_client.get("/decision-evaluations", params={"key": "dish"})
        assert listed.status_code == 200, listed.text
        assert listed.json()["items"] == [], listed.text


def _fetch(world: World, surface: Surface, user: str, topic: str, wait_ms: int = 0) -> list[str]:
    """The ids of the tasks `user`'s fetch of `topic` locked (as many as there are), waiting
    up to `wait_ms` for some (a long poll)."""
    base = f"{world.server.url}{surface.value}"
    if surface is Surface.REST:
        path = "/external-task/fetchAndLock"
        body: dict[str, Any] = {
            "workerId": user,
            "maxTasks": 100,
            "topics": [{"topicName": topic, "lockDuration": 60_000}],
            "asyncResponseTimeout": wait_ms,
        }
    else:
        path = "/external-tasks/fetch-and-lock"
        body = {
            "worker_id": user,
            "max_tasks": 100,
            "topics": [{"topic": topic, "lock_duration_ms": 60_000}],
            "timeout_ms": wait_ms,
        }
    if user == "admin":  # the built-in admin, by its token
        client = httpx.Client(base_url=base, headers=world.server.bearer(user), timeout=30)
    else:
        client = httpx.Client(base_url=base, auth=(user, PASSWORD), timeout=30)
    with client:
        answer = client.post(path, json=body)
    assert answer.status_code == 200, answer.text
    tasks = answer.json() if surface is Surface.REST else answer.json()["items"]
    return sorted(task["id"] for task in tasks)


def _open_task(world: World, key: str) -> tuple[str, str]:
    """A fresh instance of `key`: its id and its external task's."""
    engine = world.server.engine
    made = str(engine.start_latest(key).id)
    task = scalar(engine, "SELECT id::text FROM external_task WHERE instance_id = %s", made)
    return made, task


@pytest.mark.parametrize("surface", [Surface.API, Surface.REST])
def test_a_fetch_locks_only_what_it_may_update(world: World, surface: Surface) -> None:
    """Camunda's fetch: only the tasks of instances the worker holds READ and UPDATE on, or
    READ_INSTANCE and UPDATE_INSTANCE on their definition; never refused."""
    engine = world.server.engine
    key = unique("matrix-fetched")
    other = unique("matrix-unfetched")
    engine.deploy(processes.external(key, topic=key))
    engine.deploy(processes.external(other, topic=key))
    (one, one_task), (_, two_task) = _open_task(world, key), _open_task(world, key)
    _, other_task = _open_task(world, other)
    # Reading alone (READ_INSTANCE on every definition, the readers') locks nothing.
    reader = someone(world, [])
    assert _fetch(world, surface, reader, key) == []
    # Nor does a long poll: it waits out its time for tasks it may lock, locking none.
    assert _fetch(world, surface, reader, key, wait_ms=300) == []
    # READ and UPDATE on one instance: its task only.
    on_instance = someone(world, [(PROCESS_INSTANCE, ["READ", "UPDATE"], one)])
    assert _fetch(world, surface, on_instance, key) == [one_task]
    # READ_INSTANCE and UPDATE_INSTANCE on the definition: its tasks, not the other's.
    on_key = someone(world, [(PROCESS_DEFINITION, ["READ_INSTANCE", "UPDATE_INSTANCE"], key)])
    assert _fetch(world, surface, on_key, key) == [two_task]
    # On every definition, but revoked on the other one's key: still not the other's.
    _, three_task = _open_task(world, key)
    _, other_again = _open_task(world, other)
    revoked = someone(world, [(PROCESS_DEFINITION, ["READ_INSTANCE", "UPDATE_INSTANCE"], "*")])
    world.grant(REVOKE, PROCESS_DEFINITION, ["UPDATE_INSTANCE"], other, user=revoked)
    assert _fetch(world, surface, revoked, key) == [three_task]
    locked = scalar(
        engine,
        "SELECT count(*) FROM external_task WHERE id = ANY(%s::uuid[]) AND worker_id IS NOT NULL",
        [other_task, other_again],
    )
    assert locked == 0, "the other definition's tasks stay open"
    # The built-in admin may lock every task: the other definition's too.
    assert _fetch(world, surface, "admin", key) == sorted([other_task, other_again])
