"""An operator moves a token in the inspector: picked on the diagram, previewed as a dashed
badge, applied; the token's overlay moves on the operator's page and on a viewer's page open
on the same instance, and the viewer sees none of the controls."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.engine.modification_support import forked

pytestmark = pytest.mark.browser


def _tokens_at(page: Page, node_id: str) -> Locator:
    return page.locator(f'.djs-overlays[data-container-id="{node_id}"] .token-badge')


def test_a_token_moved_in_the_inspector_moves_on_every_open_page(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(forked("browser-fork"))
    instance = engine.start_latest("browser-fork")
    viewer = login("viewer")
    viewer.goto(f"/instances/{instance.id}")
    operator = login("operator")
    operator.goto(f"/instances/{instance.id}")
    for page in (viewer, operator):
        expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
        expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
        expect(_tokens_at(page, "a")).to_have_text("1")
    expect(viewer.locator("#modify")).to_have_count(0)
    expect(viewer.locator("[data-modify-op]")).to_have_count(0)

    # Picked on the diagram: the token at a, then the target after.
    operator.locator("#modify-pick").check()
    operator.locator('.djs-element[data-element-id="a"]').click()
    [at_a] = [t for t in engine.instance(instance.id).tokens() if t.node_id == "a"]
    expect(operator.locator("#modify-token")).to_have_value(str(at_a.token_id))
    operator.locator('.djs-element[data-element-id="after"]').click()
    expect(operator.locator("#modify-target")).to_have_value("after")
    operator.get_by_role("button", name="Move token to target").click()
    expect(operator.locator("#modify-instructions li")).to_have_count(2)

    operator.get_by_role("button", name="Preview").click()
    expect(operator.locator("#modify-preview-result")).to_contain_text("Active")
    ghost = operator.locator('.djs-overlays[data-container-id="after"] .ghost-badge')
    expect(ghost).to_have_text("1")
    expect(_tokens_at(operator, "a")).to_have_text("1")  # nothing moved yet

    operator.locator("#modify-annotation").fill("moved in the browser")
    operator.get_by_role("button", name="Apply").click()
    expect(operator.locator("#modify-result .flash.ok")).to_contain_text("after (1)")
    expect(ghost).to_have_count(0)
    for page in (operator, viewer):
        expect(_tokens_at(page, "after")).to_have_text("1")
        expect(_tokens_at(page, "a")).to_have_count(0)

    # Picked from the tokens panel: the token at b is cancelled.
    operator.locator("#modify-pick").uncheck()
    operator.locator('#tokens-body tr.token-live[data-node="b"] td').first.click()
    operator.get_by_role("button", name="Cancel token").click()
    operator.get_by_role("button", name="Apply").click()
    for page in (operator, viewer):
        expect(_tokens_at(page, "b")).to_have_count(0)
        expect(_tokens_at(page, "after")).to_have_text("1")
