"""Scripts through /engine-rest: a deployment carries its script files with the process, a
JavaScript task listener assigns the task, and a script that throws answers as Camunda's engine
errors do, with nothing started."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.compat.conftest import deploy, start

RESOURCES = Path(__file__).parent.parent / "data" / "bpmn" / "resources"


def test_script_files_deploy_with_their_process_and_run(
    rest: httpx.Client, operator: httpx.Client
) -> None:
    files = ("discount_resource.bpmn", "discount.js", "assign-reviewer.js")
    deployed = deploy(rest, *((name, (RESOURCES / name).read_text()) for name in files))
    assert [d["key"] for d in deployed["deployedProcessDefinitions"].values()] == [
        "Process_Discount"
    ]
    variables = {
        "total": {"value": 600, "type": "Integer"},
        "reviewer": {"value": "lena", "type": "String"},
    }
    instance = start(operator, "Process_Discount", variables)
    [task] = operator.get("/task", params={"processInstanceId": instance["id"]}).json()
    assert (task["taskDefinitionKey"], task["assignee"]) == ("Task_Review", "lena")
    found = operator.get(f"/process-instance/{instance['id']}/variables/discount").json()
    assert found["value"] == 60


def test_a_deployment_without_its_script_file_is_a_parse_error(rest: httpx.Client) -> None:
    response = rest.post(
        "/deployment/create",
        files=[
            (
                "data",
                (
                    "discount_resource.bpmn",
                    (RESOURCES / "discount_resource.bpmn").read_bytes(),
                    "application/octet-stream",
                ),
            )
        ],
    )
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["type"] == "ParseException"
    assert (
        "camunda:resource 'deployment://discount.js' names no file of this deployment"
        in (body["message"])
    )
