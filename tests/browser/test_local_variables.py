"""The inspector's variables panel shows scope-local variables grouped under the activity that
owns them, and follows them live as activity instances start and end."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from engine.core.handlers import TaskContext
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def test_locals_appear_under_their_scope_and_vanish_with_it(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine

    def inspect(context: TaskContext) -> None:
        context.set("amount", context.variables["amount"] + 1)

    engine.register_handler("prepareOrder", lambda context: None)
    engine.register_handler("inspectOrder", inspect)
    engine.deploy(DATA / "order_mappings.bpmn")
    handle = engine.start_latest("order_mappings", {"amount": 7, "city": "Oslo"})
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    body = page.locator("#variables-body")
    expect(body.locator('tr[data-variable="amount"] .value')).to_have_text("7")
    review = body.locator('table[data-scope="Task_Review"]')
    expect(review.locator("caption")).to_contain_text("Local to Review order")
    expect(review.locator("caption")).to_contain_text("Task_Review")
    expect(review.locator('tr[data-local-variable="decision"] .value')).to_have_text("pending")
    expect(review.locator('tr[data-local-variable="reviewer"] .value')).to_have_text("ann")
    # A local never shows as an instance variable.
    expect(body.locator('tr[data-variable="decision"]')).to_have_count(0)

    [task] = engine.user_tasks(handle.id)
    engine.complete_task(task.id, {"decision": "approved"})
    # Live: the task's scope is gone, the subprocess's appears with its own amount.
    expect(review).to_have_count(0)
    check = body.locator('table[data-scope="Sub_Check"]')
    expect(check.locator("caption")).to_contain_text("Local to Check order")
    expect(check.locator('tr[data-local-variable="amount"] .value')).to_have_text("108")
    expect(body.locator('tr[data-variable="amount"] .value')).to_have_text("7")
    expect(body.locator('tr[data-variable="approved"] .value')).to_have_text("approved")

    # The node filter keeps only the chosen activity's scope.
    page.select_option("#node-filter", "Task_Prepare")
    expect(body.locator('table[data-scope="Sub_Check"]')).to_have_count(0)
    page.select_option("#node-filter", "Sub_Check")
    expect(body.locator('table[data-scope="Sub_Check"]')).to_have_count(1)
