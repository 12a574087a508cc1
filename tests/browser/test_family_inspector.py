"""The inspector of a family of called instances in Chromium: the call activity links to the
instance it called and the called instance back to its caller, the family panel shows the tree
with states, and an incident of the called instance appears on the caller's call activity while
the caller's page stays open (no reload)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from engine.builder import ProcessBuilder
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def overlay(node: str, kind: str) -> str:
    return f'.djs-overlays[data-container-id="{node}"] .{kind}'


def test_parent_and_child_link_and_the_child_incident_shows_live(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(DATA / "claim_parent.bpmn", DATA / "claim_assess.bpmn")
    parent = engine.start_latest("claim", {"amount": 120})
    [child] = parent.children()
    page = login("viewer")

    page.goto(f"/instances/{parent.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    members = page.locator("#family-body li.family-member")
    expect(members).to_have_count(2)
    expect(page.locator("#family-body li.family-member.current")).to_have_attribute(
        "data-instance", str(parent.id)
    )
    expect(members.nth(1)).to_have_attribute("data-instance", str(child.id))
    expect(members.nth(0).locator(".state").first).to_have_text("Active")
    expect(members.nth(1).locator(".state")).to_have_text("Active")
    expect(members.nth(1)).to_contain_text("claim_assess")
    expect(page.locator("#tokens-body a.called-link")).to_have_attribute(
        "href", f"/instances/{child.id}"
    )
    call = page.locator(overlay("Activity_Assess", "call-badge"))
    expect(call).to_have_text(f"called {str(child.id)[-8:]}")

    call.click()
    expect(page).to_have_url(f"{console.url}/instances/{child.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#called-by")).to_contain_text("Assess claim")
    expect(page.locator("#family-body li.family-member.current")).to_have_attribute(
        "data-instance", str(child.id)
    )
    page.locator("#called-by a").click()
    expect(page).to_have_url(f"{console.url}/instances/{parent.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(page.locator(overlay("Activity_Assess", "called-incident-badge"))).to_have_count(0)
    page.evaluate("window.samePage = true")

    [task] = engine.fetch_and_lock("scorer", {"score-risk": 60_000}, max_tasks=1)
    engine.fail_external_task(task["id"], "scorer", "risk model unavailable", retries=0)

    badge = page.locator(overlay("Activity_Assess", "called-incident-badge"))
    expect(badge).to_have_text("1 incident in called")
    expect(page.locator('[data-element-id="Activity_Assess"].has-incident')).to_have_count(1)
    expect(page.locator("#family-body li.family-member").nth(1)).to_contain_text("1 incident")
    expect(page.locator("#family-body li.family-member").nth(0)).to_contain_text("1 below")
    expect(page.locator("#tokens-body .called-incidents")).to_have_text("1 incident")
    assert page.evaluate("window.samePage") is True
    # The parent's own incident count stays its own.
    expect(page.locator("#header-incidents")).to_have_text("0")

    parent.cancel()
    expect(page.locator("#instance-state")).to_have_text("Terminated")
    expect(page.locator("#family-body li.family-member").nth(1).locator(".state")).to_have_text(
        "Terminated"
    )
    assert page.evaluate("window.samePage") is True


def test_a_call_activity_that_called_several_links_to_their_list(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(DATA / "claim_assess.bpmn")
    engine.deploy(
        ProcessBuilder("batch")
        .start_event("Start")
        .call_activity("Assess", "Assess each", called_element="claim_assess")
        .multi_instance("Assess", collection="claims", element_variable="claim")
        .end_event("End")
        .chain("Start", "Assess", "End")
        .build()
    )
    batch = engine.start_latest("batch", {"claims": ["a", "b", "c"]})
    page = login("viewer")
    page.goto(f"/instances/{batch.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    link = page.locator(overlay("Assess", "call-badge"))
    expect(link).to_have_text("3 called instances")
    link.click()
    expect(page).to_have_url(f"{console.url}/instances?called_by={batch.id}")
    expect(page.locator("#instance-rows tr[data-instance]")).to_have_count(3)
    expect(page.locator('form.list-bar input[name="called_by"]')).to_have_value(str(batch.id))
