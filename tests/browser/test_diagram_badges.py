"""Badges on the diagram stay readable: on a model with a busy history (a split, a join, a task
with many incidents), in every mode of the definition page (tokens now, heatmap, history) and on
the inspector, at the fitted zoom, zoomed in and zoomed out, no badge covers another badge, a
label or a task's type icon; and the generated layout keeps a task's name clear of its icon."""

from __future__ import annotations

import os
import re
from typing import TypedDict

import pytest
from playwright.sync_api import Locator, Page, expect

from app.demo import ORDER_KEY, install_demo
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

# Set to a folder to keep a screenshot of each diagram checked there.
SHOTS = os.environ.get("INTERLOCK_BADGE_SHOTS")

INSTANCES = 15
WORKER = "badge-worker"


def busy_order() -> ProcessModel:
    """A split into a card charge (an external task) and an approval whose long name wraps, a
    join, then shipping. Built in Python: the console draws it from the generated layout."""
    return (
        ProcessBuilder("busy-order", name="Busy order")
        .start_event("Start", "Order received")
        .parallel_gateway("Split", "Split")
        .service_task("Charge", "Charge card", topic="charge")
        .user_task("Approve", "Approve the order for shipping")
        .parallel_gateway("Join", "Join")
        .user_task("Ship", "Ship order")
        .end_event("End", "Shipped")
        .chain("Start", "Split")
        .chain("Split", "Charge", "Join")
        .chain("Split", "Approve", "Join")
        .chain("Join", "Ship", "End")
        .build()
    )


def busy_history(engine: Engine) -> str:
    """Run INSTANCES instances: every card charge fails into an incident, two thirds of them are
    retried and charged, most approvals are done and some orders shipped. Returns an instance
    that waits at the join with an incident on its charge."""
    engine.deploy(busy_order())
    handles = [engine.start_latest("busy-order") for _ in range(INSTANCES)]
    for locked in engine.fetch_and_lock(WORKER, {"charge": 60_000}, max_tasks=INSTANCES):
        engine.fail_external_task(locked["id"], WORKER, "card service unreachable", retries=0)
    incidents = engine.incidents(definition_key="busy-order")
    assert len(incidents) == INSTANCES
    for incident in incidents[: INSTANCES - 5]:
        assert incident.external_task_id is not None
        engine.set_external_task_retries(incident.external_task_id, 1)
    for locked in engine.fetch_and_lock(WORKER, {"charge": 60_000}, max_tasks=INSTANCES):
        engine.complete_external_task(locked["id"], WORKER)
    for handle in handles[: INSTANCES - 3]:
        for task in engine.user_tasks(handle.id):
            if task.node_id == "Approve":
                engine.complete_task(task.id)
    for handle in handles[:4]:
        for task in engine.user_tasks(handle.id):
            if task.node_id == "Ship":
                engine.complete_task(task.id)
    open_incidents = {i.instance_id for i in engine.incidents(definition_key="busy-order")}
    waiting = [
        h for h in handles if h.id in open_incidents and not [t for t in engine.user_tasks(h.id)]
    ]
    assert waiting, "no instance waits at the join with an incident"
    return str(waiting[0].id)


Box = tuple[float, float, float, float]  # left, top, right, bottom on the page


class Badge(TypedDict):
    node: str
    kind: str
    text: str
    title: str
    box: Box


class Drawn(TypedDict):
    scale: float
    badges: list[Badge]
    labels: dict[str, list[Box]]
    lines: dict[str, list[Box]]
    icons: dict[str, Box]


# What is drawn inside the diagram's frame, read from the page: each shown badge (the overlay's
# HTML), each label's box (external labels' and the names inside tasks', line by line) and each
# task's type icon (the paths and circles bpmn-js draws in the task besides its outline).
DRAWN = """() => {
  const frame = document.querySelector('#diagram').getBoundingClientRect();
  const box = (r) => [r.left, r.top, r.right, r.bottom];
  const shown = (r) => r.width > 0 && r.height > 0 && r.right > frame.left && r.left < frame.right
    && r.bottom > frame.top && r.top < frame.bottom;
  const badges = [...document.querySelectorAll('#diagram .djs-overlays .badge')]
    .filter((b) => shown(b.getBoundingClientRect()))
    .map((b) => ({node: b.dataset.node || b.dataset.flow, kind: b.className, text: b.textContent,
                  title: b.title, box: box(b.getBoundingClientRect())}));
  const labels = {}, lines = {}, icons = {};
  document.querySelectorAll('#diagram .djs-element').forEach((g) => {
    const id = g.dataset.elementId;
    const text = g.querySelector(':scope > .djs-visual > text.djs-label');
    if (text && shown(text.getBoundingClientRect())) {
      labels[id] = [box(text.getBoundingClientRect())];
      lines[id] = [...text.querySelectorAll('tspan')].map((t) => box(t.getBoundingClientRect()));
    }
  });
  const registry = window.InterlockDiagram.viewer.get('elementRegistry');
  registry.filter((e) => /Task$/.test(e.type)).forEach((task) => {
    const visual = document.querySelector(
      `#diagram .djs-element[data-element-id="${task.id}"] > .djs-visual`);
    const parts = [...visual.children].slice(1).filter((c) => c.tagName !== 'text')
      .map((c) => c.getBoundingClientRect()).filter(shown);
    if (parts.length) {
      const [lefts, tops] = [parts.map((r) => r.left), parts.map((r) => r.top)];
      const [rights, bottoms] = [parts.map((r) => r.right), parts.map((r) => r.bottom)];
      icons[task.id] = [Math.min(...lefts), Math.min(...tops), Math.max(...rights),
                        Math.max(...bottoms)];
    }
  });
  const scale = window.InterlockDiagram.viewer.get('canvas').viewbox().scale;
  return {scale, badges, labels, lines, icons};
}"""


def intersect(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def check_nothing_covered(drawn: Drawn, where: str) -> None:
    badges = drawn["badges"]
    for index, one in enumerate(badges):
        for other in badges[index + 1 :]:
            assert not intersect(one["box"], other["box"]), (where, one, other)
        for element, boxes in drawn["labels"].items():
            for label in boxes:
                assert not intersect(one["box"], label), (where, one, "label of", element)
        for task, icon in drawn["icons"].items():
            assert not intersect(one["box"], icon), (where, one, "icon of", task)
        assert one["title"], (where, one, "has no title")


def wait_placed(page: Page) -> None:
    """Wait until the diagram is drawn and its badges were placed at the zoom it shows."""
    diagram = page.locator("#diagram")
    expect(diagram).to_have_attribute("data-ready", "true")
    scale = page.evaluate("() => String(window.InterlockDiagram.canvas.viewbox().scale)")
    expect(diagram).to_have_attribute("data-badges-scale", scale)


def zoom(page: Page, factor: float) -> None:
    """Zoom the diagram by `factor` around its middle through bpmn-js's canvas, and wait for the
    badges to be placed at the new zoom."""
    scale = page.evaluate(
        """(factor) => {
          const canvas = window.InterlockDiagram.viewer.get('canvas');
          const inner = canvas.viewbox().inner;
          canvas.zoom(canvas.viewbox().scale * factor,
                      {x: inner.x + inner.width / 2, y: inner.y + inner.height / 2});
          return String(canvas.viewbox().scale);
        }""",
        factor,
    )
    expect(page.locator("#diagram")).to_have_attribute("data-badges-scale", scale)


def check_every_zoom(page: Page, where: str, expected: set[tuple[str, str]]) -> None:
    """At the fitted zoom, zoomed in and zoomed out: nothing covered; at the fitted and the
    zoomed-out one every badge of `expected` ((node, class)) is shown."""
    page.mouse.move(0, 0)
    fitted: Drawn = page.evaluate(DRAWN)
    check_nothing_covered(fitted, f"{where} fitted")
    check_all_shown(fitted, expected, f"{where} fitted")
    shot(page, f"{where}-fitted")
    zoom(page, 1.8)
    zoomed_in: Drawn = page.evaluate(DRAWN)
    assert zoomed_in["scale"] > fitted["scale"] * 1.7
    check_nothing_covered(zoomed_in, f"{where} zoomed in")
    shot(page, f"{where}-in")
    zoom(page, 0.5 / 1.8)
    zoomed_out: Drawn = page.evaluate(DRAWN)
    assert zoomed_out["scale"] < fitted["scale"] * 0.6
    check_nothing_covered(zoomed_out, f"{where} zoomed out")
    check_all_shown(zoomed_out, expected, f"{where} zoomed out")
    shot(page, f"{where}-out")
    # Far out, badges shorten to their compact form (the full text in their title) or wait
    # hidden for room, but still cover nothing.
    zoom(page, 0.5)
    far: Drawn = page.evaluate(DRAWN)
    check_nothing_covered(far, f"{where} far out")
    shot(page, f"{where}-far")


def check_all_shown(drawn: Drawn, expected: set[tuple[str, str]], where: str) -> None:
    shown = {
        (badge["node"], kind)
        for badge in drawn["badges"]
        for kind in badge["kind"].split()
        if kind.endswith("-badge")
    }
    assert expected <= shown, (where, expected - shown)


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.locator("#diagram").screenshot(path=os.path.join(SHOTS, name + ".png"))


def badge_text(page: Page, node: str, kind: str) -> Locator:
    return page.locator(f'.djs-overlays[data-container-id="{node}"] .{kind}')


def test_badges_cover_no_badge_label_or_icon_in_any_mode_at_any_zoom(
    console: ConsoleServer, login: Login
) -> None:
    waiting = busy_history(console.engine)
    page = login("operator")
    page.set_viewport_size({"width": 1440, "height": 900})

    # Live, on the inspector: the charge's incident and token, the join's arrivals.
    page.goto(f"/instances/{waiting}")
    wait_placed(page)
    expect(badge_text(page, "Charge", "incident-badge")).to_have_text("1 incident")
    expect(badge_text(page, "Join", "join-badge")).to_have_text("1/2")
    check_every_zoom(
        page,
        "inspector",
        {("Charge", "incident-badge"), ("Charge", "token-badge"), ("Join", "join-badge")},
    )

    # Live, on the definition page: tokens and open incidents now.
    page.goto("/definitions/busy-order")
    wait_placed(page)
    expect(badge_text(page, "Charge", "incident-badge")).to_have_text("5 incidents")
    now = {("Charge", "incident-badge"), ("Charge", "token-badge"), ("Ship", "token-badge")}
    check_every_zoom(page, "now", now)

    # The heatmap: every visited node's visits and average duration.
    page.goto("/definitions/busy-order?view=heatmap")
    wait_placed(page)
    expect(badge_text(page, "Split", "heat-badge")).to_contain_text(str(INSTANCES))
    visited = {"Start", "Split", "Charge", "Approve", "Join", "Ship", "End"}
    check_every_zoom(page, "heatmap", {(node, "heat-badge") for node in visited})

    # The history of the last day: visits, durations and the incidents created.
    page.goto("/definitions/busy-order?view=history&period=day")
    wait_placed(page)
    expect(badge_text(page, "Charge", "incident-badge")).to_have_attribute(
        "title", f"{INSTANCES} incidents in the period"
    )
    split = badge_text(page, "Split", "history-badge")
    expect(split).to_have_attribute(
        "title", re.compile(rf"^{INSTANCES} visits, average .+, 95th percentile ")
    )
    check_every_zoom(
        page,
        "history",
        {(node, "history-badge") for node in visited} | {("Charge", "incident-badge")},
    )


def test_badges_on_a_modelers_layout_cover_nothing_either(
    console: ConsoleServer, login: Login
) -> None:
    """The demo's order process, drawn from its own layout (the issue's split and join): a
    failing stock reservation right after the split, approvals, arrivals at the join."""
    engine = console.engine
    install_demo(engine, start=False, failure_rate=0.0, seed=7)
    order = {"customer": "Ada Lovelace", "product": "monitor", "quantity": 2, "amount": 349.0}
    handles = [engine.start_latest(ORDER_KEY, order) for _ in range(INSTANCES)]
    for locked in engine.fetch_and_lock(WORKER, {"reserve-stock": 60_000}, max_tasks=INSTANCES):
        engine.fail_external_task(locked["id"], WORKER, "warehouse unreachable", retries=0)
    for incident in engine.incidents(definition_key=ORDER_KEY)[: INSTANCES - 5]:
        assert incident.external_task_id is not None
        engine.set_external_task_retries(incident.external_task_id, 1)
    for locked in engine.fetch_and_lock(WORKER, {"reserve-stock": 60_000}, max_tasks=INSTANCES):
        engine.complete_external_task(locked["id"], WORKER)
    for handle in handles[: INSTANCES - 3]:
        for task in engine.user_tasks(handle.id):
            engine.complete_task(task.id)

    page = login("operator")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"/definitions/{ORDER_KEY}")
    wait_placed(page)
    expect(page.locator("#diagram")).to_have_attribute("data-layout", "model")
    expect(badge_text(page, "ReserveStock", "incident-badge")).to_have_text("5 incidents")
    check_every_zoom(
        page, "demo-now", {("ReserveStock", "incident-badge"), ("ReserveStock", "token-badge")}
    )
    visited = {"Start", "CheckOrder", "Split", "ReserveStock", "ApproveOrder", "Join"}
    page.goto(f"/definitions/{ORDER_KEY}?view=heatmap")
    wait_placed(page)
    check_every_zoom(page, "demo-heatmap", {(node, "heat-badge") for node in visited})
    page.goto(f"/definitions/{ORDER_KEY}?view=history&period=hour")
    wait_placed(page)
    expect(badge_text(page, "ReserveStock", "incident-badge")).to_have_text(
        f"{INSTANCES} incidents"
    )
    check_every_zoom(
        page,
        "demo-history",
        {(node, "history-badge") for node in visited} | {("ReserveStock", "incident-badge")},
    )


def test_a_generated_tasks_name_leaves_its_icon_clear(console: ConsoleServer, login: Login) -> None:
    console.engine.deploy(busy_order())
    page = login("viewer")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto("/definitions/busy-order")
    expect(page.locator("#diagram")).to_have_attribute("data-layout", "generated")
    wait_placed(page)
    drawn: Drawn = page.evaluate(DRAWN)
    # The long name wraps in two lines, each clear of the user icon; so do the short ones.
    assert len(drawn["lines"]["Approve"]) == 2, drawn["lines"]["Approve"]
    for task in ("Approve", "Charge", "Ship"):
        icon = drawn["icons"][task]
        for line in drawn["lines"][task]:
            assert not intersect(icon, line), (task, icon, line)
