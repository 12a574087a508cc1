from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.bpmn import MAX_BPMN_BYTES, parse_bpmn
from engine.bpmn.parser import parse_bpmn_file
from engine.errors import ModelError
from engine.language.expressions import compile_expression
from engine.model import (
    EndEvent,
    ExclusiveGateway,
    InclusiveGateway,
    IntermediateThrowEvent,
    Node,
    NoneTask,
    ParallelGateway,
    ProcessModel,
    SequenceFlow,
    ServiceTask,
    StartEvent,
    TimerDefinition,
    UserTask,
)

DATA = Path(__file__).parent.parent / "data" / "bpmn"

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'id="Definitions_1" targetNamespace="http://bpmn.io/schema/bpmn">\n'
)


def definitions(body: str) -> str:
    return f"{HEAD}{body}\n</bpmn:definitions>\n"


def process(body: str, attributes: str = 'id="p" isExecutable="true"') -> str:
    return definitions(f"  <bpmn:process {attributes}>\n{body}\n  </bpmn:process>")


def around(node: str) -> str:
    """`node` (id "n") between a start and an end event."""
    return process(
        '    <bpmn:startEvent id="start" />\n'
        f"    {node}\n"
        '    <bpmn:endEvent id="end" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="n" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="n" targetRef="end" />'
    )


def line_of(text: str, needle: str) -> int:
    return text.count("\n", 0, text.index(needle)) + 1


def parse_one(text: str | bytes) -> ProcessModel:
    models = parse_bpmn(text, "test.bpmn")
    assert len(models) == 1
    return models[0]


def rejected(text: str | bytes, file: str = "bad.bpmn") -> ModelError:
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, file)
    return caught.value


# --- the fixtures ------------------------------------------------------------------------------


def test_invoice_fixture() -> None:
    text = (DATA / "invoice_approval.bpmn").read_text()
    model = parse_one(text)
    assert (model.key, model.name, model.version_tag) == (
        "invoice_approval",
        "Invoice approval",
        "1.2",
    )
    assert model.line == line_of(text, '<bpmn:process id="invoice_approval"')
    assert model.node("Task_Approve") == UserTask(
        id="Task_Approve",
        name="Approve invoice",
        incoming=("Flow_ToApprove",),
        outgoing=("Flow_ToDecision",),
        assignee="${approver}",
        candidate_groups="accounting,management",
        due_date="${dueDate}",
        priority="60",
        form_key="embedded:app:forms/approve.html",
    )
    assert model.node("Gateway_Approved") == ExclusiveGateway(
        id="Gateway_Approved",
        name="Approved?",
        incoming=("Flow_ToDecision",),
        outgoing=("Flow_Approved", "Flow_Rejected"),
        default_flow="Flow_Rejected",
    )
    assert model.node("Task_Pay") == ServiceTask(
        id="Task_Pay",
        name="Pay invoice",
        incoming=("Flow_Approved",),
        outgoing=("Flow_ToArchive",),
        async_before=True,
        handler="payInvoice",
        result_variable="payment",
    )
    archive = model.node("Task_Archive")
    assert isinstance(archive, ServiceTask)
    assert (archive.topic, archive.handler, archive.task_priority) == ("archive-invoice", None, 5)
    assert archive.is_external
    assert model.flow("Flow_Approved") == SequenceFlow(
        id="Flow_Approved",
        source="Gateway_Approved",
        target="Task_Pay",
        name="yes",
        condition=compile_expression("${approved}"),
    )
    assert model.flow("Flow_Rejected").condition is None
    assert model.node("Task_Pay").line == line_of(text, 'id="Task_Pay"')
    assert model.flow("Flow_Approved").line == line_of(text, 'id="Flow_Approved"')


def test_realistic_modeler_file_with_pool_lanes_and_decoration() -> None:
    text = (DATA / "order_fulfillment.bpmn").read_text()
    model = parse_one(text)
    assert (model.key, model.version_tag) == ("order_fulfillment", "2024-03")
    assert {node.id for node in model.nodes} == {
        "StartEvent_Order",
        "StartEvent_Api",
        "Gateway_Merge",
        "Task_Check",
        "Gateway_InStock",
        "Gateway_Split",
        "Task_Ship",
        "Task_Invoice",
        "Gateway_Join",
        "EndEvent_Done",
        "Task_Call",
        "EndEvent_Cancelled",
    }
    assert len(model.flows) == 12
    assert model.none_start.id == "StartEvent_Order"
    api = model.node("StartEvent_Api")
    assert isinstance(api, StartEvent) and api.message_name == "OrderPlaced"
    check = model.node("Task_Check")
    assert isinstance(check, ServiceTask)
    assert (check.handler, check.async_after, check.async_before) == (
        "com.acme.fulfillment.CheckStock",
        True,
        False,
    )
    assert model.node("Gateway_Merge").incoming == ("Flow_1", "Flow_2")
    assert isinstance(model.node("Gateway_Split"), ParallelGateway)
    join = model.node("Gateway_Join")
    assert isinstance(join, ParallelGateway) and join.is_join
    ship = model.node("Task_Ship")
    assert isinstance(ship, ServiceTask) and (ship.topic, ship.task_priority) == ("shipping", 10)
    invoice = model.node("Task_Invoice")
    assert isinstance(invoice, UserTask)
    assert (invoice.candidate_users, invoice.priority) == ("alice,bob", "${priority}")
    assert model.node("Task_Call") == NoneTask(
        id="Task_Call",
        name="Call customer",
        incoming=("Flow_OutOfStock",),
        outgoing=("Flow_10",),
        manual=True,
    )
    cancelled = model.node("EndEvent_Cancelled")
    assert isinstance(cancelled, EndEvent) and cancelled.terminate
    done = model.node("EndEvent_Done")
    assert isinstance(done, EndEvent) and not done.terminate
    condition = model.flow("Flow_InStock").condition
    assert condition is not None
    assert condition.source == "${stock.available >= order['quantity']}"
    variables = {"stock": {"available": 3}, "order": {"quantity": 2}}
    assert condition.evaluate(variables) is True


def test_timer_and_message_starts_without_incoming_outgoing_children() -> None:
    text = (DATA / "event_starts.bpmn").read_text()
    model = parse_one(text)
    timers = {
        node.id: node.timer for node in model.nodes if isinstance(node, StartEvent) and node.timer
    }
    assert timers == {
        "StartEvent_Date": TimerDefinition(kind="date", text="2026-12-24T18:00:00Z"),
        "StartEvent_Duration": TimerDefinition(kind="duration", text="PT15M"),
        "StartEvent_Cycle": TimerDefinition(kind="cycle", text="R3/PT10M"),
    }
    assert model.node("StartEvent_Cycle").async_before
    message = model.node("StartEvent_Message")
    assert isinstance(message, StartEvent) and message.message_name == "ReportRequested"
    assert model.node("Gateway_Merge").incoming == ("Flow_1", "Flow_2", "Flow_3", "Flow_4")
    assert model.node("Gateway_Merge").outgoing == ("Flow_5",)
    assert model.node("Task_Collect") == NoneTask(
        id="Task_Collect", name="Collect figures", incoming=("Flow_5",), outgoing=("Flow_6",)
    )
    assert model.node("Event_Collected") == IntermediateThrowEvent(
        id="Event_Collected", name="Figures collected", incoming=("Flow_6",), outgoing=("Flow_7",)
    )
    assert model.node("Task_Print").kind.value == "manualTask"
    with pytest.raises(ModelError, match="no none start event"):
        _ = model.none_start


# --- elements one by one -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (
            '<bpmn:serviceTask id="n" camunda:delegateExpression="${chargeCard}" />',
            ServiceTask(id="n", handler="chargeCard"),
        ),
        (
            '<bpmn:serviceTask id="n" camunda:delegateExpression="#{ chargeCard }" />',
            ServiceTask(id="n", handler="chargeCard"),
        ),
        (
            '<bpmn:serviceTask id="n" camunda:expression="${chargeCard}" '
            'camunda:resultVariable="receipt" />',
            ServiceTask(id="n", handler="chargeCard", result_variable="receipt"),
        ),
        (
            '<bpmn:serviceTask id="n" name="Charge" camunda:class="com.acme.Charge$Inner" />',
            ServiceTask(id="n", name="Charge", handler="com.acme.Charge$Inner"),
        ),
        (
            '<bpmn:serviceTask id="n" camunda:type="external" camunda:topic="charge" '
            'camunda:taskPriority="-3" />',
            ServiceTask(id="n", topic="charge", task_priority=-3),
        ),
        (
            '<bpmn:serviceTask id="n" camunda:class="Charge" camunda:asyncBefore="true" '
            'camunda:asyncAfter="true" />',
            ServiceTask(id="n", handler="Charge", async_before=True, async_after=True),
        ),
        (
            '<bpmn:serviceTask id="n" camunda:class="Charge" camunda:async="true" />',
            ServiceTask(id="n", handler="Charge", async_before=True),
        ),
        (
            '<bpmn:serviceTask id="n" camunda:class="Charge" camunda:asyncBefore="false" />',
            ServiceTask(id="n", handler="Charge"),
        ),
        (
            '<bpmn:userTask id="n" camunda:assignee="demo" camunda:candidateUsers="${users}" '
            'camunda:candidateGroups="sales" camunda:dueDate="P3D" camunda:priority="80" '
            'camunda:formKey="app:form.html" />',
            UserTask(
                id="n",
                assignee="demo",
                candidate_users="${users}",
                candidate_groups="sales",
                due_date="P3D",
                priority="80",
                form_key="app:form.html",
            ),
        ),
        ('<bpmn:userTask id="n" />', UserTask(id="n")),
        ('<bpmn:task id="n" name="Think" />', NoneTask(id="n", name="Think")),
        ('<bpmn:manualTask id="n" />', NoneTask(id="n", manual=True)),
        ('<bpmn:intermediateThrowEvent id="n" />', IntermediateThrowEvent(id="n")),
        ('<bpmn:exclusiveGateway id="n" />', ExclusiveGateway(id="n")),
        (
            '<bpmn:exclusiveGateway id="n" default="f2" />',
            ExclusiveGateway(id="n", default_flow="f2"),
        ),
        ('<bpmn:parallelGateway id="n" />', ParallelGateway(id="n")),
        ('<bpmn:inclusiveGateway id="n" />', InclusiveGateway(id="n")),
        (
            '<bpmn:inclusiveGateway id="n" default="f2" />',
            InclusiveGateway(id="n", default_flow="f2"),
        ),
        (
            '<bpmn:task id="n"><bpmn:documentation>Why</bpmn:documentation>'
            "<bpmn:extensionElements><camunda:properties /></bpmn:extensionElements>"
            "<bpmn:incoming>f1</bpmn:incoming><bpmn:outgoing>f2</bpmn:outgoing></bpmn:task>",
            NoneTask(id="n"),
        ),
    ],
)
def test_each_supported_element(node: str, expected: Node) -> None:
    model = parse_one(around(node))
    assert model.node("n") == replace(expected, incoming=("f1",), outgoing=("f2",))


def test_start_and_end_events() -> None:
    text = definitions(
        '  <bpmn:message id="m1" name="Go" />\n'
        '  <bpmn:process id="p" isExecutable="true">\n'
        '    <bpmn:startEvent id="s1" name="Plain" />\n'
        '    <bpmn:startEvent id="s2"><bpmn:messageEventDefinition messageRef="m1" />'
        "</bpmn:startEvent>\n"
        '    <bpmn:startEvent id="s3"><bpmn:timerEventDefinition><bpmn:timeDuration>'
        "${delay}</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:startEvent>\n"
        '    <bpmn:endEvent id="e1" />\n'
        '    <bpmn:endEvent id="e2"><bpmn:terminateEventDefinition /></bpmn:endEvent>\n'
        '    <bpmn:sequenceFlow id="a" sourceRef="s1" targetRef="e1" />\n'
        '    <bpmn:sequenceFlow id="b" sourceRef="s2" targetRef="e1" />\n'
        '    <bpmn:sequenceFlow id="c" sourceRef="s3" targetRef="e2" />\n'
        "  </bpmn:process>"
    )
    model = parse_one(text)
    assert model.node("s1") == StartEvent(id="s1", name="Plain", outgoing=("a",))
    assert model.node("s2") == StartEvent(id="s2", outgoing=("b",), message_name="Go")
    assert model.node("s3") == StartEvent(
        id="s3", outgoing=("c",), timer=TimerDefinition(kind="duration", text="${delay}")
    )
    assert model.node("e1") == EndEvent(id="e1", incoming=("a", "b"))
    assert model.node("e2") == EndEvent(id="e2", incoming=("c",), terminate=True)
    assert model.none_start.id == "s1"


def test_condition_languages_and_whitespace() -> None:
    text = process(
        '<bpmn:startEvent id="s" /><bpmn:exclusiveGateway id="g" default="f3" />'
        '<bpmn:endEvent id="e" />'
        '<bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="g" />'
        '<bpmn:sequenceFlow id="f2" sourceRef="g" targetRef="e"><bpmn:conditionExpression '
        'xsi:type="bpmn:tFormalExpression" language="juel">\n   ${x &lt; 3}\n '
        "</bpmn:conditionExpression>"
        "</bpmn:sequenceFlow>"
        '<bpmn:sequenceFlow id="f3" sourceRef="g" targetRef="e"><bpmn:conditionExpression>'
        "<![CDATA[${x > 3 && y}]]></bpmn:conditionExpression></bpmn:sequenceFlow>"
    )
    with pytest.raises(ModelError, match="the default flow cannot have a condition"):
        parse_one(text)
    model = parse_one(text.replace('default="f3"', ""))
    assert model.flow("f2").condition == compile_expression("${x < 3}")
    assert model.flow("f3").condition == compile_expression("${x > 3 && y}")


def test_default_namespace_comments_and_processing_instructions() -> None:
    text = (
        '<?xml version="1.0"?>\n'
        '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:c="http://camunda.org/schema/1.0/bpmn" targetNamespace="x">\n'
        "  <!-- a comment -->\n"
        '  <process id="p" isExecutable="true">\n'
        "    <?some-tool ignore me?>\n"
        "    <!-- another -->\n"
        '    <startEvent id="s"><!-- inside --></startEvent>\n'
        '    <serviceTask id="t" c:delegateExpression="${work}" />\n'
        '    <endEvent id="e" />\n'
        '    <sequenceFlow id="f1" sourceRef="s" targetRef="t" />\n'
        '    <sequenceFlow id="f2" sourceRef="t" targetRef="e" />\n'
        "  </process>\n"
        "</definitions>\n"
    )
    model = parse_one(text.encode())
    task = model.node("t")
    assert isinstance(task, ServiceTask) and task.handler == "work"
    assert task.line == 8


def test_a_business_rule_task_needs_a_decision_or_an_implementation() -> None:
    text = definitions(
        '<bpmn:process id="p" isExecutable="true"><bpmn:businessRuleTask id="n" /></bpmn:process>'
    )
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "rules.bpmn")
    assert "a business rule task needs camunda:decisionRef" in caught.value.message
    assert caught.value.element_id == "n"
    external = definitions(
        '<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s" />'
        '<bpmn:businessRuleTask id="n" camunda:type="external" camunda:topic="rules" />'
        '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="n" /></bpmn:process>'
    )
    [model] = parse_bpmn(external, "rules.bpmn")
    assert model.node("n").topic == "rules"  # type: ignore[attr-defined]


def test_only_executable_processes_unless_none_is_marked() -> None:
    def two(first: str, second: str) -> str:
        body = (
            '<bpmn:startEvent id="s" /><bpmn:endEvent id="e" />'
            '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />'
        )
        return definitions(
            f'<bpmn:process id="one" {first}>{body}</bpmn:process>'
            f'<bpmn:process id="two" {second}>{body}</bpmn:process>'
        )

    keys = [m.key for m in parse_bpmn(two('isExecutable="true"', 'isExecutable="false"'))]
    assert keys == ["one"]
    keys = [m.key for m in parse_bpmn(two('isExecutable="true"', 'isExecutable="true"'))]
    assert keys == ["one", "two"]
    assert [m.key for m in parse_bpmn(two("", ""))] == ["one", "two"]
    # As Camunda: a process marked false never deploys; an unmarked one does when no process of
    # the file is marked true, and does not when one is.
    parsed = parse_bpmn_file(two('isExecutable="false"', ""))
    assert [m.key for m in parsed.models] == ["two"]
    assert parsed.skipped == (("one", "isExecutable is false"),)
    parsed = parse_bpmn_file(two('isExecutable="true"', ""))
    assert [m.key for m in parsed.models] == ["one"]
    assert [process for process, _ in parsed.skipped] == ["two"]


def test_a_pool_without_flow_nodes_is_skipped_not_refused() -> None:
    body = (
        '<bpmn:startEvent id="s" /><bpmn:endEvent id="e" />'
        '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />'
    )
    text = definitions(
        '<bpmn:collaboration id="c"><bpmn:participant id="p1" processRef="run" />'
        '<bpmn:participant id="p2" processRef="customer" /></bpmn:collaboration>'
        f'<bpmn:process id="run" isExecutable="true">{body}</bpmn:process>'
        '<bpmn:process id="customer" isExecutable="true"><bpmn:laneSet id="ls" />'
        "<bpmn:documentation>the customer's side</bpmn:documentation></bpmn:process>"
    )
    parsed = parse_bpmn_file(text)
    assert [m.key for m in parsed.models] == ["run"]
    assert [process for process, _ in parsed.skipped] == ["customer"]
    assert "no flow nodes" in parsed.skipped[0][1]


def test_a_deployed_file_needs_a_target_namespace() -> None:
    text = definitions(
        '<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s" /></bpmn:process>'
    ).replace(' targetNamespace="http://bpmn.io/schema/bpmn"', "")
    assert "targetNamespace" not in text
    with pytest.raises(ModelError, match="no targetNamespace attribute") as caught:
        parse_bpmn_file(text, "n.bpmn", deploying=True)
    assert caught.value.file == "n.bpmn"
    # A file deployed before the check is read as it was accepted.
    assert [m.key for m in parse_bpmn(text)] == ["p"]


# --- rejected: unsupported elements ------------------------------------------------------------

UNSUPPORTED = [
    (
        'eventBasedGateway with instantiate="true"',
        '<bpmn:eventBasedGateway id="n" instantiate="true" />',
        "n",
    ),
    ("complexGateway", '<bpmn:complexGateway id="n" />', "n"),
    (
        "camunda:caseRef on a call activity",
        '<bpmn:callActivity id="n" camunda:caseRef="claims" />',
        "n",
    ),
    ("adHocSubProcess", '<bpmn:adHocSubProcess id="n" />', "n"),
    (
        "multiInstanceLoopCharacteristics",
        '<bpmn:userTask id="n"><bpmn:multiInstanceLoopCharacteristics id="loop" /></bpmn:userTask>',
        "n",
    ),
    (
        "multiInstanceLoopCharacteristics",
        '<bpmn:subProcess id="n"><bpmn:multiInstanceLoopCharacteristics id="loop" />'
        "</bpmn:subProcess>",
        "n",
    ),
    (
        "standardLoopCharacteristics",
        '<bpmn:receiveTask id="n" messageRef="m"><bpmn:standardLoopCharacteristics />'
        "</bpmn:receiveTask>",
        "n",
    ),
    (
        "standardLoopCharacteristics",
        '<bpmn:serviceTask id="n" camunda:class="A"><bpmn:standardLoopCharacteristics />'
        "</bpmn:serviceTask>",
        "n",
    ),
    ("potentialOwner", '<bpmn:userTask id="n"><bpmn:potentialOwner /></bpmn:userTask>', "n"),
    *(
        (
            f"{kind} with {definition}",
            f'<bpmn:{kind} id="n"{extra}><bpmn:{definition} /></bpmn:{kind}>',
            "n",
        )
        for kind, extra, definitions in (
            (
                "startEvent",
                "",
                ("cancelEventDefinition",),
            ),
            (
                "intermediateThrowEvent",
                "",
                ("timerEventDefinition",),
            ),
            (
                "intermediateCatchEvent",
                "",
                ("errorEventDefinition",),
            ),
        )
        for definition in definitions
    ),
    (
        "startEvent with eventDefinitionRef",
        '<bpmn:startEvent id="n"><bpmn:eventDefinitionRef>x</bpmn:eventDefinitionRef>'
        "</bpmn:startEvent>",
        "n",
    ),
    *(
        (
            f"camunda:{extension}",
            f'<bpmn:task id="n"><bpmn:extensionElements><camunda:{extension} />'
            "</bpmn:extensionElements></bpmn:task>",
            "n",
        )
        for extension in (
            "field",
            "connector",
            "in",
            "out",
            "errorEventDefinition",
            "somethingNew",
        )
    ),
    (
        "camunda:taskListener",
        '<bpmn:userTask id="n"><camunda:taskListener event="create" /></bpmn:userTask>',
        "n",
    ),
]


@pytest.mark.parametrize(("tag", "snippet", "element_id"), UNSUPPORTED)
def test_unsupported_elements_are_rejected_with_file_line_and_id(
    tag: str, snippet: str, element_id: str
) -> None:
    text = definitions(
        '  <bpmn:message id="m" name="M" />\n'
        '  <bpmn:process id="p" isExecutable="true">\n'
        '    <bpmn:startEvent id="start" />\n'
        '    <bpmn:endEvent id="end" />\n'
        f"    {snippet}\n"
        '    <bpmn:sequenceFlow id="f" sourceRef="start" targetRef="end" />\n'
        "  </bpmn:process>"
    )
    error = rejected(text, "orders/bad.bpmn")
    line = line_of(text, snippet)
    assert f"{tag} is not supported by this engine" in str(error)
    assert "orders/bad.bpmn" in str(error)
    assert f"line {line}" in str(error)
    assert f"element '{element_id}'" in str(error)
    assert (error.file, error.line, error.element_id) == ("orders/bad.bpmn", line, element_id)


# --- rejected: hostile or broken input ---------------------------------------------------------


def test_xxe_file_read_is_rejected_and_nothing_leaks(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    payload = (
        '<?xml version="1.0"?>\n'
        f'<!DOCTYPE bpmn:definitions [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'
        + process("<bpmn:documentation>&xxe;</bpmn:documentation>").split("\n", 1)[1]
    )
    error = rejected(payload)
    assert "DOCTYPE" in str(error) and "line 2" in str(error)
    assert "TOP-SECRET-VALUE" not in str(error)
    # The same payload in UTF-16 slips past a byte scan; the parsed document's DTD is still caught.
    encoded = payload.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>')
    error = rejected(encoded.encode("utf-16"))
    assert "DOCTYPE" in str(error)
    assert "TOP-SECRET-VALUE" not in str(error)


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE bpmn:definitions SYSTEM "http://127.0.0.1:9/evil.dtd">',
        '<!DOCTYPE d [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;]>',
        '<!DOCTYPE d [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
        '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">'
        '<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>',
        "<!DOCTYPE d>",
    ],
    ids=["external-dtd", "parameter-entity", "billion-laughs", "bare-doctype"],
)
def test_any_dtd_is_rejected(doctype: str) -> None:
    body = process(
        '<bpmn:startEvent id="s" /><bpmn:endEvent id="e" />'
        '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />'
    )
    text = body.replace("\n", f"\n{doctype}\n", 1)
    error = rejected(text)
    assert "DOCTYPE declarations are not allowed" in str(error)
    assert error.line == 2


def test_oversize_input_is_rejected_before_parsing() -> None:
    text = process("<!--" + "x" * MAX_BPMN_BYTES + "-->")
    for data in (text, text.encode()):
        error = rejected(data)
        assert "larger than" in str(error)
        assert "bad.bpmn" in str(error)
    # Fewer characters than the limit, but more UTF-8 bytes.
    error = rejected(process("<!--" + "€" * (MAX_BPMN_BYTES // 2) + "-->"))
    assert "larger than" in str(error)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("<root>\n  <a>\n</root>", 3, "malformed XML"),
        (HEAD + "  <bpmn:process id='p'>\n  </bpmn:proces>\n</bpmn:definitions>", 4, "mismatch"),
        ("", 1, "malformed XML"),
        ("not xml at all", 1, "malformed XML"),
        ('<?xml version="1.0"?>\n<a>&undefined;</a>', 2, "undefined"),
    ],
)
def test_malformed_xml_names_the_line(text: str, line: int, fragment: str) -> None:
    error = rejected(text)
    assert fragment in str(error)
    assert error.line == line
    assert f"line {line}" in str(error)


@pytest.mark.parametrize(
    ("body", "fragment", "element_id"),
    [
        (
            '<bpmn:serviceTask id="n" />',
            "a service task needs exactly one implementation",
            "n",
        ),
        (
            '<bpmn:serviceTask id="n" camunda:class="A" camunda:delegateExpression="${b}" />',
            "a service task needs exactly one implementation",
            "n",
        ),
        (
            '<bpmn:serviceTask id="n" camunda:class="A" camunda:type="external" '
            'camunda:topic="t" />',
            "a service task needs exactly one implementation",
            "n",
        ),
        (
            '<bpmn:serviceTask id="n" camunda:delegateExpression="${bean.charge}" />',
            "must name a handler as ${name}",
            "n",
        ),
        (
            '<bpmn:serviceTask id="n" camunda:expression="${bean.charge(execution)}" />',
            "calls are not allowed",
            "n",
        ),
        ('<bpmn:serviceTask id="n" camunda:type="external" />', "needs a camunda:topic", "n"),
        ('<bpmn:serviceTask id="n" camunda:topic="t" />', 'needs camunda:type="external"', "n"),
        (
            '<bpmn:serviceTask id="n" camunda:type="connector" />',
            'camunda:type="connector" is not supported',
            "n",
        ),
        ('<bpmn:serviceTask id="n" camunda:class="not a class" />', "is not a class name", "n"),
        (
            '<bpmn:serviceTask id="n" camunda:class="A" camunda:taskPriority="high" />',
            "camunda:taskPriority must be an integer",
            "n",
        ),
        (
            '<bpmn:serviceTask id="n" camunda:class="A" camunda:asyncBefore="yes" />',
            "asyncBefore must be true or false",
            "n",
        ),
        (
            '<bpmn:userTask id="n" camunda:assignee="${__import__(\'os\')}" />',
            "camunda:assignee: calls are not allowed",
            "n",
        ),
        (
            '<bpmn:userTask id="n" camunda:candidateGroups="group-${region +}" />',
            "camunda:candidateGroups: unexpected end of expression: ${region +}",
            "n",
        ),
        (
            '<bpmn:userTask id="n" name="Review" camunda:assignee="kermit_${loopCounter" />',
            "camunda:assignee: missing closing '}': kermit_${loopCounter",
            "n",
        ),
        (
            '<bpmn:task id="n"><bpmn:incoming>other</bpmn:incoming></bpmn:task>',
            "<incoming> elements (other) disagree with the sequence flows (f1)",
            "n",
        ),
        (
            '<bpmn:exclusiveGateway id="n" default="f1" />',
            "default flow 'f1' is not an outgoing flow",
            "n",
        ),
        ('<bpmn:startEvent id="n" />', "a start event cannot have incoming flows", "n"),
        ('<bpmn:endEvent id="n" />', "an end event cannot have outgoing flows", "n"),
        ('<bpmn:task id="start" />', "duplicate element id", "start"),
        ('<bpmn:task id="f1" />', "duplicate element id", "f1"),
    ],
)
def test_invalid_nodes(body: str, fragment: str, element_id: str | None) -> None:
    text = around(body)
    error = rejected(text)
    assert fragment in str(error)
    assert error.element_id == element_id
    assert error.file == "bad.bpmn"
    if element_id == "n" or element_id is None:
        assert error.line == line_of(text, body)


def _gateway_with(flow: str) -> str:
    return process(
        '    <bpmn:startEvent id="s" />\n'
        '    <bpmn:exclusiveGateway id="g" />\n'
        '    <bpmn:endEvent id="e" />\n'
        '    <bpmn:sequenceFlow id="in" sourceRef="s" targetRef="g" />\n'
        f"    {flow}"
    )


@pytest.mark.parametrize(
    ("flow", "fragment", "element_id"),
    [
        (
            '<bpmn:sequenceFlow id="bad" sourceRef="g" targetRef="e"><bpmn:conditionExpression>'
            "${amount >}</bpmn:conditionExpression></bpmn:sequenceFlow>",
            "invalid condition on sequence flow 'bad': unexpected end of expression: ${amount >}",
            "bad",
        ),
        (
            '<bpmn:sequenceFlow id="bad" sourceRef="g" targetRef="e"><bpmn:conditionExpression>'
            "amount > 3</bpmn:conditionExpression></bpmn:sequenceFlow>",
            "invalid condition on sequence flow 'bad'",
            "bad",
        ),
        (
            '<bpmn:sequenceFlow id="bad" sourceRef="g" targetRef="e"><bpmn:conditionExpression>'
            "${x.__class__}</bpmn:conditionExpression></bpmn:sequenceFlow>",
            "names starting with '_' are not allowed",
            "bad",
        ),
        (
            '<bpmn:sequenceFlow id="bad" sourceRef="g" targetRef="e"><bpmn:conditionExpression>'
            "</bpmn:conditionExpression></bpmn:sequenceFlow>",
            "invalid condition on sequence flow 'bad'",
            "bad",
        ),
        (
            '<bpmn:sequenceFlow id="js" sourceRef="g" targetRef="e"><bpmn:conditionExpression '
            'language="python">amount &gt; 3</bpmn:conditionExpression></bpmn:sequenceFlow>',
            "script language 'python' is not supported by this engine; port it to JavaScript",
            "js",
        ),
        (
            '<bpmn:sequenceFlow id="groovy" sourceRef="g" targetRef="e"><bpmn:conditionExpression '
            'language="groovy" camunda:resource="deployment://x.groovy" />'
            "</bpmn:sequenceFlow>",
            "script language 'groovy' is not supported by this engine; port it",
            "groovy",
        ),
        (
            '<bpmn:sequenceFlow id="dangling" sourceRef="nowhere" targetRef="e" />',
            "sourceRef 'nowhere' names no flow node of this process",
            "dangling",
        ),
        (
            '<bpmn:sequenceFlow id="dangling" sourceRef="g" targetRef="nowhere" />',
            "targetRef 'nowhere' names no flow node of this process",
            "dangling",
        ),
        (
            '<bpmn:sequenceFlow id="half" sourceRef="g" />',
            "sequenceFlow needs a sourceRef and a targetRef",
            "half",
        ),
    ],
)
def test_invalid_flows(flow: str, fragment: str, element_id: str | None) -> None:
    text = _gateway_with(flow)
    error = rejected(text)
    assert fragment in str(error)
    assert error.element_id == element_id
    assert error.line == line_of(text, flow)
    assert "bad.bpmn" in str(error)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('<definitions xmlns="urn:other"><process id="p" /></definitions>', "not bpmn:definitions"),
        ("<root />", "the root element is root, not bpmn:definitions"),
        (definitions('<bpmn:collaboration id="c" />'), "the file contains no bpmn:process"),
        (process('<bpmn:startEvent id="s" />', attributes=""), "process has no id"),
        (process('<bpmn:task id="t" />'), "process has no start event"),
        (
            process('<bpmn:startEvent id="a" /><bpmn:startEvent id="b" />'),
            "at most one none start event",
        ),
        (
            process('<bpmn:startEvent id="s"><bpmn:messageEventDefinition /></bpmn:startEvent>'),
            "message start event has no messageRef",
        ),
        (
            process(
                '<bpmn:startEvent id="s"><bpmn:messageEventDefinition messageRef="nope" />'
                "</bpmn:startEvent>"
            ),
            "messageRef 'nope' names no bpmn:message",
        ),
        (
            definitions(
                '<bpmn:message id="m" /><bpmn:process id="p"><bpmn:startEvent id="s">'
                '<bpmn:messageEventDefinition messageRef="m" /></bpmn:startEvent></bpmn:process>'
            ),
            "message 'm' has no name",
        ),
        (
            process('<bpmn:startEvent id="s"><bpmn:timerEventDefinition /></bpmn:startEvent>'),
            "a timer needs exactly one of timeDate, timeDuration or timeCycle",
        ),
        (
            process(
                '<bpmn:startEvent id="s"><bpmn:timerEventDefinition><bpmn:timeDate> '
                "</bpmn:timeDate></bpmn:timerEventDefinition></bpmn:startEvent>"
            ),
            "timeDate is empty",
        ),
        (
            process(
                '<bpmn:startEvent id="s"><bpmn:timerEventDefinition><bpmn:timeCycle>'
                "${a;b}</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:startEvent>"
            ),
            "timeCycle: ';' is not allowed",
        ),
        (
            process('<bpmn:startEvent id="s"><bpmn:terminateEventDefinition /></bpmn:startEvent>'),
            "startEvent with terminateEventDefinition is not supported",
        ),
        (
            process(
                '<bpmn:endEvent id="s"><bpmn:terminateEventDefinition />'
                "<bpmn:terminateEventDefinition /></bpmn:endEvent>"
            ),
            "several event definitions",
        ),
        (process('<other:thing xmlns:other="urn:x" id="t" />'), "other:thing is not supported"),
    ],
)
def test_invalid_documents(text: str, fragment: str) -> None:
    error = rejected(text)
    assert fragment in str(error)
    assert error.file == "bad.bpmn"


def test_str_and_bytes_give_the_same_models() -> None:
    text = (DATA / "invoice_approval.bpmn").read_text()
    assert parse_bpmn(text) == parse_bpmn(text.encode("utf-8"))


def test_str_input_ignores_the_declared_encoding() -> None:
    text = around('<bpmn:task id="n" name="Prüfen €" />').replace("UTF-8", "ISO-8859-1")
    assert parse_one(text).node("n").name == "Prüfen €"
    assert parse_one(text.encode("iso-8859-15")).node("n").name == "Prüfen ¤"


def test_a_doctype_mentioned_in_a_comment_is_not_a_doctype() -> None:
    text = around('<bpmn:task id="n" />').replace("\n", "\n<!-- no <!DOCTYPE here -->\n", 1)
    assert parse_one(text).node("n").line == line_of(text, 'id="n"')
