"""Batches over /api/v1: create one over ids, follow it to its end, and the refusals (a bad type
or payload names its field; history deletion needs an administrator). Answers match the
OpenAPI document."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.api.test_openapi import validate
from tests.server import LiveServer


@pytest.fixture(scope="module")
def doc(viewer: httpx.Client) -> dict[str, Any]:
    body: dict[str, Any] = viewer.get("/openapi.json").json()
    return body


def _waiting(api: LiveServer, count: int) -> list[str]:
    return [str(api.engine.start_latest("waiting").id) for _ in range(count)]


def test_a_batch_runs_to_its_end_and_reads_as_documented(
    api: LiveServer, doc: dict[str, Any], operator: httpx.Client, viewer: httpx.Client
) -> None:
    ids = _waiting(api, 2)
    missing = "00000000-0000-4000-8000-0000000000aa"
    created = operator.post(
        "/batches", json={"type": "suspend-instances", "items": [*ids, missing]}
    )
    assert created.status_code == 201, created.text
    validate(doc, "post", "/batches", created)
    batch = created.json()
    assert (batch["type"], batch["total"], batch["created_by"]) == (
        "suspend-instances",
        3,
        "operator-token",
    )
    deadline = time.monotonic() + 20
    while viewer.get(f"/batches/{batch['id']}").json()["state"] != "Completed":
        assert time.monotonic() < deadline, "the job executor did not finish the batch"
        time.sleep(0.05)
    done = viewer.get(f"/batches/{batch['id']}")
    validate(doc, "get", "/batches/{id}", done)
    assert (done.json()["done"], done.json()["failed"], done.json()["remaining"]) == (2, 1, 0)
    assert done.json()["failures"] == [
        {"item": missing, "error": f"process instance {missing} does not exist", "attempts": 1}
    ]
    assert {api.engine.instance(i).state.value for i in ids} == {"Suspended"}
    listed = viewer.get("/batches", params={"type": "suspend-instances", "limit": 1})
    validate(doc, "get", "/batches", listed)
    assert [b["id"] for b in listed.json()["items"]] == [batch["id"]]
    retried = operator.post(f"/batches/{batch['id']}/retry")
    validate(doc, "post", "/batches/{id}/retry", retried)
    assert retried.json()["failed"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "reboot", "items": ["x"]}, "type"),
        ({"type": "set-job-retries", "items": []}, "retries"),
        ({"type": "set-job-retries", "items": [], "payload": {"retries": 1}}, "items"),
        ({"type": "cancel-instances", "items": "x"}, "items"),
        ({"type": "cancel-instances", "items": ["x"], "extra": 1}, "extra"),
    ],
)
def test_a_bad_batch_is_a_400_naming_the_field(
    operator: httpx.Client, body: dict[str, Any], field: str
) -> None:
    before = [b["id"] for b in operator.get("/batches").json()["items"]]
    refused = operator.post("/batches", json=body)
    assert refused.status_code == 400, refused.text
    assert refused.json()["detail"]["field"] == field
    assert [b["id"] for b in operator.get("/batches").json()["items"]] == before


def test_deleting_history_needs_an_administrator(
    api: LiveServer, operator: httpx.Client, admin: httpx.Client
) -> None:
    [instance] = _waiting(api, 1)
    api.engine.instance(instance).cancel()
    body = {"type": "delete-history", "items": [instance]}
    assert operator.post("/batches", json=body).status_code == 403
    created = admin.post("/batches", json=body)
    assert created.status_code == 201, created.text
    assert created.json()["created_by"] == "admin-token"
