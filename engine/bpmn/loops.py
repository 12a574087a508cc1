"""Loop characteristics of a task or an embedded subprocess: multiInstanceLoopCharacteristics and
standardLoopCharacteristics, read into the node's `loop`.

Camunda's own attributes are understood: `camunda:collection`, `camunda:elementVariable` (or the
standard `loopDataInputRef` and `inputDataItem`), `camunda:asyncBefore` (every iteration starts as
an asynchronous continuation) and `camunda:exclusive` (every job of this engine is exclusive).
`camunda:asyncAfter` on the characteristics is refused: an iteration's end is never a wait state
here.
"""

from __future__ import annotations

import re

from engine.bpmn.reading import (
    BPMN_NS,
    Context,
    Element,
    camunda_tag,
    element_children,
    local_name,
    namespace_of,
    plain_extensions,
)
from engine.language.expressions import Expression, compile_or_refuse, is_expression
from engine.model import Loop, MultiInstance, StandardLoop

LOOP_ELEMENTS = frozenset({"multiInstanceLoopCharacteristics", "standardLoopCharacteristics"})
DECORATION = frozenset({"documentation", "extensionElements"})
_MI_CHILDREN = frozenset(
    {"loopCardinality", "completionCondition", "loopDataInputRef", "inputDataItem"}
)
_NAME = re.compile(r"[^\W\d]\w*")


def parse_loop(element: Element, ctx: Context, node_id: str) -> Loop | None:
    """The loop characteristics of the flow node `element`, if it has any (at most one)."""
    found = [
        child
        for child in element_children(element)
        if namespace_of(child) == BPMN_NS and local_name(child) in LOOP_ELEMENTS
    ]
    if not found:
        return None
    if len(found) > 1:
        raise ctx.error("an activity has at most one loop characteristics", found[1], node_id)
    loop = found[0]
    plain_extensions(loop, ctx, node_id)
    if local_name(loop) == "standardLoopCharacteristics":
        return _standard(loop, ctx, node_id)
    return _multi_instance(loop, ctx, node_id)


def _parts(loop: Element, ctx: Context, node_id: str, allowed: frozenset[str]) -> dict[str, str]:
    """The text of each meaningful child of `loop`; anything else is refused."""
    parts: dict[str, str] = {}
    for child in element_children(loop):
        local = local_name(child)
        if namespace_of(child) == BPMN_NS and local in DECORATION:
            continue
        if namespace_of(child) != BPMN_NS or local not in allowed:
            raise ctx.unsupported(child, node_id)
        if local in parts:
            raise ctx.error(f"more than one {local}", child, node_id)
        text = (child.get("name") if local == "inputDataItem" else child.text) or ""
        parts[local] = text.strip()
    return parts


def _expression(loop: Element, ctx: Context, node_id: str, what: str, text: str) -> Expression:
    return compile_or_refuse(text, what, lambda message: ctx.error(message, loop, node_id))


def _multi_instance(loop: Element, ctx: Context, node_id: str) -> MultiInstance:
    if ctx.boolean(loop, camunda_tag("asyncAfter")):
        message = (
            "camunda:asyncAfter on multiInstanceLoopCharacteristics is not supported by this "
            "engine (put it on the activity)"
        )
        raise ctx.error(message, loop, node_id)
    parts = _parts(loop, ctx, node_id, _MI_CHILDREN)
    cardinality = parts.get("loopCardinality")
    if cardinality is not None:
        if is_expression(cardinality):
            _expression(loop, ctx, node_id, "loopCardinality", cardinality)
        elif not re.fullmatch(r"[0-9]+", cardinality):
            message = f"loopCardinality must be a whole number or ${{...}}, not '{cardinality}'"
            raise ctx.error(message, loop, node_id)
    collection = loop.get(camunda_tag("collection")) or parts.get("loopDataInputRef") or None
    element_variable = (
        loop.get(camunda_tag("elementVariable")) or parts.get("inputDataItem") or None
    )
    if collection is not None:
        collection = collection.strip()
        if is_expression(collection):
            _expression(loop, ctx, node_id, "camunda:collection", collection)
        elif not _NAME.fullmatch(collection):
            message = f"camunda:collection must be a variable name or ${{...}}, not '{collection}'"
            raise ctx.error(message, loop, node_id)
    if element_variable is not None and not _NAME.fullmatch(element_variable.strip()):
        message = f"camunda:elementVariable must be a variable name, not '{element_variable}'"
        raise ctx.error(message, loop, node_id)
    if cardinality is None and collection is None:
        message = (
            "multiInstanceLoopCharacteristics is not supported by this engine without a "
            "loopCardinality or a camunda:collection"
        )
        raise ctx.error(message, loop, node_id)
    if element_variable is not None and collection is None:
        raise ctx.error("camunda:elementVariable needs camunda:collection", loop, node_id)
    condition = parts.get("completionCondition")
    return MultiInstance(
        sequential=ctx.boolean(loop, "isSequential"),
        cardinality=cardinality,
        collection=collection,
        element_variable=element_variable.strip() if element_variable else None,
        completion_condition=(
            _expression(loop, ctx, node_id, "completionCondition", condition) if condition else None
        ),
        async_before=ctx.boolean(loop, camunda_tag("asyncBefore"))
        or ctx.boolean(loop, camunda_tag("async")),
    )


def _standard(loop: Element, ctx: Context, node_id: str) -> StandardLoop:
    parts = _parts(loop, ctx, node_id, frozenset({"loopCondition"}))
    maximum_text = (loop.get("loopMaximum") or "").strip()
    if maximum_text and not re.fullmatch(r"[0-9]+", maximum_text):
        message = f"loopMaximum must be a whole number, not '{maximum_text}'"
        raise ctx.error(message, loop, node_id)
    condition = parts.get("loopCondition")
    if not condition and not maximum_text:
        message = (
            "standardLoopCharacteristics is not supported by this engine without a "
            "loopCondition or a loopMaximum (it would never end)"
        )
        raise ctx.error(message, loop, node_id)
    return StandardLoop(
        condition=(
            _expression(loop, ctx, node_id, "loopCondition", condition) if condition else None
        ),
        test_before=ctx.boolean(loop, "testBefore"),
        maximum=int(maximum_text) if maximum_text else None,
    )
