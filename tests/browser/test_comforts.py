"""The console's everyday comforts in Chromium: the dark theme (system, toggle, remembered, the
diagram on light paper), copy buttons for ids, JSON variables as a collapsible tree with copy,
keyboard navigation through lists that survives a live refresh, and the jump-to box."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from bench.screenshots import capture
from tests.browser.conftest import Login
from tests.browser.live import PASSWORD, ConsoleServer
from tests.browser.processes import parallel_approval, quick_charge
from tests.browser.test_live_refresh import SETTLED

pytestmark = pytest.mark.browser

# The relative luminance (0 black .. 1 white) of an element's computed colour property.
LUMINANCE = """([selector, property]) => {
  const value = getComputedStyle(document.querySelector(selector))[property];
  const probe = document.createElement('canvas').getContext('2d');
  probe.fillStyle = value;
  probe.fillRect(0, 0, 1, 1);
  const [r, g, b] = probe.getImageData(0, 0, 1, 1).data;
  const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}"""


def luminance(page: Page, selector: str, prop: str) -> float:
    return float(page.evaluate(LUMINANCE, [selector, prop]))


RECORD_FEEDBACK = """() => {
  window.__feedback = [];
  new MutationObserver((changes) => changes.forEach(({ target }) => {
    const word = target.getAttribute('data-copied');
    if (word) window.__feedback.push([target.getAttribute('data-copy'), word]);
  })).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-copied'] });
}"""


def live(page: Page, path: str) -> None:
    page.goto(path)
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")


def test_dark_theme_follows_the_system_and_the_toggle_and_is_remembered(
    console: ConsoleServer, login: Login, browser: Browser, tmp_path: Path
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    order = engine.start_latest("parallel-approval", {"order": {"lines": [1, 2]}})
    page = login("operator")

    page.emulate_media(color_scheme="dark")
    live(page, "/")
    assert page.evaluate("document.documentElement.hasAttribute('data-theme')") is False
    assert luminance(page, "body", "backgroundColor") < 0.05
    assert luminance(page, "body", "color") > 0.6
    assert luminance(page, "section.card", "backgroundColor") < 0.05

    # The diagram stays on light paper, its token badges in their usual colours.
    live(page, f"/instances/{order.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    assert luminance(page, "#diagram", "backgroundColor") > 0.6
    badge = '.djs-overlays[data-container-id="Pack"] .token-badge'
    expect(page.locator(badge)).to_have_text("1")
    # Looked at until it holds: a live refresh may be drawing the badges again meanwhile.
    expect(page.locator(badge)).to_have_css("background-color", "rgb(9, 105, 218)")
    page.screenshot(path=str(tmp_path / "inspector-dark.png"), full_page=True)

    # The heatmap keeps its light-paper colours too.
    live(page, "/definitions/parallel-approval")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    page.locator("#diagram-modes").get_by_label("Heatmap").check()
    split = page.locator('.djs-element[data-element-id="Split"]')
    expect(split).to_have_class(re.compile(r"\bheat-[1-5]\b"))
    heat = re.search(r"heat-([1-5])", split.get_attribute("class") or "")
    assert heat is not None
    fills = {"1": "255, 248, 197", "2": "255, 229, 143", "3": "255, 198, 128"}
    fills.update({"4": "255, 154, 107", "5": "244, 100, 90"})
    fill = split.locator(".djs-visual > :nth-child(1)").evaluate("e => getComputedStyle(e).fill")
    assert fill == f"rgb({fills[heat.group(1)]})"

    # The toggle: system -> light -> dark -> system, remembered across reloads.
    toggle = page.locator("[data-theme-toggle]")
    expect(toggle).to_have_attribute("aria-label", "Theme: system")
    toggle.click()
    expect(toggle).to_have_attribute("aria-label", "Theme: light")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    assert luminance(page, "body", "backgroundColor") > 0.8
    page.reload()
    expect(page.locator("[data-theme-toggle]")).to_have_attribute("aria-label", "Theme: light")
    assert luminance(page, "body", "backgroundColor") > 0.8

    page.emulate_media(color_scheme="light")
    toggle.click()
    expect(toggle).to_have_attribute("aria-label", "Theme: dark")
    assert luminance(page, "body", "backgroundColor") < 0.05
    live(page, "/instances")
    # Applied from <head>: the attribute is there before the page's own scripts run.
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert luminance(page, "body", "backgroundColor") < 0.05
    assert luminance(page, "main table", "color") > 0.6
    toggle.click()
    expect(toggle).to_have_attribute("aria-label", "Theme: system")
    assert luminance(page, "body", "backgroundColor") > 0.8
    assert page.evaluate("localStorage.getItem('interlock-theme')") is None

    # Every page the screenshot script takes, in both themes.
    written = capture(browser, console.url, tmp_path / "shots", str(order.id), "operator", PASSWORD)
    assert sorted(p.name for p in written) == sorted(
        f"{name}-{theme}.png"
        for name in ("overview", "instances", "inspector", "incidents", "alerts")
        for theme in ("light", "dark")
    )
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_copy_buttons_and_json_variables(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    long_list = [{"sku": f"A-{n}", "qty": n} for n in range(12)]
    order = {"customer": {"name": "Ada <b>", "vip": True}, "lines": long_list, "note": None}
    handle = engine.start_latest(
        "parallel-approval", {"order": order, "small": {"a": 1}}, business_key="order-42"
    )
    page = login("operator")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=console.url)

    def clipboard() -> str:
        return str(page.evaluate("navigator.clipboard.readText()"))

    live(page, "/instances")
    row = page.locator(f'tr[data-instance="{handle.id}"]')
    # The feedback is brief, and a live refresh may re-render the row and take it away before
    # a look at the row: the page records each feedback as it is given.
    page.wait_for_function(SETTLED)  # the refresh that follows the stream's start is done
    page.evaluate(RECORD_FEEDBACK)
    row.locator(f'button.copy[data-copy="{handle.id}"]').click()
    page.wait_for_function(
        "id => window.__feedback.some(([copy, word]) => copy === id && word === 'copied')",
        arg=str(handle.id),
    )
    assert clipboard() == str(handle.id)
    row.locator('button.copy[data-copy="order-42"]').click()
    assert clipboard() == "order-42"

    live(page, f"/instances/{handle.id}")
    header = page.locator("#inspector-header")
    header.locator(f'h1 button.copy[data-copy="{handle.id}"]').click()
    assert clipboard() == str(handle.id)
    expect(header.locator("button.copy")).to_have_count(3)  # instance, definition, business key

    cell = page.locator('#variables-body tr[data-variable="order"] .value-cell')
    tree = cell.locator(".json")
    root = tree.locator("> details")
    expect(root).to_have_attribute("open", "")
    customer = root.locator("> ul > li > details").nth(0)
    lines = root.locator("> ul > li > details").nth(1)
    expect(customer).to_have_attribute("open", "")  # short: open
    expect(customer).to_contain_text('"Ada <b>"')  # markup shown as text
    assert lines.get_attribute("open") is None  # twelve objects: collapsed, with a preview
    expect(lines.locator("> summary")).to_have_text('"lines": [ 12 items ],')
    expect(lines.locator(".string:text-is('\"A-11\"')")).to_be_hidden()
    lines.locator("> summary").click()
    expect(lines.locator(".string:text-is('\"A-11\"')")).to_be_visible()
    expect(tree.locator(".null")).to_have_text("null")
    expect(tree.locator(".boolean")).to_have_text("true")

    cell.locator("button.copy").click()
    expect(cell.locator("button.copy")).to_have_attribute("data-copied", "copied")
    assert json.loads(clipboard()) == order
    # A live refresh re-renders the panel with the same tree.
    handle.set_variables({"small": {"a": 2}})
    small = page.locator('#variables-body tr[data-variable="small"] .json')
    expect(small).to_contain_text('"a": 2')

    # Without the clipboard API (an http page on another host) the copy goes through a selection.
    page.evaluate("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    copied = page.evaluate(
        """() => new Promise((done) => {
             document.addEventListener('copy', (e) => done(document.getSelection().toString()),
                                       {once: true});
             document.querySelector('tr[data-variable="small"] button.copy').click();
           })"""
    )
    assert json.loads(copied) == {"a": 2}


def test_keyboard_moves_through_lists_and_keeps_its_row_over_live_refreshes(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handles = [engine.start_latest("parallel-approval", business_key=f"k-{n}") for n in range(3)]
    page = login("operator")
    live(page, "/instances")
    rows = page.locator("#instance-rows tr[data-instance]")
    expect(rows).to_have_count(3)
    current = page.locator("tr.kb-current")

    page.keyboard.press("j")
    expect(current).to_have_attribute("data-instance", str(handles[2].id))  # newest first
    page.keyboard.press("j")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("j")  # stays on the last row
    expect(current).to_have_attribute("data-instance", str(handles[0].id))
    page.keyboard.press("k")
    expect(current).to_have_attribute("data-instance", str(handles[1].id))
    page.keyboard.press("ArrowUp")
    expect(current).to_have_attribute("data-instance", str(handles[2].id))
    page.keyboard.press("j")
    expect(current).to_have_count(1)

    # A new instance re-renders the rows: the highlight stays on its instance, now the third row.
    newest = engine.start_latest("parallel-approval", business_key="k-new")
    expect(rows).to_have_count(4)
    expect(rows.first).to_have_attribute("data-instance", str(newest.id))
    expect(current).to_have_attribute("data-instance", str(handles[1].id))
    expect(rows.nth(2)).to_have_class(re.compile(r"\bkb-current\b"))

    # Typing in a field moves nothing; "/" goes to the page's filter.
    page.keyboard.press("/")
    expect(page.locator("main form.filters :focus")).to_have_count(1)
    page.locator("form.filters input[name=business_key]").focus()
    page.keyboard.type("jk")
    expect(page.locator("form.filters input[name=business_key]")).to_have_value("jk")
    expect(current).to_have_attribute("data-instance", str(handles[1].id))
    page.locator("form.filters input[name=business_key]").fill("")
    page.locator("main h1").click()

    # "?" shows the keys; Escape closes the help.
    page.keyboard.press("?")
    help_dialog = page.locator("#keys-help")
    expect(help_dialog).to_be_visible()
    expect(help_dialog).to_contain_text("open the highlighted row")
    page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()

    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(f"/instances/{handles[1].id}$"))

    # The same keys on the incidents list; "g" goes to the jump-to box from any page.
    engine.deploy(quick_charge())
    failing = engine.start_latest("quick-charge")
    [task] = engine.fetch_and_lock("keys-worker", {"charge": 10_000})
    engine.fail_external_task(task["id"], "keys-worker", "declined")
    live(page, "/incidents")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(f"/instances/{failing.id}$"))
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    page.keyboard.press("g")
    expect(page.locator("#jump-q")).to_be_focused()


def test_jump_to_from_the_header(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    # Typed in lower case below: business keys are found in any case.
    one = engine.start_latest("parallel-approval", business_key="Solo")
    for _ in range(2):
        engine.start_latest("parallel-approval", business_key="pair")
    page = login("viewer")
    live(page, "/tasks")
    box = page.locator("#jump-q")

    box.fill("solo")
    box.press("Enter")
    expect(page).to_have_url(re.compile(f"/instances/{one.id}$"))
    expect(page.locator("#h-instance")).to_contain_text(str(one.id))

    box.fill(str(one.id))
    box.press("Enter")
    expect(page).to_have_url(re.compile(f"/instances/{one.id}$"))

    box.fill("pair")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"/instances\?business_key=pair$"))
    expect(page.locator("#instance-rows tr[data-instance]")).to_have_count(2)

    box.fill("parallel-approval")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"/definitions/parallel-approval\?version=1$"))

    # The short id a list shows.
    live(page, "/instances")
    short = page.locator(f"#instance-rows tr[data-instance='{one.id}'] td code").first
    box.fill(short.inner_text())
    box.press("Enter")
    expect(page).to_have_url(re.compile(f"/instances/{one.id}$"))
    # Readable: the whole short id and a key fit the box without the focus.
    page.locator("main").click()
    width = page.locator("#jump-q").evaluate("e => e.getBoundingClientRect().width")
    assert width >= 180

    box.fill("nothing-like-this")
    box.press("Enter")
    expect(page.locator(".nothing-found")).to_have_text("Nothing found for nothing-like-this.")
    expect(page.locator("main input[name=q]")).to_have_value("nothing-like-this")
