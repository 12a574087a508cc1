"""Small steps the API tests share."""

from __future__ import annotations

from typing import Any

import httpx


def start(client: httpx.Client, key: str, **body: Any) -> dict[str, Any]:
    response = client.post(f"/definitions/key/{key}/start", json=body)
    assert response.status_code == 201, response.text
    started: dict[str, Any] = response.json()
    return started


def open_task(client: httpx.Client, instance_id: str) -> dict[str, Any]:
    found = client.get("/user-tasks", params={"instance_id": instance_id}).json()["items"]
    assert len(found) == 1
    task: dict[str, Any] = found[0]
    return task


def fetch(client: httpx.Client, worker: str, topic: str = "work", **extra: Any) -> list[Any]:
    body = {"worker_id": worker, "topics": [{"topic": topic, "lock_duration_ms": 60_000}]}
    response = client.post("/external-tasks/fetch-and-lock", json={**body, **extra})
    assert response.status_code == 200, response.text
    items: list[Any] = response.json()["items"]
    return items
