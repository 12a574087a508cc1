"""JavaScript from process models, run in an embedded V8 isolate (mini-racer), never as Python.

Script tasks, listeners with `camunda:script`, conditions written in JavaScript and JavaScript
input/output mappings all run here. An `Isolate` belongs to one command (one `Advance`): it is
created when the command's first script runs and never serves another command. The isolate has no
host access at all: no `require`, `process`, `fetch`, `XMLHttpRequest`, timers or files; binary
buffers and WebAssembly are removed as well, so that every allocation a script makes lands on the
V8 heap that `ScriptLimits.max_memory` bounds. Each evaluation is cut off after
`ScriptLimits.timeout_seconds`; an isolate that timed out or ran out of memory is discarded and
the next script gets a fresh one.

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

Values cross the boundary as JSON: strings, numbers, booleans, null, arrays and objects. Date
variables reach a script as ISO 8601 strings, and a JavaScript `Date` a script stores becomes its
ISO 8601 string (`toJSON`). The facade's methods do not call back into Python: they record what the
script asks for, and the calls come back as a `ScriptOutcome` whose `changes` the command applies
in order, inside its own transaction.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Mapping
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from py_mini_racer import (
    JSEvalException,
    JSOOMException,
    JSTimeoutException,
    MiniRacer,
    mini_racer,
)

from engine.errors import HandlerError

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
class TaskFacts:
    """The user task a task listener's script sees as `task`."""

    id: str
    name: str | None
    assignee: str | None
    priority: int
    task_definition_key: str


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


# One recorded call: ("set", name, value, local), ("assignee", None, user or None, False),
# ("priority", None, number, False).
ChangeKind = Literal["set", "remove", "assignee", "priority"]
Change = tuple[ChangeKind, str | None, Any, bool]


@dataclass(frozen=True)
class ScriptOutcome:
    """What a script returned (its last expression's value, as JSON) and what it asked for."""

    value: Any
    changes: tuple[Change, ...] = field(default_factory=tuple)


# Defined once in every isolate. `__interlock_run(input, source)` evaluates `source` over the
# input's variables and facade and answers JSON: {"value": ..., "changes": [...]}. Internal names
# start with __interlock_, and the proxy that shows variables as globals never hides them (nor
# `execution`, `task` or `eval`).
_PRELUDE = r"""
(function (global) {
  ['WebAssembly', 'ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Atomics', 'Int8Array',
   'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
   'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'Float16Array',
   'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', '__timer_manager'
  ].forEach(function (name) {
    delete global[name];
    if (name in global) { global[name] = undefined; }  // not configurable, but writable
  });
  var own = Object.prototype.hasOwnProperty;
  var hidden = { execution: true, task: true, eval: true, arguments: true };
  function run(input, __interlock_source) {
    var vars = input.vars, subject = input.subject, changes = [], shadow = {};
    function name(n) { return String(n); }
    function copy(v) {
      var text = JSON.stringify(v);
      return text === undefined ? null : JSON.parse(text);
    }
    function get(n) { n = name(n); return own.call(vars, n) ? vars[n] : null; }
    function has(n) { return own.call(vars, name(n)); }
    function set(n, v, local) {
      n = name(n); v = copy(v); vars[n] = v; changes.push(['set', n, v, local]);
    }
    function remove(n, local) {
      n = name(n); delete vars[n]; changes.push(['remove', n, null, local]);
    }
    function all() { return copy(vars); }
    function variableMethods(target) {
      target.getVariable = get; target.getVariableLocal = get;
      target.hasVariable = has; target.hasVariableLocal = has;
      target.getVariables = all; target.getVariablesLocal = all;
      target.setVariable = function (n, v) { set(n, v, false); };
      target.setVariableLocal = function (n, v) { set(n, v, true); };
      target.removeVariable = function (n) { remove(n, false); };
      target.removeVariableLocal = function (n) { remove(n, true); };
      return target;
    }
    function readOnly(target, names, value) {
      names.forEach(function (n) {
        Object.defineProperty(target, n, { get: function () { return value; }, enumerable: true });
      });
    }
    function getter(value) { return function () { return value; }; }
    var execution = variableMethods({});
    execution.getId = getter(subject.execution_id);
    execution.getActivityId = getter(subject.activity_id);
    execution.getCurrentActivityId = execution.getActivityId;
    execution.getCurrentActivityName = getter(subject.activity_name);
    execution.getProcessInstanceId = getter(subject.instance_id);
    execution.getProcessBusinessKey = getter(subject.business_key);
    execution.getBusinessKey = execution.getProcessBusinessKey;
    execution.getProcessDefinitionId = getter(subject.definition_id);
    execution.getEventName = getter(subject.event_name);
    readOnly(execution, ['id'], subject.execution_id);
    readOnly(execution, ['activityId', 'currentActivityId'], subject.activity_id);
    readOnly(execution, ['activityName', 'currentActivityName'], subject.activity_name);
    readOnly(execution, ['processInstanceId'], subject.instance_id);
    readOnly(execution, ['processBusinessKey', 'businessKey'], subject.business_key);
    readOnly(execution, ['processDefinitionId'], subject.definition_id);
    readOnly(execution, ['eventName'], subject.event_name);
    var task = null;
    if (input.task) {
      var facts = input.task;
      task = variableMethods({});
      var setAssignee = function (user) {
        user = user === undefined || user === null ? null : String(user);
        facts.assignee = user; changes.push(['assignee', null, user, false]);
      };
      var setPriority = function (value) {
        var number = Number(value);
        if (!Number.isInteger(number)) { throw new TypeError('a priority is an integer'); }
        facts.priority = number; changes.push(['priority', null, number, false]);
      };
      task.getId = getter(facts.id);
      task.getName = getter(facts.name);
      task.getTaskDefinitionKey = getter(facts.task_definition_key);
      task.getEventName = getter(subject.event_name);
      task.getProcessInstanceId = getter(subject.instance_id);
      task.getExecutionId = getter(subject.execution_id);
      task.getExecution = function () { return execution; };
      task.getAssignee = function () { return facts.assignee; };
      task.setAssignee = setAssignee;
      task.getPriority = function () { return facts.priority; };
      task.setPriority = setPriority;
      readOnly(task, ['id'], facts.id);
      readOnly(task, ['name'], facts.name);
      readOnly(task, ['taskDefinitionKey'], facts.task_definition_key);
      readOnly(task, ['eventName'], subject.event_name);
      readOnly(task, ['processInstanceId'], subject.instance_id);
      readOnly(task, ['executionId'], subject.execution_id);
      Object.defineProperty(task, 'assignee', {
        get: function () { return facts.assignee; }, set: setAssignee, enumerable: true });
      Object.defineProperty(task, 'priority', {
        get: function () { return facts.priority; }, set: setPriority, enumerable: true });
    }
    var scope = new Proxy(vars, {
      has: function (target, key) {
        return typeof key === 'string' && !own.call(hidden, key) &&
          key.indexOf('__interlock') !== 0 && (own.call(shadow, key) || own.call(vars, key));
      },
      get: function (target, key) {
        if (typeof key !== 'string') { return undefined; }
        return own.call(shadow, key) ? shadow[key] : vars[key];
      },
      set: function (target, key, value) { shadow[key] = value; return true; }
    });
    var __interlock_value = (function (execution, task) {
      with (scope) { return eval(__interlock_source); }
    })(execution, task);
    var kind = typeof __interlock_value;
    if (kind === 'undefined' || kind === 'function' || kind === 'symbol') {
      __interlock_value = null;
    }
    var text = JSON.stringify({ value: __interlock_value, changes: changes });
    return JSON.stringify([clean(), text]);
  }
  Object.defineProperty(global, '__interlock_run', { value: run, writable: false,
                                                      configurable: false });
  // Nothing a script does outlives it: every built-in reachable from the global object (and the
  // few reachable only through syntax) is frozen, the global bindings cannot be reassigned, and
  // the globals a script adds are deleted when it ends (`clean`; false if one cannot be, and the
  // isolate is then discarded).
  var seen = new Set();
  function harden(value) {
    if (value === null || value === global || seen.has(value) ||
        (typeof value !== 'object' && typeof value !== 'function')) { return; }
    seen.add(value);
    Object.freeze(value);
    Reflect.ownKeys(value).forEach(function (key) {
      var property = Object.getOwnPropertyDescriptor(value, key);
      if (property === undefined) { return; }
      if ('value' in property) { harden(property.value); }
      harden(property.get); harden(property.set);
    });
    harden(Object.getPrototypeOf(value));
  }
  [function* () {}, async function () {}, async function* () {}, [][Symbol.iterator](),
   new Map()[Symbol.iterator](), new Set()[Symbol.iterator](), ''[Symbol.iterator](),
   /x/[Symbol.matchAll]('x'), (function* () {})()
  ].forEach(function (value) { harden(Object.getPrototypeOf(value)); });
  var baseline = Object.create(null);
  Reflect.ownKeys(global).forEach(function (key) {
    baseline[typeof key === 'symbol' ? key.toString() : key] = true;
    var property = Object.getOwnPropertyDescriptor(global, key);
    if (property === undefined) { return; }
    if ('value' in property) {
      harden(property.value);
      if (property.configurable || property.writable) {
        Object.defineProperty(global, key, { writable: false, configurable: false });
      }
    } else if (property.configurable) {
      Object.defineProperty(global, key, { configurable: false });
    }
  });
  var count = Reflect.ownKeys(global).length;
  function clean() {
    var keys = Reflect.ownKeys(global);
    if (keys.length === count) { return true; }
    return keys.every(function (key) {
      return baseline[typeof key === 'symbol' ? key.toString() : key] || delete global[key];
    });
  }
})(globalThis);
"""


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"a value of Python type {type(value).__name__} cannot reach a script")


def to_json(values: Mapping[str, Any]) -> str:
    """Variables as the JSON a script receives (dates as ISO 8601 strings)."""
    return json.dumps(dict(values), default=_json_default, ensure_ascii=False)


_THREAD = threading.local()


_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def _isolates_loop() -> asyncio.AbstractEventLoop:
    """The event loop every isolate of this process is served on, on a thread of its own.

    An isolate waits for its scripts on an asyncio loop. Left to choose, it takes the loop
    running on the thread that makes it (an ASGI server's, a test browser's), and a script with a
    time limit then cannot run from that thread; given this loop, a script runs from any thread,
    whether or not a loop runs there."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None:
            loop = asyncio.new_event_loop()
            threading.Thread(
                target=loop.run_forever, name="interlock-isolates", daemon=True
            ).start()
            _LOOP = loop
        return _LOOP


class Isolate:
    """Where the scripts of one command run: the V8 isolate of the calling thread, created when
    its first script runs and reused by the thread's later scripts. Reuse is safe because nothing
    a script does outlives it (see the prelude): built-ins are frozen, global bindings fixed, and
    added globals deleted after each script; an isolate whose script timed out, ran out of memory
    or threw, or left a global that cannot be deleted, is discarded and replaced."""

    def __init__(self, limits: ScriptLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def _ready(self) -> MiniRacer:
        held: tuple[AbstractContextManager[MiniRacer], MiniRacer] | None = getattr(
            _THREAD, "held", None
        )
        if held is None:
            maker = mini_racer(_isolates_loop())
            context = maker.__enter__()
            held = (maker, context)
            _THREAD.held = held
            context.eval(_PRELUDE)
        return held[1]

    def close(self) -> None:
        """Discard and free the thread's isolate; the next script gets a new one."""
        held = getattr(_THREAD, "held", None)
        _THREAD.held = None
        if held is not None:
            with suppress(Exception):  # a context V8 already gave up on
                held[0].__exit__(None, None, None)

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
        context = self._ready()
        try:
            answer = context.eval(
                code,
                timeout_sec=self.limits.timeout_seconds,
                max_memory=self.limits.max_memory,
            )
        except JSTimeoutException:
            self.close()
            raise ScriptError(
                f"{where}: the script ran longer than {self.limits.timeout_seconds:g} s",
                reason="timeout",
            ) from None
        except JSOOMException:
            self.close()
            raise ScriptError(
                f"{where}: the script went over its memory limit of {self.limits.max_memory} bytes",
                reason="memory",
            ) from None
        except JSEvalException as exc:
            self.close()  # what it threw may have left globals behind
            raise ScriptError(f"{where}: {_reported(exc)}", reason="threw") from None
        clean, text = json.loads(str(answer))
        if not clean:
            self.close()
        found = json.loads(text)
        if "value" not in found:
            found["value"] = None
        changes = tuple(
            (kind, name, value, bool(local)) for kind, name, value, local in found["changes"]
        )
        return ScriptOutcome(found["value"], changes)


_LOCATED = re.compile(r"^[^\n:]*:(\d+): (.*)$")


def _reported(exc: Exception) -> str:
    """V8's report of what a script threw begins `<where>:<line>: <Name>: <message>`."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
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
    `isolate` for its limits; without one the default limits apply. Either way the calling
    thread's isolate runs it (see `Isolate`). `setVariable` calls are ignored here. Raises
    ScriptError naming `where`."""
    runner = isolate if isolate is not None else Isolate()
    subject = Subject(execution_id="", instance_id="", activity_id=None)
    return runner.run(source, variables, subject, where=where).value
