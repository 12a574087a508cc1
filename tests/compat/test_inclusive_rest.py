"""An inclusive gateway through /engine-rest: the activity-instance tree shows a token waiting at
a converging inclusive gateway as an activity instance of the gateway, as it does for a parallel
one (and as Camunda does for every joining execution), and the history names the gateways'
activity type."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.compat.conftest import deploy, start
from tests.server import LiveServer

MODEL = Path(__file__).parent.parent / "data" / "bpmn" / "inclusive_checks.bpmn"


def test_waiting_at_an_inclusive_join_through_engine_rest(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    archived: list[Any] = []
    server.engine.register_handler("archive", lambda ctx: archived.append(ctx.instance_id))
    deploy(rest, ("inclusive_checks.bpmn", MODEL.read_text()))
    variables = {
        "amount": {"value": 20000, "type": "Integer"},
        "foreign": {"value": True, "type": "Boolean"},
    }
    instance = start(operator, "inclusive-checks", variables)
    tasks = operator.get("/task", params={"processInstanceId": instance["id"]}).json()
    by_key = {t["taskDefinitionKey"]: t["id"] for t in tasks}
    assert sorted(by_key) == ["Task_Customs", "Task_Finance"]
    done = operator.post(f"/task/{by_key['Task_Customs']}/complete", json={})
    assert done.status_code == 204, done.text

    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    assert sorted((c["activityId"], c["activityType"]) for c in tree["childActivityInstances"]) == [
        ("Gateway_ChecksDone", "inclusiveGateway"),
        ("Task_Finance", "userTask"),
    ]
    assert tree["childTransitionInstances"] == []
    gateways = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "activityType": "inclusiveGateway"},
    ).json()
    assert sorted(g["activityId"] for g in gateways) == ["Gateway_Checks", "Gateway_ChecksDone"]

    done = operator.post(f"/task/{by_key['Task_Finance']}/complete", json={})
    assert done.status_code == 204, done.text
    assert [str(a) for a in archived] == [instance["id"]]
    history = rest.get(f"/history/process-instance/{instance['id']}").json()
    assert history["state"] == "COMPLETED"
