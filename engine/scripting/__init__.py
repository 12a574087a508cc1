"""JavaScript from process models, run in an embedded V8 isolate (mini-racer), never as Python.

Script tasks, listeners with `camunda:script`, conditions written in JavaScript and JavaScript
input/output mappings all run here. V8 never runs in the engine's process: every script is handed
to a script process of this process's pool (`engine.scripting.hosts`, one isolate per process,
driven by that process's one thread), so a fault of V8 costs one script process, never the
server. The isolate has no host access at all: no `require`, `process`, `fetch`,
`XMLHttpRequest`, timers or files; binary buffers and WebAssembly are removed as well, so that
every allocation a script makes lands on the V8 heap that `ScriptLimits.max_memory` bounds. Each
evaluation, with the promise jobs it leaves, is cut off after `ScriptLimits.timeout_seconds`; a
process whose script timed out or ran out of memory is retired and the next script gets a new
one. Each script starts from a clean state (`prelude.js` says how). What a script asks to write
is checked as request input is (names of at most 255 characters, values nested at most 64
levels, no NUL characters or lone surrogates): a refusal is the script's error, with its line.

What a script sees, as Camunda 7 scripts expect it:

- every visible variable as a global name (read-only: assigning to it changes the script's view,
  not the variable, as in Camunda);
- `execution`: `getVariable(name)`, `setVariable(name, value)`, `getVariables()`,
  `hasVariable(name)`, the `...Local` forms of each, `removeVariable(name)`,
  `getId()`/`id`,
  `getActivityId()`/`activityId`, `getCurrentActivityName()`, `getProcessInstanceId()`,
  `getProcessBusinessKey()`/`processBusinessKey`/`businessKey`, `getProcessDefinitionId()`,
  `getEventName()`/`eventName`;
- in a task listener, `task` as well: the variable methods above, `getId()`/`id`,
  `getName()`/`name`, `getAssignee()`/`setAssignee(user)`/`assignee` (assignable),
  `getPriority()`/`setPriority(n)`/`priority`, `getTaskDefinitionKey()`, `getEventName()`,
  `getExecution()`.
- `S(value)` and `JSON(value)`: Camunda Spin's JSON access over a JSON value, a JSON text or a
  node (`prop`, `hasProp`, `elements`, `fieldNames`, `stringValue`, `numberValue`, `boolValue`,
  `value`, `isNull`... as engine/language/spin.py lists them for expressions), written in
  JavaScript inside the isolate (`prelude.js`), frozen, with read-only nodes; `JSON.parse` and
  `JSON.stringify` are still the built-ins. `XML(...)`, `S` of XML text and XML methods throw:
  Spin XML is not supported.

Values cross the boundary as JSON: strings, numbers, booleans, null, arrays and objects. Date
variables reach a script as ISO 8601 strings, Bytes variables as base64 text, File variables as
`{filename, mimeType, encoding, data}` (data in base64), and a JavaScript `Date` a script stores
becomes its ISO 8601 string (`toJSON`). The facade's methods do not call back into Python: they
record what the script asks for, and the calls come back as a `ScriptOutcome` whose `changes` the
command applies in order, inside its own transaction.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from engine.errors import HandlerError
from engine.language.acting import CHANGE_KINDS, Change
from engine.language.expression_context import TaskFacts as TaskFacts
from engine.language.variables import FileValue
from engine.scripting import hosts

# The scriptFormat values (lower-cased) run as JavaScript, and those run as `${}` expressions.
JAVASCRIPT_FORMATS = frozenset({"javascript", "ecmascript", "js"})
EXPRESSION_FORMATS = frozenset({"juel", "expression"})


class ScriptError(HandlerError):
    """A script threw, ran past its time limit or its memory limit, or returned what JSON cannot
    carry. Like a failing service-task handler, it rolls back the command that ran it (in a job:
    counts a retry)."""

    code = "ScriptError"


@dataclass(frozen=True)
class ScriptLimits:
    """How long one evaluation may run and how large the isolate's heap may grow."""

    timeout_seconds: float = 1.0
    max_memory: int = 64 * 1024 * 1024


DEFAULT_LIMITS = ScriptLimits()


@dataclass(frozen=True)
class Subject:
    """Where a script runs: what `execution` (and `task`) answer."""

    execution_id: str
    instance_id: str
    activity_id: str | None
    activity_name: str | None = None
    business_key: str | None = None
    definition_id: str | None = None
    event_name: str | None = None
    task: TaskFacts | None = None


@dataclass(frozen=True)
class ScriptOutcome:
    """What a script returned (its last expression's value, as JSON) and what it asked for."""

    value: Any
    changes: tuple[Change, ...] = field(default_factory=tuple)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, FileValue):
        return value.to_json()
    raise TypeError(f"a value of Python type {type(value).__name__} cannot reach a script")


def to_json(values: Mapping[str, Any]) -> str:
    """Variables as the JSON a script receives (dates as ISO 8601 strings)."""
    return json.dumps(dict(values), default=_json_default, ensure_ascii=False)


class Isolate:
    """Where the scripts of one command run, with the command's limits. Every script runs in a
    script process of this process's pool (`engine.scripting.hosts`), from a clean state (see
    `prelude.js`): nothing a script does is seen by a later one, whichever instance or command
    that later one serves."""

    def __init__(self, limits: ScriptLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def run(
        self, source: str, variables: Mapping[str, Any], subject: Subject, *, where: str
    ) -> ScriptOutcome:
        """Evaluate `source` with `variables` as globals and `subject` as the facade; `where`
        names the script in errors ("script task 'Check'"). Raises ScriptError."""
        task = subject.task
        payload = {
            "vars": dict(variables),
            "subject": {
                "execution_id": subject.execution_id,
                "instance_id": subject.instance_id,
                "activity_id": subject.activity_id,
                "activity_name": subject.activity_name,
                "business_key": subject.business_key,
                "definition_id": subject.definition_id,
                "event_name": subject.event_name,
            },
            "task": None
            if task is None
            else {
                "id": task.id,
                "name": task.name,
                "assignee": task.assignee,
                "priority": task.priority,
                "task_definition_key": task.task_definition_key,
            },
        }
        try:
            text = json.dumps(payload, default=_json_default, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise ScriptError(f"{where}: the variables cannot reach the script: {exc}") from None
        code = f"__interlock_run(JSON.parse({json.dumps(text)}), {json.dumps(source)})"
        try:
            answer = hosts.run(code, self.limits.timeout_seconds, self.limits.max_memory)
        except hosts.HostFailure as failure:
            raise self._failed(failure, where) from None
        return outcome(answer, where)

    def _failed(self, failure: hosts.HostFailure, where: str) -> ScriptError:
        if failure.reason == "timeout":
            message = f"the script ran longer than {self.limits.timeout_seconds:g} s"
        elif failure.reason == "memory":
            message = f"the script went over its memory limit of {self.limits.max_memory} bytes"
        elif failure.reason == "threw":
            message = _reported(failure.message)
        elif failure.reason == "crashed":
            message = "the script's process stopped unexpectedly; it was replaced"
        else:
            message = "no script process could be started"
        return ScriptError(f"{where}: {message}", reason=failure.reason)


_CHANGE_KINDS = CHANGE_KINDS


def outcome(answer: str, where: str) -> ScriptOutcome:
    """The prelude's answer as a ScriptOutcome; what it says the script threw, or an answer that
    is not as the prelude writes it, as the ScriptError naming `where`."""
    try:
        _clean, text = json.loads(answer)
        found = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        raise ScriptError(f"{where}: the script's answer cannot be read", reason="threw") from None
    if not isinstance(found, dict):
        raise ScriptError(f"{where}: the script's answer cannot be read", reason="threw")
    error = found.get("error")
    if error is not None:
        shown = str(error.get("text")) if isinstance(error, dict) else str(error)
        line = error.get("line") if isinstance(error, dict) else None
        located = f" (line {line})" if isinstance(line, int) else ""
        raise ScriptError(f"{where}: {shown}{located}", reason="threw")
    records = found.get("changes", [])
    if not isinstance(records, list):
        raise ScriptError(f"{where}: the script's changes cannot be read", reason="threw")
    changes: list[Change] = []
    for record in records:
        if (
            not isinstance(record, list)
            or len(record) != 4
            or record[0] not in _CHANGE_KINDS
            or not (record[1] is None or isinstance(record[1], str))
        ):
            raise ScriptError(f"{where}: a change the script made cannot be read", reason="threw")
        kind, name, value, local = record
        changes.append((kind, name, value, bool(local)))
    return ScriptOutcome(found.get("value"), tuple(changes))


_LOCATED = re.compile(r"^[^\n:]*:(\d+): (.*)$")


def _reported(text: str) -> str:
    """V8's report of what a script threw begins `<where>:<line>: <Name>: <message>`."""
    first = text.strip().splitlines()[0] if text.strip() else "the script failed"
    located = _LOCATED.match(first)
    if located is None:
        return first
    return f"{located.group(2)} (line {located.group(1)})"


def evaluate(
    source: str,
    variables: Mapping[str, Any],
    *,
    isolate: Isolate | None = None,
    where: str = "script",
) -> Any:
    """The value of the JavaScript `source` (its last expression, as with `eval`) over
    `variables`, each visible as a global name and through `execution.getVariable`; for
    JavaScript input/output mappings and conditions. The value comes back as JSON (numbers,
    strings, booleans, None, lists, dicts; a `Date` as its ISO 8601 string). Pass the command's
    `isolate` for its limits; without one the default limits apply. `setVariable` calls are
    ignored here. Raises ScriptError naming `where`."""
    runner = isolate if isolate is not None else Isolate()
    subject = Subject(execution_id="", instance_id="", activity_id=None)
    return runner.run(source, variables, subject, where=where).value
