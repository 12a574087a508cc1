"""What every node of a process shares: its kind, the `Node` base class, its listeners,
scripts and loop characteristics, and the documentation-only properties."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Literal

from engine import scripting
from engine.language.expressions import Expression
from engine.language.mappings import InputOutput


class NodeKind(StrEnum):
    START_EVENT = "startEvent"
    END_EVENT = "endEvent"
    SERVICE_TASK = "serviceTask"
    USER_TASK = "userTask"
    TASK = "task"
    MANUAL_TASK = "manualTask"
    INTERMEDIATE_THROW_EVENT = "intermediateThrowEvent"
    EXCLUSIVE_GATEWAY = "exclusiveGateway"
    PARALLEL_GATEWAY = "parallelGateway"
    INCLUSIVE_GATEWAY = "inclusiveGateway"
    EVENT_BASED_GATEWAY = "eventBasedGateway"
    INTERMEDIATE_CATCH_EVENT = "intermediateCatchEvent"
    RECEIVE_TASK = "receiveTask"
    BOUNDARY_EVENT = "boundaryEvent"
    SUB_PROCESS = "subProcess"
    TRANSACTION = "transaction"
    SEND_TASK = "sendTask"
    SCRIPT_TASK = "scriptTask"
    CALL_ACTIVITY = "callActivity"
    BUSINESS_RULE_TASK = "businessRuleTask"


# camunda:properties: (name, value) pairs in document order, repeated names included.
Properties = tuple[tuple[str, str], ...]


ScriptFormat = Literal["javascript", "expression"]


@dataclass(frozen=True, kw_only=True)
class Script:
    """A script as the model holds it: JavaScript (run in the isolate of engine/scripting.py) or
    a `${}` expression (`juel`/`expression` formats). A `camunda:resource` is read into `source`
    when the deployment is made; `resource` keeps the name it was read from."""

    format: ScriptFormat
    source: str
    resource: str | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class ScriptCondition:
    """A sequence flow's condition written in JavaScript (`language="javascript"`): its value over
    the visible variables must be a boolean."""

    source: str
    language: str = "javascript"

    def evaluate(self, values: Mapping[str, Any]) -> bool:
        """The condition's value over `values`, with the default limits (a running instance
        evaluates it in its command's isolate instead; see engine/semantics/listeners.py)."""
        value = scripting.evaluate(self.source, values, where="condition")
        if not isinstance(value, bool):
            message = f"condition: the script's value is {value!r}, not a boolean"
            raise scripting.ScriptError(message)
        return value


# Execution listener events (`take` only on sequence flows) and task listener events.
EXECUTION_EVENTS = ("start", "end")
TAKE_EVENT = "take"
TASK_EVENTS = ("create", "assignment", "complete", "delete")


@dataclass(frozen=True, kw_only=True)
class Listener:
    """An execution or task listener: either a Python handler registered under `handler`
    (camunda:class, or camunda:expression / camunda:delegateExpression naming one), or a
    `script`."""

    event: str
    handler: str | None = None
    script: Script | None = None
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class MultiInstance:
    """multiInstanceLoopCharacteristics: the activity runs once per iteration, all at once or
    (`sequential`) one after another. The number of iterations is `cardinality` (an integer or a
    `${...}` expression) or else the length of `collection` (a variable name or a `${...}`
    expression yielding a list), whose items the iterations see as `element_variable`.
    `completion_condition` ends the activity early. `async_before` starts every iteration as an
    asynchronous continuation."""

    sequential: bool = False
    cardinality: str | None = None
    collection: str | None = None
    element_variable: str | None = None
    completion_condition: Expression | None = None
    async_before: bool = False


@dataclass(frozen=True, kw_only=True)
class StandardLoop:
    """standardLoopCharacteristics: the activity runs again while `condition` holds, at most
    `maximum` times; `test_before` checks the condition before the first run too."""

    condition: Expression | None = None
    test_before: bool = False
    maximum: int | None = None


Loop = MultiInstance | StandardLoop
# The node type of a multi-instance body's visit, as Camunda names the body's activity type; its
# activity id is the activity's id with `#multiInstanceBody` after it.
MULTI_INSTANCE_BODY = "multiInstanceBody"


@dataclass(frozen=True, kw_only=True)
class Node:
    id: str
    name: str | None = None
    incoming: tuple[str, ...] = ()
    outgoing: tuple[str, ...] = ()
    async_before: bool = False
    async_after: bool = False
    # The enclosing embedded subprocess; None at process level.
    parent: str | None = None
    # camunda:failedJobRetryTimeCycle, e.g. "R3/PT5M": how often and how soon a failed job retries.
    retry_cycle: str | None = None
    # camunda:jobPriority: an integer or a `${...}` expression giving one (None: the process's).
    job_priority: int | str | None = None
    # camunda:executionListener on `start` and `end`, in document order.
    listeners: tuple[Listener, ...] = ()
    # camunda:inputOutput: input parameters become the activity instance's local variables.
    io: InputOutput | None = None
    # Multi-instance or standard loop characteristics (tasks and embedded subprocesses only).
    loop: Loop | None = None
    # isForCompensation: a compensation handler, run only when its activity is compensated.
    is_for_compensation: bool = False
    line: int | None = field(default=None, compare=False)
    documentation: str | None = field(default=None, compare=False)
    properties: Properties = field(default=(), compare=False)

    # Each kind of node names its kind once, as this class attribute.
    _kind: ClassVar[NodeKind]

    @property
    def kind(self) -> NodeKind:
        return self._kind

    @property
    def label(self) -> str:
        return self.name or self.id
