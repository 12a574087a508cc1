"""Task nodes: service, send, user, script, none and manual, receive and business rule tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from engine.language.expressions import Expression
from engine.language.forms import FormField
from engine.model.node import Listener, Node, NodeKind, Script
from engine.model.scopes import CalledBinding


class Implemented(Protocol):
    """A node implemented like a service task: a service or send task, a message throw event."""

    @property
    def id(self) -> str: ...
    @property
    def handler(self) -> str | None: ...
    @property
    def topic(self) -> str | None: ...
    @property
    def result_variable(self) -> str | None: ...
    @property
    def task_priority(self) -> int | str: ...
    @property
    def is_external(self) -> bool: ...


@dataclass(frozen=True, kw_only=True)
class ServiceTask(Node):
    """Either a Python handler registered by name, or external work on a topic for workers."""

    handler: str | None = None
    topic: str | None = None
    result_variable: str | None = None
    # camunda:taskPriority of its external task: a number, or a `${...}` resolved at creation.
    task_priority: int | str = 0
    # camunda:expression that is more than a handler's name: evaluated (it may only read), its
    # value going to `result_variable` when there is one.
    expression: Expression | None = None

    _kind = NodeKind.SERVICE_TASK

    @property
    def is_external(self) -> bool:
        return self.topic is not None


@dataclass(frozen=True, kw_only=True)
class SendTask(ServiceTask):
    """A send task: implemented exactly like a service task, as in Camunda 7."""

    _kind = NodeKind.SEND_TASK


@dataclass(frozen=True, kw_only=True)
class UserTask(Node):
    """Assignment fields are kept as written (literal or `${...}`); they are resolved when the task
    is created."""

    assignee: str | None = None
    candidate_users: str | None = None
    candidate_groups: str | None = None
    due_date: str | None = None
    follow_up_date: str | None = None
    priority: str | None = None
    form_key: str | None = None
    # camunda:taskListener on create, assignment, complete and delete, in document order.
    task_listeners: tuple[Listener, ...] = ()
    # camunda:formData: the fields of the task's generated form (see engine/language/forms.py).
    form_fields: tuple[FormField, ...] = ()

    _kind = NodeKind.USER_TASK


@dataclass(frozen=True, kw_only=True)
class ScriptTask(Node):
    """Runs `script`; its value goes to `result_variable` when one is named."""

    script: Script
    result_variable: str | None = None

    _kind = NodeKind.SCRIPT_TASK


@dataclass(frozen=True, kw_only=True)
class NoneTask(Node):
    """`task` and `manualTask`: the token passes straight through."""

    manual: bool = False

    @property
    def kind(self) -> NodeKind:
        return NodeKind.MANUAL_TASK if self.manual else NodeKind.TASK


@dataclass(frozen=True, kw_only=True)
class ReceiveTask(Node):
    """Waits for its message, or with none (no messageRef) until its execution is signalled
    (Camunda's RuntimeService.signal, POST /execution/{id}/signal)."""

    message_name: str | None = None

    _kind = NodeKind.RECEIVE_TASK


# camunda:mapDecisionResult: how a business rule task's decision result becomes its variable.
DecisionResultMapping = Literal["singleEntry", "singleResult", "collectEntries", "resultList"]
DECISION_RESULT_MAPPINGS: tuple[DecisionResultMapping, ...] = (
    "singleEntry",
    "singleResult",
    "collectEntries",
    "resultList",
)


@dataclass(frozen=True, kw_only=True)
class BusinessRuleTask(Node):
    """Evaluates the decision `decision_ref` (a key, or a `${...}` expression that yields one)
    in the command's transaction; `binding` picks its version as a call activity's does. The
    result, mapped as `map_decision_result` says, goes to `result_variable` when one is named."""

    decision_ref: str
    binding: CalledBinding = "latest"
    version: str | None = None
    version_tag: str | None = None
    result_variable: str | None = None
    map_decision_result: DecisionResultMapping = "resultList"

    _kind = NodeKind.BUSINESS_RULE_TASK
