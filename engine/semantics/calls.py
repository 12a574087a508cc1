"""Call activities: the caller's side of a called instance.

A token arriving at a call activity waits there (no lease, no job) and records a `StartCalled`
effect with the called key, version and input variables computed now, where the token is; the
command layer starts the called instance in the same transaction (engine/commands/family.py).
When the called instance completes, its caller's token leaves the call activity with the
variables the `camunda:out` mappings copy back (`called_outputs`, computed from the called
instance's variables); an error or escalation that the called instance did not catch is thrown
again at that token; when the token is ended early, the called instance ends with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.core.effects import StartCalled
from engine.core.runtime import InstanceRun, Token
from engine.errors import ExpressionError
from engine.language.expression_context import context_for
from engine.language.expressions import Expression
from engine.language.variables import TypedValue, infer
from engine.model import CallActivity, CallMapping, Node
from engine.semantics.base import Moves


class CallMoves(Moves):
    def _call(self, token: Token, node: CallActivity) -> None:
        run = self.run
        self._wait(token)
        values = run.values_for(token)
        context = self._context(token, values)
        key = _text(node, node.called_element, "calledElement", values, context)
        version = None
        if node.version is not None:
            written = _text(node, node.version, "camunda:calledElementVersion", values, context)
            if not written.strip().isdigit():
                raise ExpressionError(
                    f"camunda:calledElementVersion of call activity '{node.id}' is "
                    f"'{written}', not a version number",
                    node_id=node.id,
                )
            version = int(written)
        variables, business_key = mapped_inputs(run, token, node, node.inputs)
        tenant_id = None
        if node.tenant_id is not None:
            tenant_id = _tenant(node, node.tenant_id, values, context)
        run.effects.append(
            StartCalled(
                token_id=token.id,
                activity_id=node.id,
                key=key,
                binding=node.binding,
                version=version,
                version_tag=node.version_tag,
                variables=variables,
                business_key=business_key,
                tenant_given=node.tenant_id is not None,
                tenant_id=tenant_id,
            )
        )


def _tenant(node: CallActivity, written: str, values: dict[str, Any], context: Any) -> str | None:
    """`camunda:calledElementTenantId`: as written, or the value of its expression, where null
    names no tenant (Camunda's shared definitions)."""
    if "${" not in written and "#{" not in written:
        return written
    what = "camunda:calledElementTenantId"
    try:
        value = Expression(written).evaluate(values, context)
    except ExpressionError as error:
        raise ExpressionError(
            f"{what} of call activity '{node.id}' failed: {error.message}", node_id=node.id
        ) from error
    if value is None:
        return None
    if not isinstance(value, str) or value == "":
        raise ExpressionError(
            f"{what} of call activity '{node.id}' is {value!r}, not a tenant id", node_id=node.id
        )
    return value


def _text(node: CallActivity, written: str, what: str, values: dict[str, Any], context: Any) -> str:
    return expression_text(f"call activity '{node.id}'", node.id, written, what, values, context)


def expression_text(
    owner: str, node_id: str, written: str, what: str, values: dict[str, Any], context: Any
) -> str:
    """An attribute naming something (a key, a version): as written, or the value of its
    `${...}` expression, which must be a non-empty string or a number."""
    if "${" not in written and "#{" not in written:
        return written
    try:
        value = Expression(written).evaluate(values, context)
    except ExpressionError as error:
        raise ExpressionError(
            f"{what} of {owner} failed: {error.message}", node_id=node_id
        ) from error
    if not isinstance(value, str | int) or isinstance(value, bool) or value == "":
        raise ExpressionError(f"{what} of {owner} is {value!r}, not a name", node_id=node_id)
    return str(value)


def _mapped(
    mapping: CallMapping,
    node: Node,
    typed: dict[str, TypedValue],
    values: dict[str, Any],
    context: Any,
) -> TypedValue:
    if mapping.source_expression is not None:
        try:
            return infer(mapping.source_expression.evaluate(values, context))
        except ExpressionError as error:
            what = "call activity" if isinstance(node, CallActivity) else "signal throw event"
            raise ExpressionError(
                f"a mapping of {what} '{node.id}' failed: {error.message}",
                node_id=node.id,
            ) from error
    assert mapping.source is not None
    return typed.get(mapping.source, infer(None))


def mapped_inputs(
    run: InstanceRun, token: Token, node: Node, mappings: Sequence[CallMapping]
) -> tuple[dict[str, TypedValue], str | None]:
    """What the camunda:in `mappings` of `node` (a call activity, a signal throw event) pass on:
    variables and a business key, from what `token` sees (`local` mappings: from the node's own
    locals only)."""
    seen = run.typed_for(token)
    own = dict(run.locals.get(token.id, {}))
    variables: dict[str, TypedValue] = {}
    business_key: str | None = None
    for mapping in mappings:
        typed = own if mapping.local else seen
        values = {name: value.value for name, value in typed.items()}
        context = context_for(run, token, values)
        if mapping.business_key:
            if mapping.source_expression is None:
                business_key = mapping.source
            else:
                found = _mapped(mapping, node, typed, values, context).value
                business_key = None if found is None else str(found)
        elif mapping.all:
            variables.update(typed)
        else:
            assert mapping.target is not None
            variables[mapping.target] = _mapped(mapping, node, typed, values, context)
    return variables, business_key


def called_outputs(
    node: CallActivity, called: InstanceRun
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the `camunda:out` mappings of `node` copy back from the completed instance `called`
    (its root scope's variables): (variables set as setVariable from the call activity,
    locals of the call activity)."""
    typed = dict(called.variables)
    values = {name: value.value for name, value in typed.items()}
    context = context_for(called, None, values)
    variables: dict[str, Any] = {}
    locals_: dict[str, Any] = {}
    for mapping in node.outputs:
        into = locals_ if mapping.local else variables
        if mapping.all:
            into.update(values)
        else:
            assert mapping.target is not None
            into[mapping.target] = _mapped(mapping, node, typed, values, context).value
    return variables, locals_
