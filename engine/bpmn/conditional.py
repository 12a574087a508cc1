"""A conditionalEventDefinition, read into the event's `conditional` trigger.

Its `condition` (a `${}` expression) is required; `camunda:variableName` and
`camunda:variableEvents` (a comma-separated list of create, update, delete) narrow which variable
changes evaluate it, as in Camunda 7.
"""

from __future__ import annotations

from engine.bpmn.reading import Context, Element, camunda_tag, definition_children, local_name
from engine.errors import ExpressionError
from engine.language.expressions import compile_expression, is_expression
from engine.model import VARIABLE_EVENTS, ConditionalTrigger


def parse_conditional(definition: Element, ctx: Context, event_id: str) -> ConditionalTrigger:
    """The trigger of the conditionalEventDefinition `definition` of the event `event_id`."""
    children = definition_children(definition, ctx, event_id)
    conditions = [child for child in children if local_name(child) == "condition"]
    for child in children:
        if local_name(child) != "condition":
            raise ctx.unsupported(child, event_id)
    if not conditions:
        raise ctx.error("a conditional event needs a condition", definition, event_id)
    if len(conditions) > 1:
        raise ctx.error("a conditional event has one condition, not several", definition, event_id)
    element = conditions[0]
    language = element.get("language")
    if language not in (None, "", "juel") or element.get(camunda_tag("resource")) is not None:
        message = "the condition of a conditional event must be a ${} expression"
        raise ctx.error(message, element, event_id)
    text = "".join(element.itertext()).strip()
    if not text:
        raise ctx.error("the condition of a conditional event is empty", element, event_id)
    if not is_expression(text):
        message = f"the condition of a conditional event must be a ${{}} expression, not {text}"
        raise ctx.error(message, element, event_id)
    try:
        condition = compile_expression(text)
    except ExpressionError as error:
        message = f"invalid condition of conditional event '{event_id}': {error.message}"
        raise ctx.error(message, element, event_id) from None
    name = definition.get(camunda_tag("variableName"))
    if name is not None and (not name.strip() or "${" in name or "#{" in name):
        raise ctx.error("camunda:variableName must name a variable", definition, event_id)
    events = _variable_events(definition, ctx, event_id)
    return ConditionalTrigger(
        condition=condition,
        variable_name=name.strip() if name is not None else None,
        variable_events=events,
    )


def _variable_events(definition: Element, ctx: Context, event_id: str) -> tuple[str, ...]:
    written = definition.get(camunda_tag("variableEvents"))
    if written is None:
        return ()
    events = tuple(part.strip() for part in written.split(",") if part.strip())
    unknown = [event for event in events if event not in VARIABLE_EVENTS]
    if unknown or not events:
        message = (
            f"camunda:variableEvents must list create, update or delete, not '{written.strip()}'"
        )
        raise ctx.error(message, definition, event_id)
    return events
