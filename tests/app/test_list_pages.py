"""The console's incident list and task inbox show a page of rows at a time, oldest first; the
"Next page" link continues strictly after the page's last row, the live refresh of a page asks
for that same page, and the export still holds every row the filters match."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from engine.queries import lists
from tests.app.list_data import KEY, fill
from tests.server import LiveServer, console_login

# 12,500 instances: every 50th has an open incident (250), every 40th an open user task (312),
# assigned to `viewer` for every 80th (156).
INSTANCES = 12_500
NEXT = re.compile(r'<a rel="next" href="([^"]+)">Next page</a>')
LIVE = re.compile(r'<div id="(?:incident|task)-rows" hx-get="([^"]+)"')


@pytest.fixture
def filled(server: LiveServer) -> LiveServer:
    fill(server.engine, INSTANCES)
    return server


def client_as(server: LiveServer, role: str) -> httpx.Client:
    login = console_login(server.url, role)
    cookies = {"interlock_session": login.cookies["interlock_session"]}
    return httpx.Client(base_url=server.url, cookies=cookies, timeout=30)


def follow(client: httpx.Client, url: str, row: str) -> list[list[str]]:
    """The ids of the rows of every page, from `url` on through the "Next page" links; each
    page's live refresh asks for the rows of that same page."""
    pages: list[list[str]] = []
    while True:
        response = client.get(url)
        assert response.status_code == 200, response.text
        ids = re.findall(rf'data-{row}="([^"]+)"', response.text)
        pages.append(ids)
        live = html.unescape(LIVE.search(response.text).group(1))  # type: ignore[union-attr]
        assert re.findall(rf'data-{row}="([^"]+)"', client.get(live).text) == ids
        found = NEXT.search(response.text)
        if found is None:
            return pages
        url = html.unescape(found.group(1))


def test_the_incident_list_pages_through_every_open_incident_once(filled: LiveServer) -> None:
    with client_as(filled, "viewer") as client:
        pages = follow(client, "/incidents?type=failedJob", "incident")
        assert [len(p) for p in pages] == [100, 100, 50]
        batches = lists.incidents(filled.engine, lists.IncidentFilter())
        listed = [str(i.id) for batch in batches for i in batch]
        assert [i for p in pages for i in p] == listed
        first = client.get("/incidents?type=failedJob").text
        assert "100+ open incidents, oldest first" in first
        assert "First page" not in first
        exported = client.get("/incidents/export.csv?type=failedJob").text
        assert len(exported.strip().splitlines()) == 1 + 250
        last = client.get(f"/incidents?after={pages_cursor(client, '/incidents', 2)}").text
        assert "50 more open incidents." in last and "First page" in last


def pages_cursor(client: httpx.Client, url: str, pages: int) -> str:
    """The `after` cursor of the page `pages` pages after `url`'s."""
    for _ in range(pages):
        url = html.unescape(NEXT.search(client.get(url).text).group(1))  # type: ignore[union-attr]
    return url.rsplit("after=", 1)[1]


def test_the_inbox_pages_through_every_open_task_once(filled: LiveServer) -> None:
    with client_as(filled, "viewer") as client:
        pages = follow(client, "/tasks", "task")
        assert [len(p) for p in pages] == [100, 100, 100, 12]
        everything = [t.id for b in lists.tasks(filled.engine, lists.TaskFilter()) for t in b]
        assert [i for p in pages for i in p] == [str(t) for t in everything]
        mine = follow(client, f"/tasks?show=mine&definition={KEY}", "task")
        assert [len(p) for p in mine] == [100, 56]
        assert len(client.get("/tasks/export.json?show=mine").json()) == 156


@pytest.mark.parametrize("path", ["/incidents", "/tasks"])
def test_a_bad_cursor_is_refused_naming_after(server: LiveServer, path: str) -> None:
    with client_as(server, "viewer") as client:
        page = client.get(path, params={"after": "@@@"})
        assert page.status_code == 200
        assert "&#39;@@@&#39; is not a valid page cursor" in page.text
        rows = client.get(path, params={"after": "@@@", "fragment": "rows"})
        assert rows.status_code == 400
        assert "not a valid page cursor" in rows.text


def test_the_workers_page_shows_the_first_leases_and_says_so(filled: LiveServer) -> None:
    """101 tasks locked now and 3 whose lease ran out: the first list shows the 100 whose lock
    expires first and says that more are not shown; the second shows all 3."""
    with filled.engine.connection() as conn, conn.transaction():
        conn.execute(
            "INSERT INTO external_task (id, instance_id, token_id, node_id, topic, state, "
            "priority, worker_id, lock_expires_at, created_at) "
            "SELECT gen_random_uuid(), p.id, gen_random_uuid(), 'work', 'charge', 'Open', 0, "
            "'worker-' || n, now() + (CASE WHEN n <= 101 THEN n ELSE -n END) * interval '1 hour', "
            "now() FROM generate_series(1, 104) n, "
            "(SELECT id FROM process_instance ORDER BY started_at LIMIT 1) p"
        )
    with client_as(filled, "viewer") as client:
        page = client.get("/workers").text
    locked = page.split('id="h-locked"')[1].split('id="h-expired"')[0]
    assert locked.count("data-external=") == 100
    assert "worker-1<" in locked and "worker-100<" in locked and "worker-101<" not in locked
    assert 'id="locked-shown">Showing the first 100' in locked
    expired = page.split('id="h-expired"')[1]
    assert expired.count("data-external=") == 3
    assert "expired-shown" not in expired
    assert '<tr data-topic="charge"><td>charge</td><td class="num">104</td>' in page
