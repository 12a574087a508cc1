"""Strict input: malformed JSON, numbers no column can hold, NUL characters and lone surrogates,
out-of-range integers and durations answer 400 naming the field, never 500, and write nothing."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from starlette.datastructures import QueryParams

from app.params import Query
from engine.builder import ProcessBuilder
from engine.core.settings import EngineSettings
from engine.errors import BadRequest
from engine.language.variables import typed
from engine.model import ProcessModel, TimerDefinition, TimerKind
from engine.store.instances import InstanceFilter
from tests.api import processes
from tests.api.helpers import start
from tests.server import LiveServer, live_server

JSON = {"content-type": "application/json"}


def bad_request(response: httpx.Response, field: str | None = None) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    assert body["type"] == "BadRequest", body
    if field is not None:
        assert body["detail"].get("field") == field, body
    return body


def count(client: httpx.Client, key: str) -> int:
    found = client.get("/instances", params={"definition_key": key, "limit": 500})
    assert found.status_code == 200, found.text
    return len(found.json()["items"])


def post_raw(client: httpx.Client, path: str, raw: str | bytes) -> httpx.Response:
    content = raw.encode() if isinstance(raw, str) else raw
    return client.post(path, content=content, headers=JSON)


START = "/definitions/key/review/start"


def test_malformed_json_bodies_are_400_and_start_nothing(operator: httpx.Client) -> None:
    before = count(operator, "review")
    deep = '{"variables": {"x": ' + "[" * 2000 + "]" * 2000 + "}}"
    assert "nested deeper than 64" in bad_request(post_raw(operator, START, deep))["message"]
    just_too_deep = '{"variables": {"x": ' + "[" * 64 + "]" * 64 + "}}"
    bad_request(post_raw(operator, START, just_too_deep), None)
    fine = '{"variables": {"x": ' + "[" * 60 + "]" * 60 + "}}"
    assert post_raw(operator, START, fine).status_code == 201

    digits = '{"variables": {"n": ' + "9" * 5000 + "}}"
    assert "5000 digits" in bad_request(post_raw(operator, START, digits), "variables.n")["message"]
    for constant in ("NaN", "Infinity", "-Infinity", "1e999", "-1e999"):
        untyped = '{"variables": {"amount": ' + constant + "}}"
        message = bad_request(post_raw(operator, START, untyped), "variables.amount")["message"]
        assert "finite" in message
        typed = '{"variables": {"amount": {"type": "double", "value": ' + constant + "}}}"
        bad_request(post_raw(operator, START, typed), "variables.amount.value")
    # A double given as text is checked as well.
    spelt = {"variables": {"amount": {"type": "double", "value": "NaN"}}}
    bad_request(operator.post(START, json=spelt), "variables.amount")
    assert count(operator, "review") == before + 1  # only the 60-deep list started


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('{"business_key": "a\\u0000b"}', "business_key"),
        ('{"business_key": "\\ud800"}', "business_key"),
        ('{"variables": {"note": "x\\u0000"}}', "variables.note"),
        ('{"variables": {"note": "\\udfff tail"}}', "variables.note"),
        ('{"variables": {"a\\u0000b": 1}}', "variables.a\\x00b"),
        ('{"variables": {"doc": {"type": "json", "value": {"k": ["\\u0000"]}}}}', None),
        ('{"variables": {"s": {"type": "string", "value": "\\ud83d"}}}', "variables.s.value"),
    ],
)
def test_nul_and_lone_surrogates_are_400(operator: httpx.Client, raw: str, field: str) -> None:
    body = bad_request(post_raw(operator, START, raw), field)
    assert "NUL" in body["message"] or "surrogate" in body["message"]


def test_a_surrogate_pair_is_an_ordinary_character(operator: httpx.Client) -> None:
    started = post_raw(operator, START, '{"business_key": "\\ud83d\\ude00"}')
    assert started.status_code == 201, started.text
    assert started.json()["business_key"] == "\U0001f600"


def test_typed_integers_are_range_checked(operator: httpx.Client) -> None:
    before = count(operator, "review")
    too_big = {"variables": {"n": {"type": "integer", "value": 2**31}}}
    assert "32-bit" in bad_request(operator.post(START, json=too_big), "variables.n")["message"]
    too_long = {"variables": {"n": {"type": "long", "value": 2**63}}}
    bad_request(operator.post(START, json=too_long), "variables.n")
    untyped = {"variables": {"n": 2**64}}
    bad_request(operator.post(START, json=untyped), "variables.n")
    huge = {"variables": {"n": {"type": "integer", "value": 2**70}}}
    bad_request(operator.post(START, json=huge), "variables.n.value")
    assert count(operator, "review") == before

    fits = {"variables": {"i": {"type": "integer", "value": 2**31 - 1}, "l": 2**63 - 1}}
    instance = start(operator, "review", **fits)
    shown = operator.get(f"/instances/{instance['id']}/variables").json()
    assert shown["i"] == {"type": "integer", "value": 2**31 - 1}
    assert shown["l"] == {"type": "long", "value": 2**63 - 1}


def test_variables_of_a_running_instance_are_checked_too(operator: httpx.Client) -> None:
    instance = start(operator, "review")
    path = f"/instances/{instance['id']}/variables"
    bad_request(post_raw(operator, path, '{"variables": {"x": NaN}}'), "variables.x")
    bad_request(post_raw(operator, path, '{"variables": {"x": "\\u0000"}}'), "variables.x")
    assert operator.get(path).json() == {}


def names(response: httpx.Response, parameter: str) -> None:
    """A 400 naming the query parameter (a guard in front of the routes may answer first)."""
    detail = bad_request(response)["detail"]
    assert parameter in (detail.get("field"), detail.get("parameter")), detail


def query_of(query: bytes) -> Query:
    return Query(QueryParams(query))


def test_query_parameter_readers_refuse_nul_on_their_own() -> None:
    query = query_of(b"business_key=a%00&limit=1%00&var=a%00%3A1&ok=fine")
    readers: list[tuple[str, Callable[[str], object]]] = [
        ("business_key", query.text),
        ("limit", query.uuid),
        ("limit", lambda name: query.date(name, offset_required=True)),
        ("limit", query.texts),
        ("limit", lambda name: query.integer(name, 1, minimum=0)),
    ]
    for name, read in readers:
        with pytest.raises(BadRequest, match="NUL") as raised:
            read(name)
        assert raised.value.detail == {"field": name}
    with pytest.raises(BadRequest, match="NUL"):
        query.texts("var")
    assert query.text("ok") == "fine"
    with pytest.raises(BadRequest, match="between 0 and 2147483647"):
        query_of(b"n=99999999999").integer("n", 0, minimum=0)
    with pytest.raises(BadRequest, match="between 0 and 2147483647"):
        query_of(b"n=" + b"9" * 5000).integer("n", 0, minimum=0)


def test_query_parameters_refuse_nul_and_out_of_range_integers(viewer: httpx.Client) -> None:
    names(viewer.get("/instances", params={"business_key": "a\x00"}), "business_key")
    names(viewer.get("/user-tasks", params={"assignee": "\x00"}), "assignee")
    names(viewer.get("/incidents", params={"node_id": "n\x00"}), "node_id")
    version = {"definition_key": "review", "version": "99999999999"}
    bad_request(viewer.get("/instances", params=version), "version")
    bad_request(viewer.get("/instances", params={"limit": "9" * 5000}), "limit")
    bad_request(viewer.get("/instances", params={"limit": 501}), "limit")


def test_query_parameters_of_each_type_name_themselves(viewer: httpx.Client) -> None:
    flag = bad_request(viewer.get("/instances", params={"has_incident": "maybe"}), "has_incident")
    assert flag["message"] == "query parameter 'has_incident' must be true or false"
    assert viewer.get("/instances", params={"has_incident": "1"}).status_code == 200
    bad_request(viewer.get("/incidents", params={"instance_id": "nope"}), "instance_id")
    bad_request(viewer.get("/jobs", params={"with_retries_left": "2"}), "with_retries_left")
    naive = {"started_after": "2025-01-31T12:00:00"}
    assert "with an offset" in bad_request(viewer.get("/instances", params=naive))["message"]
    aware = {"started_after": "2025-01-31T12:00:00Z"}
    assert viewer.get("/instances", params=aware).status_code == 200
    bad_request(viewer.get("/instances", params={"limit": "ten"}), "limit")
    bad_request(viewer.get("/instances", params={"version": "-1"}), "version")


@pytest.mark.parametrize(
    "value", ["amount:NaN", "amount:Infinity", "amount:-Infinity", "amount:1e999", "a\x00:1"]
)
def test_variable_filters_refuse_what_no_variable_holds(viewer: httpx.Client, value: str) -> None:
    names(viewer.get("/instances", params={"var": value}), "var")


def test_variable_filters_still_read_json_and_text(operator: httpx.Client) -> None:
    instance = start(operator, "review", variables={"amount": 1000, "region": "north\\"})
    for value in ("amount:1000", "amount:1e3", "region:north\\"):
        found = operator.get("/instances", params={"var": value, "definition_key": "review"})
        assert found.status_code == 200, found.text
        assert instance["id"] in [i["id"] for i in found.json()["items"]], value
    deep = "doc:" + "[" * 2000 + "]" * 2000
    bad_request(operator.get("/instances", params={"var": deep}), "var")


def test_path_parameters_with_nul_are_not_500(operator: httpx.Client) -> None:
    response = operator.post("/definitions/key/re%00view/start", json={})
    assert response.status_code in (400, 404), response.text


FETCH = "/external-tasks/fetch-and-lock"


def fetch_body(**overrides: Any) -> dict[str, Any]:
    topic = {"topic": "work", "lock_duration_ms": 60_000, **overrides.pop("topic", {})}
    return {"worker_id": "validator", "topics": [topic], **overrides}


def test_external_task_durations_and_counts_are_bounded(operator: httpx.Client) -> None:
    day = 86_400_000
    long_lock = fetch_body(topic={"lock_duration_ms": 10**14})
    bad_request(operator.post(FETCH, json=long_lock), "topics[0].lock_duration_ms")
    bad_request(operator.post(FETCH, json=fetch_body(topic={"lock_duration_ms": day + 1})))
    bad_request(operator.post(FETCH, json=fetch_body(max_tasks=-1)), "max_tasks")
    bad_request(operator.post(FETCH, json=fetch_body(max_tasks=1001)), "max_tasks")
    at_bounds = fetch_body(max_tasks=1000, topic={"lock_duration_ms": day, "topic": "none"})
    assert operator.post(FETCH, json=at_bounds).status_code == 200

    task = f"/external-tasks/{uuid.uuid4()}"
    extend = {"worker_id": "w", "new_duration_ms": 10**14}
    bad_request(operator.post(f"{task}/extend-lock", json=extend), "new_duration_ms")
    failure = {"worker_id": "w", "error_message": "x", "retries": 1, "retry_timeout_ms": 10**14}
    bad_request(operator.post(f"{task}/failure", json=failure), "retry_timeout_ms")
    bad_request(operator.post(f"{task}/retries", json={"retries": 10**12}), "retries")
    bad_request(operator.post(f"/jobs/{uuid.uuid4()}/retries", json={"retries": 2**31}), "retries")


def timer_from_variable(key: str, kind: TimerKind) -> ProcessModel:
    """start -> a user task with a non-interrupting timer of `kind` whose text is `${when}`."""
    timer = TimerDefinition(kind=kind, text="${when}")
    return (
        ProcessBuilder(key)
        .start_event("start")
        .user_task("wait")
        .boundary_event("tick", "wait", cancel_activity=False, timer=timer)
        .end_event("end")
        .end_event("ticked")
        .chain("start", "wait", "end")
        .chain("tick", "ticked")
        .build()
    )


def test_a_timer_expression_that_gives_a_too_fast_cycle_is_refused(
    api: LiveServer, operator: httpx.Client
) -> None:
    api.engine.deploy(
        timer_from_variable("fast-cycle", "cycle"), timer_from_variable("long-wait", "duration")
    )
    fast = {"variables": {"when": "R/PT0.000001S"}}
    response = operator.post("/definitions/key/fast-cycle/start", json=fast)
    assert response.status_code == 400, response.text
    assert "at least PT1S" in response.json()["message"]
    slow = {"variables": {"when": "P101Y"}}
    response = operator.post("/definitions/key/long-wait/start", json=slow)
    assert response.status_code == 400, response.text
    assert "100 years" in response.json()["message"]
    assert count(operator, "fast-cycle") == count(operator, "long-wait") == 0
    ok = {"variables": {"when": "R/PT1S"}}
    assert operator.post("/definitions/key/fast-cycle/start", json=ok).status_code == 201


def test_the_python_api_refuses_what_no_column_holds(api: LiveServer) -> None:
    engine = api.engine
    before = len(engine.list_instances(InstanceFilter(definition_key="review"), limit=500).items)
    for value in (float("nan"), float("inf"), 2**64, "a\x00", "\ud800", {"k": [float("-inf")]}):
        with pytest.raises(BadRequest):
            engine.start_latest("review", {"x": value})
    with pytest.raises(BadRequest, match="32-bit"):
        typed("integer", 2**31)
    with pytest.raises(BadRequest, match="finite"):
        typed("double", "Infinity")
    after = len(engine.list_instances(InstanceFilter(definition_key="review"), limit=500).items)
    assert after == before


def test_the_python_api_refuses_variable_names_no_column_can_hold(api: LiveServer) -> None:
    engine = api.engine
    handle = engine.start_latest("review")
    for name in ("a\x00b", "\ud800", ""):
        with pytest.raises(BadRequest):
            engine.start_latest("review", {name: 1})
        with pytest.raises(BadRequest):
            handle.set_variables({name: 1})
    assert handle.variables() == {}


def test_the_upload_limit_of_a_deployment_is_the_engines(database_url: str) -> None:
    small = processes.xml(processes.straight()).encode()
    large = processes.xml(processes.review()).encode()
    assert len(small) < len(large)
    settings = EngineSettings(max_bpmn_bytes=len(large) - 1)
    with live_server(database_url, run_jobs=False, settings=settings) as server:
        url = f"{server.url}/api/v1/deployments"
        files = {"files": ("review.bpmn", large, "application/xml")}
        refused = httpx.post(url, files=files, headers=server.bearer())
        assert refused.status_code == 400, refused.text
        assert "max_bpmn_bytes" in refused.json()["message"]
        assert server.engine.definitions() == []
        files = {"files": ("straight.bpmn", small, "application/xml")}
        made = httpx.post(url, files=files, headers=server.bearer())
        assert made.status_code == 201, made.text
