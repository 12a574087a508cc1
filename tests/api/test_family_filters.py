"""/api/v1's instance list filters a family: the instances nobody called, the called ones, and
the instances one instance called."""

from __future__ import annotations

from pathlib import Path

import httpx

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def test_the_list_filters_roots_and_what_an_instance_called(
    admin: httpx.Client, operator: httpx.Client, viewer: httpx.Client
) -> None:
    files = [
        ("files", (name, (DATA / name).read_bytes()))
        for name in ("call_parent.bpmn", "call_shipping.bpmn")
    ]
    deployed = admin.post("/deployments", files=files)
    assert deployed.status_code == 201, deployed.text
    variables = {"amount": 2, "shipping": "shipping"}
    parents = [
        operator.post("/definitions/key/order_parent/start", json={"variables": variables}).json()[
            "id"
        ]
        for _ in range(2)
    ]

    def ids(**params: str) -> set[str]:
        query = {"definition_key": params.pop("key", ""), **params}
        if not query["definition_key"]:
            del query["definition_key"]
        answer = viewer.get("/instances", params=query)
        assert answer.status_code == 200, answer.text
        return {item["id"] for item in answer.json()["items"]}

    children = ids(key="shipping")
    assert len(children) == 2
    assert ids(key="order_parent", root_only="true") == set(parents)
    assert ids(key="shipping", root_only="true") == set()
    assert ids(key="shipping", root_only="false") == children
    [first_child] = ids(called_by=parents[0])
    assert first_child in children
    assert ids(called_by=first_child) == set()
    bad = viewer.get("/instances", params={"root_only": "maybe"})
    assert bad.status_code == 400
    assert bad.json()["detail"]["field"] == "root_only"
