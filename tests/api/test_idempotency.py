"""Idempotency keys belong to the caller and to the request they first came with: another
caller's same key is another key, and the same caller's key with another request is a 422 that
changes nothing."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from engine.errors import Conflict, IdempotencyKeyReused
from tests.api import processes
from tests.server import LiveServer


def count(client: httpx.Client, **filters: str) -> int:
    return len(client.get("/instances", params={**filters, "limit": "100"}).json()["items"])


def key() -> dict[str, str]:
    return {"Idempotency-Key": f"k-{uuid.uuid4()}"}


def test_the_same_key_from_another_caller_is_another_key(
    operator: httpx.Client, admin: httpx.Client
) -> None:
    header = key()
    business_key = f"scoped-{uuid.uuid4()}"
    body = {"business_key": business_key}
    first = operator.post("/definitions/key/review/start", json=body, headers=header)
    other = admin.post("/definitions/key/review/start", json=body, headers=header)
    assert first.status_code == other.status_code == 201
    assert first.json()["id"] != other.json()["id"]
    again = operator.post("/definitions/key/review/start", json=body, headers=header)
    assert again.json() == first.json()
    assert count(admin, business_key=business_key) == 2


@pytest.mark.parametrize(
    "second",
    [
        {"business_key": "changed"},
        {"business_key": "same", "variables": {"n": 2}},
    ],
)
def test_the_same_key_with_a_different_body_is_422(
    operator: httpx.Client, second: dict[str, object]
) -> None:
    header = key()
    first = operator.post(
        "/definitions/key/review/start", json={"business_key": "same"}, headers=header
    )
    assert first.status_code == 201
    before = count(operator, definition_key="review")
    refused = operator.post("/definitions/key/review/start", json=second, headers=header)
    assert refused.status_code == 422
    assert refused.json()["type"] == "IdempotencyKeyReused"
    assert refused.json()["detail"]["idempotency_key"] == header["Idempotency-Key"]
    assert count(operator, definition_key="review") == before


def test_the_same_key_on_another_path_is_422(operator: httpx.Client) -> None:
    header = key()
    assert operator.post("/definitions/key/review/start", headers=header).status_code == 201
    before = count(operator, definition_key="straight")
    refused = operator.post("/definitions/key/straight/start", headers=header)
    assert refused.status_code == 422
    assert count(operator, definition_key="straight") == before


def test_a_fetch_replayed_by_another_caller_does_not_return_the_first_workers_tasks(
    operator: httpx.Client, admin: httpx.Client, api: LiveServer
) -> None:
    topic = f"idem-{uuid.uuid4().hex[:8]}"
    api.engine.deploy(processes.external(key=topic, topic=topic))
    api.engine.start_latest(topic)
    header = key()
    body = {"worker_id": "first", "topics": [{"topic": topic, "lock_duration_ms": 60_000}]}
    first = operator.post("/external-tasks/fetch-and-lock", json=body, headers=header)
    assert len(first.json()["items"]) == 1
    other_body = {**body, "worker_id": "second"}
    replayed = admin.post("/external-tasks/fetch-and-lock", json=other_body, headers=header)
    assert replayed.status_code == 200
    assert replayed.json()["items"] == []
    same_caller = operator.post("/external-tasks/fetch-and-lock", json=other_body, headers=header)
    assert same_caller.status_code == 422
    (task,) = api.engine.external_tasks(topic=topic)
    assert task.worker_id == "first"


def test_racing_repeats_of_one_request_start_one_instance(operator: httpx.Client) -> None:
    for _ in range(5):
        header = key()
        business_key = f"race-{uuid.uuid4()}"
        body = {"business_key": business_key}
        with ThreadPoolExecutor(8) as pool:
            futures = [
                pool.submit(
                    operator.post, "/definitions/key/review/start", json=body, headers=header
                )
                for _ in range(8)
            ]
            responses = [f.result() for f in futures]
        assert {r.status_code for r in responses} == {201}
        assert len({r.json()["id"] for r in responses}) == 1
        assert count(operator, business_key=business_key) == 1


def test_the_python_api_binds_a_key_to_the_command(api: LiveServer) -> None:
    engine = api.engine
    name = f"py-{uuid.uuid4()}"
    first = engine.start_latest("review", {"n": 1}, idempotency_key=name)
    assert engine.start_latest("review", {"n": 1}, idempotency_key=name).id == first.id
    with pytest.raises(IdempotencyKeyReused):
        engine.start_latest("review", {"n": 2}, idempotency_key=name)
    with pytest.raises(Conflict):
        engine.correlate_message("nothing", idempotency_key=name)


def test_a_repeated_upload_with_a_key_replays_and_another_upload_is_422(
    admin: httpx.Client,
) -> None:
    header = key()
    model = processes.straight(f"upload-{uuid.uuid4().hex[:8]}")
    xml = processes.xml(model).encode()
    upload = {"files": ("p.bpmn", xml, "application/xml")}
    first = admin.post("/deployments", files=upload, headers=header)
    again = admin.post("/deployments", files=upload, headers=header)
    assert first.status_code == again.status_code == 201, first.text
    assert first.json() == again.json()
    other = processes.xml(processes.straight(f"upload-{uuid.uuid4().hex[:8]}")).encode()
    refused = admin.post(
        "/deployments", files={"files": ("p.bpmn", other, "application/xml")}, headers=header
    )
    assert refused.status_code == 422, refused.text
    assert admin.get("/definitions", params={"key": model.key}).json()["items"]
