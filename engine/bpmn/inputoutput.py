"""`camunda:inputOutput` as Camunda Modeler writes it, read into
`engine.language.mappings.InputOutput`.

    <camunda:inputOutput>
      <camunda:inputParameter name="greeting">hello</camunda:inputParameter>
      <camunda:inputParameter name="total">${amount * 2}</camunda:inputParameter>
      <camunda:inputParameter name="items">
        <camunda:list><camunda:value>a</camunda:value><camunda:value>${b}</camunda:value></camunda:list>
      </camunda:inputParameter>
      <camunda:inputParameter name="address">
        <camunda:map><camunda:entry key="city">${city}</camunda:entry></camunda:map>
      </camunda:inputParameter>
      <camunda:outputParameter name="result">${local}</camunda:outputParameter>
    </camunda:inputOutput>

A problem is reported through `fail(message, element)`, which names the file, line and flow node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from engine.errors import ModelError
from engine.language.composite import Composite, compile_text_or_refuse, has_expression
from engine.language.expressions import ACTS_ON_EXECUTION, Expression
from engine.language.mappings import (
    ExpressionValue,
    InputOutput,
    ListValue,
    MappingValue,
    MapValue,
    Parameter,
    ScriptValue,
    TextValue,
    script_problem,
)

Element = Any
Fail = Callable[[str, Element], ModelError]


def _elements(element: Element) -> list[Element]:
    return [child for child in element if isinstance(child.tag, str)]


def _local(element: Element) -> str:
    return str(etree.QName(element).localname)


class _Reader:
    def __init__(self, namespace: str | None, fail: Fail) -> None:
        self.namespace = namespace
        self.fail = fail

    def children(self, element: Element, allowed: tuple[str, ...]) -> list[Element]:
        found = _elements(element)
        for child in found:
            if etree.QName(child).namespace != self.namespace or _local(child) not in allowed:
                names = ", ".join(f"camunda:{name}" for name in allowed)
                message = f"camunda:{_local(element)} cannot contain {_local(child)} (only {names})"
                raise self.fail(message, child)
        return found

    def expression(self, text: str, element: Element, what: str) -> Expression | Composite:
        compiled = compile_text_or_refuse(
            text, what, lambda message: self.fail(message, element), ACTS_ON_EXECUTION
        )
        assert not isinstance(compiled, str)  # the text has a ${ or #{
        return compiled

    def value(self, element: Element, what: str) -> MappingValue:
        """The value a holder (an inputParameter, outputParameter, map entry or list value)
        holds: its text, or one list, map or script."""
        allowed = ("list", "map", "script") if _local(element) != "value" else ()
        inner = self.children(element, allowed)
        if not inner:
            text = "".join(element.itertext()).strip()
            if not text:
                return TextValue(None)
            if has_expression(text):
                return ExpressionValue(self.expression(text, element, what))
            return TextValue(text)
        if len(inner) > 1:
            raise self.fail(f"{what} holds more than one value", inner[1])
        return self.content(inner[0], what)

    def content(self, child: Element, what: str) -> MappingValue:
        """A camunda:list, camunda:map, camunda:script or (inside a list) camunda:value."""
        local = _local(child)
        if local == "value":
            return self.value(child, what)
        if local == "list":
            items = self.children(child, ("list", "map", "script", "value"))
            return ListValue(tuple(self.content(item, what) for item in items))
        if local == "map":
            entries: list[tuple[str | Expression | Composite, MappingValue]] = []
            for entry in self.children(child, ("entry",)):
                key = entry.get("key")
                if not key:
                    raise self.fail("camunda:entry needs a key", entry)
                written: str | Expression | Composite = key
                if has_expression(key):
                    written = self.expression(key, entry, f"{what}: the key")
                entries.append((written, self.value(entry, f"{what}: entry '{key}'")))
            return MapValue(tuple(entries))
        script = ScriptValue(
            language=(child.get("scriptFormat") or "").strip(),
            source="".join(child.itertext()) or None,
            resource=child.get(f"{{{self.namespace}}}resource") or child.get("resource"),
        )
        problem = script_problem(script)
        if problem is not None:
            raise self.fail(f"{what}: {problem}", child)
        return script

    def parameter(self, element: Element) -> Parameter:
        name = (element.get("name") or "").strip()
        kind = _local(element)
        if not name:
            raise self.fail(f"camunda:{kind} needs a name", element)
        return Parameter(
            name=name,
            value=self.value(element, f"camunda:{kind} '{name}'"),
            line=element.sourceline,
        )


def read_input_output(element: Element, fail: Fail) -> InputOutput:
    """The parameters of one camunda:inputOutput element, in document order."""
    reader = _Reader(etree.QName(element).namespace, fail)
    inputs: list[Parameter] = []
    outputs: list[Parameter] = []
    for child in reader.children(element, ("inputParameter", "outputParameter")):
        target = inputs if _local(child) == "inputParameter" else outputs
        target.append(reader.parameter(child))
    return InputOutput(inputs=tuple(inputs), outputs=tuple(outputs))


def write_input_output(extensions: Element, io: InputOutput, namespace: str) -> None:
    """Append `io` to an extensionElements element as camunda:inputOutput (the reverse of
    `read_input_output`)."""

    def tag(local: str) -> str:
        return f"{{{namespace}}}{local}"

    def holder(element: Element, value: MappingValue) -> None:
        if isinstance(value, TextValue):
            element.text = value.text
        elif isinstance(value, ExpressionValue):
            element.text = value.expression.source
        else:
            content(element, value)

    def content(parent: Element, value: MappingValue) -> None:
        if isinstance(value, ListValue):
            listed = etree.SubElement(parent, tag("list"))
            for item in value.items:
                if isinstance(item, TextValue | ExpressionValue):
                    holder(etree.SubElement(listed, tag("value")), item)
                else:
                    content(listed, item)
        elif isinstance(value, MapValue):
            mapped = etree.SubElement(parent, tag("map"))
            for key, item in value.entries:
                entry = etree.SubElement(mapped, tag("entry"))
                entry.set("key", key if isinstance(key, str) else key.source)
                holder(entry, item)
        elif isinstance(value, ScriptValue):
            script = etree.SubElement(parent, tag("script"))
            script.set("scriptFormat", value.language)
            if value.resource is not None:
                script.set(tag("resource"), value.resource)
            script.text = value.source

    mapping = etree.SubElement(extensions, tag("inputOutput"))
    for kind, parameters in (("inputParameter", io.inputs), ("outputParameter", io.outputs)):
        for parameter in parameters:
            element = etree.SubElement(mapping, tag(kind))
            element.set("name", parameter.name)
            holder(element, parameter.value)
