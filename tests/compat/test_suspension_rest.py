"""Camunda 7.24's suspension endpoints against the real server: process definitions (by id, by
the latest version of a key, every version of a key, with or without their instances) and
process instances (one, several in one request, several as a batch). The answers are pinned
from Camunda's REST reference: 204 No Content; refusals as `{type, message}` with
InvalidRequestException for a body it cannot use and 404 for what does not exist. Where Camunda
answers its SuspendedEntityInteractionException as a 500, Interlock answers 400 with that type.
The server runs no job executor: the test runs the batch's chunks itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from tests.compat.test_batch_rest import BATCH
from tests.engine.batches import run_to_end
from tests.server import LiveServer, live_server

# Camunda's ProcessDefinitionDto, from the reference.
DEFINITION = {
    "id", "key", "category", "description", "name", "version", "resource", "deploymentId",
    "diagram", "suspended", "tenantId", "versionTag", "historyTimeToLive", "startableInTasklist",
}  # fmt: skip


@pytest.fixture
def server(database_url: str) -> Iterator[LiveServer]:
    """A server without a job executor (conftest's `rest` and `operator` call it)."""
    with live_server(database_url, run_jobs=False) as running:
        yield running


def waiting(key: str = "held", task: str = "review") -> ProcessModel:
    """start -> split -> a user task, an external task (topic `held-work`), a message catch
    (`go`) -> join -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .parallel_gateway("split")
        .user_task(task, "Review")
        .service_task("remote", topic="held-work")
        .intermediate_catch_event("catch", message="go")
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "split")
        .chain("split", task, "join")
        .chain("split", "remote", "join")
        .chain("split", "catch", "join")
        .chain("join", "end")
        .build()
    )


def _refused(response: httpx.Response, status: int, type_: str, words: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) >= {"type", "message"}
    assert body["type"] == type_, body
    assert words in body["message"], body


def _start(rest: httpx.Client, key: str, business_key: str | None = None) -> httpx.Response:
    body: dict[str, Any] = {"businessKey": business_key} if business_key else {}
    return rest.post(f"/process-definition/key/{key}/start", json=body)


def _suspended(rest: httpx.Client, instance_id: str) -> bool:
    response = rest.get(f"/process-instance/{instance_id}")
    assert response.status_code == 200, response.text
    value = response.json()["suspended"]
    assert isinstance(value, bool)
    return value


def test_a_definition_suspended_by_id_shows_filters_and_starts_nothing(
    server: LiveServer, rest: httpx.Client
) -> None:
    server.engine.deploy(waiting())
    definition = rest.get("/process-definition/key/held").json()
    assert set(definition) == DEFINITION and definition["suspended"] is False
    running = _start(rest, "held").json()["id"]

    answer = rest.put(f"/process-definition/{definition['id']}/suspended", json={"suspended": True})
    assert answer.status_code == 204, answer.text
    assert answer.content == b""
    shown = rest.get(f"/process-definition/{definition['id']}").json()
    assert shown["suspended"] is True
    assert [d["id"] for d in rest.get("/process-definition?suspended=true").json()] == [
        definition["id"]
    ]
    assert rest.get("/process-definition?active=true").json() == []
    assert rest.get("/process-definition/count?suspended=true").json() == {"count": 1}
    # Without includeProcessInstances its instances keep running.
    assert _suspended(rest, running) is False
    refused = _start(rest, "held")
    assert refused.status_code == 500, refused.text
    assert "is suspended" in refused.json()["message"]
    refused = rest.post(f"/process-definition/{definition['id']}/start", json={})
    assert "is suspended" in refused.json()["message"]

    answer = rest.put(
        f"/process-definition/{definition['id']}/suspended", json={"suspended": False}
    )
    assert answer.status_code == 204, answer.text
    assert rest.get(f"/process-definition/{definition['id']}").json()["suspended"] is False
    assert _start(rest, "held").status_code == 200


def test_by_key_with_instances_every_version_changes_in_one_request(
    server: LiveServer, rest: httpx.Client
) -> None:
    engine = server.engine
    engine.deploy(waiting())
    first = _start(rest, "held").json()["id"]
    engine.deploy(waiting(task="review2"))
    second = _start(rest, "held").json()["id"]
    body = {"processDefinitionKey": "held", "suspended": True, "includeProcessInstances": True}
    answer = rest.put("/process-definition/suspended", json=body)
    assert answer.status_code == 204, answer.text
    versions = rest.get("/process-definition?key=held").json()
    assert [d["suspended"] for d in versions] == [True, True]
    assert _suspended(rest, first) and _suspended(rest, second)
    assert rest.get("/process-instance/count?suspended=true").json() == {"count": 2}

    answer = rest.put(
        "/process-definition/suspended",
        json={**body, "suspended": False},
    )
    assert answer.status_code == 204, answer.text
    assert not _suspended(rest, first) and not _suspended(rest, second)

    # The key path acts on the latest version alone.
    answer = rest.put("/process-definition/key/held/suspended", json={"suspended": True})
    assert answer.status_code == 204, answer.text
    versions = rest.get("/process-definition?key=held&sortBy=version&sortOrder=asc").json()
    assert [d["suspended"] for d in versions] == [False, True]


def test_definition_suspension_refusals(server: LiveServer, rest: httpx.Client) -> None:
    server.engine.deploy(waiting())
    definition_id = rest.get("/process-definition/key/held").json()["id"]
    _refused(
        rest.put("/process-definition/suspended", json={"suspended": True}),
        400,
        "InvalidRequestException",
        "processDefinitionKey",
    )
    _refused(
        rest.put(
            "/process-definition/suspended",
            json={"suspended": True, "processDefinitionId": definition_id},
        ),
        400,
        "InvalidRequestException",
        "Only processDefinitionKey can be set",
    )
    _refused(
        rest.put(
            "/process-definition/suspended",
            json={
                "suspended": True,
                "processDefinitionKey": "held",
                "executionDate": "next tuesday",
            },
        ),
        400,
        "InvalidRequestException",
        "executionDate",
    )
    _refused(
        rest.put(f"/process-definition/{definition_id}/suspended", json={"suspended": "yes"}),
        400,
        "InvalidRequestException",
        "suspended",
    )
    _refused(
        rest.put("/process-definition/nothing:1:x/suspended", json={"suspended": True}),
        404,
        "InvalidRequestException",
        "nothing:1:x",
    )
    _refused(
        rest.put("/process-definition/key/nothing/suspended", json={"suspended": True}),
        404,
        "RestException",
        "nothing",
    )
    _refused(
        rest.put(
            "/process-definition/suspended",
            json={"suspended": True, "processDefinitionKey": "nothing"},
        ),
        404,
        "InvalidRequestException",
        "nothing",
    )
    # Nothing changed by any refusal.
    assert rest.get(f"/process-definition/{definition_id}").json()["suspended"] is False


def test_an_operator_suspends_instances_but_not_definitions(
    server: LiveServer, operator: httpx.Client
) -> None:
    server.engine.deploy(waiting())
    instance_id = _start(operator, "held").json()["id"]
    refused = operator.put("/process-definition/key/held/suspended", json={"suspended": True})
    assert refused.status_code == 403, refused.text
    assert refused.json()["type"] == "AuthorizationException"
    answer = operator.put(f"/process-instance/{instance_id}/suspended", json={"suspended": True})
    assert answer.status_code == 204, answer.text
    assert _suspended(operator, instance_id)


def test_a_suspended_instance_holds_its_work_and_resumes(
    server: LiveServer, rest: httpx.Client
) -> None:
    server.engine.deploy(waiting())
    instance_id = _start(rest, "held", "order-1").json()["id"]
    answer = rest.put(f"/process-instance/{instance_id}/suspended", json={"suspended": True})
    assert answer.status_code == 204, answer.text
    assert _suspended(rest, instance_id)
    # Asking again changes nothing and refuses nothing.
    assert (
        rest.put(f"/process-instance/{instance_id}/suspended", json={"suspended": True})
    ).status_code == 204
    (task,) = rest.get(f"/task?processInstanceId={instance_id}").json()
    assert task["suspended"] is True
    _refused(
        rest.post(f"/task/{task['id']}/complete", json={}),
        400,
        "SuspendedEntityInteractionException",
        "suspended",
    )
    _refused(
        rest.post(f"/task/{task['id']}/claim", json={"userId": "operator"}),
        400,
        "SuspendedEntityInteractionException",
        "suspended",
    )
    fetch = {
        "workerId": "w",
        "maxTasks": 5,
        "topics": [{"topicName": "held-work", "lockDuration": 60000}],
    }
    assert rest.post("/external-task/fetchAndLock", json=fetch).json() == []
    _refused(
        rest.post("/message", json={"messageName": "go", "businessKey": "order-1"}),
        400,
        "RestException",
        "Cannot correlate message",
    )

    answer = rest.put(f"/process-instance/{instance_id}/suspended", json={"suspended": False})
    assert answer.status_code == 204, answer.text
    (locked,) = rest.post("/external-task/fetchAndLock", json=fetch).json()
    assert locked["processInstanceId"] == instance_id
    assert (
        rest.post(f"/external-task/{locked['id']}/complete", json={"workerId": "w"}).status_code
        == 204
    )
    assert (
        rest.post("/message", json={"messageName": "go", "businessKey": "order-1"})
    ).status_code == 204
    assert rest.post(f"/task/{task['id']}/complete", json={}).status_code == 204
    assert rest.get(f"/process-instance/{instance_id}").status_code == 404  # completed


def test_instance_suspension_refusals(server: LiveServer, rest: httpx.Client) -> None:
    missing = "00000000-0000-7000-8000-000000000001"
    _refused(
        rest.put(f"/process-instance/{missing}/suspended", json={"suspended": True}),
        404,
        "InvalidRequestException",
        missing,
    )
    _refused(
        rest.put("/process-instance/suspended", json={"suspended": True}),
        400,
        "InvalidRequestException",
        "should be set to update the suspension state",
    )
    _refused(
        rest.put(
            "/process-instance/suspended",
            json={"suspended": True, "processDefinitionKey": "a", "processInstanceIds": [missing]},
        ),
        400,
        "InvalidRequestException",
        "Only one of",
    )
    _refused(
        rest.put(
            "/process-instance/suspended",
            json={"suspended": True, "processInstanceIds": "not-a-list"},
        ),
        400,
        "InvalidRequestException",
        "processInstanceIds",
    )
    _refused(
        rest.post("/process-instance/suspended-async", json={"suspended": True}),
        400,
        "InvalidRequestException",
        "processInstanceIds",
    )


def test_several_instances_at_once_by_ids_query_and_definition(
    server: LiveServer, rest: httpx.Client
) -> None:
    server.engine.deploy(waiting())
    server.engine.deploy(waiting("other"))
    a, b, c = (_start(rest, "held", f"k-{n}").json()["id"] for n in range(3))
    other = _start(rest, "other").json()["id"]
    answer = rest.put(
        "/process-instance/suspended", json={"suspended": True, "processInstanceIds": [a]}
    )
    assert answer.status_code == 204, answer.text
    assert [_suspended(rest, i) for i in (a, b, c)] == [True, False, False]
    answer = rest.put(
        "/process-instance/suspended",
        json={"suspended": True, "processInstanceQuery": {"businessKey": "k-1"}},
    )
    assert answer.status_code == 204, answer.text
    assert [_suspended(rest, i) for i in (a, b, c)] == [True, True, False]
    answer = rest.put(
        "/process-instance/suspended",
        json={"suspended": True, "processDefinitionKey": "held"},
    )
    assert answer.status_code == 204, answer.text
    assert [_suspended(rest, i) for i in (a, b, c, other)] == [True, True, True, False]
    # The definition itself stays active: only its instances changed.
    assert rest.get("/process-definition/key/held").json()["suspended"] is False
    definition_id = rest.get("/process-definition/key/held").json()["id"]
    answer = rest.put(
        "/process-instance/suspended",
        json={"suspended": False, "processDefinitionId": definition_id},
    )
    assert answer.status_code == 204, answer.text
    assert [_suspended(rest, i) for i in (a, b, c)] == [False, False, False]
    answer = rest.put(
        "/process-instance/suspended",
        json={
            "suspended": True,
            "historicProcessInstanceQuery": {"processInstanceBusinessKey": "k-2"},
        },
    )
    assert answer.status_code == 204, answer.text
    assert [_suspended(rest, i) for i in (a, b, c)] == [False, False, True]


def test_suspending_asynchronously_is_a_batch(server: LiveServer, rest: httpx.Client) -> None:
    server.engine.deploy(waiting())
    ids = [_start(rest, "held", f"b-{n}").json()["id"] for n in range(3)]
    answer = rest.post(
        "/process-instance/suspended-async",
        json={
            "suspended": True,
            "processInstanceIds": ids[:1],
            "processInstanceQuery": {"businessKey": "b-1"},
        },
    )
    assert answer.status_code == 200, answer.text
    batch = answer.json()
    assert set(batch) == BATCH
    assert batch["type"] == "instance-update-suspension-state"
    assert batch["totalJobs"] == 2
    run_to_end(server.engine, batch["id"])
    assert [_suspended(rest, i) for i in ids] == [True, True, False]
    answer = rest.post(
        "/process-instance/suspended-async",
        json={"suspended": False, "processInstanceIds": ids[:2]},
    )
    assert answer.status_code == 200, answer.text
    run_to_end(server.engine, answer.json()["id"])
    assert [_suspended(rest, i) for i in ids] == [False, False, False]
