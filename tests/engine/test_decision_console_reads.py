"""engine/queries/decision_console.py: decisions grouped by key, a definition's evaluations
newest first by keyset, an instance's evaluations in order, and per-rule match counts of one
version or of every version of a key over a period, read off ix_decision_evaluation_definition."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import psycopg
import pytest
from psycopg import sql

from engine.api import Engine
from engine.queries import decision_console
from engine.queries.decision_console import RuleCounts
from tests.engine.clock import ManualClock

DMN = Path(__file__).parents[1] / "data" / "dmn"
BASE = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(BASE)


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock) as running:
        yield running


def second_version() -> str:
    """dish_first.dmn with a third rule: deployed after it, version 2 of `dish`."""
    source = (DMN / "dish_first.dmn").read_text()
    extra = (
        '<rule id="Rule_Summer"><inputEntry id="S1"><text>"Summer"</text></inputEntry>'
        '<inputEntry id="S2"><text></text></inputEntry>'
        '<outputEntry id="S3"><text>"Salad"</text></outputEntry></rule>'
    )
    return source.replace("</decisionTable>", extra + "</decisionTable>")


def test_rule_counts_per_version_per_key_and_per_period(timed: Engine, clock: ManualClock) -> None:
    engine = timed
    engine.deploy(DMN / "dish_first.dmn")
    v1 = [
        engine.evaluate_decision("dish", {"season": s, "guestCount": 4})
        for s in ("Fall", "Fall", "Winter")
    ]
    engine.deploy(second_version())
    clock.now = BASE + timedelta(days=2)
    v2 = [
        engine.evaluate_decision("dish", {"season": s, "guestCount": 4})
        for s in ("Summer", "Fall", "Spring")
    ]
    one, two = v1[0].definition_id, v2[0].definition_id
    assert (v1[0].version, v2[0].version) == (1, 2)

    assert decision_console.rule_counts(engine, definition_id=one) == RuleCounts(
        3, {"Rule_Fall": 2, "Rule_Winter": 1}
    )
    assert decision_console.rule_counts(engine, definition_id=two) == RuleCounts(
        3, {"Rule_Summer": 1, "Rule_Fall": 1}
    )
    assert decision_console.rule_counts(engine, key="dish") == RuleCounts(
        6, {"Rule_Fall": 3, "Rule_Winter": 1, "Rule_Summer": 1}
    )
    # The period [start, end): the first day holds version 1's evaluations only.
    day = decision_console.rule_counts(engine, key="dish", start=BASE, end=BASE + timedelta(days=1))
    assert day == RuleCounts(3, {"Rule_Fall": 2, "Rule_Winter": 1})
    assert day.share("Rule_Fall") == pytest.approx(2 / 3)
    later = decision_console.rule_counts(engine, key="dish", start=BASE + timedelta(days=2))
    assert later == RuleCounts(3, {"Rule_Summer": 1, "Rule_Fall": 1})
    assert decision_console.rule_counts(engine, definition_id=one, end=BASE) == RuleCounts(0, {})
    assert RuleCounts(0, {}).share("Rule_Fall") == 0.0
    with pytest.raises(ValueError):
        decision_console.rule_counts(engine)

    [summary] = decision_console.summaries(engine)
    assert (summary.key, summary.name, summary.latest_version) == ("dish", "Dish", 2)
    assert (summary.versions, summary.evaluations) == (2, 6)
    assert decision_console.version_evaluations(engine, "dish") == {1: 3, 2: 3}


class Explaining(psycopg.Cursor[Any]):
    """A cursor that has each statement explained (with sequential scans off, so that a plan
    that can use an index does) before it runs, keeping the plans."""

    plans: ClassVar[list[str]] = []

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        with psycopg.Cursor(self.connection) as plain:
            plain.execute("SET enable_seqscan = off")
            explain = sql.SQL("EXPLAIN (FORMAT JSON) ")
            statement = explain + (query if isinstance(query, sql.Composable) else sql.SQL(query))
            row = plain.execute(statement, params).fetchone()
            plain.execute("RESET enable_seqscan")
        assert row is not None
        Explaining.plans.append(json.dumps(row[0]))
        return super().execute(query, params, **kwargs)


@pytest.mark.parametrize("by", ["definition_id", "key"])
def test_rule_counts_read_the_definition_index(timed: Engine, by: str) -> None:
    timed.deploy(DMN / "dish_first.dmn")
    found = timed.evaluate_decision("dish", {"season": "Fall", "guestCount": 4})
    Explaining.plans = []
    with timed.connection() as conn:
        conn.cursor_factory = Explaining
        try:
            counts = (
                decision_console.rule_counts(conn, definition_id=found.definition_id, start=BASE)
                if by == "definition_id"
                else decision_console.rule_counts(conn, key="dish", start=BASE)
            )
        finally:
            conn.cursor_factory = psycopg.Cursor
    assert counts == RuleCounts(1, {"Rule_Fall": 1})
    [plan] = Explaining.plans
    assert "ix_decision_evaluation_definition" in plan, plan


def test_evaluations_newest_first_by_keyset(timed: Engine, clock: ManualClock) -> None:
    timed.deploy(DMN / "dish_first.dmn")
    done = []
    for n in range(5):
        # Two evaluations share each moment: the id orders them.
        clock.now = BASE + timedelta(minutes=n // 2)
        done.append(timed.evaluate_decision("dish", {"season": "Fall", "guestCount": n}))
    definition = done[0].definition_id
    newest = sorted(
        done, key=lambda e: (BASE + timedelta(minutes=done.index(e) // 2), e.evaluation_id)
    )
    expected = [str(e.evaluation_id) for e in reversed(newest)]
    seen: list[str] = []
    after = None
    while True:
        page = decision_console.definition_evaluations(timed, definition, after, limit=2)
        seen += [str(e.id) for e in page.items]
        if page.next is None:
            break
        after = page.next
    assert seen == expected
    first = decision_console.definition_evaluations(timed, definition).items[0]
    assert (first.decision_key, first.version, first.instance_id) == ("dish", 1, None)
    assert [i["value"] for i in first.inputs] == ["Fall", 4]
    assert first.matched_rules == ["Rule_Fall"]
    assert first.result == [{"dish": "Spareribs"}]
