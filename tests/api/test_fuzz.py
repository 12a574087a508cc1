"""Fuzzing /api/v1 from its own OpenAPI document: every operation, valid and invalid inputs, with
each role's credentials, none, and wrong ones. No answer is a server error, every answer is one
the document lists with the documented body, and a refused request (4xx) changes no table.

Besides what schemathesis derives from the document, a second test sends hostile raw requests
(NUL, lone surrogates, huge numbers, NaN and Infinity literals, deep nesting) to every operation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
import schemathesis
from hypothesis import given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.specs.openapi.schemas import OpenApiSchema

from app.api import OPERATIONS
from app.api.external_tasks import MAX_TIMEOUT_MS
from tests.fuzz_support import (
    DEFAULT,
    RAW_JSON,
    ROLES,
    SLOW,
    FuzzApp,
    SharedLifespan,
    Tables,
    basic,
    changed,
    describe,
    dumps,
    fuzz_app,
    hostile_json,
    hostile_text,
)

if TYPE_CHECKING:
    from schemathesis.specs.openapi.schemas import OpenApiCase

# Credentials a request is sent with: a role's Bearer token, a role's HTTP Basic, none, or
# wrong ones of either kind.
CREDENTIALS = (
    *ROLES,
    *(f"basic:{role}" for role in ROLES),
    "none",
    "bad-bearer",
    "bad-basic",
    "garbage",
)
# Users and tokens the fuzzed requests may delete; the ones the requests authenticate with are
# never the target of a DELETE (deleting them is allowed, and would turn the rest into 401s).
SPARE = ("spare-1", "spare-2")
PROTECTED = {*ROLES, *(f"{role}-token" for role in ROLES)}


@pytest.fixture(scope="module")
def fuzzed(
    pg_server: str, admin_connection: psycopg.Connection[Any], template_database: str
) -> Iterator[FuzzApp]:
    with fuzz_app(pg_server, admin_connection, template_database) as running:
        for name in SPARE:
            running.client.post(
                "/api/v1/users",
                json={"name": name, "role": "viewer"},
                headers=running.bearer("admin"),
            )
            running.client.post(
                "/api/v1/tokens",
                json={"name": name, "role": "viewer"},
                headers=running.bearer("admin"),
            )
        yield running


@pytest.fixture(scope="module")
def tables(fuzzed: FuzzApp) -> Iterator[Tables]:
    watched = Tables(fuzzed.database_url)
    yield watched
    watched.close()


@pytest.fixture(scope="module")
def api_schema(fuzzed: FuzzApp) -> OpenApiSchema:
    schema = schemathesis.openapi.from_asgi(
        "/api/v1/openapi.json", SharedLifespan(fuzzed.app), headers=fuzzed.bearer("viewer")
    )
    schema.config.generation.update(
        modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], deterministic=True
    )
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture(autouse=True)
def node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    """schemathesis 4.32's fixture-loaded schema labels its subtests through the test item's
    `_nodeid`, which pytest 9.2 no longer has (it became `_id`): give it one to read."""
    request.node._nodeid = request.node.nodeid


def credentials(fuzzed: FuzzApp, which: str) -> dict[str, str]:
    if which in ROLES:
        return fuzzed.bearer(which)
    if which.startswith("basic:"):
        return basic(which.removeprefix("basic:"))
    return {
        "none": {},
        "bad-bearer": {"Authorization": "Bearer not-a-token"},
        "bad-basic": basic("admin", "wrong password"),
        "garbage": {"Authorization": "Basic %%%"},
    }[which]


ID_KINDS = {
    "/definitions/": "definition_ids",
    "/instances/": "instance_ids",
    "/user-tasks/": "user_task_ids",
    "/external-tasks/": "external_task_ids",
    "/incidents/": "incident_ids",
    "/jobs/": "job_ids",
}


def point_at_seeded(case: OpenApiCase, fuzzed: FuzzApp, pick: int | None) -> None:
    """Sometimes aim the path at something that exists; never at the credentials in use."""
    params = case.path_parameters
    seeded = fuzzed.seeded
    kind = next((kind for prefix, kind in ID_KINDS.items() if case.path.startswith(prefix)), "")
    choices: dict[str, list[Any]] = {
        "id": getattr(seeded, kind, None) or seeded.all_ids(),
        "key": seeded.definition_keys,
        "version": [1, 2],
        "name": list(SPARE),
    }
    for name in list(params):
        if pick is not None and choices.get(name):
            options = choices[name]
            params[name] = options[pick % len(options)]
        if name == "name" and params[name] in PROTECTED:
            params[name] = SPARE[0]


def bounded_long_poll(case: OpenApiCase) -> None:
    """A fetch that finds nothing waits up to `timeout_ms` for work; a valid wait is cut short so
    one example costs milliseconds (invalid values are kept: they must be refused)."""
    body = case.body
    if isinstance(body, dict):
        value = body.get("timeout_ms")
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_TIMEOUT_MS:
            body["timeout_ms"] = value % 20


def check_refusal_wrote_nothing(tables: Tables, before: Any, status: int, what: str) -> None:
    if 400 <= status < 500:
        assert changed(before, tables.snapshot()) == [], f"a refused request wrote:\n{what}"


CHECKS: list[Callable[..., Any]] = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_schema_conformance,
]


def fuzz_case(
    case: OpenApiCase, fuzzed: FuzzApp, tables: Tables, which: str, pick: int | None
) -> None:
    point_at_seeded(case, fuzzed, pick)
    bounded_long_poll(case)
    if case.headers:
        for name in [n for n in case.headers if n.lower() == "authorization"]:
            del case.headers[name]
    headers = credentials(fuzzed, which)
    before = tables.snapshot()
    response = case.call(headers=headers)
    status = response.status_code
    what = f"{case.method} {case.formatted_path} as {which}: {status} {response.text[:500]}"
    assert status < 500, what
    check_refusal_wrote_nothing(tables, before, status, what)
    case.validate_response(response, checks=CHECKS, headers=headers)


@settings(DEFAULT, max_examples=6)
@schema.parametrize()
@schema.given(which=st.sampled_from(CREDENTIALS), pick=st.none() | st.integers(0, 50))
# CPU-bound: under a busy machine it runs past the suite's default timeout, which guards
# against hangs, not against slowness.
@pytest.mark.timeout(1200)
def test_every_operation_from_the_document(
    case: OpenApiCase, which: str, pick: int | None, fuzzed: FuzzApp, tables: Tables
) -> None:
    fuzz_case(case, fuzzed, tables, which, pick)


@pytest.mark.slow
@SLOW
@schema.parametrize()
@schema.given(which=st.sampled_from(CREDENTIALS), pick=st.none() | st.integers(0, 50))
def test_every_operation_from_the_document_at_length(
    case: OpenApiCase, which: str, pick: int | None, fuzzed: FuzzApp, tables: Tables
) -> None:
    fuzz_case(case, fuzzed, tables, which, pick)


# -- hostile raw requests --------------------------------------------------------------------------

ROUTES = [(op.method, op.openapi_path, op) for op in OPERATIONS]
_PLACEHOLDER = re.compile(r"{(\w+)}")


@st.composite
def hostile_requests(draw: st.DrawFn, seeded_ids: list[str]) -> dict[str, Any]:
    method, path, op = draw(st.sampled_from(ROUTES))

    def fill(match: re.Match[str]) -> str:
        value = draw(st.one_of(st.sampled_from(seeded_ids), hostile_text()))
        return _quote(value)

    url = _PLACEHOLDER.sub(fill, "/api/v1" + path)
    names = [p.name for p in op.query] or ["limit"]
    query = draw(
        st.lists(
            st.tuples(st.sampled_from([*names, "x", "\x00", "\ud800"]), hostile_text()),
            max_size=4,
        )
    )
    if query:
        url += "?" + "&".join(f"{_quote(k)}={_quote(v)}" for k, v in query)
    body: bytes | None = None
    if method != "GET":
        body = draw(
            st.one_of(
                st.sampled_from(RAW_JSON),
                hostile_json().map(dumps),
                st.fixed_dictionaries({}, optional=_fields_for(op)).map(dumps),
            )
        )
    content_type = draw(
        st.sampled_from(
            ["application/json", "text/plain", "multipart/form-data", "application/json; x=\x7f"]
        )
    )
    return {
        "method": method,
        "url": url,
        "body": body,
        "content_type": content_type,
        "which": draw(st.sampled_from(CREDENTIALS)),
        "idempotency": draw(st.none() | hostile_text()),
    }


def _fields_for(op: Any) -> dict[str, st.SearchStrategy[Any]]:
    """The documented body fields of `op`, each with a hostile value."""
    schema: Any = op.body or {}
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    return {name: hostile_json() for name in properties}


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def send_hostile(fuzzed: FuzzApp, tables: Tables, request: dict[str, Any]) -> None:
    headers: dict[str, Any] = {
        "Content-Type": request["content_type"],
        **credentials(fuzzed, request["which"]),
    }
    if request["idempotency"] is not None:
        # Raw bytes: a header carries whatever octets a client puts there.
        headers["Idempotency-Key"] = request["idempotency"].encode("utf-8", "surrogatepass")
    before = tables.snapshot()
    response = fuzzed.client.request(
        request["method"], request["url"], content=request["body"], headers=headers
    )
    what = describe(request["method"], request["url"], headers, request["body"], response)
    assert response.status_code < 500, what
    check_refusal_wrote_nothing(tables, before, response.status_code, what)


# CPU-bound: under a busy machine it runs past the suite's default timeout, which guards
# against hangs, not against slowness.
@pytest.mark.timeout(1200)
def test_hostile_raw_requests(fuzzed: FuzzApp, tables: Tables) -> None:
    @settings(DEFAULT, max_examples=250)
    @given(request=hostile_requests(fuzzed.seeded.all_ids()))
    def run(request: dict[str, Any]) -> None:
        send_hostile(fuzzed, tables, request)

    run()


@pytest.mark.slow
def test_hostile_raw_requests_at_length(fuzzed: FuzzApp, tables: Tables) -> None:
    @SLOW
    @given(request=hostile_requests(fuzzed.seeded.all_ids()))
    def run(request: dict[str, Any]) -> None:
        send_hostile(fuzzed, tables, request)

    run()


def test_the_snapshot_sees_a_write(fuzzed: FuzzApp, tables: Tables) -> None:
    """The comparison that proves refusals wrote nothing would see a write."""
    before = tables.snapshot()
    started = fuzzed.client.post(
        "/api/v1/definitions/key/straight/start", json={}, headers=fuzzed.bearer("operator")
    )
    assert started.status_code == 201, started.text
    assert changed(before, tables.snapshot())
