"""A task filter made over /engine-rest is a saved view of the console's task inbox: in a real
browser, the inbox lists it among its saved views, and opening it shows exactly the tasks the
filter's list answers."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.api.processes import review
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.server import PASSWORD

pytestmark = pytest.mark.browser


def shown_tasks(page: Page) -> list[str]:
    rows = page.locator("tr[data-task]")
    return list(rows.evaluate_all("rs => rs.map(r => r.dataset.task)"))


def test_a_rest_filter_opens_in_the_inbox_with_the_same_tasks(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(review("fx"))
    engine.deploy(review("other"))
    mine = []
    for key, assignee in (
        ("fx", "admin"),
        ("fx", "operator"),
        ("fx", None),
        ("fx", "admin"),
        ("other", "admin"),
    ):
        task = engine.start_latest(key).user_tasks()[0]
        if assignee is not None:
            engine.set_assignee(task.id, assignee)
        if (key, assignee) == ("fx", "admin"):
            mine.append(str(task.id))

    with httpx.Client(
        base_url=f"{console.url}/engine-rest", auth=("admin", PASSWORD), timeout=30
    ) as rest:
        query = {"processDefinitionKey": "fx", "assigneeExpression": "${currentUser()}"}
        created = rest.post(
            "/filter/create",
            json={"resourceType": "Task", "name": "My fx work", "owner": "admin", "query": query},
        )
        assert created.status_code == 200, created.text
        listed = rest.get(f"/filter/{created.json()['id']}/list")
        assert listed.status_code == 200, listed.text
        by_filter = [row["id"] for row in listed.json()]
    assert sorted(by_filter) == sorted(mine)

    page = login("admin")
    page.goto("/tasks?show=all")
    expect(page.locator("tr[data-task]")).to_have_count(5)
    page.locator("#saved-views").get_by_role("link", name="My fx work").click()
    page.wait_for_url("**/tasks?show=mine&definition=fx")
    expect(page.locator("tr[data-task]")).to_have_count(len(mine))
    assert shown_tasks(page) == by_filter
