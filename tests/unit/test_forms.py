"""Generated task forms: reading camunda:formData, and what a submitted form becomes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import BadRequest, ModelError
from engine.language.forms import (
    FormField,
    FormInvalid,
    form_value,
    input_text,
    shown_value,
    submit,
)
from engine.language.variables import TypedValue
from engine.model import StartEvent, UserTask
from tests.unit.test_bpmn_parser import line_of

DATA = Path(__file__).parent.parent / "data" / "bpmn"

DAYS = FormField(
    id="days",
    type="long",
    constraints=(("required", None), ("min", "1"), ("max", "30")),
)
NAME = FormField(id="name", constraints=(("minlength", "2"), ("maxlength", "5")))
REQUIRED_NAME = FormField(id="name", constraints=(("required", None),))
FLAG = FormField(id="flag", type="boolean")
DAY = FormField(id="day", type="date")
US_DAY = FormField(id="day", type="date", date_pattern="MM-dd-yyyy HH:mm")
CHOICE = FormField(id="choice", type="enum", values=(("a", "A"), ("b", None)))
DEFAULTED = FormField(id="count", type="long", default="7")
FROM_VARIABLE = FormField(id="count", type="long", default="${base + 1}")
LOCKED = FormField(id="ref", default="R-1", constraints=(("readonly", None),))


def outcome(form_field: FormField, raw: Any, current: Any = "absent") -> Any:
    """A single-field submission: the variable written (type, value), nothing (None), or the
    error of the field."""
    variables = {"base": TypedValue("long", 4)}
    if current != "absent":
        variables[form_field.id] = current
    submitted = {} if raw == "absent" else {form_field.id: raw}
    try:
        written = submit([form_field], submitted, variables)
    except FormInvalid as error:
        assert list(error.errors) == [form_field.id]
        return ("error", error.errors[form_field.id])
    found = written.get(form_field.id)
    return None if found is None else (found.type, found.value)


def midnight(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


# (field, submitted, current variable or "absent") -> written (type, value), None, or error
TABLE: list[tuple[FormField, Any, Any, Any]] = [
    (DAYS, "12", "absent", ("long", 12)),
    (DAYS, " 12 ", "absent", ("long", 12)),
    (DAYS, 12, "absent", ("long", 12)),
    (DAYS, 12.0, "absent", ("long", 12)),
    (DAYS, "-3", "absent", ("error", "must be at least 1")),
    (DAYS, "31", "absent", ("error", "must be at most 30")),
    (DAYS, "1", "absent", ("long", 1)),
    (DAYS, "30", "absent", ("long", 30)),
    (DAYS, "twelve", "absent", ("error", "must be a whole number, not 'twelve'")),
    (DAYS, "1.5", "absent", ("error", "must be a whole number, not '1.5'")),
    (DAYS, 1.5, "absent", ("error", "must be a whole number")),
    (DAYS, True, "absent", ("error", "must be a whole number")),
    (DAYS, "", "absent", ("error", "is required")),
    (DAYS, "absent", "absent", ("error", "is required")),
    (DAYS, None, "absent", ("error", "is required")),
    # required is met by a variable that already holds a value; nothing is written
    (DAYS, "", TypedValue("long", 5), None),
    (DAYS, "", TypedValue("null", None), ("error", "is required")),
    (NAME, "Ann", "absent", ("string", "Ann")),
    (NAME, "A", "absent", ("error", "must be at least 2 characters long")),
    (NAME, "Annabel", "absent", ("error", "must be at most 5 characters long")),
    (NAME, "", "absent", ("error", "must be at least 2 characters long")),
    (NAME, "absent", "absent", None),
    (NAME, 12, "absent", ("error", "must be text")),
    (REQUIRED_NAME, "", "absent", ("error", "is required")),
    (REQUIRED_NAME, "", TypedValue("string", "Ann"), ("error", "is required")),
    (REQUIRED_NAME, "absent", TypedValue("string", "Ann"), None),
    (REQUIRED_NAME, " ", "absent", ("string", " ")),
    (FLAG, "true", "absent", ("boolean", True)),
    (FLAG, "FALSE", "absent", ("boolean", False)),
    (FLAG, False, "absent", ("boolean", False)),
    (FLAG, "yes", "absent", ("error", "must be true or false")),
    (FLAG, 1, "absent", ("error", "must be true or false")),
    (FLAG, "", "absent", None),
    (DAY, "04/12/2026", "absent", ("date", midnight(2026, 12, 4))),
    (DAY, "2026-12-04", "absent", ("date", midnight(2026, 12, 4))),
    (
        DAY,
        "2026-12-04T10:30:00+01:00",
        "absent",
        ("date", datetime.fromisoformat("2026-12-04T10:30:00+01:00")),
    ),
    (DAY, "2026-12-04T00:00:00.000+0000", "absent", ("date", midnight(2026, 12, 4))),
    (DAY, midnight(2026, 12, 4), "absent", ("date", midnight(2026, 12, 4))),
    (DAY, "31/02/2026", "absent", ("error", "must be a date as dd/MM/yyyy, not '31/02/2026'")),
    (DAY, "12/31/2026", "absent", ("error", "must be a date as dd/MM/yyyy, not '12/31/2026'")),
    (DAY, "tomorrow", "absent", ("error", "must be a date as dd/MM/yyyy, not 'tomorrow'")),
    (DAY, 20261204, "absent", ("error", "must be a date as dd/MM/yyyy")),
    (US_DAY, "12-04-2026 09:30", "absent", ("date", datetime(2026, 12, 4, 9, 30, tzinfo=UTC))),
    (US_DAY, "2026-12-04", "absent", ("date", midnight(2026, 12, 4))),
    (
        US_DAY,
        "04/12/2026",
        "absent",
        ("error", "must be a date as MM-dd-yyyy HH:mm, not '04/12/2026'"),
    ),
    (CHOICE, "a", "absent", ("string", "a")),
    (CHOICE, "b", "absent", ("string", "b")),
    (CHOICE, "A", "absent", ("error", "must be one of a, b")),
    (CHOICE, "", "absent", None),
    (DEFAULTED, "absent", "absent", ("long", 7)),
    (DEFAULTED, "", TypedValue("long", 3), ("long", 7)),
    (DEFAULTED, "9", "absent", ("long", 9)),
    (FROM_VARIABLE, "absent", "absent", ("long", 5)),
    (LOCKED, "absent", "absent", ("string", "R-1")),
    (LOCKED, "R-1", "absent", ("string", "R-1")),
    (LOCKED, "R-2", "absent", ("error", "is read-only")),
    (LOCKED, "R-9", TypedValue("string", "R-9"), None),
    (LOCKED, "R-1", TypedValue("string", "R-9"), ("error", "is read-only")),
    (LOCKED, "absent", TypedValue("string", "R-9"), None),
]


@pytest.mark.parametrize(("form_field", "raw", "current", "expected"), TABLE)
def test_submitted_values_become_typed_variables_or_errors(
    form_field: FormField, raw: Any, current: Any, expected: Any
) -> None:
    assert outcome(form_field, raw, current) == expected


def test_every_field_at_fault_is_named_and_nothing_is_returned() -> None:
    with pytest.raises(FormInvalid) as caught:
        submit([DAYS, NAME, FLAG], {"days": "0", "name": "Ann", "flag": "maybe"}, {})
    assert caught.value.errors == {"days": "must be at least 1", "flag": "must be true or false"}
    assert caught.value.detail == {"fields": caught.value.errors}
    assert caught.value.message == (
        "the form is not valid: field 'days' must be at least 1; field 'flag' must be true or false"
    )
    assert isinstance(caught.value, BadRequest)


def test_submitted_names_that_are_no_field_are_not_written() -> None:
    assert submit([FLAG], {"flag": "true", "other": "x"}, {}) == {
        "flag": TypedValue("boolean", True)
    }


def test_what_a_form_shows() -> None:
    variables = {"base": TypedValue("long", 4), "day": TypedValue("date", midnight(2026, 1, 2))}
    assert form_value(FROM_VARIABLE, variables) == TypedValue("long", 5)
    assert form_value(DAY, variables) == TypedValue("string", "02/01/2026")
    assert form_value(FLAG, variables) == TypedValue("boolean", None)
    assert form_value(DAYS, {}) == TypedValue("long", None)
    assert form_value(DAY, {}) == TypedValue("string", None)
    assert form_value(DEFAULTED, {}) == TypedValue("long", 7)
    assert form_value(CHOICE, {"choice": TypedValue("string", "b")}) == TypedValue("string", "b")
    assert input_text(DAY, shown_value(DAY, variables)) == "2026-01-02"
    assert form_value(US_DAY, variables) == TypedValue("string", "01-02-2026 00:00")
    assert input_text(FLAG, True) == "true"
    with pytest.raises(BadRequest, match="form field 'count': defaultValue '\\$\\{base \\+ 1\\}'"):
        shown_value(FROM_VARIABLE, {})


# --- parsing ------------------------------------------------------------------------------------


def test_form_data_of_a_start_event_and_a_user_task_is_read() -> None:
    (model,) = parse_bpmn((DATA / "leave_request.bpmn").read_bytes(), "leave_request.bpmn")
    start = model.none_start
    assert isinstance(start, StartEvent)
    assert start.form_fields == (
        FormField(
            id="employee",
            label="Employee",
            constraints=(("required", None), ("minlength", "2")),
        ),
        FormField(
            id="days",
            label="Days",
            type="long",
            default="1",
            constraints=(("required", None), ("min", "1"), ("max", "30")),
        ),
        FormField(id="firstDay", label="First day", type="date"),
    )
    task = model.node("Task_Approve")
    assert isinstance(task, UserTask)
    assert [(f.id, f.type, f.default) for f in task.form_fields] == [
        ("employee", "string", None),
        ("decision", "enum", "approve"),
        ("approvedDays", "long", "${days}"),
        ("comment", "string", None),
        ("notify", "boolean", "true"),
        ("returnDate", "date", None),
    ]
    decision = task.form_fields[1]
    assert decision.values == (("approve", "Approve"), ("reject", "Reject"))
    assert task.form_fields[2].properties == (("unit", "working days"),)
    assert task.form_fields[0].readonly
    again = parse_bpmn(write_bpmn([model]))
    assert again == [model]
    written = again[0].node("Task_Approve")
    assert isinstance(written, UserTask)
    assert written.form_fields[2].properties == (("unit", "working days"),)


def _task_with(form_field: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"\n'
        '    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d">\n'
        '  <bpmn:process id="p" isExecutable="true">\n'
        '    <bpmn:startEvent id="s" />\n'
        '    <bpmn:userTask id="t">\n'
        "      <bpmn:extensionElements>\n"
        "        <camunda:formData>\n"
        f"          {form_field}\n"
        "        </camunda:formData>\n"
        "      </bpmn:extensionElements>\n"
        "    </bpmn:userTask>\n"
        '    <bpmn:sequenceFlow id="f" sourceRef="s" targetRef="t" />\n'
        "  </bpmn:process>\n"
        "</bpmn:definitions>\n"
    )


@pytest.mark.parametrize(
    ("form_field", "mark", "message"),
    [
        (
            '<camunda:formField id="amount" type="money" />',
            'type="money"',
            "form field 'amount': form field type 'money' is not supported by this engine "
            "(custom form field types are not; the types are string, long, boolean, date, enum)",
        ),
        (
            '<camunda:formField id="iban" type="string"><camunda:validation>'
            '<camunda:constraint name="validator" config="com.acme.IbanValidator" />'
            "</camunda:validation></camunda:formField>",
            'id="iban"',
            "form field 'iban': validation constraint 'validator' is not supported by this "
            "engine (custom validators are not; the constraints are required, readonly, "
            "minlength, maxlength, min, max)",
        ),
        (
            '<camunda:formField id="n" type="long"><camunda:validation>'
            '<camunda:constraint name="min" config="one" /></camunda:validation>'
            "</camunda:formField>",
            'id="n"',
            "form field 'n': constraint 'min' needs a whole number as its config, not 'one'",
        ),
        (
            '<camunda:formField id="n" type="string"><camunda:validation>'
            '<camunda:constraint name="max" config="3" /></camunda:validation>'
            "</camunda:formField>",
            'id="n"',
            "form field 'n': constraint 'max' applies to long fields only",
        ),
        (
            '<camunda:formField id="e" type="enum" />',
            'id="e"',
            "form field 'e': an enum form field needs at least one camunda:value",
        ),
        (
            '<camunda:formField id="n" type="long" defaultValue="many" />',
            'id="n"',
            "form field 'n': defaultValue 'many' does not fit: the value must be a whole "
            "number, not 'many'",
        ),
        (
            '<camunda:formField id="n" type="long" defaultValue="${a +}" />',
            'id="n"',
            "form field 'n': defaultValue: unexpected end of expression: ${a +}",
        ),
        (
            '<camunda:formField id="d" type="date" datePattern="yyyy-MM-dd\'T\'HH:mm" />',
            "datePattern",
            "form field 'd': datePattern 'yyyy-MM-dd'T'HH:mm' is not supported by this engine "
            "(it reads the letters yyyy, MM, dd, HH, mm and ss, without quoted text)",
        ),
        (
            '<camunda:formField id="d" type="date" datePattern="EEE dd/MM" />',
            "datePattern",
            "form field 'd': datePattern 'EEE dd/MM' is not supported by this engine "
            "(it reads the letters yyyy, MM, dd, HH, mm and ss, without quoted text)",
        ),
        (
            '<camunda:formField id="s" type="string" datePattern="dd/MM/yyyy" />',
            "datePattern",
            "form field 's': datePattern belongs to date fields only",
        ),
        (
            '<camunda:formField type="long" />',
            "<camunda:formField",
            "camunda:formField has no id",
        ),
    ],
)
def test_forms_the_engine_cannot_run_fail_the_deployment(
    form_field: str, mark: str, message: str
) -> None:
    text = _task_with(form_field)
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "form.bpmn")
    error = caught.value
    assert (error.file, error.line, error.element_id) == ("form.bpmn", line_of(text, mark), "t")
    assert error.message == f"form.bpmn, line {line_of(text, mark)}, element 't': {message}"


def test_the_builder_checks_and_keeps_form_fields() -> None:
    model = (
        ProcessBuilder("built_form")
        .start_event("s", form_fields=[DAYS])
        .user_task("t", form_fields=[CHOICE, FLAG, LOCKED, US_DAY])
        .end_event("e")
        .chain("s", "t", "e")
        .build()
    )
    assert parse_bpmn(write_bpmn([model])) == [model]
    with pytest.raises(ModelError, match="form field 'x': form field type 'money'"):
        ProcessBuilder("bad").start_event("s", form_fields=[FormField(id="x", type="money")])
    with pytest.raises(ModelError, match="form field 'x' is declared twice"):
        ProcessBuilder("bad").user_task("t", form_fields=[FormField(id="x"), FormField(id="x")])


def test_a_form_business_key_and_unknown_form_elements_fail_the_deployment() -> None:
    keyed = _task_with('<camunda:formField id="ref" />').replace(
        "<camunda:formData>", '<camunda:formData businessKey="ref">'
    )
    with pytest.raises(ModelError) as caught:
        parse_bpmn(keyed, "keyed.bpmn")
    assert caught.value.message == (
        f"keyed.bpmn, line {line_of(keyed, 'businessKey')}, element 't': camunda:formData "
        "businessKey is not supported by this engine"
    )
    unknown = _task_with('<camunda:formField id="x"><camunda:widget /></camunda:formField>')
    with pytest.raises(ModelError) as caught:
        parse_bpmn(unknown, "unknown.bpmn")
    assert caught.value.message == (
        f"unknown.bpmn, line {line_of(unknown, 'widget')}, element 't': camunda:widget is not "
        "supported by this engine"
    )
    twice = _task_with('<camunda:formField id="x" /><camunda:formField id="x" type="long" />')
    with pytest.raises(ModelError, match="form field 'x' is declared twice"):
        parse_bpmn(twice, "twice.bpmn")
