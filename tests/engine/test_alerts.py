"""Stuck-instance alerts: thresholds declared in a model or set by an operator, the instances
past one read as of the engine's clock, and each crossing raised exactly once with its
`alert.raised` outbox row."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from engine.api import Engine
from engine.commands.alerts import RaiseAlerts, RemoveAlertThreshold, SetAlertThreshold
from engine.commands.deployments import Resource
from engine.core.actors import Actor, acting
from engine.errors import BadRequest, ModelError
from engine.identity.evaluate import Rule
from engine.identity.grants import grants_of
from engine.identity.permissions import AuthorizationType, ResourceType, permission_bits
from engine.queries import alerts
from engine.states import AuditChannel
from engine.store import cleanup as cleanup_store
from tests.engine.clock import ManualClock

START = datetime(2031, 5, 6, 8, 0, tzinfo=UTC)


def stuck_model(key: str = "stuck", waiting: str = "PT2H", incident: str = "PT15M") -> str:
    """start -> approve (user task, waiting threshold) -> charge (external task, incident
    threshold) -> end."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
             targetNamespace="http://example.com/alerts">
  <process id="{key}" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="approve"/>
    <userTask id="approve" name="Approve">
      <extensionElements>
        <camunda:properties>
          <camunda:property name="interlock.alert.waiting" value="{waiting}"/>
        </camunda:properties>
      </extensionElements>
    </userTask>
    <sequenceFlow id="f2" sourceRef="approve" targetRef="charge"/>
    <serviceTask id="charge" name="Charge card" camunda:type="external" camunda:topic="charge">
      <extensionElements>
        <camunda:properties>
          <camunda:property name="interlock.alert.incident" value="{incident}"/>
        </camunda:properties>
      </extensionElements>
    </serviceTask>
    <sequenceFlow id="f3" sourceRef="charge" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>
"""


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def engine(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4, clock=clock) as engine:
        yield engine


def raised_rows(engine: Engine) -> list[tuple[Any, ...]]:
    with engine.connection() as conn:
        return conn.execute(
            "SELECT o.event, o.instance_id, o.node_id, c.kind, c.since "
            "FROM outbox_event o JOIN alert_crossing c ON c.id = o.history_id "
            "WHERE o.event = 'alert.raised' ORDER BY o.seq"
        ).fetchall()


def test_a_model_declares_thresholds_and_a_waiting_token_crosses_once(
    engine: Engine, clock: ManualClock
) -> None:
    engine.deploy(stuck_model().encode())
    [waiting, incident] = sorted(alerts.thresholds(engine), key=lambda t: t.kind, reverse=True)
    assert (waiting.node_id, waiting.kind, waiting.duration, waiting.seconds) == (
        "approve",
        "waiting",
        "PT2H",
        7200,
    )
    assert (incident.node_id, incident.kind, incident.seconds, incident.source) == (
        "charge",
        "incident",
        900,
        "model",
    )
    first = engine.start_latest("stuck", business_key="order-1")
    clock.advance(minutes=30)
    second = engine.start_latest("stuck", business_key="order-2")

    clock.advance(minutes=89)
    assert alerts.open_alerts(engine, clock.now) == []
    result = engine.run(RaiseAlerts())
    assert result.raised == 0
    # The next crossing is known: the first instance's visit began at START.
    assert datetime.fromisoformat(result.next_crossing) == START.replace(hour=10)

    clock.advance(minutes=2)  # 2 h 1 min after the first start
    [alert] = alerts.open_alerts(engine, clock.now)
    assert (alert.instance_id, alert.business_key, alert.node_name, alert.kind) == (
        first.id,
        "order-1",
        "Approve",
        "waiting",
    )
    assert alert.over_seconds == 60
    assert [(c.definition_key, c.kind, c.alerts) for c in alerts.counts(engine, clock.now)] == [
        ("stuck", "waiting", 1)
    ]
    assert alerts.total(alerts.counts(engine, clock.now, "stuck")) == 1
    assert alerts.counts(engine, clock.now, "other") == []
    assert len(alerts.open_alerts(engine, clock.now, "stuck")) == 1
    assert engine.run(RaiseAlerts()).raised == 1
    # A second tick, and a later one, raise nothing again for the same crossing.
    assert engine.run(RaiseAlerts()).raised == 0
    clock.advance(minutes=31)
    assert engine.run(RaiseAlerts()).raised == 1  # the second instance's
    assert engine.run(RaiseAlerts()).raised == 0
    rows = raised_rows(engine)
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("alert.raised", first.id, "approve", "waiting"),
        ("alert.raised", second.id, "approve", "waiting"),
    ]
    assert len(alerts.open_alerts(engine, clock.now)) == 2

    # The task completed: the token moved on, the alert is gone.
    [task] = first.user_tasks()
    engine.complete_task(task.id)
    assert [a.instance_id for a in alerts.open_alerts(engine, clock.now)] == [second.id]


def test_an_open_incident_crosses_its_threshold(engine: Engine, clock: ManualClock) -> None:
    engine.deploy(stuck_model().encode())
    instance = engine.start_latest("stuck")
    [task] = instance.user_tasks()
    engine.complete_task(task.id)
    [locked] = engine.fetch_and_lock("worker-1", {"charge": 60_000})
    engine.fail_external_task(locked["id"], "worker-1", "card declined", retries=0)
    clock.advance(minutes=14)
    assert engine.run(RaiseAlerts()).raised == 0
    clock.advance(minutes=2)
    [alert] = alerts.open_alerts(engine, clock.now, kind=None)
    assert (alert.kind, alert.node_id, alert.instance_id, alert.over_seconds) == (
        "incident",
        "charge",
        instance.id,
        60,
    )
    assert engine.run(RaiseAlerts()).raised == 1
    assert engine.run(RaiseAlerts()).raised == 0


def test_an_operator_sets_and_removes_thresholds(engine: Engine, clock: ManualClock) -> None:
    engine.deploy(stuck_model(key="plain", waiting="P1D").encode())
    instance = engine.start_latest("plain")
    result = engine.run(SetAlertThreshold("plain", "approve", "waiting", "PT10M"))
    clock.advance(minutes=11)
    [alert] = alerts.open_alerts(engine, clock.now)
    assert alert.instance_id == instance.id
    [shown] = [t for t in alerts.thresholds(engine, "plain") if t.kind == "waiting"]
    assert (shown.duration, shown.source) == ("PT10M", "console")
    # A new version's declaration leaves the operator's threshold alone.
    engine.deploy(stuck_model(key="plain", waiting="PT3H", incident="PT1H").encode())
    [shown] = [t for t in alerts.thresholds(engine, "plain") if t.kind == "waiting"]
    assert (shown.duration, shown.source) == ("PT10M", "console")
    engine.run(RemoveAlertThreshold(shown.id))
    assert alerts.open_alerts(engine, clock.now) == []
    with pytest.raises(BadRequest, match="duration") as refused:
        engine.run(SetAlertThreshold("plain", "approve", "waiting", "2 hours"))
    assert refused.value.detail == {"field": "duration"}
    with pytest.raises(BadRequest, match="node 'nowhere'"):
        engine.run(SetAlertThreshold("plain", "nowhere", "waiting", "PT1H"))
    with pytest.raises(BadRequest, match="kind"):
        engine.run(SetAlertThreshold("plain", "approve", "late", "PT1H"))
    assert engine.run(SetAlertThreshold("plain", "approve", "waiting", "PT1H")).threshold_id
    assert result.threshold_id


def test_a_model_whose_threshold_is_no_duration_is_refused_naming_file_line_and_element(
    engine: Engine,
) -> None:
    text = stuck_model(key="broken", incident="fifteen minutes")
    with pytest.raises(ModelError) as refused:
        engine.deploy(Resource("broken.bpmn", text.encode()))
    error = refused.value
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "fifteen minutes" in t)
    assert (error.file, error.line, error.element_id) == ("broken.bpmn", line, "charge")
    assert "interlock.alert.incident" in str(error)
    with pytest.raises(ModelError, match="months or years"):
        engine.deploy(Resource("monthly.bpmn", stuck_model(key="monthly", waiting="P1M").encode()))
    with pytest.raises(ModelError, match="no alert threshold"):
        bad = stuck_model(key="typo").replace("interlock.alert.waiting", "interlock.alert.wait")
        engine.deploy(Resource("typo.bpmn", bad.encode()))


def test_a_node_id_another_key_also_has_is_counted_by_its_instances_key(
    engine: Engine, clock: ManualClock
) -> None:
    engine.deploy(stuck_model(key="first").encode())
    engine.deploy(stuck_model(key="second", waiting="P2D").encode())
    with engine.connection() as conn:
        shared = conn.execute(
            "SELECT definition_key, kind, node_shared FROM alert_threshold ORDER BY 1, 2"
        ).fetchall()
    # Both files have an `approve` and a `charge`: every threshold is told apart by key.
    assert shared == [
        ("first", "incident", True),
        ("first", "waiting", True),
        ("second", "incident", True),
        ("second", "waiting", True),
    ]
    mine = engine.start_latest("first")
    engine.start_latest("second")
    clock.advance(hours=3)
    assert [(c.definition_key, c.kind, c.alerts) for c in alerts.counts(engine, clock.now)] == [
        ("first", "waiting", 1)
    ]
    [alert] = alerts.open_alerts(engine, clock.now)
    assert alert.instance_id == mine.id


def test_a_reader_narrowed_by_grants_sees_only_the_alerts_of_what_they_read(
    engine: Engine, clock: ManualClock
) -> None:
    engine.deploy(stuck_model(key="mine").encode())
    engine.deploy(stuck_model(key="theirs").encode())
    one = engine.start_latest("mine")
    other = engine.start_latest("theirs")
    another = engine.start_latest("theirs")
    clock.advance(hours=3)
    pd, pi = ResourceType.PROCESS_DEFINITION, ResourceType.PROCESS_INSTANCE
    rules = [
        Rule(
            AuthorizationType.GRANT,
            "ann",
            None,
            int(pd),
            "mine",
            permission_bits(pd, ["READ", "READ_INSTANCE"]),
        ),
        Rule(
            AuthorizationType.GRANT,
            "ann",
            None,
            int(pi),
            str(other.id),
            permission_bits(pi, ["READ"]),
        ),
    ]
    ann = Actor("ann", AuditChannel.CONSOLE, grants=grants_of("ann", set(), rules))
    with acting(ann):
        counted = [(c.definition_key, c.alerts) for c in alerts.counts(engine, clock.now)]
        listed = {a.instance_id for a in alerts.open_alerts(engine, clock.now)}
    assert counted == [("mine", 1), ("theirs", 1)]
    assert listed == {one.id, other.id}
    assert another.id not in listed


def test_a_subprocess_whose_threshold_is_no_duration_is_refused_naming_it(engine: Engine) -> None:
    text = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="x">
  <process id="nested" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="inner"/>
    <subProcess id="inner">
      <extensionElements>
        <camunda:properties>
          <camunda:property name="interlock.alert.waiting" value="soon"/>
        </camunda:properties>
      </extensionElements>
      <startEvent id="inner_start"/>
      <sequenceFlow id="f2" sourceRef="inner_start" targetRef="inner_end"/>
      <endEvent id="inner_end"/>
    </subProcess>
    <sequenceFlow id="f3" sourceRef="inner" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>
"""
    with pytest.raises(ModelError) as refused:
        engine.deploy(Resource("nested.bpmn", text.encode()))
    assert refused.value.element_id == "inner"
    assert "interlock.alert.waiting" in str(refused.value)
    assert alerts.thresholds(engine) == []


def test_the_alerts_an_instance_raised_go_with_its_history(
    engine: Engine, clock: ManualClock
) -> None:
    engine.deploy(stuck_model().encode())
    kept, deleted = engine.start_latest("stuck"), engine.start_latest("stuck")
    clock.advance(hours=3)
    assert engine.run(RaiseAlerts()).raised == 2
    with engine.connection() as conn, conn.transaction():
        assert cleanup_store.delete_instances(conn, [deleted.id]) == 1
        left = conn.execute("SELECT instance_id FROM alert_crossing").fetchall()
    assert left == [(kept.id,)]
    # Gone with the instance, it is not raised again (the kept one was raised already).
    assert engine.run(RaiseAlerts()).raised == 0
