"""Generated task forms (`camunda:formData`): the fields of a user task or a start event, what a
form shows, and what a submitted form becomes.

A field has one of Camunda's built-in types (string, long, boolean, date, enum) and the built-in
constraints (required, minlength, maxlength, min, max, readonly). `submit` turns submitted values
(text from an HTML form, or JSON values) into typed variables, or into one error per field; it
reads no database and writes nothing, so a caller that finds errors has nothing to undo.

Submitting follows Camunda 7's form handling:
- a field that is absent (missing, null, or blank text for a type other than string) takes its
  default value, if it has one, and otherwise leaves its variable as it is;
- `required` is met by a submitted value, or by a variable that already holds one; an empty
  string does not meet it;
- a `readonly` field cannot be changed: a submitted value that differs from what the form shows
  (the current variable, else the default) is refused; a read-only field's default is written
  only when its variable does not exist yet.
Dates are read as Camunda's generated forms send them (`dd/MM/yyyy`, or the field's
`datePattern`) and as ISO 8601 (`2026-12-04`, or a date and time); they are shown to clients in
the same pattern.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from engine.errors import BadRequest, ExpressionError
from engine.language.composite import compile_text, evaluate_text, has_expression
from engine.language.json_input import INT64_MAX, INT64_MIN, text_problem
from engine.language.variables import TypedValue, VariableType

FIELD_TYPES = ("string", "long", "boolean", "date", "enum")
CONSTRAINTS = ("required", "readonly", "minlength", "maxlength", "min", "max")
# Constraints with a whole number as configuration, and the field types they apply to.
_SIZED = {"minlength": "string", "maxlength": "string", "min": "long", "max": "long"}
DATE_PATTERN = "dd/MM/yyyy"
# The letters of Camunda's (Java's) date patterns this engine reads, as strftime directives.
_PATTERN_PARTS = {"yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}
_PATTERN_TOKEN = re.compile(r"yyyy|MM|dd|HH|mm|ss|[A-Za-z%']|[^A-Za-z%']+")
_WHOLE = re.compile(r"[+-]?\d{1,19}")


@dataclass(frozen=True, kw_only=True)
class FormField:
    """One `camunda:formField`: `default` as written (text, one `${...}` or a composite), enum
    `values` as (id, name) pairs, `constraints` as (name, configuration) pairs, `properties` as
    (id, value) pairs, all in document order."""

    id: str
    label: str | None = None
    type: str = "string"
    default: str | None = None
    values: tuple[tuple[str, str | None], ...] = ()
    constraints: tuple[tuple[str, str | None], ...] = ()
    # camunda:formField datePattern: how a date field's text reads (dd/MM/yyyy when absent).
    date_pattern: str | None = None
    properties: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def has(self, constraint: str) -> bool:
        return any(name == constraint for name, _ in self.constraints)

    def bound(self, constraint: str) -> int | None:
        """The whole-number configuration of `constraint`, if the field has it."""
        for name, config in self.constraints:
            if name == constraint and config is not None:
                return int(config)
        return None

    @property
    def required(self) -> bool:
        return self.has("required")

    @property
    def readonly(self) -> bool:
        return self.has("readonly")

    @property
    def text(self) -> str:
        return self.label or self.id

    @property
    def pattern(self) -> str:
        return self.date_pattern or DATE_PATTERN


def strftime_format(pattern: str) -> str | None:
    """A date pattern (`dd/MM/yyyy`, `yyyy-MM-dd HH:mm`) as a strftime format; None when it uses
    a letter other than yyyy, MM, dd, HH, mm and ss, or a quoted literal."""
    parts: list[str] = []
    for token in _PATTERN_TOKEN.findall(pattern):
        if token in _PATTERN_PARTS:
            parts.append(_PATTERN_PARTS[token])
        elif token.isalpha() or token in ("%", "'"):
            return None
        else:
            parts.append(token)
    return "".join(parts)


class FormInvalid(BadRequest):
    """A submitted form that breaks its fields' types or constraints; `errors` maps each field
    id at fault to what is wrong with it. Nothing was written."""

    code = "FormInvalid"

    def __init__(self, errors: Mapping[str, str]) -> None:
        listed = "; ".join(f"field '{name}' {problem}" for name, problem in errors.items())
        super().__init__(f"the form is not valid: {listed}", fields=dict(errors))
        self.errors = dict(errors)


class _Problem(Exception):
    """A value that does not fit its field; the message completes "field 'x' ..."."""


@dataclass(frozen=True)
class Form:
    """A generated form as it stands now: its fields and the variables in scope (a task's
    instance's variables; none for a start form)."""

    fields: tuple[FormField, ...]
    variables: Mapping[str, TypedValue]

    def shown(self) -> dict[str, Any]:
        """Each field's model value as the form shows it (None: empty)."""
        return {f.id: shown_value(f, self.variables) for f in self.fields}

    def values(self) -> dict[str, TypedValue]:
        """Each field as Camunda's form-variables answer it (see `form_value`)."""
        return {f.id: form_value(f, self.variables) for f in self.fields}


# --- deployment checks -------------------------------------------------------------------------


def field_problem(form_field: FormField) -> str | None:
    """Why a field cannot be deployed, or None: an unknown (custom) type or constraint, a
    constraint with a bad configuration, an enum without values, a default that does not fit."""
    if form_field.type not in FIELD_TYPES:
        return (
            f"form field type '{form_field.type}' is not supported by this engine (custom "
            f"form field types are not; the types are {', '.join(FIELD_TYPES)})"
        )
    for name, config in form_field.constraints:
        if name not in CONSTRAINTS:
            return (
                f"validation constraint '{name}' is not supported by this engine (custom "
                f"validators are not; the constraints are {', '.join(CONSTRAINTS)})"
            )
        if name in _SIZED:
            if _SIZED[name] != form_field.type:
                return f"constraint '{name}' applies to {_SIZED[name]} fields only"
            if config is None or not _WHOLE.fullmatch(config.strip()):
                return f"constraint '{name}' needs a whole number as its config, not {config!r}"
    if form_field.date_pattern is not None:
        if form_field.type != "date":
            return "datePattern belongs to date fields only"
        if not form_field.date_pattern or strftime_format(form_field.date_pattern) is None:
            return (
                f"datePattern '{form_field.date_pattern}' is not supported by this engine (it "
                "reads the letters yyyy, MM, dd, HH, mm and ss, without quoted text)"
            )
    if form_field.type == "enum" and not form_field.values:
        return "an enum form field needs at least one camunda:value"
    if form_field.values and form_field.type != "enum":
        return "camunda:value entries belong to enum form fields only"
    ids = [value_id for value_id, _ in form_field.values]
    if len(set(ids)) != len(ids):
        return "an enum form field names a value twice"
    default = form_field.default
    if default is not None:
        if has_expression(default):
            try:
                compile_text(default)
            except ExpressionError as error:
                return f"defaultValue: {error.message}"
        else:
            try:
                convert(form_field, default)
            except _Problem as problem:
                return f"defaultValue '{default}' does not fit: the value {problem}"
    return None


def form_problem(fields: Sequence[FormField]) -> str | None:
    """Why a form's fields cannot be deployed together, or None."""
    seen: set[str] = set()
    for form_field in fields:
        if form_field.id in seen:
            return f"form field '{form_field.id}' is declared twice"
        seen.add(form_field.id)
        problem = field_problem(form_field)
        if problem is not None:
            return f"form field '{form_field.id}': {problem}"
    return None


# --- values ------------------------------------------------------------------------------------


def _absent(form_field: FormField, raw: Any) -> bool:
    if raw is None:
        return True
    return isinstance(raw, str) and form_field.type != "string" and not raw.strip()


def _date(raw: Any, pattern: str) -> datetime:
    if isinstance(raw, datetime):
        return raw if raw.tzinfo else raw.replace(tzinfo=UTC)
    if isinstance(raw, date):
        return datetime(raw.year, raw.month, raw.day, tzinfo=UTC)
    if not isinstance(raw, str):
        raise _Problem(f"must be a date as {pattern}")
    text = raw.strip()
    try:
        return datetime.strptime(text, strftime_format(pattern) or "").replace(tzinfo=UTC)
    except ValueError:
        pass
    try:
        return _date(datetime.fromisoformat(text), pattern)
    except ValueError:
        raise _Problem(f"must be a date as {pattern}, not '{text[:40]}'") from None


def _long(raw: Any) -> int:
    if isinstance(raw, bool):
        raise _Problem("must be a whole number")
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, str) and _WHOLE.fullmatch(raw.strip()):
        raw = int(raw.strip())
    if not isinstance(raw, int):
        shown = f", not '{raw[:40]}'" if isinstance(raw, str) else ""
        raise _Problem(f"must be a whole number{shown}")
    if not INT64_MIN <= raw <= INT64_MAX:
        raise _Problem("is beyond the range of a long")
    return raw


def convert(form_field: FormField, raw: Any) -> Any:
    """The field's model value for a submitted value (None when absent); raises _Problem."""
    if _absent(form_field, raw):
        return None
    kind = form_field.type
    if kind == "long":
        return _long(raw)
    if kind == "boolean":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        raise _Problem("must be true or false")
    if kind == "date":
        return _date(raw, form_field.pattern)
    if not isinstance(raw, str):
        raise _Problem("must be text")
    problem = text_problem(raw)
    if problem is not None:
        raise _Problem(problem)
    if kind == "enum":
        ids = [value_id for value_id, _ in form_field.values]
        if raw not in ids:
            raise _Problem(f"must be one of {', '.join(ids)}")
    return raw


def typed(form_field: FormField, value: Any) -> TypedValue:
    """A model value as the variable it becomes: long, boolean, date, or string (enum too)."""
    if value is None:
        return TypedValue("null", None)
    kind = form_field.type
    return TypedValue(kind if kind in ("long", "boolean", "date") else "string", value)


def default_value(form_field: FormField, variables: Mapping[str, TypedValue]) -> Any:
    """The field's default as a model value (None without one): a default with `${...}` (one
    expression, or a composite such as `${first} ${last}`) is evaluated with the variables in
    scope. A default that does not fit its field is a BadRequest naming
    the field."""
    if form_field.default is None:
        return None
    raw: Any = form_field.default
    try:
        if has_expression(raw):
            plain = {name: value.value for name, value in variables.items()}
            raw = evaluate_text(raw, plain)
        return convert(form_field, raw)
    except (ExpressionError, _Problem) as error:
        reason = error.message if isinstance(error, ExpressionError) else f"the value {error}"
        raise BadRequest(
            f"form field '{form_field.id}': defaultValue {form_field.default!r}: {reason}",
            field=form_field.id,
        ) from None


def shown_value(form_field: FormField, variables: Mapping[str, TypedValue]) -> Any:
    """What the form shows in the field: the current variable as the field's model value (as it
    is when it does not fit the field), else the default (None: empty)."""
    current = variables.get(form_field.id)
    # A binary value is never shown in a field: the field starts from its default.
    binary = current is not None and current.type in (VariableType.BYTES, VariableType.FILE)
    if current is not None and current.value is not None and not binary:
        try:
            return convert(form_field, current.value)
        except _Problem:
            return current.value
    return default_value(form_field, variables)


def form_value(form_field: FormField, variables: Mapping[str, TypedValue]) -> TypedValue:
    """The field as Camunda's form-variables answer it: long and boolean typed, dates as text in
    the field's pattern (`dd/MM/yyyy`), string and enum as text."""
    value = shown_value(form_field, variables)
    if form_field.type == "date" and isinstance(value, datetime):
        return TypedValue("string", value.strftime(strftime_format(form_field.pattern) or ""))
    if form_field.type == "boolean" and (value is None or isinstance(value, bool)):
        return TypedValue("boolean", value)
    if form_field.type == "long" and (value is None or type(value) is int):
        return TypedValue("long", value)
    return TypedValue("string", None if value is None else str(value))


def input_text(form_field: FormField, value: Any) -> str:
    """A model value as an HTML input holds it: dates as ISO `yyyy-mm-dd`."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- submitting --------------------------------------------------------------------------------


def _check(form_field: FormField, value: Any, current: TypedValue | None) -> None:
    """The constraints of a (not read-only) field on its converted value; raises _Problem."""
    if form_field.required:
        kept = value is None and current is not None and current.value is not None
        if value in (None, "") and not kept:
            raise _Problem("is required")
    if value is None:
        return
    least, most = form_field.bound("minlength"), form_field.bound("maxlength")
    if least is not None and len(value) < least:
        raise _Problem(f"must be at least {least} characters long")
    if most is not None and len(value) > most:
        raise _Problem(f"must be at most {most} characters long")
    low, high = form_field.bound("min"), form_field.bound("max")
    if low is not None and value < low:
        raise _Problem(f"must be at least {low}")
    if high is not None and value > high:
        raise _Problem(f"must be at most {high}")


def _submitted(
    form_field: FormField, raw: Any, variables: Mapping[str, TypedValue]
) -> TypedValue | None:
    """The variable one field writes (None: it writes nothing); raises _Problem."""
    value = convert(form_field, raw)
    current = variables.get(form_field.id)
    if form_field.readonly:
        if value is not None and value != shown_value(form_field, variables):
            raise _Problem("is read-only")
        if current is None:
            default = default_value(form_field, variables)
            return None if default is None else typed(form_field, default)
        return None
    _check(form_field, value, current)
    if value is None:
        value = default_value(form_field, variables)
    return None if value is None else typed(form_field, value)


def submit(
    fields: Sequence[FormField],
    submitted: Mapping[str, Any],
    variables: Mapping[str, TypedValue],
) -> dict[str, TypedValue]:
    """The typed variables a submitted form writes, given the variables in scope now; raises
    FormInvalid with every field at fault. Submitted names that are no field are not looked at
    (callers decide what to do with them)."""
    values: dict[str, TypedValue] = {}
    errors: dict[str, str] = {}
    for form_field in fields:
        try:
            written = _submitted(form_field, submitted.get(form_field.id), variables)
        except _Problem as problem:
            errors[form_field.id] = str(problem)
            continue
        except BadRequest as error:
            errors[form_field.id] = error.message
            continue
        if written is not None:
            values[form_field.id] = written
    if errors:
        raise FormInvalid(errors)
    return values
