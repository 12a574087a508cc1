"""Migration within reach, in Chromium at 1440x900, on the demo's order process in two versions
(the second renames the join): the latest version's page links to the version with running
instances, both diagrams fit their panes with the running tokens counted on the source and a
line per mapped pair, the impact panel counts, samples and groups the refusals before anything
runs, the confirmation says the number, and the inspector migrates one instance alone."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from app.demo import ORDER_BPMN, ORDER_KEY, register_handlers
from engine.api import Engine
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.test_csp import watch
from tests.browser.test_migration_page import confirm

pytestmark = pytest.mark.browser

# Version 2 of the demo order: its join is another node (a token waiting at the join of version
# 1 has no counterpart unless the operator maps it).
ORDER_V2 = ORDER_BPMN.replace('"Join"', '"JoinAll"')


def _two_versions(engine: Engine, instances: int, approved: int) -> list[str]:
    """Version 1 with `instances` running orders (the first `approved` of them approved, so
    waiting at the join), then version 2 deployed; the instance ids, oldest first."""
    register_handlers(engine)
    engine.deploy(ORDER_BPMN, name="demo")
    started = [
        str(engine.start_version(ORDER_KEY, 1, business_key=f"order-{n}").id)
        for n in range(instances)
    ]
    for instance_id in started[:approved]:
        (task,) = engine.user_tasks(instance_id)
        engine.complete_task(task.id)
    engine.deploy(ORDER_V2, name="demo")
    return started


# The viewport the proof asks for.
WIDE: ViewportSize = {"width": 1440, "height": 900}

OUTSIDE = """(pane) => {
            const host = document.getElementById(pane).getBoundingClientRect();
            return Array.from(document.querySelectorAll('#' + pane + ' .djs-element'))
              .filter((el) => el.getAttribute('data-element-id') !== '__implicitroot')
              .filter((el) => {
                const box = el.getBoundingClientRect();
                if (box.width === 0 && box.height === 0) { return false; }
                return box.left < host.left || box.right > host.right
                  || box.top < host.top || box.bottom > host.bottom;
              })
              .map((el) => el.getAttribute('data-element-id'));
        }"""


def _outside(page: Page, pane: str) -> list[str]:
    """The elements of the diagram in `pane` whose box is not inside the pane."""
    found: list[str] = page.evaluate(OUTSIDE, pane)
    return found


def _fitted(page: Page, pane: str) -> None:
    """Wait until every element of the diagram in `pane` lies inside the pane."""
    page.wait_for_function("(pane) => (" + OUTSIDE + ")(pane).length === 0", arg=pane)


def _badges(page: Page) -> dict[str, str]:
    found: dict[str, str] = page.evaluate(
        """() => Object.fromEntries(Array.from(
            document.querySelectorAll('#diagram-source .migration-tokens'))
            .map((b) => [b.dataset.node, b.textContent]))"""
    )
    return found


def _lines(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.evaluate(
        """() => Array.from(document.querySelectorAll('.migration-lines .mapping-line'))
            .map((l) => ({source: l.dataset.source, target: l.dataset.target,
                          x1: Number(l.getAttribute('x1')), y1: Number(l.getAttribute('y1'))}))"""
    )
    return found


def _mapped(page: Page) -> list[tuple[str, str]]:
    found: list[list[str]] = page.evaluate(
        """() => Array.from(document.querySelectorAll("select[name^='target:']"))
            .filter((s) => s.value).map((s) => [s.name.slice(7), s.value])"""
    )
    return sorted((a, b) for a, b in found)


def test_the_latest_versions_link_opens_a_plan_that_migrates(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    started = _two_versions(engine, instances=3, approved=1)
    v1 = engine.definitions(ORDER_KEY)[0].id
    v2 = engine.latest_definition(ORDER_KEY).id

    page = login("admin")
    page.set_viewport_size(WIDE)
    violations = watch(page)
    page.goto(f"/definitions/{ORDER_KEY}?version=2")
    link = page.locator("#migrate-link")
    expect(link).to_have_text("Migrate instances of version 1 to this version")
    link.click()
    expect(page.locator("h1")).to_contain_text("version 1 to version 2")
    expect(page.get_by_text("same version")).to_have_count(0)
    for pane in ("diagram-source", "diagram-target"):
        expect(page.locator(f"#{pane}")).to_have_attribute("data-ready", "true")
    # Both whole diagrams fit their panes: the last task and the end event's label too.
    for pane in ("diagram-source", "diagram-target"):
        assert _outside(page, pane) == [], pane
        expect(page.locator(f'#{pane} .djs-element[data-element-id="End_label"]')).to_be_visible()
    source_box = page.locator("#diagram-source").bounding_box()
    target_box = page.locator("#diagram-target").bounding_box()
    assert source_box is not None and target_box is not None
    assert source_box["y"] == target_box["y"]  # side by side, level
    assert source_box["x"] + source_box["width"] < target_box["x"]
    # Again when the panes change size.
    page.set_viewport_size({"width": 1000, "height": 900})
    for pane in ("diagram-source", "diagram-target"):
        _fitted(page, pane)
    page.set_viewport_size(WIDE)
    for pane in ("diagram-source", "diagram-target"):
        _fitted(page, pane)

    # Running tokens of version 1: three orders at Reserve stock, two still at Approve order, the
    # approved one's branch waiting at the join.
    expect(page.locator("#diagram-source")).to_have_attribute("data-token-badges", "3")
    assert _badges(page) == {"ReserveStock": "3", "ApproveOrder": "2", "Join": "1"}

    # One line per mapped pair; the join is not mapped (version 2 has no such node).
    mapped = _mapped(page)
    assert ("ReserveStock", "ReserveStock") in mapped and all(s != "Join" for s, _ in mapped)
    expect(page.locator(".migration-diagrams")).to_have_attribute("data-lines", str(len(mapped)))
    assert sorted((line["source"], line["target"]) for line in _lines(page)) == mapped

    # Pointing at a plan row highlights its node on both diagrams, and their line.
    page.locator('tr[data-node="ApproveOrder"]').hover()
    for pane in ("diagram-source", "diagram-target"):
        expect(page.locator(f'#{pane} .djs-element[data-element-id="ApproveOrder"]')).to_have_class(
            re.compile(r"\bmapping-hover\b")
        )
    expect(page.locator('.mapping-line.hover[data-source="ApproveOrder"]')).to_have_count(1)
    page.locator("h1").hover()
    expect(page.locator(".mapping-line.hover")).to_have_count(0)

    page.locator("#migration-validate").click()
    expect(page.locator("#impact-count")).to_contain_text(
        "3 running instances match now: 2 can be migrated, 1 would be refused"
    )
    refusals = page.locator(".migration-refusals tbody tr")
    expect(refusals).to_have_count(2)  # the waiting token and the join's arrived branch
    token_row = refusals.filter(has_text="token at 'Join'")
    expect(token_row).to_contain_text("the target definition has no such activity")
    expect(token_row.locator("td").nth(1)).to_have_text("1")
    expect(token_row.locator("a")).to_have_attribute("href", f"/instances/{started[0]}")
    sample = page.locator(".migration-sample tbody tr")
    expect(sample).to_have_count(3)
    for n, instance_id in enumerate(started):
        row = page.locator(f'.migration-sample tr[data-instance="{instance_id}"]')
        expect(row).to_contain_text(f"order-{n}")
        expect(row.locator("a")).to_have_attribute("href", f"/instances/{instance_id}")
    expect(page.locator("#migration-run")).to_have_text("Migrate 3 instances")

    # Mapped by hand, the join follows too: one line more, and nothing refused.
    page.get_by_label("Target of Join").select_option("JoinAll")
    expect(page.locator(".migration-diagrams")).to_have_attribute(
        "data-lines", str(len(mapped) + 1)
    )
    assert ("Join", "JoinAll") in [(x["source"], x["target"]) for x in _lines(page)]
    expect(page.locator("#migration-run")).to_be_disabled()
    page.locator("#migration-validate").click()
    expect(page.locator("#impact-count")).to_contain_text("3 can be migrated")
    expect(page.locator(".migration-refusals")).to_have_count(0)

    # The lines follow the diagram when it pans.
    before = {x["source"]: x for x in _lines(page)}["ReserveStock"]
    page.locator("#diagram-source").hover()
    page.mouse.wheel(0, 60)
    page.wait_for_function(
        """(y) => { const l = document.querySelector(
            '.migration-lines .mapping-line[data-source="ReserveStock"]');
            return l && Number(l.getAttribute('y1')) !== y; }""",
        arg=before["y1"],
    )

    asked = confirm(page)
    page.locator("#migration-run").click()
    expect(page.locator("#migration-result")).to_contain_text("3 instances migrated, 0 refused.")
    assert asked == ["Migrate 3 instances to version 2?"]
    assert {engine.instance(i).info().definition_id for i in started} == {v2}
    assert v1 != v2
    assert violations == []


def test_the_inspector_migrates_that_instance_alone(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    chosen, other = _two_versions(engine, instances=2, approved=0)
    v1 = engine.definitions(ORDER_KEY)[0].id
    v2 = engine.latest_definition(ORDER_KEY).id
    later = str(engine.start_version(ORDER_KEY, 2).id)

    page = login("admin")
    page.set_viewport_size(WIDE)
    violations = watch(page)
    page.goto(f"/instances/{later}")
    expect(page.locator("#instance-state")).to_have_text("Active")
    expect(page.locator("#migrate-instance")).to_have_count(0)  # it runs the latest version

    page.goto(f"/instances/{chosen}")
    page.locator("#migrate-instance").click()
    expect(page.locator("#migration-alone")).to_contain_text(chosen)
    expect(page.locator("h1")).to_contain_text("version 1 to version 2")
    expect(page.locator("textarea[name=instances]")).to_have_value(chosen)
    expect(page.locator("#diagram-source")).to_have_attribute("data-token-badges", "2")
    assert _badges(page) == {"ReserveStock": "1", "ApproveOrder": "1"}  # this instance's only

    page.locator("#migration-validate").click()
    expect(page.locator("#impact-count")).to_contain_text(
        "1 running instance matches now: 1 can be migrated"
    )
    expect(page.locator(".migration-sample tbody tr")).to_have_count(1)
    asked = confirm(page)
    page.locator("#migration-run").click()
    expect(page.locator("#migration-result")).to_contain_text("1 instance migrated, 0 refused.")
    assert asked == ["Migrate 1 instance to version 2?"]
    assert engine.instance(chosen).info().definition_id == v2
    assert engine.instance(other).info().definition_id == v1
    page.goto(f"/instances/{chosen}")
    expect(page.locator("#instance-state")).to_have_text("Active")
    expect(page.locator("#migrate-instance")).to_have_count(0)
    assert violations == []


def test_without_running_instances_elsewhere_the_page_says_so(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    _two_versions(engine, instances=0, approved=0)
    page = login("admin")
    page.set_viewport_size(WIDE)
    page.goto(f"/definitions/{ORDER_KEY}?version=2")
    expect(page.locator("#migrate-link")).to_have_count(0)
    expect(page.locator("#migrate-none")).to_have_text(
        "No other version has running instances to migrate to this one"
    )
    page.goto(f"/definitions/{ORDER_KEY}?version=1")
    expect(page.locator("#migrate-link")).to_have_text(
        "Migrate instances of this version to version 2"
    )
    page.goto(f"/definitions/{ORDER_KEY}/migrate")
    expect(page.locator("#migration-none")).to_contain_text(
        "No version other than version 2 has running instances"
    )
