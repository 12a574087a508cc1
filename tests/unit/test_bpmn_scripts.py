"""Reading scripts and listeners from BPMN: script tasks, camunda:executionListener and
camunda:taskListener with each kind of implementation, JavaScript conditions, script files of a
deployment, and the refusals, each naming file, line and element."""

from __future__ import annotations

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.bpmn.reading import listener_handler
from engine.bpmn.resources import embed_scripts, is_script_resource
from engine.errors import ModelError
from engine.model import Listener, ProcessModel, Script, ScriptCondition, ScriptTask, UserTask

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'id="Definitions_1" targetNamespace="http://bpmn.io/schema/bpmn">\n'
)


def process(body: str, extensions: str = "") -> str:
    return (
        f'{HEAD}  <bpmn:process id="p" isExecutable="true">\n{extensions}'
        '    <bpmn:startEvent id="s" />\n'
        f"{body}\n"
        '    <bpmn:endEvent id="e" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e" />\n'
        "  </bpmn:process>\n</bpmn:definitions>\n"
    )


def parse_one(text: str) -> ProcessModel:
    [model] = parse_bpmn(text, "scripts.bpmn")
    return model


def rejected(text: str) -> ModelError:
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "scripts.bpmn")
    return caught.value


def line_of(text: str, needle: str) -> int:
    return text.count("\n", 0, text.index(needle)) + 1


def test_a_script_task_keeps_its_script_and_result_variable() -> None:
    text = process(
        '    <bpmn:scriptTask id="t" scriptFormat="JavaScript" camunda:resultVariable="r">'
        "<bpmn:script>a &lt; b</bpmn:script></bpmn:scriptTask>"
    )
    node = parse_one(text).node("t")
    assert isinstance(node, ScriptTask)
    assert node.script == Script(format="javascript", source="a < b")
    assert node.result_variable == "r"


@pytest.mark.parametrize("language", ["juel", "expression"])
def test_an_expression_script_is_compiled_at_deployment(language: str) -> None:
    text = process(
        f'    <bpmn:scriptTask id="t" scriptFormat="{language}">'
        "<bpmn:script> ${a + 1} </bpmn:script></bpmn:scriptTask>"
    )
    node = parse_one(text).node("t")
    assert isinstance(node, ScriptTask)
    assert node.script == Script(format="expression", source="${a + 1}")
    bad = text.replace("${a + 1}", "${a.__class__}")
    error = rejected(bad)
    assert (error.line, error.element_id) == (line_of(bad, "<bpmn:scriptTask"), "t")


def test_listeners_of_every_kind_are_read_in_document_order() -> None:
    text = process(
        '    <bpmn:userTask id="t">\n'
        "      <bpmn:extensionElements>\n"
        '        <camunda:executionListener class="com.acme.Audit" event="start" />\n'
        '        <camunda:executionListener expression="${audit.log(execution)}" event="end" />\n'
        '        <camunda:taskListener delegateExpression="${assigner}" event="create" />\n'
        '        <camunda:taskListener event="complete">'
        '<camunda:script scriptFormat="javascript">task.getAssignee()</camunda:script>'
        "</camunda:taskListener>\n"
        "      </bpmn:extensionElements>\n"
        "    </bpmn:userTask>",
        extensions='    <bpmn:extensionElements><camunda:executionListener event="end" '
        'delegateExpression="${closed}" /></bpmn:extensionElements>\n',
    ).replace(
        '<bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e" />',
        '<bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e"><bpmn:extensionElements>'
        '<camunda:executionListener class="com.acme.Taken" /></bpmn:extensionElements>'
        "</bpmn:sequenceFlow>",
    )
    model = parse_one(text)
    node = model.node("t")
    assert isinstance(node, UserTask)
    assert node.listeners == (
        Listener(event="start", handler="com.acme.Audit"),
        Listener(event="end", handler="audit.log"),
    )
    assert node.task_listeners == (
        Listener(event="create", handler="assigner"),
        Listener(event="complete", script=Script(format="javascript", source="task.getAssignee()")),
    )
    assert model.flow("f2").listeners == (Listener(event="take", handler="com.acme.Taken"),)
    assert model.listeners == (Listener(event="end", handler="closed"),)
    assert parse_bpmn(write_bpmn([model])) == [model]


@pytest.mark.parametrize(
    ("written", "name"),
    [
        ("${audit}", "audit"),
        ("${ audit . notify ( execution ) }", "audit.notify"),
        ("${audit.notify(task)}", "audit.notify"),
        ("${audit.notify()}", "audit.notify"),
        ("${audit.notify(execution, 1)}", None),
        ("${a + b}", None),
        ("audit", None),
        ("${audit.x.y(execution)}", None),
    ],
)
def test_a_listener_expression_names_a_handler_and_nothing_else(
    written: str, name: str | None
) -> None:
    assert listener_handler(written) == name


@pytest.mark.parametrize(
    ("listener", "fragment"),
    [
        (
            '<camunda:executionListener event="start" />',
            "camunda:executionListener needs exactly one of class, expression",
        ),
        (
            '<camunda:executionListener event="take" class="A" />',
            "camunda:executionListener event 'take' is not one of start, end",
        ),
        (
            '<camunda:taskListener event="create" class="A" />',
            "camunda:taskListener belongs on a user task",
        ),
        (
            '<camunda:executionListener event="start" class="A">'
            '<camunda:script scriptFormat="javascript">1</camunda:script>'
            "</camunda:executionListener>",
            "camunda:executionListener needs exactly one of class",
        ),
        (
            '<camunda:executionListener event="start">'
            '<camunda:script scriptFormat="groovy">println 1</camunda:script>'
            "</camunda:executionListener>",
            "script language 'groovy' is not supported by this engine; port it to JavaScript",
        ),
        (
            '<camunda:executionListener event="start">'
            '<camunda:script scriptFormat="javascript" resource="audit.js" />'
            "</camunda:executionListener>",
            "camunda:resource 'audit.js' was not found in the deployment",
        ),
    ],
)
def test_listeners_that_cannot_run_are_refused_naming_file_line_element(
    listener: str, fragment: str
) -> None:
    text = process(
        f'    <bpmn:task id="t"><bpmn:extensionElements>{listener}'
        "</bpmn:extensionElements></bpmn:task>"
    )
    error = rejected(text)
    assert fragment in error.message
    assert (error.file, error.line, error.element_id) == (
        "scripts.bpmn",
        line_of(text, '<bpmn:task id="t">'),
        "t",
    )


@pytest.mark.parametrize(
    "attributes", ['language="javascript"', 'xsi:type="bpmn:tFormalExpression" language="js"']
)
def test_javascript_conditions_are_kept_as_scripts(attributes: str) -> None:
    text = process('    <bpmn:task id="t" />').replace(
        '<bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e" />',
        '<bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e">'
        f"<bpmn:conditionExpression {attributes}>x &gt; 1</bpmn:conditionExpression>"
        "</bpmn:sequenceFlow>",
    )
    condition = parse_one(text).flow("f2").condition
    assert isinstance(condition, ScriptCondition)
    assert condition.source == "x > 1"
    assert condition.evaluate({"x": 2}) is True
    assert condition.evaluate({"x": 0}) is False


def test_script_files_are_embedded_without_moving_a_line() -> None:
    text = process(
        '    <bpmn:scriptTask id="t" scriptFormat="javascript" '
        'camunda:resource="deployment://lib/total.js" />'
    )
    assert is_script_resource("lib/total.js") and not is_script_resource("p.bpmn")
    source = "// total\nvar t = a + b;\nt;\n"
    embedded = embed_scripts(text.encode(), "p.bpmn", {"lib/total.js": source.encode()})
    for needle in ("<bpmn:scriptTask", '<bpmn:endEvent id="e"', "</bpmn:process>"):
        assert line_of(embedded.decode(), needle) == line_of(text, needle)
    node = parse_one(embedded.decode()).node("t")
    assert isinstance(node, ScriptTask)
    assert node.script.source == source
    assert node.script.resource == "deployment://lib/total.js"
    assert embed_scripts(b"<x/>", "p.bpmn", {}) == b"<x/>"
    with pytest.raises(ModelError) as caught:
        embed_scripts(text.encode(), "p.bpmn", {})
    assert (caught.value.line, caught.value.element_id) == (line_of(text, "<bpmn:scriptTask"), "t")
