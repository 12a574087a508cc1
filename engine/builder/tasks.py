"""Tasks: service and send tasks, user tasks, none and manual tasks, receive tasks, script tasks,
business rule tasks and call activities."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self, Unpack

from engine.builder.base import BuilderBase, NodeOptions
from engine.language.composite import has_expression
from engine.language.expressions import ACTS_ON_EXECUTION, is_expression
from engine.language.forms import FormField
from engine.model import (
    BusinessRuleTask,
    CallActivity,
    CalledBinding,
    CallMapping,
    DecisionResultMapping,
    NoneTask,
    ReceiveTask,
    ScriptTask,
    SendTask,
    ServiceTask,
    UserTask,
)


class Tasks(BuilderBase):
    def service_task(
        self,
        id: str,
        name: str | None = None,
        *,
        handler: str | None = None,
        topic: str | None = None,
        result_variable: str | None = None,
        priority: int | str = 0,
        send: bool = False,
        expression: str | None = None,
        **options: Unpack[NodeOptions],
    ) -> Self:
        """A service task (a send task with `send`): a handler, external work on `topic` (its
        `priority` a number or a `${...}` resolved when the external task is created), or an
        `expression` evaluated, its value going to `result_variable`."""
        self._implementation(id, handler, topic)
        compiled = None
        if expression is not None:
            if not is_expression(expression):
                raise self._error(f"expression '{expression}' is not one ${{...}}", id)
            compiled = self._expression(id, "expression", expression, ACTS_ON_EXECUTION)
        if isinstance(priority, str) and not has_expression(priority):
            raise self._error(f"priority '{priority}' is neither a number nor ${{...}}", id)
        if isinstance(priority, str):
            self._text(id, "priority", priority)
        if topic is not None:
            self._text(id, "topic", topic)
        return self._node(
            SendTask if send else ServiceTask,
            id,
            name,
            options,
            handler=handler,
            topic=topic,
            result_variable=result_variable,
            task_priority=priority,
            expression=compiled,
        )

    def user_task(
        self,
        id: str,
        name: str | None = None,
        *,
        assignee: str | None = None,
        candidate_users: str | None = None,
        candidate_groups: str | None = None,
        due_date: str | None = None,
        priority: str | None = None,
        form_key: str | None = None,
        form_fields: Sequence[FormField] = (),
        **options: Unpack[NodeOptions],
    ) -> Self:
        """A user task; its name and attributes may be literal text, one `${...}` or a composite
        (`Review ${loopCounter}`, `kermit_${loopCounter}`), evaluated when the task is made."""
        return self._node(
            UserTask,
            id,
            self._text(id, "name", name),
            options,
            assignee=self._text(id, "assignee", assignee),
            candidate_users=self._text(id, "candidate_users", candidate_users),
            candidate_groups=self._text(id, "candidate_groups", candidate_groups),
            due_date=self._text(id, "due_date", due_date),
            priority=self._text(id, "priority", priority),
            form_key=self._text(id, "form_key", form_key),
            form_fields=self._form(id, form_fields),
        )

    def task(
        self,
        id: str,
        name: str | None = None,
        *,
        manual: bool = False,
        **options: Unpack[NodeOptions],
    ) -> Self:
        return self._node(NoneTask, id, name, options, manual=manual)

    def receive_task(
        self,
        id: str,
        name: str | None = None,
        *,
        message: str | None = None,
        **options: Unpack[NodeOptions],
    ) -> Self:
        """A task that waits for `message`; with none, until its execution is signalled."""
        if message == "":
            raise self._error("a receive task's message needs a name", id)
        return self._node(ReceiveTask, id, name, options, message_name=message)

    def script_task(
        self,
        id: str,
        name: str | None = None,
        *,
        script: str,
        format: str = "javascript",
        result_variable: str | None = None,
        **options: Unpack[NodeOptions],
    ) -> Self:
        """A task that runs `script`: JavaScript, or a `${}` expression with format "juel"."""
        return self._node(
            ScriptTask,
            id,
            name,
            options,
            script=self._script(id, format, script, ACTS_ON_EXECUTION),
            result_variable=result_variable,
        )

    def call_activity(
        self,
        id: str,
        name: str | None = None,
        *,
        called_element: str,
        binding: CalledBinding = "latest",
        version: int | str | None = None,
        version_tag: str | None = None,
        inputs: Sequence[CallMapping] = (),
        outputs: Sequence[CallMapping] = (),
        **options: Unpack[NodeOptions],
    ) -> Self:
        """Calls the process `called_element` (a key or a `${...}` expression) in the version
        `binding` picks, and waits until the called instance ends; `inputs` and `outputs` are
        its camunda:in and camunda:out mappings."""
        self._reference(
            id, "a call activity needs a called element", "calledElement", called_element
        )
        self._binding(id, binding, version, version_tag)
        return self._node(
            CallActivity,
            id,
            name,
            options,
            called_element=called_element,
            binding=binding,
            version=None if version is None else str(version),
            version_tag=version_tag,
            inputs=tuple(inputs),
            outputs=tuple(outputs),
        )

    def business_rule_task(
        self,
        id: str,
        name: str | None = None,
        *,
        decision_ref: str,
        binding: CalledBinding = "latest",
        version: int | str | None = None,
        version_tag: str | None = None,
        result_variable: str | None = None,
        map_decision_result: DecisionResultMapping = "resultList",
        **options: Unpack[NodeOptions],
    ) -> Self:
        """Evaluates the decision `decision_ref` (a key or a `${...}` expression) in the version
        `binding` picks; its result, mapped as `map_decision_result` says (singleEntry,
        singleResult, collectEntries, resultList), goes to `result_variable`."""
        self._reference(id, "a business rule task needs a decision", "decisionRef", decision_ref)
        self._binding(id, binding, version, version_tag)
        if map_decision_result != "resultList" and result_variable is None:
            raise self._error("a result mapping needs a result variable", id)
        return self._node(
            BusinessRuleTask,
            id,
            name,
            options,
            decision_ref=decision_ref,
            binding=binding,
            version=None if version is None else str(version),
            version_tag=version_tag,
            result_variable=result_variable,
            map_decision_result=map_decision_result,
        )

    def _reference(self, id: str, missing: str, what: str, reference: str) -> None:
        """What a call activity calls or a business rule task evaluates: a key or one `${...}`."""
        if not reference.strip():
            raise self._error(missing, id)
        self._checked(id, what, reference)

    def _binding(
        self, id: str, binding: CalledBinding, version: int | str | None, version_tag: str | None
    ) -> None:
        if (binding == "version") != (version is not None):
            raise self._error('a version goes with binding="version", and only with it', id)
        if (binding == "versionTag") != (version_tag is not None):
            raise self._error('a version tag goes with binding="versionTag", and only with it', id)
