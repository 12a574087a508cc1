"""Input and output parameters applied to an activity instance (Camunda 7's rules).

Inputs are computed, all from the variables visible where the token arrives, when the visit
opens, and become local variables of the activity instance: the token's own (for a subprocess,
its scope token's). Outputs are computed in the activity's local context when it ends normally,
before its visit closes and its locals vanish, and set in its parent scope as Camunda's
setVariable does: where the name already lives, nearest first, else in the instance's root scope.
An activity left by an error or an interruption applies no outputs. What a parameter's
expression changes (`${execution.setVariable('x', 1)}`) is applied once its parameters are
computed, before they are set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.core.runtime import InstanceRun, Token
from engine.errors import ExpressionError
from engine.language.acting import ChangeLog
from engine.language.expression_context import ExpressionContext, context_for
from engine.language.mappings import Parameter, evaluate
from engine.language.variables import infer
from engine.model import Node
from engine.semantics.changes import apply_changes


def _computed(
    node: Node, parameter: Parameter, kind: str, values: dict[str, Any], context: ExpressionContext
) -> Any:
    try:
        return infer(evaluate(parameter.value, values, context))
    except ExpressionError as error:
        raise ExpressionError(
            f"{kind} parameter '{parameter.name}' of '{node.id}' failed: {error.message}",
            node_id=node.id,
            parameter=parameter.name,
        ) from error


def _computed_all(
    run: InstanceRun, token: Token, node: Node, kind: str, parameters: Sequence[Parameter]
) -> list[tuple[str, Any]]:
    """Each of `parameters` (the node's `kind` parameters) by name, computed with what `token`
    sees; none when there are none or the run skips mappings. What their expressions changed is
    applied."""
    if not parameters or run.skip_io_mappings:
        return []
    values = run.values_for(token)
    changes = ChangeLog()
    context = context_for(run, token, values, changes=changes)
    computed = [(p.name, _computed(node, p, kind, values, context)) for p in parameters]
    apply_changes(run, token, None, changes.changes)
    return computed


def map_inputs(run: InstanceRun, token: Token, node: Node) -> None:
    """The node's input parameters become local variables of `token` (a no-op without)."""
    if node.io is None:
        return
    for name, value in _computed_all(run, token, node, "input", node.io.inputs):
        run.set_local(token.id, name, value)


def map_outputs(run: InstanceRun, token: Token, node: Node) -> None:
    """The node's output parameters, computed with what `token` sees, set in its parent scope."""
    if node.io is None:
        return
    computed = _computed_all(run, token, node, "output", node.io.outputs)
    if not computed:
        return
    parent = run.tokens.get(token.scope_id) if token.scope_id is not None else None
    for name, value in computed:
        if parent is None:
            run.set_variable(name, value)
        else:
            run.set_visible(parent, name, value)


def set_locals(run: InstanceRun, token: Token, values: Mapping[str, Any] | None) -> None:
    """Variables local to `token`'s activity instance, from outside (a worker's `localVariables`,
    a message's `processVariablesLocal`): they vanish with it unless an output copies them."""
    for name, value in (values or {}).items():
        run.set_local(token.id, name, infer(value))
