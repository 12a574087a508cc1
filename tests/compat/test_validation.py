"""Strict input on /engine-rest: malformed JSON, numbers and text no column can hold, `*Like`
patterns, paging and durations out of range answer Camunda's 400 InvalidRequestException (never
a 500), and write nothing."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from starlette.datastructures import QueryParams

from app.camunda.errors import translate
from app.camunda.http import Call
from app.params import ParameterError
from tests.compat import processes
from tests.compat.conftest import deploy, start

JSON = {"content-type": "application/json"}
START = "/process-definition/key/approval/start"


def invalid(response: httpx.Response, *words: str) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    assert body["type"] == "InvalidRequestException", body
    for word in words:
        assert word in body["message"], body
    return body


def post_raw(client: httpx.Client, path: str, raw: str) -> httpx.Response:
    return client.post(path, content=raw.encode(), headers=JSON)


def instances(client: httpx.Client) -> int:
    found = client.get("/process-instance/count", params={"processDefinitionKey": "approval"})
    assert found.status_code == 200, found.text
    count: int = found.json()["count"]
    return count


def test_malformed_bodies_and_values_are_invalid_requests(rest: httpx.Client) -> None:
    deploy(rest, ("approval.bpmn", processes.approval()))
    deep = '{"variables": {"x": {"value": ' + "[" * 2000 + "]" * 2000 + ', "type": "Json"}}}'
    invalid(post_raw(rest, START, deep), "nested deeper than 64")
    digits = '{"variables": {"n": {"value": ' + "9" * 5000 + "}}}"
    invalid(post_raw(rest, START, digits), "variables.n.value", "5000 digits")
    for constant in ("NaN", "Infinity", "-Infinity", "1e999"):
        typed = '{"variables": {"d": {"value": ' + constant + ', "type": "Double"}}}'
        invalid(post_raw(rest, START, typed), "variables.d.value", "finite")
        untyped = '{"variables": {"d": {"value": ' + constant + "}}}"
        invalid(post_raw(rest, START, untyped), "variables.d.value")
    spelt = {"variables": {"d": {"value": "NaN", "type": "Double"}}}
    invalid(rest.post(START, json=spelt), "'d'", "finite")
    in_text = {"variables": {"doc": {"value": '{"a": NaN}', "type": "Json"}}}
    invalid(rest.post(START, json=in_text), "'doc'", "finite")
    deep_text = {"variables": {"doc": {"value": "[" * 2000 + "]" * 2000, "type": "Json"}}}
    invalid(rest.post(START, json=deep_text), "'doc'", "nested")

    for raw in (
        '{"businessKey": "a\\u0000b"}',
        '{"businessKey": "\\ud800"}',
        '{"variables": {"s": {"value": "x\\u0000", "type": "String"}}}',
        '{"variables": {"s\\udc00": {"value": "x"}}}',
    ):
        body = invalid(post_raw(rest, START, raw))
        assert "NUL" in body["message"] or "surrogate" in body["message"], body

    wide = {"variables": {"n": {"value": 2**31, "type": "Integer"}}}
    invalid(rest.post(START, json=wide), "'n'", "32-bit")
    huge = {"variables": {"n": {"value": 2**70, "type": "Integer"}}}
    invalid(rest.post(START, json=huge), "variables.n.value")
    too_long = {"variables": {"n": {"value": str(2**63), "type": "Long"}}}
    invalid(rest.post(START, json=too_long), "'n'", "64-bit")
    untyped_body = {"variables": {"n": {"value": 2**64}}}
    invalid(rest.post(START, json=untyped_body), "'n'")
    assert instances(rest) == 0

    fits = {"i": {"value": 2**31 - 1, "type": "Integer"}, "l": {"value": 2**31}}
    started = start(rest, "approval", fits, withVariablesInReturn=True)
    assert started["variables"]["i"]["type"] == "Integer"
    assert started["variables"]["l"] == {"type": "Long", "value": 2**31, "valueInfo": {}}


def test_like_filters_take_camunda_wildcards_and_never_fail(rest: httpx.Client) -> None:
    deploy(rest, ("approval.bpmn", processes.approval()))
    keys = ["50%", "50 percent", "a\\b", "a_c", "trail\\"]
    ids = {key: start(rest, "approval", businessKey=key)["id"] for key in keys}

    def matching(pattern: str) -> set[str]:
        found = rest.get("/process-instance", params={"businessKeyLike": pattern})
        assert found.status_code == 200, found.text
        by_id = {value: key for key, value in ids.items()}
        return {by_id[i["id"]] for i in found.json()}

    assert matching("50%") == {"50%", "50 percent"}
    assert matching("50\\%") == {"50%"}
    assert matching("a_c") == {"a_c"}
    assert matching("a_%") == {"a\\b", "a_c"}
    assert matching("a\\_c") == {"a_c"}
    assert matching("a\\b") == {"a\\b"}
    assert matching("a\\\\b") == {"a\\b"}
    assert matching("trail\\") == {"trail\\"}
    assert matching("\\") == set()
    assert matching("%\\") == {"trail\\"}

    for path, name in (
        ("/task", "nameLike"),
        ("/task", "assigneeLike"),
        ("/incident", "incidentMessageLike"),
        ("/process-definition", "nameLike"),
        ("/process-definition", "keyLike"),
    ):
        for pattern in ("\\", "%\\", "[", "\\%\\_\\\\\\"):
            response = rest.get(path, params={name: pattern})
            assert response.status_code == 200, (path, name, pattern, response.text)
    tasks = rest.get("/task", params={"nameLike": "Approve%"}).json()
    assert len(tasks) == len(keys)

    variable = rest.get("/process-instance", params={"variables": "x_like_\\"})
    assert variable.status_code == 200 and variable.json() == []


def test_paging_and_integer_parameters_are_range_checked(rest: httpx.Client) -> None:
    for name in ("firstResult", "maxResults"):
        for value in ("99999999999999999999999", "2147483648", "9" * 5000):
            for path in ("/process-instance", "/task", "/job", "/incident", "/external-task"):
                invalid(rest.get(path, params={name: value}), name)
    assert rest.get("/task", params={"firstResult": 2**31 - 1}).json() == []
    invalid(rest.get("/task", params={"priority": "99999999999"}), "priority")
    high = {"priorityHigherThanOrEquals": str(2**63)}
    invalid(rest.get("/external-task", params=high), "priorityHigherThanOrEquals")
    fine = {"priorityHigherThanOrEquals": str(2**63 - 1)}
    assert rest.get("/external-task", params=fine).json() == []


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_variable_filters_with_non_finite_numbers_match_text(
    rest: httpx.Client, value: str
) -> None:
    for op in ("eq", "neq", "gt", "lteq", "like"):
        found = rest.get("/process-instance", params={"variables": f"amount_{op}_{value}"})
        assert found.status_code == 200, found.text
        assert found.json() == []


def test_nul_in_query_and_path_parameters_is_an_invalid_request() -> None:
    """The parameter readers hold on their own, whatever guard stands in front of the routes."""
    # The readers use neither the request nor the engine: none is given.
    call = Call(
        request=None,  # type: ignore[arg-type]
        engine=None,  # type: ignore[arg-type]
        path={},
        query=QueryParams("businessKey=a%00b&ok=fine&ids=a,b%00&firstResult=x"),
        base="",
    )
    with pytest.raises(ParameterError, match="NUL") as raised:
        call.text("businessKey")
    error = translate(raised.value)
    assert error.status == 400 and error.type == "InvalidRequestException"
    assert "'businessKey'" in error.message and "NUL" in error.message
    with pytest.raises(ParameterError, match="NUL"):
        call.csv("ids")
    assert call.text("ok") == "fine"
    with pytest.raises(ParameterError) as raised:
        call.page({})
    assert translate(raised.value).message == (
        "Cannot set query parameter 'firstResult' to value 'x': the value must be an integer"
    )


def test_query_parameters_of_each_type_name_themselves_when_refused(rest: httpx.Client) -> None:
    due = {"dueDates": "gt_2025-01-31T12:00:00Z,lt_2999-01-01T00:00:00Z"}
    assert rest.get("/job", params=due).status_code == 200
    soon = {"dueDates": "soon_2025-01-31T12:00:00Z"}
    invalid(rest.get("/job", params=soon), "'dueDates'", "gt_<date> or lt_<date>")
    invalid(rest.get("/job", params={"dueDates": "gt_yesterday"}), "'dueDates'", "'gt_yesterday'")
    wrong = {"variables": "amount_gt_5,oops"}
    invalid(rest.get("/process-instance", params=wrong), "'variables'", "'oops'", "KEY_OPERATOR")
    unsortable = {"sortBy": "nope", "sortOrder": "asc"}
    invalid(rest.get("/task", params=unsortable), "'sortBy'", "must be one of")
    upward = {"sortBy": "name", "sortOrder": "up"}
    invalid(rest.get("/task", params=upward), "'sortOrder'", "asc, desc")
    invalid(rest.get("/task", params={"active": "yes"}), "'active'", "true or false")
    assert rest.get("/job", params={"jobIds": "a,b"}).json() == []  # ids never issued
    invalid(rest.get("/job", params={"suspended": "1"}), "'suspended'", "true or false")
    later = {"lockExpirationAfter": "soon"}
    invalid(rest.get("/external-task", params=later), "'lockExpirationAfter'", "date and time")


def test_nul_over_http_is_400_not_500(rest: httpx.Client) -> None:
    for path, params in (
        ("/process-instance", {"businessKey": "a\x00"}),
        ("/task", {"nameLike": "\x00%"}),
        ("/process-instance", {"variables": "a\x00_eq_1"}),
    ):
        response = rest.get(path, params=params)
        assert response.status_code == 400, (path, response.text)
    assert rest.get("/process-definition/key/a%00b").status_code in (400, 404)


def test_retries_and_durations_are_bounded(rest: httpx.Client) -> None:
    job = f"/job/{uuid.uuid4()}/retries"
    invalid(rest.put(job, json={"retries": 1000000000000}), "retries")
    invalid(rest.put(job, json={"retries": 1e300}), "retries")
    task = f"/external-task/{uuid.uuid4()}"
    invalid(rest.put(f"{task}/retries", json={"retries": 2**31}), "retries")
    for duration in (1e18, 1e300, 86_400_001):
        extend = {"workerId": "w", "newDuration": duration}
        invalid(rest.post(f"{task}/extendLock", json=extend), "newDuration")
        failure = {"workerId": "w", "retries": 1, "retryTimeout": duration * 31}
        invalid(rest.post(f"{task}/failure", json=failure), "retryTimeout")
        topics = [{"topicName": "t", "lockDuration": duration}]
        fetch: dict[str, Any] = {"workerId": "w", "topics": topics}
        invalid(rest.post("/external-task/fetchAndLock", json=fetch), "lockDuration")
    topics = [{"topicName": "t", "lockDuration": 60_000}]
    for max_tasks in (-1, 1001, 1e300):
        fetch = {"workerId": "w", "maxTasks": max_tasks, "topics": topics}
        invalid(rest.post("/external-task/fetchAndLock", json=fetch), "maxTasks")
    day = [{"topicName": "t", "lockDuration": 86_400_000}]
    fetch = {"workerId": "w", "maxTasks": 1000, "topics": day}
    response = rest.post("/external-task/fetchAndLock", json=fetch)
    assert response.status_code == 200 and response.json() == []
    nothing = {"workerId": "w", "maxTasks": 0, "topics": topics}
    assert rest.post("/external-task/fetchAndLock", json=nothing).json() == []


def test_answer_flags_of_the_wrong_type_are_refused_before_anything_is_written(
    rest: httpx.Client,
) -> None:
    deploy(rest, ("approval.bpmn", processes.approval()))
    before = instances(rest)
    invalid(rest.post(START, json={"withVariablesInReturn": []}), "withVariablesInReturn")
    assert instances(rest) == before

    instance = start(rest, "approval")
    (task,) = rest.get("/task", params={"processInstanceId": instance["id"]}).json()
    refused = rest.post(f"/task/{task['id']}/complete", json={"withVariablesInReturn": "yes"})
    invalid(refused, "withVariablesInReturn")
    assert rest.get(f"/task/{task['id']}").status_code == 200

    assert rest.post(f"/task/{task['id']}/complete", json={}).status_code == 204
    for flag in ("resultEnabled", "variablesInResultEnabled", "all"):
        message = {"messageName": "PaymentReceived", "processInstanceId": instance["id"]}
        invalid(rest.post("/message", json={**message, flag: "x"}), flag)
        waiting = rest.get("/process-instance", params={"processInstanceIds": instance["id"]})
        assert len(waiting.json()) == 1, f"{flag}: the message was delivered"


def test_definition_like_filters_take_only_camundas_wildcards(rest: httpx.Client) -> None:
    deploy(rest, ("approval.bpmn", processes.approval("approve-star")))
    deploy(rest, ("approval.bpmn", processes.approval("approve_x")))

    def keys(**query: str) -> set[str]:
        found = rest.get("/process-definition", params=query)
        assert found.status_code == 200, found.text
        return {d["key"] for d in found.json()}

    assert keys(keyLike="approve%") == {"approve-star", "approve_x"}
    assert keys(keyLike="approve_x") == {"approve_x"}
    assert keys(keyLike="approve\\_%") == {"approve_x"}
    assert keys(keyLike="approve*") == set()
    assert keys(keyLike="approve-[s]tar") == set()
    assert keys(keyLike="approve?star") == set()
    assert keys(keyLike="approve\\") == set()
