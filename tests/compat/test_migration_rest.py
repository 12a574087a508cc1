"""/engine-rest/migration: Camunda's plan, report and error bodies; execute needs an admin."""

from __future__ import annotations

from typing import Any

import httpx

from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from tests.compat.conftest import deploy

PLAN = {"sourceProcessDefinitionId", "targetProcessDefinitionId", "instructions", "variables"}
INSTRUCTION = {"sourceActivityIds", "targetActivityIds", "updateEventTrigger"}


def _versions(rest: httpx.Client, key: str) -> tuple[str, str]:
    v1 = ProcessBuilder(key).start_event("s").user_task("review").end_event("e")
    v2 = (
        ProcessBuilder(key)
        .start_event("s")
        .user_task("review")
        .intermediate_catch_event("paid", message=f"{key}-paid")
        .end_event("e")
    )
    ids = []
    for model in (v1.chain("s", "review", "e"), v2.chain("s", "review", "paid", "e")):
        created = deploy(rest, (f"{key}.bpmn", write_bpmn([model.build()])))
        [definition_id] = created["deployedProcessDefinitions"]
        ids.append(definition_id)
    return ids[0], ids[1]


def _json(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_generate_validate_and_execute_answer_camundas_bodies(
    rest: httpx.Client, operator: httpx.Client
) -> None:
    source, target = _versions(rest, "mig_rest")
    instance = _json(rest.post(f"/process-definition/{source}/start", json={}))
    body = {"sourceProcessDefinitionId": source, "targetProcessDefinitionId": target}
    plan = _json(operator.post("/migration/generate", json={**body, "updateEventTriggers": True}))
    assert set(plan) == PLAN and plan["variables"] is None
    assert (plan["sourceProcessDefinitionId"], plan["targetProcessDefinitionId"]) == (
        source,
        target,
    )
    assert all(set(i) == INSTRUCTION for i in plan["instructions"])
    assert {
        (i["sourceActivityIds"][0], i["targetActivityIds"][0], i["updateEventTrigger"])
        for i in plan["instructions"]
    } == {("review", "review", False)}

    report = _json(operator.post("/migration/validate", json=plan))
    assert report == {"instructionReports": [], "variableReports": {}}
    wrong = {
        **plan,
        "instructions": [
            {
                "sourceActivityIds": ["review"],
                "targetActivityIds": ["nope"],
                "updateEventTrigger": False,
            }
        ],
    }
    report = _json(operator.post("/migration/validate", json=wrong))
    [entry] = report["instructionReports"]
    assert entry["instruction"]["targetActivityIds"] == ["nope"]
    assert entry["failures"] == ["target activity 'nope' does not exist in the target definition"]

    # An operator may plan, only an admin migrates.
    execute = {"migrationPlan": plan, "processInstanceIds": [instance["id"]]}
    assert operator.post("/migration/execute", json=execute).status_code == 403

    # The token's node has no instruction: refused with the instance's report, nothing written.
    dropped = {
        **plan,
        "instructions": [i for i in plan["instructions"] if i["sourceActivityIds"] != ["review"]],
    }
    refused = _json(
        rest.post(
            "/migration/execute",
            json={"migrationPlan": dropped, "processInstanceIds": [instance["id"]]},
        ),
        400,
    )
    assert refused["type"] == "MigratingProcessInstanceValidationException"
    assert "'review'" in refused["message"]
    validation = refused["validationReport"]
    assert validation["processInstanceId"] == instance["id"]
    [activity] = validation["activityInstanceValidationReports"]
    assert activity["sourceScopeId"] == "review"
    assert activity["failures"] == ["'review' is not mapped by the plan"]
    assert _json(rest.get(f"/process-instance/{instance['id']}"))["definitionId"] == source

    plan_refused = _json(
        rest.post(
            "/migration/execute",
            json={"migrationPlan": wrong, "processInstanceIds": [instance["id"]]},
        ),
        400,
    )
    assert plan_refused["type"] == "MigrationPlanValidationException"
    assert plan_refused["validationReport"]["instructionReports"] == report["instructionReports"]

    executed = rest.post(
        "/migration/execute",
        json={
            "migrationPlan": plan,
            "processInstanceQuery": {"processDefinitionId": source},
            "skipCustomListeners": True,
            "skipIoMappings": False,
        },
    )
    assert executed.status_code == 204, executed.text
    assert _json(rest.get(f"/process-instance/{instance['id']}"))["definitionId"] == target
    [task] = _json(rest.get("/task", params={"processInstanceId": instance["id"]}))
    assert task["taskDefinitionKey"] == "review" and task["processDefinitionId"] == target


def test_bad_bodies_are_400s_naming_the_field(rest: httpx.Client) -> None:
    missing = _json(rest.post("/migration/execute", json={"processInstanceIds": []}), 400)
    assert missing["type"] == "InvalidRequestException" and "migrationPlan" in missing["message"]
    plan = {"sourceProcessDefinitionId": "a", "targetProcessDefinitionId": 3}
    bad = _json(rest.post("/migration/validate", json=plan), 400)
    assert "targetProcessDefinitionId" in bad["message"]
    unknown = _json(
        rest.post(
            "/migration/generate",
            json={"sourceProcessDefinitionId": "no:1:x", "targetProcessDefinitionId": "no:2:x"},
        ),
        400,
    )
    assert "no:1:x" in unknown["message"]
    ids = _json(
        rest.post(
            "/migration/execute",
            json={
                "migrationPlan": {**plan, "targetProcessDefinitionId": "b"},
                "processInstanceIds": ["not-an-id"],
            },
        ),
        400,
    )
    assert "processInstanceIds" in ids["message"]
