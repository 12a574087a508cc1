"""DELETE /process-definition/{id} and DELETE /process-definition/key/{key}/delete as Camunda's
reference gives them (204; 404 for an unknown id or key; without cascade, a definition with
running instances is refused with ENGINE-03076 as a 500 ProcessEngineException), and the
POSTed instance query (POST /process-instance, /process-instance/count)."""

from __future__ import annotations

import httpx

from tests.compat import processes
from tests.compat.conftest import deploy, start


def _definitions(rest: httpx.Client, key: str) -> list[dict[str, object]]:
    answer = rest.get(
        "/process-definition", params={"key": key, "sortBy": "version", "sortOrder": "asc"}
    )
    assert answer.status_code == 200
    listed: list[dict[str, object]] = answer.json()
    return listed


def test_a_version_with_running_instances_is_deleted_only_with_cascade(
    rest: httpx.Client,
) -> None:
    first = deploy(rest, ("approval.bpmn", processes.approval("deleting")))
    started = start(rest, "deleting")
    deploy(rest, ("approval.bpmn", processes.approval("deleting").replace("Approve order", "Ok")))
    v1, v2 = _definitions(rest, "deleting")
    assert (v1["version"], v2["version"]) == (1, 2)

    refused = rest.delete(f"/process-definition/{v1['id']}")
    assert refused.status_code == 500
    assert refused.json()["type"] == "ProcessEngineException"
    assert "ENGINE-03076" in refused.json()["message"]
    assert rest.get(f"/process-instance/{started['id']}").status_code == 200

    deleted = rest.delete(f"/process-definition/{v1['id']}", params={"cascade": "true"})
    assert deleted.status_code == 204, deleted.text
    assert rest.get(f"/process-instance/{started['id']}").status_code == 404
    assert rest.get(f"/process-definition/{v1['id']}").status_code == 404
    assert [d["id"] for d in _definitions(rest, "deleting")] == [v2["id"]]
    # The deployment that brought the version stays, with its files.
    assert rest.get(f"/deployment/{first['id']}").status_code == 200
    assert len(rest.get(f"/deployment/{first['id']}/resources").json()) == 1

    unknown = rest.delete(f"/process-definition/{v1['id']}")
    assert unknown.status_code == 404
    assert unknown.json()["type"] == "InvalidRequestException"


def test_deleting_the_latest_version_gives_its_start_events_back_to_the_one_before(
    rest: httpx.Client,
) -> None:
    deploy(rest, ("inbound.bpmn", processes.message_start("shrinking", "ShrinkingOrder")))
    deploy(rest, ("inbound.bpmn", processes.message_start("shrinking", "ShrinkingOrder")))
    v1, v2 = _definitions(rest, "shrinking")
    assert rest.delete(f"/process-definition/{v2['id']}").status_code == 204
    answer = rest.post("/message", json={"messageName": "ShrinkingOrder", "resultEnabled": True})
    assert answer.status_code == 200, answer.text
    instance = answer.json()[0]["processInstance"]
    assert instance["definitionId"] == v1["id"]


def test_every_version_of_a_key_is_deleted_by_key(rest: httpx.Client) -> None:
    for _ in range(3):
        deploy(rest, ("approval.bpmn", processes.approval("by-key")))
    started = start(rest, "by-key")
    refused = rest.delete("/process-definition/key/by-key/delete")
    assert refused.status_code == 500
    assert len(_definitions(rest, "by-key")) == 3
    deleted = rest.delete("/process-definition/key/by-key/delete", params={"cascade": "true"})
    assert deleted.status_code == 204, deleted.text
    assert _definitions(rest, "by-key") == []
    assert rest.get(f"/history/process-instance/{started['id']}").status_code == 404
    unknown = rest.delete("/process-definition/key/by-key/delete")
    assert unknown.status_code == 404
    assert unknown.json()["type"] == "InvalidRequestException"


def test_the_posted_instance_query_filters_sorts_and_counts_as_the_get(
    rest: httpx.Client,
) -> None:
    deploy(rest, ("approval.bpmn", processes.approval("posted-query")))
    amounts = {}
    for amount in (5, 50, 500):
        made = start(
            rest,
            "posted-query",
            {"amount": {"value": amount, "type": "Integer"}},
            businessKey=f"order-{amount}",
        )
        amounts[made["id"]] = amount
    body = {
        "processDefinitionKey": "posted-query",
        "variables": [{"name": "amount", "operator": "gteq", "value": 50}],
        "sorting": [{"sortBy": "businessKey", "sortOrder": "desc"}],
    }
    listed = rest.post("/process-instance", json=body)
    assert listed.status_code == 200, listed.text
    assert [row["businessKey"] for row in listed.json()] == ["order-500", "order-50"]
    counted = rest.post("/process-instance/count", json=body)
    assert counted.json() == {"count": 2}
    by_ids = rest.post("/process-instance", json={"processInstanceIds": sorted(amounts)[:2]}).json()
    assert sorted(row["id"] for row in by_ids) == sorted(amounts)[:2]
    wrong = rest.post("/process-instance", json={"variables": "amount_gt_5"})
    assert wrong.status_code == 400
    assert "variables" in wrong.json()["message"]
    bad_sort = rest.post(
        "/process-instance", json={"sorting": [{"sortBy": "nope", "sortOrder": "asc"}]}
    )
    assert bad_sort.status_code == 400
    assert "sorting" in bad_sort.json()["message"]
