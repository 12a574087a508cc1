"""Event subprocesses through /engine-rest: a run shows in the activity-instance tree as a
"subProcess" inside its scope, its start event in the history as Camunda names it, and the timer
of a process-level event subprocess belongs to the instance's own execution."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from engine.bpmn.writer import write_bpmn
from tests.compat.conftest import deploy, start
from tests.engine.test_event_subprocesses import process_level
from tests.server import LiveServer

MODEL = Path(__file__).parent.parent / "data" / "bpmn" / "order_watch.bpmn"


def children(entry: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((c["activityId"], c["activityType"]) for c in entry["childActivityInstances"])


def test_event_subprocess_runs_in_the_tree_and_the_history(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("order_watch.bpmn", MODEL.read_text()))
    variables = {"packTimeout": {"value": "P1D", "type": "String"}}
    instance = start(operator, "order_watch", variables, businessKey="O-1")
    for _ in range(2):
        body = {
            "messageName": "AddressChanged",
            "businessKey": "O-1",
            "processVariables": {"street": {"value": "Elm Street 1", "type": "String"}},
        }
        sent = operator.post("/message", json=body)
        assert sent.status_code == 204, sent.text

    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    assert children(tree) == [
        ("Activity_AddressChanged", "subProcess"),
        ("Activity_AddressChanged", "subProcess"),
        ("Activity_Fulfil", "subProcess"),
    ]
    for entry in tree["childActivityInstances"]:
        assert entry["parentActivityInstanceId"] == instance["id"]
        inner = "Task_Pack" if entry["activityId"] == "Activity_Fulfil" else "Task_UpdateAddress"
        assert children(entry) == [(inner, "userTask")]
        assert entry["childActivityInstances"][0]["parentActivityInstanceId"] == entry["id"]
    [fulfil] = [e for e in tree["childActivityInstances"] if e["activityId"] == "Activity_Fulfil"]

    # The fulfilment's timer belongs to the fulfilment's execution.
    [job] = rest.get("/job", params={"processInstanceId": instance["id"]}).json()
    assert (job["executionId"], job["processInstanceId"]) == (
        fulfil["executionIds"][0],
        instance["id"],
    )
    started = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "activityType": "messageStartEvent"},
    ).json()
    assert [a["activityId"] for a in started] == ["StartEvent_AddressChanged"] * 2
    assert all(a["endTime"] is not None for a in started)
    runs = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "activityId": "Activity_AddressChanged"},
    ).json()
    assert [(a["activityType"], a["endTime"]) for a in runs] == [("subProcess", None)] * 2

    cancelled = operator.post("/signal", json={"name": "OrdersCancelled"})
    assert cancelled.status_code == 204, cancelled.text
    history = rest.get(f"/history/process-instance/{instance['id']}").json()
    assert history["state"] == "COMPLETED"
    assert rest.get("/job", params={"processInstanceId": instance["id"]}).json() == []
    late = operator.post("/message", json={"messageName": "AddressChanged", "businessKey": "O-1"})
    assert late.status_code == 400, late.text


def test_a_process_level_timer_belongs_to_the_instance(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    model = process_level("timer", interrupting=False, timer="P1D").build()
    deploy(rest, ("esp.bpmn", write_bpmn([model])))
    instance = start(operator, "esp-process")
    [job] = rest.get("/job", params={"processInstanceId": instance["id"]}).json()
    assert (job["executionId"], job["processInstanceId"]) == (instance["id"], instance["id"])
    found = rest.get("/job", params={"executionId": instance["id"]}).json()
    assert [j["id"] for j in found] == [job["id"]]
    executed = operator.post(f"/job/{job['id']}/execute")
    assert executed.status_code == 204, executed.text
    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    assert children(tree) == [("esp", "subProcess"), ("work", "userTask")]
