"""Generated forms through the engine: a start form and a task form submitted with valid and
invalid values, against real PostgreSQL. An invalid form writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine.api import Engine
from engine.language.forms import FormInvalid
from engine.language.variables import TypedValue
from engine.states import InstanceState, TaskState
from tests.engine.processes import approval
from tests.engine.test_transactions import snapshot

LEAVE = Path(__file__).parent.parent / "data" / "bpmn" / "leave_request.bpmn"


def variable_rows(database_url: str, instance_id: Any) -> list[tuple[str, str, Any]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT name, type, value FROM variable WHERE instance_id = %s ORDER BY name",
            (instance_id,),
        ).fetchall()
    return [(name, kind, value) for name, kind, value in rows]


def test_an_invalid_start_form_starts_nothing(engine: Engine, database_url: str) -> None:
    engine.deploy(LEAVE)
    before = snapshot(database_url)
    with pytest.raises(FormInvalid) as caught:
        engine.start_latest("leave_request", form={"employee": "A", "days": "45", "firstDay": "x"})
    assert caught.value.errors == {
        "employee": "must be at least 2 characters long",
        "days": "must be at most 30",
        "firstDay": "must be a date as dd/MM/yyyy, not 'x'",
    }
    assert snapshot(database_url) == before


def test_start_form_and_task_form_write_typed_variables(engine: Engine, database_url: str) -> None:
    engine.deploy(LEAVE)
    definition = engine.latest_definition("leave_request")
    start = engine.start_form(definition.id)
    assert [f.id for f in start.fields] == ["employee", "days", "firstDay"]
    assert start.shown() == {"employee": None, "days": 1, "firstDay": None}

    handle = engine.start_latest(
        "leave_request", form={"employee": "Ann", "days": "3", "firstDay": "04/01/2027"}
    )
    assert variable_rows(database_url, handle.id) == [
        ("days", "long", 3),
        ("employee", "string", "Ann"),
        ("firstDay", "date", "2027-01-04T00:00:00+00:00"),
    ]
    (task,) = handle.user_tasks()
    _, form = engine.task_form(task.id)
    assert form.shown() == {
        "employee": "Ann",
        "decision": "approve",
        "approvedDays": 3,
        "comment": None,
        "notify": True,
        "returnDate": None,
    }
    assert form.values()["returnDate"] == TypedValue("string", None)

    # Invalid: a read-only field changed, a value out of range, a choice that is not offered.
    before = snapshot(database_url)
    with pytest.raises(FormInvalid) as caught:
        engine.complete_task(
            task.id,
            form={"employee": "Bob", "decision": "maybe", "approvedDays": "31", "notify": "on"},
        )
    assert caught.value.errors == {
        "employee": "is read-only",
        "decision": "must be one of approve, reject",
        "approvedDays": "must be at most 30",
        "notify": "must be true or false",
    }
    assert snapshot(database_url) == before
    assert engine.user_task(task.id).state == TaskState.OPEN

    engine.complete_task(
        task.id,
        {"audit": "console"},
        form={
            "employee": "Ann",
            "decision": "reject",
            "approvedDays": "0",
            "comment": "Team is short that week",
            "notify": "false",
            "returnDate": "2027-01-05",
        },
    )
    assert handle.state == InstanceState.COMPLETED
    assert variable_rows(database_url, handle.id) == [
        ("approvedDays", "long", 0),
        ("audit", "string", "console"),
        ("comment", "string", "Team is short that week"),
        ("days", "long", 3),
        ("decision", "string", "reject"),
        ("employee", "string", "Ann"),
        ("firstDay", "date", "2027-01-04T00:00:00+00:00"),
        ("notify", "boolean", False),
        ("returnDate", "date", "2027-01-05T00:00:00+00:00"),
    ]
    assert handle.typed_variables()["returnDate"] == TypedValue(
        "date", datetime(2027, 1, 5, tzinfo=UTC)
    )


def test_a_task_without_a_form_completes_with_an_empty_form(engine: Engine) -> None:
    engine.register_handler("prepare", lambda ctx: {"amount": 5})
    engine.register_handler("book", lambda ctx: None)
    engine.deploy(approval())
    handle = engine.start_latest("approval")
    (task,) = handle.user_tasks()
    _, form = engine.task_form(task.id)
    assert form.fields == ()
    engine.complete_task(task.id, {"approved": True}, form={"ignored": "x"})
    assert "ignored" not in handle.variables()
