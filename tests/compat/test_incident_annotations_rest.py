"""/engine-rest over HTTP: an incident's annotation (PUT /incident/{id}/annotation, cleared by
DELETE /incident/{id}/annotation or PUT /incident/{id}/clear-annotation) shows in the runtime and
historic IncidentDto and in the console's incident views; DELETE /incident/{id} resolves a custom
incident and refuses a failed external task's as Camunda does; POST
/execution/{id}/create-incident opens a custom incident on a waiting execution. The answer shapes
are Camunda 7.24's REST reference's."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.test_sessions import Browser
from tests.compat import processes
from tests.compat.conftest import deploy, start
from tests.server import LiveServer

# IncidentDto's fields, as Camunda's reference lists them for GET /incident.
INCIDENT_FIELDS = {
    "id", "processDefinitionId", "processInstanceId", "executionId", "incidentTimestamp",
    "incidentType", "activityId", "failedActivityId", "causeIncidentId", "rootCauseIncidentId",
    "configuration", "tenantId", "incidentMessage", "jobDefinitionId", "annotation",
}  # fmt: skip
# HistoricIncidentDto's, for GET /history/incident.
HISTORIC_INCIDENT_FIELDS = {
    "id", "processDefinitionKey", "processDefinitionId", "processInstanceId", "executionId",
    "rootProcessInstanceId", "createTime", "endTime", "removalTime", "incidentType",
    "activityId", "failedActivityId", "causeIncidentId", "rootCauseIncidentId", "configuration",
    "historyConfiguration", "incidentMessage", "tenantId", "jobDefinitionId", "open", "deleted",
    "resolved", "annotation",
}  # fmt: skip

WAITING = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'id="Definitions_waiting" targetNamespace="http://bpmn.io/schema/bpmn">\n'
    '  <bpmn:process id="waiting" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:receiveTask id="Wait" name="Wait for the go" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Wait" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="Wait" targetRef="End" />\n'
    "  </bpmn:process>\n</bpmn:definitions>\n"
)


def _failed(rest: httpx.Client) -> dict[str, Any]:
    """A failed external task's incident (no retries left)."""
    deploy(rest, ("pay.bpmn", processes.external_only("pay", "pay-topic")))
    instance = start(rest, "pay")
    fetch = {"workerId": "w1", "maxTasks": 1,
             "topics": [{"topicName": "pay-topic", "lockDuration": 60_000}]}  # fmt: skip
    [task] = rest.post("/external-task/fetchAndLock", json=fetch).json()
    failed = {"workerId": "w1", "errorMessage": "card declined", "retries": 0, "retryTimeout": 0}
    assert rest.post(f"/external-task/{task['id']}/failure", json=failed).status_code == 204
    [incident] = rest.get("/incident", params={"processInstanceId": instance["id"]}).json()
    assert incident["incidentType"] == "failedExternalTask"
    found: dict[str, Any] = incident
    return found


def _historic(rest: httpx.Client, incident_id: str) -> dict[str, Any]:
    [row] = rest.get("/history/incident", params={"incidentId": incident_id}).json()
    assert set(row) == HISTORIC_INCIDENT_FIELDS
    found: dict[str, Any] = row
    return found


def test_an_annotation_is_set_shown_and_cleared(server: LiveServer, rest: httpx.Client) -> None:
    incident = _failed(rest)
    incident_id = incident["id"]
    assert set(incident) == INCIDENT_FIELDS
    assert incident["annotation"] is None

    note = "Card issuer <down>; retry after 14:00"
    answer = rest.put(f"/incident/{incident_id}/annotation", json={"annotation": note})
    assert answer.status_code == 204, answer.text
    shown = rest.get(f"/incident/{incident_id}").json()
    assert set(shown) == INCIDENT_FIELDS
    assert shown["annotation"] == note
    [listed] = rest.get("/incident", params={"incidentType": "failedExternalTask"}).json()
    assert listed["annotation"] == note
    assert _historic(rest, incident_id)["annotation"] == note

    # The console's incident list and the instance's incidents panel show it, escaped.
    browser = Browser(server.url, "admin")
    try:
        escaped = "Card issuer &lt;down&gt;; retry after 14:00"
        rows = browser.get("/incidents?fragment=rows")
        assert rows.status_code == 200
        assert f"Annotation: {escaped}" in rows.text
        panel = browser.get(f"/instances/{incident['processInstanceId']}/panel/incidents")
        assert panel.status_code == 200
        assert f"Annotation: {escaped}" in panel.text
    finally:
        browser.close()

    # Camunda's clear, and the PUT form of it.
    assert rest.delete(f"/incident/{incident_id}/annotation").status_code == 204
    assert rest.get(f"/incident/{incident_id}").json()["annotation"] is None
    rest.put(f"/incident/{incident_id}/annotation", json={"annotation": "again"})
    assert rest.get(f"/incident/{incident_id}").json()["annotation"] == "again"
    assert rest.put(f"/incident/{incident_id}/clear-annotation").status_code == 204
    assert _historic(rest, incident_id)["annotation"] is None

    # The audit trail: set, then cleared.
    entries = rest.get(
        "/history/user-operation", params={"entityType": "Incident", "property": "annotation"}
    ).json()
    operations = sorted(e["operationType"] for e in entries if e["property"] == "annotation")
    assert operations.count("SetAnnotation") == 2
    assert operations.count("ClearAnnotation") == 2


def test_annotating_a_missing_incident_is_refused(rest: httpx.Client) -> None:
    missing = "00000000-0000-4000-8000-00000000abcd"
    for answer in (
        rest.put(f"/incident/{missing}/annotation", json={"annotation": "x"}),
        rest.delete(f"/incident/{missing}/annotation"),
    ):
        assert answer.status_code == 400, answer.text
        assert answer.json()["type"] == "BadUserRequestException"
    too_long = rest.put(f"/incident/{missing}/annotation", json={"annotation": 5})
    assert too_long.status_code == 400
    assert "annotation" in too_long.json()["message"]


def test_a_failed_external_tasks_incident_is_not_resolved_by_delete(rest: httpx.Client) -> None:
    incident = _failed(rest)
    answer = rest.delete(f"/incident/{incident['id']}")
    assert answer.status_code == 400, answer.text
    assert answer.json() == {
        "type": "InvalidRequestException",
        "message": "Cannot resolve an incident of type failedExternalTask",
    }
    assert rest.get(f"/incident/{incident['id']}").status_code == 200
    missing = rest.delete("/incident/00000000-0000-4000-8000-00000000abcd")
    assert missing.status_code == 404
    assert missing.json()["type"] == "InvalidRequestException"


def test_a_custom_incident_is_created_on_an_execution_and_resolved(
    server: LiveServer, rest: httpx.Client
) -> None:
    deploy(rest, ("waiting.bpmn", WAITING))
    instance = start(rest, "waiting")
    [execution] = rest.get(
        "/execution", params={"processInstanceId": instance["id"], "activityId": "Wait"}
    ).json()
    body = {"incidentType": "stuckOrder", "configuration": "order-77", "message": "no go yet"}
    answer = rest.post(f"/execution/{execution['id']}/create-incident", json=body)
    assert answer.status_code == 200, answer.text
    created = answer.json()
    assert set(created) == INCIDENT_FIELDS
    assert created["incidentType"] == "stuckOrder"
    assert created["configuration"] == "order-77"
    assert created["incidentMessage"] == "no go yet"
    assert created["executionId"] == execution["id"]
    assert created["activityId"] == "Wait"
    assert created["processInstanceId"] == instance["id"]
    assert created["annotation"] is None
    [listed] = rest.get("/incident", params={"incidentType": "stuckOrder"}).json()
    assert listed == created
    # The execution is found by it; the instance's activity tree names it at its activity.
    by_incident = rest.get("/execution", params={"incidentId": created["id"]}).json()
    assert [e["id"] for e in by_incident] == [execution["id"]]
    tree = rest.get(f"/process-instance/{instance['id']}/activity-instances").json()
    [wait] = tree["childActivityInstances"]
    assert wait["incidentIds"] == [created["id"]]

    # The console's inspector shows it on the instance like any incident.
    browser = Browser(server.url, "admin")
    try:
        panel = browser.get(f"/instances/{instance['id']}/panel/incidents")
        assert panel.status_code == 200
        assert f'data-incident="{created["id"]}" data-node="Wait"' in panel.text
        assert "no go yet" in panel.text and "stuckOrder" in panel.text
    finally:
        browser.close()

    # The instance's own execution stands for its one waiting execution, as Camunda's does.
    again = rest.post(
        f"/execution/{instance['id']}/create-incident", json={"incidentType": "second"}
    )
    assert again.status_code == 200, again.text
    assert again.json()["executionId"] == execution["id"]

    assert rest.delete(f"/incident/{created['id']}").status_code == 204
    assert [i["incidentType"] for i in rest.get("/incident").json()] == ["second"]
    history = _historic(rest, created["id"])
    assert (history["open"], history["resolved"], history["deleted"]) == (False, True, False)
    assert history["endTime"] is not None
    # A custom incident stops nothing: the receive task still waits, and a signal continues it.
    assert rest.post(f"/execution/{execution['id']}/signal", json={}).status_code == 204
    ended = rest.get(f"/history/process-instance/{instance['id']}").json()
    assert ended["state"] == "COMPLETED"
    # ... and the incident left open on it went with it.
    assert rest.get("/incident").json() == []


def test_creating_an_incident_is_refused_without_a_type_or_an_execution(
    rest: httpx.Client,
) -> None:
    deploy(rest, ("waiting.bpmn", WAITING))
    instance = start(rest, "waiting")
    no_type = rest.post(f"/execution/{instance['id']}/create-incident", json={})
    assert no_type.status_code == 400
    assert no_type.json()["type"] == "InvalidRequestException"
    assert "incidentType" in no_type.json()["message"]
    engine_own = rest.post(
        f"/execution/{instance['id']}/create-incident", json={"incidentType": "failedJob"}
    )
    assert engine_own.status_code == 400
    missing = "00000000-0000-4000-8000-00000000abcd"
    unknown = rest.post(f"/execution/{missing}/create-incident", json={"incidentType": "x"})
    assert unknown.status_code == 400
    assert unknown.json() == {
        "type": "InvalidRequestException",
        "message": f"Cannot find an execution with executionId '{missing}'",
    }
