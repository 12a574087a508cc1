"""The changes an acting expression or a script asked for, applied in order in the command.

A listener's `${execution.setVariable('approved', true)}`, a mapping's
`${execution.removeVariable('draft')}`, a task listener's `${task.setAssignee('kermit')}` and
the same calls from JavaScript are recorded as changes (engine/language/acting.py); this is the
one place that applies them, to the run the command holds, so they commit or roll back with it
and leave the same history rows as any variable or task change.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.core.runtime import InstanceRun, Token, UserTaskRow
from engine.language.acting import Change
from engine.language.variables import infer


def apply_changes(
    run: InstanceRun, token: Token | None, task: UserTaskRow | None, changes: Iterable[Change]
) -> None:
    """Apply `changes` made from `token` (and `task`, in a task listener), in order: a variable
    set as Camunda's setVariable does (`local`: on the token's own activity instance), removed
    as removeVariable does, or an attribute of the task."""
    for kind, name, value, local in changes:
        if kind == "set" and name is not None:
            if local and token is not None:
                run.set_local(token.id, name, infer(value))
            else:
                run.set_visible(token, name, infer(value))
        elif kind == "remove" and name is not None:
            run.remove_visible(token, name, local=local)
        elif task is not None:
            _change_task(task, kind, value)


def _change_task(task: UserTaskRow, kind: str, value: object) -> None:
    if kind == "assignee":
        task.assignee = None if value is None else str(value)
    elif kind == "priority" and isinstance(value, int | float):
        task.priority = int(value)
    elif kind == "name":
        task.name = None if value is None else str(value)
    elif kind == "description":
        task.description = None if value is None else str(value)
    elif kind == "due":
        task.due_at = value  # type: ignore[assignment]
    elif kind == "follow_up":
        task.follow_up_at = value  # type: ignore[assignment]
    else:
        return
    task.dirty = True
