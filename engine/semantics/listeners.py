"""Listeners, script tasks and JavaScript conditions of one advance.

Execution listeners run on `start` and `end` of flow nodes and of the process and on `take` of
sequence flows; task listeners on `create`, `assignment`, `complete` and `delete` of user tasks.
A listener is a Python handler registered by name, a script (engine/scripting.py) or an
expression whose calls may act (`${execution.setVariable('approved', true)}`: recorded and
applied by engine/semantics/changes.py, as a script's are). Everything runs inside the
command's transaction: a listener or script that fails raises, and the whole command rolls back
(in a job, the failure counts down a retry like a failing handler's).

What scripts and listener handlers read and write goes through `visible` and `write`, the one
place that decides which variables a token sees and where a write lands.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core.handlers import HandlerRegistry, TaskContext
from engine.core.runtime import InstanceRun, Token, UserTaskRow
from engine.errors import BpmnError, HandlerError, InterlockError, NeedsTransaction
from engine.language.acting import ChangeLog
from engine.language.expression_context import context_for, task_facts
from engine.language.expressions import ACTS_ON_TASK, compile_expression
from engine.language.variables import infer
from engine.model import (
    Listener,
    Node,
    ProcessModel,
    Script,
    ScriptCondition,
    ScriptTask,
    SequenceFlow,
    UserTask,
)
from engine.scripting import (
    DEFAULT_LIMITS,
    Isolate,
    ScriptError,
    ScriptLimits,
    ScriptOutcome,
    Subject,
)
from engine.semantics.changes import apply_changes

Owner = Node | SequenceFlow | ProcessModel


def _owner_name(owner: Owner) -> str:
    if isinstance(owner, ProcessModel):
        return f"process '{owner.key}'"
    if isinstance(owner, SequenceFlow):
        return f"sequence flow '{owner.id}'"
    return f"{owner.kind.value} '{owner.id}'"


class Scripts:
    """The scripts and listeners of one advance, with the isolate they share (created when the
    first script runs)."""

    def __init__(
        self,
        run: InstanceRun,
        handlers: HandlerRegistry,
        connection: Any,
        *,
        optimistic: bool = False,
        limits: ScriptLimits = DEFAULT_LIMITS,
    ) -> None:
        self.run = run
        self.handlers = handlers
        self.connection = connection
        self.optimistic = optimistic
        self.isolate = Isolate(limits)
        # An instance modification asked to skip execution listeners (Camunda's
        # skipCustomListeners).
        self.skip_listeners = False

    # --- variables: the one place scripts and listeners read and write them -------------------

    def visible(self, token: Token | None) -> dict[str, Any]:
        """The variables `token` sees."""
        return self.run.values_for(token)

    def write(self, token: Token | None, name: str, value: Any, local: bool = False) -> None:
        """A variable a script or listener set (`local`: with setVariableLocal, on the token's
        own activity instance)."""
        if local and token is not None:
            self.run.set_local(token.id, name, infer(value))
        else:
            self.run.set_visible(token, name, infer(value))

    # --- execution and task listeners ----------------------------------------------------------

    def execution_event(
        self, token: Token | None, owner: Owner, event: str, activity: Node | None = None
    ) -> None:
        """Run the listeners of `owner` (a node, a sequence flow or the process) on `event`."""
        listeners = [listener for listener in owner.listeners if listener.event == event]
        if not listeners or self.skip_listeners:
            return
        node = activity if activity is not None else owner if isinstance(owner, Node) else None
        for listener in listeners:
            where = f"{event} listener of {_owner_name(owner)}"
            self._notify(listener, token, node, where, None, None)

    def task_event(self, task: UserTaskRow, token: Token, node: UserTask, event: str) -> None:
        """Run the task listeners of `node` on `event` for `task`. After `create`, the
        `assignment` listeners run too when the task then has an assignee."""
        for listener in node.task_listeners:
            if listener.event == event:
                where = f"{event} task listener of user task '{node.id}'"
                self._notify(listener, token, node, where, task, event)
        if event == "create" and task.assignee is not None:
            self.task_event(task, token, node, "assignment")

    def _notify(
        self,
        listener: Listener,
        token: Token | None,
        node: Node | None,
        where: str,
        task: UserTaskRow | None,
        task_event: str | None,
    ) -> None:
        event = task_event or listener.event
        if listener.script is not None:
            outcome = self._run(listener.script, token, node, where, event, task)
            self._apply(outcome, token, task)
            return
        assert listener.handler is not None
        self._call_handler(listener.handler, token, node, where, event, task)

    def _call_handler(
        self,
        name: str,
        token: Token | None,
        node: Node | None,
        where: str,
        event: str,
        task: UserTaskRow | None,
    ) -> None:
        if self.optimistic:
            raise NeedsTransaction(f"the {where} runs a handler")
        handler = self.handlers.get(name)
        if handler is None and "." in name:
            handler = self.handlers.get(name.partition(".")[0])
        if handler is None:
            raise HandlerError(
                f"no handler is registered under the name '{name}' ({where})", handler=name
            )
        run = self.run
        context = TaskContext(
            instance_id=run.instance.id,
            business_key=run.instance.business_key,
            node_id=node.id if node is not None else "",
            token_id=token.id if token is not None else run.instance.id,
            variables=self.visible(token),
            connection=self.connection,
            event_name=event,
            task_id=task.id if task is not None else None,
            assignee=task.assignee if task is not None else None,
        )
        try:
            returned = handler(context)
        except InterlockError:
            raise
        except (BpmnError, Exception) as exc:
            raise HandlerError(
                f"handler '{name}' of the {where} raised {type(exc).__name__}: {exc}",
                handler=name,
            ) from exc
        updates = dict(context.updates)
        if isinstance(returned, Mapping):
            updates.update(returned)
        for key, value in updates.items():
            self.write(token, key, value)
        if task is not None and context.assignee_changed:
            task.assignee, task.dirty = context.assignee, True

    # --- scripts -------------------------------------------------------------------------------

    def _subject(
        self, token: Token | None, node: Node | None, event: str | None, task: UserTaskRow | None
    ) -> Subject:
        run = self.run
        return Subject(
            execution_id=str(token.id if token is not None else run.instance.id),
            instance_id=str(run.instance.id),
            activity_id=node.id if node is not None else None,
            activity_name=node.name if node is not None else None,
            business_key=run.instance.business_key,
            definition_id=run.instance.definition_id,
            event_name=event,
            # The script reads the task's attributes only, not the variables expressions see.
            task=None if task is None else task_facts(task, {}),
        )

    def _run(
        self,
        script: Script,
        token: Token | None,
        node: Node | None,
        where: str,
        event: str | None,
        task: UserTaskRow | None,
    ) -> ScriptOutcome:
        values = self.visible(token)
        if script.format == "expression":
            # Checked at deployment for where it may act; here its calls are recorded.
            changes = ChangeLog()
            facts = None if task is None else task_facts(task, values, changes)
            context = context_for(self.run, token, values, facts, changes, instance_execution=True)
            try:
                expression = compile_expression(script.source, ACTS_ON_TASK)
                return ScriptOutcome(expression.evaluate(values, context), changes.changes)
            except InterlockError as error:
                raise ScriptError(f"{where}: {error.message}") from error
        subject = self._subject(token, node, event, task)
        return self.isolate.run(script.source, values, subject, where=where)

    def _apply(self, outcome: ScriptOutcome, token: Token | None, task: UserTaskRow | None) -> None:
        """The calls a script or an acting expression made, in order."""
        apply_changes(self.run, token, task, outcome.changes)

    def script_task(self, token: Token, node: ScriptTask) -> None:
        """Run the script task's script; its value goes to the result variable, if any."""
        outcome = self._run(node.script, token, node, f"script task '{node.id}'", None, None)
        self._apply(outcome, token, None)
        if node.result_variable is not None:
            self.write(token, node.result_variable, outcome.value)

    def holds(self, flow: SequenceFlow, condition: ScriptCondition, token: Token | None) -> bool:
        """A JavaScript condition's value: it must be a boolean."""
        where = f"condition of sequence flow '{flow.id}'"
        subject = self._subject(token, None, None, None)
        value = self.isolate.run(condition.source, self.visible(token), subject, where=where).value
        if not isinstance(value, bool):
            shown = "null" if value is None else type(value).__name__
            raise ScriptError(f"{where}: the script's value is {shown}, not a boolean")
        return value
