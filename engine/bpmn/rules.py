"""Business rule tasks: `camunda:decisionRef` with Camunda's binding attributes, its result
variable and result mapping, read into a `BusinessRuleTask`.

Understood: `camunda:decisionRef` (a decision key or a `${...}` expression),
`camunda:decisionRefBinding` (latest, deployment, version, versionTag) with
`camunda:decisionRefVersion` / `camunda:decisionRefVersionTag`, `camunda:resultVariable`,
`camunda:mapDecisionResult` (singleEntry, singleResult, collectEntries, resultList). A business
rule task without a decisionRef is implemented as a service task is (`camunda:type="external"`
with a topic, `camunda:expression`, a handler) and runs as one. Refused, naming the element:
`camunda:decisionRefTenantId`, and `camunda:mapDecisionResult` without a result variable.
"""

from __future__ import annotations

from engine.bpmn.calls import read_binding
from engine.bpmn.nodes import common_fields, service_task
from engine.bpmn.reading import Context, Element, camunda_tag, check_children
from engine.errors import ExpressionError
from engine.language.expressions import compile_expression
from engine.model import DECISION_RESULT_MAPPINGS, BusinessRuleTask, DecisionResultMapping, Node

_IMPLEMENTATIONS = ("type", "topic", "expression", "class", "delegateExpression")


def business_rule_task(element: Element, ctx: Context) -> Node:
    reference = element.get(camunda_tag("decisionRef"))
    if reference is None:
        if any(element.get(camunda_tag(name)) is not None for name in _IMPLEMENTATIONS):
            return service_task(element, ctx)
        message = (
            "a business rule task needs camunda:decisionRef, or an implementation as a service "
            'task has (camunda:type="external" with a topic, camunda:expression, a handler)'
        )
        raise ctx.error(message, element)
    common = common_fields(element, ctx)
    node_id = common["id"]
    check_children(element, ctx)
    if element.get(camunda_tag("decisionRefTenantId")) is not None:
        message = "camunda:decisionRefTenantId is not supported by this engine"
        raise ctx.error(message, element, node_id)
    reference = reference.strip()
    if not reference:
        raise ctx.error("camunda:decisionRef is empty", element, node_id)
    if "${" in reference or "#{" in reference:
        try:
            compile_expression(reference)
        except ExpressionError as error:
            raise ctx.error(f"camunda:decisionRef: {error.message}", element, node_id) from None
    binding, version, version_tag = read_binding(element, ctx, node_id, "decisionRef")
    result = element.get(camunda_tag("resultVariable"))
    if result is not None and not result.strip():
        raise ctx.error("camunda:resultVariable is empty", element, node_id)
    written = element.get(camunda_tag("mapDecisionResult"))
    mapping: DecisionResultMapping = "resultList"
    if written is not None:
        if written not in DECISION_RESULT_MAPPINGS:
            allowed = ", ".join(DECISION_RESULT_MAPPINGS)
            message = f"camunda:mapDecisionResult '{written}' is not one of {allowed}"
            raise ctx.error(message, element, node_id)
        if result is None:
            message = "camunda:mapDecisionResult needs camunda:resultVariable"
            raise ctx.error(message, element, node_id)
        mapping = written
    return BusinessRuleTask(
        **common,
        decision_ref=reference,
        binding=binding,
        version=version,
        version_tag=version_tag,
        result_variable=result,
        map_decision_result=mapping,
    )
