"""Call activities: `calledElement` with Camunda's binding attributes, and the `camunda:in` /
`camunda:out` mappings of the extension elements, read into a `CallActivity`.

Understood: `camunda:calledElementBinding` (latest, deployment, version, versionTag) with
`camunda:calledElementVersion` / `camunda:calledElementVersionTag`; `${...}` in the called key
and in the version; `camunda:in` / `camunda:out` with `variables="all"`, `source`,
`sourceExpression`, `target` and `local`; `camunda:in businessKey`; `camunda:calledElementTenantId`
(a tenant id or an expression). Refused, naming the element: CMMN cases (`camunda:caseRef`,
`camunda:caseTenantId`), variable mapping delegates
(`camunda:variableMappingClass`, `camunda:variableMappingDelegateExpression`) and a
`camunda:out businessKey`.
"""

from __future__ import annotations

from typing import Any

from engine.bpmn.nodes import common_fields
from engine.bpmn.reading import (
    CAMUNDA_NS,
    Context,
    Element,
    bpmn_tag,
    camunda_tag,
    check_children,
    element_children,
    local_name,
    namespace_of,
)
from engine.language.expressions import Expression, compile_or_refuse, is_expression
from engine.model import CallActivity, CalledBinding, CallMapping, Node

_BINDINGS: tuple[CalledBinding, ...] = ("latest", "deployment", "version", "versionTag")
_REFUSED_ATTRIBUTES = (
    "caseRef",
    "caseBinding",
    "caseVersion",
    "caseTenantId",
    "variableMappingClass",
    "variableMappingDelegateExpression",
)
MAPPINGS = frozenset({"in", "out"})


def call_activity(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    node_id = common["id"]
    check_children(element, ctx)
    for attribute in _REFUSED_ATTRIBUTES:
        if element.get(camunda_tag(attribute)) is not None:
            message = f"camunda:{attribute} on a call activity is not supported by this engine"
            raise ctx.error(message, element, node_id)
    called = (element.get("calledElement") or "").strip()
    if not called:
        raise ctx.error("a call activity needs a calledElement", element, node_id)
    _checked(called, "calledElement", element, ctx, node_id)
    binding, version, version_tag = read_binding(element, ctx, node_id, "calledElement")
    inputs, outputs = _mappings(element, ctx, node_id)
    tenant_id = element.get(camunda_tag("calledElementTenantId"))
    if tenant_id is not None:
        tenant_id = tenant_id.strip()
        if not tenant_id:
            message = "camunda:calledElementTenantId needs a tenant id or an expression"
            raise ctx.error(message, element, node_id)
        _checked(tenant_id, "camunda:calledElementTenantId", element, ctx, node_id)
    return CallActivity(
        **common,
        called_element=called,
        binding=binding,
        version=version,
        version_tag=version_tag,
        tenant_id=tenant_id,
        inputs=inputs,
        outputs=outputs,
    )


def read_binding(
    element: Element, ctx: Context, node_id: str, prefix: str
) -> tuple[CalledBinding, str | None, str | None]:
    """Camunda's binding attributes `camunda:{prefix}Binding` (latest, deployment, version,
    versionTag), `{prefix}Version` (a number or an expression) and `{prefix}VersionTag`, each
    refused where the binding does not use it: the binding, the version and the version tag."""
    written = element.get(camunda_tag(f"{prefix}Binding")) or "latest"
    if written not in _BINDINGS:
        message = f"camunda:{prefix}Binding '{written}' is not one of {', '.join(_BINDINGS)}"
        raise ctx.error(message, element, node_id)
    binding: CalledBinding = written
    version = element.get(camunda_tag(f"{prefix}Version"))
    version_tag = element.get(camunda_tag(f"{prefix}VersionTag"))
    if binding == "version":
        version = (version or "").strip()
        if not version:
            message = f'{prefix}Binding="version" needs camunda:{prefix}Version'
            raise ctx.error(message, element, node_id)
        if not is_expression(version) and not version.isdigit():
            message = f"camunda:{prefix}Version '{version}' is not a version number"
            raise ctx.error(message, element, node_id)
        _checked(version, f"camunda:{prefix}Version", element, ctx, node_id)
    elif version is not None:
        message = f'camunda:{prefix}Version needs {prefix}Binding="version"'
        raise ctx.error(message, element, node_id)
    if binding == "versionTag":
        version_tag = (version_tag or "").strip()
        if not version_tag:
            message = f'{prefix}Binding="versionTag" needs camunda:{prefix}VersionTag'
            raise ctx.error(message, element, node_id)
    elif version_tag is not None:
        message = f'camunda:{prefix}VersionTag needs {prefix}Binding="versionTag"'
        raise ctx.error(message, element, node_id)
    return binding, version, version_tag


def _checked(text: str, what: str, element: Element, ctx: Context, node_id: str) -> None:
    if "${" in text or "#{" in text:
        _compiled(text, what, element, ctx, node_id)


def _compiled(text: str, what: str, element: Element, ctx: Context, node_id: str) -> Expression:
    return compile_or_refuse(text, what, lambda message: ctx.error(message, element, node_id))


def _mappings(
    element: Element, ctx: Context, node_id: str
) -> tuple[tuple[CallMapping, ...], tuple[CallMapping, ...]]:
    inputs: list[CallMapping] = []
    outputs: list[CallMapping] = []
    for extensions in element.findall(bpmn_tag("extensionElements")):
        for child in element_children(extensions):
            if namespace_of(child) != CAMUNDA_NS or local_name(child) not in MAPPINGS:
                continue
            mapping = read_mapping(child, ctx, node_id)
            if local_name(child) == "out" and mapping.business_key:
                message = "camunda:out businessKey is not supported by this engine"
                raise ctx.error(message, child, node_id)
            (inputs if local_name(child) == "in" else outputs).append(mapping)
    return tuple(inputs), tuple(outputs)


def read_mapping(child: Element, ctx: Context, node_id: str) -> CallMapping:
    """One camunda:in or camunda:out (of a call activity, or an in of a signal throw event)."""
    where = f"camunda:{local_name(child)}"
    if element_children(child):
        raise ctx.error(f"{where} has no child elements", child, node_id)
    local = ctx.boolean(child, "local")
    business_key = child.get("businessKey")
    variables = child.get("variables")
    source = child.get("source")
    source_expression = child.get("sourceExpression")
    target = child.get("target")
    given = [
        name
        for name, value in (
            ("businessKey", business_key),
            ("variables", variables),
            ("source", source),
            ("sourceExpression", source_expression),
        )
        if value is not None
    ]
    if len(given) != 1:
        message = (
            f"{where} needs exactly one of businessKey, variables, source or sourceExpression"
            + (f", not {' and '.join(given)}" if given else "")
        )
        raise ctx.error(message, child, node_id)
    fields: dict[str, Any] = {"local": local, "line": child.sourceline}
    if business_key is not None:
        fields["business_key"] = True
        if "${" in business_key or "#{" in business_key:
            what = f"{where} businessKey"
            fields["source_expression"] = _compiled(business_key, what, child, ctx, node_id)
        else:
            fields["source"] = business_key  # a constant key
    elif variables is not None:
        if variables != "all":
            message = f'{where} variables="{variables}": the only value is "all"'
            raise ctx.error(message, child, node_id)
        fields["all"] = True
    else:
        if not target:
            raise ctx.error(f"{where} with a source needs a target", child, node_id)
        fields["target"] = target
        if source is not None:
            fields["source"] = source
        else:
            assert source_expression is not None
            fields["source_expression"] = _compiled(
                source_expression, f"{where} sourceExpression", child, ctx, node_id
            )
    if (business_key is not None or variables is not None) and target is not None:
        raise ctx.error(f"{where} with {given[0]} has no target", child, node_id)
    return CallMapping(**fields)
