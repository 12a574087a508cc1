"""Conditional events show as themselves over /engine-rest: Camunda 7's activity types
`intermediateConditional`, `boundaryConditional` and `conditionalStartEvent` in the history
(`GET /history/activity-instance`, also as its `activityType` filter) and in the
activity-instance tree (`GET /process-instance/{id}/activity-instances`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from engine.bpmn import write_bpmn
from engine.builder import ProcessBuilder
from tests.compat.conftest import deploy, start
from tests.compat.test_rest_shapes import _json, _no_content

ORDER_WATCH = Path(__file__).parent.parent / "data" / "bpmn" / "order_conditions.bpmn"


def history_types(client: httpx.Client, instance_id: str) -> dict[str, str]:
    """activityId -> activityType of every visit the history holds for the instance."""
    visits = _json(
        client.get("/history/activity-instance", params={"processInstanceId": instance_id})
    )
    return {visit["activityId"]: visit["activityType"] for visit in visits}


def tree_types(client: httpx.Client, instance_id: str) -> dict[str, str]:
    """activityId -> activityType of every activity instance below the process instance."""
    tree = _json(client.get(f"/process-instance/{instance_id}/activity-instances"))
    found: dict[str, str] = {}
    todo: list[dict[str, Any]] = list(tree["childActivityInstances"])
    while todo:
        entry = todo.pop()
        found[entry["activityId"]] = entry["activityType"]
        todo.extend(entry["childActivityInstances"])
    return found


def complete(client: httpx.Client, instance_id: str, key: str) -> None:
    [task] = [
        t
        for t in _json(client.get("/task", params={"processInstanceId": instance_id}))
        if t["taskDefinitionKey"] == key
    ]
    _no_content(client.post(f"/task/{task['id']}/complete", json={}))


def put_variable(client: httpx.Client, instance_id: str, name: str, dto: dict[str, Any]) -> None:
    _no_content(client.put(f"/process-instance/{instance_id}/variables/{name}", json=dto))


def test_an_intermediate_conditional_catch_event(rest: httpx.Client) -> None:
    deploy(rest, ("order_conditions.bpmn", ORDER_WATCH.read_text()))
    typed = {"stock": {"value": 0, "type": "Integer"}, "amount": {"value": 5, "type": "Integer"}}
    instance_id = start(rest, "order_conditions", typed)["id"]
    assert tree_types(rest, instance_id) == {"Task_Review": "userTask"}
    complete(rest, instance_id, "Task_Review")
    # The token waits at the catch event: the tree and the open history visit name its type.
    assert tree_types(rest, instance_id) == {"Event_InStock": "intermediateConditional"}
    assert history_types(rest, instance_id)["Event_InStock"] == "intermediateConditional"
    [waiting] = _json(
        rest.get(
            "/history/activity-instance",
            params={"processInstanceId": instance_id, "activityType": "intermediateConditional"},
        )
    )
    assert waiting["activityId"] == "Event_InStock"
    assert waiting["endTime"] is None
    none = {"processInstanceId": instance_id, "activityType": "intermediateSignalCatch"}
    assert _json(rest.get("/history/activity-instance", params=none)) == []
    put_variable(rest, instance_id, "stock", {"value": 9, "type": "Integer"})
    [passed] = _json(
        rest.get(
            "/history/activity-instance",
            params={"processInstanceId": instance_id, "activityType": "intermediateConditional"},
        )
    )
    assert passed["endTime"] is not None
    assert _json(rest.get(f"/history/process-instance/{instance_id}"))["state"] == "COMPLETED"


def test_a_conditional_boundary_event_and_an_event_subprocess_start(
    rest: httpx.Client,
) -> None:
    deploy(rest, ("order_conditions.bpmn", ORDER_WATCH.read_text()))
    typed = {"stock": {"value": 0, "type": "Integer"}, "amount": {"value": 5, "type": "Integer"}}
    instance_id = start(rest, "order_conditions", typed)["id"]
    # A note starts the non-interrupting event subprocess by its conditional start event.
    put_variable(rest, instance_id, "note", {"value": "call me"})
    tree = tree_types(rest, instance_id)
    assert tree["SubProcess_Notes"] == "subProcess"
    assert tree["Task_ReadNote"] == "userTask"
    assert history_types(rest, instance_id)["StartEvent_Note"] == "conditionalStartEvent"
    put_variable(rest, instance_id, "cancelled", {"value": True, "type": "Boolean"})
    types = history_types(rest, instance_id)
    assert types["Event_Cancelled"] == "boundaryConditional"
    assert types["StartEvent_Order"] == "startEvent"
    boundary = {"processInstanceId": instance_id, "activityType": "boundaryConditional"}
    [visit] = _json(rest.get("/history/activity-instance", params=boundary))
    assert visit["activityId"] == "Event_Cancelled"
    errors = {"processInstanceId": instance_id, "activityType": "boundaryError"}
    assert _json(rest.get("/history/activity-instance", params=errors)) == []


def test_a_conditional_start_event(rest: httpx.Client) -> None:
    model = (
        ProcessBuilder("heat_watch")
        .start_event("Start_Hot")
        .conditional("Start_Hot", "${temperature > 30}")
        .user_task("Task_Cool")
        .end_event("End")
        .chain("Start_Hot", "Task_Cool", "End")
        .build()
    )
    deploy(rest, ("heat_watch.bpmn", write_bpmn([model])))
    body = {"variables": {"temperature": {"value": 35, "type": "Integer"}}}
    [started] = _json(rest.post("/condition", json=body))
    assert history_types(rest, started["id"]) == {
        "Start_Hot": "conditionalStartEvent",
        "Task_Cool": "userTask",
    }
    wanted = {"processInstanceId": started["id"], "activityType": "conditionalStartEvent"}
    [visit] = _json(rest.get("/history/activity-instance", params=wanted))
    assert visit["activityId"] == "Start_Hot"
    plain = {"processInstanceId": started["id"], "activityType": "startEvent"}
    assert _json(rest.get("/history/activity-instance", params=plain)) == []
    assert tree_types(rest, started["id"]) == {"Task_Cool": "userTask"}
