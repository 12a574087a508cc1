"""tests/data/bpmn/claim_handling.bpmn runs: a reminder every four hours (a non-interrupting timer
cycle event subprocess) while the claim is assessed in an asynchronously entered subprocess, a
non-interrupting message event subprocess at process level for address changes, and an error
event subprocess that terminates the claim."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api import Engine
from engine.core.handlers import TaskContext
from engine.states import InstanceState
from tests.engine.clock import ManualClock
from tests.engine.test_event_subprocesses import open_tasks, waits
from tests.engine.test_waits import fire_due_jobs

CLAIM = Path(__file__).parent.parent / "data" / "bpmn" / "claim_handling.bpmn"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock) as engine:
        engine.deploy(CLAIM)
        yield engine


def test_reminders_run_while_the_claim_is_assessed(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    reminded: list[str] = []
    paid: list[str] = []

    def remind(context: TaskContext) -> None:
        reminded.append(context.node_id)

    def pay(context: TaskContext) -> None:
        paid.append(str(context.instance_id))

    timed.register_handler("remindAssessor", remind)
    timed.register_handler("payClaim", pay)
    claim = timed.start_latest("claim_handling", business_key="C-1")
    # Parked before the subprocess: only the process listens yet.
    assert waits(database_url, claim.id) == [
        ("job", "Activity_Assess", "scope"),
        ("subscription", "StartEvent_AddressChanged", "instance"),
    ]
    assert fire_due_jobs(timed) == 1
    assert waits(database_url, claim.id) == [
        ("job", "StartEvent_Reminder", "scope"),
        ("subscription", "StartEvent_AddressChanged", "instance"),
    ]
    for hours in (1, 3, 4, 4):
        clock.advance(hours=hours)
        fire_due_jobs(timed)
    assert reminded == ["Task_Remind", "Task_Remind", "Task_Remind"]
    timed.correlate_message("AddressChanged", business_key="C-1", variables={"clerk": "ada"})
    [update] = claim.user_tasks()
    assert (update.node_id, update.assignee) == ("Task_UpdateAddress", "ada")
    [score] = timed.fetch_and_lock("w", {"score-claim": 10_000})
    timed.complete_external_task(score["id"], "w", {"score": 12})
    # The assessment is over: its reminder stopped; the address change still runs.
    assert paid == [str(claim.id)]
    assert waits(database_url, claim.id) == [
        ("subscription", "StartEvent_AddressChanged", "instance")
    ]
    clock.advance(hours=8)
    assert fire_due_jobs(timed) == 0
    assert reminded == ["Task_Remind"] * 3
    assert claim.state is InstanceState.ACTIVE
    timed.complete_task(update.id)
    assert claim.info().state == InstanceState.COMPLETED
    assert waits(database_url, claim.id) == []


def test_an_error_ends_the_claim_through_its_error_event_subprocess(
    timed: Engine, database_url: str
) -> None:
    claim = timed.start_latest("claim_handling", business_key="C-2")
    fire_due_jobs(timed)
    timed.correlate_message("AddressChanged", business_key="C-2", variables={"clerk": "bob"})
    [score] = timed.fetch_and_lock("w", {"score-claim": 10_000})
    timed.external_task_bpmn_error(score["id"], "w", "BROKEN", "scoring service gave up")
    # The error start is interrupting: the address change ended and nothing listens any more.
    assert open_tasks(claim) == ["Task_Alert"]
    assert waits(database_url, claim.id) == []
    timed.complete_task(claim.user_tasks()[0].id)
    assert claim.info().state == InstanceState.COMPLETED
