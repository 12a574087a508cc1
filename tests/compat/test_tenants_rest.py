"""Camunda's multi-tenancy with tenant identifiers over /engine-rest: two tenants deploy the same
key and each gets version 1 of its own; a key is started within a tenant; the lists filter by
tenant; a message correlated for one tenant and a fetch for one tenant reach only its rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.compat.conftest import deploy
from tests.compat.processes import HEADER, external_then_review
from tests.server import PASSWORD, LiveServer

WAIT_PAYMENT = (
    HEADER.format(key="payment") + '  <bpmn:process id="payment" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:intermediateCatchEvent id="Wait">\n'
    '      <bpmn:messageEventDefinition messageRef="Message_Paid" />\n'
    "    </bpmn:intermediateCatchEvent>\n"
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Wait" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="Wait" targetRef="End" />\n'
    "  </bpmn:process>\n"
    '  <bpmn:message id="Message_Paid" name="Paid" />\n'
    "</bpmn:definitions>\n"
)


def _start(rest: httpx.Client, path: str) -> dict[str, Any]:
    response = rest.post(path, json={})
    assert response.status_code == 200, response.text
    started: dict[str, Any] = response.json()
    return started


def _ids(rows: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return sorted((row["id"], row["tenantId"]) for row in rows)


def test_two_tenants_deploy_start_and_see_their_own(server: LiveServer, rest: httpx.Client) -> None:
    xml = external_then_review("order", "charge")
    a = deploy(rest, ("order.bpmn", xml), **{"tenant-id": "tenant-a"})
    b = deploy(rest, ("order.bpmn", xml), **{"tenant-id": "tenant-b"})
    assert a["tenantId"] == "tenant-a" and b["tenantId"] == "tenant-b"
    [def_a] = a["deployedProcessDefinitions"].values()
    [def_b] = b["deployedProcessDefinitions"].values()
    assert (def_a["key"], def_a["version"], def_a["tenantId"]) == ("order", 1, "tenant-a")
    assert (def_b["key"], def_b["version"], def_b["tenantId"]) == ("order", 1, "tenant-b")

    listed = rest.get("/process-definition", params={"key": "order"}).json()
    assert _ids(listed) == sorted([(def_a["id"], "tenant-a"), (def_b["id"], "tenant-b")])
    latest = rest.get("/process-definition", params={"key": "order", "latestVersion": "true"})
    assert len(latest.json()) == 2
    only_b = rest.get("/process-definition", params={"tenantIdIn": "tenant-b"}).json()
    assert _ids(only_b) == [(def_b["id"], "tenant-b")]
    assert rest.get("/process-definition", params={"withoutTenantId": "true"}).json() == []
    by_tenant = rest.get("/process-definition/key/order/tenant-id/tenant-a").json()
    assert (by_tenant["id"], by_tenant["tenantId"]) == (def_a["id"], "tenant-a")
    xml_b = rest.get("/process-definition/key/order/tenant-id/tenant-b/xml").json()
    assert xml_b["id"] == def_b["id"] and 'id="order"' in xml_b["bpmn20Xml"]

    # By key alone, Camunda's REST API means the definition without a tenant: there is none.
    alone = rest.post("/process-definition/key/order/start", json={})
    assert alone.status_code == 404
    assert alone.json() == {
        "type": "RestException",
        "message": "No matching process definition with key: order and no tenant-id",
    }
    missing = rest.post("/process-definition/key/order/tenant-id/tenant-c/start", json={})
    assert missing.status_code == 404
    assert missing.json()["message"] == (
        "No matching process definition with key: order and tenant-id tenant-c"
    )

    started_a = _start(rest, "/process-definition/key/order/tenant-id/tenant-a/start")
    started_b = _start(rest, "/process-definition/key/order/tenant-id/tenant-b/start")
    assert (started_a["definitionId"], started_a["tenantId"]) == (def_a["id"], "tenant-a")
    assert (started_b["definitionId"], started_b["tenantId"]) == (def_b["id"], "tenant-b")

    instances = rest.get("/process-instance", params={"tenantIdIn": "tenant-a"}).json()
    assert _ids(instances) == [(started_a["id"], "tenant-a")]
    both = rest.get("/process-instance", params={"tenantIdIn": "tenant-a,tenant-b"}).json()
    assert len(both) == 2
    count = rest.get("/process-instance/count", params={"tenantIdIn": "tenant-b"}).json()
    assert count == {"count": 1}
    assert rest.get("/process-instance", params={"withoutTenantId": "true"}).json() == []
    history = rest.get("/history/process-instance", params={"tenantIdIn": "tenant-b"}).json()
    assert _ids(history) == [(started_b["id"], "tenant-b")]

    # The external tasks carry their instance's tenant; a fetch for tenant-b locks only its own.
    external = rest.get("/external-task", params={"tenantIdIn": "tenant-a"}).json()
    assert [(t["processInstanceId"], t["tenantId"]) for t in external] == [
        (started_a["id"], "tenant-a")
    ]
    fetched = rest.post(
        "/external-task/fetchAndLock",
        json={
            "workerId": "w1",
            "maxTasks": 5,
            "topics": [{"topicName": "charge", "lockDuration": 60000, "tenantIdIn": ["tenant-b"]}],
        },
    )
    assert fetched.status_code == 200, fetched.text
    [locked] = fetched.json()
    assert (locked["processInstanceId"], locked["tenantId"]) == (started_b["id"], "tenant-b")
    unlocked = rest.get("/external-task", params={"notLocked": "true"}).json()
    assert [t["processInstanceId"] for t in unlocked] == [started_a["id"]]
    none_without = rest.post(
        "/external-task/fetchAndLock",
        json={
            "workerId": "w2",
            "maxTasks": 5,
            "topics": [{"topicName": "charge", "lockDuration": 60000, "withoutTenantId": True}],
        },
    )
    assert none_without.json() == []

    done = rest.post(f"/external-task/{locked['id']}/complete", json={"workerId": "w1"})
    assert done.status_code == 204, done.text
    tasks = rest.get("/task", params={"tenantIdIn": "tenant-b"}).json()
    assert [(t["processInstanceId"], t["tenantId"]) for t in tasks] == [
        (started_b["id"], "tenant-b")
    ]
    assert rest.get("/task", params={"tenantIdIn": "tenant-a"}).json() == []
    assert rest.get("/task", params={"withoutTenantId": "true"}).json() == []

    # A definition of the same key without a tenant: its own version 1, and what the key alone
    # starts.
    bare = deploy(rest, ("order.bpmn", xml))
    [def_bare] = bare["deployedProcessDefinitions"].values()
    assert (def_bare["version"], def_bare["tenantId"], bare["tenantId"]) == (1, None, None)
    started_bare = _start(rest, "/process-definition/key/order/start")
    assert (started_bare["definitionId"], started_bare["tenantId"]) == (def_bare["id"], None)
    with_bare = rest.get(
        "/process-definition",
        params={"tenantIdIn": "tenant-a", "includeProcessDefinitionsWithoutTenantId": "true"},
    ).json()
    assert _ids(with_bare) == sorted([(def_a["id"], "tenant-a"), (def_bare["id"], None)])
    without = rest.get("/process-instance", params={"withoutTenantId": "true"}).json()
    assert _ids(without) == [(started_bare["id"], None)]


def test_a_message_for_one_tenant_reaches_only_its_instances(
    server: LiveServer, rest: httpx.Client
) -> None:
    for tenant in ("tenant-a", "tenant-b"):
        deploy(rest, ("payment.bpmn", WAIT_PAYMENT), **{"tenant-id": tenant})
    waiting = {
        tenant: _start(rest, f"/process-definition/key/payment/tenant-id/{tenant}/start")["id"]
        for tenant in ("tenant-a", "tenant-b")
    }
    both = rest.post(
        "/message",
        json={"messageName": "Paid", "tenantId": "tenant-a", "withoutTenantId": True},
    )
    assert both.status_code == 400
    assert both.json()["message"] == (
        "Parameter 'tenantId' cannot be used together with parameter 'withoutTenantId'."
    )
    none = rest.post("/message", json={"messageName": "Paid", "withoutTenantId": True})
    assert none.status_code == 400

    answer = rest.post(
        "/message",
        json={"messageName": "Paid", "tenantId": "tenant-b", "resultEnabled": True},
    )
    assert answer.status_code == 200, answer.text
    [result] = answer.json()
    assert result["resultType"] == "Execution"
    assert (result["execution"]["processInstanceId"], result["execution"]["tenantId"]) == (
        waiting["tenant-b"],
        "tenant-b",
    )
    ended = rest.get("/history/process-instance", params={"finished": "true"}).json()
    assert _ids(ended) == [(waiting["tenant-b"], "tenant-b")]
    running = rest.get("/process-instance", params={"processDefinitionKey": "payment"}).json()
    assert _ids(running) == [(waiting["tenant-a"], "tenant-a")]


def test_the_native_api_starts_a_key_within_a_tenant(
    server: LiveServer, rest: httpx.Client
) -> None:
    xml = external_then_review("order", "charge")
    for tenant in ("tenant-a", "tenant-b"):
        deploy(rest, ("order.bpmn", xml), **{"tenant-id": tenant})
    with httpx.Client(base_url=f"{server.url}/api/v1", auth=("admin", PASSWORD)) as api:
        ambiguous = api.post("/definitions/key/order/start", json={})
        assert ambiguous.status_code == 400
        assert ambiguous.json()["message"] == (
            "Cannot resolve a unique process definition for key 'order' because it exists for "
            "multiple tenants."
        )
        started = api.post("/definitions/key/order/start", json={"tenant_id": "tenant-b"})
        assert started.status_code == 201, started.text
        definition_id = started.json()["definition_id"]
    definition = rest.get(f"/process-definition/{definition_id}").json()
    assert (definition["key"], definition["tenantId"]) == ("order", "tenant-b")


def test_decision_definitions_carry_and_filter_by_their_tenant(
    server: LiveServer, rest: httpx.Client
) -> None:
    dmn = (Path(__file__).parent.parent / "data" / "dmn" / "dish_first.dmn").read_text()
    a = deploy(rest, ("dish.dmn", dmn), **{"tenant-id": "tenant-a"})
    bare = deploy(rest, ("dish.dmn", dmn))
    [from_a] = a["deployedDecisionDefinitions"].values()
    [from_bare] = bare["deployedDecisionDefinitions"].values()
    assert (from_a["version"], from_a["tenantId"]) == (1, "tenant-a")
    assert (from_bare["version"], from_bare["tenantId"]) == (1, None)
    only_a = rest.get("/decision-definition", params={"tenantIdIn": "tenant-a"}).json()
    assert _ids(only_a) == [(from_a["id"], "tenant-a")]
    latest = rest.get("/decision-definition", params={"latestVersion": "true"}).json()
    assert _ids(latest) == sorted([(from_a["id"], "tenant-a"), (from_bare["id"], None)])
    without = rest.get("/decision-definition", params={"withoutTenantId": "true"}).json()
    assert _ids(without) == [(from_bare["id"], None)]
    both = rest.get(
        "/decision-definition",
        params={"tenantIdIn": "tenant-a", "includeDecisionDefinitionsWithoutTenantId": "true"},
    ).json()
    assert len(both) == 2
    by_key = rest.get(f"/decision-definition/key/{from_a['key']}").json()
    assert by_key["id"] == from_bare["id"]


def test_a_member_of_one_tenant_sees_its_rows_and_those_of_no_tenant(
    server: LiveServer, rest: httpx.Client
) -> None:
    xml = external_then_review("order", "charge")
    a = deploy(rest, ("order.bpmn", xml), **{"tenant-id": "tenant-a"})
    deploy(rest, ("order.bpmn", xml), **{"tenant-id": "tenant-b"})
    shared = deploy(rest, ("order.bpmn", xml))
    [def_a] = a["deployedProcessDefinitions"].values()
    [def_shared] = shared["deployedProcessDefinitions"].values()
    for path in (
        "/process-definition/key/order/tenant-id/tenant-a/start",
        "/process-definition/key/order/tenant-id/tenant-b/start",
        "/process-definition/key/order/start",
    ):
        _start(rest, path)

    # Tina operates, and belongs to tenant A only.
    created = rest.post(
        "/user/create",
        json={"profile": {"id": "tina"}, "credentials": {"password": "tina-password-1"}},
    )
    assert created.status_code == 204, created.text
    assert rest.put("/group/operator/members/tina").status_code == 204
    assert rest.post("/tenant/create", json={"id": "tenant-a", "name": "A"}).status_code == 204
    assert rest.put("/tenant/tenant-a/user-members/tina").status_code == 204

    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("tina", "tina-password-1"), timeout=30
    ) as tina:
        definitions = tina.get("/process-definition", params={"key": "order"}).json()
        assert _ids(definitions) == sorted([(def_a["id"], "tenant-a"), (def_shared["id"], None)])
        instances = tina.get("/process-instance").json()
        assert sorted(i["tenantId"] or "" for i in instances) == ["", "tenant-a"]
        assert tina.get("/process-instance/count").json() == {"count": 2}
        tasks = tina.get("/external-task").json()
        assert sorted(t["tenantId"] or "" for t in tasks) == ["", "tenant-a"]

    # The admin sees every tenant.
    assert rest.get("/process-instance/count").json() == {"count": 3}
