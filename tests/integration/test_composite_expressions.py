"""Composite expressions (text mixed with `${...}` parts) over the real HTTP surface: a
multi-instance user task named `Review ${loopCounter}` with assignee `kermit_${loopCounter}`,
composite candidates, due and follow-up dates and priority; an external task with a composite
topic and priority and a `${var}oque` input parameter; a message named `order-${orderId}`
correlated over /engine-rest; an escaped `\\${...}` kept as text. Each value is read back from
the REST answers (tasks, external tasks, the activity-instance tree, history) as Camunda 7
gives them and the console's inspector shows them, and a bad part is refused at deployment
naming the file, line, element and attribute."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.conftest import VIEWPORT
from tests.server import PASSWORD, LiveServer, login_token

MODEL = Path(__file__).parent.parent / "data" / "bpmn" / "composite_expressions.bpmn"


@pytest.fixture
def rest(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("admin", PASSWORD), timeout=30
    ) as client:
        yield client


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if status != 204 else None


def deploy(client: httpx.Client, name: str, xml: str) -> httpx.Response:
    files = [("data", (name, xml.encode(), "application/octet-stream"))]
    return client.post("/deployment/create", data={"deployment-name": name}, files=files)


def typed(value: Any, type_: str) -> dict[str, Any]:
    return {"value": value, "type": type_}


def started(client: httpx.Client) -> str:
    ok(deploy(client, "composite_expressions.bpmn", MODEL.read_text()))
    variables = {
        "region": typed("north", "String"),
        "base": typed("2026-12-24", "String"),
        "level": typed(4, "Integer"),
        "var": typed("Tab", "String"),
        "count": typed(None, "Null"),
        "orderId": typed("A-17", "String"),
        "owner": typed("piggy", "String"),
    }
    body = {"variables": variables}
    instance = ok(client.post("/process-definition/key/composite_review/start", json=body))
    instance_id: str = instance["id"]
    return instance_id


def tasks(client: httpx.Client, instance_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ok(
        client.get(
            "/task",
            params={"processInstanceId": instance_id, "sortBy": "name", "sortOrder": "asc"},
        )
    )
    return found


def tree_names(client: httpx.Client, instance_id: str) -> list[tuple[str, str | None]]:
    """(activityId, activityName) of every activity instance below the process instance."""
    tree = ok(client.get(f"/process-instance/{instance_id}/activity-instances"))
    found: list[tuple[str, str | None]] = []
    todo = list(tree["childActivityInstances"])
    while todo:
        entry = todo.pop()
        found.append((entry["activityId"], entry["activityName"]))
        todo.extend(entry["childActivityInstances"])
    return sorted(found, key=lambda pair: (pair[0], pair[1] or ""))


def history_names(client: httpx.Client, instance_id: str, activity_id: str) -> list[str | None]:
    visits = ok(
        client.get(
            "/history/activity-instance",
            params={"processInstanceId": instance_id, "activityId": activity_id},
        )
    )
    return sorted(visit["activityName"] for visit in visits if visit["activityId"] == activity_id)


def identity_links(client: httpx.Client, task_id: str) -> set[tuple[str, str | None, str | None]]:
    links = ok(client.get(f"/task/{task_id}/identity-links"))
    return {(link["type"], link["userId"], link["groupId"]) for link in links}


def test_composite_texts_through_rest_and_history(rest: httpx.Client) -> None:
    instance_id = started(rest)

    # The multi-instance user task: one task per iteration, each with its evaluated name,
    # assignee, candidates, dates and priority.
    reviews = tasks(rest, instance_id)
    assert [task["name"] for task in reviews] == ["Review 0", "Review 1", "Review 2"]
    assert [task["assignee"] for task in reviews] == ["kermit_0", "kermit_1", "kermit_2"]
    for task in reviews:
        assert task["due"] == "2026-12-24T10:00:00.000+0000"
        assert task["followUp"] == "2026-12-24T09:30:00.000+0000"
        assert task["priority"] == 40
    counter = reviews[1]["name"].rsplit(" ", 1)[1]
    assert identity_links(rest, reviews[1]["id"]) >= {
        ("assignee", "kermit_1", None),
        ("candidate", f"gonzo_{counter}", None),
        ("candidate", "fozzie", None),
        ("candidate", None, "team-north"),
    }
    by_name = ok(rest.get("/task", params={"processInstanceId": instance_id, "name": "Review 2"}))
    assert [task["assignee"] for task in by_name] == ["kermit_2"]
    grouped = {"candidateGroup": "team-north", "includeAssignedTasks": "true"}
    assert len(ok(rest.get("/task", params=grouped))) == 3

    # The activity-instance tree and the history show the evaluated names of the iterations;
    # the multi-instance body is named as written, as Camunda names it.
    tree = tree_names(rest, instance_id)
    assert tree == [
        ("Task_Review", "Review 0"),
        ("Task_Review", "Review 1"),
        ("Task_Review", "Review 2"),
        ("Task_Review#multiInstanceBody", "Review ${loopCounter}"),
    ]
    assert history_names(rest, instance_id, "Task_Review") == ["Review 0", "Review 1", "Review 2"]
    named = ok(
        rest.get(
            "/history/activity-instance",
            params={"processInstanceId": instance_id, "activityName": "Review 1"},
        )
    )
    assert [visit["assignee"] for visit in named] == ["kermit_1"]

    for task in reviews:
        ok(rest.post(f"/task/{task['id']}/complete", json={}), 204)
    historic_tasks = ok(
        rest.get("/history/task", params={"processInstanceId": instance_id, "finished": "true"})
    )
    assert sorted(task["name"] for task in historic_tasks) == ["Review 0", "Review 1", "Review 2"]
    assert sorted(task["assignee"] for task in historic_tasks) == [
        "kermit_0",
        "kermit_1",
        "kermit_2",
    ]

    # The external task: its topic and priority are composites, its input parameter too.
    assert ok(rest.get("/external-task", params={"topicName": "ship-${region}"})) == []
    [external] = ok(rest.get("/external-task", params={"processInstanceId": instance_id}))
    assert external["topicName"] == "ship-north"
    assert external["priority"] == 14
    fetch = {
        "workerId": "shipper",
        "maxTasks": 5,
        "topics": [{"topicName": "ship-north", "lockDuration": 60000}],
    }
    [locked] = ok(rest.post("/external-task/fetchAndLock", json=fetch))
    assert locked["variables"]["greeting"]["value"] == "Taboque"
    assert locked["variables"]["plain"]["value"] == "costs $5"
    assert tree_names(rest, instance_id) == [("Task_Ship", "Ship to north")]
    done = {"workerId": "shipper", "variables": {}}
    ok(rest.post(f"/external-task/{locked['id']}/complete", json=done), 204)
    assert ok(rest.get(f"/process-instance/{instance_id}/variables/shipped"))["value"] == (
        "Taboque:  of north"
    )

    # The message catch waits for `order-A-17`: the subscription, the tree and a correlation
    # by that name show it; the text as written matches nothing.
    [subscription] = ok(rest.get("/event-subscription", params={"processInstanceId": instance_id}))
    assert subscription["eventName"] == "order-A-17"
    assert tree_names(rest, instance_id) == [("Event_Paid", "Wait for A-17")]
    unmatched = rest.post("/message", json={"messageName": "order-${orderId}"})
    assert unmatched.status_code == 400, unmatched.text
    assert "order-${orderId}" in unmatched.json()["message"]
    ok(rest.post("/message", json={"messageName": "order-A-17"}), 204)
    assert history_names(rest, instance_id, "Event_Paid") == ["Wait for A-17"]

    # An escaped `\${` stays text; a single expression keeps its value (the owner).
    [approve] = tasks(rest, instance_id)
    assert approve["name"] == "Approve ${literally} for A-17"
    assert approve["assignee"] == "piggy"
    assert approve["priority"] == 4
    ok(rest.post(f"/task/{approve['id']}/complete", json={}), 204)
    finished = ok(rest.get(f"/history/process-instance/{instance_id}"))
    assert finished["state"] == "COMPLETED"
    assert history_names(rest, instance_id, "Task_Approve") == ["Approve ${literally} for A-17"]


def test_a_bad_part_is_refused_at_deployment(rest: httpx.Client) -> None:
    text = MODEL.read_text()
    cases = [
        ('camunda:assignee="kermit_${loopCounter}"', 'camunda:assignee="kermit_${loopCounter +}"'),
        ('name="Review ${loopCounter}"', 'name="Review ${loopCounter"'),
        ('camunda:topic="ship-${region}"', 'camunda:topic="ship-${region.x()}"'),
        ('camunda:taskPriority="1${level}"', 'camunda:taskPriority="1${level;}"'),
        ('name="order-${orderId}"', 'name="order-${orderId}#{x}"'),
    ]
    wanted = [
        ("camunda:assignee", "Task_Review", 8),
        ("name", "Task_Review", 8),
        ("camunda:topic", "Task_Ship", 15),
        ("camunda:taskPriority", "Task_Ship", 15),
        ("bpmn:message 'Message_Order'", "Event_Paid", 29),
    ]
    for (good, bad), (attribute, element_id, line) in zip(cases, wanted, strict=True):
        assert good in text
        refused = deploy(rest, "bad_composite.bpmn", text.replace(good, bad))
        assert refused.status_code == 400, refused.text
        message = refused.json()["message"]
        assert "bad_composite.bpmn" in message, message
        assert f"line {line}" in message, message
        assert element_id in message, message
        assert attribute in message, message
    # Literal `$` text without braces is no expression.
    cheap = text.replace('name="Ship to ${region}"', 'name="Ship for $5 {fast}"')
    ok(deploy(rest, "cheap.bpmn", cheap))


@pytest.mark.browser
def test_the_console_shows_the_evaluated_names(
    server: LiveServer, rest: httpx.Client, browser: Browser
) -> None:
    instance_id = started(rest)
    context = browser.new_context(viewport=VIEWPORT, base_url=server.url)
    try:
        form = context.request.get("/login")
        signed_in = context.request.post(
            "/login",
            form={
                "name": "operator",
                "password": PASSWORD,
                "next": "/",
                "login_token": login_token(form.text()),
            },
        )
        assert signed_in.ok, signed_in.status
        page = context.new_page()
        page.goto(f"/instances/{instance_id}")
        tasks_shown = page.locator("#user_tasks-body li[data-task] strong")
        expect(tasks_shown).to_have_count(3)
        assert sorted(tasks_shown.all_inner_texts()) == ["Review 0", "Review 1", "Review 2"]
        visits = page.locator('#history-body li[data-node="Task_Review"] strong')
        expect(visits).to_have_count(4)  # the body and its three iterations
        assert sorted(visits.all_inner_texts()) == [
            "Review ${loopCounter}",
            "Review 0",
            "Review 1",
            "Review 2",
        ]
    finally:
        context.close()


SIGNALS = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Definitions_alarm"
    targetNamespace="http://example.com/bpmn">
  <bpmn:signal id="Signal_Alarm" name="alarm-${zone}" />
  <bpmn:process id="zone_alarm" isExecutable="true">
    <bpmn:startEvent id="Start"><bpmn:outgoing>F1</bpmn:outgoing></bpmn:startEvent>
    <bpmn:userTask id="Task_Check" name="Check ${zone}">
      <bpmn:extensionElements>
        <camunda:formData>
          <camunda:formField id="label" type="string"
              defaultValue="Zone ${zone} after ${minutes} min" />
        </camunda:formData>
      </bpmn:extensionElements>
      <bpmn:incoming>F1</bpmn:incoming><bpmn:outgoing>F2</bpmn:outgoing>
    </bpmn:userTask>
    <bpmn:boundaryEvent id="Timer_Late" attachedToRef="Task_Check" cancelActivity="false">
      <bpmn:outgoing>F4</bpmn:outgoing>
      <bpmn:timerEventDefinition>
        <bpmn:timeDuration>PT${minutes}M</bpmn:timeDuration>
      </bpmn:timerEventDefinition>
    </bpmn:boundaryEvent>
    <bpmn:intermediateCatchEvent id="Event_Alarm">
      <bpmn:incoming>F2</bpmn:incoming><bpmn:outgoing>F3</bpmn:outgoing>
      <bpmn:signalEventDefinition signalRef="Signal_Alarm" />
    </bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="End"><bpmn:incoming>F3</bpmn:incoming></bpmn:endEvent>
    <bpmn:endEvent id="End_Late"><bpmn:incoming>F4</bpmn:incoming></bpmn:endEvent>
    <bpmn:sequenceFlow id="F1" sourceRef="Start" targetRef="Task_Check" />
    <bpmn:sequenceFlow id="F2" sourceRef="Task_Check" targetRef="Event_Alarm" />
    <bpmn:sequenceFlow id="F3" sourceRef="Event_Alarm" targetRef="End" />
    <bpmn:sequenceFlow id="F4" sourceRef="Timer_Late" targetRef="End_Late" />
  </bpmn:process>
</bpmn:definitions>
"""


def test_signal_names_timer_texts_and_form_defaults(rest: httpx.Client) -> None:
    ok(deploy(rest, "zone_alarm.bpmn", SIGNALS))
    body = {"variables": {"zone": typed("east", "String"), "minutes": typed(5, "Integer")}}
    instance_id = ok(rest.post("/process-definition/key/zone_alarm/start", json=body))["id"]
    [task] = tasks(rest, instance_id)
    assert task["name"] == "Check east"
    form = ok(rest.get(f"/task/{task['id']}/form-variables"))
    assert form["label"]["value"] == "Zone east after 5 min"
    # The boundary timer's duration `PT${minutes}M` is five minutes from the task's creation.
    [job] = ok(rest.get("/job", params={"processInstanceId": instance_id}))
    created = datetime.strptime(task["created"], "%Y-%m-%dT%H:%M:%S.%f%z")
    due = datetime.strptime(job["dueDate"], "%Y-%m-%dT%H:%M:%S.%f%z")
    assert due - created == timedelta(minutes=5)
    ok(rest.post(f"/task/{task['id']}/complete", json={}), 204)
    [subscription] = ok(rest.get("/event-subscription", params={"processInstanceId": instance_id}))
    assert (subscription["eventType"], subscription["eventName"]) == ("signal", "alarm-east")
    ok(rest.post("/signal", json={"name": "alarm-${zone}"}), 204)
    assert ok(rest.get(f"/history/process-instance/{instance_id}"))["state"] == "ACTIVE"
    ok(rest.post("/signal", json={"name": "alarm-east"}), 204)
    assert ok(rest.get(f"/history/process-instance/{instance_id}"))["state"] == "COMPLETED"
