"""Generated forms over /engine-rest: form variables of a start form and a task, form keys, and
submitting a task's form, with the shapes Camunda answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import psycopg

from tests.compat.conftest import deploy, start
from tests.compat.test_rest_shapes import _error, _json

LEAVE = Path(__file__).parent.parent / "data" / "bpmn" / "leave_request.bpmn"


def _variables(database_url: str, instance_id: str) -> list[tuple[str, str, Any]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT name, type, value FROM variable WHERE instance_id = %s ORDER BY name",
            (instance_id,),
        ).fetchall()
    return [(name, kind, value) for name, kind, value in rows]


def test_form_variables_and_submitting_a_task_form(
    rest: httpx.Client, operator: httpx.Client, database_url: str
) -> None:
    deployed = deploy(rest, ("leave_request.bpmn", LEAVE.read_text()))
    (definition,) = deployed["deployedProcessDefinitions"].values()
    start_form = {
        "employee": {"type": "String", "value": None, "valueInfo": {}},
        "days": {"type": "Long", "value": 1, "valueInfo": {}},
        "firstDay": {"type": "String", "value": None, "valueInfo": {}},
    }
    by_key = operator.get("/process-definition/key/leave_request/form-variables")
    assert _json(by_key) == start_form
    by_id = operator.get(
        f"/process-definition/{definition['id']}/form-variables",
        params={"variableNames": "days,firstDay"},
    )
    assert _json(by_id) == {"days": start_form["days"], "firstDay": start_form["firstDay"]}
    assert _json(operator.get("/process-definition/key/leave_request/startForm")) == {
        "key": None,
        "camundaFormRef": None,
        "contextPath": None,
    }

    instance = start(
        operator,
        "leave_request",
        {
            "employee": {"value": "Ann"},
            "days": {"value": 4, "type": "Long"},
            "firstDay": {"value": "2027-01-04T00:00:00.000+0000", "type": "Date"},
        },
    )
    [task] = _json(operator.get("/task", params={"processInstanceId": instance["id"]}))
    task_id = task["id"]
    assert _json(operator.get(f"/task/{task_id}/form-variables")) == {
        "employee": {"type": "String", "value": "Ann", "valueInfo": {}},
        "decision": {"type": "String", "value": "approve", "valueInfo": {}},
        "approvedDays": {"type": "Long", "value": 4, "valueInfo": {}},
        "comment": {"type": "String", "value": None, "valueInfo": {}},
        "notify": {"type": "Boolean", "value": True, "valueInfo": {}},
        "returnDate": {"type": "String", "value": None, "valueInfo": {}},
        "days": {"type": "Long", "value": 4, "valueInfo": {}},
        "firstDay": {"type": "Date", "value": "2027-01-04T00:00:00.000+0000", "valueInfo": {}},
    }
    chosen = operator.get(
        f"/task/{task_id}/form-variables", params={"variableNames": "notify,firstDay,nothing"}
    )
    assert _json(chosen) == {
        "notify": {"type": "Boolean", "value": True, "valueInfo": {}},
        "firstDay": {"type": "Date", "value": "2027-01-04T00:00:00.000+0000", "valueInfo": {}},
    }
    assert _json(operator.get(f"/task/{task_id}/form")) == {
        "key": None,
        "camundaFormRef": None,
        "contextPath": None,
    }

    before = _variables(database_url, instance["id"])
    refused = operator.post(
        f"/task/{task_id}/submit-form",
        json={
            "variables": {
                "approvedDays": {"value": 45, "type": "Long"},
                "decision": {"value": "later"},
                "audit": {"value": "rest"},
            }
        },
    )
    body = _error(refused, 400, "RestException", f"Cannot submit task form {task_id}")
    assert body["message"] == (
        f"Cannot submit task form {task_id}: the form is not valid: field 'decision' must be "
        "one of approve, reject; field 'approvedDays' must be at most 30"
    )
    assert _variables(database_url, instance["id"]) == before
    assert _json(operator.get(f"/task/{task_id}"))["id"] == task_id

    done = operator.post(
        f"/task/{task_id}/submit-form",
        json={
            "variables": {
                "decision": {"value": "approve"},
                "approvedDays": {"value": "3"},
                "notify": {"value": False},
                "returnDate": {"value": "08/01/2027"},
                "audit": {"value": "rest"},
            },
            "withVariablesInReturn": True,
        },
    )
    returned = _json(done)
    assert returned["returnDate"] == {
        "type": "Date",
        "value": "2027-01-08T00:00:00.000+0000",
        "valueInfo": {},
    }
    assert _variables(database_url, instance["id"]) == [
        ("approvedDays", "long", 3),
        ("audit", "string", "rest"),
        ("days", "long", 4),
        ("decision", "string", "approve"),
        ("employee", "string", "Ann"),
        ("firstDay", "date", "2027-01-04T00:00:00+00:00"),
        ("notify", "boolean", False),
        ("returnDate", "date", "2027-01-08T00:00:00+00:00"),
    ]
    _error(
        operator.get(f"/task/{task_id}/form-variables"),
        404,
        "RestException",
        f"Cannot get form variables for task {task_id}",
    )
    _error(
        operator.post(f"/task/{task_id}/submit-form", json={}),
        404,
        "RestException",
        f"Cannot submit task form for task {task_id}",
    )
    _error(
        operator.get("/process-definition/key/missing/form-variables"),
        404,
        "RestException",
        "No matching process definition with key: missing",
    )


def test_submitting_a_start_form_starts_an_instance(
    rest: httpx.Client, operator: httpx.Client, database_url: str
) -> None:
    deploy(rest, ("leave_request.bpmn", LEAVE.read_text()))
    refused = operator.post(
        "/process-definition/key/leave_request/submit-form",
        json={"variables": {"employee": {"value": "Ann"}, "days": {"value": 0, "type": "Long"}}},
    )
    body = _error(refused, 400, "RestException", "Cannot instantiate process definition")
    assert body["message"].endswith(": the form is not valid: field 'days' must be at least 1"), (
        body
    )
    assert _json(operator.get("/process-instance/count")) == {"count": 0}

    started = _json(
        operator.post(
            "/process-definition/key/leave_request/submit-form",
            json={
                "variables": {
                    "employee": {"value": "Ann"},
                    "days": {"value": "2"},
                    "firstDay": {"value": "01/03/2027"},
                    "source": {"value": "rest"},
                },
                "businessKey": "leave-7",
            },
        )
    )
    assert (started["businessKey"], started["ended"]) == ("leave-7", False)
    assert _variables(database_url, started["id"]) == [
        ("days", "long", 2),
        ("employee", "string", "Ann"),
        ("firstDay", "date", "2027-03-01T00:00:00+00:00"),
        ("source", "string", "rest"),
    ]
