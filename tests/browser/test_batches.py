"""A batch created from the console's incident filter, its progress bar followed to the end while
the job executor works through it; a viewer sees the batch and none of its buttons."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from engine.builder import ProcessBuilder
from tests.browser.conftest import TIMEOUT_MS, Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

COUNT = 300


def _incidents(console: ConsoleServer, count: int) -> None:
    engine = console.engine
    engine.deploy(
        ProcessBuilder("batch-browser")
        .start_event("start")
        .service_task("charge", topic="batch-browser")
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: engine.start_latest("batch-browser"), range(count)))
    tasks = engine.fetch_and_lock("w", {"batch-browser": 600_000}, max_tasks=count)
    with ThreadPoolExecutor(4) as pool:
        list(
            pool.map(
                lambda t: engine.fail_external_task(t["id"], "w", "declined", retries=0), tasks
            )
        )
    assert len(engine.incidents(definition_key="batch-browser")) == count


def test_a_retry_batch_from_the_console_runs_to_its_end(
    console: ConsoleServer, login: Login
) -> None:
    _incidents(console, COUNT)
    page = login("operator")
    page.goto("/incidents?definition=batch-browser")
    page.locator("details.batch-menu > summary").click()
    page.get_by_role("button", name="Retry all matching…").click()
    page.get_by_role("button", name=f"Retry {COUNT} incidents").click()
    expect(page).to_have_url(re.compile(r"/batches/[0-9a-f-]{36}$"))
    batch_id = page.url.rsplit("/", 1)[1]
    bar = page.locator("#batch-body progress")
    expect(bar).to_have_attribute("max", str(COUNT))
    # The page polls while the job executor works: the bar fills to the end by itself.
    expect(bar).to_have_attribute("value", str(COUNT), timeout=2 * TIMEOUT_MS)
    expect(page.locator("#batch-body")).to_have_attribute("data-state", "Completed")
    expect(page.locator("#batch-body [data-progress-text]")).to_have_text(
        f"{COUNT} done of {COUNT}"
    )
    assert console.engine.incidents(definition_key="batch-browser") == []

    page.get_by_role("link", name="Batches").first.click()
    row = page.locator(f'tr[data-batch="{batch_id}"]')
    expect(row).to_have_attribute("data-state", "Completed")
    expect(row.locator("progress")).to_have_attribute("value", str(COUNT))

    viewer = login("viewer")
    viewer.goto(f"/batches/{batch_id}")
    expect(viewer.locator("#batch-body")).to_have_attribute("data-state", "Completed")
    expect(viewer.locator(".batch-actions")).to_have_count(0)
    viewer.goto("/incidents")
    expect(
        viewer.get_by_role("button", name="Retry all matching…", include_hidden=True)
    ).to_have_count(0)
