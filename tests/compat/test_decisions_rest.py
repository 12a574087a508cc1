"""Camunda's decision REST over a real server: decision definitions listed, counted, filtered and
read with their DMN XML; direct evaluation with typed variables, answering Camunda's typed result
list (404 for an unknown key, 400 for a bad variable and a broken hit policy); historic decision
instances with their inputs and outputs; and a deployment of a DMN and a BPMN file together.

One server and one deployment serve the module; each test evaluates what it reads."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.api import Engine
from tests.compat import processes
from tests.compat.conftest import camunda_date
from tests.server import PASSWORD, live_server

DMN = Path(__file__).parent.parent / "data" / "dmn"

DECISION_DEFINITION = {
    "id", "key", "category", "name", "version", "resource", "deploymentId",
    "decisionRequirementsDefinitionId", "decisionRequirementsDefinitionKey", "tenantId",
    "versionTag", "historyTimeToLive",
}  # fmt: skip
HISTORIC_DECISION_INSTANCE = {
    "id", "decisionDefinitionId", "decisionDefinitionKey", "decisionDefinitionName",
    "evaluationTime", "removalTime", "processDefinitionId", "processDefinitionKey",
    "processInstanceId", "rootProcessInstanceId", "caseDefinitionId", "caseDefinitionKey",
    "caseInstanceId", "activityId", "activityInstanceId", "tenantId", "userId", "inputs",
    "outputs", "collectResultValue", "rootDecisionInstanceId",
    "decisionRequirementsDefinitionId", "decisionRequirementsDefinitionKey",
}  # fmt: skip
INPUT = {
    "id", "decisionInstanceId", "clauseId", "clauseName", "errorMessage", "type", "value",
    "valueInfo", "createTime", "removalTime", "rootProcessInstanceId",
}  # fmt: skip
OUTPUT = INPUT | {"ruleId", "ruleOrder", "variableName"}

PARCEL = {
    "country": {"value": "DE", "type": "String"},
    "weight": {"value": 4, "type": "Integer"},
    "ordered": {"value": "2026-01-31T10:00:00.000+0100", "type": "Date"},
}


@dataclass
class Served:
    engine: Engine
    rest: httpx.Client
    operator: httpx.Client
    viewer: httpx.Client
    deployment: dict[str, Any]


def _client(url: str, user: str) -> httpx.Client:
    return httpx.Client(base_url=f"{url}/engine-rest", auth=(user, PASSWORD), timeout=30)


@pytest.fixture(scope="module")
def served(module_database_url: str) -> Iterator[Served]:
    with (
        live_server(module_database_url, run_jobs=False) as server,
        _client(server.url, "admin") as rest,
        _client(server.url, "operator") as operator,
        _client(server.url, "viewer") as viewer,
    ):
        files = [
            ("data0", (name, (DMN / name).read_bytes(), "application/octet-stream"))
            for name in ("shipping_unique.dmn", "beverages_drd.dmn", "dish_first.dmn")
        ]
        files.append(("data3", ("p.bpmn", processes.approval("dmn-approval").encode(), "text/xml")))
        response = rest.post(
            "/deployment/create", data={"deployment-name": "decisions"}, files=files
        )
        assert response.status_code == 200, response.text
        yield Served(server.engine, rest, operator, viewer, response.json())


def test_a_deployment_of_dmn_and_bpmn_answers_both(served: Served) -> None:
    body = served.deployment
    (process,) = body["deployedProcessDefinitions"].values()
    assert process["key"] == "dmn-approval"
    deployed = body["deployedDecisionDefinitions"]
    assert sorted(d["key"] for d in deployed.values()) == [
        "beverages",
        "dish",
        "season_dish",
        "shipping",
    ]
    shipping = next(d for d in deployed.values() if d["key"] == "shipping")
    assert set(shipping) == DECISION_DEFINITION
    assert deployed[shipping["id"]] is shipping
    assert shipping == {
        "id": shipping["id"],
        "key": "shipping",
        "category": "http://example.com/dmn/shipping",
        "name": "Shipping",
        "version": 1,
        "resource": "shipping_unique.dmn",
        "deploymentId": body["id"],
        "decisionRequirementsDefinitionId": None,
        "decisionRequirementsDefinitionKey": None,
        "tenantId": None,
        "versionTag": "2026-1",
        "historyTimeToLive": 14,
    }
    # The same file again under the same deployment name: filtered as unchanged, nothing
    # deployed, the deployment of that name the answer (Camunda compares by deployment name).
    again = served.rest.post(
        "/deployment/create",
        data={
            "deployment-name": "decisions",
            "enable-duplicate-filtering": "true",
            "deploy-changed-only": "true",
        },
        files=[("d", ("dish_first.dmn", (DMN / "dish_first.dmn").read_bytes()))],
    )
    assert again.status_code == 200, again.text
    assert again.json()["deployedDecisionDefinitions"] is None
    assert again.json()["id"] == body["id"]


def test_definitions_list_count_and_filters(served: Served) -> None:
    rest = served.viewer

    def keys(**params: Any) -> list[str]:
        response = rest.get("/decision-definition", params=params)
        assert response.status_code == 200, response.text
        count = rest.get("/decision-definition/count", params=params).json()["count"]
        found = [d["key"] for d in response.json()]
        if not {"firstResult", "maxResults"} & set(params):
            assert count == len(found)
        return found

    assert keys(sortBy="key", sortOrder="asc") == ["beverages", "dish", "season_dish", "shipping"]
    assert keys(sortBy="key", sortOrder="desc", maxResults=2) == ["shipping", "season_dish"]
    assert keys(sortBy="key", sortOrder="asc", firstResult=3) == ["shipping"]
    assert keys(key="dish") == ["dish"]
    assert keys(keyLike="%dish") == ["dish", "season_dish"]
    assert keys(name="Dish", sortBy="key", sortOrder="asc") == ["dish", "season_dish"]
    assert keys(nameLike="Bev%") == ["beverages"]
    assert keys(versionTag="v3") == ["dish"]
    assert keys(versionTagLike="2026%") == ["shipping"]
    assert keys(resourceName="beverages_drd.dmn", sortBy="key", sortOrder="asc") == [
        "beverages",
        "season_dish",
    ]
    assert keys(deploymentId=served.deployment["id"], latestVersion="true", version=1) == [
        "beverages",
        "dish",
        "season_dish",
        "shipping",
    ]
    one = rest.get("/decision-definition/key/shipping").json()
    assert keys(decisionDefinitionId=one["id"]) == ["shipping"]
    assert keys(decisionDefinitionIdIn=f"{one['id']},nope") == ["shipping"]
    assert keys(version=2) == []
    assert keys(deploymentId="not-an-id") == []
    refused = rest.get("/decision-definition", params={"sortBy": "colour", "sortOrder": "asc"})
    assert refused.status_code == 400
    assert "sortBy" in refused.json()["message"]


def test_definition_by_id_by_key_and_xml(served: Served) -> None:
    rest = served.viewer
    by_key = rest.get("/decision-definition/key/dish").json()
    assert set(by_key) == DECISION_DEFINITION
    assert by_key["category"] == "http://camunda.org/schema/1.0/dmn"
    by_id = rest.get(f"/decision-definition/{by_key['id']}").json()
    assert by_id == by_key
    xml = rest.get(f"/decision-definition/{by_key['id']}/xml").json()
    assert xml == rest.get("/decision-definition/key/dish/xml").json()
    assert xml["id"] == by_key["id"]
    assert xml["dmnXml"] == (DMN / "dish_first.dmn").read_text()
    missing = rest.get("/decision-definition/key/nothing")
    assert missing.status_code == 404
    assert missing.json() == {
        "type": "InvalidRequestException",
        "message": "No matching decision definition with key: nothing and no tenant-id",
    }
    assert rest.get("/decision-definition/nothing:1:x/xml").status_code == 404


def test_evaluate_by_key_answers_typed_results(served: Served) -> None:
    response = served.operator.post(
        "/decision-definition/key/shipping/evaluate", json={"variables": PARCEL}
    )
    assert response.status_code == 200, response.text
    assert response.json() == [
        {
            "carrier": {"type": "String", "value": "DHL", "valueInfo": {}},
            "days": {"type": "Integer", "value": 2, "valueInfo": {}},
            "express": {"type": "Boolean", "value": False, "valueInfo": {}},
            "price": {"type": "Double", "value": 4.5, "valueInfo": {}},
            "deliverBy": {
                "type": "Date",
                "value": "2030-01-03T12:00:00.000+0000",
                "valueInfo": {},
            },
            "note": {"type": "Long", "value": 7, "valueInfo": {}},
        }
    ]
    # A French order's rule leaves two output entries empty: as Camunda's DMN engine skips an
    # empty output entry, the result entry has no value for them.
    france = served.operator.post(
        "/decision-definition/key/shipping/evaluate",
        json={"variables": {**PARCEL, "country": {"value": "FR"}}},
    )
    assert france.status_code == 200, france.text
    (entry,) = france.json()
    assert entry["carrier"]["value"] == "Colissimo"
    assert sorted(entry) == ["carrier", "days", "express", "price"]


def test_evaluate_by_id_and_a_drd(served: Served) -> None:
    rest = served.operator
    definition = rest.get("/decision-definition/key/beverages").json()
    response = rest.post(
        f"/decision-definition/{definition['id']}/evaluate",
        json={
            "variables": {
                "season": {"value": "Summer", "type": "String"},
                "guestsWithChildren": {"value": True, "type": "Boolean"},
            }
        },
    )
    assert response.status_code == 200, response.text
    assert response.json() == [
        {"beverages": {"type": "String", "value": "Apple Juice", "valueInfo": {}}}
    ]


def test_evaluate_refusals(served: Served) -> None:
    rest = served.operator
    before = rest.get("/history/decision-instance/count").json()["count"]
    unknown = rest.post("/decision-definition/key/nothing/evaluate", json={"variables": {}})
    assert unknown.status_code == 404
    assert unknown.json()["type"] == "InvalidRequestException"
    assert "nothing" in unknown.json()["message"]
    bad = rest.post(
        "/decision-definition/key/shipping/evaluate",
        json={"variables": {**PARCEL, "weight": {"value": "heavy", "type": "Integer"}}},
    )
    assert bad.status_code == 400
    assert "weight" in bad.json()["message"]
    broken = rest.post(
        "/decision-definition/key/shipping/evaluate",
        json={"variables": {**PARCEL, "country": {"value": "FR"}, "weight": {"value": 60}}},
    )
    assert broken.status_code == 400, broken.text
    message = broken.json()["message"]
    assert message.startswith("Cannot evaluate decision shipping:1:")
    assert "UNIQUE" in message and "Rule_France" in message
    refused = served.viewer.post("/decision-definition/key/dish/evaluate", json={"variables": {}})
    assert refused.status_code == 403
    # Nothing was evaluated, so nothing was written.
    assert rest.get("/history/decision-instance/count").json()["count"] == before


def test_historic_decision_instances(served: Served) -> None:
    rest = served.rest
    since = datetime.now(UTC)
    evaluated = served.operator.post(
        "/decision-definition/key/shipping/evaluate", json={"variables": PARCEL}
    )
    assert evaluated.status_code == 200, evaluated.text
    after = {"evaluatedAfter": camunda_date(since), "decisionDefinitionKey": "shipping"}
    (plain,) = rest.get("/history/decision-instance", params=after).json()
    assert set(plain) == HISTORIC_DECISION_INSTANCE
    assert plain["inputs"] is None and plain["outputs"] is None
    definition = rest.get("/decision-definition/key/shipping").json()
    assert plain["decisionDefinitionId"] == definition["id"]
    assert plain["decisionDefinitionName"] == "Shipping"
    assert plain["userId"] == "operator"
    assert plain["processInstanceId"] is None and plain["rootDecisionInstanceId"] is None
    assert rest.get("/history/decision-instance/count", params=after).json() == {"count": 1}

    full = rest.get(
        f"/history/decision-instance/{plain['id']}",
        params={"includeInputs": "true", "includeOutputs": "true"},
    ).json()
    assert {k: v for k, v in full.items() if k not in ("inputs", "outputs")} == {
        k: v for k, v in plain.items() if k not in ("inputs", "outputs")
    }
    inputs = full["inputs"]
    assert all(set(i) == INPUT for i in inputs)
    assert [(i["id"], i["clauseId"], i["clauseName"], i["type"], i["value"]) for i in inputs] == [
        (f"{plain['id']}:in:0", "Input_Country", "Country", "String", "DE"),
        (f"{plain['id']}:in:1", "Input_Weight", "Weight (kg)", "Integer", 4),
        (f"{plain['id']}:in:2", "Input_Ordered", "Ordered", "Date", "2026-01-31T09:00:00.000+0000"),
    ]
    outputs = full["outputs"]
    assert all(set(o) == OUTPUT for o in outputs)
    assert [(o["variableName"], o["type"], o["value"]) for o in outputs] == [
        ("carrier", "String", "DHL"),
        ("days", "Integer", 2),
        ("express", "Boolean", False),
        ("price", "Double", 4.5),
        ("deliverBy", "Date", "2030-01-03T12:00:00.000+0000"),
        ("note", "Long", 7),
    ]
    assert {(o["ruleId"], o["ruleOrder"], o["decisionInstanceId"]) for o in outputs} == {
        ("Rule_Parcel", 1, plain["id"])
    }
    only_inputs = rest.get(
        "/history/decision-instance", params={**after, "includeInputs": "true"}
    ).json()
    assert only_inputs[0]["inputs"] == inputs and only_inputs[0]["outputs"] is None
    missing = rest.get("/history/decision-instance/00000000-0000-0000-0000-000000000000")
    assert missing.status_code == 404
    assert rest.get("/history/decision-instance/not-an-id").status_code == 404


def test_historic_decision_instances_of_a_drd(served: Served) -> None:
    rest = served.rest
    since = camunda_date(datetime.now(UTC))
    variables = {"season": {"value": "Summer"}, "guestsWithChildren": {"value": False}}
    evaluated = served.operator.post(
        "/decision-definition/key/beverages/evaluate", json={"variables": variables}
    )
    assert evaluated.status_code == 200, evaluated.text
    assert evaluated.json() == []
    window = {"evaluatedAfter": since, "decisionDefinitionKeyIn": "beverages,season_dish"}
    every = rest.get(
        "/history/decision-instance",
        params={**window, "sortBy": "evaluationTime", "sortOrder": "asc"},
    ).json()
    assert sorted(e["decisionDefinitionKey"] for e in every) == ["beverages", "season_dish"]
    (root,) = rest.get(
        "/history/decision-instance", params={**window, "rootDecisionInstancesOnly": "true"}
    ).json()
    assert root["decisionDefinitionKey"] == "beverages"
    assert root["rootDecisionInstanceId"] is None
    (required,) = [e for e in every if e["decisionDefinitionKey"] == "season_dish"]
    assert required["rootDecisionInstanceId"] == root["id"]
    tree = rest.get(
        "/history/decision-instance", params={"rootDecisionInstanceId": root["id"]}
    ).json()
    assert sorted(e["id"] for e in tree) == sorted(e["id"] for e in every)
    assert rest.get(
        "/history/decision-instance/count", params={**window, "rootDecisionInstancesOnly": "true"}
    ).json() == {"count": 1}
    assert rest.get(
        "/history/decision-instance", params={"decisionInstanceIdIn": f"{root['id']},nope"}
    ).json() == [root]
    assert (
        rest.get("/history/decision-instance", params={**window, "userId": "somebody-else"}).json()
        == []
    )
    assert (
        rest.get("/history/decision-instance", params={**window, "evaluatedBefore": since}).json()
        == []
    )
    with_outputs = rest.get(
        f"/history/decision-instance/{required['id']}", params={"includeOutputs": "true"}
    ).json()
    assert [(o["variableName"], o["value"]) for o in with_outputs["outputs"]] == [
        ("dish", "Light salad")
    ]


def test_historic_decision_instances_of_an_activity(served: Served) -> None:
    rest = served.rest
    bpmn = DMN.parent / "bpmn" / "dinner_planning.bpmn"
    deployed = rest.post(
        "/deployment/create", files=[("d", ("dinner.bpmn", bpmn.read_bytes(), "text/xml"))]
    )
    assert deployed.status_code == 200, deployed.text
    variables = {
        "season": {"value": "Winter", "type": "String"},
        "guestCount": {"value": 3, "type": "Integer"},
    }
    started = rest.post(
        "/process-definition/key/dinner_planning/start", json={"variables": variables}
    ).json()
    (task,) = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": started["id"], "activityId": "Task_Dish"},
    ).json()
    (found,) = rest.get(
        "/history/decision-instance", params={"processInstanceId": started["id"]}
    ).json()
    assert found["decisionDefinitionKey"] == "dish"
    assert (found["processDefinitionId"], found["processDefinitionKey"]) == (
        started["definitionId"],
        "dinner_planning",
    )
    assert found["rootProcessInstanceId"] == started["id"]
    assert (found["activityId"], found["activityInstanceId"]) == ("Task_Dish", task["id"])
    assert found["userId"] is None
    evaluation_id = found["id"]
    # The task mapped the decision's single entry into its result variable.
    dish = rest.get(f"/process-instance/{started['id']}/variables/dish").json()
    assert (dish["type"], dish["value"]) == ("String", "Roastbeef")
    for params in (
        {"processDefinitionKey": "dinner_planning"},
        {"processDefinitionId": started["definitionId"]},
        {"activityIdIn": "Other,Task_Dish"},
        {"activityInstanceIdIn": task["id"]},
    ):
        listed = rest.get("/history/decision-instance", params=params).json()
        assert [e["id"] for e in listed] == [evaluation_id], params
    assert rest.get("/history/decision-instance", params={"activityIdIn": "Other"}).json() == []
    (with_inputs,) = rest.get(
        "/history/decision-instance",
        params={"processInstanceId": started["id"], "includeInputs": "true"},
    ).json()
    assert {i["rootProcessInstanceId"] for i in with_inputs["inputs"]} == {started["id"]}
