"""Loop characteristics as Camunda Modeler saves them: parsed into the node's `loop`, built the
same in Python, written back, and refused with file, line and element where not executable."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ModelError
from engine.language.expressions import compile_expression
from engine.model import MultiInstance, ProcessModel, StandardLoop

DATA = Path(__file__).parent.parent / "data" / "bpmn"
HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'id="Definitions_1" targetNamespace="http://bpmn.io/schema/bpmn">\n'
    '  <bpmn:process id="p" isExecutable="true">\n'
    '    <bpmn:startEvent id="start" />\n'
)
TAIL = (
    '    <bpmn:endEvent id="end" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="n" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="n" targetRef="end" />\n'
    "  </bpmn:process>\n</bpmn:definitions>\n"
)


def one(text: str | bytes) -> ProcessModel:
    [model] = parse_bpmn(text, "loops.bpmn")
    return model


def test_a_modeler_file_reads_parallel_and_sequential_multi_instance() -> None:
    model = one((DATA / "contract_review.bpmn").read_bytes())
    assert model.node("Task_Review").loop == MultiInstance(
        collection="reviewers",
        element_variable="reviewer",
        completion_condition=compile_expression("${nrOfCompletedInstances >= quorum}"),
    )
    assert model.node("Task_Sign").loop == MultiInstance(sequential=True, cardinality="${copies}")
    assert model.node("StartEvent_Contract").loop is None
    assert one(write_bpmn([model])) == model


def test_nested_multi_instance_in_a_subprocess() -> None:
    model = one((DATA / "batch_approval.bpmn").read_bytes())
    assert model.node("SubProcess_Batch").loop == MultiInstance(
        collection="${batches}", element_variable="batch"
    )
    item = model.node("Task_Item")
    assert (item.parent, item.loop) == (
        "SubProcess_Batch",
        MultiInstance(cardinality="${itemsPerBatch}"),
    )
    assert one(write_bpmn([model])) == model


def test_the_builder_makes_the_parsed_model() -> None:
    built = (
        ProcessBuilder("p")
        .start_event("start")
        .user_task("n")
        .multi_instance(
            "n",
            sequential=True,
            collection="items",
            element_variable="item",
            completion_condition="${done}",
            async_before=True,
        )
        .end_event("end")
        .flow("start", "n", id="f1")
        .flow("n", "end", id="f2")
        .build()
    )
    text = (
        HEAD
        + '    <bpmn:userTask id="n">\n'
        + '      <bpmn:multiInstanceLoopCharacteristics isSequential="true" '
        'camunda:asyncBefore="true" camunda:collection="items" camunda:elementVariable="item">\n'
        + "        <bpmn:completionCondition>${done}</bpmn:completionCondition>\n"
        + "      </bpmn:multiInstanceLoopCharacteristics>\n"
        + "    </bpmn:userTask>\n"
        + TAIL
    )
    assert one(text) == built
    assert one(write_bpmn([built])) == built


def test_standard_loop_and_the_standard_data_input() -> None:
    text = (
        HEAD
        + '    <bpmn:serviceTask id="n" camunda:delegateExpression="${poll}">\n'
        + '      <bpmn:standardLoopCharacteristics testBefore="true" loopMaximum="5">\n'
        + '        <bpmn:loopCondition xsi:type="bpmn:tFormalExpression">${!ready}'
        "</bpmn:loopCondition>\n"
        + "      </bpmn:standardLoopCharacteristics>\n"
        + "    </bpmn:serviceTask>\n"
        + TAIL
    )
    model = one(text)
    assert model.node("n").loop == StandardLoop(
        condition=compile_expression("${!ready}"), test_before=True, maximum=5
    )
    built = (
        ProcessBuilder("p")
        .start_event("start")
        .service_task("n", handler="poll")
        .standard_loop("n", condition="${!ready}", test_before=True, maximum=5)
        .end_event("end")
        .flow("start", "n", id="f1")
        .flow("n", "end", id="f2")
        .build()
    )
    assert built == model
    standard_input = (
        HEAD
        + (
            '    <bpmn:task id="n">\n'
            "      <bpmn:multiInstanceLoopCharacteristics>\n"
            "        <bpmn:loopDataInputRef>orders</bpmn:loopDataInputRef>\n"
            '        <bpmn:inputDataItem name="order" />\n'
            "      </bpmn:multiInstanceLoopCharacteristics>\n"
            "    </bpmn:task>\n"
        )
        + TAIL
    )
    assert one(standard_input).node("n").loop == MultiInstance(
        collection="orders", element_variable="order"
    )


def _line(text: str, needle: str) -> int:
    return text.count("\n", 0, text.index(needle)) + 1


@pytest.mark.parametrize(
    ("node", "needle", "fragment"),
    [
        (
            '<bpmn:userTask id="n"><bpmn:multiInstanceLoopCharacteristics camunda:collection="c" '
            'camunda:asyncAfter="true" /></bpmn:userTask>',
            "<bpmn:userTask",
            "camunda:asyncAfter on multiInstanceLoopCharacteristics is not supported",
        ),
        (
            '<bpmn:userTask id="n">\n<bpmn:multiInstanceLoopCharacteristics>\n'
            "<bpmn:loopCardinality>three</bpmn:loopCardinality>\n"
            "</bpmn:multiInstanceLoopCharacteristics></bpmn:userTask>",
            "<bpmn:multiInstanceLoopCharacteristics",
            "loopCardinality must be a whole number or ${...}, not 'three'",
        ),
        (
            '<bpmn:userTask id="n">\n<bpmn:multiInstanceLoopCharacteristics '
            'camunda:collection="a b" /></bpmn:userTask>',
            "<bpmn:multiInstanceLoopCharacteristics",
            "camunda:collection must be a variable name or ${...}, not 'a b'",
        ),
        (
            '<bpmn:userTask id="n">\n<bpmn:multiInstanceLoopCharacteristics camunda:collection="c">'
            "\n<bpmn:completionCondition>${a +}</bpmn:completionCondition>\n"
            "</bpmn:multiInstanceLoopCharacteristics></bpmn:userTask>",
            "<bpmn:multiInstanceLoopCharacteristics",
            "completionCondition:",
        ),
        (
            '<bpmn:userTask id="n">\n<bpmn:multiInstanceLoopCharacteristics camunda:collection="c">'
            "\n<bpmn:complexBehaviorDefinition />\n"
            "</bpmn:multiInstanceLoopCharacteristics></bpmn:userTask>",
            "<bpmn:complexBehaviorDefinition",
            "complexBehaviorDefinition is not supported by this engine",
        ),
        (
            '<bpmn:exclusiveGateway id="n">\n<bpmn:multiInstanceLoopCharacteristics '
            'camunda:collection="c" /></bpmn:exclusiveGateway>',
            "<bpmn:exclusiveGateway",
            "only a task or an embedded subprocess can loop",
        ),
        (
            '<bpmn:intermediateThrowEvent id="n">\n<bpmn:standardLoopCharacteristics '
            'loopMaximum="2" /></bpmn:intermediateThrowEvent>',
            "<bpmn:intermediateThrowEvent",
            "only a task or an embedded subprocess can loop",
        ),
        (
            '<bpmn:task id="n">\n<bpmn:standardLoopCharacteristics loopMaximum="-1" /></bpmn:task>',
            "<bpmn:standardLoopCharacteristics",
            "loopMaximum must be a whole number, not '-1'",
        ),
    ],
)
def test_what_is_not_executed_is_refused_naming_file_line_and_element(
    node: str, needle: str, fragment: str
) -> None:
    text = HEAD + f"    {node}\n" + TAIL
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "loops.bpmn")
    error = caught.value
    assert fragment in error.message
    assert (error.file, error.line, error.element_id) == ("loops.bpmn", _line(text, needle), "n")


def test_the_builder_refuses_what_the_parser_refuses() -> None:
    builder = ProcessBuilder("p").start_event("start").parallel_gateway("n")
    with pytest.raises(ModelError, match="only a task or an embedded subprocess can loop"):
        builder.multi_instance("n", cardinality=2).end_event("end").chain(
            "start", "n", "end"
        ).build()
    with pytest.raises(ModelError, match="no node with this id"):
        ProcessBuilder("p").multi_instance("missing", cardinality=1)
    with pytest.raises(ModelError, match="needs a condition or a maximum"):
        ProcessBuilder("p").task("n").standard_loop("n")
    with pytest.raises(ModelError, match="completion_condition"):
        ProcessBuilder("p").task("n").multi_instance("n", cardinality=1, completion_condition="x")
