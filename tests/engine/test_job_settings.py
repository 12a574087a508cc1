"""Jobs as an operator changes them, and camunda:jobPriority: due jobs are acquired highest
priority first (a literal, an expression, the process's as a default); a suspended job is not
acquired until it is activated; a cycle timer's moved due date moves its later repetitions only
when the move cascades; a failure's full text is kept beside its message; a suspended job
definition makes its new jobs suspended."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from uuid import UUID

import pytest

from engine.api import Engine
from engine.commands.job_settings import (
    SetJobDefinitionPriority,
    SetJobDefinitionSuspended,
    SetJobDueDate,
    SetJobPriority,
    SetJobSuspended,
)
from engine.core.handlers import TaskContext
from engine.errors import NotFound
from engine.loops.jobs import JobExecutor
from engine.model.job_definitions import job_definition_id
from engine.queries.camunda import jobs as job_reads
from engine.queries.camunda.common import CamundaPage
from tests.engine.clock import ManualClock

CAMUNDA = 'xmlns:camunda="http://camunda.org/schema/1.0/bpmn"'


def prioritized(key: str, process_priority: str | None, task_priority: str | None) -> str:
    """start -> an async handler task (with `task_priority`) -> end, in a process with
    `process_priority`."""
    on_process = f' camunda:jobPriority="{process_priority}"' if process_priority else ""
    on_task = f' camunda:jobPriority="{task_priority}"' if task_priority else ""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" {CAMUNDA}
             targetNamespace="t">
  <process id="{key}" isExecutable="true"{on_process}>
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="work"/>
    <serviceTask id="work" camunda:asyncBefore="true"
                 camunda:delegateExpression="${{record}}"{on_task}/>
    <sequenceFlow id="f2" sourceRef="work" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"""


def ticking(key: str = "ticking") -> str:
    """A user task with a non-interrupting cycle timer on it, firing every hour."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" {CAMUNDA}
             targetNamespace="t">
  <process id="{key}" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="wait"/>
    <userTask id="wait"/>
    <sequenceFlow id="f2" sourceRef="wait" targetRef="e"/>
    <endEvent id="e"/>
    <boundaryEvent id="tick" attachedToRef="wait" cancelActivity="false">
      <timerEventDefinition><timeCycle>R5/PT1H</timeCycle></timerEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f3" sourceRef="tick" targetRef="noted"/>
    <endEvent id="noted"/>
  </process>
</definitions>"""


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock, pool_size=4) as engine:
        yield engine


def _recording(engine: Engine) -> list[str]:
    order: list[str] = []

    def record(ctx: TaskContext) -> None:
        order.append(str(ctx.get("name")))

    engine.register_handler("record", record)
    return order


def _job_of(engine: Engine, instance_id: UUID) -> UUID:
    (job,) = engine.jobs(instance_id)
    return job.id


def _row(engine: Engine, job_id: UUID) -> job_reads.JobRow:
    rows = job_reads.jobs(engine, CamundaPage(), engine.clock(), job_id=job_id)
    assert isinstance(rows, list)
    (row,) = rows
    return row


def test_due_jobs_are_acquired_highest_priority_first(engine: Engine) -> None:
    order = _recording(engine)
    engine.deploy(prioritized("low", None, None))  # neither names one: 0
    engine.deploy(prioritized("by_process", "20", None))
    engine.deploy(prioritized("literal", "5", "50"))  # the task's own wins over the process's
    engine.deploy(prioritized("by_expression", None, "${weight * 10}"))
    created = [
        engine.start_latest("low", {"name": "low"}),
        engine.start_latest("by_expression", {"name": "expression-30", "weight": 3}),
        engine.start_latest("by_process", {"name": "process-20"}),
        engine.start_latest("literal", {"name": "literal-50"}),
    ]
    priorities = [_row(engine, _job_of(engine, i.id)).priority for i in created]
    assert priorities == [0, 30, 20, 50]
    executor = JobExecutor(engine, batch_size=1)
    while executor.run_once():
        pass
    assert order == ["literal-50", "expression-30", "process-20", "low"]


def test_a_priority_set_by_an_operator_changes_the_order(engine: Engine) -> None:
    order = _recording(engine)
    engine.deploy(prioritized("plain", None, None))
    first = engine.start_latest("plain", {"name": "first"})
    second = engine.start_latest("plain", {"name": "second"})
    engine.run(SetJobPriority(_job_of(engine, second.id), 7))
    assert _row(engine, _job_of(engine, second.id)).priority == 7
    executor = JobExecutor(engine, batch_size=1)
    while executor.run_once():
        pass
    assert order == ["second", "first"]
    assert first.id != second.id


def test_a_suspended_job_is_not_acquired_until_activated(engine: Engine) -> None:
    order = _recording(engine)
    engine.deploy(prioritized("plain", None, None))
    held = engine.start_latest("plain", {"name": "held"})
    other = engine.start_latest("plain", {"name": "other"})
    job_id = _job_of(engine, held.id)
    engine.run(SetJobSuspended(job_id, True))
    assert _row(engine, job_id).suspended
    executor = JobExecutor(engine, batch_size=10)
    assert executor.run_once() == 1
    assert order == ["other"]
    assert executor.run_once() == 0
    # Run by hand, it waits too, its retries untouched.
    engine.execute_job(job_id)
    assert order == ["other"] and _row(engine, job_id).retries == 3
    engine.run(SetJobSuspended(job_id, False))
    assert executor.run_once() == 1
    assert order == ["other", "held"]
    assert other.id != held.id
    with pytest.raises(NotFound):
        engine.run(SetJobSuspended(job_id, True))  # it ran: gone


def _cycle_job(engine: Engine, instance_id: UUID) -> job_reads.JobRow:
    (job,) = [j for j in engine.jobs(instance_id) if j.node_id == "tick"]
    return _row(engine, job.id)


def _fire(engine: Engine, clock: ManualClock, executor: JobExecutor, job_id: UUID) -> None:
    clock.now = _row(engine, job_id).due_at
    assert executor.run_once() == 1


@pytest.mark.parametrize("cascade", [True, False])
def test_a_moved_cycle_timer_moves_its_repetitions_only_when_cascading(
    timed: Engine, clock: ManualClock, cascade: bool
) -> None:
    timed.deploy(ticking())
    instance = timed.start_latest("ticking")
    job = _cycle_job(timed, instance.id)
    start = clock.now
    assert job.due_at == start + timedelta(hours=1)
    moved = start + timedelta(hours=1, minutes=15)
    timed.run(SetJobDueDate(job.id, moved, cascade=cascade))
    assert _row(timed, job.id).due_at == moved
    executor = JobExecutor(timed, batch_size=10)
    _fire(timed, clock, executor, job.id)
    after = _row(timed, job.id)
    # Cascading, the next repetition is an hour after the moved firing; otherwise it keeps to
    # the cycle's own schedule, two hours after the start.
    expected = moved + timedelta(hours=1) if cascade else start + timedelta(hours=2)
    assert after.due_at == expected
    assert job.repetitions_left is not None
    assert after.repetitions_left == job.repetitions_left - 1
    _fire(timed, clock, executor, job.id)
    assert _row(timed, job.id).due_at == expected + timedelta(hours=1)


def test_a_due_date_of_none_makes_the_job_due_now(timed: Engine, clock: ManualClock) -> None:
    timed.deploy(ticking())
    instance = timed.start_latest("ticking")
    job = _cycle_job(timed, instance.id)
    timed.run(SetJobDueDate(job.id, None))
    assert _row(timed, job.id).due_at == clock.now
    assert JobExecutor(timed, batch_size=10).run_once() == 1


def test_a_failure_keeps_its_full_text(engine: Engine) -> None:
    def failing(ctx: TaskContext) -> None:
        raise RuntimeError("the card was declined")

    engine.register_handler("record", failing)
    engine.deploy(prioritized("plain", None, None))
    instance = engine.start_latest("plain", {"name": "x"})
    job_id = _job_of(engine, instance.id)
    assert job_reads.job_stacktrace(engine, job_id) == (True, None)
    engine.execute_job(job_id)
    found, text = job_reads.job_stacktrace(engine, job_id)
    assert found and text is not None
    assert "Traceback" in text and "the card was declined" in text
    assert job_reads.job_stacktrace(engine, UUID(int=1)) == (False, None)


def test_a_suspended_job_definition_makes_its_new_jobs_suspended(engine: Engine) -> None:
    order = _recording(engine)
    engine.deploy(prioritized("plain", None, None))
    earlier = engine.start_latest("plain", {"name": "earlier"})
    job = _row(engine, _job_of(engine, earlier.id))
    assert job.definition_id is not None
    definition_id = UUID(job_definition_id(job.definition_id, job.node_id, job.kind))
    engine.run(SetJobDefinitionSuspended(definition_id, True))
    later = engine.start_latest("plain", {"name": "later"})
    assert not _row(engine, job.id).suspended  # made before: runs
    assert _row(engine, _job_of(engine, later.id)).suspended
    executor = JobExecutor(engine, batch_size=10)
    while executor.run_once():
        pass
    assert order == ["earlier"]
    engine.run(SetJobDefinitionSuspended(definition_id, False, include_jobs=True))
    assert executor.run_once() == 1
    assert order == ["earlier", "later"]


def test_a_job_definitions_overriding_priority_is_given_to_its_new_jobs(engine: Engine) -> None:
    _recording(engine)
    engine.deploy(prioritized("plain", "3", None))
    earlier = engine.start_latest("plain", {"name": "earlier"})
    job = _row(engine, _job_of(engine, earlier.id))
    assert job.priority == 3 and job.definition_id is not None
    definition_id = UUID(job_definition_id(job.definition_id, job.node_id, job.kind))
    engine.run(SetJobDefinitionPriority(definition_id, 90))
    later = engine.start_latest("plain", {"name": "later"})
    assert _row(engine, job.id).priority == 3
    assert _row(engine, _job_of(engine, later.id)).priority == 90
    engine.run(SetJobDefinitionPriority(definition_id, None))
    last = engine.start_latest("plain", {"name": "last"})
    assert _row(engine, _job_of(engine, last.id)).priority == 3
