"""/engine-rest over conditional events: the process-instance variable endpoints (POST with
modifications and deletions, PUT and DELETE of one variable) change variables and trigger the
conditional events they reach in the same request; POST /condition starts instances by their
conditional start events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from engine.bpmn import write_bpmn
from engine.builder import ProcessBuilder
from tests.compat import fields
from tests.compat.conftest import deploy, start
from tests.compat.test_rest_shapes import _error, _has, _json, _no_content

ORDER_WATCH = Path(__file__).parent.parent / "data" / "bpmn" / "order_conditions.bpmn"


def tasks_of(client: httpx.Client, instance_id: str) -> list[str]:
    found = _json(client.get("/task", params={"processInstanceId": instance_id}))
    return sorted(task["taskDefinitionKey"] for task in found)


def conditional_waits(client: httpx.Client, instance_id: str) -> list[str]:
    """The activities of the instance's activity tree below the instance (a token waiting at a
    catch event is one)."""
    tree = _json(client.get(f"/process-instance/{instance_id}/activity-instances"))
    found: list[str] = []
    todo = [tree]
    while todo:
        entry = todo.pop()
        found.append(entry["activityId"])
        todo.extend(entry["childActivityInstances"])
    return sorted(found[1:])


def variables_of(client: httpx.Client, instance_id: str) -> dict[str, Any]:
    answer = _json(client.get(f"/process-instance/{instance_id}/variables"))
    return {name: dto["value"] for name, dto in answer.items()}


def started_watch(client: httpx.Client, **variables: Any) -> str:
    deploy(client, ("order_conditions.bpmn", ORDER_WATCH.read_text()))
    typed = {name: {"value": value} for name, value in variables.items()}
    instance_id: str = start(client, "order_conditions", typed)["id"]
    return instance_id


def complete(client: httpx.Client, instance_id: str, key: str) -> None:
    [task] = [
        t
        for t in _json(client.get("/task", params={"processInstanceId": instance_id}))
        if t["taskDefinitionKey"] == key
    ]
    _no_content(client.post(f"/task/{task['id']}/complete", json={}))


def test_post_modifications_and_deletions_in_one_request(rest: httpx.Client) -> None:
    instance_id = started_watch(rest, stock=0, amount=5, old="x")
    complete(rest, instance_id, "Task_Review")
    assert conditional_waits(rest, instance_id) == ["Event_InStock"]
    body = {
        "modifications": {"stock": {"value": 9, "type": "Integer"}, "note": {"value": "hi"}},
        "deletions": ["old", "never-there"],
    }
    _no_content(rest.post(f"/process-instance/{instance_id}/variables", json=body))
    # The catch event passed and the note started the non-interrupting event subprocess.
    assert variables_of(rest, instance_id) == {"stock": 9, "amount": 5, "note": "hi"}
    assert tasks_of(rest, instance_id) == ["Task_ReadNote"]
    complete(rest, instance_id, "Task_ReadNote")
    ended = _json(rest.get(f"/history/process-instance/{instance_id}"))
    assert ended["state"] == "COMPLETED"


def test_put_one_variable_triggers_an_interrupting_boundary_event(rest: httpx.Client) -> None:
    instance_id = started_watch(rest, stock=0, amount=5)
    assert tasks_of(rest, instance_id) == ["Task_Review"]
    # Another variable: the boundary event listens to `cancelled` only.
    _no_content(rest.put(f"/process-instance/{instance_id}/variables/x", json={"value": 1}))
    assert tasks_of(rest, instance_id) == ["Task_Review"]
    _no_content(
        rest.put(
            f"/process-instance/{instance_id}/variables/cancelled",
            json={"value": True, "type": "Boolean"},
        )
    )
    assert tasks_of(rest, instance_id) == []
    ended = _json(rest.get(f"/history/process-instance/{instance_id}"))
    assert ended["state"] == "COMPLETED"
    # The instance has ended: Camunda's runtime no longer knows it.
    _error(
        rest.put(f"/process-instance/{instance_id}/variables/x", json={"value": 2}),
        404,
        "InvalidRequestException",
        "does not exist",
    )


def test_note_events_count_once_per_change_and_delete_does_not_count(
    rest: httpx.Client,
) -> None:
    instance_id = started_watch(rest, stock=0, amount=5)
    put = rest.put(f"/process-instance/{instance_id}/variables/note", json={"value": "a"})
    _no_content(put)
    put = rest.put(f"/process-instance/{instance_id}/variables/note", json={"value": "b"})
    _no_content(put)
    assert tasks_of(rest, instance_id) == ["Task_ReadNote", "Task_ReadNote", "Task_Review"]
    # camunda:variableEvents="create, update": a deletion does not evaluate it.
    _no_content(rest.delete(f"/process-instance/{instance_id}/variables/note"))
    assert variables_of(rest, instance_id) == {"stock": 0, "amount": 5}
    assert tasks_of(rest, instance_id) == ["Task_ReadNote", "Task_ReadNote", "Task_Review"]
    # Deleting a variable the instance does not have changes nothing.
    _no_content(rest.delete(f"/process-instance/{instance_id}/variables/nothing"))


def test_delete_can_make_a_condition_true(rest: httpx.Client) -> None:
    model = (
        ProcessBuilder("unlock")
        .start_event("Start")
        .intermediate_catch_event("Unlocked")
        .conditional("Unlocked", "${execution.getVariable('lock') == null}")
        .user_task("Go")
        .end_event("End")
        .chain("Start", "Unlocked", "Go", "End")
        .build()
    )
    deploy(rest, ("unlock.bpmn", write_bpmn([model])))
    instance_id = start(rest, "unlock", {"lock": {"value": "held"}})["id"]
    assert tasks_of(rest, instance_id) == []
    _no_content(rest.delete(f"/process-instance/{instance_id}/variables/lock"))
    assert tasks_of(rest, instance_id) == ["Go"]


def test_bad_variable_requests_are_refused_naming_the_field(rest: httpx.Client) -> None:
    instance_id = started_watch(rest, stock=0, amount=5)
    url = f"/process-instance/{instance_id}/variables"
    _error(
        rest.post(url, json={"modifications": []}),
        400,
        "InvalidRequestException",
        "'modifications'",
    )
    _error(rest.post(url, json={"deletions": "old"}), 400, "InvalidRequestException", "deletions")
    _error(
        rest.post(url, json={"modifications": {"n": {"value": "x", "type": "Integer"}}}),
        400,
        "InvalidRequestException",
        "variable 'n'",
    )
    _error(
        rest.put(f"{url}/n", json={"value": 1, "type": "Nope"}),
        400,
        "InvalidRequestException",
        "Unsupported value type",
    )
    assert variables_of(rest, instance_id) == {"stock": 0, "amount": 5}
    unknown = "/process-instance/00000000-0000-0000-0000-000000000000/variables"
    _error(rest.post(unknown, json={}), 404, "InvalidRequestException", "does not exist")
    _error(rest.delete(f"{unknown}/x"), 404, "InvalidRequestException", "does not exist")


def test_a_condition_that_fails_is_a_400_and_changes_nothing(rest: httpx.Client) -> None:
    instance_id = started_watch(rest, stock=0, amount=5)
    complete(rest, instance_id, "Task_Review")
    # `stock >= amount` cannot compare a string with a number.
    _error(
        rest.put(f"/process-instance/{instance_id}/variables/stock", json={"value": "many"}),
        400,
        "InvalidRequestException",
        "Event_InStock",
    )
    assert variables_of(rest, instance_id) == {"stock": 0, "amount": 5}
    assert conditional_waits(rest, instance_id) == ["Event_InStock"]


def start_on(key: str, condition: str) -> str:
    model = (
        ProcessBuilder(key)
        .start_event("Start")
        .conditional("Start", condition)
        .user_task("Task")
        .end_event("End")
        .chain("Start", "Task", "End")
        .build()
    )
    return write_bpmn([model])


def test_post_condition_starts_the_definitions_whose_condition_holds(rest: httpx.Client) -> None:
    _error(rest.post("/condition", json={}), 400, "InvalidRequestException", "No subscriptions")
    deploy(
        rest,
        ("hot.bpmn", start_on("hot", "${temperature > 30}")),
        ("cold.bpmn", start_on("cold", "${temperature < 0}")),
    )
    body = {
        "variables": {"temperature": {"value": 35, "type": "Integer"}},
        "businessKey": "B-7",
    }
    [started] = _json(rest.post("/condition", json=body))
    _has(started, fields.PROCESS_INSTANCE)
    assert started["businessKey"] == "B-7"
    assert started["ended"] is False
    assert variables_of(rest, started["id"]) == {"temperature": 35}
    assert tasks_of(rest, started["id"]) == ["Task"]
    none = {"variables": {"temperature": {"value": 10}}}
    assert _json(rest.post("/condition", json=none)) == []
    cold = _json(rest.get("/process-definition/key/cold"))
    chosen = {"variables": {"temperature": {"value": -3}}, "processDefinitionId": cold["id"]}
    [only] = _json(rest.post("/condition", json=chosen))
    assert only["definitionId"] == cold["id"]
    _error(
        rest.post("/condition", json={"processDefinitionId": "nope"}),
        400,
        "InvalidRequestException",
        "No subscriptions",
    )
    _error(
        rest.post("/condition", json={"tenantId": "t", "withoutTenantId": True}),
        400,
        "InvalidRequestException",
        "withoutTenantId",
    )
    _error(
        rest.post("/condition", json={"variables": []}),
        400,
        "InvalidRequestException",
        "'variables'",
    )


EVENT_SUBSCRIPTION = {
    "id",
    "eventType",
    "eventName",
    "executionId",
    "processInstanceId",
    "activityId",
    "createdDate",
    "tenantId",
}


def subscriptions_of(client: httpx.Client, instance_id: str) -> list[tuple[str, str, Any]]:
    found = _json(client.get("/event-subscription", params={"processInstanceId": instance_id}))
    for entry in found:
        assert set(entry) == EVENT_SUBSCRIPTION
        assert entry["processInstanceId"] == instance_id
    return sorted((e["eventType"], e["activityId"], e["eventName"]) for e in found)


def test_event_subscriptions_show_the_conditional_waits_while_they_last(
    rest: httpx.Client,
) -> None:
    instance_id = started_watch(rest, stock=0, amount=5)
    assert subscriptions_of(rest, instance_id) == [
        ("conditional", "Event_Cancelled", None),
        ("conditional", "StartEvent_Note", None),
    ]
    by_type = {"processInstanceId": instance_id, "eventType": "conditional"}
    assert _json(rest.get("/event-subscription/count", params=by_type)) == {"count": 2}
    [note] = _json(
        rest.get("/event-subscription", params={**by_type, "activityId": "StartEvent_Note"})
    )
    assert note["executionId"] == instance_id  # the process's own scope waits
    complete(rest, instance_id, "Task_Review")
    assert subscriptions_of(rest, instance_id) == [
        ("conditional", "Event_InStock", None),
        ("conditional", "StartEvent_Note", None),
    ]
    [wait] = _json(
        rest.get("/event-subscription", params={**by_type, "activityId": "Event_InStock"})
    )
    tree = _json(rest.get(f"/process-instance/{instance_id}/activity-instances"))
    [catch] = tree["childActivityInstances"]
    assert wait["executionId"] in catch["executionIds"]
    _no_content(rest.put(f"/process-instance/{instance_id}/variables/stock", json={"value": 5}))
    assert subscriptions_of(rest, instance_id) == []
    assert _json(rest.get("/event-subscription/count", params=by_type)) == {"count": 0}
