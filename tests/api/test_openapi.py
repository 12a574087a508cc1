"""The OpenAPI document describes the app: the same paths and methods as the mounted routes, and
real responses carry the documented fields with the documented types."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from starlette.routing import Mount, Route

from app.main import create_app
from app.settings import Settings
from tests.api import processes
from tests.api.helpers import fetch, open_task, start

JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def is_type(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name != "boolean":
        return False
    return isinstance(value, JSON_TYPES[name])


def problems(value: Any, schema: dict[str, Any], doc: dict[str, Any], at: str = "$") -> list[str]:
    """Where `value` breaks `schema`: types, required fields, items and properties (recursive)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return problems(value, doc["components"]["schemas"][name], doc, at)
    if "oneOf" in schema:
        if any(not problems(value, option, doc, at) for option in schema["oneOf"]):
            return []
        return [f"{at}: matches none of oneOf"]
    found: list[str] = []
    if "type" in schema:
        allowed = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(is_type(value, t) for t in allowed):
            return [f"{at}: {type(value).__name__} is not {allowed}"]
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                found.append(f"{at}: missing '{name}'")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            if name in properties:
                found += problems(item, properties[name], doc, f"{at}.{name}")
            elif isinstance(extra, dict):
                found += problems(item, extra, doc, f"{at}.{name}")
            elif properties:
                found.append(f"{at}: undocumented field '{name}'")
    if isinstance(value, list) and "items" in schema:
        for n, item in enumerate(value):
            found += problems(item, schema["items"], doc, f"{at}[{n}]")
    return found


def mounted_operations() -> set[tuple[str, str]]:
    app = create_app(Settings())
    (api,) = [r for r in app.routes if isinstance(r, Mount) and r.path == "/api/v1"]
    return {
        (method, re.sub(r"{(\w+):\w+}", r"{\1}", route.path))
        for route in api.routes
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }


@pytest.fixture(scope="module")
def doc(viewer: httpx.Client) -> dict[str, Any]:
    response = viewer.get("/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def test_the_document_and_the_routes_agree(doc: dict[str, Any]) -> None:
    assert doc["openapi"].startswith("3.1")
    documented = {(method.upper(), path) for path, item in doc["paths"].items() for method in item}
    assert documented == mounted_operations()
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    refs = re.findall(r'"#/components/schemas/(\w+)"', str(doc).replace("'", '"'))
    assert set(refs) <= set(doc["components"]["schemas"])
    for path, item in doc["paths"].items():
        for method, op in item.items():
            named = {p["name"] for p in op["parameters"] if p["in"] == "path"}
            assert named == set(re.findall(r"{(\w+)}", path)), (method, path)
            assert any(code.startswith("2") for code in op["responses"]), (method, path)
            assert "401" in op["responses"]
            if method == "post":
                assert "Idempotency-Key" in {p["name"] for p in op["parameters"]}


def test_every_documented_operation_is_served(doc: dict[str, Any], admin: httpx.Client) -> None:
    """A request to each documented path and method reaches its handler: the answer is never the
    router's own 404 or 405 (which would be `HttpError`)."""
    placeholder = "00000000-0000-0000-0000-000000000000"
    for path, item in doc["paths"].items():
        concrete = re.sub(r"{version}", "1", re.sub(r"{(id|name|key)}", placeholder, path))
        for method in item:
            response = admin.request(method.upper(), concrete)
            assert response.status_code != 405, (method, path)
            if response.status_code >= 400:
                assert response.json()["type"] != "HttpError", (method, path, response.text)


def validate(doc: dict[str, Any], method: str, path: str, response: httpx.Response) -> None:
    documented = doc["paths"][path][method]["responses"]
    assert str(response.status_code) in documented, (method, path, response.status_code)
    content = documented[str(response.status_code)].get("content", {})
    schema = content.get("application/json", {}).get("schema")
    assert schema is not None, (method, path)
    assert problems(response.json(), schema, doc) == [], (method, path, response.text)


def test_real_responses_match_their_schemas(
    doc: dict[str, Any], admin: httpx.Client, operator: httpx.Client
) -> None:
    source = processes.xml(processes.straight("documented")).encode()
    deployed = admin.post("/deployments", files={"files": ("d.bpmn", source)})
    validate(doc, "post", "/deployments", deployed)
    definition_id = deployed.json()["definitions"][0]["id"]
    validate(doc, "get", "/definitions", admin.get("/definitions"))
    validate(doc, "get", "/definitions/{id}", admin.get(f"/definitions/{definition_id}"))

    started = operator.post("/definitions/key/review/start", json={"variables": {"a": [1]}})
    validate(doc, "post", "/definitions/key/{key}/start", started)
    iid = started.json()["id"]
    validate(doc, "get", "/instances", operator.get("/instances", params={"limit": 1}))
    validate(doc, "get", "/instances/{id}", operator.get(f"/instances/{iid}"))
    validate(doc, "get", "/instances/{id}/tokens", operator.get(f"/instances/{iid}/tokens"))
    validate(doc, "get", "/instances/{id}/history", operator.get(f"/instances/{iid}/history"))
    validate(doc, "get", "/instances/{id}/variables", operator.get(f"/instances/{iid}/variables"))
    task = open_task(operator, iid)
    validate(doc, "get", "/user-tasks", operator.get("/user-tasks"))
    validate(doc, "get", "/user-tasks/{id}", operator.get(f"/user-tasks/{task['id']}"))
    completed = operator.post(f"/user-tasks/{task['id']}/complete")
    validate(doc, "post", "/user-tasks/{id}/complete", completed)
    twice = operator.post(f"/user-tasks/{task['id']}/complete")
    validate(doc, "post", "/user-tasks/{id}/complete", twice)
    assert twice.status_code == 409

    start(operator, "external")
    locked = operator.post(
        "/external-tasks/fetch-and-lock",
        json={"worker_id": "doc", "topics": [{"topic": "work", "lock_duration_ms": 5000}]},
    )
    validate(doc, "post", "/external-tasks/fetch-and-lock", locked)
    tid = locked.json()["items"][0]["id"]
    validate(doc, "get", "/external-tasks", operator.get("/external-tasks"))
    failed = operator.post(
        f"/external-tasks/{tid}/failure", json={"worker_id": "doc", "error_message": "x"}
    )
    validate(doc, "post", "/external-tasks/{id}/failure", failed)
    validate(doc, "get", "/incidents", operator.get("/incidents"))
    incident = operator.get("/incidents").json()["items"][0]
    validate(doc, "get", "/incidents/{id}", operator.get(f"/incidents/{incident['id']}"))
    retried = operator.post(f"/incidents/{incident['id']}/retry")
    validate(doc, "post", "/incidents/{id}/retry", retried)
    (again,) = fetch(operator, "doc")
    validate(doc, "get", "/external-tasks/{id}", operator.get(f"/external-tasks/{again['id']}"))

    timer = start(operator, "timer")
    validate(doc, "get", "/jobs", operator.get("/jobs"))
    (job,) = operator.get("/jobs", params={"instance_id": timer["id"]}).json()["items"]
    validate(doc, "get", "/jobs/{id}", operator.get(f"/jobs/{job['id']}"))
    validate(doc, "post", "/jobs/{id}/execute", operator.post(f"/jobs/{job['id']}/execute"))

    message = operator.post("/signals", json={"signal_name": "nobody"})
    validate(doc, "post", "/signals", message)
    validate(doc, "post", "/users", admin.post("/users", json={"name": "u", "role": "viewer"}))
    validate(doc, "post", "/tokens", admin.post("/tokens", json={"name": "t", "role": "admin"}))
    validate(doc, "get", "/tokens", admin.get("/tokens"))
    validate(doc, "get", "/instances", operator.get("/instances", params={"limit": "x"}))
    validate(doc, "get", "/instances/{id}", operator.get("/instances/nope"))


def test_the_checker_finds_problems(doc: dict[str, Any]) -> None:
    instance = {"$ref": "#/components/schemas/Instance"}
    assert problems({"id": "x"}, instance, doc)
    assert problems([], instance, doc) == ["$: list is not ['object']"]
    good = {
        "id": "1",
        "definition_id": "d",
        "definition_key": "k",
        "business_key": None,
        "state": "Active",
        "started_at": "2025-01-01T00:00:00Z",
        "ended_at": None,
    }
    assert problems(good, instance, doc) == []
    assert problems({**good, "business_key": 3}, instance, doc) == [
        "$.business_key: int is not ['string', 'null']"
    ]
