"""Fuzzing /engine-rest: every Camunda route with hostile path segments, query parameters and
bodies (the fields the endpoints read, with wrong types and extreme values), as every role, with
no credentials and with wrong ones. No answer is a server error, and a refused request (4xx)
changes no table."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from starlette.routing import Mount, Route

from app.camunda import ALL_METHODS, ENDPOINTS, routes
from app.camunda.external_tasks import MAX_ASYNC_RESPONSE_MS
from tests.api import processes
from tests.fuzz_support import (
    DEFAULT,
    RAW_JSON,
    ROLES,
    SLOW,
    FuzzApp,
    Seeded,
    Tables,
    basic,
    changed,
    describe,
    dumps,
    fuzz_app,
    hostile_json,
    hostile_number,
    hostile_text,
)

ROUTES: list[tuple[str, str]] = sorted((endpoint.method, endpoint.path) for endpoint in ENDPOINTS)
# Paths no endpoint serves, answered by the catch-all.
UNSERVED = [("GET", "/nope"), ("POST", "/process-definition/key/x/restart"), ("PATCH", "/task")]
_PLACEHOLDER = re.compile(r"{(\w+)}")

GOOD_CREDENTIALS = (
    *(f"basic:{role}" for role in ROLES),
    *(f"bearer:{role}" for role in ROLES),
)
BAD_CREDENTIALS = (
    "none",
    "wrong-password",
    "unknown-user",
    "malformed",
    "not-utf8",
    "empty-basic",
)
# Mostly a role's: wrong credentials all stop at the same door.
CREDENTIALS = st.one_of(*[st.sampled_from(GOOD_CREDENTIALS)] * 3, st.sampled_from(BAD_CREDENTIALS))

QUERY_NAMES = [
    "activityInstanceIdIn",
    "variableScopeIdIn",
    "variableName",
    "variableNameLike",
    "firstResult",
    "maxResults",
    "sortBy",
    "sortOrder",
    "processDefinitionKey",
    "processDefinitionKeyIn",
    "processDefinitionId",
    "processDefinitionIdIn",
    "processInstanceId",
    "processInstanceIds",
    "processInstanceIdIn",
    "businessKey",
    "businessKeyLike",
    "processInstanceBusinessKey",
    "key",
    "keyIn",
    "keyLike",
    "name",
    "nameLike",
    "version",
    "latestVersion",
    "active",
    "suspended",
    "withIncident",
    "incidentMessage",
    "incidentMessageLike",
    "incidentType",
    "variables",
    "processVariables",
    "assignee",
    "assigneeLike",
    "candidateUser",
    "candidateGroup",
    "candidateGroups",
    "withCandidateGroups",
    "withoutCandidateGroups",
    "withCandidateUsers",
    "withoutCandidateUsers",
    "involvedUser",
    "includeAssignedTasks",
    "unassigned",
    "assigned",
    "taskDefinitionKey",
    "taskDefinitionKeyIn",
    "topicName",
    "workerId",
    "locked",
    "notLocked",
    "withRetriesLeft",
    "noRetriesLeft",
    "externalTaskId",
    "externalTaskIdIn",
    "jobId",
    "jobIds",
    "logId",
    "creationLog",
    "failureLog",
    "jobPriorityLowerThanOrEquals",
    "priorityHigherThanOrEquals",
    "failedActivityIdIn",
    "excludeTaskDetails",
    "variableTypeIn",
    "occurredAfter",
    "dueDates",
    "timers",
    "messages",
    "withException",
    "executable",
    "priority",
    "minPriority",
    "maxPriority",
    "priorityHigherThanOrEquals",
    "priorityLowerThanOrEquals",
    "startedAfter",
    "startedBefore",
    "finishedAfter",
    "finishedBefore",
    "lockExpirationAfter",
    "lockExpirationBefore",
    "finished",
    "unfinished",
    "canceled",
    "completeScope",
    "activityId",
    "activityIdIn",
    "activityType",
    "activityInstanceId",
    "executionId",
    "deploymentId",
    "resourceName",
    "versionTag",
    "deserializeValues",
    "variableNames",
    "superProcessInstance",
    "subProcessInstance",
    "superProcessInstanceId",
    "subProcessInstanceId",
    "rootProcessInstanceId",
    "rootProcessInstances",
    "leafProcessInstances",
    "withIncidents",
    "completed",
    "externallyTerminated",
    "open",
    "resolved",
    "deleted",
    "variableTypeIn",
    "createTimeBefore",
    "endTimeAfter",
]
PLAUSIBLE_QUERY = [
    "asc",
    "desc",
    "true",
    "false",
    "1",
    "10",
    "id",
    "instanceId",
    "definitionKey",
    "priority",
    "work",
    "review",
    "fuzz-review",
    "fuzz-%",
    "%",
    "_",
    "2025-01-31T12:00:00.000+0000",
    "2025-01-31T12:00:00.000 0000",
    "gt_2025-01-31T12:00:00.000+0000",
    "lt_2999-01-01T00:00:00.000+0000,gt_x",
    "amount_gt_10",
    "amount_eq_30",
    "text_like_%x%",
    "nested_eq_null",
    "amount_gteq_1e999",
    "amount_lt_NaN",
    "a_b_c_d",
    "_eq_",
    "text_neq_",
]
VARIABLE_TYPES = [
    "String",
    "Integer",
    "Long",
    "Short",
    "Double",
    "Boolean",
    "Date",
    "Json",
    "Object",
    "Null",
    "Bytes",
    "File",
    "Xml",
    "string",
    "",
]


def typed_values() -> st.SearchStrategy[Any]:
    """Camunda's `{name: {"value", "type", "valueInfo"}}`, right, wrong or absurd."""
    value = st.fixed_dictionaries(
        {},
        optional={
            "value": hostile_json(),
            "type": st.one_of(st.sampled_from(VARIABLE_TYPES), hostile_text(), hostile_json()),
            "valueInfo": st.one_of(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "serializationDataFormat": st.sampled_from(
                            ["application/json", "application/x-java-serialized-object", "x"]
                        ),
                        "objectTypeName": hostile_text(),
                    },
                ),
                hostile_json(),
            ),
        },
    )
    return st.one_of(
        st.dictionaries(hostile_text(), st.one_of(value, hostile_json()), max_size=3),
        hostile_json(),
    )


def topics() -> st.SearchStrategy[Any]:
    topic = st.fixed_dictionaries(
        {},
        optional={
            "topicName": st.one_of(st.sampled_from(["work", "nothing"]), hostile_text()),
            "lockDuration": st.one_of(hostile_number(), hostile_text()),
            "variables": st.one_of(st.lists(hostile_text(), max_size=3), hostile_json()),
            "tenantIdIn": st.one_of(st.just(["t"]), hostile_json()),
            "businessKey": hostile_text(),
            "processDefinitionKey": hostile_text(),
            "localVariables": st.booleans(),
        },
    )
    return st.one_of(st.lists(topic, max_size=3), hostile_json())


def integers() -> st.SearchStrategy[Any]:
    return st.one_of(hostile_number(), hostile_text(), st.none())


def wait_ms() -> st.SearchStrategy[Any]:
    """asyncResponseTimeout: valid waits short enough to cost nothing, and invalid ones."""
    return st.one_of(
        st.integers(-5, 20),
        st.sampled_from([MAX_ASYNC_RESPONSE_MS + 1, 2**70, 1e999, -1e999, 1.5, "10", None]),
        hostile_text(),
    )


def either(
    plausible: st.SearchStrategy[Any], hostile: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """Mostly a value the endpoint accepts, so that requests get past their first check."""
    return st.one_of(plausible, plausible, hostile)


TYPED = st.sampled_from(
    [
        {},
        {"amount": {"value": 5, "type": "Integer"}},
        {"text": {"value": "y", "type": "String"}, "flag": {"value": True}},
        {"doc": {"value": '{"a": 1}', "type": "Json"}},
        {"when": {"value": "2025-01-31T12:00:00.000+0000", "type": "Date"}},
    ]
)
FLAG = either(st.booleans(), hostile_json())
TEXT = either(
    st.sampled_from(["x", "fuzz-review", "u1"]), st.one_of(hostile_text(), hostile_json())
)
SMALL = either(st.integers(0, 3), integers())

BODY_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "variables": either(TYPED, typed_values()),
    "localVariables": either(TYPED, typed_values()),
    "processVariables": either(TYPED, typed_values()),
    "processVariablesLocal": either(TYPED, typed_values()),
    "businessKey": TEXT,
    "workerId": either(st.sampled_from(["fuzz-worker", "w"]), hostile_text()),
    "topics": either(
        st.just([{"topicName": "work", "lockDuration": 60_000}]),
        topics(),
    ),
    "maxTasks": SMALL,
    "usePriority": FLAG,
    "asyncResponseTimeout": wait_ms(),
    "retries": SMALL,
    "newDuration": either(st.sampled_from([1000, 60_000]), integers()),
    "retryTimeout": either(st.sampled_from([0, 1000]), integers()),
    "errorMessage": TEXT,
    "errorDetails": TEXT,
    "errorCode": either(st.sampled_from(["E1", "failed"]), hostile_text()),
    "userId": TEXT,
    "messageName": either(st.sampled_from(["paid", "order-paid"]), hostile_text()),
    "name": either(st.sampled_from(["ping", "go"]), st.one_of(hostile_text(), hostile_json())),
    "processInstanceId": TEXT,
    "executionId": TEXT,
    "correlationKeys": either(TYPED, typed_values()),
    "localCorrelationKeys": typed_values(),
    "tenantId": st.one_of(hostile_text(), hostile_json()),
    "all": FLAG,
    "resultEnabled": FLAG,
    "variablesInResultEnabled": FLAG,
    "withVariablesInReturn": FLAG,
    "startInstructions": hostile_json(),
    "skipCustomListeners": FLAG,
    "modifications": either(TYPED, typed_values()),
    "deletions": either(st.sampled_from([[], ["amount"], ["text", "x"]]), hostile_json()),
    "value": either(st.sampled_from([1, "y", True]), hostile_json()),
    "type": either(st.sampled_from(["String", "Integer", "Json"]), hostile_text()),
    "instructions": either(
        st.sampled_from(
            [
                [{"type": "cancel", "activityId": "review"}],
                [{"type": "startBeforeActivity", "activityId": "review", "variables": {}}],
                [{"type": "startTransition", "transitionId": "x"}],
            ]
        ),
        hostile_json(),
    ),
    "annotation": TEXT,
    "processInstanceQuery": either(st.just({}), hostile_json()),
    "processDefinitionId": TEXT,
    "migrationPlan": either(
        st.just({"sourceProcessDefinitionId": "x", "targetProcessDefinitionId": "y"}),
        hostile_json(),
    ),
}


def json_bodies() -> st.SearchStrategy[bytes]:
    fields = st.fixed_dictionaries({}, optional=BODY_FIELDS).map(dumps)
    return st.one_of(fields, fields, fields, st.sampled_from(RAW_JSON), hostile_json().map(dumps))


BPMN = processes.xml(processes.straight("fuzz-deployed")).encode()
BOMB = (
    b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
    b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><definitions>&b;</definitions>'
)
RESOURCES = [BPMN, BOMB, b"", b"<x/>", b"\x00\xff", b"<" * 5000, *RAW_JSON[:6]]


def deployment_form() -> st.SearchStrategy[dict[str, Any]]:
    fields = st.fixed_dictionaries(
        {},
        optional={
            name: st.one_of(st.sampled_from(["true", "false"]), hostile_text())
            for name in (
                "deployment-name",
                "deployment-source",
                "enable-duplicate-filtering",
                "deploy-changed-only",
                "tenant-id",
            )
        },
    )
    files = st.lists(
        st.tuples(
            st.one_of(st.sampled_from(["p.bpmn", "p.bpmn20.xml", "p.txt", ""]), hostile_text()),
            st.sampled_from(RESOURCES),
        ),
        max_size=2,
    )
    return st.fixed_dictionaries({"data": fields, "files": files})


def _quote(value: str) -> str:
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


ID_KINDS = {
    "/process-definition/": "definition_ids",
    "/process-instance/": "instance_ids",
    "/history/process-instance/": "instance_ids",
    "/task/": "user_task_ids",
    "/external-task/": "external_task_ids",
    "/incident/": "incident_ids",
    "/job/": "job_ids",
    "/execution/": "instance_ids",  # an instance's own execution
}


def path_value(seeded: Seeded, path: str, name: str) -> st.SearchStrategy[str]:
    kind = next((kind for prefix, kind in ID_KINDS.items() if path.startswith(prefix)), "")
    known: list[str] = {
        "id": getattr(seeded, kind, None) or seeded.all_ids(),
        "key": seeded.definition_keys,
        "name": seeded.variable_names,
    }.get(name) or ["x"]
    return either(
        st.sampled_from(known), st.one_of(st.sampled_from(seeded.all_ids()), hostile_text())
    )


def query_pairs(seeded: Seeded) -> st.SearchStrategy[list[tuple[str, str]]]:
    plausible = st.tuples(
        st.sampled_from(QUERY_NAMES),
        st.one_of(st.sampled_from(PLAUSIBLE_QUERY), st.sampled_from(seeded.all_ids())),
    )
    hostile = st.tuples(
        st.one_of(st.sampled_from(QUERY_NAMES), hostile_text()),
        st.one_of(st.sampled_from(PLAUSIBLE_QUERY), hostile_text()),
    )
    return st.one_of(
        st.just([]),
        st.lists(plausible, max_size=4),
        st.lists(st.one_of(plausible, hostile), min_size=1, max_size=5),
    )


@st.composite
def requests(
    draw: st.DrawFn, seeded: Seeded, route: tuple[str, str] | None = None
) -> dict[str, Any]:
    method, path = route or draw(st.sampled_from(ROUTES + UNSERVED))
    url = _PLACEHOLDER.sub(lambda m: _quote(draw(path_value(seeded, path, m.group(1)))), path)
    query = draw(query_pairs(seeded))
    if query:
        url += "?" + "&".join(f"{_quote(k)}={_quote(v)}" for k, v in query)
    request: dict[str, Any] = {"method": method, "url": "/engine-rest" + url}
    if path == "/deployment/create":
        request["form"] = draw(deployment_form())
    elif method in ("POST", "PUT", "DELETE"):
        request["body"] = draw(json_bodies())
        request["content_type"] = draw(
            st.sampled_from(["application/json"] * 4 + ["text/plain", "application/x", ""])
        )
    request["which"] = draw(CREDENTIALS)
    return request


# Camunda answers some refusals with 500, and so does Interlock where Camunda's clients expect it
# (docs/camunda-compat.md, "Errors"): a task that does not exist or is claimed, an engine
# refusal. Those are Camunda's JSON bodies naming the refusal; a fault of ours is "internal
# error" (app/camunda/errors.py) or no JSON at all.
CAMUNDA_500_TYPES = {
    "NullValueException",
    "TaskAlreadyClaimedException",
    "RestException",
    "ProcessEngineException",
}


def camunda_refusal(response: Any) -> bool:
    if response.status_code != 500:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    return (
        isinstance(body, dict)
        and body.get("type") in CAMUNDA_500_TYPES
        and isinstance(body.get("message"), str)
        and not body["message"].startswith("internal error")
    )


def credentials(fuzzed: FuzzApp, which: str) -> dict[str, str]:
    kind, _, role = which.partition(":")
    if kind == "basic":
        return basic(role)
    if kind == "bearer":
        return fuzzed.bearer(role)
    return {
        "none": {},
        "wrong-password": basic("admin", "wrong"),
        "unknown-user": basic("nobody"),
        "malformed": {"Authorization": "Basic %%%"},
        "not-utf8": {"Authorization": "Basic /w=="},
        "empty-basic": {"Authorization": "Basic "},
    }[which]


def send(fuzzed: FuzzApp, tables: Tables, request: dict[str, Any]) -> None:
    headers = credentials(fuzzed, request["which"])
    options: dict[str, Any] = {}
    if "form" in request:
        form = request["form"]
        options["data"] = {k: v.encode("utf-8", "surrogatepass") for k, v in form["data"].items()}
        options["files"] = [
            (f"data{n}", (name.encode("utf-8", "surrogatepass").decode("latin-1"), io.BytesIO(b)))
            for n, (name, b) in enumerate(form["files"])
        ]
        shown: Any = form
    elif "body" in request:
        headers["Content-Type"] = request["content_type"]
        options["content"] = request["body"]
        shown = request["body"]
    else:
        shown = None
    before = tables.snapshot()
    response = fuzzed.client.request(request["method"], request["url"], headers=headers, **options)
    what = describe(request["method"], request["url"], headers, shown, response)
    status = response.status_code
    event(f"{request['method']} {status}")
    assert status < 500 or camunda_refusal(response), what
    if 400 <= status < 500 or (status == 500 and not request["url"].endswith("/execute")):
        assert changed(before, tables.snapshot()) == [], f"a refused request wrote:\n{what}"


@pytest.fixture(scope="module")
def fuzzed(
    pg_server: str, admin_connection: psycopg.Connection[Any], template_database: str
) -> Iterator[FuzzApp]:
    with fuzz_app(pg_server, admin_connection, template_database) as running:
        yield running


@pytest.fixture(scope="module")
def tables(fuzzed: FuzzApp) -> Iterator[Tables]:
    watched = Tables(fuzzed.database_url)
    yield watched
    watched.close()


# CPU-bound: under a busy machine it runs past the suite's default timeout, which guards
# against hangs, not against slowness.
@pytest.mark.timeout(1200)
def test_every_route_refuses_hostile_input_cleanly(fuzzed: FuzzApp, tables: Tables) -> None:
    @settings(DEFAULT, max_examples=150)
    @given(request=requests(fuzzed.seeded))
    def run(request: dict[str, Any]) -> None:
        send(fuzzed, tables, request)

    run()


# CPU-bound: under a busy machine it runs past the suite's default timeout, which guards
# against hangs, not against slowness.
@pytest.mark.timeout(1200)
def test_each_route_once_with_hostile_input(
    fuzzed: FuzzApp, tables: Tables, subtests: pytest.Subtests
) -> None:
    """Every route gets examples of its own, not only those a random draw happens to pick."""
    for route in ROUTES:

        @settings(DEFAULT, max_examples=3)
        @given(request=requests(fuzzed.seeded, route))
        def run(request: dict[str, Any]) -> None:
            send(fuzzed, tables, request)

        for request in late_flag_examples(fuzzed.seeded, route):
            run = example(request=request)(run)
        with subtests.test(route=" ".join(route)):
            run()


def test_every_endpoint_is_mounted_in_order_before_the_catch_all() -> None:
    # First the named engine's prefix, which serves the same routes again.
    prefix, *plain = routes
    assert isinstance(prefix, Mount) and prefix.path == "/engine/{engine_name}"
    mounted = [
        (sorted(set(route.methods or ()) - {"HEAD"}), route.path)
        for route in plain
        if isinstance(route, Route)
    ]
    assert len(mounted) == len(plain) == len(ENDPOINTS) + 1
    assert mounted[:-1] == [([endpoint.method], endpoint.path) for endpoint in ENDPOINTS]
    assert mounted[-1] == (sorted(ALL_METHODS), "/{path:path}")
    assert len(set(ROUTES)) == len(ROUTES) == 282


# Options that only shape the answer; a wrong one must be refused before the request acts.
FLAGS = ("withVariablesInReturn", "resultEnabled", "variablesInResultEnabled", "usePriority")
VALID_BODY = {
    "workerId": "fuzz-worker",
    "topics": [{"topicName": "work", "lockDuration": 1000}],
    "messageName": "order-paid",
    "name": "go",
    "variables": {"amount": {"value": 5, "type": "Integer"}},
    "retries": 1,
    "newDuration": 1000,
    "errorCode": "E1",
    "errorMessage": "x",
    "userId": "u1",
}


def late_flag_examples(seeded: Seeded, route: tuple[str, str]) -> list[dict[str, Any]]:
    """A request that would succeed, but for one answer-shaping flag of the wrong type."""
    method, path = route
    if method not in ("POST", "PUT") or path == "/deployment/create":
        return []
    kind = next((kind for prefix, kind in ID_KINDS.items() if path.startswith(prefix)), "")
    known = {
        "id": (getattr(seeded, kind, None) or ["x"])[0],
        "key": "review",
        "name": "amount",
        "tenant_id": "tenant-a",
    }
    url = "/engine-rest" + _PLACEHOLDER.sub(lambda m: known[m.group(1)], path)
    wrong_values: tuple[list[str], str] = ([], "yes")
    return [
        {
            "method": method,
            "url": url,
            "body": dumps({**VALID_BODY, flag: wrong}),
            "content_type": "application/json",
            "which": "basic:admin",
        }
        for flag in FLAGS
        for wrong in wrong_values
    ]


@pytest.mark.slow
def test_every_route_at_length(fuzzed: FuzzApp, tables: Tables) -> None:
    @SLOW
    @given(request=requests(fuzzed.seeded))
    def run(request: dict[str, Any]) -> None:
        send(fuzzed, tables, request)

    run()
