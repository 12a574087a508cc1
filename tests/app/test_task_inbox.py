"""The console's task inbox by candidate, over HTTP on a real server: for sam, a member of the
group `sales`, "my tasks" are those sam holds, "my groups' tasks" the unassigned ones sam is a
candidate for (directly or through sales, from a list or an expression), "all" every open task;
sam's default view is both of sam's own; a user in no work group sees all by default. The
export holds the rows its view shows, and Claim and Release work from the groups' view."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from engine.commands.accounts import CreateUser
from engine.commands.identity import AddGroupMember, CreateGroup
from engine.identity.accounts import Role
from tests.api.test_sessions import Browser
from tests.compat.processes import candidate_review
from tests.server import PASSWORD, LiveServer

ROW = re.compile(r'<tr data-task="([^"]+)"')
SELECTED = re.compile(r'<option value="([a-z]+)" selected>')


@pytest.fixture
def inbox(server: LiveServer) -> dict[str, str]:
    """Open tasks by name: a for sales, b for sam, c for hr, d for sales held by sam, e for
    sales (an expression) held by olga, f without candidates, g for sales (an expression)."""
    engine = server.engine
    engine.run(CreateUser("sam", Role.OPERATOR, PASSWORD))
    engine.run(CreateUser("olga", Role.OPERATOR, PASSWORD))
    engine.run(CreateGroup("sales"))
    engine.run(AddGroupMember("sales", "sam"))
    engine.deploy(
        candidate_review("to_sales", groups="sales"),
        candidate_review("to_sam", users="sam"),
        candidate_review("to_hr", groups="hr"),
        candidate_review("to_team", users="${approver}", groups="${team}"),
        candidate_review("to_nobody"),
    )
    keys = {
        "a": ("to_sales", {}),
        "b": ("to_sam", {}),
        "c": ("to_hr", {}),
        "d": ("to_sales", {}),
        "e": ("to_team", {"approver": "pat", "team": "sales"}),
        "f": ("to_nobody", {}),
        "g": ("to_team", {"approver": "pat", "team": "sales"}),
    }
    tasks: dict[str, str] = {}
    for name, (key, variables) in keys.items():
        instance = engine.start_latest(key, variables)
        (task,) = engine.user_tasks(instance.id)
        tasks[name] = str(task.id)
    engine.claim_task(tasks["d"], "sam")
    engine.claim_task(tasks["e"], "olga")
    return tasks


@pytest.fixture
def sam(server: LiveServer, inbox: dict[str, str]) -> Iterator[Browser]:
    """Sam, signed in to the console (after `inbox` made the account)."""
    browser = Browser(server.url, "sam")
    yield browser
    browser.close()


def _shown(browser: Browser, tasks: dict[str, str], path: str) -> tuple[set[str], str | None]:
    """The tasks a page shows, by name, and the view its form has selected."""
    response = browser.get(path)
    assert response.status_code == 200, response.text
    names = {name for name, task_id in tasks.items() if task_id in ROW.findall(response.text)}
    assert len(ROW.findall(response.text)) == len(names)
    selected = SELECTED.search(response.text)
    return names, selected.group(1) if selected else None


def test_the_three_views_show_their_rows(sam: Browser, inbox: dict[str, str]) -> None:
    assert _shown(sam, inbox, "/tasks?show=mine") == ({"d"}, "mine")
    assert _shown(sam, inbox, "/tasks?show=groups") == ({"a", "b", "g"}, "groups")
    assert _shown(sam, inbox, "/tasks?show=all") == (set(inbox), "all")
    assert _shown(sam, inbox, "/tasks?show=inbox") == ({"a", "b", "d", "g"}, "inbox")
    # Sam is in a work group: both of sam's views by default.
    assert _shown(sam, inbox, "/tasks") == ({"a", "b", "d", "g"}, "inbox")
    # A definition narrows a view further.
    assert _shown(sam, inbox, "/tasks?show=groups&definition=to_team") == ({"g"}, "groups")
    exported = sam.get("/tasks/export.json?show=groups").json()
    assert {row["id"] for row in exported} == {inbox[n] for n in ("a", "b", "g")}
    assert len(sam.get("/tasks/export.json").json()) == 4


def test_a_user_in_no_work_group_sees_all_by_default(
    server: LiveServer, inbox: dict[str, str]
) -> None:
    olga = Browser(server.url, "olga")
    try:
        assert _shown(olga, inbox, "/tasks") == (set(inbox), "all")
        assert _shown(olga, inbox, "/tasks?show=mine") == ({"e"}, "mine")
        assert _shown(olga, inbox, "/tasks?show=groups") == (set(), "groups")
    finally:
        olga.close()


def test_claim_and_release_move_a_task_between_the_views(
    sam: Browser, inbox: dict[str, str]
) -> None:
    page = sam.get("/tasks?show=groups").text
    assert f'hx-post="/tasks/{inbox["a"]}/claim"' in page
    assert f'hx-post="/tasks/{inbox["a"]}/unclaim"' not in page
    assert sam.post(f"/tasks/{inbox['a']}/claim").status_code == 200
    assert _shown(sam, inbox, "/tasks?show=groups")[0] == {"b", "g"}
    assert _shown(sam, inbox, "/tasks?show=mine")[0] == {"a", "d"}
    assert f'hx-post="/tasks/{inbox["a"]}/unclaim"' in sam.get("/tasks?show=mine").text
    assert sam.post(f"/tasks/{inbox['a']}/unclaim").status_code == 200
    assert _shown(sam, inbox, "/tasks?show=groups")[0] == {"a", "b", "g"}


def test_an_unknown_view_is_refused_naming_show(sam: Browser, inbox: dict[str, str]) -> None:
    response = sam.get("/tasks?show=everything&fragment=rows")
    assert response.status_code == 400
    assert "show" in response.text
