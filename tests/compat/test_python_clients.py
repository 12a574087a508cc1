"""Camunda's Python clients, unchanged, against a real Interlock server on 127.0.0.1 with HTTP
Basic: `camunda-external-task-client-python3` workers (complete, BPMN error, failures until an
incident) and `pycamunda` (deploy, start, list, claim and complete tasks, correlate a message)."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import requests

from tests.compat import processes
from tests.compat.conftest import deploy
from tests.server import PASSWORD, LiveServer

with warnings.catch_warnings():
    # The client's bearer-token helper still uses pydantic's V1 validators.
    warnings.simplefilter("ignore", DeprecationWarning)
    # Neither camunda-external-task-client-python3 nor pycamunda ships type information.
    from camunda.client.engine_client import EngineClient  # type: ignore[import-untyped]
    from camunda.external_task.external_task import ExternalTask, TaskResult  # type: ignore[import-untyped]
    from camunda.external_task.external_task_worker import ExternalTaskWorker  # type: ignore[import-untyped]

import pycamunda.deployment  # type: ignore[import-untyped]
import pycamunda.message  # type: ignore[import-untyped]
import pycamunda.processdef  # type: ignore[import-untyped]
import pycamunda.task  # type: ignore[import-untyped]

from tests.waiting import wait_until

Action = Callable[[ExternalTask], TaskResult]


def _client_config(role: str = "operator") -> dict[str, Any]:
    return {
        "auth_basic": {"username": role, "password": PASSWORD},
        "maxTasks": 5,
        "lockDuration": 10_000,
        "asyncResponseTimeout": 1_000,
        "sleepSeconds": 0.2,
    }


@contextmanager
def python_worker(server: LiveServer, topic: str, action: Action) -> Iterator[None]:
    """An ExternalTaskWorker polling `topic` in a thread, as `subscribe` would, until the block
    ends."""
    worker = ExternalTaskWorker("py-worker", f"{server.url}/engine-rest", _client_config())
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            worker._fetch_and_execute_safe(topic, action)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def test_external_task_worker_completes_tasks(server: LiveServer, rest: httpx.Client) -> None:
    deploy(rest, ("charge.bpmn", processes.external_then_review()))
    engine = EngineClient(f"{server.url}/engine-rest", _client_config())
    started = [
        engine.start_process("charge", {"amount": n}, business_key=f"order-{n}") for n in (1, 2, 3)
    ]
    seen: list[dict[str, Any]] = []

    def charge(task: ExternalTask) -> TaskResult:
        seen.append({"amount": task.get_variable("amount"), "key": task.get_business_key()})
        return task.complete({"charged": True, "total": task.get_variable("amount") * 10})

    def reviews() -> int:
        return len(rest.get("/task", params={"processDefinitionKey": "charge"}).json())

    with python_worker(server, "charge-card", charge):
        wait_until(lambda: reviews() == 3)
    assert sorted(s["amount"] for s in seen) == [1, 2, 3]
    assert sorted(s["key"] for s in seen) == ["order-1", "order-2", "order-3"]
    found = engine.get_process_instance("charge", variables=["total_eq_20", "charged_eq_true"])
    assert [i["id"] for i in found] == [started[1]["id"]]


def test_external_task_worker_reports_a_bpmn_error(server: LiveServer, rest: httpx.Client) -> None:
    deploy(rest, ("credit.bpmn", processes.external_with_error_boundary()))
    engine = EngineClient(f"{server.url}/engine-rest", _client_config())
    instance = engine.start_process("credit-check", {"applicant": "ada"})

    def check(task: ExternalTask) -> TaskResult:
        return task.bpmn_error("REJECTED", "too risky", {"score": 12})

    def handling() -> list[Any]:
        params = {"processInstanceId": instance["id"], "taskDefinitionKey": "HandleRejection"}
        tasks: list[Any] = rest.get("/task", params=params).json()
        return tasks

    with python_worker(server, "check-credit", check):
        wait_until(lambda: len(handling()) == 1)
    score = rest.get(f"/process-instance/{instance['id']}/variables/score").json()
    assert score["value"] == 12


def test_external_task_worker_fails_until_an_incident(
    server: LiveServer, rest: httpx.Client
) -> None:
    deploy(rest, ("work.bpmn", processes.external_only("flaky", "flaky-topic")))
    engine = EngineClient(f"{server.url}/engine-rest", _client_config())
    instance = engine.start_process("flaky", {})
    attempts: list[int | None] = []

    def fail(task: ExternalTask) -> TaskResult:
        attempts.append(task._context["retries"])
        return task.failure("gateway down", "Traceback: ...", max_retries=3, retry_timeout=10)

    def incidents() -> list[Any]:
        found: list[Any] = rest.get(
            "/incident", params={"processInstanceId": instance["id"]}
        ).json()
        return found

    with python_worker(server, "flaky-topic", fail):
        wait_until(lambda: len(incidents()) == 1)
    assert attempts == [None, 3, 2, 1]
    [incident] = incidents()
    assert incident["incidentType"] == "failedExternalTask"
    assert incident["incidentMessage"] == "gateway down"
    [task] = rest.get("/external-task", params={"processInstanceId": instance["id"]}).json()
    assert task["retries"] == 0 and task["id"] == incident["configuration"]


def test_pycamunda_deploys_starts_completes_and_correlates(
    server: LiveServer, tmp_path: Path
) -> None:
    url = f"{server.url}/engine-rest"
    admin = requests.auth.HTTPBasicAuth("admin", PASSWORD)
    operator = requests.auth.HTTPBasicAuth("operator", PASSWORD)
    bpmn = tmp_path / "approval.bpmn"
    bpmn.write_text(processes.approval())

    create = pycamunda.deployment.Create(url, name="approvals", source="pycamunda")
    create.auth = admin
    with bpmn.open("rb") as resource:
        create.add_resource(resource)
        deployment = create()
    [definition] = deployment.deployed_process_definitions.values()
    assert definition.key == "approval" and deployment.source == "pycamunda"
    # The same file under the same deployment name and source: nothing new (Camunda compares
    # files by name within deployments of one name and source).
    again = pycamunda.deployment.Create(
        url,
        name="approvals",
        source="pycamunda",
        enable_duplicate_filtering=True,
        deploy_changed_only=True,
    )
    again.auth = admin
    with bpmn.open("rb") as resource:
        again.add_resource(resource)
        unchanged = again()
    assert unchanged.deployed_process_definitions is None
    assert unchanged.id_ == deployment.id_

    listed = pycamunda.processdef.GetList(url, key="approval", latest_version=True)
    listed.auth = operator
    assert [d.id_ for d in listed()] == [definition.id_]

    start = pycamunda.processdef.StartInstance(url, key="approval", business_key="po-1")
    start.auth = operator
    start.add_variable("amount", 250)
    start.add_variable("customer", "ACME")
    instance = start()
    assert instance.business_key == "po-1" and instance.definition_id == definition.id_

    tasks = pycamunda.task.GetList(url, process_instance_id=instance.id_)
    tasks.auth = operator
    [task] = tasks()
    assert task.name == "Approve order" and task.created is not None
    claim = pycamunda.task.Claim(url, id_=task.id_, user_id="mary")
    claim.auth = operator
    claim()
    complete = pycamunda.task.Complete(url, id_=task.id_, with_variables_in_return=True)
    complete.auth = operator
    complete.add_variable("approved", True)
    returned = complete()
    assert returned is not None and returned["approved"].value is True
    assert returned["amount"].type_ == "Integer"

    correlate = pycamunda.message.CorrelateSingle(
        url, "PaymentReceived", business_key="po-1", result_enabled=True
    )
    correlate.auth = operator
    correlate.add_process_variable("paid", 250)
    [result] = correlate()
    assert result.result_type.value == "Execution"
    assert result.execution.process_instance_id == instance.id_
    remaining = pycamunda.task.GetList(url, process_instance_id=instance.id_)
    remaining.auth = operator
    assert remaining() == ()
