"""A page of historic activity instances filtered by activityType (told from the model, not a
column) is read in batches: across batch boundaries it shows exactly the page of the whole list."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.camunda import instances
from engine.builder import ProcessBuilder
from tests.compat import processes
from tests.compat.conftest import deploy, start
from tests.server import LiveServer


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


def test_counts_filtered_on_the_model_equal_the_lists(
    server: LiveServer, rest: httpx.Client
) -> None:
    """activityType and completeScope are told from the model: their counts, alone, together
    and with SQL filters and paging parameters, are the lengths of the lists."""
    engine = server.engine
    engine.deploy(
        ProcessBuilder("quick").start_event("s").end_event("e").chain("s", "e").build(),
        ProcessBuilder("held")
        .start_event("s")
        .user_task("t")
        .end_event("e")
        .chain("s", "t", "e")
        .build(),
    )
    for _ in range(3):
        engine.start_latest("quick")
    held = [engine.start_latest("held") for _ in range(2)]
    held[0].cancel()
    cases: list[dict[str, str]] = [
        {"completeScope": "true"},
        {"completeScope": "false"},
        {"activityType": "noneEndEvent"},
        {"activityType": "noneEndEvent", "completeScope": "true"},
        {"activityType": "userTask", "completeScope": "false"},
        {"activityType": "userTask", "canceled": "true"},
        {"activityType": "startEvent", "finished": "true", "firstResult": "1", "maxResults": "1"},
        {"completeScope": "true", "processDefinitionId": held[1].info().definition_id},
    ]
    counted = []
    for case in cases:
        listed = _ids(rest, **{k: v for k, v in case.items() if k not in PAGING})
        count = rest.get("/history/activity-instance/count", params=case)
        assert count.status_code == 200, count.text
        assert count.json() == {"count": len(listed)}, case
        counted.append(len(listed))
    assert counted == [3, 7, 3, 3, 2, 1, 5, 0]


PAGING = ("firstResult", "maxResults")


def test_historic_instance_counts_from_summaries_equal_the_row_counts(
    server: LiveServer, rest: httpx.Client
) -> None:
    engine = server.engine
    engine.deploy(
        ProcessBuilder("quick").start_event("s").end_event("e").chain("s", "e").build(),
        ProcessBuilder("held")
        .start_event("s")
        .user_task("t")
        .end_event("e")
        .chain("s", "t", "e")
        .build(),
    )
    for _ in range(3):
        engine.start_latest("quick")
    held = [engine.start_latest("held") for _ in range(4)]
    held[0].cancel()
    held[1].suspend()
    flags = ["finished", "unfinished", "active", "suspended", "completed", "externallyTerminated"]
    cases: list[dict[str, str]] = [{}, {"processDefinitionKey": "held"}]
    cases += [{flag: "true"} for flag in flags]
    cases += [{flag: "true", "processDefinitionKey": "held"} for flag in flags]
    cases += [{"finished": "true", "completed": "true"}, {"unfinished": "true", "active": "true"}]
    # A filter no summary answers (every instance started after 2000) takes the row count.
    rows = {"startedAfter": "2000-01-01T00:00:00.000+0000"}
    counted = []
    for case in cases:
        summary = rest.get("/history/process-instance/count", params=case).json()
        scanned = rest.get("/history/process-instance/count", params={**case, **rows}).json()
        assert summary == scanned, case
        counted.append(summary["count"])
    assert counted[:8] == [7, 4, 4, 3, 2, 1, 3, 1]
