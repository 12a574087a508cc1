"""Errors as a contract: JSON `{type, message, detail}` with 400/401/404/409, invariant violations
named in a header, validation before anything is written; and idempotent replays."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.api import processes
from tests.api.helpers import fetch, open_task, start
from tests.server import PASSWORD, LiveServer


def error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == {"type", "message", "detail"}
    return body


def count(client: httpx.Client, **filters: str) -> int:
    return len(client.get("/instances", params={"limit": 500, **filters}).json()["items"])


def test_bad_json_and_fields_are_400_naming_the_field(operator: httpx.Client) -> None:
    before = count(operator, definition_key="review")
    bad_json = operator.post(
        "/definitions/key/review/start",
        content=b'{"variables": ',
        headers={"content-type": "application/json"},
    )
    assert "not valid JSON" in error(bad_json, 400)["message"]
    not_object = operator.post("/definitions/key/review/start", json=[1, 2])
    assert "JSON object" in error(not_object, 400)["message"]
    wrong = error(operator.post("/definitions/key/review/start", json={"business_key": 5}), 400)
    assert "'business_key'" in wrong["message"] and wrong["detail"]["field"] == "business_key"
    unknown = error(operator.post("/definitions/key/review/start", json={"bk": "x"}), 400)
    assert "'bk'" in unknown["message"]
    bad_type = operator.post(
        "/definitions/key/review/start",
        json={"variables": {"a": 1, "x": {"type": "weird", "value": 1}}},
    )
    assert "'weird'" in error(bad_type, 400)["message"]
    bad_value = operator.post(
        "/definitions/key/review/start",
        json={"variables": {"n": {"type": "integer", "value": "ten"}}},
    )
    assert error(bad_value, 400)["detail"]["field"] == "variables.n"
    assert count(operator, definition_key="review") == before

    topics = operator.post(
        "/external-tasks/fetch-and-lock",
        json={"worker_id": "w", "topics": [{"topic": "work", "lock_duration_ms": "long"}]},
    )
    assert error(topics, 400)["detail"]["field"] == "topics[0].lock_duration_ms"
    missing = operator.post("/external-tasks/fetch-and-lock", json={"topics": []})
    assert error(missing, 400)["detail"]["field"] == "worker_id"


def test_bad_query_parameters_are_400(viewer: httpx.Client) -> None:
    assert error(viewer.get("/instances", params={"limit": "many"}), 400)["detail"] == {
        "field": "limit"
    }
    assert error(viewer.get("/instances", params={"limit": 0}), 400)
    assert "'stat'" in error(viewer.get("/instances", params={"stat": "Active"}), 400)["message"]
    assert error(viewer.get("/instances", params={"after": "@@@"}), 400)
    assert error(viewer.get("/instances", params={"started_after": "yesterday"}), 400)
    assert error(viewer.get("/instances", params={"var": "no-colon"}), 400)
    assert error(viewer.get("/instances", params={"version": 1}), 400)
    assert error(viewer.get("/user-tasks", params={"instance_id": "x"}), 400)


def test_unknown_ids_are_404(operator: httpx.Client) -> None:
    missing = str(uuid.uuid4())
    for path in (
        f"/instances/{missing}",
        f"/instances/{missing}/tokens",
        f"/instances/{missing}/history",
        f"/instances/{missing}/variables",
        "/instances/not-an-id",
        "/definitions/nope:1:x",
        "/definitions/nope:1:x/xml",
        "/definitions/key/nope",
        f"/user-tasks/{missing}",
        f"/external-tasks/{missing}",
        f"/incidents/{missing}",
        f"/jobs/{missing}",
    ):
        assert error(operator.get(path), 404)["type"] == "NotFound", path
    for path, body in (
        ("/definitions/key/nope/start", {}),
        ("/definitions/key/review/versions/99/start", {}),
        (f"/user-tasks/{missing}/complete", {}),
        (f"/external-tasks/{missing}/complete", {"worker_id": "w"}),
        (f"/incidents/{missing}/retry", {}),
        (f"/jobs/{missing}/execute", {}),
        (f"/instances/{missing}/cancel", {}),
    ):
        assert error(operator.post(path, json=body), 404)["type"] == "NotFound", path
    assert error(operator.post("/messages", json={"message_name": "nobody"}), 404)


def test_conflicts_are_409_with_the_invariant_kind(operator: httpx.Client) -> None:
    start(operator, "external")
    (task,) = fetch(operator, "holder")
    stolen = operator.post(f"/external-tasks/{task['id']}/complete", json={"worker_id": "thief"})
    body = error(stolen, 409)
    assert body["type"] == "InvariantViolation"
    assert stolen.headers["X-Invariant-Violation"] == "ExternalTaskLeaseConflict"
    assert body["detail"]["kind"] == "ExternalTaskLeaseConflict"
    operator.post(f"/external-tasks/{task['id']}/complete", json={"worker_id": "holder"})

    instance = start(operator, "review")
    task = open_task(operator, instance["id"])
    assert operator.post(f"/user-tasks/{task['id']}/complete").status_code == 200
    twice = operator.post(f"/user-tasks/{task['id']}/complete")
    assert error(twice, 409)["type"] == "InvariantViolation"
    assert twice.headers["X-Invariant-Violation"] == "TokenFinalizedTwice"

    suspended = start(operator, "waiting")
    operator.post(f"/instances/{suspended['id']}/suspend")
    again = operator.post(f"/instances/{suspended['id']}/suspend")
    assert error(again, 409)["type"] == "Suspended"
    assert "X-Invariant-Violation" not in again.headers
    operator.post(f"/instances/{suspended['id']}/cancel")


def test_credentials(api: LiveServer) -> None:
    url = f"{api.url}/api/v1/definitions"
    none = httpx.get(url)
    assert error(none, 401)["type"] == "Unauthorized"
    assert none.headers["WWW-Authenticate"].startswith("Basic")
    assert error(httpx.get(url, headers={"Authorization": "Bearer il_wrong"}), 401)
    assert error(httpx.get(url, auth=("viewer", "wrong-password")), 401)
    assert error(httpx.get(url, headers={"Authorization": "Basic !!!"}), 401)
    assert httpx.get(url, auth=("viewer", PASSWORD)).status_code == 200
    assert httpx.get(url, headers=api.bearer("viewer")).status_code == 200
    basic_operator = httpx.post(
        f"{api.url}/api/v1/definitions/key/straight/start", auth=("operator", PASSWORD)
    )
    assert basic_operator.status_code == 201


def test_bad_bpmn_is_400_naming_file_line_and_element(admin: httpx.Client) -> None:
    broken = processes.xml(processes.timer("broken")).replace("PT1H", "soon-ish")
    response = admin.post(
        "/deployments",
        files=[
            ("files", ("good.bpmn", processes.xml(processes.straight("good")).encode())),
            ("files", ("broken.bpmn", broken.encode())),
        ],
    )
    body = error(response, 400)
    assert body["type"] == "ModelError"
    assert body["detail"]["file"] == "broken.bpmn" and body["detail"]["element_id"] == "later"
    assert body["detail"]["line"] > 1
    assert "line" in body["message"] and "'later'" in body["message"]
    assert admin.get("/definitions", params={"key": "good"}).json()["items"] == []
    malformed = admin.post("/deployments", files={"files": ("x.bpmn", b"<bpmn:definitions")})
    assert error(malformed, 400)["detail"]["file"] == "x.bpmn"
    assert error(admin.post("/deployments", json={}), 400)
    assert error(admin.post("/deployments", data={"name": "no files"}, files={}), 400)


def test_idempotent_start_replays_the_same_response(operator: httpx.Client) -> None:
    key = {"Idempotency-Key": f"start-{uuid.uuid4()}"}
    body = {"business_key": "idem-start", "variables": {"n": 1}}
    first = operator.post("/definitions/key/review/start", json=body, headers=key)
    second = operator.post("/definitions/key/review/start", json=body, headers=key)
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert count(operator, business_key="idem-start") == 1
    reused = operator.post("/instances/" + first.json()["id"] + "/cancel", headers=key)
    assert error(reused, 409)["type"] == "Conflict"


def test_idempotent_task_completion(operator: httpx.Client) -> None:
    first_instance = start(operator, "review")
    task = open_task(operator, first_instance["id"])
    key = {"Idempotency-Key": f"complete-{uuid.uuid4()}"}
    first = operator.post(f"/user-tasks/{task['id']}/complete", headers=key)
    second = operator.post(f"/user-tasks/{task['id']}/complete", headers=key)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    other = open_task(operator, start(operator, "review")["id"])
    misused = operator.post(f"/user-tasks/{other['id']}/complete", headers=key)
    assert error(misused, 422)["type"] == "IdempotencyKeyReused"
    assert operator.get(f"/user-tasks/{other['id']}").json()["state"] == "Open"


def test_idempotent_fetch_and_job_execution(operator: httpx.Client) -> None:
    start(operator, "external", business_key="idem-fetch")
    key = {"Idempotency-Key": f"fetch-{uuid.uuid4()}"}
    body = {"worker_id": "idem", "topics": [{"topic": "work", "lock_duration_ms": 60_000}]}
    first = operator.post("/external-tasks/fetch-and-lock", json=body, headers=key)
    second = operator.post("/external-tasks/fetch-and-lock", json=body, headers=key)
    assert first.json() == second.json() and len(first.json()["items"]) == 1
    operator.post(
        f"/external-tasks/{first.json()['items'][0]['id']}/complete", json={"worker_id": "idem"}
    )
    empty_key = {"Idempotency-Key": f"fetch-{uuid.uuid4()}"}
    nothing = {**body, "topics": [{"topic": "none-yet", "lock_duration_ms": 1000}]}
    assert (
        operator.post("/external-tasks/fetch-and-lock", json=nothing, headers=empty_key).json()[
            "items"
        ]
        == []
    )
    operator.post("/definitions/key/external/start")
    retried = {**nothing, "topics": [{"topic": "work", "lock_duration_ms": 1000}]}
    late = operator.post("/external-tasks/fetch-and-lock", json=retried, headers=empty_key)
    assert len(late.json()["items"]) == 1

    instance = start(operator, "timer")
    (job,) = operator.get("/jobs", params={"instance_id": instance["id"]}).json()["items"]
    key = {"Idempotency-Key": f"job-{uuid.uuid4()}"}
    runs = [operator.post(f"/jobs/{job['id']}/execute", headers=key) for _ in range(2)]
    assert [r.status_code for r in runs] == [200, 200]
    assert runs[0].json() == runs[1].json() and runs[0].json()["outcome"] == "executed"


@pytest.mark.parametrize("header", ["", "k" * 201])
def test_bad_idempotency_keys_are_400(operator: httpx.Client, header: str) -> None:
    before = count(operator, definition_key="straight")
    response = operator.post("/definitions/key/straight/start", headers={"Idempotency-Key": header})
    assert error(response, 400)["detail"]["field"] == "Idempotency-Key"
    assert count(operator, definition_key="straight") == before
