"""A page of historic activity instances filtered by activityType (told from the model, not a
column) is read in batches: across batch boundaries it shows exactly the page of the whole list."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.camunda import instances
from tests.compat import processes
from tests.compat.conftest import deploy, start


def _ids(client: httpx.Client, **params: Any) -> list[str]:
    response = client.get("/history/activity-instance", params=params)
    assert response.status_code == 200, response.text
    return [entry["id"] for entry in response.json()]


def test_pages_filtered_by_type_cross_batches(
    rest: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy(rest, ("approval.bpmn", processes.approval()))
    started = [start(rest, "approval")["id"] for _ in range(5)]
    mine = {"activityType": "userTask", "sortBy": "startTime", "sortOrder": "asc"}
    visits = rest.get("/history/activity-instance", params=mine).json()
    whole = [v["id"] for v in visits]
    assert {v["processInstanceId"] for v in visits} >= set(started)
    assert all(v["activityType"] == "userTask" for v in visits)
    everything = rest.get("/history/activity-instance/count").json()["count"]
    assert everything > len(whole) >= 5

    monkeypatch.setattr(instances, "ACTIVITY_BATCH", 2)
    assert _ids(rest, **mine) == whole
    assert _ids(rest, **mine, firstResult=1, maxResults=3) == whole[1:4]
    assert _ids(rest, **mine, firstResult=3, maxResults=100) == whole[3:]
    assert _ids(rest, **mine, firstResult=len(whole), maxResults=2) == []
    count = rest.get("/history/activity-instance/count", params={"activityType": "userTask"})
    assert count.json() == {"count": len(whole)}


def test_counts_without_model_checks_count_in_the_database(rest: httpx.Client) -> None:
    deploy(rest, ("approval.bpmn", processes.approval()))
    for _ in range(3):
        start(rest, "approval")
    for flag in ("finished", "unfinished"):
        listed = _ids(rest, **{flag: "true"})
        counted = rest.get("/history/activity-instance/count", params={flag: "true"}).json()
        assert counted == {"count": len(listed)} and len(listed) >= 3
