"""The early warning before an incident: an instance whose job or external task failed and still
has retries left is "retrying" (the overview's count, the instance list's filter and marker, the
inspector's marker with the last error, the retries left and the next attempt), until the retry
succeeds or the retries run out (then it has an incident instead)."""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import httpx
import pytest

from app.console.common import when
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.views import SaveView
from engine.core.handlers import TaskContext
from engine.model import TimerDefinition
from engine.queries import retrying, views
from engine.queries.instances import InstanceFilter
from engine.states import InstanceState, JobOutcome, ListPage
from tests.engine.clock import ManualClock
from tests.server import LiveServer, console_login, live_server

JOB_KEY, TASK_KEY = "retry-charge", "retry-ship"
JOB_ERROR = (
    "HandlerError: handler 'charge' of service task 'charge' raised RuntimeError: "
    "card service unreachable"
)


@dataclass
class Charging:
    """The handler of the job's service task: it raises while `broken`."""

    broken: bool = True
    calls: list[str] = field(default_factory=list)

    def charge(self, ctx: TaskContext) -> dict[str, Any]:
        self.calls.append("charge")
        if self.broken:
            raise RuntimeError("card service unreachable")
        return {"charged": True}


@pytest.fixture
def clock() -> ManualClock:
    # The console tells next attempts against the wall clock: start the engine's clock there.
    return ManualClock(datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def charging() -> Charging:
    return Charging()


@pytest.fixture
def live(database_url: str, clock: ManualClock, charging: Charging) -> Iterator[LiveServer]:
    with live_server(database_url, run_jobs=False, clock=clock) as server:
        engine = server.engine
        engine.register_handler("charge", charging.charge)
        engine.deploy(
            ProcessBuilder(JOB_KEY)
            .start_event("start")
            .service_task("charge", handler="charge", async_before=True, retry_cycle="R3/PT5M")
            .end_event("end")
            .chain("start", "charge", "end")
            .build(),
            ProcessBuilder(TASK_KEY)
            .start_event("start")
            .service_task("ship", topic="ship")
            .end_event("end")
            .chain("start", "ship", "end")
            .build(),
        )
        yield server


@pytest.fixture
def console(live: LiveServer) -> Iterator[Console]:
    viewer = Console(live)
    yield viewer
    viewer.client.close()


class Console:
    """A viewer's view of the console: the pages an operator looks at, as text."""

    def __init__(self, server: LiveServer) -> None:
        login = console_login(server.url, "viewer")
        self.client = httpx.Client(
            base_url=server.url, cookies={"interlock_session": login.cookies["interlock_session"]}
        )

    def get(self, path: str) -> str:
        response = self.client.get(path)
        assert response.status_code == 200, response.text
        return html.unescape(" ".join(response.text.split()))

    def retrying_count(self) -> int:
        body = self.get("/overview/body")
        marker = 'href="/instances?retrying=yes" id="retrying-instances">'
        return int(body.split(marker, 1)[1].split("<", 1)[0])

    def listed(self, retrying: str) -> list[str]:
        rows = self.get(f"/instances?retrying={retrying}&fragment=rows")
        return [part.split('"', 1)[0] for part in rows.split('data-instance="')[1:]]

    def marked_in_list(self, instance_id: UUID) -> bool:
        rows = self.get("/instances?fragment=rows")
        row = rows.split(f'data-instance="{instance_id}"', 1)[1].split("</tr>", 1)[0]
        return "retrying-mark" in row


def retrying_ids(engine: Engine, wanted: bool) -> list[UUID]:
    return [i.id for i in engine.list_instances(InstanceFilter(retrying=wanted)).items]


def test_a_failed_job_with_retries_left_is_retrying_until_it_succeeds_or_runs_out(
    live: LiveServer, console: Console, clock: ManualClock, charging: Charging
) -> None:
    engine = live.engine
    fixed = engine.start_latest(JOB_KEY, business_key="fixed")
    spent = engine.start_latest(JOB_KEY, business_key="spent")
    [job] = engine.jobs(fixed.id)
    [other] = engine.jobs(spent.id)
    assert (job.retries, job.error_message) == (3, None)
    assert console.retrying_count() == 0 and retrying_ids(engine, True) == []
    # A filter value that is not one is refused, naming the parameter.
    refused = console.client.get("/instances?retrying=maybe&fragment=rows")
    assert refused.status_code == 400
    assert "query parameter &#39;retrying&#39; must be one of yes, no" in refused.text
    refused = console.client.get("/instances/export.csv?retrying=maybe")
    assert refused.status_code == 400 and "retrying" in refused.text
    api = httpx.get(f"{live.url}/api/v1/instances?retrying=maybe", headers=live.bearer("viewer"))
    assert api.status_code == 400 and api.json()["detail"]["field"] == "retrying"
    # A saved view keeps the filter, in the list's order of filters.
    saved = engine.run(SaveView("viewer", "instances", "retrying", "retrying=yes&state=Active"))
    assert views.of_owner(engine, "viewer", ListPage.INSTANCES)[0].query == (
        "state=Active&retrying=yes"
    )
    assert saved.replaced is False

    assert engine.execute_job(job.id) == JobOutcome.FAILED
    [job] = engine.jobs(fixed.id)
    assert (job.retries, job.error_message) == (2, JOB_ERROR)
    assert job.due_at == clock.now + timedelta(minutes=5)
    [work] = retrying.of_instance(engine, fixed.id)
    assert (work.kind, work.id, work.node_id, work.retries) == ("job", job.id, "charge", 2)
    assert (work.error_message, work.next_attempt_at) == (JOB_ERROR, job.due_at)
    assert retrying.count(engine) == 1 and console.retrying_count() == 1
    assert retrying_ids(engine, True) == [fixed.id]
    assert retrying_ids(engine, False) == [spent.id]
    assert console.listed("yes") == [str(fixed.id)]
    assert console.listed("no") == [str(spent.id)]
    api = httpx.get(f"{live.url}/api/v1/instances?retrying=true", headers=live.bearer("viewer"))
    assert [i["id"] for i in api.json()["items"]] == [str(fixed.id)]
    api = httpx.get(f"{live.url}/api/v1/instances?retrying=0", headers=live.bearer("viewer"))
    assert [i["id"] for i in api.json()["items"]] == [str(spent.id)]
    assert console.marked_in_list(fixed.id) and not console.marked_in_list(spent.id)

    header = console.get(f"/instances/{fixed.id}/header")
    assert '<span class="state retrying-mark">retrying</span>' in header
    assert (
        f'<li data-retrying="{job.id}" data-node="charge">Job at <code>charge</code> failed: '
        f'<q class="last-error">{JOB_ERROR}</q>; '
        '<span class="retries-left">2 retries left</span>, <span class="next-attempt">next attempt '
        f'<time datetime="{job.due_at.isoformat()}">{when(job.due_at)}</time>'
    ) in header
    panel = console.get(f"/instances/{fixed.id}/panel/jobs")
    assert f'<p class="retrying-line" data-retrying="{job.id}">' in panel
    assert f'<time datetime="{job.due_at.isoformat()}">' in panel
    assert "retrying" not in console.get(f"/instances/{spent.id}/header")

    # The retry succeeds once its time has come: the instance completes, no longer retrying.
    charging.broken = False
    clock.advance(minutes=5)
    assert engine.execute_job(job.id) == JobOutcome.EXECUTED
    assert fixed.state is InstanceState.COMPLETED
    assert retrying.of_instance(engine, fixed.id) == []
    assert console.retrying_count() == 0 and retrying_ids(engine, True) == []
    assert "retrying-mark" not in console.get(f"/instances/{fixed.id}/header")

    # The other one fails on and on: retrying while it has retries, then an incident.
    charging.broken = True
    for left in (2, 1):
        assert engine.execute_job(other.id) == JobOutcome.FAILED
        assert [w.retries for w in retrying.of_instance(engine, spent.id)] == [left]
        assert retrying_ids(engine, True) == [spent.id] and console.retrying_count() == 1
    assert engine.execute_job(other.id) == JobOutcome.FAILED
    [incident] = engine.incidents(instance_id=spent.id)
    assert (incident.type, incident.job_id) == ("failedJob", other.id)
    assert retrying.of_instance(engine, spent.id) == []
    assert console.retrying_count() == 0 and console.listed("yes") == []
    header = console.get(f"/instances/{spent.id}/header")
    assert "retrying-mark" not in header and 'id="header-incidents" class="bad">1<' in header


def test_an_external_task_failed_with_retries_left_is_retrying_until_completed_or_spent(
    live: LiveServer, console: Console, clock: ManualClock
) -> None:
    engine = live.engine
    shipped = engine.start_latest(TASK_KEY, business_key="shipped")
    spent = engine.start_latest(TASK_KEY, business_key="spent")
    tasks = engine.fetch_and_lock("w1", {"ship": 60_000}, max_tasks=2)
    by_instance = {t["instance_id"]: t["id"] for t in tasks}
    task_id, other_id = by_instance[str(shipped.id)], by_instance[str(spent.id)]
    # Locked but never failed: not retrying.
    assert console.retrying_count() == 0 and retrying_ids(engine, True) == []

    engine.fail_external_task(task_id, "w1", "carrier offline", retries=2, retry_timeout_ms=90_000)
    fetchable_at = clock.now + timedelta(seconds=90)
    [work] = retrying.of_instance(engine, shipped.id)
    assert (work.kind, str(work.id), work.node_id, work.retries) == (
        "external_task",
        task_id,
        "ship",
        2,
    )
    assert (work.error_message, work.next_attempt_at) == ("carrier offline", fetchable_at)
    assert (work.held_by, work.held_until) == (None, None)
    assert console.retrying_count() == 1
    assert retrying_ids(engine, True) == [shipped.id]
    assert console.listed("yes") == [str(shipped.id)]
    assert console.marked_in_list(shipped.id) and not console.marked_in_list(spent.id)
    header = console.get(f"/instances/{shipped.id}/header")
    assert (
        f'<li data-retrying="{task_id}" data-node="ship">External task at <code>ship</code> '
        'failed: <q class="last-error">carrier offline</q>; '
        '<span class="retries-left">2 retries left</span>, <span class="next-attempt">next attempt '
        f'<time datetime="{fetchable_at.isoformat()}">{when(fetchable_at)}</time>'
    ) in header
    panel = console.get(f"/instances/{shipped.id}/panel/external_tasks")
    assert f'<p class="retrying-line" data-retrying="{task_id}">' in panel
    # No worker holds it: its lock time is when it may be fetched again, not a lock.
    assert "<dt>Lock expires</dt><dd>not locked</dd>" in panel

    # Not fetchable before its retry timeout; then a worker tries it again: still retrying,
    # being tried by that worker, until it completes.
    assert engine.fetch_and_lock("w2", {"ship": 60_000}) == []
    clock.advance(seconds=90)
    [again] = engine.fetch_and_lock("w2", {"ship": 60_000})
    assert again["id"] == task_id
    [work] = retrying.of_instance(engine, shipped.id)
    assert (work.held_by, work.next_attempt_at) == ("w2", None)
    assert console.retrying_count() == 1
    header = console.get(f"/instances/{shipped.id}/header")
    assert '<span class="next-attempt">being tried again by w2 (lock until' in header
    engine.complete_external_task(task_id, "w2")
    assert shipped.state is InstanceState.COMPLETED
    assert console.retrying_count() == 0 and retrying_ids(engine, True) == []

    # The worker fails the other one with retries, then with none left: an incident.
    engine.fail_external_task(other_id, "w1", "label printer jammed", retries=1)
    assert retrying_ids(engine, True) == [spent.id] and console.retrying_count() == 1
    [again] = engine.fetch_and_lock("w1", {"ship": 60_000})
    engine.fail_external_task(other_id, "w1", "label printer jammed", retries=0)
    [incident] = engine.incidents(instance_id=spent.id)
    assert incident.type == "failedExternalTask"
    assert retrying.of_instance(engine, spent.id) == []
    assert console.retrying_count() == 0 and console.listed("yes") == []
    assert console.listed("no") == [str(spent.id), str(shipped.id)]


def test_a_cycle_timer_that_fires_after_a_failure_stops_retrying(
    database_url: str, clock: ManualClock, charging: Charging
) -> None:
    """A repeating timer's job stays after it fires: the firing that succeeds after a failure
    clears its error, so that it is not retrying any more."""
    with Engine(database_url, migrate=False, clock=clock) as engine:
        engine.register_handler("charge", charging.charge)
        engine.deploy(
            ProcessBuilder("retry-remind")
            .start_event("start")
            .user_task("review")
            .end_event("done")
            .boundary_event(
                "every_minute",
                "review",
                cancel_activity=False,
                timer=TimerDefinition(kind="cycle", text="R5/PT1M"),
            )
            .service_task("remind", handler="charge")
            .end_event("reminded")
            .chain("start", "review", "done")
            .chain("every_minute", "remind", "reminded")
            .build()
        )
        instance = engine.start_latest("retry-remind")
        [timer] = engine.jobs(instance.id)
        clock.advance(minutes=1)
        assert engine.execute_job(timer.id) == JobOutcome.FAILED
        [work] = retrying.of_instance(engine, instance.id)
        assert (work.id, work.node_id, work.retries) == (timer.id, "every_minute", 2)
        assert retrying_ids(engine, True) == [instance.id]

        charging.broken = False
        assert engine.execute_job(timer.id) == JobOutcome.EXECUTED
        [timer] = engine.jobs(instance.id)
        assert (timer.error_message, timer.repetitions_left) == (None, 4)
        assert retrying.of_instance(engine, instance.id) == []
        assert retrying_ids(engine, True) == [] and retrying.count(engine) == 0
