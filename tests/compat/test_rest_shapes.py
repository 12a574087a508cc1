"""/engine-rest over HTTP: Camunda's paths, status codes, DTO fields, date format, typed variables
and error bodies, endpoint by endpoint."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from typing import Any

import httpx

from tests.compat import fields, processes
from tests.compat.conftest import deploy, start
from tests.server import PASSWORD, LiveServer, live_server

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$")


def _json(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    return response.json()


def _no_content(response: httpx.Response) -> None:
    assert response.status_code == 204, response.text
    assert response.content == b""


def _error(response: httpx.Response, status: int, type_: str, message: str = "") -> Any:
    body = _json(response, status)
    assert set(body) >= fields.EXCEPTION
    assert body["type"] == type_, body
    assert message in body["message"], body
    return body


def _has(entry: dict[str, Any], expected: set[str]) -> None:
    assert set(entry) >= expected, expected - set(entry)


def test_deployment_and_definitions(rest: httpx.Client) -> None:
    created = deploy(
        rest,
        ("charge.bpmn", processes.external_then_review()),
        ("approval.bpmn20.xml", processes.approval()),
        ("notes.txt", "not a process"),
        **{"deployment-source": "compat-tests"},
    )
    _has(created, fields.DEPLOYMENT_WITH_DEFINITIONS)
    assert created["source"] == "compat-tests" and DATE.match(created["deploymentTime"])
    assert created["links"][0]["href"].endswith(f"/engine-rest/deployment/{created['id']}")
    deployed = created["deployedProcessDefinitions"]
    assert sorted(d["key"] for d in deployed.values()) == ["approval", "charge"]
    for definition_id, definition in deployed.items():
        _has(definition, fields.PROCESS_DEFINITION)
        assert definition["id"] == definition_id and definition["version"] == 1
        assert definition["deploymentId"] == created["id"]
    assert created["deployedDecisionDefinitions"] is None

    listed = _json(rest.get("/process-definition", params={"sortBy": "key", "sortOrder": "desc"}))
    assert [d["key"] for d in listed] == ["charge", "approval"]
    for definition in listed:
        _has(definition, fields.PROCESS_DEFINITION)
    assert _json(rest.get("/process-definition/count"))["count"] == 2
    charge = _json(rest.get("/process-definition/key/charge"))
    assert charge["name"] == "Charge and review" and charge["resource"] == "charge.bpmn"
    assert _json(rest.get(f"/process-definition/{charge['id']}")) == charge
    xml = _json(rest.get("/process-definition/key/charge/xml"))
    assert xml == {"id": charge["id"], "bpmn20Xml": processes.external_then_review()}
    assert _json(rest.get(f"/process-definition/{charge['id']}/xml")) == xml

    _error(
        rest.get("/process-definition/key/nope"),
        404,
        "RestException",
        "No matching process definition with key: nope",
    )
    _error(rest.get("/process-definition/nope:1:x"), 404, "RestException", "nope:1:x")
    _error(rest.post("/process-definition/key/nope/start", json={}), 404, "RestException")
    _error(
        rest.post("/deployment/create", files={"x": ("x.bpmn", b"<nope/>")}),
        400,
        "ParseException",
    )


def test_duplicate_filtering(rest: httpx.Client) -> None:
    charge, approval = processes.external_then_review(), processes.approval()
    first = deploy(rest, ("charge.bpmn", charge), ("approval.bpmn", approval))

    again = deploy(rest, ("charge.bpmn", charge), ("approval.bpmn", approval))
    assert {d["version"] for d in again["deployedProcessDefinitions"].values()} == {2}

    filtered = deploy(
        rest,
        ("charge.bpmn", charge),
        ("approval.bpmn", approval),
        **{"enable-duplicate-filtering": "true"},
    )
    assert filtered["deployedProcessDefinitions"] is None
    assert filtered["id"] == again["id"] != first["id"]

    changed = approval.replace('name="Approve order"', 'name="Approve the order"')
    only_changed = deploy(
        rest,
        ("charge.bpmn", charge),
        ("approval.bpmn", changed),
        **{"enable-duplicate-filtering": "true", "deploy-changed-only": "true"},
    )
    versions = {d["key"]: d["version"] for d in only_changed["deployedProcessDefinitions"].values()}
    assert versions == {"approval": 3}

    whole = deploy(
        rest,
        ("charge.bpmn", charge),
        ("approval.bpmn", approval),
        **{"enable-duplicate-filtering": "true"},
    )
    versions = {d["key"]: d["version"] for d in whole["deployedProcessDefinitions"].values()}
    assert versions == {"approval": 4, "charge": 3}
    latest = _json(rest.get("/process-definition", params={"latestVersion": "true"}))
    assert {d["key"]: d["version"] for d in latest} == {"approval": 4, "charge": 3}


def test_start_variables_and_instances(rest: httpx.Client) -> None:
    deploy(rest, ("approval.bpmn", processes.approval()))
    variables = {
        "text": {"value": "hello"},
        "small": {"value": 5},
        "big": {"value": 2**40},
        "ratio": {"value": 1.5},
        "flag": {"value": True},
        "nothing": {"value": None},
        "doc": {"value": {"a": [1, 2]}},
        "when": {"value": "2026-01-31T10:00:00.000+0000", "type": "Date"},
        "raw": {"value": '{"x":[1]}', "type": "Json"},
        "counted": {"value": "7", "type": "Integer"},
        "wide": {"value": 3, "type": "Long"},
        "obj": {
            "value": '{"k":"v"}',
            "type": "Object",
            "valueInfo": {"serializationDataFormat": "application/json", "objectTypeName": "M"},
        },
    }
    started = start(rest, "approval", variables, businessKey="order-1", withVariablesInReturn=True)
    _has(started, fields.PROCESS_INSTANCE | {"variables"})
    assert started["businessKey"] == "order-1" and started["ended"] is False
    assert started["links"][0]["rel"] == "self"
    typed = {name: (v["type"], v["value"]) for name, v in started["variables"].items()}
    assert typed == {
        "text": ("String", "hello"),
        "small": ("Integer", 5),
        "big": ("Long", 2**40),
        "ratio": ("Double", 1.5),
        "flag": ("Boolean", True),
        "nothing": ("Null", None),
        "doc": ("Json", '{"a":[1,2]}'),
        "when": ("Date", "2026-01-31T10:00:00.000+0000"),
        "raw": ("Json", '{"x":[1]}'),
        "counted": ("Integer", 7),
        "wide": ("Long", 3),
        "obj": ("Object", {"k": "v"}),
    }
    plain = start(rest, "approval", {"small": {"value": 9}}, businessKey="order-2")
    assert "variables" not in plain

    _error(
        rest.post(
            "/process-definition/key/approval/start",
            json={"variables": {"n": {"value": "abc", "type": "Integer"}}},
        ),
        400,
        "InvalidRequestException",
        "abc",
    )
    _error(
        rest.post(
            "/process-definition/key/approval/start",
            json={"variables": {"n": {"value": "x", "type": "Bytes"}}},
        ),
        400,
        "InvalidRequestException",
        "Bytes",
    )

    instance_id = started["id"]
    listed = _json(rest.get("/process-instance", params={"processDefinitionKey": "approval"}))
    assert len(listed) == 2
    for entry in listed:
        _has(entry, fields.PROCESS_INSTANCE)
    by_variable = [
        ("small_eq_5", [instance_id]),
        ("small_gt_6", [plain["id"]]),
        ("text_like_hel%", [instance_id]),
        ("flag_eq_true", [instance_id]),
        ("small_neq_5", [plain["id"]]),
        ("small_gteq_5,text_eq_hello", [instance_id]),
    ]
    for expression, expected in by_variable:
        found = _json(rest.get("/process-instance", params={"variables": expression}))
        assert [i["id"] for i in found] == expected, expression
    count = _json(rest.get("/process-instance/count", params={"businessKey": "order-2"}))
    assert count == {"count": 1}

    one = _json(rest.get(f"/process-instance/{instance_id}"))
    _has(one, fields.PROCESS_INSTANCE)
    assert one["id"] == instance_id and one["definitionId"] == started["definitionId"]
    values = _json(rest.get(f"/process-instance/{instance_id}/variables"))
    assert values == started["variables"]
    for value in values.values():
        _has(value, fields.VARIABLE_VALUE)
    assert _json(rest.get(f"/process-instance/{instance_id}/variables/big")) == values["big"]
    _error(
        rest.get(f"/process-instance/{instance_id}/variables/missing"),
        404,
        "InvalidRequestException",
        "missing",
    )
    unknown = "00000000-0000-0000-0000-00000000abcd"
    _error(
        rest.get(f"/process-instance/{unknown}"),
        404,
        "InvalidRequestException",
        f"Process instance with id {unknown} does not exist",
    )

    tree = _json(rest.get(f"/process-instance/{instance_id}/activity-instances"))
    _has(tree, fields.ACTIVITY_INSTANCE)
    assert tree["id"] == instance_id and tree["activityType"] == "processDefinition"
    [child] = tree["childActivityInstances"]
    _has(child, fields.ACTIVITY_INSTANCE)
    assert (child["activityId"], child["activityType"]) == ("Approve", "userTask")
    assert child["parentActivityInstanceId"] == instance_id

    _no_content(rest.delete(f"/process-instance/{instance_id}"))
    _error(rest.get(f"/process-instance/{instance_id}"), 404, "InvalidRequestException")
    _error(rest.delete(f"/process-instance/{instance_id}"), 404, "InvalidRequestException")
    history = _json(rest.get(f"/history/process-instance/{instance_id}"))
    _has(history, fields.HISTORIC_PROCESS_INSTANCE)
    assert history["state"] == "EXTERNALLY_TERMINATED" and DATE.match(history["endTime"])
    assert history["startActivityId"] == "Start" and history["processDefinitionVersion"] == 1
    assert history["durationInMillis"] >= 0
    _error(rest.get(f"/history/process-instance/{unknown}"), 404, "InvalidRequestException")


def test_user_tasks(rest: httpx.Client, operator: httpx.Client) -> None:
    deploy(rest, ("charge.bpmn", processes.external_then_review()))
    deploy(rest, ("approval.bpmn", processes.approval()))
    instance = start(operator, "approval", businessKey="b-1")
    tasks = _json(operator.get("/task", params={"processInstanceId": instance["id"]}))
    [task] = tasks
    _has(task, fields.TASK)
    assert task["name"] == "Approve order" and task["taskDefinitionKey"] == "Approve"
    assert DATE.match(task["created"]) and task["assignee"] is None
    task_id = task["id"]
    assert _json(operator.get(f"/task/{task_id}")) == task
    assert _json(operator.get("/task/count", params={"unassigned": "true"})) == {"count": 1}

    _no_content(operator.post(f"/task/{task_id}/claim", json={"userId": "anna"}))
    claimed = _json(operator.get("/task", params={"assignee": "anna"}))
    assert [t["id"] for t in claimed] == [task_id]
    _error(
        operator.post(f"/task/{task_id}/claim", json={"userId": "bob"}),
        500,
        "TaskAlreadyClaimedException",
        f"Task '{task_id}' is already claimed by someone else.",
    )
    _no_content(operator.post(f"/task/{task_id}/unclaim"))
    assert _json(operator.get(f"/task/{task_id}"))["assignee"] is None

    done = operator.post(
        f"/task/{task_id}/complete",
        json={"variables": {"approved": {"value": True}}, "withVariablesInReturn": True},
    )
    assert _json(done) == {"approved": {"type": "Boolean", "value": True, "valueInfo": {}}}
    _error(operator.post(f"/task/{task_id}/complete", json={}), 500, "RestException", task_id)
    _error(operator.get(f"/task/{task_id}"), 404, "InvalidRequestException", "No matching task")
    missing = "00000000-0000-0000-0000-0000000000aa"
    _error(
        operator.post(f"/task/{missing}/claim", json={"userId": "x"}),
        500,
        "NullValueException",
        f"Cannot find task with id {missing}",
    )
    _error(
        operator.post(f"/task/{missing}/complete", json={}),
        500,
        "RestException",
        f"Cannot complete task {missing}",
    )

    second = start(operator, "approval")
    [other] = _json(operator.get("/task", params={"processInstanceId": second["id"]}))
    _no_content(operator.post(f"/task/{other['id']}/complete", json={}))


def test_external_tasks(rest: httpx.Client, operator: httpx.Client) -> None:
    deploy(rest, ("charge.bpmn", processes.external_then_review()))
    instance = start(operator, "charge", {"amount": {"value": 30}, "note": {"value": "n"}})
    fetch = {"workerId": "w1", "maxTasks": 5, "topics": [
        {"topicName": "charge-card", "lockDuration": 60_000, "variables": ["amount"]}
    ]}  # fmt: skip
    [locked] = _json(operator.post("/external-task/fetchAndLock", json=fetch))
    _has(locked, fields.LOCKED_EXTERNAL_TASK)
    assert locked["retries"] is None and locked["workerId"] == "w1"
    assert locked["topicName"] == "charge-card" and locked["activityId"] == "Charge"
    assert locked["processInstanceId"] == instance["id"] and DATE.match(
        locked["lockExpirationTime"]
    )
    assert locked["variables"] == {"amount": {"type": "Integer", "value": 30, "valueInfo": {}}}
    assert locked["activityInstanceId"] and locked["executionId"]
    task_id = locked["id"]
    assert _json(operator.post("/external-task/fetchAndLock", json=fetch)) == []

    [listed] = _json(operator.get("/external-task", params={"workerId": "w1"}))
    _has(listed, fields.EXTERNAL_TASK)
    assert listed["id"] == task_id and listed["activityInstanceId"] == locked["activityInstanceId"]
    assert _json(operator.get(f"/external-task/{task_id}")) == listed
    assert _json(operator.get("/external-task/count", params={"locked": "true"})) == {"count": 1}

    _no_content(
        operator.post(
            f"/external-task/{task_id}/extendLock", json={"workerId": "w1", "newDuration": 1000}
        )
    )
    conflict = _error(
        operator.post(f"/external-task/{task_id}/complete", json={"workerId": "w2"}),
        400,
        "RestException",
        f"External Task {task_id} cannot be completed by worker 'w2'. It is locked by worker 'w1'.",
    )
    assert conflict
    wrong = operator.post(f"/external-task/{task_id}/failure", json={"workerId": "w2"})
    assert wrong.headers["x-invariant-violation"] == "ExternalTaskLeaseConflict"

    _no_content(operator.post(f"/external-task/{task_id}/unlock"))
    fetch["workerId"] = "w2"
    [again] = _json(operator.post("/external-task/fetchAndLock", json=fetch))
    assert again["id"] == task_id and again["workerId"] == "w2"
    failed = {"workerId": "w2", "errorMessage": "card declined", "errorDetails": "trace",
              "retries": 1, "retryTimeout": 0}  # fmt: skip
    _no_content(operator.post(f"/external-task/{task_id}/failure", json=failed))
    [retried] = _json(operator.post("/external-task/fetchAndLock", json=fetch))
    assert retried["retries"] == 1 and retried["errorMessage"] == "card declined"
    assert retried["errorDetails"] == "trace"
    _no_content(operator.post(f"/external-task/{task_id}/failure", json={**failed, "retries": 0}))
    [incident] = _json(operator.get("/incident", params={"processInstanceId": instance["id"]}))
    _has(incident, fields.INCIDENT)
    assert incident["incidentType"] == "failedExternalTask"
    assert incident["configuration"] == task_id and incident["activityId"] == "Charge"
    assert incident["incidentMessage"] == "card declined" and DATE.match(
        incident["incidentTimestamp"]
    )
    assert _json(operator.get(f"/incident/{incident['id']}")) == incident
    assert _json(operator.get("/incident/count", params={"incidentType": "failedJob"})) == {
        "count": 0
    }

    _no_content(operator.put(f"/external-task/{task_id}/retries", json={"retries": 1}))
    assert _json(operator.get("/incident")) == []
    [back] = _json(operator.post("/external-task/fetchAndLock", json=fetch))
    done = {"workerId": "w2", "variables": {"charged": {"value": True}}, "localVariables": {}}
    _no_content(operator.post(f"/external-task/{back['id']}/complete", json=done))
    _error(
        operator.post(f"/external-task/{task_id}/complete", json=done),
        404,
        "RestException",
        f"External task with id {task_id} does not exist",
    )
    [review] = _json(operator.get("/task", params={"processInstanceId": instance["id"]}))
    assert review["formKey"] == "app:review"
    _error(
        operator.post("/external-task/fetchAndLock", json={"topics": []}),
        400,
        "InvalidRequestException",
    )
    _error(
        operator.post(
            "/external-task/fetchAndLock",
            json={"workerId": "w", "asyncResponseTimeout": 1_800_001, "topics": []},
        ),
        400,
        "InvalidRequestException",
        "1800000",
    )


def test_bpmn_error_reaches_the_boundary_event(rest: httpx.Client) -> None:
    deploy(rest, ("credit.bpmn", processes.external_with_error_boundary()))
    instance = start(rest, "credit-check")
    fetch = {"workerId": "w", "maxTasks": 1,
             "topics": [{"topicName": "check-credit", "lockDuration": 10_000}]}  # fmt: skip
    [task] = _json(rest.post("/external-task/fetchAndLock", json=fetch))
    error = {"workerId": "w", "errorCode": "REJECTED", "errorMessage": "too risky",
             "variables": {"score": {"value": 12}}}  # fmt: skip
    _no_content(rest.post(f"/external-task/{task['id']}/bpmnError", json=error))
    [handle] = _json(rest.get("/task", params={"processInstanceId": instance["id"]}))
    assert handle["taskDefinitionKey"] == "HandleRejection"
    score = _json(rest.get(f"/process-instance/{instance['id']}/variables/score"))
    assert score["value"] == 12

    activities = _json(
        rest.get(
            "/history/activity-instance",
            params={"processInstanceId": instance["id"], "sortBy": "startTime", "sortOrder": "asc"},
        )
    )
    for entry in activities:
        _has(entry, fields.HISTORIC_ACTIVITY_INSTANCE)
    assert [(a["activityId"], a["activityType"]) for a in activities] == [
        ("Start", "startEvent"),
        ("Check", "serviceTask"),
        ("Rejected", "boundaryError"),
        ("HandleRejection", "userTask"),
    ]
    check = activities[1]
    assert check["canceled"] is True and DATE.match(check["endTime"])
    assert activities[3]["taskId"] == handle["id"] and activities[3]["endTime"] is None
    only = _json(rest.get("/history/activity-instance", params={"activityType": "boundaryError"}))
    assert [a["activityId"] for a in only] == ["Rejected"]
    unfinished = {"processInstanceId": instance["id"], "unfinished": "true"}
    assert _json(rest.get("/history/activity-instance/count", params=unfinished)) == {"count": 1}


def test_messages_signals_and_history(rest: httpx.Client, operator: httpx.Client) -> None:
    deploy(
        rest, ("approval.bpmn", processes.approval()), ("inbound.bpmn", processes.message_start())
    )
    instance = start(operator, "approval", businessKey="order-7")
    [task] = _json(operator.get("/task", params={"processInstanceId": instance["id"]}))
    _no_content(operator.post(f"/task/{task['id']}/complete", json={}))

    _error(
        operator.post("/message", json={"messageName": "PaymentReceived", "businessKey": "other"}),
        400,
        "RestException",
        "Cannot correlate message 'PaymentReceived'",
    )
    correlated = _json(
        operator.post(
            "/message",
            json={
                "messageName": "PaymentReceived",
                "businessKey": "order-7",
                "processVariables": {"paid": {"value": 99.5, "type": "Double"}},
                "resultEnabled": True,
                "variablesInResultEnabled": True,
            },
        )
    )
    [result] = correlated
    _has(result, fields.MESSAGE_CORRELATION_RESULT | {"variables"})
    assert result["resultType"] == "Execution" and result["processInstance"] is None
    _has(result["execution"], fields.EXECUTION)
    assert result["execution"]["processInstanceId"] == instance["id"]
    assert result["variables"]["paid"] == {"type": "Double", "value": 99.5, "valueInfo": {}}
    history = _json(rest.get(f"/history/process-instance/{instance['id']}"))
    assert history["state"] == "COMPLETED"

    started = _json(
        operator.post("/message", json={"messageName": "OrderReceived", "resultEnabled": True})
    )
    [result] = started
    assert result["resultType"] == "ProcessDefinition" and result["execution"] is None
    _has(result["processInstance"], fields.PROCESS_INSTANCE)
    _no_content(operator.post("/message", json={"messageName": "OrderReceived"}))
    assert (
        _json(rest.get("/process-instance/count", params={"processDefinitionKey": "inbound"}))[
            "count"
        ]
        == 2
    )
    _error(operator.post("/message", json={}), 400, "InvalidRequestException", "message name")

    _no_content(operator.post("/signal", json={"name": "Nobody listens"}))
    _error(operator.post("/signal", json={}), 400, "InvalidRequestException")

    activities = _json(
        rest.get("/history/activity-instance", params={"processInstanceId": instance["id"]})
    )
    types = [(a["activityId"], a["activityType"]) for a in activities]
    assert types == [
        ("Start", "startEvent"),
        ("Approve", "userTask"),
        ("WaitPayment", "intermediateMessageCatch"),
        ("End", "noneEndEvent"),
    ]
    assert activities[-1]["completeScope"] is True
    inbound = _json(rest.get("/history/activity-instance", params={"activityId": "Received"}))
    assert {a["activityType"] for a in inbound} == {"messageStartEvent"}


def test_subprocess_tree_and_jobs(rest: httpx.Client, operator: httpx.Client) -> None:
    deploy(rest, ("nested.bpmn", processes.timer_and_subprocess()))
    instance = start(operator, "nested")
    tree = _json(operator.get(f"/process-instance/{instance['id']}/activity-instances"))
    [sub] = tree["childActivityInstances"]
    assert (sub["activityId"], sub["activityType"]) == ("Sub", "subProcess")
    [inner] = sub["childActivityInstances"]
    assert (inner["activityType"], inner["parentActivityInstanceId"]) == ("userTask", sub["id"])
    history = _json(
        rest.get(
            "/history/activity-instance",
            params={"processInstanceId": instance["id"], "activityId": "Inner"},
        )
    )
    assert history[0]["parentActivityInstanceId"] == sub["id"]
    gateways = _json(
        rest.get("/history/activity-instance", params={"activityType": "exclusiveGateway"})
    )
    assert [g["activityId"] for g in gateways] == ["Choose"]

    [job] = _json(operator.get("/job", params={"processInstanceId": instance["id"]}))
    _has(job, fields.JOB)
    assert job["retries"] == 3 and DATE.match(job["dueDate"]) and job["exceptionMessage"] is None
    assert _json(operator.get(f"/job/{job['id']}")) == job
    assert _json(operator.get("/job/count", params={"timers": "true"})) == {"count": 1}
    _no_content(operator.put(f"/job/{job['id']}/retries", json={"retries": 5}))
    assert _json(operator.get(f"/job/{job['id']}"))["retries"] == 5
    _error(
        operator.put(f"/job/{job['id']}/retries", json={"retries": -1}),
        400,
        "InvalidRequestException",
    )
    _no_content(operator.post(f"/job/{job['id']}/execute"))
    history = _json(rest.get(f"/history/process-instance/{instance['id']}"))
    assert history["state"] == "COMPLETED"
    late = _json(
        rest.get(
            "/history/activity-instance",
            params={"processInstanceId": instance["id"], "activityId": "Late"},
        )
    )
    assert late[0]["activityType"] == "boundaryTimer"
    _error(operator.post(f"/job/{job['id']}/execute"), 404, "InvalidRequestException")
    _error(
        operator.put(f"/job/{job['id']}/retries", json={"retries": 1}),
        404,
        "InvalidRequestException",
    )


def test_long_polling_does_not_block_the_server(rest: httpx.Client) -> None:
    deploy(rest, ("work.bpmn", processes.external_only("work", "slow-topic")))
    fetch = {"workerId": "poller", "maxTasks": 1, "asyncResponseTimeout": 60_000,
             "topics": [{"topicName": "slow-topic", "lockDuration": 10_000}]}  # fmt: skip
    answer: dict[str, Any] = {}

    def poll() -> None:
        began = time.monotonic()
        answer["response"] = rest.post("/external-task/fetchAndLock", json=fetch)
        answer["seconds"] = time.monotonic() - began

    pollers = [threading.Thread(target=poll) for _ in range(1)]
    for poller in pollers:
        poller.start()
    time.sleep(0.5)
    began = time.monotonic()
    assert _json(rest.get("/process-definition/count"))["count"] == 1
    assert time.monotonic() - began < 30  # answered while the 60 s long poll waits
    instance = start(rest, "work")
    for poller in pollers:
        poller.join(timeout=90)
    [task] = _json(answer["response"])
    assert task["processInstanceId"] == instance["id"]
    assert answer["seconds"] < 30

    gone = {**fetch, "workerId": "gone", "asyncResponseTimeout": 20_000}
    with contextlib.suppress(httpx.ReadTimeout):
        rest.post("/external-task/fetchAndLock", json=gone, timeout=0.3)
    time.sleep(2.2)
    start(rest, "work")
    [taken] = _json(rest.post("/external-task/fetchAndLock", json={**fetch, "workerId": "here"}))
    assert taken["workerId"] == "here"

    began = time.monotonic()
    empty = _json(
        rest.post("/external-task/fetchAndLock", json={**fetch, "asyncResponseTimeout": 1200})
    )
    assert empty == [] and 1.1 < time.monotonic() - began < 30


def test_errors_and_authentication(server: LiveServer, rest: httpx.Client) -> None:
    base = f"{server.url}/engine-rest"
    wrong = httpx.get(f"{base}/process-definition", auth=("admin", "wrong"))
    assert wrong.status_code == 401
    assert {"type", "message"} <= set(wrong.json())
    assert httpx.get(f"{base}/process-definition").status_code == 401
    # A start by an unknown key is Camunda's 404 (the definition is found before the check);
    # starting a history cleanup is refused to a viewer by its permission.
    unknown = httpx.post(
        f"{base}/process-definition/key/x/start", json={}, auth=("viewer", PASSWORD)
    )
    _error(unknown, 404, "RestException", "No matching process definition")
    viewer = httpx.post(f"{base}/history/cleanup", auth=("viewer", PASSWORD))
    _error(viewer, 403, "AuthorizationException", "viewer")
    bearer = httpx.get(f"{base}/process-definition", headers=server.bearer("viewer"))
    assert _json(bearer) == []
    _error(rest.get("/no-such-resource"), 404, "NotFoundException")
    _error(
        rest.post("/message", content=b"{not json", headers={"Content-Type": "application/json"}),
        400,
        "InvalidRequestException",
    )
    _error(rest.get("/task", params={"sortBy": "bogus", "sortOrder": "asc"}), 400,
           "InvalidRequestException", "sortBy")  # fmt: skip
    _error(rest.get("/task", params={"sortBy": "created"}), 400, "InvalidRequestException")
    _error(rest.get("/process-instance", params={"variables": "novalue"}), 400,
           "InvalidRequestException")  # fmt: skip
    _error(rest.get("/external-task", params={"locked": "maybe"}), 400, "InvalidRequestException")


def test_open_mode_without_credentials(database_url: str) -> None:
    with live_server(database_url, auth=False, run_jobs=False) as open_server:
        base = f"{open_server.url}/engine-rest"
        with httpx.Client(base_url=base, timeout=10) as client:
            deploy(client, ("work.bpmn", processes.external_only("open", "open-topic")))
            started = start(client, "open")
            assert _json(client.get(f"/process-instance/{started['id']}"))["id"] == started["id"]
