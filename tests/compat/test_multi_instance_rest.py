"""Multi-instance through /engine-rest as Camunda shows it: the body is an activity instance
`<activity id>#multiInstanceBody` of type multiInstanceBody, its iterations are its children with
the activity's own id and type, in the live tree and in the history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from engine.builder import ProcessBuilder
from tests.compat import fields
from tests.compat.conftest import deploy, start
from tests.server import LiveServer

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def _has(entry: dict[str, Any], expected: set[str]) -> None:
    assert set(entry) == expected, set(entry) ^ expected


def _shape(entry: dict[str, Any]) -> Any:
    """(activityId, activityType, children), children sorted."""
    children = sorted(_shape(c) for c in entry["childActivityInstances"])
    return (entry["activityId"], entry["activityType"], children)


def test_the_body_and_its_iterations_in_the_activity_instance_tree(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("contract_review.bpmn", (DATA / "contract_review.bpmn").read_text()))
    variables = {
        "reviewers": {"value": '["ann", "bob"]', "type": "Json"},
        "quorum": {"value": 2, "type": "Integer"},
        "copies": {"value": 1, "type": "Integer"},
    }
    instance = start(operator, "contract-review", variables)
    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    [body] = tree["childActivityInstances"]
    _has(body, fields.ACTIVITY_INSTANCE)
    assert (body["activityId"], body["activityType"], body["activityName"]) == (
        "Task_Review#multiInstanceBody",
        "multiInstanceBody",
        "Review contract",
    )
    assert body["parentActivityInstanceId"] == instance["id"]
    iterations = body["childActivityInstances"]
    assert [(i["activityId"], i["activityType"]) for i in iterations] == [
        ("Task_Review", "userTask"),
        ("Task_Review", "userTask"),
    ]
    for iteration in iterations:
        _has(iteration, fields.ACTIVITY_INSTANCE)
        assert iteration["parentActivityInstanceId"] == body["id"]

    tasks = operator.get("/task", params={"processInstanceId": instance["id"]}).json()
    assert sorted(t["assignee"] for t in tasks) == ["ann", "bob"]
    for task in tasks:
        done = operator.post(f"/task/{task['id']}/complete", json={})
        assert done.status_code == 204, done.text

    history = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "sortBy": "startTime", "sortOrder": "asc"},
    ).json()
    for entry in history:
        _has(entry, fields.HISTORIC_ACTIVITY_INSTANCE)
    bodies = [h for h in history if h["activityType"] == "multiInstanceBody"]
    assert sorted((b["activityId"], b["endTime"] is None) for b in bodies) == [
        ("Task_Review#multiInstanceBody", False),
        ("Task_Sign#multiInstanceBody", True),
    ]
    review_body = next(b for b in bodies if b["activityId"].startswith("Task_Review"))
    reviews = [h for h in history if h["activityId"] == "Task_Review"]
    assert len(reviews) == 2
    assert {r["parentActivityInstanceId"] for r in reviews} == {review_body["id"]}
    assert {r["activityType"] for r in reviews} == {"userTask"}
    assert review_body["parentActivityInstanceId"] == instance["id"]
    only_bodies = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "activityId": "Task_Sign#multiInstanceBody"},
    ).json()
    assert [(b["activityId"], b["activityType"]) for b in only_bodies] == [
        ("Task_Sign#multiInstanceBody", "multiInstanceBody")
    ]


def test_nested_bodies_in_the_activity_instance_tree(
    rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("batch_approval.bpmn", (DATA / "batch_approval.bpmn").read_text()))
    variables = {
        "batches": {"value": '["ann", "bob"]', "type": "Json"},
        "itemsPerBatch": {"value": 2, "type": "Integer"},
    }
    instance = start(operator, "batch-approval", variables)
    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    item_body: tuple[str, str, list[Any]] = (
        "Task_Item#multiInstanceBody",
        "multiInstanceBody",
        [("Task_Item", "userTask", [])] * 2,
    )
    batch = ("SubProcess_Batch", "subProcess", [item_body])
    assert tree["activityId"] == tree["processDefinitionId"]
    assert _shape(tree) == (
        tree["activityId"],
        "processDefinition",
        [("SubProcess_Batch#multiInstanceBody", "multiInstanceBody", [batch, batch])],
    )


def test_a_standard_loop_shows_its_current_run(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    server.engine.deploy(
        ProcessBuilder("ask-rest")
        .start_event("start")
        .sub_process("round", "Round")
        .start_event("round_start", parent="round")
        .user_task("ask", "Ask", parent="round")
        .standard_loop("ask", maximum=2)
        .end_event("round_end", parent="round")
        .chain("round_start", "ask", "round_end")
        .end_event("end")
        .chain("start", "round", "end")
        .build()
    )
    instance = start(operator, "ask-rest")
    for _ in range(2):
        tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
        [sub] = tree["childActivityInstances"]
        assert _shape(sub) == ("round", "subProcess", [("ask", "userTask", [])])
        [ask] = sub["childActivityInstances"]
        assert ask["parentActivityInstanceId"] == sub["id"]
        [task] = operator.get("/task", params={"processInstanceId": instance["id"]}).json()
        assert operator.post(f"/task/{task['id']}/complete", json={}).status_code == 204
    history = rest.get(f"/history/process-instance/{instance['id']}").json()
    assert history["state"] == "COMPLETED"
