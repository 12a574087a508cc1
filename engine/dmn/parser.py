"""DMN 1.1, 1.2 and 1.3 XML (as Camunda Modeler saves it) to `DmnDefinitions`.

The document is read exactly as safely as BPMN (engine/bpmn/parser.py's `load_document`: no DTD,
no entities, no network, a size limit). Diagram interchange (DMNDI) and other decoration are
skipped. Every refusal is a ModelError naming the file, line and element.

Reading is linear in the file: every check of uniqueness (rule ids, output names, decision ids,
required decisions) is a set or dict lookup, never a walk of what came before. What a deployment
accepts is bounded by `ModelLimits` as for BPMN: the file's bytes (`max_bytes`) and the rules of
one decision table (`max_rules`, the engine's `max_decision_rules`) and the decisions of one file
(`max_decisions`, the engine's `max_dmn_decisions`).
"""

from __future__ import annotations

from typing import Any

from engine.bpmn.reading import element_error, load_document
from engine.dmn import model
from engine.dmn.graph import find_cycle
from engine.errors import ExpressionError, ModelError
from engine.language.expressions import compile_expression
from engine.language.history_ttl import parse_history_ttl
from engine.model import DEFAULT_LIMITS, ModelLimits

MAX_DMN_BYTES = DEFAULT_LIMITS.max_bytes
DMN_NAMESPACES = (
    "http://www.omg.org/spec/DMN/20151101/dmn.xsd",
    "http://www.omg.org/spec/DMN/20180521/MODEL/",
    "https://www.omg.org/spec/DMN/20191111/MODEL/",
)
CAMUNDA_DMN_NS = "http://camunda.org/schema/1.0/dmn"

# lxml ships no type information; elements are typed loosely through this alias.
Element = Any


def _local(element: Element) -> str:
    tag: str = element.tag
    return tag.rpartition("}")[2]


def _camunda(local: str) -> str:
    return f"{{{CAMUNDA_DMN_NS}}}{local}"


class _Reader:
    def __init__(self, file: str, namespace: str, limits: ModelLimits | None) -> None:
        self.file = file
        self.namespace = namespace
        # What one file may hold; None: anything (a definition already deployed).
        self.limits = limits

    def tag(self, local: str) -> str:
        return f"{{{self.namespace}}}{local}"

    def error(self, message: str, element: Element, element_id: str | None = None) -> ModelError:
        return element_error(self.file, message, element, element_id)

    def at_most(
        self, elements: list[Element], most: int | None, holder: str, what: str, setting: str
    ) -> None:
        """Refuse more than `most` `elements` (None: any number), naming the first too many and
        the engine's `setting` that bounds them."""
        if most is not None and len(elements) > most:
            message = (
                f"{holder} has {len(elements)} {what}, more than {most}, "
                f"the limit ({setting} in the engine's settings)"
            )
            raise self.error(message, elements[most])

    def children(self, element: Element, local: str) -> list[Element]:
        return list(element.findall(self.tag(local)))

    def child(self, element: Element, local: str) -> Element | None:
        return element.find(self.tag(local))

    def text(self, element: Element | None) -> str:
        """The <text> of an expression element, stripped ('' when absent)."""
        if element is None:
            return ""
        text = element.find(self.tag("text"))
        return (text.text or "").strip() if text is not None else ""

    def language(
        self, element: Element, inherited: model.ExpressionLanguage, owner_id: str | None = None
    ) -> model.ExpressionLanguage:
        written = element.get("expressionLanguage")
        if written is None or not written.strip():
            return inherited
        value = written.strip()
        if value.lower() == "juel":
            return model.ExpressionLanguage.JUEL
        if value.lower() == "feel" or "/FEEL/" in value or value.endswith("/FEEL"):
            return model.ExpressionLanguage.FEEL
        message = f"expressionLanguage '{value}' is not supported (only FEEL and JUEL)"
        raise self.error(message, element, element.get("id") or owner_id)

    def entry(
        self, element: Element, inherited: model.ExpressionLanguage, owner_id: str | None = None
    ) -> model.Entry:
        language = self.language(element, inherited, owner_id)
        text = self.text(element)
        if language is model.ExpressionLanguage.JUEL and ("${" in text or "#{" in text):
            try:
                compile_expression(text)
            except ExpressionError as error:
                raise self.error(error.message, element, element.get("id") or owner_id) from None
        return model.Entry(
            text=text, language=language, id=element.get("id"), line=element.sourceline
        )

    def required_id(self, element: Element, what: str, owner_id: str | None = None) -> str:
        value = (element.get("id") or "").strip()
        if not value:
            raise self.error(f"a {what} needs an id", element, owner_id)
        return value


def _split_values(text: str) -> tuple[str, ...]:
    """`"gold", "silver"` to ('"gold"', '"silver"'): commas outside string literals separate."""
    items: list[str] = []
    current: list[str] = []
    quoted = False
    escaped = False
    for char in text:
        if quoted:
            current.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
            current.append(char)
        elif char == ",":
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    items.append("".join(current).strip())
    return tuple(item for item in items if item)


def _input(
    element: Element, reader: _Reader, language: model.ExpressionLanguage
) -> model.InputClause:
    input_id = reader.required_id(element, "decision table input")
    expression = reader.child(element, "inputExpression")
    if expression is None:
        raise reader.error("a decision table input needs an inputExpression", element)
    values = reader.child(element, "inputValues")
    return model.InputClause(
        id=input_id,
        label=element.get("label"),
        expression=reader.entry(expression, language, input_id),
        type_ref=expression.get("typeRef"),
        input_variable=element.get(_camunda("inputVariable")) or model.DEFAULT_INPUT_VARIABLE,
        input_values=reader.text(values) or None if values is not None else None,
    )


def _output(
    element: Element, reader: _Reader, language: model.ExpressionLanguage, single: bool
) -> model.OutputClause:
    output_id = reader.required_id(element, "decision table output")
    name = (element.get("name") or "").strip()
    if not name:
        if not single:
            raise reader.error("an output of a table with several outputs needs a name", element)
        name = output_id
    values = reader.child(element, "outputValues")
    default = reader.child(element, "defaultOutputEntry")
    return model.OutputClause(
        id=output_id,
        label=element.get("label"),
        name=name,
        type_ref=element.get("typeRef"),
        output_values=_split_values(reader.text(values)) if values is not None else (),
        default_output_entry=reader.entry(default, language, output_id)
        if default is not None
        else None,
    )


def _rule(
    element: Element, reader: _Reader, language: model.ExpressionLanguage, inputs: int, outputs: int
) -> model.Rule:
    rule_id = reader.required_id(element, "rule")
    input_entries = reader.children(element, "inputEntry")
    output_entries = reader.children(element, "outputEntry")
    if len(input_entries) != inputs:
        message = f"the rule has {len(input_entries)} input entries; the table has {inputs} inputs"
        raise reader.error(message, element)
    if len(output_entries) != outputs:
        message = (
            f"the rule has {len(output_entries)} output entries; the table has {outputs} outputs"
        )
        raise reader.error(message, element)
    description = reader.child(element, "description")
    return model.Rule(
        id=rule_id,
        description=(description.text or "").strip() or None if description is not None else None,
        input_entries=tuple(reader.entry(e, language, rule_id) for e in input_entries),
        output_entries=tuple(reader.entry(e, language, rule_id) for e in output_entries),
        line=element.sourceline,
    )


def _table(
    element: Element, reader: _Reader, language: model.ExpressionLanguage
) -> model.DecisionTable:
    table_id = reader.required_id(element, "decision table")
    language = reader.language(element, language)
    written = (element.get("hitPolicy") or model.HitPolicy.UNIQUE.value).strip()
    try:
        hit_policy = model.HitPolicy(written)
    except ValueError:
        allowed = ", ".join(policy.value for policy in model.HitPolicy)
        raise reader.error(f"hitPolicy '{written}' is not one of {allowed}", element) from None
    aggregation: model.Aggregation | None = None
    written_aggregation = (element.get("aggregation") or "").strip()
    if written_aggregation:
        try:
            aggregation = model.Aggregation(written_aggregation)
        except ValueError:
            allowed = ", ".join(item.value for item in model.Aggregation)
            message = f"aggregation '{written_aggregation}' is not one of {allowed}"
            raise reader.error(message, element) from None
        if hit_policy is not model.HitPolicy.COLLECT:
            message = f"aggregation {aggregation.value} is only allowed with hitPolicy COLLECT"
            raise reader.error(message, element)
    inputs = tuple(_input(item, reader, language) for item in reader.children(element, "input"))
    output_elements = reader.children(element, "output")
    if not output_elements:
        raise reader.error("a decision table needs at least one output", element)
    single = len(output_elements) == 1
    outputs: list[model.OutputClause] = []
    output_names: set[str] = set()
    for item in output_elements:
        output = _output(item, reader, language, single)
        if output.name in output_names:
            raise reader.error(f"the output name '{output.name}' is used twice", item)
        output_names.add(output.name)
        outputs.append(output)
    ordered = hit_policy in (model.HitPolicy.PRIORITY, model.HitPolicy.OUTPUT_ORDER)
    if ordered and not any(output.output_values for output in outputs):
        message = f"hitPolicy {hit_policy.value} needs outputValues on at least one output"
        raise reader.error(message, element)
    if aggregation is not None and len(outputs) > 1:
        message = f"aggregation {aggregation.value} needs a table with exactly one output"
        raise reader.error(message, element)
    rule_elements = reader.children(element, "rule")
    limits = reader.limits
    most = None if limits is None else limits.max_rules
    reader.at_most(rule_elements, most, "the decision table", "rules", "max_decision_rules")
    rules: list[model.Rule] = []
    rule_ids: set[str] = set()
    for item in rule_elements:
        rule = _rule(item, reader, language, len(inputs), len(outputs))
        if rule.id in rule_ids:
            raise reader.error(f"the rule id '{rule.id}' is used twice in the table", item)
        rule_ids.add(rule.id)
        rules.append(rule)
    return model.DecisionTable(
        id=table_id,
        hit_policy=hit_policy,
        aggregation=aggregation,
        inputs=inputs,
        outputs=tuple(outputs),
        rules=tuple(rules),
    )


def _literal(
    element: Element, decision: Element, reader: _Reader, language: model.ExpressionLanguage
) -> model.LiteralExpression:
    decision_id = decision.get("id")
    literal_id = element.get("id") or f"{decision_id}_literalExpression"
    variable = reader.child(decision, "variable")
    variable_name = (variable.get("name") or "").strip() if variable is not None else ""
    type_ref = element.get("typeRef") or (variable.get("typeRef") if variable is not None else None)
    return model.LiteralExpression(
        id=literal_id,
        variable_name=variable_name or decision_id,
        type_ref=type_ref,
        expression=reader.entry(element, language, decision_id),
    )


def _requirements(element: Element, reader: _Reader, decision_id: str) -> tuple[str, ...]:
    # A dict keeps the order written and each decision once.
    required: dict[str, None] = {}
    for requirement in reader.children(element, "informationRequirement"):
        for reference in reader.children(requirement, "requiredDecision"):
            href = (reference.get("href") or "").strip()
            if not href.startswith("#") or len(href) < 2:
                message = f"requiredDecision href '{href}' must name a decision as '#id'"
                raise reader.error(message, reference, decision_id)
            required[href[1:]] = None
    return tuple(required)


def _decision(
    element: Element, reader: _Reader, language: model.ExpressionLanguage
) -> model.Decision:
    decision_id = reader.required_id(element, "decision")
    table = reader.child(element, "decisionTable")
    literal = reader.child(element, "literalExpression")
    if (table is None) == (literal is None):
        message = "a decision needs exactly one decisionTable or literalExpression"
        raise reader.error(message, element)
    logic = (
        _table(table, reader, language)
        if table is not None
        else _literal(literal, element, reader, language)
    )
    ttl_text = element.get(_camunda("historyTimeToLive"))
    try:
        ttl = parse_history_ttl(ttl_text) if ttl_text is not None else None
    except ValueError as exc:
        raise reader.error(str(exc), element) from None
    return model.Decision(
        id=decision_id,
        name=element.get("name"),
        version_tag=element.get(_camunda("versionTag")),
        history_time_to_live=ttl,
        requirements=_requirements(element, reader, decision_id),
        logic=logic,
        line=element.sourceline,
    )


def parse_dmn(
    data: bytes | str,
    source_name: str = "<string>",
    limits: ModelLimits | None = DEFAULT_LIMITS,
) -> model.DmnDefinitions:
    """The decisions of one DMN file; raises ModelError naming the file, line and element.
    `limits` bounds the file's bytes and each table's rules (None: anything, for a definition
    deployed under raised limits)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if limits is not None and len(raw) > limits.max_bytes:
        message = (
            f"DMN input is larger than {limits.max_bytes} bytes "
            "(max_bpmn_bytes in the engine's settings)"
        )
        raise ModelError(message, file=source_name)
    root = load_document(data, source_name)
    namespace = root.tag[1 : root.tag.index("}")] if root.tag.startswith("{") else None
    if _local(root) != "definitions" or namespace not in DMN_NAMESPACES:
        message = "the root element is not the definitions of DMN 1.1, 1.2 or 1.3"
        raise ModelError(message, file=source_name, line=root.sourceline)
    reader = _Reader(source_name, namespace, limits)
    language = reader.language(root, model.ExpressionLanguage.FEEL)
    decision_elements = reader.children(root, "decision")
    most = None if limits is None else limits.max_decisions
    reader.at_most(decision_elements, most, "the file", "decisions", "max_dmn_decisions")
    decisions: list[model.Decision] = []
    elements: dict[str, Element] = {}
    for element in decision_elements:
        decision = _decision(element, reader, language)
        if decision.id in elements:
            raise reader.error(f"the decision id '{decision.id}' is used twice", element)
        elements[decision.id] = element
        decisions.append(decision)
    if not decisions:
        raise ModelError("the file contains no decision", file=source_name, line=root.sourceline)
    for decision in decisions:
        for required in decision.requirements:
            if required not in elements:
                message = f"the required decision '{required}' does not exist in this file"
                raise reader.error(message, elements[decision.id])
    cycle = find_cycle({decision.id: decision.requirements for decision in decisions})
    if cycle is not None:
        message = "the decisions require each other in a cycle: " + " -> ".join(cycle)
        raise reader.error(message, elements[cycle[0]])
    return model.DmnDefinitions(
        id=root.get("id"),
        name=root.get("name"),
        namespace=root.get("namespace"),
        decisions=tuple(decisions),
        expression_language=language,
    )
