"""Console mutations are for who holds the permissions they need, and only from the console's
own pages: every console POST route refuses a request without the session's CSRF token, a
viewer's request with it, and (for the admin routes) an operator's, and then nothing changes and no
audit entry is written. A viewer's pages draw no mutation control at all."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from starlette.routing import Route

from app.console import routes
from engine.api import Engine
from engine.core import audit
from engine.states import AuditChannel
from tests.api.test_roles import (
    audit_entries,
    claimed,
    dead_letter,
    failed_batch,
    fresh_definition,
    held_batch,
    incident,
    instance_of,
    locked_external,
    review_task,
    session,
    snapshot,
    suspended,
    suspended_batch,
    suspended_definition,
    timer_job,
    unique,
    webhook,
)
from tests.api.test_sessions import Browser
from tests.server import LiveServer

Target = tuple[str, dict[str, Any]]


def _at(path: str, make: Callable[[Engine], str], **data: str) -> Callable[[Engine], Target]:
    return lambda engine: (path.format(make(engine)), {"data": data})


def _waiting(engine: Engine) -> str:
    return instance_of(engine, "waiting")


def _view(engine: Engine) -> str:
    """A saved view of the operator (the owner who could delete it)."""
    from engine.commands.views import SaveView

    return engine.run(SaveView("operator", "instances", unique("view"), "state=Active")).view_id


def _entry(engine: Engine) -> str:
    """An audit entry: an operator suspended an instance."""
    handle = engine.instance(_waiting(engine))
    with audit.acting(audit.Actor("operator", AuditChannel.CONSOLE)):
        handle.suspend()
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT id FROM audit_entry WHERE instance_id = %s", (handle.id,)
        ).fetchone()
    assert row is not None
    return str(row[0])


def _threshold(engine: Engine) -> str:
    """An alert threshold on a node of the straight process."""
    from engine.commands.alerts import SetAlertThreshold

    return engine.run(SetAlertThreshold("straight", "start", "incident", "PT5M")).threshold_id


def _group(engine: Engine) -> str:
    from engine.commands.identity import CreateGroup

    return engine.run(CreateGroup(unique("group"))).id


def _tenant(engine: Engine) -> str:
    from engine.commands.identity_tenants import CreateTenant

    return engine.run(CreateTenant(unique("tenant"))).id


def _rule(engine: Engine) -> str:
    from engine.commands.identity_authorizations import SaveAuthorization
    from engine.db.ids import new_id
    from engine.identity.permissions import AuthorizationType, ResourceType
    from engine.store.identity import AuthorizationRow

    rule = AuthorizationRow(
        new_id(), AuthorizationType.GRANT, None, _group(engine), ResourceType.TASK, "*", 2
    )
    return engine.run(SaveAuthorization(rule, create=True)).id


_RULE_FORM = {"resource": "Task", "type": "grant", "user_id": "viewer", "resource_id": "*"}

CONSOLE: dict[str, Callable[[Engine], Target]] = {
    "/admin/users": lambda e: (
        "/admin/users",
        {"data": {"id": unique("user"), "password": "p" * 12}},
    ),
    "/admin/users/{user_id}/profile": lambda e: (
        "/admin/users/viewer/profile",
        {"data": {"first_name": "Forged"}},
    ),
    "/admin/users/{user_id}/password": lambda e: (
        "/admin/users/viewer/password",
        {"data": {"password": "p" * 12}},
    ),
    "/admin/users/{user_id}/delete": lambda e: ("/admin/users/viewer/delete", {}),
    "/admin/users/{user_id}/groups/add": lambda e: (
        "/admin/users/viewer/groups/add",
        {"data": {"group_id": "admin"}},
    ),
    "/admin/users/{user_id}/groups/remove": lambda e: (
        "/admin/users/viewer/groups/remove",
        {"data": {"group_id": "viewer"}},
    ),
    "/admin/groups": lambda e: ("/admin/groups", {"data": {"id": unique("group")}}),
    "/admin/groups/{group_id}/rename": _at("/admin/groups/{}/rename", _group, name="x"),
    "/admin/groups/{group_id}/delete": _at("/admin/groups/{}/delete", _group),
    "/admin/groups/{group_id}/members/add": lambda e: (
        "/admin/groups/admin/members/add",
        {"data": {"user_id": "viewer"}},
    ),
    "/admin/groups/{group_id}/members/remove": lambda e: (
        "/admin/groups/viewer/members/remove",
        {"data": {"user_id": "viewer"}},
    ),
    "/admin/tenants": lambda e: ("/admin/tenants", {"data": {"id": unique("tenant")}}),
    "/admin/tenants/{tenant_id}/rename": _at("/admin/tenants/{}/rename", _tenant, name="x"),
    "/admin/tenants/{tenant_id}/delete": _at("/admin/tenants/{}/delete", _tenant),
    "/admin/tenants/{tenant_id}/members/add": _at(
        "/admin/tenants/{}/members/add", _tenant, user_id="viewer"
    ),
    "/admin/tenants/{tenant_id}/members/remove": _at(
        "/admin/tenants/{}/members/remove", _tenant, user_id="viewer"
    ),
    "/admin/authorizations": lambda e: (
        "/admin/authorizations",
        {"data": {**_RULE_FORM, "permissions": "READ"}},
    ),
    "/admin/authorizations/{rule_id:uuid}": _at(
        "/admin/authorizations/{}", _rule, **_RULE_FORM, permissions="ALL"
    ),
    "/admin/authorizations/{rule_id:uuid}/delete": _at("/admin/authorizations/{}/delete", _rule),
    "/account/tokens": lambda e: ("/account/tokens", {"data": {"label": unique("t")}}),
    "/account/tokens/{label}/revoke": lambda e: ("/account/tokens/admin-token/revoke", {}),
    "/account/profile": lambda e: ("/account/profile", {"data": {"first_name": "Forged"}}),
    "/account/password": lambda e: (
        "/account/password",
        {"data": {"current": "x", "password": "p" * 12, "repeat": "p" * 12}},
    ),
    "/account/sessions/end-others": lambda e: ("/account/sessions/end-others", {}),
    "/account/sessions/{session_id:uuid}/end": _at("/account/sessions/{}/end", session),
    "/definitions/{key}/start": lambda e: ("/definitions/straight/start", {}),
    "/definitions/{key}/suspend": _at("/definitions/{}/suspend", fresh_definition),
    "/definitions/{key}/activate": _at("/definitions/{}/activate", suspended_definition),
    "/views": lambda e: (
        "/views",
        {"data": {"page": "instances", "name": unique("view"), "query": "state=Active"}},
    ),
    "/views/{view_id:uuid}/delete": _at("/views/{}/delete", _view),
    "/cleanup/start": lambda e: ("/cleanup/start", {}),
    "/sessions/end-others": lambda e: ("/sessions/end-others", {}),
    "/sessions/{session_id:uuid}/end": _at("/sessions/{}/end", session),
    "/webhooks": lambda e: (
        "/webhooks",
        {"data": {"name": unique("hook"), "url": "https://example.com/", "secret": "s" * 16}},
    ),
    "/webhooks/{subscription_id:uuid}": _at("/webhooks/{}", webhook, name="renamed"),
    "/webhooks/{subscription_id:uuid}/delete": _at("/webhooks/{}/delete", webhook),
    "/webhooks/{subscription_id:uuid}/replay": _at("/webhooks/{}/replay", webhook),
    "/webhooks/{subscription_id:uuid}/deliveries/{delivery_id:uuid}/replay": lambda e: (
        dead_letter(e)[0],
        {},
    ),
    "/instances/{instance_id:uuid}/cancel": _at("/instances/{}/cancel", _waiting),
    "/instances/{instance_id:uuid}/suspend": _at("/instances/{}/suspend", _waiting),
    "/instances/{instance_id:uuid}/resume": _at("/instances/{}/resume", suspended),
    "/instances/{instance_id:uuid}/variables": _at(
        "/instances/{}/variables", _waiting, name="x", type="integer", value="1"
    ),
    "/incidents/{incident_id:uuid}/retry": _at("/incidents/{}/retry", incident),
    "/incidents/{incident_id:uuid}/resolve": _at("/incidents/{}/resolve", incident),
    "/jobs/{job_id:uuid}/execute": _at("/jobs/{}/execute", timer_job),
    "/jobs/{job_id:uuid}/retries": _at("/jobs/{}/retries", timer_job, retries="5"),
    "/tasks/{task_id:uuid}/claim": _at("/tasks/{}/claim", review_task),
    "/tasks/{task_id:uuid}/unclaim": _at("/tasks/{}/unclaim", claimed),
    "/tasks/{task_id:uuid}/complete": _at("/tasks/{}/complete", review_task, variables=""),
    "/external-tasks/{task_id:uuid}/retries": _at(
        "/external-tasks/{}/retries", locked_external, retries="3"
    ),
    "/external-tasks/{task_id:uuid}/unlock": _at("/external-tasks/{}/unlock", locked_external),
    "/tasks/{task_id:uuid}/form": _at("/tasks/{}/form", review_task),
    "/audit/{entry_id:uuid}/annotation": _at("/audit/{}/annotation", _entry, annotation="x"),
    "/batches/{batch_id:uuid}/suspend": _at("/batches/{}/suspend", held_batch),
    "/batches/{batch_id:uuid}/resume": _at("/batches/{}/resume", suspended_batch),
    "/batches/{batch_id:uuid}/cancel": _at("/batches/{}/cancel", held_batch),
    "/batches/{batch_id:uuid}/retry": _at("/batches/{}/retry", failed_batch),
    "/incidents/batch": lambda e: ("/incidents/batch", {}),
    "/instances/batch-cancel": lambda e: ("/instances/batch-cancel", {}),
    "/instances/batch-suspend": lambda e: ("/instances/batch-suspend", {}),
    "/instances/batch-resume": lambda e: ("/instances/batch-resume", {}),
    "/instances/batch-set-variables": lambda e: (
        "/instances/batch-set-variables",
        {"data": {"set_name_0": "note", "set_type_0": "string", "set_value_0": "forged"}},
    ),
    "/instances/{instance_id:uuid}/modify": _at(
        "/instances/{}/modify", _waiting, instructions='[{"type": "cancel", "activityId": "wait"}]'
    ),
    "/instances/{instance_id:uuid}/modify/preview": _at(
        "/instances/{}/modify/preview",
        _waiting,
        instructions='[{"type": "cancel", "activityId": "wait"}]',
    ),
    "/definitions/{key}/migrate/validate": lambda e: ("/definitions/straight/migrate/validate", {}),
    "/definitions/{key}/migrate/run": lambda e: ("/definitions/straight/migrate/run", {}),
    "/definitions/{key}/migrate/batch": lambda e: ("/definitions/straight/migrate/batch", {}),
    "/definitions/{key}/alerts": lambda e: (
        "/definitions/straight/alerts",
        {"data": {"node_id": "end", "kind": "waiting", "duration": "PT1H"}},
    ),
    "/alerts/thresholds/{threshold_id:uuid}/delete": _at(
        "/alerts/thresholds/{}/delete", _threshold
    ),
}
# Routes only an admin may use; the others need an operator (replaying dead letters included).
ADMIN_ONLY = {
    path
    for path in CONSOLE
    if path.startswith(
        (
            "/webhooks",
            "/sessions",
            "/definitions/{key}/migrate",
            "/definitions/{key}/suspend",
            "/definitions/{key}/activate",
            "/admin",
        )
    )
    and not path.endswith("/replay")
}
# Routes every signed-in user may use for their own account (their own API tokens included): a
# forged request is refused, a viewer's own is not (the Account page's tests show what it does).
OWN_ACCOUNT = {path for path in CONSOLE if path.startswith("/account/") and path not in ADMIN_ONLY}


def console_posts() -> set[str]:
    return {
        route.path
        for route in routes
        if isinstance(route, Route) and "POST" in (route.methods or ())
    }


def test_every_console_mutation_route_is_covered() -> None:
    assert set(CONSOLE) == console_posts()


@pytest.fixture(scope="module")
def browsers(api: LiveServer) -> Iterator[dict[str, Browser]]:
    made = {name: Browser(api.url, name) for name in ("viewer", "operator")}
    yield made
    for browser in made.values():
        browser.close()


def refused(api: LiveServer, target: Target, send: Callable[[str, dict[str, Any]], Any]) -> Any:
    """Send the request at `target`; nothing may change and no entry may be written."""
    path, request = target
    before, entries = snapshot(api.engine, target), audit_entries(api.engine)
    response = send(path, request)
    assert snapshot(api.engine, target) == before
    assert audit_entries(api.engine) == entries
    return response


@pytest.mark.parametrize("route", sorted(CONSOLE))
def test_a_forged_console_mutation_is_refused_and_writes_nothing(
    route: str, api: LiveServer, browsers: dict[str, Browser]
) -> None:
    operator, viewer = browsers["operator"], browsers["viewer"]
    # Without the CSRF token (a form another site submits with the operator's cookie).
    target = CONSOLE[route](api.engine)
    forged = refused(
        api,
        target,
        lambda path, request: operator.client.post(path, **request, follow_redirects=False),
    )
    assert forged.status_code == 403, forged.text
    assert forged.json()["type"] == "Forbidden"
    if route in OWN_ACCOUNT:
        return
    # A viewer's own session, with its token: the permission it lacks refuses it, named.
    target = CONSOLE[route](api.engine)
    answer = refused(api, target, lambda path, request: viewer.post(path, **request))
    assert answer.status_code == 403, answer.text
    assert re.search(r"Not allowed|permission", answer.text), answer.text
    if route in ADMIN_ONLY:
        target = CONSOLE[route](api.engine)
        answer = refused(api, target, lambda path, request: operator.post(path, **request))
        assert answer.status_code == 403, answer.text


def _main(html: str) -> str:
    found = re.search(r"<main\b.*</main>", html, re.S)
    assert found
    return found.group(0)


CONTROLS = re.compile(
    r'hx-post=|data-bulk-retry|data-batch-action|data-select\b|<form[^>]*method="post"', re.I
)


def test_a_viewer_sees_no_mutation_control(api: LiveServer, browsers: dict[str, Browser]) -> None:
    engine = api.engine
    with_incident = engine.incident(incident(engine)).instance_id
    with_task = engine.user_task(review_task(engine)).instance_id
    with_job = engine.job(timer_job(engine)).instance_id
    pages = [
        *(f"/instances/{i}" for i in (with_incident, with_task, with_job)),
        *(f"/instances/{with_task}/panel/{name}" for name in ("user_tasks", "variables")),
        f"/instances/{with_incident}/panel/incidents",
        f"/instances/{with_job}/panel/jobs",
        "/incidents",
        "/instances",
        "/tasks",
        "/definitions/review",
    ]
    for path in pages:
        seen = browsers["operator"].get(path)
        assert seen.status_code == 200, path
        assert CONTROLS.search(seen.text), path  # the operator's page has controls to hide
        shown = browsers["viewer"].get(path)
        assert shown.status_code == 200, path
        text = shown.text if "/panel/" in path else _main(shown.text)
        assert not CONTROLS.search(text), (path, CONTROLS.search(text))
