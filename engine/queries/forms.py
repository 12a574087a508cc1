"""Generated forms as they stand now (`engine/language/forms.py`): an open user task's, with the
variables the task sees, and a definition's none start event's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.language.forms import Form
from engine.language.variables import from_row
from engine.model import UserTask
from engine.queries import Connection, query
from engine.queries import variables as variable_reads
from engine.store.definitions import DefinitionRow
from engine.store.tasks import TaskRow

if TYPE_CHECKING:
    from engine.core.definitions import DefinitionCache

__all__ = ["start_form", "task_form"]


@query
def task_form(conn: Connection, cache: DefinitionCache, task: TaskRow) -> Form:
    """The form of the user task `task` (read open) with the variables it sees, inner names
    hiding outer ones; no fields: the task has none."""
    fields: tuple[Any, ...] = ()
    if task.definition_id is not None and task.definition_key is not None:
        node = cache.get(conn, task.definition_id, task.definition_key).node(task.node_id)
        fields = node.form_fields if isinstance(node, UserTask) else ()
    # A standalone task has no form.
    visible = variable_reads.task_variables(conn, task.id, local=False) or {}
    variables = {name: from_row(kind, value) for name, (kind, value) in visible.items()}
    return Form(fields, variables)


@query
def start_form(conn: Connection, cache: DefinitionCache, definition: DefinitionRow) -> Form:
    """The form of the start event a start by key or id enters through (see
    `ProcessModel.initial`; no fields: it has none, or there is no such start event)."""
    start = cache.get(conn, definition.id, definition.key).initial
    return Form(start.form_fields if start is not None else (), {})
