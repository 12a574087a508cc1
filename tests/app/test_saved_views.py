"""Saved views: each console user keeps named filters of a list page, sees only their own, opens
one as a link to the page with its filters, and deletes it; the commands check what is saved and
never touch another user's views."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from uuid import UUID

import pytest

from engine.api import Engine
from engine.commands.accounts import CreateToken, CreateUser, DeleteCredential
from engine.commands.views import MAX_VIEWS, DeleteView, SaveView
from engine.errors import BadRequest, Conflict, NotFound
from engine.identity import accounts
from engine.identity.accounts import Role
from engine.queries import views
from engine.states import ListPage
from tests.api.test_sessions import Browser
from tests.server import LiveServer


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    running = Engine(database_url, migrate=False)
    yield running
    running.close()


def saved(engine: Engine, owner: str, page: ListPage) -> list[tuple[str, str]]:
    return [(v.name, v.query) for v in views.of_owner(engine, owner, page)]


def test_a_view_keeps_the_pages_filters_normalized(engine: Engine) -> None:
    made = engine.run(
        SaveView("ann", "instances", "  stuck orders ", "?incident=yes&state=Active&version=&")
    )
    assert not made.replaced
    assert saved(engine, "ann", ListPage.INSTANCES) == [
        ("stuck orders", "state=Active&incident=yes")
    ]
    again = engine.run(SaveView("ann", "instances", "stuck orders", "state=Suspended"))
    assert again.replaced and again.view_id == made.view_id
    engine.run(SaveView("ann", "tasks", "stuck orders", "definition=a+b&show=mine"))
    engine.run(SaveView("bob", "instances", "stuck orders", ""))
    assert saved(engine, "ann", ListPage.INSTANCES) == [("stuck orders", "state=Suspended")]
    assert saved(engine, "ann", ListPage.TASKS) == [("stuck orders", "show=mine&definition=a+b")]
    assert saved(engine, "bob", ListPage.INSTANCES) == [("stuck orders", "")]


def test_what_a_view_may_hold_is_checked(engine: Engine) -> None:
    for command, field, words in (
        (SaveView("ann", "instances", " ", "state=Active"), "name", "non-empty"),
        (SaveView("ann", "instances", "x" * 101, ""), "name", "at most 100"),
        (SaveView("ann", "workers", "w", ""), "page", "instances, incidents, tasks"),
        (SaveView("ann", "incidents", "i", "type=failedJob&state=Open"), "query", "'state'"),
        (SaveView("ann", "tasks", "t", "show=mine&show=all"), "query", "twice"),
        (SaveView("ann", "instances", "q", "business_key=a%00b"), "query", "not text"),
    ):
        with pytest.raises(BadRequest) as refused:
            engine.run(command)
        assert refused.value.detail["field"] == field, command
        assert words in refused.value.message, refused.value.message
    assert saved(engine, "ann", ListPage.INSTANCES) == []
    assert saved(engine, "ann", ListPage.INCIDENTS) == []


def test_a_user_keeps_a_bounded_number_of_views_per_page(engine: Engine) -> None:
    for n in range(MAX_VIEWS):
        engine.run(SaveView("ann", "incidents", f"view {n:02}", f"node=n{n}"))
    with pytest.raises(Conflict):
        engine.run(SaveView("ann", "incidents", "one more", ""))
    # Saving over a view of the same name, another page, another user: still fine.
    assert engine.run(SaveView("ann", "incidents", "view 07", "node=seven")).replaced
    engine.run(SaveView("ann", "tasks", "one more", ""))
    engine.run(SaveView("bob", "incidents", "one more", ""))
    assert len(saved(engine, "ann", ListPage.INCIDENTS)) == MAX_VIEWS


def test_nobody_deletes_another_users_view(engine: Engine) -> None:
    view = UUID(engine.run(SaveView("ann", "tasks", "mine", "show=mine")).view_id)
    with pytest.raises(NotFound):
        engine.run(DeleteView("bob", view))
    assert saved(engine, "ann", ListPage.TASKS) == [("mine", "show=mine")]
    engine.run(DeleteView("ann", view))
    assert saved(engine, "ann", ListPage.TASKS) == []
    with pytest.raises(NotFound):
        engine.run(DeleteView("ann", view))


def view_links(html: str, page: str) -> dict[str, str]:
    """name -> href of every saved view the page lists."""
    section = html[html.index('id="saved-views"') :]
    found = re.findall(r'<li data-view="[^"]+">\s*<a href="([^"]+)">([^<]+)</a>', section)
    return {unescape(name): unescape(href) for href, name in found if href.startswith(f"/{page}")}


def view_id(html: str, name: str) -> str:
    found = re.search(r'<li data-view="([^"]+)">\s*<a href="[^"]+">' + re.escape(name) + "<", html)
    assert found, name
    return found.group(1)


def test_in_the_console_a_user_saves_opens_and_deletes_views(server: LiveServer) -> None:
    owner, other = Browser(server.url, "operator"), Browser(server.url, "admin")
    reader = Browser(server.url, "viewer")
    try:
        # A viewer exports, and keeps no views: no form, and a POST is refused.
        shown = reader.get("/incidents?type=failedJob").text
        assert 'href="/incidents/export.csv?type=failedJob"' in shown
        assert 'hx-post="/views"' not in shown
        denied = reader.post("/views", data={"page": "incidents", "name": "x", "query": ""})
        assert denied.status_code == 403 and "viewer" in denied.text
        assert views.of_owner(server.engine, "viewer", ListPage.INCIDENTS) == []

        page = owner.get("/incidents?type=failedJob&text=timeout")
        assert page.status_code == 200
        # The section offers the page's current filters to save, and exports of them.
        assert 'name="query" value="type=failedJob&amp;text=timeout"' in page.text
        assert 'href="/incidents/export.csv?type=failedJob&amp;text=timeout"' in page.text
        answer = owner.post(
            "/views",
            data={"page": "incidents", "name": "timeouts", "query": "type=failedJob&text=timeout"},
        )
        assert answer.status_code == 200, answer.text
        assert "View &#39;timeouts&#39; saved." in answer.text
        assert view_links(answer.text, "incidents") == {
            "timeouts": "/incidents?type=failedJob&text=timeout"
        }
        assert view_links(owner.get("/incidents").text, "incidents") == {
            "timeouts": "/incidents?type=failedJob&text=timeout"
        }
        # Opening the view's link is opening the page with its filters in the form.
        opened = owner.get("/incidents?type=failedJob&text=timeout").text
        assert 'name="text" value="timeout"' in opened

        refused = owner.post(
            "/views", data={"page": "incidents", "name": "bad", "query": "state=Open"}
        )
        assert refused.status_code == 400
        assert "no filter of the incidents page" in refused.text
        assert view_links(refused.text, "incidents") == {
            "timeouts": "/incidents?type=failedJob&text=timeout"
        }

        # Another user sees none of them and cannot delete them.
        assert view_links(other.get("/incidents").text, "incidents") == {}
        mine = view_id(answer.text, "timeouts")
        theirs = other.post(f"/views/{mine}/delete", data={"page": "incidents"})
        assert theirs.status_code == 404
        assert len(views.of_owner(server.engine, "operator", ListPage.INCIDENTS)) == 1

        forged = owner.post(
            f"/views/{mine}/delete", data={"page": "incidents"}, headers={"X-CSRF-Token": "x"}
        )
        assert forged.status_code == 403
        gone = owner.post(f"/views/{mine}/delete", data={"page": "incidents"})
        assert gone.status_code == 200 and "View deleted." in gone.text
        assert view_links(gone.text, "incidents") == {}
        assert views.of_owner(server.engine, "operator", ListPage.INCIDENTS) == []
    finally:
        owner.close()
        other.close()
        reader.close()


def test_a_deleted_users_views_go_with_them(engine: Engine) -> None:
    engine.run(CreateUser("ann", Role.VIEWER, "a-long-password"))
    engine.run(CreateToken("bob", Role.VIEWER, accounts.new_token()))
    engine.run(SaveView("ann", "tasks", "mine", "show=mine"))
    engine.run(SaveView("bob", "tasks", "mine", "show=mine"))
    # A token of the same name as a user's views is no user: deleting it leaves the views.
    engine.run(DeleteCredential("token", "bob"))
    assert saved(engine, "bob", ListPage.TASKS) == [("mine", "show=mine")]
    engine.run(DeleteCredential("password", "ann"))
    assert saved(engine, "ann", ListPage.TASKS) == []
    with pytest.raises(NotFound):
        engine.run(DeleteCredential("password", "ann"))
