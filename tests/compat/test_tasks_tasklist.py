"""Tasks on /engine-rest as Tasklist front-ends use them, answered as Camunda 7.24's REST reference
says: POST /task/{id}/delegate and /resolve (delegationState, owner), PUT /task/{id}, POST
/task/{id}/bpmnError and /bpmnEscalation caught by the task's boundary events, and the task
filters Tasklist sends (due and follow-up dates, priorities, nameLike, processVariables and
taskVariables, `sorting` in POST /task). The answer shapes are written out from the reference,
not taken from the code under test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from app.camunda.rendered_forms import render
from engine.language.forms import Form, FormField
from tests.compat.conftest import deploy, start
from tests.compat.identity_support import audit_entries
from tests.compat.processes import HEADER, REVIEW_WITH_BOUNDARIES
from tests.server import LiveServer

# GET /task/{id}'s fields in Camunda 7.24's reference (TaskDto).
TASK_FIELDS = {
    "id",
    "name",
    "assignee",
    "owner",
    "created",
    "lastUpdated",
    "due",
    "followUp",
    "delegationState",
    "description",
    "executionId",
    "parentTaskId",
    "priority",
    "processDefinitionId",
    "processInstanceId",
    "caseExecutionId",
    "caseDefinitionId",
    "caseInstanceId",
    "taskDefinitionKey",
    "suspended",
    "formKey",
    "camundaFormRef",
    "tenantId",
    "taskState",
    "attachment",
    "comment",
}


def _tasks_of(rest: httpx.Client, instance_id: str) -> dict[str, str]:
    """The instance's open tasks by task definition key."""
    found = rest.get("/task", params={"processInstanceId": instance_id})
    assert found.status_code == 200, found.text
    return {row["taskDefinitionKey"]: row["id"] for row in found.json()}


def _review(rest: httpx.Client, variables: dict[str, Any] | None = None) -> tuple[str, str]:
    """A started review's instance id and its Review task's id."""
    instance = start(rest, "review", variables)["id"]
    return instance, _tasks_of(rest, instance)["Review"]


@pytest.fixture
def reviews(rest: httpx.Client) -> httpx.Client:
    deploy(rest, ("review.bpmn", REVIEW_WITH_BOUNDARIES))
    return rest


def test_delegate_and_resolve(server: LiveServer, reviews: httpx.Client) -> None:
    rest = reviews
    instance, task = _review(rest)
    assert rest.post(f"/task/{task}/assignee", json={"userId": "ann"}).status_code == 204
    response = rest.post(f"/task/{task}/delegate", json={"userId": "bob"})
    assert response.status_code == 204, response.text
    shown = rest.get(f"/task/{task}").json()
    assert set(shown) == TASK_FIELDS
    assert (shown["owner"], shown["assignee"], shown["delegationState"]) == (
        "ann",
        "bob",
        "PENDING",
    )
    # A PENDING task is resolved, not completed: Camunda's 500 RestException, nothing written.
    refused = rest.post(f"/task/{task}/complete", json={"variables": {}})
    assert refused.status_code == 500, refused.text
    assert refused.json() == {
        "type": "RestException",
        "message": f"Cannot complete task {task}: A delegated task cannot be completed, "
        "but should be resolved instead.",
    }
    resolved = rest.post(
        f"/task/{task}/resolve", json={"variables": {"checked": {"value": True, "type": "Boolean"}}}
    )
    assert resolved.status_code == 204, resolved.text
    shown = rest.get(f"/task/{task}").json()
    assert (shown["owner"], shown["assignee"], shown["delegationState"]) == (
        "ann",
        "ann",
        "RESOLVED",
    )
    variable = rest.get(f"/process-instance/{instance}/variables/checked").json()
    assert variable["value"] is True
    assert rest.post(f"/task/{task}/complete", json={}).status_code == 204
    operations = [e["operation"] for e in audit_entries(server, "Task") if e["entityId"] == task]
    assert operations == ["Assign", "Delegate", "Resolve", "Complete"]


def test_delegate_of_a_missing_task_is_camundas_null_value_answer(reviews: httpx.Client) -> None:
    missing = "00000000-0000-4000-8000-000000000001"
    response = reviews.post(f"/task/{missing}/delegate", json={"userId": "bob"})
    assert response.status_code == 500
    assert response.json() == {
        "type": "NullValueException",
        "message": f"Cannot find task with id {missing}: task is null",
    }


def test_put_task_sets_every_detail(reviews: httpx.Client) -> None:
    rest = reviews
    _, task = _review(rest)
    _, parent = _review(rest)
    body = {
        "name": "Check order",
        "description": "Compare with the invoice",
        "priority": 75,
        "assignee": "carl",
        "owner": "ann",
        "delegationState": "RESOLVED",
        "due": "2027-03-01T12:00:00.000+0100",
        "followUp": "2027-02-20T09:30:00.000+0000",
        "parentTaskId": parent,
        "caseInstanceId": None,
        "tenantId": None,
    }
    response = rest.put(f"/task/{task}", json=body)
    assert response.status_code == 204, response.text
    shown = rest.get(f"/task/{task}").json()
    assert {k: shown[k] for k in ("name", "description", "priority", "assignee", "owner")} == {
        "name": "Check order",
        "description": "Compare with the invoice",
        "priority": 75,
        "assignee": "carl",
        "owner": "ann",
    }
    assert shown["delegationState"] == "RESOLVED"
    assert shown["due"] == "2027-03-01T11:00:00.000+0000"
    assert shown["followUp"] == "2027-02-20T09:30:00.000+0000"
    assert shown["parentTaskId"] == parent


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"delegationState": "DONE"}, "delegationState"),
        ({"due": "tomorrow"}, "due"),
        ({"priority": "high"}, "priority"),
        ({"parentTaskId": "nope"}, "parentTaskId"),
    ],
)
def test_put_task_refuses_bad_fields_naming_them(
    reviews: httpx.Client, body: dict[str, Any], named: str
) -> None:
    _, task = _review(reviews)
    response = reviews.put(f"/task/{task}", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["type"] == "InvalidRequestException"
    assert named in response.json()["message"]
    assert reviews.get(f"/task/{task}").json()["name"] == "Review order"


def test_put_of_a_missing_task_is_a_404(reviews: httpx.Client) -> None:
    missing = "00000000-0000-4000-8000-000000000002"
    response = reviews.put(f"/task/{missing}", json={"name": "x"})
    assert response.status_code == 404
    assert response.json() == {
        "type": "InvalidRequestException",
        "message": f"No matching task with id {missing}",
    }


def test_bpmn_error_from_the_task_is_caught_by_its_boundary_event(reviews: httpx.Client) -> None:
    rest = reviews
    instance, task = _review(rest)
    body = {
        "errorCode": "REJECTED",
        "errorMessage": "out of stock",
        "variables": {"reason": {"value": "stock", "type": "String"}},
    }
    response = rest.post(f"/task/{task}/bpmnError", json=body)
    assert response.status_code == 204, response.text
    assert list(_tasks_of(rest, instance)) == ["HandleRejection"]
    assert rest.get(f"/process-instance/{instance}/variables/reason").json()["value"] == "stock"
    assert rest.get(f"/task/{task}").status_code == 404


def test_bpmn_error_needs_an_error_code(reviews: httpx.Client) -> None:
    instance, task = _review(reviews)
    response = reviews.post(f"/task/{task}/bpmnError", json={"errorMessage": "x"})
    assert response.status_code == 400, response.text
    assert "errorCode" in response.json()["message"]
    assert list(_tasks_of(reviews, instance)) == ["Review"]


def test_escalation_caught_without_interrupting_keeps_the_task(reviews: httpx.Client) -> None:
    rest = reviews
    instance, task = _review(rest)
    response = rest.post(f"/task/{task}/bpmnEscalation", json={"escalationCode": "HELP"})
    assert response.status_code == 204, response.text
    assert sorted(_tasks_of(rest, instance)) == ["Help", "Review"]


def _ids(rest: httpx.Client, params: dict[str, str] | None = None, **body: Any) -> list[str]:
    """The task ids GET /task finds with `params`, or POST /task with `body`; its count
    agrees."""
    if params is not None:
        listed = rest.get("/task", params=params)
        counted = rest.get("/task/count", params=params)
    else:
        listed = rest.post("/task", json=body)
        counted = rest.post("/task/count", json=body)
    assert listed.status_code == 200, listed.text
    assert counted.status_code == 200, counted.text
    ids = [row["id"] for row in listed.json()]
    assert counted.json() == {"count": len(ids)}
    return ids


@pytest.fixture
def three(reviews: httpx.Client) -> dict[str, str]:
    """Three reviews: a (priority 10, due March, follow-up February, amount 100, local note
    'urgent'), b (priority 50, due April, amount 500), c (priority 90, no dates, amount 900)."""
    rest = reviews
    found = {}
    for name, amount in (("a", 100), ("b", 500), ("c", 900)):
        _, found[name] = _review(rest, {"amount": {"value": amount, "type": "Integer"}})
    details = {
        "a": {"priority": 10, "due": "2027-03-01T00:00:00.000+0000",
              "followUp": "2027-02-01T00:00:00.000+0000", "name": "Review order a"},
        "b": {"priority": 50, "due": "2027-04-01T00:00:00.000+0000", "name": "Review order b"},
        "c": {"priority": 90, "name": "Check order c"},
    }  # fmt: skip
    for name, body in details.items():
        assert rest.put(f"/task/{found[name]}", json=body).status_code == 204
    note = {"value": "urgent", "type": "String"}
    assert rest.put(f"/task/{found['a']}/localVariables/note", json=note).status_code == 204
    return found


FILTERS: list[tuple[dict[str, str], set[str]]] = [
    ({"dueBefore": "2027-03-15T00:00:00.000+0000"}, {"a"}),
    ({"dueAfter": "2027-03-01T00:00:00.000+0000"}, {"b"}),
    ({"followUpBefore": "2027-03-01T00:00:00.000+0000"}, {"a"}),
    ({"followUpAfter": "2027-01-01T00:00:00.000+0000"}, {"a"}),
    ({"priority": "50"}, {"b"}),
    ({"minPriority": "50"}, {"b", "c"}),
    ({"maxPriority": "50"}, {"a", "b"}),
    ({"nameLike": "Review%"}, {"a", "b"}),
    ({"processVariables": "amount_gteq_500"}, {"b", "c"}),
    ({"processVariables": "amount_lt_500,amount_neq_0"}, {"a"}),
    ({"taskVariables": "note_eq_urgent"}, {"a"}),
    ({"taskVariables": "note_like_urg%"}, {"a"}),
]


@pytest.mark.parametrize(("params", "expected"), FILTERS)
def test_get_filters(
    reviews: httpx.Client, three: dict[str, str], params: dict[str, str], expected: set[str]
) -> None:
    by_id = {task_id: name for name, task_id in three.items()}
    assert {by_id[i] for i in _ids(reviews, params)} == expected


def test_post_query_filters_variables_and_sorts(
    reviews: httpx.Client, three: dict[str, str]
) -> None:
    rest = reviews
    by_id = {task_id: name for name, task_id in three.items()}
    body: dict[str, Any] = {
        "processVariables": [{"name": "amount", "operator": "gt", "value": 100}],
        "sorting": [{"sortBy": "priority", "sortOrder": "desc"}],
    }
    assert [by_id[i] for i in _ids(rest, **body)] == ["c", "b"]
    body["sorting"] = [
        {"sortBy": "dueDate", "sortOrder": "asc"},
        {"sortBy": "id", "sortOrder": "asc"},
    ]
    assert [by_id[i] for i in _ids(rest, **body)] == ["b", "c"]
    body = {
        "taskVariables": [{"name": "note", "operator": "eq", "value": "urgent"}],
        "minPriority": 5,
        "processDefinitionKey": "review",
    }
    assert [by_id[i] for i in _ids(rest, **body)] == ["a"]
    paged = rest.post(
        "/task",
        params={"firstResult": "1", "maxResults": "1"},
        json={"sorting": [{"sortBy": "priority", "sortOrder": "asc"}]},
    )
    assert [by_id[row["id"]] for row in paged.json()] == ["b"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"processVariables": [{"name": "amount", "operator": "between", "value": 1}]}, "operator"),
        ({"sorting": [{"sortBy": "colour", "sortOrder": "asc"}]}, "sortBy"),
        ({"sorting": [{"sortBy": "priority", "sortOrder": "up"}]}, "sortOrder"),
        ({"dueBefore": "soon"}, "dueBefore"),
        ({"minPriority": "high"}, "minPriority"),
    ],
)
def test_post_query_refuses_bad_filters_naming_them(
    reviews: httpx.Client, body: dict[str, Any], named: str
) -> None:
    response = reviews.post("/task", json=body)
    assert response.status_code == 400, response.text
    assert named in response.json()["message"]


# -- comments and attachments ---------------------------------------------------------------------

# CommentDto and AttachmentDto in Camunda 7.24's reference.
COMMENT_FIELDS = {
    "id",
    "userId",
    "time",
    "taskId",
    "processInstanceId",
    "message",
    "removalTime",
    "rootProcessInstanceId",
    "links",
}
ATTACHMENT_FIELDS = {
    "id",
    "name",
    "description",
    "taskId",
    "type",
    "url",
    "createTime",
    "removalTime",
    "rootProcessInstanceId",
    "links",
}


def test_comments(server: LiveServer, reviews: httpx.Client) -> None:
    rest = reviews
    instance, task = _review(rest)
    assert rest.get(f"/task/{task}").json()["comment"] is False
    created = rest.post(f"/task/{task}/comment/create", json={"message": "Looks fine"})
    assert created.status_code == 200, created.text
    comment = created.json()
    assert set(comment) == COMMENT_FIELDS
    assert (comment["userId"], comment["taskId"], comment["message"]) == (
        "admin",
        task,
        "Looks fine",
    )
    assert comment["processInstanceId"] == instance
    assert comment["links"] == [
        {
            "method": "GET",
            "href": f"{server.url}/engine-rest/task/{task}/comment/{comment['id']}",
            "rel": "self",
        }
    ]
    assert (rest.get(f"/task/{task}").json()["comment"], _tasks_of(rest, instance)) == (
        True,
        {"Review": task},
    )
    rest.post(f"/task/{task}/comment/create", json={"message": "Second"})
    listed = rest.get(f"/task/{task}/comment").json()
    assert [c["message"] for c in listed] == ["Looks fine", "Second"]
    one = rest.get(f"/task/{task}/comment/{comment['id']}")
    assert one.status_code == 200
    assert {k: v for k, v in one.json().items() if k != "links"} == {
        k: v for k, v in comment.items() if k != "links"
    }
    # Kept once the task is done.
    assert rest.post(f"/task/{task}/complete", json={}).status_code == 204
    assert len(rest.get(f"/task/{task}/comment").json()) == 2
    operations = [e["operation"] for e in audit_entries(server, "Task") if e["entityId"] == task]
    assert operations == ["AddComment", "AddComment", "Complete"]


def test_comment_refusals(reviews: httpx.Client) -> None:
    rest = reviews
    _, task = _review(rest)
    missing = "00000000-0000-4000-8000-000000000003"
    response = rest.get(f"/task/{missing}/comment")
    assert response.status_code == 404
    assert response.json() == {
        "type": "InvalidRequestException",
        "message": f"No task found for task id {missing}",
    }
    response = rest.post(f"/task/{missing}/comment/create", json={"message": "x"})
    assert response.status_code == 400
    assert response.json()["message"] == f"No task found for task id {missing}"
    response = rest.get(f"/task/{task}/comment/{missing}")
    assert response.status_code == 404
    assert response.json() == {
        "type": "InvalidRequestException",
        "message": f"Task comment with id {missing} does not exist for task id {task}.",
    }
    response = rest.post(f"/task/{task}/comment/create", json={})
    assert response.status_code == 400
    assert "message" in response.json()["message"]
    assert rest.get(f"/task/{task}/comment").json() == []


def test_attachments_as_files_and_links(server: LiveServer, reviews: httpx.Client) -> None:
    rest = reviews
    _, task = _review(rest)
    payload = b"<html><script>alert(1)</script></html>"
    created = rest.post(
        f"/task/{task}/attachment/create",
        data={
            "attachment-name": "invoice.html",
            "attachment-description": "the supplier's invoice",
            "attachment-type": "text/html",
        },
        files={"content": ("invoice.html", payload, "text/html")},
    )
    assert created.status_code == 200, created.text
    attachment = created.json()
    assert set(attachment) == ATTACHMENT_FIELDS
    assert (attachment["name"], attachment["description"], attachment["type"]) == (
        "invoice.html",
        "the supplier's invoice",
        "text/html",
    )
    assert attachment["url"] is None
    flags = rest.get(f"/task/{task}").json()
    assert (flags["attachment"], flags["comment"]) == (True, False)
    assert attachment["links"][0]["href"].endswith(f"/task/{task}/attachment/{attachment['id']}")
    linked = rest.post(
        f"/task/{task}/attachment/create",
        data={"attachment-name": "order", "url": "https://shop.example/orders/7"},
    )
    assert linked.status_code == 200, linked.text
    listed = rest.get(f"/task/{task}/attachment").json()
    assert [a["name"] for a in listed] == ["invoice.html", "order"]
    assert listed[1]["url"] == "https://shop.example/orders/7"
    one = rest.get(f"/task/{task}/attachment/{attachment['id']}")
    assert one.status_code == 200 and one.json()["name"] == "invoice.html"
    data = rest.get(f"/task/{task}/attachment/{attachment['id']}/data")
    assert data.status_code == 200
    assert data.content == payload
    # Never inline, never sniffed: the raw-file headers of every download.
    assert data.headers["content-type"] == "application/octet-stream"
    assert data.headers["content-disposition"] == 'attachment; filename="invoice.html"'
    assert data.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in data.headers["content-security-policy"]
    no_data = rest.get(f"/task/{task}/attachment/{linked.json()['id']}/data")
    assert no_data.status_code == 404
    deleted = rest.delete(f"/task/{task}/attachment/{attachment['id']}")
    assert deleted.status_code == 204
    assert [a["name"] for a in rest.get(f"/task/{task}/attachment").json()] == ["order"]
    again = rest.delete(f"/task/{task}/attachment/{attachment['id']}")
    assert again.status_code == 404
    assert again.json() == {
        "type": "InvalidRequestException",
        "message": "Deletion is not possible. No attachment exists for task id "
        f"'{task}' and attachment id '{attachment['id']}'.",
    }
    operations = [e["operation"] for e in audit_entries(server, "Task") if e["entityId"] == task]
    assert operations == ["AddAttachment", "AddAttachment", "DeleteAttachment"]


def test_attachment_refusals(reviews: httpx.Client) -> None:
    rest = reviews
    _, task = _review(rest)
    missing = "00000000-0000-4000-8000-000000000004"
    response = rest.get(f"/task/{missing}/attachment")
    assert response.status_code == 404
    assert response.json()["message"] == f"No task found for task id {missing}"
    response = rest.get(f"/task/{task}/attachment/{missing}")
    assert response.status_code == 404
    assert response.json() == {
        "type": "InvalidRequestException",
        "message": f"Task attachment with id {missing} does not exist for task id {task}.",
    }
    response = rest.post(f"/task/{missing}/attachment/create", data={"attachment-name": "x"})
    assert response.status_code == 400


# -- deployed forms -------------------------------------------------------------------------------

FORM_HTML = b'<form role="form"><input cam-variable-name="amount" type="number"/></form>'


def _with_form(key: str, form_key: str, where: str = "task") -> str:
    start = f' camunda:formKey="{form_key}"' if where == "start" else ""
    task = f' camunda:formKey="{form_key}"' if where == "task" else ""
    return (
        HEADER.format(key=key)
        + f'  <bpmn:process id="{key}" isExecutable="true">\n'
        + f'    <bpmn:startEvent id="Start"{start} />\n'
        + f'    <bpmn:userTask id="Fill" name="Fill in"{task} />\n'
        + '    <bpmn:endEvent id="End" />\n'
        + '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Fill" />\n'
        + '    <bpmn:sequenceFlow id="f2" sourceRef="Fill" targetRef="End" />\n'
        + "  </bpmn:process>\n</bpmn:definitions>\n"
    )


def test_deployed_forms_are_the_deployments_files(rest: httpx.Client) -> None:
    processes = [
        ("filled", "embedded:deployment:forms/fill.html", "task"),
        ("started", "deployment:forms/fill.html", "start"),
        ("elsewhere", "app:forms/fill.html", "task"),
        ("lost", "embedded:deployment:forms/gone.html", "task"),
    ]
    files = [
        (f"data{i}", (f"{key}.bpmn", _with_form(key, form_key, where).encode(), "text/xml"))
        for i, (key, form_key, where) in enumerate(processes)
    ]
    files.append(("data9", ("forms/fill.html", FORM_HTML, "text/html")))
    created = rest.post("/deployment/create", data={"deployment-name": "forms"}, files=files)
    assert created.status_code == 200, created.text
    tasks = {}
    for key in ("filled", "elsewhere", "lost"):
        tasks[key] = _tasks_of(rest, start(rest, key)["id"])["Fill"]
    served = rest.get(f"/task/{tasks['filled']}/deployed-form")
    assert served.status_code == 200, served.text
    assert served.content == FORM_HTML
    assert served.headers["content-type"].startswith("application/xhtml+xml")
    assert served.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in served.headers["content-security-policy"]
    start_form = rest.get("/process-definition/key/started/deployed-start-form")
    assert start_form.status_code == 200 and start_form.content == FORM_HTML
    elsewhere = rest.get(f"/task/{tasks['elsewhere']}/deployed-form")
    assert elsewhere.status_code == 400
    assert elsewhere.json() == {
        "type": "InvalidRequestException",
        "message": "The form key 'app:forms/fill.html' does not reference a deployed form.",
    }
    lost = rest.get(f"/task/{tasks['lost']}/deployed-form")
    assert lost.status_code == 404
    assert "forms/gone.html" in lost.json()["message"]
    missing = rest.get("/task/00000000-0000-4000-8000-000000000005/deployed-form")
    assert missing.status_code == 404
    no_key = rest.get("/process-definition/key/filled/deployed-start-form")
    assert no_key.status_code == 400
    assert no_key.json()["message"] == "The form key is not set."


# -- rendered forms -------------------------------------------------------------------------------

LEAVE = Path(__file__).parent.parent / "data" / "bpmn" / "leave_request.bpmn"


def test_rendered_forms_of_generated_forms(rest: httpx.Client, reviews: httpx.Client) -> None:
    deploy(rest, ("leave_request.bpmn", LEAVE.read_text()))
    start_form = rest.get("/process-definition/key/leave_request/rendered-form")
    assert start_form.status_code == 200, start_form.text
    assert start_form.headers["content-type"].startswith("application/xhtml+xml")
    assert start_form.headers["x-content-type-options"] == "nosniff"
    html = start_form.text
    assert html.startswith('<form class="form-horizontal">')
    assert 'cam-variable-name="days" cam-variable-type="Long"' in html
    assert 'cam-variable-name="firstDay" cam-variable-type="Date"' in html
    assert '<label for="employee">Employee</label>' in html
    started = start(
        rest,
        "leave_request",
        {"employee": {"value": "ann", "type": "String"}, "days": {"value": 3, "type": "Long"}},
    )
    task = _tasks_of(rest, started["id"])["Task_Approve"]
    rendered = rest.get(f"/task/{task}/rendered-form")
    assert rendered.status_code == 200, rendered.text
    html = rendered.text
    assert '<select class="form-control" name="decision" cam-variable-name="decision"' in html
    assert 'cam-variable-type="String" required="required"><option value="approve">' in html
    assert (
        'name="employee" cam-variable-name="employee" cam-variable-type="String" readonly=' in html
    )
    assert 'type="checkbox" name="notify" cam-variable-name="notify"' in html
    # A task without a generated form has none to render: Camunda's 404.
    _, plain = _review(reviews)
    response = rest.get(f"/task/{plain}/rendered-form")
    assert response.status_code == 404
    assert response.json() == {
        "type": "InvalidRequestException",
        "message": f"No matching rendered form for task with the id {plain} found.",
    }


def test_a_rendered_form_escapes_every_text_of_the_model() -> None:
    field = FormField(
        id='x" onclick="alert(1)',
        label="<script>alert(1)</script>",
        type="enum",
        values=(('a"><script>', "<b>bold</b>"),),
    )
    html = render(Form(fields=(field,), variables={}))
    assert "<script>" not in html and "<b>" not in html
    assert 'onclick="alert' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
