"""What a `${...}` expression may reach beyond the variables: Camunda's expression context.

Camunda evaluates expressions with the execution, the task, the authenticated user and a few
functions in reach. Here that context is an `ExpressionContext` the caller builds from what it
has, and every method or property an expression may use on a value is listed below, by type:

- `execution` (an `ExecutionFacts`): `id`, `activityId`, `processInstanceId`,
  `processBusinessKey`, `businessKey`, `processDefinitionId` and their `getX()` getters,
  `getVariable(name)`, `hasVariable(name)`; where the expression may act (a listener, an
  input/output parameter, a service task's expression: it has a `ChangeLog`),
  `setVariable(name, value)`, `setVariableLocal`, `removeVariable(name)`,
  `removeVariableLocal`, recorded for the command to apply (engine/language/acting.py).
- `task` (a `TaskFacts`, where a task is in context): `id`, `name`, `assignee`,
  `taskDefinitionKey`, `priority` and their getters, `getVariable(name)`, `hasVariable(name)`;
  in a task listener also the variable setters above, `setAssignee(user)`, `setName(text)`,
  `setDescription(text)`, `setPriority(n)`, `setDueDate(date)`, `setFollowUpDate(date)`.
- `authenticatedUserId`: the user the command runs for, or null.
- `dateTime()` (a Joda-style `DateTimeValue`) and `now()` (the moment itself, a Date in Camunda),
  both on the command's clock: `plusYears/Months/Weeks/Days/Hours/Minutes/Seconds(n)`, the same
  with `minus`, and `toDate()`.
- strings: `contains`, `startsWith`, `endsWith`, `toUpperCase`, `toLowerCase`, `length`, `trim`,
  `isEmpty`, `equals`, `equalsIgnoreCase`, `substring`.
- `S(value)` and `JSON(value)`, Camunda Spin's JSON access, and the nodes' methods (also
  callable on a JSON object or array value itself): see engine/language/spin.py.

Nothing else is callable and no Python attribute is ever read: a method is a function in these
tables, looked up by the value's exact type and the method's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from engine.errors import BadRequest
from engine.language import spin, timers
from engine.language.acting import ChangeKind, ChangeLog
from engine.language.variables import check_name, infer

if TYPE_CHECKING:
    from engine.core.runtime import InstanceRun, Token, UserTaskRow


class CallFailure(Exception):
    """A call or property read that the context refuses; the evaluator names the expression."""


@dataclass(frozen=True)
class ExecutionFacts:
    """The execution (token) an expression runs for."""

    id: str
    process_instance_id: str
    activity_id: str | None = None
    business_key: str | None = None
    process_definition_id: str | None = None
    variables: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # Where the expression may act: its acting calls are recorded here.
    changes: ChangeLog | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class TaskFacts:
    """The user task an expression runs for (a task's attributes, a task listener)."""

    id: str
    task_definition_key: str
    name: str | None = None
    assignee: str | None = None
    priority: int | None = None
    variables: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    changes: ChangeLog | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class DateTimeValue:
    """What `dateTime()` gives: a moment with calendar arithmetic; `toDate()` is the moment."""

    moment: datetime


@dataclass(frozen=True)
class ExpressionContext:
    """Everything but the variables an expression may read. `now` is the command's clock
    (`dateTime()`, `now()`); a name left None is null, or unavailable where it must be there."""

    now: datetime | None = None
    execution: ExecutionFacts | None = None
    task: TaskFacts | None = None
    authenticated_user_id: str | None = None

    def lookup(self, name: str, variables: Mapping[str, Any]) -> tuple[bool, Any]:
        """(found, value) for a top-level name the context answers (as Camunda's resolver does:
        `execution` and `task` when there is one, `authenticatedUserId` always)."""
        if name == "execution" and self.execution is not None:
            return True, self.execution
        if name == "task" and self.task is not None:
            return True, self.task
        if name == "authenticatedUserId":
            return True, self.authenticated_user_id
        return False, None


def context_for(
    run: InstanceRun,
    token: Token | None,
    values: Mapping[str, Any],
    task: TaskFacts | None = None,
    changes: ChangeLog | None = None,
    *,
    instance_execution: bool = False,
) -> ExpressionContext:
    """The context of an expression evaluated in `run` for `token` (None: for the instance, with
    no execution, unless `instance_execution`: the instance is the execution, as for a process's
    listeners), over `values`: the execution, `task` when there is one, the authenticated user
    and the command's clock; with `changes` where the expression may act."""
    execution = None
    if token is not None or instance_execution:
        execution = ExecutionFacts(
            id=str(token.id if token is not None else run.instance.id),
            process_instance_id=str(run.instance.id),
            activity_id=token.node_id if token is not None else None,
            business_key=run.instance.business_key,
            process_definition_id=run.instance.definition_id,
            variables=values,
            changes=changes,
        )
    return ExpressionContext(
        now=run.now,
        execution=execution,
        task=task,
        authenticated_user_id=run.authenticated_user_id,
    )


def task_facts(
    task: UserTaskRow, values: Mapping[str, Any], changes: ChangeLog | None = None
) -> TaskFacts:
    """A user task as expressions see it (with `changes` in a task listener, where it may act)."""
    return TaskFacts(
        id=str(task.id),
        task_definition_key=task.node_id,
        name=task.name,
        assignee=task.assignee,
        priority=task.priority,
        variables=values,
        changes=changes,
    )


# --- functions ---------------------------------------------------------------------------------


def _clock(context: ExpressionContext | None, name: str) -> datetime:
    if context is None or context.now is None:
        raise CallFailure(f"{name}() needs the command's clock, which is not given here")
    return context.now


# A function: (the fewest arguments, the most, the function of the context and the arguments).
Function = tuple[int, int, Callable[..., Any]]

FUNCTIONS: dict[str, Function] = {
    "dateTime": (0, 0, lambda context: DateTimeValue(_clock(context, "dateTime"))),
    "now": (0, 0, lambda context: _clock(context, "now")),
    "S": (1, 2, lambda context, value, *format_: spin.read(value, "S", *format_)),
    "JSON": (1, 1, lambda context, value: spin.read(value, "JSON")),
}


# --- methods and properties by type ------------------------------------------------------------


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return _TYPE_NAMES.get(type(value), type(value).__name__)


_TYPE_NAMES: dict[type, str] = {
    ExecutionFacts: "execution",
    TaskFacts: "task",
    DateTimeValue: "dateTime",
    datetime: "date",
    str: "string",
    spin.SpinJsonNode: "JSON node",
    spin.SpinList: "list of JSON nodes",
    dict: "JSON object",
    list: "JSON array",
}


def _text(value: Any, method: str) -> str:
    if not isinstance(value, str):
        raise CallFailure(f"{method}() needs a string argument, got {_type_name(value)}")
    return value


def _integer(value: Any, method: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise CallFailure(f"{method}() needs an integer argument, got {_type_name(value)}")
    return value


def _substring(text: str, *bounds: Any) -> str:
    begin = _integer(bounds[0], "substring")
    end = _integer(bounds[1], "substring") if len(bounds) > 1 else len(text)
    if not 0 <= begin <= end <= len(text):
        raise CallFailure(f"substring({begin}, {end}) is out of range for a string of {len(text)}")
    return text[begin:end]


def _equal(left: Any, right: Any) -> bool:
    return isinstance(right, type(left)) and isinstance(left, type(right)) and left == right


# A method: (the fewest arguments, the most, the function of the target and the arguments).
Method = tuple[int, int, Callable[..., Any]]

_STRING_METHODS: dict[str, Method] = {
    "contains": (1, 1, lambda s, x: _text(x, "contains") in s),
    "startsWith": (1, 1, lambda s, x: s.startswith(_text(x, "startsWith"))),
    "endsWith": (1, 1, lambda s, x: s.endswith(_text(x, "endsWith"))),
    "toUpperCase": (0, 0, str.upper),
    "toLowerCase": (0, 0, str.lower),
    "length": (0, 0, len),
    "trim": (0, 0, str.strip),
    "isEmpty": (0, 0, lambda s: not s),
    "equals": (1, 1, _equal),
    "equalsIgnoreCase": (
        1,
        1,
        lambda s, x: isinstance(x, str) and s.casefold() == x.casefold(),
    ),
    "substring": (1, 2, _substring),
}

_UNITS = ("Years", "Months", "Weeks", "Days", "Hours", "Minutes", "Seconds")


def _shift(moment: datetime, unit: str, amount: int) -> datetime:
    duration = {
        "Years": timers.Duration(years=amount),
        "Months": timers.Duration(months=amount),
        "Weeks": timers.Duration(days=7 * amount),
        "Days": timers.Duration(days=amount),
        "Hours": timers.Duration(time=timedelta(hours=amount)),
        "Minutes": timers.Duration(time=timedelta(minutes=amount)),
        "Seconds": timers.Duration(time=timedelta(seconds=amount)),
    }[unit]
    try:
        return timers.add_duration(moment, duration)
    except (ValueError, OverflowError) as error:
        raise CallFailure(f"date arithmetic out of range: {error}") from None


def _date_methods(
    wrap: Callable[[datetime], Any], unwrap: Callable[[Any], datetime]
) -> dict[str, Method]:
    methods: dict[str, Method] = {"toDate": (0, 0, unwrap)}
    for unit in _UNITS:
        for sign, prefix in ((1, "plus"), (-1, "minus")):
            name = f"{prefix}{unit}"

            def shift(
                value: Any, amount: Any, unit: str = unit, sign: int = sign, name: str = name
            ) -> Any:
                return wrap(_shift(unwrap(value), unit, sign * _integer(amount, name)))

            methods[name] = (1, 1, shift)
    return methods


def _variable(facts: ExecutionFacts | TaskFacts, name: Any) -> Any:
    key = _text(name, "getVariable")
    if facts.changes is not None:
        written, value = facts.changes.read(key)
        if written:
            return value
    return facts.variables.get(key)


def _has_variable(facts: ExecutionFacts | TaskFacts, name: Any) -> bool:
    key = _text(name, "hasVariable")
    written = None if facts.changes is None else facts.changes.has(key)
    return key in facts.variables if written is None else written


def _log(facts: ExecutionFacts | TaskFacts, method: str) -> ChangeLog:
    if facts.changes is None:
        raise CallFailure(
            f"{method}() changes the instance, which this expression cannot do here; only "
            "listeners, input/output parameters and service task expressions act"
        )
    return facts.changes


def _variable_name(name: Any, method: str) -> str:
    try:
        check_name(name)
    except BadRequest as error:
        raise CallFailure(f"{method}(): {error.message}") from None
    assert isinstance(name, str)
    return name


def _set(facts: ExecutionFacts | TaskFacts, name: Any, value: Any, local: bool) -> None:
    method = "setVariableLocal" if local else "setVariable"
    log = _log(facts, method)
    key = _variable_name(name, method)
    value = result_value(value)
    try:
        infer(value)
    except BadRequest as error:
        raise CallFailure(f"{method}('{key}'): {error.message}") from None
    log.record("set", key, value, local)


def _remove(facts: ExecutionFacts | TaskFacts, name: Any, local: bool) -> None:
    method = "removeVariableLocal" if local else "removeVariable"
    log = _log(facts, method)
    log.record("remove", _variable_name(name, method), None, local)


def _variable_methods() -> dict[str, Method]:
    """Reading and (where the expression may act) changing variables, on the execution and
    the task alike."""
    return {
        "getVariable": (1, 1, _variable),
        "hasVariable": (1, 1, _has_variable),
        "setVariable": (2, 2, lambda f, name, value: _set(f, name, value, False)),
        "setVariableLocal": (2, 2, lambda f, name, value: _set(f, name, value, True)),
        "removeVariable": (1, 1, lambda f, name: _remove(f, name, False)),
        "removeVariableLocal": (1, 1, lambda f, name: _remove(f, name, True)),
    }


def _optional_text(value: Any, method: str) -> str | None:
    if value is None:
        return None
    text = _text(value, method)
    try:
        infer(text)
    except BadRequest as error:
        raise CallFailure(f"{method}(): {error.message}") from None
    if method == "setAssignee" and len(text) > 255:
        raise CallFailure("setAssignee(): a user id has at most 255 characters")
    return text


def _optional_date(value: Any, method: str) -> datetime | None:
    value = result_value(value)
    if value is None or isinstance(value, datetime):
        return value
    raise CallFailure(f"{method}() needs a date (such as dateTime().plusDays(1).toDate())")


def _task_setter(kind: ChangeKind, method: str, convert: Callable[[Any, str], Any]) -> Method:
    def record(facts: TaskFacts, value: Any) -> None:
        _log(facts, method).record(kind, None, convert(value, method))

    return 1, 1, record


_TASK_SETTERS: dict[str, Method] = {
    "setAssignee": _task_setter("assignee", "setAssignee", _optional_text),
    "setName": _task_setter("name", "setName", _optional_text),
    "setDescription": _task_setter("description", "setDescription", _optional_text),
    "setPriority": _task_setter("priority", "setPriority", _integer),
    "setDueDate": _task_setter("due", "setDueDate", _optional_date),
    "setFollowUpDate": _task_setter("follow_up", "setFollowUpDate", _optional_date),
}
# The methods that change the instance: an expression calls them on `execution` or `task` only.
ACTING_METHODS: frozenset[str] = frozenset(
    name for name in (*_variable_methods(), *_TASK_SETTERS) if not name.startswith(("get", "has"))
)


_EXECUTION_PROPERTIES: dict[str, Callable[[ExecutionFacts], Any]] = {
    "id": lambda e: e.id,
    "activityId": lambda e: e.activity_id,
    "currentActivityId": lambda e: e.activity_id,
    "processInstanceId": lambda e: e.process_instance_id,
    "processBusinessKey": lambda e: e.business_key,
    "businessKey": lambda e: e.business_key,
    "processDefinitionId": lambda e: e.process_definition_id,
}
_TASK_PROPERTIES: dict[str, Callable[[TaskFacts], Any]] = {
    "id": lambda t: t.id,
    "name": lambda t: t.name,
    "assignee": lambda t: t.assignee,
    "taskDefinitionKey": lambda t: t.task_definition_key,
    "priority": lambda t: t.priority,
}


def _getters(properties: Mapping[str, Callable[[Any], Any]]) -> dict[str, Method]:
    """JavaBean getters: `getActivityId()` reads the property `activityId`."""
    return {
        f"get{name[0].upper()}{name[1:]}": (0, 0, getter) for name, getter in properties.items()
    }


PROPERTIES: dict[type, Mapping[str, Callable[[Any], Any]]] = {
    ExecutionFacts: _EXECUTION_PROPERTIES,
    TaskFacts: _TASK_PROPERTIES,
}
METHODS: dict[type, Mapping[str, Method]] = {
    str: _STRING_METHODS,
    ExecutionFacts: {**_getters(_EXECUTION_PROPERTIES), **_variable_methods()},
    TaskFacts: {**_getters(_TASK_PROPERTIES), **_variable_methods(), **_TASK_SETTERS},
    spin.SpinJsonNode: spin.NODE_METHODS,
    spin.SpinList: spin.LIST_METHODS,
    dict: spin.PLAIN_METHODS,
    list: spin.PLAIN_METHODS,
    DateTimeValue: _date_methods(DateTimeValue, lambda value: value.moment),
    datetime: _date_methods(lambda moment: moment, lambda moment: moment),
}
# Every method name some type allows: a call to any other is refused when the model is deployed.
METHOD_NAMES: frozenset[str] = frozenset(name for table in METHODS.values() for name in table)
# Names of the context that an expression sees instead of variables of the same name.
CONTEXT_NAMES = frozenset({"execution", "task", "authenticatedUserId"})


def execution_problem(member: str, called: bool) -> str | None:
    """Why `execution.<member>` (a property, or a method when `called`) can never work, or None:
    `execution` always names the execution, so this is known before the expression runs."""
    table = METHODS[ExecutionFacts] if called else PROPERTIES[ExecutionFacts]
    if member in table:
        return None
    what = f"{member}()" if called else f"'{member}'"
    return f"the execution has no {'method' if called else 'property'} {what}"


def read_property(target: Any, name: str) -> tuple[bool, Any]:
    """(handled, value): a listed property of a context object; (False, None) for other types."""
    properties = PROPERTIES.get(type(target))
    if properties is None:
        return False, None
    getter = properties.get(name)
    if getter is None:
        raise CallFailure(f"the {_type_name(target)} has no property '{name}'")
    return True, getter(target)


def call_method(target: Any, name: str, arguments: list[Any]) -> Any:
    """Call the listed method `name` of the type of `target`; refuse anything else."""
    if target is None:
        raise CallFailure(f"cannot call {name}() on null")
    method = METHODS.get(type(target), {}).get(name)
    if method is None:
        raise CallFailure(f"{name}() is not a method a {_type_name(target)} allows")
    return _call(name, method, target, arguments)


def _call(name: str, method: Method, target: Any, arguments: list[Any]) -> Any:
    fewest, most, function = method
    if not fewest <= len(arguments) <= most:
        wanted = str(fewest) if fewest == most else f"{fewest} to {most}"
        raise CallFailure(f"{name}() takes {wanted} arguments, not {len(arguments)}")
    try:
        return function(target, *arguments)
    except spin.SpinFailure as failure:
        raise CallFailure(f"{name}(): {failure}") from None


def call_function(name: str, arguments: list[Any], context: ExpressionContext | None) -> Any:
    function = FUNCTIONS.get(name)
    if function is None:
        raise CallFailure(f"{name}() is not an allowed function")
    if arguments and function[1] == 0:
        raise CallFailure(f"{name}() takes no arguments")
    return _call(name, function, context, arguments)


def result_value(value: Any) -> Any:
    """What an expression gives its caller: a `dateTime()` is its moment; the execution or the
    task themselves are not values."""
    if isinstance(value, DateTimeValue):
        return value.moment
    if isinstance(value, (spin.SpinJsonNode, spin.SpinList)):
        return spin.plain(value)
    if isinstance(value, (ExecutionFacts, TaskFacts)):
        raise CallFailure(f"the {_type_name(value)} itself is not a value an expression can give")
    return value
