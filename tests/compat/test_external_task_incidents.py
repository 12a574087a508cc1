"""/engine-rest over HTTP: the worker whose failure report opened an incident still holds its
lock, and may complete the task (the incident resolves) or report a BPMN error, as in Camunda 7;
another worker, or the holder after its lock expired, gets Camunda's 400."""

from __future__ import annotations

import warnings
from typing import Any

import httpx

from engine.states import IncidentState
from tests.compat import processes
from tests.compat.conftest import deploy, start
from tests.engine.clock import ManualClock
from tests.server import PASSWORD, LiveServer, live_server

with warnings.catch_warnings():
    # The client's bearer-token helper still uses pydantic's V1 validators.
    warnings.simplefilter("ignore", DeprecationWarning)
    # camunda-external-task-client-python3 ships no type information.
    from camunda.client.external_task_client import ExternalTaskClient  # type: ignore[import-untyped]


def _locked_then_failed(client: httpx.Client, key: str, topic: str, lock_ms: int) -> str:
    """Fetch the one task of `topic` as worker w1 and fail it without retries: an incident."""
    fetch = {"workerId": "w1", "maxTasks": 1,
             "topics": [{"topicName": topic, "lockDuration": lock_ms}]}  # fmt: skip
    response = client.post("/external-task/fetchAndLock", json=fetch)
    assert response.status_code == 200, response.text
    [task] = response.json()
    failed = {"workerId": "w1", "errorMessage": "card declined", "retries": 0, "retryTimeout": 0}
    response = client.post(f"/external-task/{task['id']}/failure", json=failed)
    assert response.status_code == 204, response.text
    task_id: str = task["id"]
    return task_id


def _incidents(client: httpx.Client, instance_id: str) -> list[dict[str, Any]]:
    response = client.get("/incident", params={"processInstanceId": instance_id})
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


def _refused(response: httpx.Response, message: str) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["x-invariant-violation"] == "ExternalTaskLeaseConflict"
    assert response.json() == {"type": "RestException", "message": message}


def test_the_lock_holder_completes_after_the_incident(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("pay.bpmn", processes.external_only("pay", "pay-topic")))
    instance = start(operator, "pay")
    task_id = _locked_then_failed(operator, "pay", "pay-topic", 60_000)
    [incident] = _incidents(operator, instance["id"])
    assert incident["configuration"] == task_id

    wrong = operator.post(f"/external-task/{task_id}/complete", json={"workerId": "w2"})
    _refused(
        wrong,
        f"External Task {task_id} cannot be completed by worker 'w2'. It is locked by worker 'w1'.",
    )
    assert [i["id"] for i in _incidents(operator, instance["id"])] == [incident["id"]]

    done = {"workerId": "w1", "variables": {"paid": {"value": True, "type": "Boolean"}}}
    response = operator.post(f"/external-task/{task_id}/complete", json=done)
    assert response.status_code == 204, response.text
    assert _incidents(operator, instance["id"]) == []
    history = operator.get(f"/history/process-instance/{instance['id']}").json()
    assert history["state"] == "COMPLETED"
    visits = operator.get(
        "/history/activity-instance", params={"processInstanceId": instance["id"]}
    ).json()
    assert sorted((v["activityId"], v["endTime"] is not None) for v in visits) == [
        ("End", True),
        ("Start", True),
        ("Work", True),
    ]
    [resolved] = server.engine.incidents(instance_id=instance["id"], state=None)
    assert (str(resolved.id), resolved.state) == (incident["id"], IncidentState.RESOLVED)
    with server.engine.connection() as conn:
        events = conn.execute(
            "SELECT event FROM outbox_event WHERE instance_id = %s AND event LIKE %s ORDER BY seq",
            (instance["id"], "incident.%"),
        ).fetchall()
    assert events == [("incident.created",), ("incident.resolved",)]
    variables = operator.get(f"/process-instance/{instance['id']}/variables").json()
    assert variables["paid"]["value"] is True


def test_the_lock_holder_reports_a_bpmn_error_after_the_incident(
    rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("credit.bpmn", processes.external_with_error_boundary()))
    instance = start(operator, "credit-check")
    task_id = _locked_then_failed(operator, "credit-check", "check-credit", 60_000)
    error = {"workerId": "w1", "errorCode": "REJECTED", "errorMessage": "no"}
    response = operator.post(f"/external-task/{task_id}/bpmnError", json=error)
    assert response.status_code == 204, response.text
    assert _incidents(operator, instance["id"]) == []
    [task] = operator.get("/task", params={"processInstanceId": instance["id"]}).json()
    assert task["taskDefinitionKey"] == "HandleRejection"


def test_the_holder_is_refused_once_its_lock_expired(database_url: str) -> None:
    clock = ManualClock()
    with (
        live_server(database_url, run_jobs=False, clock=clock) as server,
        httpx.Client(
            base_url=f"{server.url}/engine-rest", auth=("admin", PASSWORD), timeout=30
        ) as client,
    ):
        deploy(client, ("pay.bpmn", processes.external_only("pay", "pay-topic")))
        instance = start(client, "pay")
        task_id = _locked_then_failed(client, "pay", "pay-topic", 1_000)
        clock.advance(seconds=1)
        response = client.post(f"/external-task/{task_id}/complete", json={"workerId": "w1"})
        _refused(
            response,
            f"External Task {task_id} cannot be completed by worker 'w1'. "
            "Its lock on the task has expired.",
        )
        [incident] = _incidents(client, instance["id"])
        assert incident["configuration"] == task_id
        assert client.get(f"/process-instance/{instance['id']}").status_code == 200


def test_the_python_client_completes_after_reporting_the_failure(
    server: LiveServer, rest: httpx.Client
) -> None:
    deploy(rest, ("pay.bpmn", processes.external_only("pay", "py-pay")))
    instance = start(rest, "pay")
    config = {"auth_basic": {"username": "operator", "password": PASSWORD},
              "maxTasks": 1, "lockDuration": 60_000, "asyncResponseTimeout": 0}  # fmt: skip
    client = ExternalTaskClient("py-worker", f"{server.url}/engine-rest", config)
    [task] = client.fetch_and_lock("py-pay")
    assert client.failure(task["id"], "gateway down", "trace", 0, 0) is True
    assert [i["configuration"] for i in _incidents(rest, instance["id"])] == [task["id"]]
    assert client.complete(task["id"], {"paid": True}) is True
    assert _incidents(rest, instance["id"]) == []
    assert rest.get(f"/history/process-instance/{instance['id']}").json()["state"] == "COMPLETED"
