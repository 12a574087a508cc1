"""camunda:inputOutput: how it is read, built, written and evaluated, and where it is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ExpressionError, ModelError
from engine.language.mappings import (
    ExpressionValue,
    InputOutput,
    ListValue,
    MapValue,
    Parameter,
    TextValue,
    evaluate,
)
from tests.unit.test_bpmn_events import around, document
from tests.unit.test_bpmn_parser import line_of

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def io_on(tag: str, parameters: str, attributes: str = "", inner: str = "") -> str:
    return (
        f'<bpmn:{tag} id="n"{attributes}><bpmn:extensionElements><camunda:inputOutput>'
        f"{parameters}</camunda:inputOutput></bpmn:extensionElements>{inner}</bpmn:{tag}>"
    )


def test_a_modeler_file_reads_every_kind_of_value() -> None:
    model = parse_bpmn((DATA / "order_mappings.bpmn").read_bytes())[0]
    prepare = model.node("Task_Prepare").io
    assert prepare is not None
    assert [p.name for p in prepare.inputs] == ["greeting", "total", "items", "address", "nothing"]
    assert prepare.inputs[0].value == TextValue("hello")
    assert isinstance(prepare.inputs[1].value, ExpressionValue)
    assert isinstance(prepare.inputs[2].value, ListValue)
    assert isinstance(prepare.inputs[3].value, MapValue)
    assert prepare.inputs[4].value == TextValue(None)
    assert [p.name for p in prepare.outputs] == ["prepared"]
    values = {p.name: evaluate(p.value, {"amount": 7, "city": "Oslo"}) for p in prepare.inputs}
    assert values == {
        "greeting": "hello",
        "total": 14,
        "items": ["first", 7, ["nested"]],
        "address": {"city": "Oslo", "zip": "1000"},
        "nothing": None,
    }
    check = model.node("Sub_Check").io
    assert check is not None and [p.name for p in check.inputs] == ["amount"]
    confirm = model.node("Catch_Confirm").io
    assert confirm is not None and confirm.inputs == () and len(confirm.outputs) == 1


def test_built_and_parsed_models_agree_and_survive_writing() -> None:
    built = (
        ProcessBuilder("p")
        .start_event("s")
        .service_task("t", handler="work")
        .end_event("e")
        .chain("s", "t", "e")
        .input_output(
            "t",
            inputs={"a": "text", "b": "${x + 1}", "c": ["1", ["2"], {"k": "${x}"}], "d": None},
            outputs={"out": "${b}"},
        )
        .build()
    )
    assert parse_bpmn(write_bpmn([built]))[0] == built
    io = built.node("t").io
    assert io == InputOutput(
        inputs=(
            Parameter("a", TextValue("text")),
            Parameter("b", io.inputs[1].value if io else TextValue(None)),
            Parameter("c", io.inputs[2].value if io else TextValue(None)),
            Parameter("d", TextValue(None)),
        ),
        outputs=(Parameter("out", io.outputs[0].value if io else TextValue(None)),),
    )
    assert {p.name: evaluate(p.value, {"x": 1}) for p in io.inputs} == {
        "a": "text",
        "b": 2,
        "c": ["1", ["2"], {"k": 1}],
        "d": None,
    }


def test_a_map_key_may_be_an_expression() -> None:
    model = parse_bpmn(
        around(
            io_on(
                "task",
                '<camunda:inputParameter name="m"><camunda:map>'
                '<camunda:entry key="${prefix}">v</camunda:entry></camunda:map>'
                "</camunda:inputParameter>",
            )
        )
    )[0]
    io = model.node("n").io
    assert io is not None
    assert evaluate(io.inputs[0].value, {"prefix": "p1"}) == {"p1": "v"}
    with pytest.raises(ExpressionError, match="a map key must be a text"):
        evaluate(io.inputs[0].value, {"prefix": 3})


def test_a_javascript_mapping_runs_in_the_isolate_over_the_visible_variables() -> None:
    model = parse_bpmn(
        around(
            io_on(
                "task",
                '<camunda:inputParameter name="total">'
                '<camunda:script scriptFormat="javascript">'
                "amount * 2 + execution.getVariable('extra')</camunda:script>"
                "</camunda:inputParameter>",
            )
        )
    )[0]
    io = model.node("n").io
    assert io is not None
    assert evaluate(io.inputs[0].value, {"amount": 4, "extra": 1}) == 9
    assert evaluate(io.inputs[0].value, {"amount": 10, "extra": 0}) == 20


@pytest.mark.parametrize(
    ("node", "needle", "fragment"),
    [
        (
            io_on(
                "startEvent",
                '<camunda:inputParameter name="x">1</camunda:inputParameter>',
            ),
            '<bpmn:startEvent id="n"',
            "camunda:inputOutput is not allowed on a startEvent",
        ),
        (
            io_on("parallelGateway", '<camunda:inputParameter name="x">1</camunda:inputParameter>'),
            "<bpmn:parallelGateway",
            "camunda:inputOutput is not allowed on a parallelGateway",
        ),
        (
            io_on("endEvent", '<camunda:outputParameter name="x">1</camunda:outputParameter>'),
            '<bpmn:endEvent id="n"',
            "camunda:outputParameter is not allowed on an end event",
        ),
        (
            io_on(
                "task",
                '<camunda:inputParameter name="x">'
                '<camunda:script scriptFormat="groovy">1 + 1</camunda:script>'
                "</camunda:inputParameter>",
            ),
            "<camunda:script",
            "camunda:inputParameter 'x': a camunda:script in groovy cannot run in an "
            "input/output mapping; port it to JavaScript",
        ),
        (
            io_on(
                "task",
                '<camunda:inputParameter name="x">'
                '<camunda:script scriptFormat="javascript" camunda:resource="x.js" />'
                "</camunda:inputParameter>",
            ),
            "<camunda:script",
            "camunda:inputParameter 'x': a camunda:script mapping read from camunda:resource "
            "is not supported",
        ),
        (
            io_on("task", '<camunda:inputParameter name="x">Hi ${name</camunda:inputParameter>'),
            "<camunda:inputParameter",
            "camunda:inputParameter 'x': missing closing '}'",
        ),
        (
            io_on("task", "<camunda:inputParameter>1</camunda:inputParameter>"),
            "<camunda:inputParameter",
            "camunda:inputParameter needs a name",
        ),
        (
            io_on(
                "task",
                '<camunda:inputParameter name="x"><camunda:value>1</camunda:value>'
                "</camunda:inputParameter>",
            ),
            "<camunda:value",
            "camunda:inputParameter cannot contain value",
        ),
        (
            io_on(
                "task",
                '<camunda:inputParameter name="x"><camunda:list /><camunda:map />'
                "</camunda:inputParameter>",
            ),
            "<camunda:map",
            "camunda:inputParameter 'x' holds more than one value",
        ),
        (
            io_on(
                "task",
                '<camunda:inputParameter name="x"><camunda:map><camunda:entry>1</camunda:entry>'
                "</camunda:map></camunda:inputParameter>",
            ),
            "<camunda:entry",
            "camunda:entry needs a key",
        ),
        (
            io_on("task", "<camunda:field />"),
            "<camunda:field",
            "camunda:inputOutput cannot contain field",
        ),
        (
            io_on(
                "task",
                '<camunda:outputParameter name="x">1</camunda:outputParameter>',
                inner="<bpmn:multiInstanceLoopCharacteristics />",
            ),
            "<camunda:inputOutput",
            "camunda:outputParameter is not allowed on a multi-instance activity",
        ),
    ],
)
def test_refused_mappings_name_file_line_and_element(node: str, needle: str, fragment: str) -> None:
    text = around(node)
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "orders/io.bpmn")
    message = str(caught.value)
    assert fragment in message
    assert "orders/io.bpmn" in message
    assert f"line {line_of(text, needle)}" in message
    assert "element 'n'" in message


def test_mappings_on_a_boundary_event_or_an_event_subprocess_are_refused() -> None:
    boundary = document(
        '    <bpmn:startEvent id="start" />\n'
        '    <bpmn:task id="t" />\n'
        '    <bpmn:endEvent id="end" />\n'
        '    <bpmn:endEvent id="e2" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="t" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="end" />\n'
        '    <bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:extensionElements>'
        '<camunda:inputOutput><camunda:inputParameter name="x">1</camunda:inputParameter>'
        "</camunda:inputOutput></bpmn:extensionElements>"
        '<bpmn:messageEventDefinition messageRef="m" /></bpmn:boundaryEvent>\n'
        '    <bpmn:sequenceFlow id="fb" sourceRef="b" targetRef="e2" />'
    )
    with pytest.raises(ModelError, match="not allowed on a boundaryEvent"):
        parse_bpmn(boundary)
    event_sub = document(
        '    <bpmn:startEvent id="start" />\n'
        '    <bpmn:endEvent id="end" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="end" />\n'
        '    <bpmn:subProcess id="es" triggeredByEvent="true"><bpmn:extensionElements>'
        '<camunda:inputOutput><camunda:inputParameter name="x">1</camunda:inputParameter>'
        "</camunda:inputOutput></bpmn:extensionElements>"
        '<bpmn:startEvent id="es_start"><bpmn:messageEventDefinition messageRef="m" />'
        '</bpmn:startEvent><bpmn:endEvent id="es_end" />'
        '<bpmn:sequenceFlow id="es_f" sourceRef="es_start" targetRef="es_end" />'
        "</bpmn:subProcess>"
    )
    with pytest.raises(ModelError, match="not allowed on an event subprocess"):
        parse_bpmn(event_sub)


def test_a_mapping_outside_a_flow_node_is_refused() -> None:
    text = document(
        '    <bpmn:startEvent id="start" />\n'
        '    <bpmn:endEvent id="end" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="end">'
        "<bpmn:extensionElements><camunda:inputOutput /></bpmn:extensionElements>"
        "</bpmn:sequenceFlow>"
    )
    with pytest.raises(ModelError, match="camunda:inputOutput belongs on a task"):
        parse_bpmn(text)


def test_the_builder_refuses_what_the_parser_refuses() -> None:
    base = ProcessBuilder("p").start_event("s").end_event("e").chain("s", "e")
    with pytest.raises(ModelError, match="not allowed on a startEvent"):
        base.input_output("s", inputs={"x": "1"}).build()
    with pytest.raises(ModelError, match="input/output parameter: "):
        ProcessBuilder("q").start_event("s").input_output("s", inputs={"x": "${"})
    with pytest.raises(ModelError, match="name no node"):
        ProcessBuilder("r").input_output("missing", inputs={})
