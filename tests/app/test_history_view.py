"""The history view: an ended instance's inspector shows its executed path (every flow taken,
with counts), visits and durations per node, its variables as they were at the end (read-only)
and its incidents with how they ended; the definition page switches its heatmap to the visits,
average and 95th percentile durations and incidents of a period."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from engine.builder import ProcessBuilder
from engine.core import audit
from engine.states import AuditChannel, InstanceState
from tests.server import LiveServer, console_login, live_server

BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)


class Clock:
    def __init__(self) -> None:
        self.now = BASE

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timed(database_url: str, clock: Clock) -> Iterator[LiveServer]:
    """A server whose engine runs on `clock` (no job executor: nothing runs behind the test)."""
    with live_server(database_url, run_jobs=False, clock=clock) as running:
        yield running


def session(server: LiveServer) -> dict[str, str]:
    login = console_login(server.url, "viewer")
    return {"interlock_session": login.cookies["interlock_session"]}


def flat(text: str) -> str:
    return " ".join(text.split())


def test_an_ended_instance_shows_its_path_variables_and_ended_incidents(
    timed: LiveServer, clock: Clock
) -> None:
    engine = timed.engine
    model = (
        ProcessBuilder("history-loop")
        .start_event("start")
        .service_task("count", expression="${n + 1}", result_variable="n")
        .exclusive_gateway("again", default="done")
        .service_task("charge", topic="charge")
        .end_event("end")
        .chain("start", "count", "again")
        .flow("again", "count", id="back", condition="${n < 3}")
        .flow("again", "charge", id="done")
        .chain("charge", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("history-loop", {"n": 0, "note": "first"})
    clock.now += timedelta(seconds=4)
    [task] = engine.fetch_and_lock("w", {"charge": 60_000})
    engine.fail_external_task(task["id"], "w", "card declined", retries=0)
    [incident] = engine.incidents(instance_id=instance.id)
    clock.now += timedelta(seconds=6)
    with audit.acting(audit.Actor("olga", AuditChannel.CONSOLE)):
        engine.retry_incident(incident.id)
    [task] = engine.fetch_and_lock("w", {"charge": 60_000})
    clock.now += timedelta(seconds=2)
    engine.complete_external_task(task["id"], "w", {"note": "charged"})
    assert instance.state is InstanceState.COMPLETED
    cookies = session(timed)

    def get(path: str) -> httpx.Response:
        answer = httpx.get(f"{timed.url}/instances/{instance.id}{path}", cookies=cookies)
        assert answer.status_code == 200, answer.text
        return answer

    assert "card declined" in get("").text  # the ended instance opens in the inspector
    state = get("/diagram.json").json()
    assert state["flows"] == [
        "Flow_charge_end",
        "Flow_count_again",
        "Flow_start_count",
        "back",
        "done",
    ]
    assert state["flow_counts"] == {"Flow_count_again": 3, "back": 2}

    history = flat(get("/panel/history").text)
    nodes = re.findall(
        r'data-path-node="(\w+)">.*?class="num visits">(\d+)</td> '
        r'<td class="num average">([^<]*)</td>',
        history,
    )
    assert nodes == [
        ("again", "3", "0 ms"),
        ("count", "3", "0 ms"),
        ("charge", "1", "12.0 s"),
        ("end", "1", "0 ms"),
        ("start", "1", "0 ms"),
    ]
    flows = re.findall(r'data-path-flow="(\w+)">.*?class="num taken">(\d+)</td>', history)
    assert flows == [
        ("Flow_count_again", "3"),
        ("back", "2"),
        ("Flow_charge_end", "1"),
        ("Flow_start_count", "1"),
        ("done", "1"),
    ]

    incidents = flat(get("/panel/incidents").text)
    assert "No open incidents" in incidents
    ended = re.findall(
        r'data-ended-incident="([0-9a-f-]+)" data-node="(\w+)">.*?'
        r'class="resolved-at" datetime="([^"]+)">.*?<td class="how">([^<]*)</td>',
        incidents,
    )
    resolved = (BASE + timedelta(seconds=10)).isoformat()
    assert ended == [(str(incident.id), "charge", resolved, "retried by olga")]

    variables = flat(get("/panel/variables").text)
    values = re.findall(
        r'data-variable="(\w+)"> <td><code>\w+</code></td> <td>(\w+)</td> '
        r'<td><span class="value">([^<]*)</span>',
        variables,
    )
    assert values == [("n", "integer", "3"), ("note", "string", "charged")]
    assert "<form" not in variables  # read-only: the instance ended
    with engine.connection() as conn:  # as an instance that ran before visits kept their flow
        conn.execute("UPDATE history SET flow_id = NULL WHERE instance_id = %s", (instance.id,))
    before = get("/diagram.json").json()
    assert sorted(before["flows"]) == state["flows"] and before["flow_counts"] == {}


def test_the_definition_heatmap_shows_a_period_of_history(timed: LiveServer, clock: Clock) -> None:
    engine = timed.engine
    model = (
        ProcessBuilder("history-heat")
        .start_event("start")
        .user_task("work", "Work")
        .service_task("check", topic="check")
        .end_event("end")
        .chain("start", "work", "check", "end")
        .build()
    )
    engine.deploy(model)

    def run(started: datetime, seconds: int, bad: bool = False) -> None:
        clock.now = started
        instance = engine.start_latest("history-heat")
        clock.now = started + timedelta(seconds=seconds)
        [task] = instance.user_tasks()
        engine.complete_task(task.id)
        [check] = engine.fetch_and_lock("w", {"check": 60_000})
        if bad:
            engine.fail_external_task(check["id"], "w", "bad order", retries=0)
        else:
            engine.complete_external_task(check["id"], "w")

    run(BASE - timedelta(days=2), 5)  # before the period
    run(BASE, 10)
    run(BASE + timedelta(minutes=1), 30)
    run(BASE + timedelta(minutes=2), 20, bad=True)  # an incident at check
    cookies = session(timed)
    period = {
        "view": "history",
        "period": "custom",
        "from": BASE.isoformat(),
        "to": (BASE + timedelta(hours=1)).isoformat(),
    }

    def table(params: dict[str, str]) -> list[tuple[str, ...]]:
        page = httpx.get(f"{timed.url}/definitions/history-heat", params=params, cookies=cookies)
        assert page.status_code == 200, page.text
        return re.findall(
            r'<tr data-node="(\w+)">.*?data-col="visits">(\d+)</td> '
            r'<td class="num" data-col="average">([^<]*)</td> '
            r'<td class="num" data-col="p95">([^<]*)</td> '
            r'<td class="num (?:bad)?\s*" data-col="incidents">(\d+)</td>',
            flat(page.text),
        )

    assert table(period) == [
        ("check", "3", "0 ms", "0 ms", "1"),
        ("end", "2", "0 ms", "0 ms", "0"),
        ("start", "3", "0 ms", "0 ms", "0"),
        ("work", "3", "20.0 s", "29.0 s", "0"),
    ]
    # From half a minute in: the first instance's visits started before it.
    later = {**period, "from": (BASE + timedelta(seconds=30)).isoformat()}
    assert table(later) == [
        ("check", "2", "0 ms", "0 ms", "1"),
        ("end", "1", "0 ms", "0 ms", "0"),
        ("start", "2", "0 ms", "0 ms", "0"),
        ("work", "2", "25.0 s", "29.5 s", "0"),
    ]
    state = httpx.get(
        f"{timed.url}/definitions/history-heat/diagram.json", params=period, cookies=cookies
    ).json()
    assert state["history"]["period"] == "custom"
    assert state["nodes"] == {
        "check": {"visits": 3, "average": "0 ms", "p95": "0 ms", "incidents": 1},
        "end": {"visits": 2, "average": "0 ms", "p95": "0 ms", "incidents": 0},
        "start": {"visits": 3, "average": "0 ms", "p95": "0 ms", "incidents": 0},
        "work": {"visits": 3, "average": "20.0 s", "p95": "29.0 s", "incidents": 0},
    }
    # The last day by the engine's clock: all but the first instance (two days old).
    clock.now = BASE + timedelta(hours=2)
    day = table({"view": "history", "period": "day"})
    assert [(row[0], row[1]) for row in day] == [
        ("check", "3"),
        ("end", "2"),
        ("start", "3"),
        ("work", "3"),
    ]
    missing = httpx.get(
        f"{timed.url}/definitions/history-heat",
        params={"view": "history", "period": "custom", "to": BASE.isoformat()},
        cookies=cookies,
    )
    assert missing.status_code == 400
    assert "'from'" in missing.text
