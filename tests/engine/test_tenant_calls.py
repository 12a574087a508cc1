"""Tenants in the engine's own resolutions: a call activity calls the definition of its caller's
tenant unless `camunda:calledElementTenantId` names another (or, as `${null}`, none); a signal
a process throws reaches its own tenant's catchers and those of no tenant (a thrower of no
tenant: only those), as Camunda's; a batch is of the one tenant its items share."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.bpmn.parser import parse_bpmn
from engine.bpmn.writer import write_bpmn
from engine.commands.batches import CreateBatch
from engine.errors import ModelError, NotFound
from engine.queries import batches as batch_reads
from engine.states import BatchType, InstanceState

HEADER = (
    '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">'
)


def _caller(key: str, attributes: str = "") -> str:
    return (
        HEADER + f'<process id="{key}" isExecutable="true"><startEvent id="s"/>'
        f'<callActivity id="Call" calledElement="child" {attributes}/>'
        '<endEvent id="e"/><sequenceFlow id="f1" sourceRef="s" targetRef="Call"/>'
        '<sequenceFlow id="f2" sourceRef="Call" targetRef="e"/></process></definitions>'
    )


def _child(name: str) -> str:
    return (
        HEADER + '<process id="child" isExecutable="true"><startEvent id="s"/>'
        f'<userTask id="work" name="{name}"/><endEvent id="e"/>'
        '<sequenceFlow id="f1" sourceRef="s" targetRef="work"/>'
        '<sequenceFlow id="f2" sourceRef="work" targetRef="e"/></process></definitions>'
    )


def _called_tenant(engine: Engine, key: str, tenant: str | None, **variables: object) -> str | None:
    started = engine.start_latest(key, variables, tenant_id=tenant, without_tenant=tenant is None)
    [called] = started.children()
    return called.info().tenant_id


def test_a_call_activity_calls_its_tenant_or_the_one_it_names(engine: Engine) -> None:
    for tenant in ("tenant-a", "tenant-b", None):
        engine.deploy(_child(f"work of {tenant}"), tenant_id=tenant)
        engine.deploy(_caller("own"), tenant_id=tenant)
    engine.deploy(
        _caller("named", 'camunda:calledElementTenantId="tenant-b"'),
        _caller("shared", 'camunda:calledElementTenantId="${null}"'),
        _caller("chosen", 'camunda:calledElementTenantId="${which}"'),
        tenant_id="tenant-a",
    )
    assert _called_tenant(engine, "own", "tenant-a") == "tenant-a"
    assert _called_tenant(engine, "own", "tenant-b") == "tenant-b"
    assert _called_tenant(engine, "own", None) is None
    assert _called_tenant(engine, "named", "tenant-a") == "tenant-b"
    assert _called_tenant(engine, "shared", "tenant-a") is None
    assert _called_tenant(engine, "chosen", "tenant-a", which="tenant-b") == "tenant-b"
    with pytest.raises(NotFound, match="not deployed for tenant 'tenant-c'"):
        engine.start_latest("chosen", {"which": "tenant-c"}, tenant_id="tenant-a")


def test_the_called_tenant_survives_writing_and_parsing() -> None:
    [model] = parse_bpmn(
        _caller("named", 'camunda:calledElementTenantId="${which}"').encode(), "named.bpmn"
    )
    assert parse_bpmn(write_bpmn([model]).encode(), "again.bpmn") == [model]


@pytest.mark.parametrize(
    ("attribute", "problem"),
    [
        ('camunda:calledElementTenantId=" "', "needs a tenant id or an expression"),
        ('camunda:calledElementTenantId="${a +}"', "calledElementTenantId"),
        ('camunda:caseTenantId="t"', "camunda:caseTenantId"),
    ],
)
def test_deployment_refuses_a_called_tenant_it_cannot_use(
    engine: Engine, attribute: str, problem: str
) -> None:
    with pytest.raises(ModelError, match=problem) as caught:
        engine.deploy(_caller("p", attribute))
    assert caught.value.detail.get("element_id") == "Call"


def _catcher(key: str) -> str:
    return (
        HEADER + f'<process id="{key}" isExecutable="true"><startEvent id="s"/>'
        '<intermediateCatchEvent id="w"><signalEventDefinition signalRef="S"/>'
        '</intermediateCatchEvent><endEvent id="e"/>'
        '<sequenceFlow id="f1" sourceRef="s" targetRef="w"/>'
        '<sequenceFlow id="f2" sourceRef="w" targetRef="e"/></process>'
        '<signal id="S" name="Go"/></definitions>'
    )


def _thrower() -> str:
    return (
        HEADER + '<process id="thrower" isExecutable="true"><startEvent id="s"/>'
        '<intermediateThrowEvent id="t"><signalEventDefinition signalRef="S"/>'
        '</intermediateThrowEvent><endEvent id="e"/>'
        '<sequenceFlow id="f1" sourceRef="s" targetRef="t"/>'
        '<sequenceFlow id="f2" sourceRef="t" targetRef="e"/></process>'
        '<signal id="S" name="Go"/></definitions>'
    )


def test_a_thrown_signal_reaches_its_tenant_and_those_of_none(engine: Engine) -> None:
    tenants = ("tenant-a", "tenant-b", None)
    for tenant in tenants:
        engine.deploy(_catcher("catcher"), _thrower(), tenant_id=tenant)

    def catchers() -> dict[str | None, InstanceHandle]:
        return {
            tenant: engine.start_latest("catcher", tenant_id=tenant, without_tenant=tenant is None)
            for tenant in tenants
        }

    waiting = catchers()
    engine.start_latest("thrower", tenant_id="tenant-a")
    states = {t: h.state for t, h in waiting.items()}
    assert states == {
        "tenant-a": InstanceState.COMPLETED,
        "tenant-b": InstanceState.ACTIVE,
        None: InstanceState.COMPLETED,
    }
    # A thrower of no tenant reaches only the catchers of no tenant.
    waiting = catchers()
    engine.start_latest("thrower", without_tenant=True)
    states = {t: h.state for t, h in waiting.items()}
    assert states == {
        "tenant-a": InstanceState.ACTIVE,
        "tenant-b": InstanceState.ACTIVE,
        None: InstanceState.COMPLETED,
    }


def test_a_batch_is_of_the_one_tenant_of_its_items(engine: Engine) -> None:
    for tenant in ("tenant-a", "tenant-b"):
        engine.deploy(_child(f"work of {tenant}"), tenant_id=tenant)
    a = [str(engine.start_latest("child", tenant_id="tenant-a").id) for _ in range(2)]
    b = str(engine.start_latest("child", tenant_id="tenant-b").id)

    def tenant_of(items: list[str]) -> str | None:
        created = engine.run(CreateBatch(BatchType.SUSPEND_INSTANCES, tuple(items)))
        row = batch_reads.batch(engine, UUID(created.batch_id))
        assert row is not None
        return row.tenant_id

    assert tenant_of(a) == "tenant-a"
    assert tenant_of([b]) == "tenant-b"
    assert tenant_of([*a, b]) is None


def test_a_business_rule_task_evaluates_its_tenants_decision(engine: Engine) -> None:
    data = Path(__file__).parent.parent / "data"
    bpmn, dmn = data / "bpmn" / "dinner_planning.bpmn", data / "dmn" / "dish_first.dmn"
    engine.deploy(bpmn, dmn, tenant_id="tenant-a")
    # Tenant B's decision has the highest version of the key.
    for _ in range(2):
        engine.deploy(bpmn, dmn, tenant_id="tenant-b", duplicate_filtering=False)
    started = engine.start_latest(
        "dinner_planning", {"season": "Winter", "guestCount": 4}, tenant_id="tenant-a"
    )
    with engine.pool.connection() as conn:
        found = conn.execute(
            "SELECT d.tenant_id, d.version FROM decision_evaluation e "
            "JOIN decision_definition d ON d.id = e.definition_id WHERE e.instance_id = %s",
            (started.id,),
        ).fetchall()
    assert found == [("tenant-a", 1)]
