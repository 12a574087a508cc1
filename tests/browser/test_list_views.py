"""The instance list in a real browser: its filters live in the URL, the export button downloads
every filtered row (10,000 of them) as the list orders them, and a saved view restores its
filters."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from engine.queries.instances import InstanceFilter
from tests.app.list_data import KEY, fill
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.test_pages import CHECKS

pytestmark = pytest.mark.browser


def listed_ids(console: ConsoleServer, where: InstanceFilter) -> list[str]:
    ids: list[str] = []
    after = None
    while True:
        page = console.engine.list_instances(where, limit=500, after=after)
        ids += [str(i.id) for i in page.items]
        if page.next is None:
            return ids
        after = page.next


def shown_ids(page: Page) -> list[str]:
    rows = page.locator("#instance-rows tr[data-instance]")
    return list(rows.evaluate_all("rs => rs.map(r => r.dataset.instance)"))


def test_export_of_10000_filtered_rows_matches_the_list(
    console: ConsoleServer, login: Login, tmp_path: Path
) -> None:
    fill(console.engine, 10_000, 500)
    page = login("viewer")
    page.goto("/instances")
    page.get_by_label("State").select_option("Completed")
    page.get_by_label("Definition").select_option(KEY)
    page.get_by_role("button", name="Filter").click()
    # A GET form: the filters are the page's URL (the empty ones too).
    page.wait_for_url(lambda url: "definition=export-list" in url and "state=Completed" in url)
    expect(page.locator("#instance-rows tr[data-instance]")).to_have_count(50)
    first_page = shown_ids(page)

    page.locator("details.views-menu > summary").click()
    with page.expect_download() as started:
        page.get_by_role("button", name="CSV").click()
    download = started.value
    assert download.suggested_filename.startswith("instances-")
    assert download.suggested_filename.endswith(".csv")
    target = tmp_path / "instances.csv"
    download.save_as(target)
    rows = list(csv.reader(io.StringIO(target.read_text(encoding="utf-8"), newline="")))
    assert rows[0][:5] == ["id", "definition_key", "version", "business_key", "state"]
    exported = [r[0] for r in rows[1:]]
    assert len(exported) == 10_000
    assert exported[:50] == first_page
    assert exported == listed_ids(console, InstanceFilter(definition_key=KEY, state="Completed"))
    assert {r[4] for r in rows[1:]} == {"Completed"}

    with page.expect_download() as started:
        page.get_by_role("button", name="JSON").click()
    target = tmp_path / "instances.json"
    started.value.save_as(target)
    assert [r["id"] for r in json.loads(target.read_text(encoding="utf-8"))] == exported

    # Variables typed beside the export are more columns, with the same filters.
    with console.engine.connection() as conn:
        conn.execute(
            "INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at) "
            "SELECT id, '', 'amount', 'integer', to_jsonb(length(business_key)), now() "
            "FROM process_instance"
        )
    page.get_by_label("with variables").fill("amount, region")
    with page.expect_download() as started:
        page.get_by_role("button", name="CSV").click()
    target = tmp_path / "with-variables.csv"
    started.value.save_as(target)
    rows = list(csv.reader(io.StringIO(target.read_text(encoding="utf-8"), newline="")))
    assert rows[0][-2:] == ["variables.amount", "variables.region"]
    assert [r[0] for r in rows[1:]] == exported
    # (past the five newest, whose keys the CSV defuses)
    assert all(r[-2] == str(len(r[3])) and r[-1] == "" for r in rows[6:20])

    # Streamed: the answer is chunked, with no length known before the rows are read.
    answer = page.request.get("/instances/export.csv?state=Completed&definition=export-list")
    assert answer.ok and "content-length" not in answer.headers
    assert answer.headers["transfer-encoding"] == "chunked"


def test_filters_live_in_the_url_and_a_saved_view_restores_them(
    console: ConsoleServer, login: Login
) -> None:
    fill(console.engine, 60, 10)
    page = login("operator")
    page.goto("/instances")
    assert page.evaluate(CHECKS) == []
    page.get_by_label("State").select_option("Active")
    page.get_by_label("Has incident").select_option("no")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(lambda url: "state=Active" in url and "incident=no" in url)
    rows = page.locator("#instance-rows tr[data-instance]")
    expect(rows).to_have_count(10)
    active = shown_ids(page)

    # The URL alone, opened in another browser context, shows the same list and inputs.
    other = login("admin")
    other.goto(page.url)
    expect(other.locator("#instance-rows tr[data-instance]")).to_have_count(10)
    assert shown_ids(other) == active
    expect(other.get_by_label("State")).to_have_value("Active")
    expect(other.get_by_label("Has incident")).to_have_value("no")

    page.locator("details.views-menu > summary").click()
    page.get_by_label("Save the current filters as").fill("active, no incident")
    page.get_by_role("button", name="Save view").click()
    section = page.locator("#saved-views")
    expect(section).to_contain_text("View 'active, no incident' saved.")
    expect(section.get_by_role("link", name="active, no incident")).to_be_visible()
    assert page.evaluate(CHECKS) == []

    page.get_by_role("link", name="Clear").click()
    page.wait_for_url(lambda url: url.endswith("/instances"))
    expect(rows).to_have_count(50)
    expect(page.get_by_label("State")).to_have_value("")
    page.goto("/tasks")
    expect(page.locator("#saved-views")).to_contain_text("No saved views of this page yet.")

    page.goto("/instances")
    page.locator("details.views-menu > summary").click()
    page.locator("#saved-views").get_by_role("link", name="active, no incident").click()
    page.wait_for_url("**/instances?state=Active&incident=no")
    expect(rows).to_have_count(10)
    assert shown_ids(page) == active
    expect(page.get_by_label("State")).to_have_value("Active")
    expect(page.get_by_label("Has incident")).to_have_value("no")
    expect(page.get_by_label("Business key")).to_have_value("")

    # The other user has no such view; the owner deletes it.
    other.goto("/instances")
    expect(other.locator("#saved-views")).to_contain_text("No saved views of this page yet.")
    page.locator("details.views-menu > summary").click()
    page.get_by_role("button", name="Delete view active, no incident").click()
    expect(section).to_contain_text("View deleted.")
    expect(section.get_by_role("link", name="active, no incident")).to_have_count(0)
