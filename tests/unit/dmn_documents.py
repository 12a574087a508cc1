"""Small DMN 1.3 documents written in tests, shaped as Camunda Modeler saves them.

`table(...)` and `literal(...)` write one decision; `definitions(...)` wraps decisions into a
file; `evaluate(...)` parses, compiles and evaluates a document as deployment and evaluation do.
Every text goes through XML escaping, so entries are written as FEEL reads them (`< 10`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from engine.dmn import parse_dmn
from engine.dmn.evaluate import CompiledDefinitions, compile_definitions

DMN13 = "https://www.omg.org/spec/DMN/20191111/MODEL/"
FILE = "test.dmn"


@dataclass(frozen=True)
class In:
    expression: str
    type_ref: str | None = None
    label: str | None = None
    # Extra attributes of <input>, e.g. 'camunda:inputVariable="amount"'.
    attributes: str = ""
    # Extra attributes of <inputExpression>, e.g. 'expressionLanguage="juel"'.
    expression_attributes: str = ""


@dataclass(frozen=True)
class Out:
    name: str
    type_ref: str | None = None
    # outputValues as written, e.g. '"gold","silver","bronze"'.
    values: str | None = None
    default: str | None = None


def _type(type_ref: str | None) -> str:
    return f' typeRef="{type_ref}"' if type_ref is not None else ""


def _text(element: str, element_id: str, text: str, attributes: str = "") -> str:
    extra = f" {attributes}" if attributes else ""
    return f'<{element} id="{element_id}"{extra}><text>{escape(text)}</text></{element}>'


def table(
    decision_id: str,
    inputs: Sequence[In],
    outputs: Sequence[Out],
    rules: Sequence[tuple[Sequence[str], Sequence[str]]],
    hit_policy: str | None = None,
    aggregation: str | None = None,
    requires: Sequence[str] = (),
    table_attributes: str = "",
) -> str:
    """One decision table decision; rule n (from 1) has id `R{n}`, its entries `R{n}_i{k}` and
    `R{n}_o{k}`. No hit_policy writes none (UNIQUE, as Camunda Modeler leaves it)."""
    lines = [f'<decision id="{decision_id}" name="{decision_id.title()}">']
    for required in requires:
        lines.append(
            f'<informationRequirement id="IR_{decision_id}_{required}">'
            f'<requiredDecision href="#{required}" /></informationRequirement>'
        )
    policy = f' hitPolicy="{hit_policy}"' if hit_policy is not None else ""
    aggregate = f' aggregation="{aggregation}"' if aggregation is not None else ""
    extra = f" {table_attributes}" if table_attributes else ""
    lines.append(f'<decisionTable id="T_{decision_id}"{policy}{aggregate}{extra}>')
    for k, clause in enumerate(inputs, start=1):
        label = f" label={quoteattr(clause.label)}" if clause.label is not None else ""
        attributes = f" {clause.attributes}" if clause.attributes else ""
        expression_attributes = _type(clause.type_ref) + (
            f" {clause.expression_attributes}" if clause.expression_attributes else ""
        )
        lines.append(
            f'<input id="Input_{k}"{label}{attributes}>'
            f'<inputExpression id="InputExpression_{k}"{expression_attributes}>'
            f"<text>{escape(clause.expression)}</text></inputExpression></input>"
        )
    for k, output in enumerate(outputs, start=1):
        body = ""
        if output.values is not None:
            body += _text("outputValues", f"OutputValues_{k}", output.values)
        if output.default is not None:
            body += _text("defaultOutputEntry", f"Default_{k}", output.default)
        opening = f'<output id="Output_{k}" name="{output.name}"{_type(output.type_ref)}'
        lines.append(f"{opening}>{body}</output>" if body else f"{opening} />")
    for n, (input_entries, output_entries) in enumerate(rules, start=1):
        cells = [
            _text("inputEntry", f"R{n}_i{k}", text) for k, text in enumerate(input_entries, 1)
        ] + [_text("outputEntry", f"R{n}_o{k}", text) for k, text in enumerate(output_entries, 1)]
        lines.append(f'<rule id="R{n}">{"".join(cells)}</rule>')
    lines.append("</decisionTable></decision>")
    return "\n".join(lines)


def literal(
    decision_id: str,
    text: str,
    variable: str,
    type_ref: str | None = None,
    requires: Sequence[str] = (),
) -> str:
    requirements = "".join(
        f'<informationRequirement id="IR_{decision_id}_{r}"><requiredDecision href="#{r}" />'
        "</informationRequirement>"
        for r in requires
    )
    return (
        f'<decision id="{decision_id}" name="{decision_id.title()}">{requirements}'
        f'<variable id="Var_{decision_id}" name="{variable}"{_type(type_ref)} />'
        f'<literalExpression id="Literal_{decision_id}"><text>{escape(text)}</text>'
        "</literalExpression></decision>"
    )


def definitions(*decisions: str, attributes: str = "") -> str:
    extra = f" {attributes}" if attributes else ""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<definitions xmlns="{DMN13}" xmlns:camunda="http://camunda.org/schema/1.0/dmn" '
        'id="Definitions_Test" name="Test" namespace="http://camunda.org/schema/1.0/dmn" '
        f'exporter="Camunda Modeler" exporterVersion="5.31.0"{extra}>\n'
        + "\n".join(decisions)
        + "\n</definitions>\n"
    )


def compiled(document: str) -> CompiledDefinitions:
    return compile_definitions(parse_dmn(document, FILE), FILE)


def evaluate(
    document: str, variables: Mapping[str, Any], decision_id: str = "d"
) -> list[dict[str, Any]]:
    return compiled(document).evaluate(decision_id, variables).result
