"""The audit log through the real server: each kind of operator mutation, sent through the
console, /api/v1 and /engine-rest, leaves exactly one audit entry naming who (the caller),
where (the channel), what (operation and entity) and on which instance; worker and client
traffic (starting instances, fetching and reporting external tasks) leaves none; a refused
mutation leaves none (the entry rolls back with it)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID, uuid4

import httpx
import pytest

from engine.api import Engine
from engine.core import audit
from engine.states import AuditChannel
from tests.api import identity_scenarios, processes
from tests.api.test_roles import (
    SCENARIOS,
    Call,
    claimed,
    evaluation,
    fresh_definition,
    incident,
    instance_of,
    locked_external,
    review_task,
    session,
    suspended,
    suspended_definition,
    timer_job,
    unique,
    webhook,
)
from tests.api.test_sessions import Browser
from tests.server import PASSWORD, LiveServer

Row = tuple[Any, ...]
# (operation, entity, whether the entry names an instance); None: not audited.
Expected = tuple[str, str, bool] | None


def entry_ids(engine: Engine) -> set[UUID]:
    with engine.connection() as conn:
        return {row[0] for row in conn.execute("SELECT id FROM audit_entry").fetchall()}


def new_entries(engine: Engine, before: set[UUID]) -> list[Row]:
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT id, user_id, channel, operation, entity, instance_id FROM audit_entry "
            "ORDER BY at, id"
        ).fetchall()
    return [tuple(row[1:]) for row in rows if row[0] not in before]


def check(
    engine: Engine,
    send: Callable[[], httpx.Response],
    expected: Expected,
    user: str,
    channel: str,
    instance: str | None = None,
) -> None:
    before = entry_ids(engine)
    response = send()
    assert response.status_code in (200, 201, 204, 303), response.text
    found = new_entries(engine, before)
    if expected is None:
        assert found == []
        return
    operation, entity, on_instance = expected
    assert len(found) == 1, found
    [(who, via, did, what, instance_id)] = found
    assert (who, via, did, what) == (user, channel, operation, entity)
    assert (instance_id is not None) == on_instance
    if instance is not None:
        assert str(instance_id) == instance


# -- /api/v1: every mutation route of the role matrix ------------------------------------------

API_EXPECTED: dict[tuple[str, str], Expected] = {
    ("POST", "/deployments"): ("Create", "Deployment", False),
    ("POST", "/definitions/key/{key}/start"): None,
    ("POST", "/definitions/key/{key}/versions/{version:int}/start"): None,
    ("POST", "/definitions/{id}/start"): None,
    ("POST", "/definitions/{id}/suspend"): ("Suspend", "ProcessDefinition", False),
    ("POST", "/definitions/{id}/activate"): ("Activate", "ProcessDefinition", False),
    ("POST", "/definitions/key/{key}/suspend"): ("Suspend", "ProcessDefinition", False),
    ("POST", "/definitions/key/{key}/activate"): ("Activate", "ProcessDefinition", False),
    ("POST", "/instances/{id}/variables"): ("SetVariable", "Variable", True),
    ("POST", "/instances/{id}/cancel"): ("Delete", "ProcessInstance", True),
    ("POST", "/instances/{id}/suspend"): ("Suspend", "ProcessInstance", True),
    ("POST", "/instances/{id}/resume"): ("Activate", "ProcessInstance", True),
    ("POST", "/user-tasks/{id}/complete"): ("Complete", "Task", True),
    ("POST", "/user-tasks/{id}/claim"): ("Claim", "Task", True),
    ("POST", "/user-tasks/{id}/unclaim"): ("Claim", "Task", True),
    ("POST", "/user-tasks/{id}/assignee"): ("Assign", "Task", True),
    ("POST", "/decisions/{key}/evaluate"): None,
    ("POST", "/external-tasks/fetch-and-lock"): None,
    ("POST", "/external-tasks/{id}/complete"): None,
    ("POST", "/external-tasks/{id}/failure"): None,
    ("POST", "/external-tasks/{id}/bpmn-error"): None,
    ("POST", "/external-tasks/{id}/extend-lock"): None,
    ("POST", "/external-tasks/{id}/unlock"): ("Unlock", "ExternalTask", True),
    ("POST", "/external-tasks/{id}/retries"): ("SetExternalTaskRetries", "ExternalTask", True),
    ("POST", "/messages"): ("CorrelateMessage", "ProcessInstance", True),
    ("POST", "/signals"): ("CorrelateMessage", "ProcessInstance", True),
    ("POST", "/incidents/{id}/retry"): ("Retry", "Incident", True),
    ("POST", "/incidents/{id}/resolve"): ("Resolve", "Incident", True),
    ("POST", "/incidents/{id}/retries"): ("SetExternalTaskRetries", "ExternalTask", True),
    ("POST", "/jobs/{id}/execute"): ("Execute", "Job", True),
    ("POST", "/jobs/{id}/retries"): ("SetJobRetries", "Job", True),
    ("POST", "/users"): ("Create", "User", False),
    ("DELETE", "/users/{name}"): ("Delete", "User", False),
    ("POST", "/users/{name}/password"): ("Update", "User", False),
    ("POST", "/users/{name}/role"): ("Update", "User", False),
    ("POST", "/tokens/{name}/role"): ("Update", "ApiToken", False),
    ("POST", "/tokens"): ("Create", "ApiToken", False),
    ("DELETE", "/tokens/{name}"): ("Delete", "ApiToken", False),
    ("DELETE", "/users/{name}/sessions"): ("Update", "User", False),
    ("DELETE", "/sessions/{id}"): ("Update", "User", False),
    ("POST", "/webhooks"): ("Create", "Configuration", False),
    ("POST", "/webhooks/{id}"): ("Update", "Configuration", False),
    ("DELETE", "/webhooks/{id}"): ("Delete", "Configuration", False),
    ("POST", "/webhooks/{id}/replay"): ("Update", "Configuration", False),
    ("POST", "/webhooks/{id}/deliveries/{delivery_id}/replay"): ("Update", "Configuration", False),
    ("POST", "/batches"): ("CreateBatch", "Batch", False),
    ("POST", "/batches/{id}/cancel"): ("Delete", "Batch", False),
    ("POST", "/batches/{id}/suspend"): ("Suspend", "Batch", False),
    ("POST", "/batches/{id}/resume"): ("Activate", "Batch", False),
    ("POST", "/batches/{id}/retry"): ("RetryBatch", "Batch", False),
    **identity_scenarios.EXPECTED,
}
# The batches of the matrix's own scenarios are created by nobody: their items write no entry.
# One created here is the caller's, and its items run as the caller: an item that fails (an
# incident that does not exist) writes none, so no entry of it lands in a later check.
API_SCENARIOS: dict[tuple[str, str], Callable[[Engine], Call]] = {
    **SCENARIOS,
    ("POST", "/batches"): lambda e: (
        "/batches",
        {"json": {"type": "retry-incidents", "items": [str(uuid4())]}},
    ),
}


def test_every_mutation_route_of_the_matrix_is_listed() -> None:
    assert set(API_EXPECTED) == set(SCENARIOS)


@pytest.mark.parametrize("route", sorted(API_EXPECTED), ids=" ".join)
def test_api_mutation_leaves_one_entry(
    route: tuple[str, str], api: LiveServer, admin: httpx.Client
) -> None:
    method, _ = route
    if route == ("POST", "/signals"):
        api.engine.signal("ping")  # the scenario's instance is then the only one
    path, request = API_SCENARIOS[route](api.engine)
    instance = path.split("/")[2] if path.startswith("/instances/") else None
    check(
        api.engine,
        lambda: admin.request(method, path, **request),
        API_EXPECTED[route],
        "admin-token",
        "api",
        instance,
    )


# -- /engine-rest ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rest(api: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=f"{api.url}/engine-rest", auth=("operator", PASSWORD), timeout=30
    ) as client:
        yield client


RestCall = tuple[str, str, dict[str, Any], str | None]


def _instance(engine: Engine, key: str = "waiting") -> str:
    return instance_of(engine, key)


def _task_instance(engine: Engine, task_id: str) -> str:
    return str(engine.user_task(task_id).instance_id)


def _external_instance(engine: Engine, task_id: str) -> str:
    return str(engine.external_task(task_id).instance_id)


def rest_suspend(e: Engine) -> RestCall:
    i = _instance(e)
    return "PUT", f"/process-instance/{i}/suspended", {"json": {"suspended": True}}, i


def rest_activate(e: Engine) -> RestCall:
    i = suspended(e)
    body = {"suspended": False, "processInstanceIds": [i]}
    return "PUT", "/process-instance/suspended", {"json": body}, i


def rest_delete(e: Engine) -> RestCall:
    i = _instance(e)
    return "DELETE", f"/process-instance/{i}", {}, i


def rest_put_variable(e: Engine) -> RestCall:
    i = _instance(e)
    body = {"value": 5, "type": "Integer"}
    return "PUT", f"/process-instance/{i}/variables/amount", {"json": body}, i


def rest_modify_variables(e: Engine) -> RestCall:
    i = _instance(e)
    e.instance(i).set_variables({"old": 1, "gone": 2})
    body = {"modifications": {"old": {"value": 3}, "new": {"value": "x"}}, "deletions": ["gone"]}
    return "POST", f"/process-instance/{i}/variables", {"json": body}, i


def rest_delete_variable(e: Engine) -> RestCall:
    i = _instance(e)
    e.instance(i).set_variables({"gone": 2})
    return "DELETE", f"/process-instance/{i}/variables/gone", {}, i


def rest_job_retries(e: Engine) -> RestCall:
    job = timer_job(e)
    return "PUT", f"/job/{job}/retries", {"json": {"retries": 4}}, str(e.job(job).instance_id)


def rest_job_execute(e: Engine) -> RestCall:
    job = timer_job(e)
    return "POST", f"/job/{job}/execute", {}, str(e.job(job).instance_id)


def rest_external_retries(e: Engine) -> RestCall:
    task = locked_external(e)
    body = {"json": {"retries": 2}}
    return "PUT", f"/external-task/{task}/retries", body, _external_instance(e, task)


def rest_unlock(e: Engine) -> RestCall:
    task = locked_external(e)
    return "POST", f"/external-task/{task}/unlock", {}, _external_instance(e, task)


def rest_claim(e: Engine) -> RestCall:
    task = review_task(e)
    return "POST", f"/task/{task}/claim", {"json": {"userId": "ann"}}, _task_instance(e, task)


def rest_unclaim(e: Engine) -> RestCall:
    task = claimed(e)
    return "POST", f"/task/{task}/unclaim", {"json": {}}, _task_instance(e, task)


def rest_assignee(e: Engine) -> RestCall:
    task = review_task(e)
    body = {"json": {"userId": "bob"}}
    return "POST", f"/task/{task}/assignee", body, _task_instance(e, task)


def rest_complete(e: Engine) -> RestCall:
    task = review_task(e)
    return "POST", f"/task/{task}/complete", {"json": {}}, _task_instance(e, task)


def rest_submit_form(e: Engine) -> RestCall:
    task = review_task(e)
    return "POST", f"/task/{task}/submit-form", {"json": {}}, _task_instance(e, task)


def rest_task_variables(e: Engine) -> RestCall:
    task = review_task(e)
    body = {"json": {"modifications": {"note": {"value": "checked"}}}}
    return "POST", f"/task/{task}/variables", body, _task_instance(e, task)


def rest_message(e: Engine) -> RestCall:
    key = unique("order")
    i = str(e.start_latest("paid", business_key=key).id)
    return "POST", "/message", {"json": {"messageName": "paid", "businessKey": key}}, i


def rest_cleanup(e: Engine) -> RestCall:
    return "POST", "/history/cleanup", {}, None


def rest_start(e: Engine) -> RestCall:
    return "POST", "/process-definition/key/straight/start", {"json": {}}, None


def rest_evaluate(e: Engine) -> RestCall:
    _, request = evaluation(e)
    variables = {name: {"value": value} for name, value in request["json"]["variables"].items()}
    body = {"json": {"variables": variables}}
    return "POST", "/decision-definition/key/dish/evaluate", body, None


def rest_fetch(e: Engine) -> RestCall:
    topic = unique("rest-fetch")
    e.deploy(processes.external(key=topic, topic=topic))
    e.start_latest(topic)
    body = {"workerId": "w", "maxTasks": 1, "topics": [{"topicName": topic, "lockDuration": 1000}]}
    return "POST", "/external-task/fetchAndLock", {"json": body}, None


def rest_worker_complete(e: Engine) -> RestCall:
    task = locked_external(e)
    return "POST", f"/external-task/{task}/complete", {"json": {"workerId": "w"}}, None


REST: dict[str, tuple[Callable[[Engine], RestCall], Expected]] = {
    "delete instance": (rest_delete, ("Delete", "ProcessInstance", True)),
    "put variable": (rest_put_variable, ("SetVariable", "Variable", True)),
    "modify variables": (rest_modify_variables, ("ModifyVariable", "Variable", True)),
    "delete variable": (rest_delete_variable, ("RemoveVariable", "Variable", True)),
    "job retries": (rest_job_retries, ("SetJobRetries", "Job", True)),
    "job execute": (rest_job_execute, ("Execute", "Job", True)),
    "external task retries": (
        rest_external_retries,
        ("SetExternalTaskRetries", "ExternalTask", True),
    ),
    "unlock": (rest_unlock, ("Unlock", "ExternalTask", True)),
    "claim": (rest_claim, ("Claim", "Task", True)),
    "unclaim": (rest_unclaim, ("Claim", "Task", True)),
    "assignee": (rest_assignee, ("Assign", "Task", True)),
    "complete": (rest_complete, ("Complete", "Task", True)),
    "submit form": (rest_submit_form, ("Complete", "Task", True)),
    "task variables": (rest_task_variables, ("SetVariable", "Variable", True)),
    "message": (rest_message, ("CorrelateMessage", "ProcessInstance", True)),
    "history cleanup": (rest_cleanup, ("CleanupHistory", "ProcessInstanceHistory", False)),
    "suspend an instance": (rest_suspend, ("Suspend", "ProcessInstance", True)),
    "activate instances": (rest_activate, ("Activate", "ProcessInstance", True)),
    "start (client traffic)": (rest_start, None),
    "evaluate a decision (client traffic)": (rest_evaluate, None),
    "fetch and lock (worker traffic)": (rest_fetch, None),
    "worker's completion (worker traffic)": (rest_worker_complete, None),
}


@pytest.mark.parametrize("name", list(REST))
def test_engine_rest_mutation_leaves_one_entry(
    name: str, api: LiveServer, rest: httpx.Client
) -> None:
    make, expected = REST[name]
    method, path, request, instance = make(api.engine)
    check(
        api.engine,
        lambda: rest.request(method, path, **request),
        expected,
        "operator",
        "engine-rest",
        instance,
    )


def test_engine_rest_deployment_is_audited_as_the_admin(api: LiveServer) -> None:
    source = processes.xml(processes.straight(unique("rest-deployed"))).encode()
    with httpx.Client(base_url=f"{api.url}/engine-rest", auth=("admin", PASSWORD)) as client:
        check(
            api.engine,
            lambda: client.post(
                "/deployment/create",
                data={"deployment-name": "audited"},
                files=[("data", ("p.bpmn", source, "application/octet-stream"))],
            ),
            ("Create", "Deployment", False),
            "admin",
            "engine-rest",
        )


# -- the console --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def console(api: LiveServer) -> Iterator[Callable[[str], Browser]]:
    made: dict[str, Browser] = {}

    def browser(name: str) -> Browser:
        if name not in made:
            made[name] = Browser(api.url, name)
        return made[name]

    yield browser
    for opened in made.values():
        opened.close()


ConsoleCall = tuple[str, dict[str, Any], str | None]


def _on_instance(path: str, make: Callable[[Engine], str]) -> Callable[[Engine], ConsoleCall]:
    def call(e: Engine) -> ConsoleCall:
        i = make(e)
        return path.format(i), {}, i

    return call


def _on_task(path: str, make: Callable[[Engine], str], **data: str) -> Callable[..., ConsoleCall]:
    def call(e: Engine) -> ConsoleCall:
        task = make(e)
        return path.format(task), {"data": data}, _task_instance(e, task)

    return call


def _on_external(path: str, **data: str) -> Callable[[Engine], ConsoleCall]:
    def call(e: Engine) -> ConsoleCall:
        task = locked_external(e)
        return path.format(task), {"data": data}, _external_instance(e, task)

    return call


def _on_incident(path: str) -> Callable[[Engine], ConsoleCall]:
    def call(e: Engine) -> ConsoleCall:
        found = incident(e)
        return path.format(found), {}, str(e.incident(found).instance_id)

    return call


def _on_job(path: str, **data: str) -> Callable[[Engine], ConsoleCall]:
    def call(e: Engine) -> ConsoleCall:
        job = timer_job(e)
        return path.format(job), {"data": data}, str(e.job(job).instance_id)

    return call


def console_variable(e: Engine) -> ConsoleCall:
    i = _instance(e)
    e.instance(i).set_variables({"amount": 1})
    data = {"name": "amount", "type": "integer", "value": "2"}
    return f"/instances/{i}/variables", {"data": data}, i


def console_view(e: Engine) -> ConsoleCall:
    data = {"page": "instances", "name": unique("view"), "query": "state=Active"}
    return "/views", {"data": data}, None


def console_webhook(e: Engine) -> ConsoleCall:
    data = {"name": unique("hook"), "url": "https://example.com/hook", "secret": "s" * 16}
    return "/webhooks", {"data": data}, None


def console_webhook_update(e: Engine) -> ConsoleCall:
    hook = webhook(e)
    data = {"name": unique("renamed"), "url": "http://127.0.0.1:9/"}
    return f"/webhooks/{hook}", {"data": data}, None


def console_annotation(e: Engine) -> ConsoleCall:
    handle = e.instance(_instance(e))
    with audit.acting(audit.Actor("ann", AuditChannel.API)):
        handle.suspend()
    with e.connection() as conn:
        row = conn.execute("SELECT id FROM audit_entry WHERE instance_id = %s", (handle.id,))
        [(entry_id,)] = row.fetchall()
    return f"/audit/{entry_id}/annotation", {"data": {"annotation": "a ticket"}}, str(handle.id)


CONSOLE: dict[str, tuple[str, Callable[[Engine], ConsoleCall], Expected]] = {
    "cancel": (
        "operator",
        _on_instance("/instances/{}/cancel", _instance),
        ("Delete", "ProcessInstance", True),
    ),
    "suspend": (
        "operator",
        _on_instance("/instances/{}/suspend", _instance),
        ("Suspend", "ProcessInstance", True),
    ),
    "resume": (
        "operator",
        _on_instance("/instances/{}/resume", suspended),
        ("Activate", "ProcessInstance", True),
    ),
    "variable": ("operator", console_variable, ("ModifyVariable", "Variable", True)),
    "retry": ("operator", _on_incident("/incidents/{}/retry"), ("Retry", "Incident", True)),
    "resolve": ("operator", _on_incident("/incidents/{}/resolve"), ("Resolve", "Incident", True)),
    "execute job": ("operator", _on_job("/jobs/{}/execute"), ("Execute", "Job", True)),
    "job retries": (
        "operator",
        _on_job("/jobs/{}/retries", retries="3"),
        ("SetJobRetries", "Job", True),
    ),
    "claim": ("operator", _on_task("/tasks/{}/claim", review_task), ("Claim", "Task", True)),
    "unclaim": ("operator", _on_task("/tasks/{}/unclaim", claimed), ("Claim", "Task", True)),
    "complete": (
        "operator",
        _on_task("/tasks/{}/complete", review_task, variables=""),
        ("Complete", "Task", True),
    ),
    "external retries": (
        "operator",
        _on_external("/external-tasks/{}/retries", retries="2"),
        ("SetExternalTaskRetries", "ExternalTask", True),
    ),
    "unlock": (
        "operator",
        _on_external("/external-tasks/{}/unlock"),
        ("Unlock", "ExternalTask", True),
    ),
    "history cleanup": (
        "operator",
        lambda e: ("/cleanup/start", {}, None),
        ("CleanupHistory", "ProcessInstanceHistory", False),
    ),
    "save view": ("operator", console_view, ("Create", "Configuration", False)),
    "create webhook": ("admin", console_webhook, ("Create", "Configuration", False)),
    "update webhook": ("admin", console_webhook_update, ("Update", "Configuration", False)),
    "delete webhook": (
        "admin",
        lambda e: (f"/webhooks/{webhook(e)}/delete", {}, None),
        ("Delete", "Configuration", False),
    ),
    "end a session": (
        "admin",
        lambda e: (f"/sessions/{session(e)}/end", {}, None),
        ("Update", "User", False),
    ),
    "annotate an entry": (
        "operator",
        console_annotation,
        ("SetAnnotation", "ProcessInstance", True),
    ),
    "suspend a definition": (
        "admin",
        lambda e: (f"/definitions/{fresh_definition(e)}/suspend", {}, None),
        ("Suspend", "ProcessDefinition", False),
    ),
    "activate a definition": (
        "admin",
        lambda e: (f"/definitions/{suspended_definition(e)}/activate", {}, None),
        ("Activate", "ProcessDefinition", False),
    ),
    "start (client traffic)": (
        "operator",
        lambda e: ("/definitions/straight/start", {}, None),
        None,
    ),
}


@pytest.mark.parametrize("name", list(CONSOLE))
def test_console_mutation_leaves_one_entry(
    name: str, api: LiveServer, console: Callable[[str], Browser]
) -> None:
    user, make, expected = CONSOLE[name]
    path, request, instance = make(api.engine)
    browser = console(user)
    check(api.engine, lambda: browser.post(path, **request), expected, user, "console", instance)


def test_a_refused_mutation_leaves_no_entry(
    api: LiveServer, admin: httpx.Client, rest: httpx.Client
) -> None:
    found = incident(api.engine)
    assert admin.post(f"/incidents/{found}/retry").status_code == 200
    before = entry_ids(api.engine)
    again = admin.post(f"/incidents/{found}/retry")  # retried already: refused, nothing written
    assert again.status_code == 409, again.text
    i = _instance(api.engine)
    # Valid first, invalid second: the whole command is refused, the first not written either.
    bad = {"modifications": {"fine": {"value": 1}, "bad": {"value": "x", "type": "Integer"}}}
    refused = rest.post(f"/process-instance/{i}/variables", json=bad)
    assert refused.status_code == 400, refused.text
    assert "fine" not in api.engine.instance(i).variables()
    assert new_entries(api.engine, before) == []


# -- reading the log ----------------------------------------------------------------------------


def audit_rows(html: str) -> list[tuple[str, str]]:
    """(entry id, operation) of each row the audit page shows, in order."""
    return re.findall(
        r'<tr data-audit="([^"]+)">\s*<td>[^<]*</td>\s*<td>[^<]*</td>\s*'
        r"<td>[^<]*</td>\s*<td>([^<]*)</td>",
        html,
    )


def test_the_audit_page_lists_entries_newest_first_and_filters_them(
    api: LiveServer, console: Callable[[str], Browser]
) -> None:
    operator = console("operator")
    i = _instance(api.engine)
    for action in ("suspend", "resume"):
        assert operator.post(f"/instances/{i}/{action}").status_code == 200
    page = operator.get(f"/audit?instance={i}")
    assert page.status_code == 200
    assert [operation for _, operation in audit_rows(page.text)] == ["Activate", "Suspend"]
    only = operator.get(f"/audit?fragment=rows&instance={i}&operation=Suspend&user=operator")
    assert [operation for _, operation in audit_rows(only.text)] == ["Suspend"]
    nobody = operator.get(f"/audit?fragment=rows&instance={i}&user=admin")
    assert audit_rows(nobody.text) == []
    later = operator.get(f"/audit?fragment=rows&instance={i}&from=2999-01-01T00:00")
    assert audit_rows(later.text) == []
    refused = operator.get("/audit?fragment=rows&operation=Nothing")
    assert refused.status_code == 400
    assert "query parameter &#39;operation&#39;" in refused.text
    assert console("viewer").get("/audit").status_code == 403
    assert 'href="/audit"' in operator.get("/").text
    assert 'href="/audit"' not in console("viewer").get("/").text


def test_the_audit_page_pages_by_100(api: LiveServer, console: Callable[[str], Browser]) -> None:
    handle = api.engine.instance(_instance(api.engine))
    with audit.acting(audit.Actor("pager", AuditChannel.API)):
        for n in range(101):
            handle.set_variables({"n": n})
    operator = console("operator")
    first = operator.get("/audit?user=pager")
    shown = audit_rows(first.text)
    assert len(shown) == 100
    found = re.search(r'<a rel="next" href="([^"]+)"', first.text)
    assert found
    rest = audit_rows(operator.get(html.unescape(found.group(1))).text)
    assert len(rest) == 1
    assert rest[0] not in shown


def test_the_inspector_timeline_shows_who_did_what(
    api: LiveServer, console: Callable[[str], Browser]
) -> None:
    i = _instance(api.engine)
    operator = console("operator")
    assert operator.post(f"/instances/{i}/suspend").status_code == 200
    assert operator.post(f"/instances/{i}/resume").status_code == 200
    with audit.acting(audit.Actor("operator", AuditChannel.CONSOLE)):
        api.engine.instance(i).set_variables({"note": "seen-by-operators-only"})
    panels = {}
    for reader in ("operator", "viewer"):
        panel = console(reader).get(f"/instances/{i}/panel/history")
        assert panel.status_code == 200
        entries = re.findall(
            r'<li class="audit-entry".*?<strong>([^<]+)</strong>', panel.text, re.S
        )
        assert entries == ["Suspend", "Activate", "SetVariable"]
        assert panel.text.count("by operator (console)") == 3
        # After the visits of the start event and the split, where the instance then waits.
        assert panel.text.index('data-node="split"') < panel.text.index('class="audit-entry"')
        panels[reader] = panel.text
    # Who did what and when for everyone; the values only for those who can operate.
    assert "seen-by-operators-only" in panels["operator"]
    assert "seen-by-operators-only" not in panels["viewer"]


def test_the_api_lists_the_log(
    api: LiveServer, operator: httpx.Client, viewer: httpx.Client
) -> None:
    i = _instance(api.engine)
    for action in ("suspend", "resume"):
        assert operator.post(f"/instances/{i}/{action}").status_code == 200
    page = operator.get("/audit", params={"instance_id": i})
    assert page.status_code == 200
    body = page.json()
    assert [(e["operation"], e["user"], e["channel"]) for e in body["items"]] == [
        ("Activate", "operator-token", "api"),
        ("Suspend", "operator-token", "api"),
    ]
    assert body["items"][1]["before"] == "Active" and body["items"][1]["after"] == "Suspended"
    one = operator.get("/audit", params={"instance_id": i, "limit": 1}).json()
    assert len(one["items"]) == 1 and one["next"]
    rest = operator.get("/audit", params={"instance_id": i, "after": one["next"]}).json()
    assert [e["operation"] for e in rest["items"]] == ["Suspend"] and rest["next"] is None
    only = operator.get("/audit", params={"instance_id": i, "operation": "Suspend,Delete"})
    assert [e["operation"] for e in only.json()["items"]] == ["Suspend"]
    refused = operator.get("/audit", params={"entity": "Nothing"})
    assert refused.status_code == 400 and "entity" in refused.text
    assert viewer.get("/audit").status_code == 403
