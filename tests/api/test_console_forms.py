"""Generated forms in the console over HTTP: the inputs a task's form and a start form draw, a
refused submission answered in place (each error by its field, the entered values kept, nothing
written), and an accepted one writing typed variables."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.builder import ProcessBuilder
from engine.language.forms import FormField
from engine.language.variables import TypedValue
from tests.api.test_sessions import Browser
from tests.server import LiveServer

LEAVE = Path(__file__).parent.parent / "data" / "bpmn" / "leave_request.bpmn"


@pytest.fixture
def operator_browser(api: LiveServer) -> Iterator[Browser]:
    api.engine.deploy(LEAVE)
    browser = Browser(api.url, "operator")
    yield browser
    browser.close()


def inputs(html: str) -> list[str]:
    """Every input and select of the page, as written, in order."""
    return re.findall(r"<(?:input|select) [^>]*>", html)


def test_start_form_draws_inputs_and_answers_errors_in_place(
    api: LiveServer, operator_browser: Browser
) -> None:
    page = operator_browser.get("/definitions/leave_request")
    assert page.status_code == 200
    form_id = "start-form-leave_request"
    drawn = [tag for tag in inputs(page.text) if f'id="{form_id}-' in tag]
    assert drawn == [
        f'<input type="text" id="{form_id}-1" name="employee" value="" required="required" '
        'minlength="2">',
        f'<input type="number" id="{form_id}-2" name="days" value="1" step="1" '
        'required="required" min="1" max="30">',
        f'<input type="date" id="{form_id}-3" name="firstDay" value="">',
    ]
    before = api.engine.instance_counts()
    refused = operator_browser.post(
        "/definitions/leave_request/start?version=1",
        data={"employee": "A", "days": "40", "firstDay": "2027-02-01"},
    )
    assert refused.status_code == 400, refused.text
    assert f'id="{form_id}-1-error">must be at least 2 characters long</p>' in refused.text
    assert f'id="{form_id}-2-error">must be at most 30</p>' in refused.text
    assert 'name="days" value="40"' in refused.text
    assert 'name="firstDay" value="2027-02-01"' in refused.text
    assert 'aria-invalid="true"' in refused.text
    assert api.engine.instance_counts() == before

    started = operator_browser.post(
        "/definitions/leave_request/start?version=1",
        data={"employee": "Ann", "days": "2", "firstDay": "2027-02-01"},
    )
    assert started.status_code == 200, started.text
    found = re.search(r'href="/instances/([0-9a-f-]{36})"', started.text)
    assert found
    variables = api.engine.instance(found.group(1)).typed_variables()
    assert (variables["employee"], variables["days"]) == (
        TypedValue("string", "Ann"),
        TypedValue("long", 2),
    )


def test_task_form_in_the_inbox_and_the_inspector(
    api: LiveServer, operator_browser: Browser
) -> None:
    handle = api.engine.start_latest(
        "leave_request", form={"employee": "Ann", "days": "5", "firstDay": "01/02/2027"}
    )
    (task,) = handle.user_tasks()
    form_id = f"task-form-{task.id}"
    for path in ("/tasks", f"/instances/{handle.id}/panel/user_tasks"):
        page = operator_browser.get(path)
        assert page.status_code == 200
        found = re.search(f'<form class="generated-form" id="{form_id}".*?</form>', page.text, re.S)
        assert found
        drawn = inputs(found.group(0))
        assert drawn == [
            f'<input type="text" id="{form_id}-1" name="employee" value="Ann" disabled="disabled">',
            f'<select id="{form_id}-2" name="decision" required="required">',
            f'<input type="number" id="{form_id}-3" name="approvedDays" value="5" step="1" '
            'min="0" max="30">',
            f'<input type="text" id="{form_id}-4" name="comment" value="" maxlength="200">',
            '<input type="hidden" name="notify" value="false">',
            f'<input type="checkbox" id="{form_id}-5" name="notify" value="true" checked>',
            f'<input type="date" id="{form_id}-6" name="returnDate" value="">',
        ]
        assert '<option value="approve" selected>Approve</option>' in page.text

    before = handle.typed_variables()
    refused = operator_browser.post(
        f"/tasks/{task.id}/form",
        data={"decision": "reject", "approvedDays": "-1", "comment": "x" * 201, "notify": "false"},
    )
    assert refused.status_code == 400, refused.text
    assert f'id="{form_id}-3-error">must be at least 0</p>' in refused.text
    assert f'id="{form_id}-4-error">must be at most 200 characters long</p>' in refused.text
    assert '<option value="reject" selected>Reject</option>' in refused.text
    assert 'name="approvedDays" value="-1"' in refused.text
    assert f'<input type="checkbox" id="{form_id}-5" name="notify" value="true">' in refused.text
    assert handle.typed_variables() == before
    assert [t.id for t in handle.user_tasks()] == [task.id]

    done = operator_browser.post(
        f"/tasks/{task.id}/form",
        data={"decision": "reject", "approvedDays": "0", "notify": "false", "returnDate": ""},
    )
    assert done.status_code == 200, done.text
    assert "Task completed." in done.text
    variables = handle.typed_variables()
    assert {k: variables[k] for k in ("decision", "approvedDays", "notify", "employee")} == {
        "decision": TypedValue("string", "reject"),
        "approvedDays": TypedValue("long", 0),
        "notify": TypedValue("boolean", False),
        "employee": TypedValue("string", "Ann"),
    }
    assert "returnDate" not in variables and "comment" not in variables
    assert handle.user_tasks() == []


def test_a_viewer_cannot_submit_a_form(api: LiveServer) -> None:
    api.engine.deploy(LEAVE)
    handle = api.engine.start_latest(
        "leave_request", form={"employee": "Ann", "days": "5", "firstDay": ""}
    )
    (task,) = handle.user_tasks()
    viewer = Browser(api.url, "viewer")
    try:
        answer = viewer.post(f"/tasks/{task.id}/form", data={"decision": "approve"})
        assert answer.status_code == 403, answer.text
        assert [t.id for t in handle.user_tasks()] == [task.id]
    finally:
        viewer.close()


def test_form_text_from_the_model_is_escaped_and_a_post_needs_the_csrf_token(
    api: LiveServer, operator_browser: Browser
) -> None:
    hostile = '<img src=x onerror="alert(1)">'
    model = (
        ProcessBuilder("escaped_form")
        .start_event("s")
        .user_task(
            "t",
            form_fields=[
                FormField(id="pick", label=hostile, type="enum", values=(("a", hostile),)),
                FormField(id="note", label="Note", default=hostile),
            ],
        )
        .end_event("e")
        .chain("s", "t", "e")
        .build()
    )
    api.engine.deploy(model)
    handle = api.engine.start_latest("escaped_form")
    (task,) = handle.user_tasks()
    page = operator_browser.get("/tasks")
    assert hostile not in page.text
    escaped = "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;"
    assert f'<option value="a">{escaped}</option>' in page.text
    assert f'name="note" value="{escaped}"' in page.text

    forged = operator_browser.post(
        f"/tasks/{task.id}/form", data={"pick": "a"}, headers={"X-CSRF-Token": "forged"}
    )
    assert forged.status_code == 403, forged.text
    assert [t.id for t in handle.user_tasks()] == [task.id]
