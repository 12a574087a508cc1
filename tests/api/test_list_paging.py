"""The lists besides instances (user tasks, external tasks, incidents, jobs) page by keyset:
`limit` rows at most, oldest first, and a `next` cursor that continues strictly after the page's
last row, so following `next` to the end yields every row once, in order."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api import processes
from tests.server import LiveServer

ROWS = 25


def follow(client: httpx.Client, path: str, **params: Any) -> list[list[dict[str, Any]]]:
    """Every page of `path`, following `next` to the end."""
    found: list[list[dict[str, Any]]] = []
    after: str | None = None
    while True:
        response = client.get(path, params={**params, **({"after": after} if after else {})})
        assert response.status_code == 200, response.text
        body = response.json()
        found.append(body["items"])
        after = body["next"]
        if after is None:
            return found


@pytest.fixture(scope="module")
def filled(api: LiveServer) -> LiveServer:
    """ROWS user tasks, jobs, open external tasks (topic `paged`) and incidents; the incidents
    are failures of other external tasks (topic `failing`)."""
    engine = api.engine
    engine.deploy(
        processes.external("paged", topic="paged"),
        processes.external("failing", topic="failing"),
        name="paging",
    )
    for _ in range(ROWS):
        engine.start_latest("review")
        engine.start_latest("timer")
        engine.start_latest("paged")
        engine.start_latest("failing")
    for task in engine.fetch_and_lock("w", {"failing": 60_000}, max_tasks=ROWS):
        engine.fail_external_task(task["id"], "w", "no luck", retries=0)
    return api


@pytest.mark.parametrize(
    ("path", "params", "order"),
    [
        ("/user-tasks", {}, "created_at"),
        ("/external-tasks", {"topic": "paged"}, "created_at"),
        ("/incidents", {}, "created_at"),
        ("/jobs", {"with_retries_left": "true"}, "due_at"),
    ],
)
def test_pages_hold_every_row_once_in_order(
    filled: LiveServer, viewer: httpx.Client, path: str, params: dict[str, str], order: str
) -> None:
    pages = follow(viewer, path, limit=10, **params)
    assert [len(page) for page in pages] == [10, 10, 5]
    rows = [row for page in pages for row in page]
    whole = viewer.get(path, params=params).json()
    assert whole["next"] is None
    assert [r["id"] for r in rows] == [r["id"] for r in whole["items"]]
    assert len({r["id"] for r in rows}) == ROWS
    keys = [(r[order], r["id"]) for r in rows]
    assert keys == sorted(keys)


def test_a_page_is_one_hundred_rows_unless_limit_says(
    filled: LiveServer, viewer: httpx.Client
) -> None:
    engine = filled.engine
    for _ in range(100 - ROWS + 1):
        engine.start_latest("review")
    first = viewer.get("/user-tasks").json()
    assert len(first["items"]) == 100
    rest = viewer.get("/user-tasks", params={"after": first["next"]}).json()
    assert len(rest["items"]) == 1
    assert rest["next"] is None
    assert len(viewer.get("/user-tasks", params={"limit": 1000}).json()["items"]) == 101


@pytest.mark.parametrize("path", ["/user-tasks", "/external-tasks", "/incidents", "/jobs"])
def test_bad_paging_is_a_400_naming_the_parameter(viewer: httpx.Client, path: str) -> None:
    for params, field in [
        ({"after": "@@@"}, "after"),
        ({"after": "bm90IGEgY3Vyc29y"}, "after"),
        ({"limit": "0"}, "limit"),
        ({"limit": "1001"}, "limit"),
        ({"limit": "ten"}, "limit"),
    ]:
        response = viewer.get(path, params=params)
        assert response.status_code == 400, (path, params, response.text)
        assert field in response.text, (path, params, response.text)
