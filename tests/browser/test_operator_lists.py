"""Lists an operator can work in, at 1440x900: the instance and incident lists start near the top
under one compact bar, the header keeps one row, the instance list sorts by each column with
keyset pages that neither repeat nor skip a row, incidents group by node and message and a group
retries as a batch of exactly its incidents; checkboxes sit inline, label/value pairs stay
together and the audit log shows values as they were written."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Dialog, Locator, Page, expect

from engine.builder import ProcessBuilder
from tests.app.list_data import fill
from tests.browser.conftest import TIMEOUT_MS, Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval
from tests.browser.test_forms import LEAVE

pytestmark = pytest.mark.browser

WIDE = {"width": 1440, "height": 900}
# The jump box as wide as the header gives it (22rem), whatever its own rules say (set on the
# elements: the page's CSP refuses an added style sheet).
JUMP_22REM = """() => document.querySelectorAll("header.top form.jump, header.top form.jump input")
  .forEach(e => {
    e.style.setProperty("transition", "none", "important");
    e.style.setProperty("width", "22rem", "important");
  })"""
# The sorted columns as the header names them, by the sort's key.
COLUMNS = {
    "started": "Started (UTC)",
    "ended": "Ended (UTC)",
    "state": "State",
    "business_key": "Business key",
    "definition": "Definition",
}
# The order PostgreSQL gives each sort: the column (state and definition key then the start),
# then the id; NULLs last ascending, first descending.
ORDER_BY = {
    "started": ("started_at",),
    "ended": ("ended_at",),
    "state": ("state", "started_at"),
    "business_key": ("business_key",),
    "definition": ("definition_key", "started_at"),
}


def wide(page: Page) -> Page:
    page.set_viewport_size(WIDE)  # type: ignore[arg-type]
    return page


def ready(page: Page, path: str) -> None:
    page.goto(path)
    expect(page.locator("html")).to_have_attribute("data-console", "ready")
    page.evaluate(JUMP_22REM)
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")


def box(locator: Locator) -> dict[str, float]:
    # Read in the page in one step: a live refresh may swap the element between two steps.
    found: dict[str, float] = locator.evaluate(
        "e => { const r = e.getBoundingClientRect();"
        " return {x: r.x, y: r.y, width: r.width, height: r.height}; }"
    )
    return found


def header_is_one_row(page: Page) -> None:
    header = box(page.locator("header.top"))
    assert header["height"] < 64, header
    jump = box(page.locator("header.top form.jump input"))
    assert round(jump["width"]) == 352, jump
    items = page.locator(
        "header.top > .brand, header.top nav > ul > li, header.top form.jump, header.top .who > *"
    ).filter(visible=True)
    assert items.count() >= 10
    tops = set()
    for n in range(items.count()):
        item = box(items.nth(n))
        assert item["y"] >= header["y"] and item["y"] + item["height"] <= header["height"], item
        tops.add(round(item["y"] + item["height"] / 2) // 12)
    # Every item's middle within one band of the header: nothing wrapped to a second row.
    assert len(tops) <= 2, tops
    right = max(box(items.nth(n))["x"] + box(items.nth(n))["width"] for n in range(items.count()))
    assert right <= WIDE["width"]


def test_the_lists_start_near_the_top_under_a_one_row_header(
    console: ConsoleServer, login: Login
) -> None:
    fill(console.engine, 150, 50)
    page = wide(login("admin"))

    ready(page, "/instances")
    first = page.locator("#instance-rows tr[data-instance]").first
    expect(first).to_be_visible()
    assert box(first)["y"] < 450
    header_is_one_row(page)
    # The filters past the first few, the saved views and the batch actions are one click away.
    expect(page.get_by_label("Version")).to_be_hidden()
    page.locator("details.more-filters > summary").click()
    expect(page.get_by_label("Version")).to_be_visible()
    page.locator("details.views-menu > summary").click()
    expect(page.get_by_label("Version")).to_be_hidden()
    expect(page.get_by_label("Save the current filters as")).to_be_visible()
    page.locator("details.batch-menu > summary").click()
    expect(page.get_by_role("button", name="Cancel all matching…")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("button", name="Cancel all matching…")).to_be_hidden()

    for path in ("/incidents", "/incidents?group=node"):
        ready(page, path)
        first = page.locator("#incident-rows tbody tr").first
        expect(first).to_be_visible()
        assert box(first)["y"] < 450, path
        header_is_one_row(page)

    for path in ("/", "/batches", "/tasks", "/cleanup", "/audit"):
        ready(page, path)
        header_is_one_row(page)
    # The less frequent pages are under More, which marks the page shown.
    more = page.locator("header.top .nav-more summary")
    expect(more).to_have_attribute("aria-current", "page")
    more.click()
    page.get_by_role("link", name="Webhooks").click()
    page.wait_for_url("**/webhooks")


def _vary(console: ConsoleServer) -> None:
    """Instances whose sorted columns differ and tie: two definitions, ends a few seconds apart
    (several at once, the running ones none), business keys some empty and some equal."""
    engine = console.engine
    fill(engine, 70, 50)
    engine.deploy(
        ProcessBuilder("another-list")
        .start_event("s")
        .user_task("t")
        .end_event("e")
        .chain("s", "t", "e")
        .build()
    )
    other = engine.latest_definition("another-list")
    with engine.connection() as conn, conn.transaction():
        conn.execute(
            "UPDATE process_instance SET ended_at = started_at + "
            "(substr(business_key, 7)::int % 7) * interval '1 second' "
            "WHERE ended_at IS NOT NULL AND business_key LIKE 'order-%'"
        )
        conn.execute(
            "UPDATE process_instance SET definition_id = %s, definition_key = 'another-list' "
            "WHERE business_key LIKE 'order-%%' AND substr(business_key, 7)::int %% 3 = 0",
            (other.id,),
        )
        conn.execute(
            "UPDATE process_instance SET business_key = NULL "
            "WHERE business_key LIKE 'order-%' AND substr(business_key, 7)::int % 5 = 0"
        )
        conn.execute(
            "UPDATE process_instance SET business_key = 'same' "
            "WHERE business_key LIKE 'order-%' AND substr(business_key, 7)::int % 11 = 0"
        )


def expected_order(console: ConsoleServer, by: str, descending: bool) -> list[str]:
    direction = " DESC" if descending else " ASC"
    order = ", ".join(c + direction for c in (*ORDER_BY[by], "id"))
    with console.engine.connection() as conn:
        rows = conn.execute(f"SELECT id FROM process_instance ORDER BY {order}").fetchall()
    return [str(row[0]) for row in rows]


def shown_pages(page: Page) -> list[list[str]]:
    """The ids of every page of the list, following "Next page" to the end."""
    pages = []
    rows = page.locator("#instance-rows tr[data-instance]")
    while True:
        expect(rows.first).to_be_visible()
        pages.append(
            [rows.nth(n).get_attribute("data-instance") or "" for n in range(rows.count())]
        )
        following = page.locator("#instance-rows a[rel=next]")
        if not following.count():
            return pages
        before = page.url
        following.click()
        expect(page).not_to_have_url(before)


def test_each_column_sorts_both_ways_across_keyset_pages(
    console: ConsoleServer, login: Login
) -> None:
    _vary(console)
    page = wide(login("operator"))
    ready(page, "/instances")
    everything = set(expected_order(console, "started", True))
    assert len(everything) == 120
    for by, label in COLUMNS.items():
        ready(page, "/instances")
        # The list starts newest first: its Started header turns it oldest first; another
        # header sorts times newest first and text A to Z, and a second click turns it.
        first = {"started": "asc", "ended": "desc"}.get(by, "asc")
        for order in (first, "desc" if first == "asc" else "asc"):
            header = page.locator("#instance-rows thead th", has=page.locator(f"a[data-sort={by}]"))
            header.get_by_role("link").click()
            expect(page).to_have_url(re.compile(rf"sort={by}&order={order}$"))
            descending = order == "desc"
            expect(header).to_have_attribute("aria-sort", order + "ending")
            expect(header).to_contain_text("▼" if descending else "▲")
            expect(header).to_contain_text(label)
            pages = shown_pages(page)
            assert [len(p) for p in pages] == [50, 50, 20], by
            shown = [row for p in pages for row in p]
            # Every instance once, none skipped, in the database's order of the sort.
            assert len(set(shown)) == len(shown) == 120 and set(shown) == everything
            assert shown == expected_order(console, by, descending), (by, order)

    # A filter keeps the sort, and the sort keeps the filter.
    ready(page, "/instances?sort=business_key&order=asc")
    page.get_by_label("State").select_option("Active")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(lambda url: "state=Active" in url and "sort=business_key" in url)
    expect(page.locator("#instance-rows tr[data-instance]")).to_have_count(50)
    expect(page.locator("#instance-rows th[aria-sort=ascending]")).to_contain_text("Business key")
    # A cursor of another sort, or a sort of no column, is refused, naming the parameter.
    answer = page.request.get("/instances?fragment=rows&sort=state&after=bm90LWEtY3Vyc29y")
    assert answer.status == 400 and "not a valid page cursor" in answer.text()
    answer = page.request.get("/instances?fragment=rows&sort=size")
    assert answer.status == 400 and "sort" in answer.text()


def _two_groups(console: ConsoleServer) -> tuple[list[str], list[str]]:
    """Five incidents at the node "Charge card" (id charge): three "card declined", two "bank
    offline"; the ids of each group's incidents."""
    engine = console.engine
    engine.deploy(
        ProcessBuilder("grouped-charge")
        .start_event("start", "Start")
        .service_task("charge", "Charge card", topic="grouped-charge")
        .end_event("end", "Charged")
        .chain("start", "charge", "end")
        .build()
    )
    for _ in range(5):
        engine.start_latest("grouped-charge")
    tasks = engine.fetch_and_lock("w", {"grouped-charge": 600_000}, max_tasks=5)
    assert len(tasks) == 5
    for n, task in enumerate(tasks):
        message = "card declined" if n < 3 else "bank offline"
        engine.fail_external_task(task["id"], "w", message, retries=0)
    incidents = engine.incidents(definition_key="grouped-charge")
    declined = [str(i.id) for i in incidents if i.message == "card declined"]
    offline = [str(i.id) for i in incidents if i.message == "bank offline"]
    assert (len(declined), len(offline)) == (3, 2)
    return declined, offline


def test_incidents_grouped_by_node_and_message_retry_a_group_as_a_batch(
    console: ConsoleServer, login: Login
) -> None:
    declined, offline = _two_groups(console)
    page = wide(login("operator"))
    ready(page, "/incidents")
    # One by one, each names its node, the id on hover.
    node = page.locator(f'tr[data-incident="{declined[0]}"] .node-name')
    expect(node).to_have_text("Charge card")
    expect(node).to_have_attribute("title", "charge")

    page.get_by_role("link", name="Grouped", exact=True).click()
    page.wait_for_url("**/incidents?group=node")
    groups = page.locator("tbody.incident-group")
    expect(groups).to_have_count(2)
    expect(page.locator("#incident-count")).to_have_text(
        "5 open incidents in 2 groups, the largest first."
    )
    big = groups.filter(has_text="card declined")
    small = groups.filter(has_text="bank offline")
    expect(big).to_have_attribute("data-count", "3")
    expect(big.locator(".group-row")).to_contain_text("card declined")
    expect(big.locator(".group-row .node-name")).to_have_text("Charge card")
    expect(big.locator(".group-row .node-name")).to_have_attribute("title", "charge")
    expect(small).to_have_attribute("data-count", "2")
    expect(small.locator(".group-row")).to_contain_text("bank offline")

    # A group unfolds to exactly its incidents.
    expect(big.locator("tr[data-incident]")).to_have_count(0)
    big.locator("button.group-toggle").click()
    expect(big.locator("button.group-toggle")).to_have_attribute("aria-expanded", "true")
    expect(big.locator("tr[data-incident]")).to_have_count(3)
    shown = {
        big.locator("tr[data-incident]").nth(n).get_attribute("data-incident") for n in range(3)
    }
    assert shown == set(declined)

    # A new incident refreshes the groups live; the unfolded one stays unfolded.
    engine = console.engine
    engine.start_latest("grouped-charge")
    (task,) = engine.fetch_and_lock("w", {"grouped-charge": 600_000}, max_tasks=1)
    engine.fail_external_task(task["id"], "w", "gateway timeout", retries=0)
    expect(groups).to_have_count(3)
    expect(groups.filter(has_text="gateway timeout")).to_have_attribute("data-count", "1")
    expect(big.locator("button.group-toggle")).to_have_attribute("aria-expanded", "true")
    expect(big.locator("tr[data-incident]")).to_have_count(3)
    big.locator("button.group-toggle").click()
    expect(big.locator("tr.group-incidents")).to_be_hidden()

    # Its retry asks first, with the count, and retries exactly the group as a batch.
    asked: list[str] = []

    def answer(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", answer)
    big.get_by_role("button", name="Retry 3 as a batch").click()
    expect(page).to_have_url(re.compile(r"/batches/[0-9a-f-]{36}$"))
    assert len(asked) == 1 and "Retry the 3 open incidents at Charge card" in asked[0], asked
    bar = page.locator("#batch-body progress")
    expect(bar).to_have_attribute("max", "3")
    expect(page.locator("#batch-body")).to_have_attribute(
        "data-state", "Completed", timeout=2 * TIMEOUT_MS
    )
    left = {i.message for i in engine.incidents(definition_key="grouped-charge")}
    assert left == {"bank offline", "gateway timeout"}
    assert {str(i.id) for i in engine.incidents(definition_key="grouped-charge")} >= set(offline)

    ready(page, "/incidents?group=node")
    expect(groups).to_have_count(2)
    expect(small).to_have_attribute("data-count", "2")


def inline(checkbox: Locator, label: Locator) -> None:
    """The checkbox at the left of its label's text, at a normal size, on the same line."""
    expect(checkbox).to_be_visible()
    square, around = box(checkbox), box(label)
    assert square["width"] < 24 and square["height"] < 24, square
    assert around["y"] <= square["y"] <= around["y"] + around["height"], (square, around)
    assert around["height"] < 40, around
    assert square["x"] <= around["x"] + 2, (square, around)


def test_checkboxes_sit_inline_and_pairs_stay_together(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    running = engine.start_latest("parallel-approval")
    engine.deploy(LEAVE)
    leave = engine.start_latest(
        "leave_request", form={"employee": "Ann", "days": "5", "firstDay": "01/02/2027"}
    )
    (task,) = leave.user_tasks()
    page = wide(login("operator"))

    ready(page, "/instances")
    page.locator("details.more-filters > summary").click()
    root = page.get_by_label("Root instances only")
    inline(root, root.locator("xpath=ancestor::label[1]"))

    ready(page, f"/instances/{running.id}")
    pick = page.locator("#modify-pick")
    inline(pick, pick.locator("xpath=ancestor::label[1]"))

    ready(page, "/tasks")
    page.locator(f'tr[data-task="{task.id}"] summary').click()
    notify = page.locator(f"#task-form-{task.id}").get_by_label("Notify the team")
    inline(notify, notify.locator("xpath=ancestor::label[1]"))

    # The cleanup page: each time to keep under its own label, in days.
    admin = wide(login("admin"))
    pairs_of(admin, "/cleanup", "Idempotency keys")
    expect(admin.locator('dd[data-kept="outbox"]')).to_have_text(re.compile(r"^kept \d+ days?$"))
    expect(admin.locator('dd[data-kept="idempotency"]')).to_have_text(
        re.compile(r"^kept \d+ days?$")
    )


def pairs_of(page: Page, path: str, label: str) -> None:
    """On `path`, every label/value pair of its grouped lists keeps the value under its label."""
    ready(page, path)
    pairs = page.locator("dl.facts.grouped > div")
    expect(pairs.filter(has_text=label)).to_have_count(1)
    for n in range(pairs.count()):
        term, value = box(pairs.nth(n).locator("dt")), box(pairs.nth(n).locator("dd"))
        assert abs(term["x"] - value["x"]) < 1 and value["y"] >= term["y"] + term["height"] - 1


def test_the_batch_page_keeps_created_by_with_its_value(
    console: ConsoleServer, login: Login
) -> None:
    declined, _ = _two_groups(console)
    page = wide(login("operator"))
    ready(page, "/incidents?group=node")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("tbody.incident-group").first.get_by_role(
        "button", name="Retry 3 as a batch"
    ).click()
    expect(page).to_have_url(re.compile(r"/batches/[0-9a-f-]{36}$"))
    pairs_of(page, page.url.removeprefix(console.url), "Created by")
    expect(page.locator("dd.batch-created-by")).to_have_text("operator")
    assert len(declined) == 3


def test_the_audit_log_shows_a_saved_view_query_as_written(
    console: ConsoleServer, login: Login
) -> None:
    page = wide(login("operator"))
    ready(page, "/instances?definition=demo-order&state=Active")
    page.locator("details.views-menu > summary").click()
    page.get_by_label("Save the current filters as").fill("demo active")
    page.get_by_role("button", name="Save view").click()
    expect(page.locator("#saved-views")).to_contain_text("View 'demo active' saved.")

    ready(page, "/audit")
    change = page.locator("tr[data-audit] .audit-after").first
    expect(change).to_contain_text("definition=demo-order&state=Active")
    expect(change).not_to_contain_text("\\u0026")
    expect(change).not_to_contain_text("&amp;")
    html: Any = change.inner_html()
    assert "definition=demo-order&amp;state=Active" in html  # still escaped as HTML


def test_a_narrower_window_never_scrolls_sideways_for_the_header(
    console: ConsoleServer, login: Login
) -> None:
    page = login("viewer")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/instances")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    # The stream's badge as it reads before the stream is up (or after it dropped): wider.
    page.locator("#live-status").evaluate(
        "e => { e.dataset.state = 'connecting'; e.textContent = 'connecting…'; }"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    jump = box(page.locator("header.top form.jump input"))
    assert jump["width"] >= 144  # still wide enough to read a short id
    header = box(page.locator("header.top"))
    assert header["height"] < 64, header
