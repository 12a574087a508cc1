"""Called instances through /engine-rest as Camunda shows them: the runtime and history queries
filter by super, sub and root instance, the history names each instance's caller and root, and a
call activity's visit names the instance it called; in the live tree it is a `callActivity`."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.compat import fields
from tests.compat.conftest import deploy, start
from tests.server import LiveServer

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def _ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return sorted(entry["id"] for entry in response.json())


def _count(response: httpx.Response) -> int:
    assert response.status_code == 200, response.text
    count: int = response.json()["count"]
    return count


def _family(rest: httpx.Client) -> tuple[str, str, str]:
    """A claim whose call activity runs an assessment, and an assessment nobody called:
    (claim, its assessment, the lone assessment)."""
    deploy(
        rest,
        ("claim_parent.bpmn", (DATA / "claim_parent.bpmn").read_text()),
        ("claim_assess.bpmn", (DATA / "claim_assess.bpmn").read_text()),
    )
    parent = start(rest, "claim", {"amount": {"value": 120, "type": "Integer"}})["id"]
    called = rest.get("/process-instance", params={"superProcessInstance": parent}).json()
    assert len(called) == 1, called
    other = start(rest, "claim_assess")["id"]
    return parent, called[0]["id"], other


def test_runtime_queries_filter_by_super_sub_and_root(rest: httpx.Client) -> None:
    parent, child, other = _family(rest)

    def ids(**params: str) -> list[str]:
        return _ids(rest.get("/process-instance", params=params))

    def count(**params: str) -> int:
        return _count(rest.get("/process-instance/count", params=params))

    assert ids(superProcessInstance=parent) == [child]
    assert count(superProcessInstance=parent) == 1
    assert ids(superProcessInstance=child) == []
    assert ids(subProcessInstance=child) == [parent]
    assert count(subProcessInstance=child) == 1
    assert ids(subProcessInstance=parent) == []
    assert ids(rootProcessInstanceId=parent) == sorted([parent, child])
    assert count(rootProcessInstanceId=parent) == 2
    assert ids(rootProcessInstanceId=other) == [other]
    assert ids(rootProcessInstances="true") == sorted([parent, other])
    assert count(rootProcessInstances="true") == 2
    assert ids(rootProcessInstances="false") == sorted([parent, child, other])
    assert ids(leafProcessInstances="true") == sorted([child, other])
    assert ids(superProcessInstance=parent, processDefinitionKey="claim") == []
    [shown] = rest.get("/process-instance", params={"superProcessInstance": parent}).json()
    assert set(shown) >= fields.PROCESS_INSTANCE
    assert (shown["definitionKey"], shown["ended"], shown["suspended"]) == (
        "claim_assess",
        False,
        False,
    )
    # An id Interlock never issued names no instance, as Camunda answers for unknown ids.
    assert ids(superProcessInstance="not-an-id") == []
    assert ids(subProcessInstance="not-an-id") == []
    refused = rest.get("/process-instance", params={"rootProcessInstances": "maybe"})
    assert refused.status_code == 400
    assert refused.json()["type"] == "InvalidRequestException"
    assert "rootProcessInstances" in refused.json()["message"]
    refused = rest.get("/process-instance/count", params={"leafProcessInstances": "2"})
    assert refused.status_code == 400
    assert "leafProcessInstances" in refused.json()["message"]


def _complete_scoring(rest: httpx.Client, instance_id: str) -> None:
    locked = rest.post(
        "/external-task/fetchAndLock",
        json={
            "workerId": "scorer",
            "maxTasks": 5,
            "topics": [{"topicName": "score-risk", "lockDuration": 60000}],
        },
    )
    assert locked.status_code == 200, locked.text
    [task] = [t for t in locked.json() if t["processInstanceId"] == instance_id]
    if task:
        done = rest.post(
            f"/external-task/{task['id']}/complete",
            json={"workerId": "scorer", "variables": {"risk": {"value": "low", "type": "String"}}},
        )
        assert done.status_code == 204, done.text


def test_history_names_caller_root_and_called_instance(
    server: LiveServer, rest: httpx.Client
) -> None:
    parent, child, other = _family(rest)

    historic = rest.get(f"/history/process-instance/{child}").json()
    assert set(historic) >= fields.HISTORIC_PROCESS_INSTANCE
    assert (historic["superProcessInstanceId"], historic["rootProcessInstanceId"]) == (
        parent,
        parent,
    )
    root = rest.get(f"/history/process-instance/{parent}").json()
    assert (root["superProcessInstanceId"], root["rootProcessInstanceId"]) == (None, parent)

    [call] = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": parent, "activityType": "callActivity"},
    ).json()
    assert set(call) >= fields.HISTORIC_ACTIVITY_INSTANCE
    assert (call["activityId"], call["activityType"], call["calledProcessInstanceId"]) == (
        "Activity_Assess",
        "callActivity",
        child,
    )
    assert call["rootProcessInstanceId"] == parent
    others = rest.get("/history/activity-instance", params={"processInstanceId": parent}).json()
    assert [a["calledProcessInstanceId"] for a in others if a["id"] != call["id"]] == [None]
    scored = rest.get("/history/activity-instance", params={"processInstanceId": child}).json()
    assert {a["rootProcessInstanceId"] for a in scored} == {parent}
    assert (
        _count(
            rest.get("/history/activity-instance/count", params={"activityType": "callActivity"})
        )
        == 1
    )

    tree = rest.get(f"/process-instance/{parent}/activity-instances").json()
    [waiting] = tree["childActivityInstances"]
    assert set(waiting) >= fields.ACTIVITY_INSTANCE
    assert (waiting["activityId"], waiting["activityType"], waiting["name"]) == (
        "Activity_Assess",
        "callActivity",
        "Assess claim",
    )
    assert waiting["id"] == call["id"]

    _complete_scoring(rest, child)
    assert server.engine.instance(child).state.value == "Completed"

    def ids(**params: str) -> list[str]:
        return _ids(rest.get("/history/process-instance", params=params))

    def count(**params: str) -> int:
        return _count(rest.get("/history/process-instance/count", params=params))

    listed = rest.get("/history/process-instance", params={"superProcessInstanceId": parent})
    [ended] = listed.json()
    assert set(ended) >= fields.HISTORIC_PROCESS_INSTANCE
    assert (ended["id"], ended["state"], ended["superProcessInstanceId"]) == (
        child,
        "COMPLETED",
        parent,
    )
    assert ended["processDefinitionKey"] == "claim_assess"
    assert count(superProcessInstanceId=parent) == 1
    assert ids(subProcessInstanceId=child) == [parent]
    assert ids(rootProcessInstanceId=parent) == sorted([parent, child])
    assert count(rootProcessInstanceId=parent) == 2
    assert ids(rootProcessInstances="true") == sorted([parent, other])
    assert ids(finished="true") == [child]
    assert ids(unfinished="true") == sorted([parent, other])
    assert ids(completed="true") == [child]
    assert ids(active="true") == sorted([parent, other])
    assert ids(processDefinitionKey="claim_assess", finished="true") == [child]
    assert ids(superProcessInstanceId="not-an-id") == []
    everything = rest.get(
        "/history/process-instance", params={"sortBy": "startTime", "sortOrder": "asc"}
    ).json()
    assert [e["id"] for e in everything] == [parent, child, other]
    newest = rest.get(
        "/history/process-instance", params={"sortBy": "startTime", "sortOrder": "desc"}
    ).json()
    assert newest[0]["id"] == other
    paged = rest.get(
        "/history/process-instance",
        params={"sortBy": "startTime", "sortOrder": "desc", "firstResult": 1, "maxResults": 1},
    ).json()
    assert [e["id"] for e in paged] == [newest[1]["id"]]
    assert count() == 3
    after = rest.get(f"/process-instance/{parent}/activity-instances").json()
    assert [(a["activityId"], a["activityType"]) for a in after["childActivityInstances"]] == [
        ("Activity_PayOut", "userTask")
    ]

    refused = rest.get("/history/process-instance", params={"rootProcessInstances": "yes"})
    assert refused.status_code == 400
    assert "rootProcessInstances" in refused.json()["message"]
    refused = rest.get("/history/process-instance/count", params={"startedBefore": "soon"})
    assert refused.status_code == 400
    assert "startedBefore" in refused.json()["message"]
    refused = rest.get("/history/process-instance", params={"sortBy": "nope", "sortOrder": "asc"})
    assert refused.status_code == 400
    assert "sortBy" in refused.json()["message"]
