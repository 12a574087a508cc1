"""Camunda 7.24's filters of `GET /history/activity-instance` (and `/count`) that the reference
lists beside the ones the shapes tests cover: `activityNameLike`, `tenantIdIn`,
`withoutTenantId`, and sorting by `tenantId`; each activity instance names its instance's
tenant. Wrong values are a 400 InvalidRequestException naming the parameter."""

from __future__ import annotations

from typing import Any

import httpx

from tests.compat.conftest import deploy

ORDER_XML = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="order" isExecutable="true">
    <startEvent id="s" name="Placed"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="approve"/>
    <userTask id="approve" name="Approve order"/>
    <sequenceFlow id="f2" sourceRef="approve" targetRef="e"/>
    <endEvent id="e" name="Done"/>
  </process>
</definitions>"""


def _start(rest: httpx.Client, tenant: str | None) -> str:
    path = "/process-definition/key/order" + (f"/tenant-id/{tenant}" if tenant else "") + "/start"
    answer = rest.post(path, json={})
    assert answer.status_code == 200, answer.text
    instance_id: str = answer.json()["id"]
    return instance_id


def _rows(rest: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    answer = rest.get("/history/activity-instance", params=params)
    assert answer.status_code == 200, answer.text
    rows: list[dict[str, Any]] = answer.json()
    counted = rest.get("/history/activity-instance/count", params=params)
    assert counted.status_code == 200, counted.text
    assert counted.json() == {"count": len(rows)}
    return rows


def _instances(rows: list[dict[str, Any]]) -> set[str]:
    return {row["processInstanceId"] for row in rows}


def test_tenant_and_name_filters_and_the_tenant_sort(rest: httpx.Client) -> None:
    deploy(rest, ("order.bpmn", ORDER_XML), **{"tenant-id": "tenant-a"})
    deploy(rest, ("order.bpmn", ORDER_XML), **{"tenant-id": "tenant-b"})
    deploy(rest, ("order.bpmn", ORDER_XML))
    a, b, none = _start(rest, "tenant-a"), _start(rest, "tenant-b"), _start(rest, None)

    # Each instance made two visits so far: the start event and the waiting user task.
    every = _rows(rest)
    assert len(every) == 6
    tenant_of = {row["processInstanceId"]: row["tenantId"] for row in every}
    assert tenant_of == {a: "tenant-a", b: "tenant-b", none: None}

    only_a = _rows(rest, tenantIdIn="tenant-a")
    assert len(only_a) == 2 and _instances(only_a) == {a}
    assert _instances(_rows(rest, tenantIdIn="tenant-a,tenant-b")) == {a, b}
    assert _rows(rest, tenantIdIn="tenant-c") == []
    untenanted = _rows(rest, withoutTenantId="true")
    assert len(untenanted) == 2 and _instances(untenanted) == {none}
    assert len(_rows(rest, withoutTenantId="false")) == 6
    # Combined with the other filters.
    assert [r["activityId"] for r in _rows(rest, tenantIdIn="tenant-b", unfinished="true")] == [
        "approve"
    ]
    assert _rows(rest, tenantIdIn="tenant-b", activityType="userTask")[0]["processInstanceId"] == b

    # activityNameLike: Camunda's like, with % as the wildcard.
    approvals = _rows(rest, activityNameLike="Approve%")
    assert len(approvals) == 3 and {r["activityName"] for r in approvals} == {"Approve order"}
    assert {r["activityId"] for r in _rows(rest, activityNameLike="%ace%")} == {"s"}
    assert _rows(rest, activityNameLike="approve%") == []

    ascending = _rows(rest, sortBy="tenantId", sortOrder="asc")
    assert [r["tenantId"] for r in ascending] == [
        "tenant-a", "tenant-a", "tenant-b", "tenant-b", None, None,
    ]  # fmt: skip
    descending = _rows(rest, sortBy="tenantId", sortOrder="desc")
    assert [r["tenantId"] for r in descending] == [
        None, None, "tenant-b", "tenant-b", "tenant-a", "tenant-a",
    ]  # fmt: skip


def test_wrong_values_are_refused_naming_the_parameter(rest: httpx.Client) -> None:
    for params in (
        {"withoutTenantId": "yes"},
        {"sortBy": "tenant", "sortOrder": "asc"},
        {"finished": "1"},
    ):
        answer = rest.get("/history/activity-instance", params=params)
        assert answer.status_code == 400, (params, answer.text)
        assert answer.json()["type"] == "InvalidRequestException"
        assert next(iter(params)) in answer.json()["message"], answer.text
