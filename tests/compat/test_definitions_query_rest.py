"""GET /process-definition's filters, sorting and paging, and its count, as Camunda's reference
gives them: `latestVersion` is the latest version of each key (and tenant) whatever else the
query asks."""

from __future__ import annotations

import httpx

from tests.compat import processes
from tests.compat.conftest import deploy


def _ids(answer: httpx.Response) -> list[tuple[str, int]]:
    assert answer.status_code == 200, answer.text
    return [(row["key"], row["version"]) for row in answer.json()]


def test_filters_sorting_paging_and_count(rest: httpx.Client) -> None:
    for key, versions in (("dq-alpha", 2), ("dq-beta", 1), ("other-gamma", 3)):
        for _ in range(versions):
            deploy(rest, ("p.bpmn", processes.approval(key)))

    by_key = {"keyLike": "dq-%", "sortBy": "version", "sortOrder": "desc"}
    found = _ids(rest.get("/process-definition", params=by_key))
    # Sorted by version, newest first: the two versions 1 tie, in any order after it.
    assert found[0] == ("dq-alpha", 2)
    assert sorted(found[1:]) == [("dq-alpha", 1), ("dq-beta", 1)]
    latest = {
        "keyIn": "dq-alpha,dq-beta,other-gamma",
        "latestVersion": "true",
        "sortBy": "key",
        "sortOrder": "asc",
    }
    assert _ids(rest.get("/process-definition", params=latest)) == [
        ("dq-alpha", 2),
        ("dq-beta", 1),
        ("other-gamma", 3),
    ]
    # The latest version only: version 1 of a key with a version 2 is not the latest.
    assert (
        _ids(
            rest.get(
                "/process-definition",
                params={"key": "dq-alpha", "version": "1", "latestVersion": "true"},
            )
        )
        == []
    )
    paged = {
        "key": "other-gamma",
        "sortBy": "version",
        "sortOrder": "asc",
        "firstResult": "1",
        "maxResults": "1",
    }
    assert _ids(rest.get("/process-definition", params=paged)) == [("other-gamma", 2)]
    counted = rest.get("/process-definition/count", params={"keyLike": "dq-%"})
    assert counted.json() == {"count": 3}
    assert rest.get(
        "/process-definition/count", params={"keyLike": "dq-%", "latestVersion": "true"}
    ).json() == {"count": 2}
    assert _ids(rest.get("/process-definition", params={"deploymentId": "not-an-id"})) == []
