"""A Camunda Modeler file whose exclusive gateway decides with Spin,
`${S(order).prop("amount").numberValue() > 100}`, deployed and started over /engine-rest with a
Json variable as Camunda's clients send it; the path taken is read back from
/history/activity-instance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.compat.conftest import deploy, start

MODELER_FILE = (Path(__file__).parent.parent / "data" / "bpmn" / "order_size_spin.bpmn").read_text()


def _activities(client: httpx.Client, instance_id: str) -> list[dict[str, Any]]:
    response = client.get(
        "/history/activity-instance",
        params={"processInstanceId": instance_id, "sortBy": "startTime", "sortOrder": "asc"},
    )
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()
    return rows


@pytest.mark.parametrize(
    ("amount", "taken", "name"),
    [(250.5, "Activity_Approve", "Approve large order"), (100, "Activity_Ship", "Ship order")],
)
def test_a_spin_condition_picks_the_path_of_a_json_variable(
    rest: httpx.Client, operator: httpx.Client, amount: float, taken: str, name: str
) -> None:
    deployed = deploy(rest, ("order-size.bpmn", MODELER_FILE))
    [definition] = deployed["deployedProcessDefinitions"].values()
    assert definition["key"] == "Process_OrderSize"
    order = {"id": "O-1", "amount": amount, "lines": [{"sku": "A", "qty": 1}]}
    variables = {"order": {"type": "Json", "value": json.dumps(order)}}
    instance = start(operator, "Process_OrderSize", variables)
    rows = _activities(operator, instance["id"])
    assert [(r["activityId"], r["activityType"]) for r in rows] == [
        ("StartEvent_Order", "startEvent"),
        ("Gateway_Amount", "exclusiveGateway"),
        (taken, "userTask"),
    ]
    waiting = rows[-1]
    assert waiting["activityName"] == name
    assert waiting["processInstanceId"] == instance["id"]
    assert waiting["endTime"] is None and waiting["canceled"] is False
    assert all(r["endTime"] is not None for r in rows[:-1])
    stored = operator.get(f"/process-instance/{instance['id']}/variables/order").json()
    assert stored["type"] == "Json"
    assert json.loads(stored["value"]) == order


def test_a_spin_condition_over_a_missing_property_starts_nothing(
    rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("order-size.bpmn", MODELER_FILE))
    variables = {"order": {"type": "Json", "value": json.dumps({"id": "O-2"})}}
    response = operator.post(
        "/process-definition/key/Process_OrderSize/start", json={"variables": variables}
    )
    # As Camunda's REST API answers an engine failure while starting an instance.
    assert response.status_code == 500, response.text
    body = response.json()
    assert body["type"] == "RestException"
    assert body["message"].startswith("Cannot instantiate process definition Process_OrderSize:1:")
    assert "unable to find property 'amount'" in body["message"]
    assert "Flow_Large" in body["message"]
    listed = operator.get("/process-instance", params={"processDefinitionKey": "Process_OrderSize"})
    assert listed.json() == []
