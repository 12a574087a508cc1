"""The console's decision pages: the list of decision keys with their versions and evaluations,
and a decision version's table with how often each rule matched in a period and its latest
evaluations, paged newest first."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from engine.queries import decision_console
from tests.engine.clock import ManualClock
from tests.server import LiveServer, console_login, live_server

DMN = Path(__file__).parents[1] / "data" / "dmn"
BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(BASE)


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[LiveServer]:
    with live_server(database_url, run_jobs=False, clock=clock) as running:
        yield running


def viewer(server: LiveServer) -> httpx.Client:
    login = console_login(server.url, "viewer")
    return httpx.Client(
        base_url=server.url, cookies={"interlock_session": login.cookies["interlock_session"]}
    )


def flat(text: str) -> str:
    return " ".join(text.split())


def rule_row(page: str, rule_id: str) -> str:
    found = re.search(rf'<tr data-rule="{rule_id}"[^>]*>(.*?)</tr>', page, re.S)
    assert found, rule_id
    return flat(found.group(0))


def cell(row: str, column: str) -> str:
    found = re.search(rf'data-col="{column}">([^<]*)<', row)
    assert found, (column, row)
    return found.group(1)


def test_the_decision_list_and_a_decision_table_with_its_rule_counts(
    timed: LiveServer, clock: ManualClock
) -> None:
    engine = timed.engine
    engine.deploy(
        DMN / "dish_first.dmn",
        DMN / "beverages_drd.dmn",
        DMN / "greeting_literal.dmn",
        DMN / "points_collect_sum.dmn",
    )
    # Three hours ago: two autumn dinners and a winter one; now: one of each, and a summer one
    # no rule matches.
    for season in ("Fall", "Fall", "Winter"):
        engine.evaluate_decision("dish", {"season": season, "guestCount": 4})
    clock.now = BASE + timedelta(hours=3)
    for season in ("Fall", "Winter", "Summer"):
        engine.evaluate_decision("dish", {"season": season, "guestCount": 4})
    engine.evaluate_decision("beverages", {"season": "Summer", "guestsWithChildren": True})

    with viewer(timed) as client:
        listed = client.get("/decisions")
        assert listed.status_code == 200
        text = flat(listed.text)
        assert '<a href="/decisions" aria-current="page">Decisions</a>' in text
        rows = dict(re.findall(r'<tr data-key="([^"]+)">(.*?)</tr>', text))
        assert sorted(rows) == ["beverages", "dish", "greeting", "points", "season_dish"]
        assert 'data-col="latest"><a href="/decisions/dish?version=1">v1</a>' in rows["dish"]
        assert cell(rows["dish"], "versions") == "1"
        assert cell(rows["dish"], "evaluations") == "6"
        # Beverages evaluated its required season_dish first: one evaluation of each.
        assert cell(rows["beverages"], "evaluations") == "1"
        assert cell(rows["season_dish"], "evaluations") == "1"
        assert cell(rows["greeting"], "evaluations") == "0"

        # What the list's live refresh swaps in: its table alone.
        fragment = client.get("/decisions", params={"fragment": "1"})
        assert fragment.status_code == 200 and "<html" not in fragment.text
        assert re.findall(r'<tr data-key="([^"]+)">', fragment.text) == sorted(rows)

        page = client.get("/decisions/dish")
        assert page.status_code == 200
        html = page.text
        assert 'Hit policy <strong class="hit-policy">FIRST</strong>' in html
        assert 'data-input="Input_Season"' in html and 'data-output="Output_Dish"' in html
        fall, winter = rule_row(html, "Rule_Fall"), rule_row(html, "Rule_Winter")
        assert "<code>&#34;Fall&#34;</code>" in fall and "<code>&lt;= 8</code>" in fall
        assert "Autumn is for stew" in fall
        assert "<td><code>-</code></td>" in winter  # an empty input entry: any value
        assert (cell(fall, "matched"), cell(fall, "share")) == ("3", "50%")
        assert (cell(winter, "matched"), cell(winter, "share")) == ("2", "33%")
        assert "heat-row heat-5" in fall and "heat-row heat-4" in winter
        assert "6 evaluations of this version (all time)" in flat(html)
        # Every evaluation, newest first: the summer one matched nothing.
        evaluations = re.findall(r'<tr data-evaluation="[^"]+">(.*?)</tr>', html, re.S)
        assert len(evaluations) == 6
        assert "no match" in evaluations[0] and "Roastbeef" in evaluations[1]
        assert all("direct" in row for row in evaluations)

        hour = client.get("/decisions/dish", params={"period": "hour"})
        assert hour.status_code == 200
        fall, winter = rule_row(hour.text, "Rule_Fall"), rule_row(hour.text, "Rule_Winter")
        assert (cell(fall, "matched"), cell(fall, "share")) == ("1", "33%")
        assert (cell(winter, "matched"), cell(winter, "share")) == ("1", "33%")
        assert "3 evaluations of this version (last hour)" in flat(hour.text)

        # What the page's live refresh swaps in: the table and the evaluations alone.
        body = client.get("/decisions/dish", params={"period": "hour", "fragment": "1"})
        assert body.status_code == 200 and "<html" not in body.text
        assert flat(body.text).count('<tr data-rule="') == 2
        assert cell(rule_row(body.text, "Rule_Fall"), "matched") == "1"
        assert len(re.findall(r"<tr data-evaluation=", body.text)) == 6

        drd = client.get("/decisions/beverages")
        assert drd.status_code == 200
        assert 'Requires <a href="/decisions/season_dish">season_dish</a>' in flat(drd.text)
        assert "COLLECT" in drd.text
        juice = rule_row(drd.text, "Rule_Juice")
        assert cell(juice, "matched") == "1"

        points = client.get("/decisions/points")
        assert 'Hit policy <strong class="hit-policy">COLLECT SUM</strong>' in points.text

        literal = client.get("/decisions/greeting")
        assert literal.status_code == 200
        assert "Literal expression <code>&#34;Hello &#34; + name</code>" in flat(literal.text)


def test_evaluations_page_newest_first_by_cursor(timed: LiveServer, clock: ManualClock) -> None:
    engine = timed.engine
    engine.deploy(DMN / "dish_first.dmn")
    evaluated = []
    for n in range(55):
        clock.now = BASE + timedelta(seconds=n)
        evaluated.append(engine.evaluate_decision("dish", {"season": "Fall", "guestCount": n}))
    with viewer(timed) as client:
        first = client.get("/decisions/dish")
        shown = re.findall(r'<tr data-evaluation="([^"]+)">', first.text)
        assert shown == [str(e.evaluation_id) for e in reversed(evaluated)][:50]
        after = re.search(r'<a rel="next" href="/decisions/dish\?([^"]+)"', first.text)
        assert after is not None
        second = client.get(f"/decisions/dish?{after.group(1).replace('&amp;', '&')}")
        assert second.status_code == 200
        rest = re.findall(r'<tr data-evaluation="([^"]+)">', second.text)
        assert rest == [str(e.evaluation_id) for e in reversed(evaluated)][50:]
        assert 'rel="next"' not in second.text


def test_unknown_decisions_and_bad_parameters(timed: LiveServer) -> None:
    timed.engine.deploy(DMN / "dish_first.dmn")
    with viewer(timed) as client:
        missing = client.get("/decisions/nothing")
        assert missing.status_code == 404
        assert "nothing" in missing.text
        assert client.get("/decisions/dish", params={"version": "2"}).status_code == 404
        assert client.get("/decisions/dish", params={"version": "1"}).status_code == 200
        for params, words in (
            ({"version": "two"}, "query parameter 'version' must be an integer"),
            ({"version": "0"}, "query parameter 'version' must be between 1 and"),
            ({"period": "year"}, "query parameter 'period' must be one of all, hour, day, 7d, 30d"),
            ({"after": "not-a-cursor"}, "'not-a-cursor' is not a valid page cursor"),
        ):
            refused = client.get("/decisions/dish", params=params)
            assert refused.status_code == 400, params
            assert refused.json()["type"] == "BadRequest", params
            assert words in refused.json()["message"], (params, refused.json())
        cursor = client.get("/decisions/dish", params={"after": "not-a-cursor"}).json()
        assert cursor["detail"]["field"] == "after"


def test_the_inspector_shows_what_a_business_rule_task_evaluated(server: LiveServer) -> None:
    engine = server.engine
    engine.deploy(DMN / "dish_first.dmn", DMN.parent / "bpmn" / "dinner_planning.bpmn")
    instance = engine.start_latest("dinner_planning", {"season": "Winter", "guestCount": 6})
    [evaluation] = decision_console.instance_evaluations(engine, instance.id)
    with viewer(server) as client:
        panel = client.get(f"/instances/{instance.id}/panel/evaluations")
        assert panel.status_code == 200
        html = flat(panel.text)
        assert f'data-evaluation="{evaluation.id}" data-node="Task_Dish"' in html
        assert '<a href="/decisions/dish?version=1">Dish' in html
        assert "<dt>Season</dt><dd><code>&#34;Winter&#34;</code>" in html
        assert "<dt>How many guests</dt><dd><code>6</code>" in html
        winter, fall = rule_row(html, "Rule_Winter"), rule_row(html, "Rule_Fall")
        assert 'class="rule-matched" data-matched="true"' in winter
        assert "rule-matched" not in fall
        assert (
            'Result: <span class="dmn-entry"><code>dish</code>: <code>&#34;Roastbeef&#34;</code>'
            in html
        )
        # Filtered to another node, the panel has none; the whole inspector has the panel.
        other = client.get(
            f"/instances/{instance.id}/panel/evaluations", params={"node": "Task_Serve"}
        )
        assert (
            "data-evaluation" not in other.text
            and "No decision evaluated at this node" in other.text
        )
        page = client.get(f"/instances/{instance.id}")
        assert 'id="evaluations-body" data-part="evaluations"' in flat(page.text)
        assert f'data-evaluation="{evaluation.id}"' in page.text
        # The decision page links the evaluation to its instance.
        decision = flat(client.get("/decisions/dish").text)
        assert (
            f'<a href="/instances/{instance.id}">' in decision
            and "<code>Task_Dish</code>" in decision
        )
