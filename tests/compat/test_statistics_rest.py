"""Camunda 7.24's statistics over /engine-rest against the real server: per process definition
(`GET /process-definition/statistics`), per activity (`GET /process-definition/{id}/statistics`),
the history per activity (`GET /history/process-definition/{id}/statistics`) and the
definitions a definition's call activities name (`.../static-called-process-definitions`).

The answers' fields are pinned from Camunda's REST reference; every number is compared with a
recount from the instance, token, job, incident and visit rows made here in the test. The server
runs no job executor, so the jobs stay where the test leaves them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.compat.conftest import deploy, start
from tests.compat.processes import HEADER
from tests.server import PASSWORD, LiveServer, live_server

# Camunda's ProcessDefinitionDto, from the reference.
DEFINITION = {
    "id", "key", "category", "description", "name", "version", "resource", "deploymentId",
    "diagram", "suspended", "tenantId", "versionTag", "historyTimeToLive", "startableInTasklist",
}  # fmt: skip
# ProcessDefinitionStatisticsResultDto and ActivityStatisticsResultDto, from the reference.
DEFINITION_STATISTICS = {"@class", "id", "instances", "failedJobs", "incidents", "definition"}
ACTIVITY_STATISTICS = {"@class", "id", "instances", "failedJobs", "incidents"}
DTO = "org.camunda.bpm.engine.rest.dto.repository."
# HistoricActivityStatisticsDto, from the reference.
HISTORIC_STATISTICS = {
    "id", "instances", "canceled", "finished", "completeScope", "openIncidents",
    "resolvedIncidents", "deletedIncidents",
}  # fmt: skip

# start -> split -> a user task, an external task (topic stats-charge), a one-hour timer ->
# join -> end.
WORK = (
    HEADER.format(key="stats") + '  <bpmn:process id="stats" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:parallelGateway id="Split" />\n'
    '    <bpmn:userTask id="Review" />\n'
    '    <bpmn:serviceTask id="Charge" camunda:type="external" camunda:topic="stats-charge" />\n'
    '    <bpmn:intermediateCatchEvent id="Wait">\n'
    "      <bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration>"
    "</bpmn:timerEventDefinition>\n"
    "    </bpmn:intermediateCatchEvent>\n"
    '    <bpmn:parallelGateway id="Join" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Split" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="Split" targetRef="Review" />\n'
    '    <bpmn:sequenceFlow id="f3" sourceRef="Split" targetRef="Charge" />\n'
    '    <bpmn:sequenceFlow id="f4" sourceRef="Split" targetRef="Wait" />\n'
    '    <bpmn:sequenceFlow id="f5" sourceRef="Review" targetRef="Join" />\n'
    '    <bpmn:sequenceFlow id="f6" sourceRef="Charge" targetRef="Join" />\n'
    '    <bpmn:sequenceFlow id="f7" sourceRef="Wait" targetRef="Join" />\n'
    '    <bpmn:sequenceFlow id="f8" sourceRef="Join" targetRef="End" />\n'
    "  </bpmn:process>\n</bpmn:definitions>\n"
)

# Three call activities: of `stats` twice by its key, and of a key from a variable.
CALLER = (
    HEADER.format(key="stats-caller") + '  <bpmn:process id="stats-caller" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:callActivity id="CallB" calledElement="stats" />\n'
    '    <bpmn:callActivity id="CallA" calledElement="stats" />\n'
    '    <bpmn:callActivity id="CallDynamic" calledElement="${target}" />\n'
    '    <bpmn:callActivity id="CallMissing" calledElement="not-deployed" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="CallB" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="CallB" targetRef="CallA" />\n'
    '    <bpmn:sequenceFlow id="f3" sourceRef="CallA" targetRef="CallDynamic" />\n'
    '    <bpmn:sequenceFlow id="f4" sourceRef="CallDynamic" targetRef="CallMissing" />\n'
    '    <bpmn:sequenceFlow id="f5" sourceRef="CallMissing" targetRef="End" />\n'
    "  </bpmn:process>\n</bpmn:definitions>\n"
)


@pytest.fixture
def server(database_url: str) -> Iterator[LiveServer]:
    """A server without a job executor (conftest's `rest` and `operator` call it)."""
    with live_server(database_url, run_jobs=False) as running:
        yield running


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _definition_id(deployment: dict[str, Any]) -> str:
    [definition] = deployment["deployedProcessDefinitions"].values()
    identifier: str = definition["id"]
    return identifier


def _rows(server: LiveServer, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with server.engine.connection() as conn:
        return [tuple(row) for row in conn.execute(statement, params).fetchall()]


def _stage(server: LiveServer, rest: httpx.Client) -> str:
    """Four instances of `stats`: one whose external task failed for good (an incident), one
    whose timer job has no retries left, one whose user task is done, one deleted. Returns the
    definition's id."""
    definition_id = _definition_id(deploy(rest, ("stats.bpmn", WORK)))
    failing, no_retries, reviewed, deleted = (start(rest, "stats")["id"] for _ in range(4))
    fetched = _ok(
        rest.post(
            "/external-task/fetchAndLock",
            json={
                "workerId": "w1",
                "maxTasks": 10,
                "topics": [{"topicName": "stats-charge", "lockDuration": 60000}],
            },
        )
    )
    [task] = [t for t in fetched if t["processInstanceId"] == failing]
    failure = {"workerId": "w1", "errorMessage": "card declined", "retries": 0, "retryTimeout": 0}
    assert rest.post(f"/external-task/{task['id']}/failure", json=failure).status_code == 204
    [job] = _ok(rest.get("/job", params={"processInstanceId": no_retries}))
    assert rest.put(f"/job/{job['id']}/retries", json={"retries": 0}).status_code == 204
    [user_task] = _ok(rest.get("/task", params={"processInstanceId": reviewed}))
    assert rest.post(f"/task/{user_task['id']}/complete", json={}).status_code == 204
    assert rest.delete(f"/process-instance/{deleted}").status_code == 204
    return definition_id


def _incidents(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    return sorted(
        ({"incidentType": kind, "incidentCount": count} for kind, count in rows),
        key=lambda i: i["incidentType"],
    )


def test_definition_statistics_equal_a_recount(server: LiveServer, rest: httpx.Client) -> None:
    definition_id = _stage(server, rest)
    caller_id = _definition_id(deploy(rest, ("caller.bpmn", CALLER)))
    [(running,)] = _rows(
        server,
        "SELECT count(*) FROM process_instance WHERE definition_id = %s"
        " AND state NOT IN ('Completed', 'Terminated')",
        definition_id,
    )
    [(failed_jobs,)] = _rows(
        server,
        "SELECT count(*) FROM job WHERE definition_id = %s AND retries = 0",
        definition_id,
    )
    by_type = _rows(
        server,
        "SELECT type, count(*) FROM incident WHERE definition_id = %s AND state = 'Open'"
        " GROUP BY type",
        definition_id,
    )
    assert (running, failed_jobs) == (3, 1) and by_type, "the staging made what is counted"

    everything = _ok(
        rest.get(
            "/process-definition/statistics", params={"failedJobs": "true", "incidents": "true"}
        )
    )
    assert {entry["id"] for entry in everything} == {definition_id, caller_id}
    for entry in everything:
        assert set(entry) == DEFINITION_STATISTICS
        assert entry["@class"] == DTO + "ProcessDefinitionStatisticsResultDto"
        assert set(entry["definition"]) == DEFINITION
        assert entry["definition"]["id"] == entry["id"]
    [stats] = [e for e in everything if e["id"] == definition_id]
    assert (stats["instances"], stats["failedJobs"]) == (running, failed_jobs)
    assert stats["incidents"] == _incidents(by_type)
    assert stats["definition"]["key"] == "stats"
    # A definition with no instances is listed too, with zeros.
    [caller] = [e for e in everything if e["id"] == caller_id]
    assert (caller["instances"], caller["failedJobs"], caller["incidents"]) == (0, 0, [])

    plain = {e["id"]: e for e in _ok(rest.get("/process-definition/statistics"))}
    assert plain[definition_id]["instances"] == running
    assert (plain[definition_id]["failedJobs"], plain[definition_id]["incidents"]) == (0, [])
    roots = _ok(rest.get("/process-definition/statistics", params={"rootIncidents": "true"}))
    assert {e["id"]: e["incidents"] for e in roots}[definition_id] == _incidents(by_type)
    kind = by_type[0][0]
    one_type = _ok(rest.get("/process-definition/statistics", params={"incidentsForType": kind}))
    assert {e["id"]: e["incidents"] for e in one_type}[definition_id] == _incidents(
        [r for r in by_type if r[0] == kind]
    )
    nothing = _ok(rest.get("/process-definition/statistics", params={"incidentsForType": "nope"}))
    assert {e["id"]: e["incidents"] for e in nothing}[definition_id] == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"incidents": "false", "incidentsForType": "failedJob"},
            "Only one of the query parameter includeIncidents or includeIncidentsForType "
            "can be set.",
        ),
        (
            {"incidents": "true", "rootIncidents": "true"},
            "Only one of the query parameter includeIncidents or includeRootIncidents can be set.",
        ),
        (
            {"rootIncidents": "true", "incidentsForType": "failedJob"},
            "Only one of the query parameter includeRootIncidents or includeIncidentsForType "
            "can be set.",
        ),
    ],
)
def test_definition_statistics_refuse_two_incident_choices(
    rest: httpx.Client, params: dict[str, str], message: str
) -> None:
    refused = rest.get("/process-definition/statistics", params=params)
    assert refused.status_code == 400
    assert refused.json() == {"type": "InvalidRequestException", "message": message}


def test_activity_statistics_equal_a_recount(server: LiveServer, rest: httpx.Client) -> None:
    definition_id = _stage(server, rest)
    tokens = dict(
        _rows(
            server,
            "SELECT t.node_id, count(*) FROM token t JOIN process_instance p"
            " ON p.id = t.instance_id WHERE p.definition_id = %s"
            " AND t.state NOT IN ('Completed', 'Terminated') GROUP BY 1",
            definition_id,
        )
    )
    jobs = dict(
        _rows(
            server,
            "SELECT node_id, count(*) FROM job WHERE definition_id = %s AND retries = 0 GROUP BY 1",
            definition_id,
        )
    )
    incidents: dict[str, list[tuple[str, int]]] = {}
    for node, kind, count in _rows(
        server,
        "SELECT node_id, type, count(*) FROM incident WHERE definition_id = %s"
        " AND state = 'Open' GROUP BY 1, 2",
        definition_id,
    ):
        incidents.setdefault(node, []).append((kind, count))
    assert tokens and jobs and incidents, "the staging made what is counted"

    path = f"/process-definition/{definition_id}/statistics"
    found = _ok(rest.get(path, params={"failedJobs": "true", "incidents": "true"}))
    for entry in found:
        assert set(entry) == ACTIVITY_STATISTICS
        assert entry["@class"] == DTO + "ActivityStatisticsResultDto"
    assert {e["id"] for e in found} == {*tokens, *jobs, *incidents}
    for entry in found:
        node = entry["id"]
        assert entry["instances"] == tokens.get(node, 0), node
        assert entry["failedJobs"] == jobs.get(node, 0), node
        assert entry["incidents"] == _incidents(incidents.get(node, [])), node

    plain = _ok(rest.get(path))
    assert {e["id"]: e["instances"] for e in plain} == tokens
    assert all((e["failedJobs"], e["incidents"]) == (0, []) for e in plain)
    refused = rest.get(path, params={"incidents": "true", "incidentsForType": "failedJob"})
    assert refused.status_code == 400
    assert refused.json()["type"] == "InvalidRequestException"
    missing = rest.get("/process-definition/nope:1:1/statistics")
    assert missing.status_code == 404
    assert missing.json() == {
        "type": "RestException",
        "message": "No matching definition with id nope:1:1",
    }


def test_historic_activity_statistics_equal_a_recount(
    server: LiveServer, rest: httpx.Client
) -> None:
    definition_id = _stage(server, rest)
    # Finish one instance: its external task completes, its timer fires, its task is done.
    visits = _rows(
        server,
        "SELECT h.node_id, h.ended_at IS NULL, h.state, count(*) FROM history h"
        " JOIN process_instance p ON p.id = h.instance_id WHERE p.definition_id = %s"
        " GROUP BY 1, 2, 3",
        definition_id,
    )
    running: Counter[str] = Counter()
    finished: Counter[str] = Counter()
    canceled: Counter[str] = Counter()
    for node, is_running, state, count in visits:
        if is_running:
            running[node] += count
        else:
            finished[node] += count
        if state == "Terminated":
            canceled[node] += count
    complete_scope = {"End": finished["End"]} if finished["End"] else {}
    incidents = _rows(
        server,
        "SELECT node_id, state, count(*) FROM incident WHERE definition_id = %s GROUP BY 1, 2",
        definition_id,
    )
    open_incidents = Counter({n: c for n, s, c in incidents if s == "Open"})
    resolved = Counter({n: c for n, s, c in incidents if s == "Resolved"})
    assert running and finished and canceled and open_incidents

    path = f"/history/process-definition/{definition_id}/statistics"
    plain = _ok(rest.get(path))
    for entry in plain:
        assert set(entry) == HISTORIC_STATISTICS
    # Without options: the activities with running visits, and only their number.
    assert {e["id"]: e["instances"] for e in plain} == dict(running)
    assert all(e["finished"] == e["canceled"] == e["openIncidents"] == 0 for e in plain)

    params = {"finished": "true", "canceled": "true", "completeScope": "true", "incidents": "true"}
    everything = _ok(rest.get(path, params=params))
    assert [e["id"] for e in everything] == sorted({*running, *finished, *open_incidents})
    for entry in everything:
        node = entry["id"]
        assert entry == {
            "id": node,
            "instances": running[node],
            "canceled": canceled[node],
            "finished": finished[node],
            "completeScope": complete_scope.get(node, 0),
            "openIncidents": open_incidents[node],
            "resolvedIncidents": resolved[node],
            "deletedIncidents": 0,
        }
    only_canceled = _ok(rest.get(path, params={"canceled": "true"}))
    assert {e["id"] for e in only_canceled} == {*running, *canceled}
    descending = _ok(rest.get(path, params={**params, "sortBy": "activityId", "sortOrder": "desc"}))
    assert [e["id"] for e in descending] == [e["id"] for e in reversed(everything)]
    unsorted = rest.get(path, params={"sortBy": "activityId"})
    assert unsorted.status_code == 400
    narrowed = rest.get(path, params={"startedAfter": "2026-01-01T00:00:00.000+0000"})
    assert narrowed.status_code == 400
    assert "startedAfter" in narrowed.json()["message"]
    assert rest.get("/history/process-definition/nope:1:1/statistics").status_code == 404


def test_static_called_process_definitions(server: LiveServer, rest: httpx.Client) -> None:
    called_id = _definition_id(deploy(rest, ("stats.bpmn", WORK)))
    caller_id = _definition_id(deploy(rest, ("caller.bpmn", CALLER)))
    [called] = _ok(rest.get(f"/process-definition/{caller_id}/static-called-process-definitions"))
    assert set(called) == DEFINITION | {"calledFromActivityIds", "callingProcessDefinitionId"}
    assert (called["id"], called["key"]) == (called_id, "stats")
    assert called["calledFromActivityIds"] == ["CallA", "CallB"]
    assert called["callingProcessDefinitionId"] == caller_id
    # A new version of the called key is what the call activities name now.
    newer = _definition_id(deploy(rest, ("stats.bpmn", WORK.replace("PT1H", "PT2H"))))
    [now] = _ok(rest.get(f"/process-definition/{caller_id}/static-called-process-definitions"))
    assert now["id"] == newer
    assert _ok(rest.get(f"/process-definition/{called_id}/static-called-process-definitions")) == []
    missing = rest.get("/process-definition/nope:1:1/static-called-process-definitions")
    assert missing.status_code == 404


def test_statistics_show_only_what_the_user_may_read(
    server: LiveServer, rest: httpx.Client
) -> None:
    definition_id = _stage(server, rest)
    other_id = _definition_id(deploy(rest, ("caller.bpmn", CALLER)))
    revoke = {
        "type": 2,
        "permissions": ["READ", "READ_INSTANCE", "READ_HISTORY"],
        "userId": "viewer",
        "resourceType": 6,
        "resourceId": "stats",
    }
    assert rest.post("/authorization/create", json=revoke).status_code == 200
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD), timeout=30
    ) as viewer:
        listed = _ok(viewer.get("/process-definition/statistics", params={"failedJobs": "true"}))
        assert [e["id"] for e in listed] == [other_id]
        for path in (
            f"/process-definition/{definition_id}/statistics",
            f"/history/process-definition/{definition_id}/statistics",
        ):
            assert viewer.get(path).status_code == 404, path
    mine = {e["id"] for e in _ok(rest.get("/process-definition/statistics"))}
    assert mine == {definition_id, other_id}


def test_statistics_show_only_the_users_tenants(server: LiveServer, rest: httpx.Client) -> None:
    ids = {
        tenant: _definition_id(deploy(rest, ("stats.bpmn", WORK), **{"tenant-id": tenant}))
        for tenant in ("north", "south")
    }
    for tenant in ids:
        started = rest.post(f"/process-definition/key/stats/tenant-id/{tenant}/start", json={})
        assert started.status_code == 200, started.text
    assert rest.post("/tenant/create", json={"id": "north", "name": "North"}).status_code == 204
    assert rest.put("/tenant/north/user-members/viewer").status_code == 204
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD), timeout=30
    ) as viewer:
        listed = _ok(viewer.get("/process-definition/statistics", params={"failedJobs": "true"}))
        assert [(e["id"], e["instances"]) for e in listed] == [(ids["north"], 1)]
        north = _ok(viewer.get(f"/process-definition/{ids['north']}/statistics"))
        assert {e["id"]: e["instances"] for e in north} == {"Review": 1, "Charge": 1, "Wait": 1}
        # The other tenant's counts never show (its definition read by id is not narrowed by
        # tenant yet: an empty list until it answers 404).
        hidden = viewer.get(f"/process-definition/{ids['south']}/statistics")
        assert hidden.status_code == 404 or hidden.json() == [], hidden.text
    everyone = {e["id"]: e["instances"] for e in _ok(rest.get("/process-definition/statistics"))}
    assert everyone == {ids["north"]: 1, ids["south"]: 1}
