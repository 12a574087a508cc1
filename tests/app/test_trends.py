"""The overview and the definitions list draw the trends of the summary rows as small SVG charts
whose labels carry the numbers."""

from __future__ import annotations

import re

import httpx

from engine.builder import ProcessBuilder
from tests.server import LiveServer, console_login


def labels(page: str) -> list[str]:
    return re.findall(r'<svg class="trend [^"]*"[^>]*aria-label="([^"]*)"', page)


def values(label: str) -> list[int]:
    """The points a label reads out, oldest first."""
    numbers = label.split("oldest first: ")[1].split(" (total")[0]
    return [int(n) for n in numbers.split(", ")]


def test_the_overview_and_definitions_show_started_completed_and_incidents(
    server: LiveServer,
) -> None:
    engine = server.engine
    engine.deploy(
        ProcessBuilder("trend-quick").start_event("s").end_event("e").chain("s", "e").build()
    )
    engine.deploy(
        ProcessBuilder("trend-wait")
        .start_event("s")
        .user_task("t", "Wait")
        .end_event("e")
        .chain("s", "t", "e")
        .build()
    )
    for _ in range(3):
        engine.start_latest("trend-quick")
    engine.start_latest("trend-wait")
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    overview = httpx.get(f"{server.url}/overview/body", cookies=cookies)
    assert overview.status_code == 200
    found = labels(overview.text)
    assert len(found) == 6
    hour_started = values(next(x for x in found if x.startswith("Started per five minutes")))
    # Twelve points, the last ones (now, or just before if a bucket began meanwhile) holding
    # the four starts.
    assert len(hour_started) == 12 and sum(hour_started[-2:]) == 4 == sum(hour_started)
    day_completed = values(next(x for x in found if x.startswith("Completed per hour")))
    assert len(day_completed) == 24 and sum(day_completed[-2:]) == 3 == sum(day_completed)
    assert "<title>Incidents per hour over the last day" in overview.text
    assert 'style="' not in overview.text.split('id="h-trends"')[1].split("</section>")[0]

    definitions = httpx.get(f"{server.url}/definitions", cookies=cookies)
    assert definitions.status_code == 200
    found = labels(definitions.text)
    quick = [x for x in found if " of trend-quick " in x]
    wait = [x for x in found if " of trend-wait " in x]
    assert [x.split(" of ")[0] for x in quick] == ["Started", "Completed", "Incidents"]
    assert quick[0].endswith("(total 3)") and quick[1].endswith("(total 3)")
    assert wait[0].endswith("(total 1)") and wait[1].endswith("(total 0)")
