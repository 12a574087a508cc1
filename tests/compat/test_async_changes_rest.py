"""Camunda's asynchronous modification and migration: each answers a BatchDto, and the batch
modifies or migrates every selected instance, each audited with the batch's id. The server
runs no job executor here: the test runs the chunks itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from engine.builder import ProcessBuilder
from tests.compat.test_batch_rest import BATCH
from tests.engine.batches import batch_entries, batch_row, run_to_end
from tests.engine.modification_support import forked
from tests.server import PASSWORD, LiveServer, live_server


@pytest.fixture
def idle_server(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url, run_jobs=False) as running:
        yield running


def _client(server: LiveServer, role: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/engine-rest", auth=(role, PASSWORD), timeout=30)


def _activities(client: httpx.Client, instance_id: str) -> set[str]:
    tree = client.get(f"/process-instance/{instance_id}/activity-instances").json()
    return {child["activityId"] for child in tree["childActivityInstances"]}


def _refused(response: httpx.Response, status: int, type_: str, message: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == type_
    assert message in body["message"], body


def test_an_asynchronous_modification_is_a_batch_of_the_instances(
    idle_server: LiveServer,
) -> None:
    engine = idle_server.engine
    engine.deploy(forked("async-fork"))
    one = engine.start_latest("async-fork")
    two = engine.start_latest("async-fork", business_key="second")
    body: dict[str, Any] = {
        "processDefinitionId": one.info().definition_id,
        "instructions": [
            {"type": "cancel", "activityId": "a"},
            {"type": "startBeforeActivity", "activityId": "after"},
        ],
        "processInstanceIds": [str(one.id)],
        "processInstanceQuery": {"businessKey": "second"},
        "skipCustomListeners": True,
        "annotation": "moved in bulk",
    }
    with _client(idle_server, "viewer") as viewer:
        _refused(
            viewer.post("/modification/executeAsync", json=body),
            403,
            "AuthorizationException",
            "viewer",
        )
    with _client(idle_server, "operator") as rest:
        bad = {**body, "instructions": [{"type": "startBeforeActivity"}]}
        _refused(
            rest.post("/modification/executeAsync", json=bad),
            400,
            "InvalidRequestException",
            "instructions[0]: for instruction type 'startBeforeActivity': 'activityId' is required",
        )
        _refused(
            rest.post("/modification/executeAsync", json={**body, "processDefinitionId": None}),
            400,
            "InvalidRequestException",
            "'processDefinitionId' is required",
        )
        assert rest.get("/batch/count").json() == {"count": 0}

        created = rest.post("/modification/executeAsync", json=body)
        assert created.status_code == 200, created.text
        batch = created.json()
        assert set(batch) == BATCH
        assert batch["type"] == "instance-modification"
        assert (batch["totalJobs"], batch["jobsCreated"], batch["createUserId"]) == (
            2,
            0,
            "operator",
        )
        assert _activities(rest, str(one.id)) == {"a", "b"}
        run_to_end(engine, batch["id"])
        for instance in (one, two):
            assert _activities(rest, str(instance.id)) == {"after", "b"}
    assert batch_row(engine, batch["id"]) == ("Completed", 2, 2, 0, "operator", True)
    assert batch_entries(engine, batch["id"]) == sorted(
        (str(i.id), "operator", "batch", "ModifyProcessInstance") for i in (one, two)
    )
    with engine.connection() as conn:
        annotations = conn.execute(
            "SELECT DISTINCT annotation FROM audit_entry WHERE batch_id = %s", (batch["id"],)
        ).fetchall()
    assert annotations == [("moved in bulk",)]


def _deploy_versions(server: LiveServer, key: str) -> None:
    v1 = ProcessBuilder(key).start_event("s").user_task("review").end_event("e")
    v2 = ProcessBuilder(key).start_event("s").user_task("review").user_task("check")
    server.engine.deploy(v1.chain("s", "review", "e").build())
    server.engine.deploy(v2.end_event("e").chain("s", "review", "check", "e").build())


def test_an_asynchronous_migration_is_an_admins_batch_of_the_instances(
    idle_server: LiveServer,
) -> None:
    engine = idle_server.engine
    _deploy_versions(idle_server, "async-mig")
    instances = [engine.start_version("async-mig", 1) for _ in range(2)]
    source = instances[0].info().definition_id
    target = engine.latest_definition("async-mig").id
    plan = {
        "sourceProcessDefinitionId": source,
        "targetProcessDefinitionId": target,
        "instructions": [
            {"sourceActivityIds": ["review"], "targetActivityIds": ["review"]},
        ],
    }
    body = {
        "migrationPlan": plan,
        "processInstanceQuery": {"processDefinitionId": source},
        "skipCustomListeners": False,
    }
    with _client(idle_server, "operator") as operator:
        _refused(
            operator.post("/migration/executeAsync", json=body),
            403,
            "AuthorizationException",
            "operator",
        )
    with _client(idle_server, "admin") as rest:
        wrong = {
            **plan,
            "instructions": [{"sourceActivityIds": ["review"], "targetActivityIds": ["nope"]}],
        }
        refused = rest.post("/migration/executeAsync", json={**body, "migrationPlan": wrong})
        _refused(refused, 400, "MigrationPlanValidationException", "nope")
        [report] = refused.json()["validationReport"]["instructionReports"]
        assert report["instruction"]["targetActivityIds"] == ["nope"]
        unknown = {**plan, "targetProcessDefinitionId": "async-mig:9:none"}
        _refused(
            rest.post("/migration/executeAsync", json={**body, "migrationPlan": unknown}),
            400,
            "InvalidRequestException",
            "target process definition 'async-mig:9:none' does not exist",
        )
        _refused(
            rest.post("/migration/executeAsync", json={**body, "migrationPlan": {}}),
            400,
            "InvalidRequestException",
            "sourceProcessDefinitionId",
        )
        assert rest.get("/batch/count").json() == {"count": 0}

        created = rest.post("/migration/executeAsync", json=body)
        assert created.status_code == 200, created.text
        batch = created.json()
        assert set(batch) == BATCH
        assert batch["type"] == "instance-migration"
        assert (batch["totalJobs"], batch["createUserId"]) == (2, "admin")
        assert rest.get("/batch", params={"type": "instance-migration"}).json() == [batch]
        run_to_end(engine, batch["id"])
    for instance in instances:
        assert engine.instance(instance.id).info().definition_id == target
    assert batch_row(engine, batch["id"]) == ("Completed", 2, 2, 0, "admin", True)
    assert batch_entries(engine, batch["id"]) == sorted(
        (str(i.id), "admin", "batch", "Migrate") for i in instances
    )
