"""The instance list: filters and keyset pagination, newest first."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import httpx

from tests.api import processes
from tests.api.helpers import fetch, start
from tests.server import LiveServer


def pages(client: httpx.Client, **params: Any) -> list[list[str]]:
    """Every page's instance ids, following `next` to the end."""
    found: list[list[str]] = []
    after: str | None = None
    while True:
        query = {**params, **({"after": after} if after else {})}
        response = client.get("/instances", params=query)
        assert response.status_code == 200, response.text
        body = response.json()
        found.append([item["id"] for item in body["items"]])
        after = body["next"]
        if after is None:
            return found


def test_keyset_pages_with_filters(viewer: httpx.Client, operator: httpx.Client) -> None:
    started = [
        start(operator, "review", variables={"i": n, "color": "red" if n % 2 else "blue"})["id"]
        for n in range(12)
    ]
    for _ in range(3):
        start(operator, "waiting")
    red_newest_first = [iid for n, iid in enumerate(started) if n % 2][::-1]

    assert pages(viewer, definition_key="review", var="color:red", limit=2) == [
        red_newest_first[0:2],
        red_newest_first[2:4],
        red_newest_first[4:6],
    ]

    first = viewer.get(
        "/instances", params={"definition_key": "review", "var": "color:red", "limit": 2}
    ).json()
    newer = start(operator, "review", variables={"color": "red"})["id"]
    rest = viewer.get(
        "/instances",
        params={"definition_key": "review", "var": "color:red", "limit": 2, "after": first["next"]},
    ).json()
    assert [i["id"] for i in rest["items"]] == red_newest_first[2:4]
    assert newer not in [i["id"] for i in rest["items"]]

    everything = [iid for page in pages(viewer, limit=4) for iid in page]
    assert len(everything) == len(set(everything)) == 16
    assert everything[0] == newer
    times = [viewer.get(f"/instances/{iid}").json()["started_at"] for iid in everything]
    assert times == sorted(times, reverse=True)


def test_filters(viewer: httpx.Client, operator: httpx.Client, api: LiveServer) -> None:
    before = datetime.now(UTC)
    time.sleep(0.01)
    a = start(operator, "waiting", business_key="bk-a", variables={"n": 3, "tags": ["x"]})["id"]
    b = start(operator, "waiting", business_key="bk-b", variables={"n": 4})["id"]
    time.sleep(0.01)
    middle = datetime.now(UTC)
    time.sleep(0.01)
    c = start(operator, "external", business_key="bk-c")["id"]
    operator.post(f"/instances/{b}/cancel")
    (task,) = fetch(operator, "filters")
    operator.post(
        f"/external-tasks/{task['id']}/failure",
        json={"worker_id": "filters", "error_message": "boom"},
    )
    api.engine.deploy(processes.waiting(name="second version"))
    d = start(operator, "waiting")["id"]

    def ids(**params: Any) -> list[str]:
        query = {"started_after": before.isoformat(), **params}
        return [i["id"] for i in viewer.get("/instances", params=query).json()["items"]]

    assert ids() == [d, c, b, a]
    assert ids(business_key="bk-a") == [a]
    assert ids(state="Terminated") == [b]
    assert ids(state="Active", definition_key="waiting") == [d, a]
    assert ids(has_incident="true") == [c]
    assert ids(has_incident="false") == [d, b, a]
    assert ids(started_before=middle.isoformat()) == [b, a]
    assert ids(started_after=middle.isoformat().replace("+00:00", "Z")) == [d, c]
    assert ids(var="n:3") == [a]
    assert ids(var="n:4", state="Terminated") == [b]
    assert ids(var='tags:["x"]') == [a]
    assert ids(var="n:3", business_key="bk-b") == []
    assert ids(definition_key="waiting", version=2) == [d]
    assert ids(definition_key="waiting", version=1) == [b, a]
    definition_id = viewer.get(f"/instances/{c}").json()["definition_id"]
    assert ids(definition_id=definition_id) == [c]
