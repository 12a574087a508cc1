"""The Decisions pages in a browser: the list links each decision, whose page draws its table
with how often each rule matched and its latest evaluations, for the period chosen."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Locator, expect

from engine.builder import ProcessBuilder
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.test_pages import check

pytestmark = pytest.mark.browser

DMN = Path(__file__).parents[1] / "data" / "dmn"


def check_rule_numbers(refs: Locator, table: Locator) -> None:
    """Each matched rule named "Rule N" is the rule the table numbers N, its id in the title."""
    assert refs.count() > 0
    for index in range(refs.count()):
        ref = refs.nth(index)
        rule_id = ref.get_attribute("title")
        assert rule_id, ref.inner_html()
        number = table.locator(f'tr[data-rule="{rule_id}"] th[scope="row"]').inner_text()
        expect(ref).to_have_text(f"Rule {number}")


def test_a_decision_page_shows_how_often_each_rule_matched(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(DMN / "dish_first.dmn")
    for season, guests in (("Fall", 4), ("Fall", 8), ("Winter", 12), ("Fall", 9)):
        engine.evaluate_decision("dish", {"season": season, "guestCount": guests})

    page = login("viewer")
    # Both pages fit 1280 px and label their fields.
    check(page, "/decisions")
    check(page, "/decisions/dish")
    page.goto("/")
    page.get_by_role("navigation", name="Console").get_by_role("link", name="Decisions").click()
    expect(page).to_have_url(f"{console.url}/decisions")
    dish = page.locator('tr[data-key="dish"]')
    expect(dish.locator('[data-col="evaluations"]')).to_have_text("4")
    expect(dish.locator('[data-col="versions"]')).to_have_text("1")
    # The list follows new evaluations: a summer one, which no rule matches.
    engine.evaluate_decision("dish", {"season": "Summer", "guestCount": 3})
    expect(dish.locator('[data-col="evaluations"]')).to_have_text("5")
    dish.get_by_role("link", name="dish", exact=True).click()

    expect(page.locator(".hit-policy")).to_have_text("FIRST")
    fall = page.locator('tr[data-rule="Rule_Fall"]')
    winter = page.locator('tr[data-rule="Rule_Winter"]')
    expect(fall.locator('[data-col="matched"]')).to_have_text("2")
    expect(fall.locator('[data-col="share"]')).to_have_text("40%")
    expect(fall).to_have_class("heat-row heat-5")
    expect(winter.locator('[data-col="matched"]')).to_have_text("1")
    expect(winter.locator('[data-col="share"]')).to_have_text("20%")
    expect(winter).to_have_class("heat-row heat-3")
    expect(fall.locator("td").first).to_have_text('"Fall"')
    evaluations = page.locator("tr[data-evaluation]")
    expect(evaluations).to_have_count(5)
    # Newest first: the summer one and nine guests in autumn matched no rule. Matched rules go
    # by the number the table gives them, their id on hover.
    matched = evaluations.locator('[data-col="matched"]')
    expect(matched).to_have_text(["none", "none", "Rule 2", "Rule 1", "Rule 1"])
    check_rule_numbers(
        page.locator("tr[data-evaluation] .rule-ref"), page.locator("table.dmn-table")
    )

    page.get_by_label("Rule matches").select_option("hour")
    page.locator("#period-switch").get_by_role("button", name="Show").click()
    expect(page).to_have_url(f"{console.url}/decisions/dish?version=1&period=hour")
    expect(fall.locator('[data-col="matched"]')).to_have_text("2")
    expect(page.locator("#period-evaluations")).to_contain_text("5 evaluations")

    # The page follows new evaluations by itself.
    engine.evaluate_decision("dish", {"season": "Fall", "guestCount": 2})
    expect(fall.locator('[data-col="matched"]')).to_have_text("3")
    expect(fall.locator('[data-col="share"]')).to_have_text("50%")
    expect(evaluations).to_have_count(6)
    expect(page.locator("#period-evaluations")).to_contain_text("6 evaluations")


def test_the_inspector_shows_a_business_rule_task_evaluation_as_it_happens(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(DMN / "dish_first.dmn")
    engine.deploy(
        ProcessBuilder("dinner")
        .start_event("Start")
        .user_task("Plan", "Plan the dinner")
        .business_rule_task(
            "Task_Dish",
            decision_ref="dish",
            result_variable="dish",
            map_decision_result="singleEntry",
        )
        .user_task("Serve", "Serve the dish")
        .end_event("End")
        .chain("Start", "Plan", "Task_Dish", "Serve", "End")
        .build()
    )
    instance = engine.start_latest("dinner", {"season": "Fall", "guestCount": 6})
    page = login("viewer")
    page.goto(f"/instances/{instance.id}")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    panel = page.locator("#evaluations-body")
    expect(panel).to_contain_text("No decision evaluated")

    [plan] = engine.user_tasks(instance.id)
    engine.complete_task(plan.id)
    evaluation = panel.locator('article.evaluation[data-node="Task_Dish"]')
    expect(evaluation).to_have_count(1)
    expect(evaluation.get_by_role("link", name="Dish dish v1")).to_have_attribute(
        "href", "/decisions/dish?version=1"
    )
    expect(evaluation.locator('tr[data-rule="Rule_Fall"]')).to_have_class("rule-matched")
    expect(evaluation.locator(".dmn-matched")).to_have_text("Matched: Rule 1")
    check_rule_numbers(evaluation.locator(".dmn-matched .rule-ref"), evaluation.locator("table"))
    expect(evaluation.locator('tr[data-rule="Rule_Winter"]')).not_to_have_class("rule-matched")
    inputs = evaluation.locator(".dmn-inputs")
    expect(inputs.locator("dt")).to_have_text(["Season", "How many guests"])
    expect(inputs.locator("dd code")).to_have_text(['"Fall"', "6"])
    expect(evaluation.locator(".dmn-result")).to_contain_text('dish: "Spareribs"')

    # The decision page counts the task's evaluation and links back to the instance.
    evaluation.get_by_role("link", name="Dish dish v1").click()
    expect(page.locator('tr[data-rule="Rule_Fall"] [data-col="matched"]')).to_have_text("1")
    page.locator("tr[data-evaluation]").get_by_role("link", name=str(instance.id)[-8:]).click()
    expect(page).to_have_url(f"{console.url}/instances/{instance.id}")
