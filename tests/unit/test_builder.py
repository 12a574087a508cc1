from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ModelError
from engine.language.forms import FormField
from engine.model import ProcessModel, ServiceTask, StartEvent, TimerDefinition, UserTask

DATA = Path(__file__).parent.parent / "data" / "bpmn"
FIXTURES = sorted(DATA.glob("*.bpmn"))


def invoice_approval() -> ProcessModel:
    """The builder twin of tests/data/bpmn/invoice_approval.bpmn."""
    return (
        ProcessBuilder(
            "invoice_approval", "Invoice approval", version_tag="1.2", history_ttl_days=180
        )
        .start_event("StartEvent_Invoice", "Invoice received")
        .user_task(
            "Task_Approve",
            "Approve invoice",
            assignee="${approver}",
            candidate_groups="accounting,management",
            due_date="${dueDate}",
            priority="60",
            form_key="embedded:app:forms/approve.html",
        )
        .exclusive_gateway("Gateway_Approved", "Approved?", default="Flow_Rejected")
        .service_task(
            "Task_Pay",
            "Pay invoice",
            handler="payInvoice",
            result_variable="payment",
            async_before=True,
        )
        .service_task("Task_Archive", "Archive invoice", topic="archive-invoice", priority=5)
        .end_event("EndEvent_Paid", "Invoice paid")
        .end_event("EndEvent_Rejected", "Invoice rejected")
        .flow("StartEvent_Invoice", "Task_Approve", id="Flow_ToApprove")
        .flow("Task_Approve", "Gateway_Approved", id="Flow_ToDecision")
        .flow(
            "Gateway_Approved", "Task_Pay", id="Flow_Approved", name="yes", condition="${approved}"
        )
        .flow("Gateway_Approved", "EndEvent_Rejected", id="Flow_Rejected", name="no")
        .flow("Task_Pay", "Task_Archive", id="Flow_ToArchive")
        .flow("Task_Archive", "EndEvent_Paid", id="Flow_ToPaid")
        .build()
    )


def everything() -> ProcessModel:
    """Every node kind and option the builder offers."""
    return (
        ProcessBuilder("everything", version_tag="7")
        .start_event("start")
        .start_event("by_message", "By message", message="Kick off")
        .start_event("by_timer", timer=TimerDefinition(kind="cycle", text="R/PT1H"))
        .exclusive_gateway("merge")
        .service_task("handler", handler="doWork", async_after=True)
        .service_task("java", handler="com.acme.DoWork", priority=0)
        .service_task("external", topic="work", result_variable="out", priority=-2)
        .user_task("review", candidate_users="a,b", async_before=True)
        .task("think", manual=True)
        .task("plain", async_before=True)
        .intermediate_throw_event("milestone", "Quotes \" & <angles> 'and'\nnewlines")
        .parallel_gateway("split")
        .parallel_gateway("join")
        .end_event("end", terminate=True)
        .chain("start", "merge")
        .chain("by_message", "merge")
        .chain("by_timer", "merge")
        .chain("merge", "handler", "java", "external", "split")
        .chain("split", "review", "join")
        .chain("split", "think", "join")
        .chain("split", "plain", "join")
        .chain("join", "milestone", "end")
        .build()
    )


def claim_handling() -> ProcessModel:
    """The builder twin of tests/data/bpmn/claim_handling.bpmn."""
    reminder = TimerDefinition(kind="cycle", text="R/PT4H")
    return (
        ProcessBuilder("claim_handling", "Claim handling", version_tag="3")
        .start_event("StartEvent_Claim", "Claim filed")
        .sub_process("Activity_Assess", "Assess claim", async_before=True)
        .start_event("StartEvent_Assess", parent="Activity_Assess")
        .service_task("Task_Score", "Score claim", parent="Activity_Assess", topic="score-claim")
        .exclusive_gateway(
            "Gateway_Fraud", "Fraud?", parent="Activity_Assess", default="Flow_Genuine"
        )
        .end_event("EndEvent_Assessed", "Claim assessed", parent="Activity_Assess")
        .end_event(
            "EndEvent_Fraud", "Fraud suspected", parent="Activity_Assess", error_code="FRAUD"
        )
        .sub_process(
            "Activity_Reminder",
            "Remind assessor",
            parent="Activity_Assess",
            triggered_by_event=True,
        )
        .start_event(
            "StartEvent_Reminder",
            "Every 4 hours",
            parent="Activity_Reminder",
            timer=reminder,
            interrupting=False,
        )
        .service_task(
            "Task_Remind", "Send reminder", parent="Activity_Reminder", handler="remindAssessor"
        )
        .end_event("EndEvent_Reminded", parent="Activity_Reminder")
        .service_task("Task_Pay", "Pay claim", handler="payClaim")
        .end_event("EndEvent_Paid", "Claim paid")
        .boundary_event("Event_FraudFound", "Activity_Assess", "Fraud", error_code="FRAUD")
        .user_task("Task_Investigate", "Investigate fraud", candidate_groups="fraud-team")
        .end_event("EndEvent_Rejected", "Claim rejected")
        .sub_process("Activity_AddressChanged", "Address changed", triggered_by_event=True)
        .start_event(
            "StartEvent_AddressChanged",
            "Address changed",
            parent="Activity_AddressChanged",
            message="AddressChanged",
            interrupting=False,
        )
        .user_task(
            "Task_UpdateAddress",
            "Update address",
            parent="Activity_AddressChanged",
            assignee="${clerk}",
        )
        .end_event("EndEvent_AddressUpdated", parent="Activity_AddressChanged")
        .sub_process("Activity_Failure", "Handle any error", triggered_by_event=True)
        .start_event("StartEvent_AnyError", "Any error", parent="Activity_Failure", error=True)
        .user_task(
            "Task_Alert",
            "Sort out the claim",
            parent="Activity_Failure",
            candidate_groups="claims-support",
        )
        .end_event(
            "EndEvent_Failed", "Claim handled by hand", parent="Activity_Failure", terminate=True
        )
        .flow("StartEvent_Assess", "Task_Score", id="Flow_ToScore")
        .flow("Task_Score", "Gateway_Fraud", id="Flow_ToFraudCheck")
        .flow("Gateway_Fraud", "EndEvent_Assessed", id="Flow_Genuine", name="no")
        .flow(
            "Gateway_Fraud",
            "EndEvent_Fraud",
            id="Flow_Fraud",
            name="yes",
            condition="${score > 90}",
        )
        .flow("StartEvent_Reminder", "Task_Remind", id="Flow_ToRemind")
        .flow("Task_Remind", "EndEvent_Reminded", id="Flow_ToReminded")
        .flow("StartEvent_Claim", "Activity_Assess", id="Flow_ToAssess")
        .flow("Activity_Assess", "Task_Pay", id="Flow_ToPay")
        .flow("Task_Pay", "EndEvent_Paid", id="Flow_ToPaid")
        .flow("Event_FraudFound", "Task_Investigate", id="Flow_ToInvestigate")
        .flow("Task_Investigate", "EndEvent_Rejected", id="Flow_ToRejected")
        .flow("StartEvent_AddressChanged", "Task_UpdateAddress", id="Flow_ToUpdateAddress")
        .flow("Task_UpdateAddress", "EndEvent_AddressUpdated", id="Flow_ToAddressUpdated")
        .flow("StartEvent_AnyError", "Task_Alert", id="Flow_ToAlert")
        .flow("Task_Alert", "EndEvent_Failed", id="Flow_ToFailed")
        .build()
    )


def document_review() -> ProcessModel:
    """The builder twin of tests/data/bpmn/document_review.bpmn."""
    return (
        ProcessBuilder("document_review", "Document review")
        .start_event("StartEvent_Submitted", "Document submitted")
        .intermediate_catch_event(
            "Event_CoolOff",
            "Cooling-off period",
            timer=TimerDefinition(kind="duration", text="${coolOff}"),
        )
        .user_task("Task_Review", "Review document", assignee="${reviewer}", due_date="P2D")
        .end_event("EndEvent_Reviewed", "Document reviewed")
        .boundary_event(
            "Event_Deadline",
            "Task_Review",
            "2 days",
            timer=TimerDefinition(kind="duration", text="P2D"),
        )
        .user_task("Task_Escalate", "Review overdue document", candidate_groups="managers")
        .end_event("EndEvent_Escalated", "Reviewed after escalation")
        .boundary_event(
            "Event_Reminder",
            "Task_Review",
            "Every 4 hours, 3 times",
            cancel_activity=False,
            timer=TimerDefinition(kind="cycle", text="R3/PT4H"),
        )
        .service_task("Task_SendReminder", "Send reminder", handler="sendReminder")
        .end_event("EndEvent_Reminded", "Reminder sent")
        .flow("StartEvent_Submitted", "Event_CoolOff", id="Flow_ToCoolOff")
        .flow("Event_CoolOff", "Task_Review", id="Flow_ToReview")
        .flow("Task_Review", "EndEvent_Reviewed", id="Flow_ToReviewed")
        .flow("Event_Deadline", "Task_Escalate", id="Flow_ToEscalate")
        .flow("Task_Escalate", "EndEvent_Escalated", id="Flow_ToEscalated")
        .flow("Event_Reminder", "Task_SendReminder", id="Flow_ToSendReminder")
        .flow("Task_SendReminder", "EndEvent_Reminded", id="Flow_ToReminded")
        .build()
    )


def shipment_tracking() -> ProcessModel:
    """The builder twin of tests/data/bpmn/shipment_tracking.bpmn."""
    return (
        ProcessBuilder("shipment_tracking", "Shipment tracking")
        .start_event("StartEvent_Order", "Order placed")
        .start_event("StartEvent_Recall", "Product recalled", signal="ProductRecall")
        .exclusive_gateway("Gateway_Merge")
        .receive_task("Task_AwaitPayment", "Await payment", message="PaymentReceived")
        .intermediate_catch_event(
            "Event_Dispatched", "Shipment dispatched", message="ShipmentDispatched"
        )
        .user_task("Task_Track", "Track shipment", candidate_groups="logistics")
        .intermediate_catch_event("Event_Customs", "Customs cleared", signal="CustomsCleared")
        .intermediate_throw_event("Event_Delivered", "Parcel delivered", signal="ParcelDelivered")
        .end_event("EndEvent_Done", "Shipment complete")
        .boundary_event(
            "Event_Cancelled", "Task_Track", "Order cancelled", message="OrderCancelled"
        )
        .end_event("EndEvent_Cancelled", "Shipment cancelled")
        .boundary_event(
            "Event_Storm",
            "Task_Track",
            "Storm warning",
            cancel_activity=False,
            signal="StormWarning",
        )
        .service_task("Task_Notify", "Warn the customer", topic="notify-customer")
        .end_event("EndEvent_Notified", "Customer warned")
        .flow("StartEvent_Order", "Gateway_Merge", id="Flow_FromOrder")
        .flow("StartEvent_Recall", "Gateway_Merge", id="Flow_FromRecall")
        .flow("Gateway_Merge", "Task_AwaitPayment", id="Flow_ToPayment")
        .flow("Task_AwaitPayment", "Event_Dispatched", id="Flow_ToDispatched")
        .flow("Event_Dispatched", "Task_Track", id="Flow_ToTrack")
        .flow("Task_Track", "Event_Customs", id="Flow_ToCustoms")
        .flow("Event_Customs", "Event_Delivered", id="Flow_ToDelivered")
        .flow("Event_Delivered", "EndEvent_Done", id="Flow_ToDone")
        .flow("Event_Cancelled", "EndEvent_Cancelled", id="Flow_ToCancelled")
        .flow("Event_Storm", "Task_Notify", id="Flow_ToNotify")
        .flow("Task_Notify", "EndEvent_Notified", id="Flow_ToNotified")
        .build()
    )


def payment_retry() -> ProcessModel:
    """The builder twin of tests/data/bpmn/payment_retry.bpmn."""
    return (
        ProcessBuilder("payment_retry", "Payment with retries")
        .start_event(
            "StartEvent_Payment",
            "Payment due",
            form_fields=[FormField(id="amount", label="Amount", type="long")],
        )
        .service_task(
            "Task_Charge",
            "Charge card",
            topic="charge-card",
            priority=20,
            async_before=True,
            retry_cycle="R5/PT10M",
        )
        .intermediate_catch_event(
            "Event_Settle",
            "Wait for settlement",
            timer=TimerDefinition(kind="duration", text="PT1H"),
            async_after=True,
            retry_cycle="R2/PT30S",
        )
        .service_task(
            "Task_Receipt",
            "Send receipt",
            handler="sendReceipt",
            async_after=True,
            retry_cycle="R3/2026-01-01T00:00:00Z/PT1M",
        )
        .user_task(
            "Task_Confirm",
            "Confirm payment",
            form_key="embedded:app:forms/confirm.html",
            form_fields=[FormField(id="confirmed", label="Confirmed", type="boolean")],
        )
        .end_event("EndEvent_Paid", "Paid")
        .flow("StartEvent_Payment", "Task_Charge", id="Flow_ToCharge")
        .flow("Task_Charge", "Event_Settle", id="Flow_ToSettle")
        .flow("Event_Settle", "Task_Receipt", id="Flow_ToReceipt")
        .flow("Task_Receipt", "Task_Confirm", id="Flow_ToConfirm")
        .flow("Task_Confirm", "EndEvent_Paid", id="Flow_ToPaid")
        .build()
    )


def decisions_everything() -> ProcessModel:
    """Business rule tasks with every binding and result mapping."""
    return (
        ProcessBuilder("rules")
        .start_event("s")
        .business_rule_task("Latest", decision_ref="dish")
        .business_rule_task(
            "Version",
            decision_ref="${which}",
            binding="version",
            version="${v}",
            result_variable="r1",
            map_decision_result="singleEntry",
        )
        .business_rule_task(
            "Tagged",
            decision_ref="dish",
            binding="versionTag",
            version_tag="v3",
            result_variable="r2",
            map_decision_result="collectEntries",
        )
        .business_rule_task(
            "Own",
            decision_ref="dish",
            binding="deployment",
            result_variable="r3",
            async_before=True,
        )
        .end_event("e")
        .chain("s", "Latest", "Version", "Tagged", "Own", "e")
        .build()
    )


def events_everything() -> ProcessModel:
    """Every new node kind and option, with scopes three levels deep."""
    every_hour = TimerDefinition(kind="cycle", text="R/PT1H")
    return (
        ProcessBuilder("events_everything")
        .start_event("start")
        .start_event("by_signal", signal="Go")
        .start_event("by_date", timer=TimerDefinition(kind="date", text="2026-12-24T18:00:00Z"))
        .parallel_gateway("split", async_before=True, retry_cycle="R1/PT1S")
        .parallel_gateway("join")
        .sub_process("outer", "Outer", async_before=True, async_after=True, retry_cycle="R3/PT5M")
        .start_event("outer_start", parent="outer")
        .sub_process("inner", parent="outer")
        .start_event("inner_start", parent="inner")
        .receive_task("inner_wait", parent="inner", message="Reply", retry_cycle="R2/PT1M")
        .end_event("inner_fail", parent="inner", error=True)
        .end_event("outer_end", parent="outer")
        .boundary_event(
            "inner_timeout", "inner", timer=TimerDefinition(kind="duration", text="PT1H")
        )
        .boundary_event("inner_nudge", "inner", cancel_activity=False, timer=every_hour)
        .boundary_event("inner_error", "inner", error_code="E1", async_after=True)
        .boundary_event("inner_stop", "inner", signal="Stop")
        .boundary_event("inner_cancel", "inner", message="Cancel", cancel_activity=False)
        .end_event("outer_timed_out", parent="outer", terminate=True)
        .sub_process("outer_events", parent="outer", triggered_by_event=True)
        .start_event("outer_events_start", parent="outer_events", error_code="E2")
        .intermediate_throw_event("outer_events_throw", parent="outer_events", signal="Alarm")
        .end_event("outer_events_end", parent="outer_events")
        .intermediate_catch_event("wait_signal", signal="Go")
        .intermediate_catch_event("wait_message", message="Reply")
        .intermediate_catch_event(
            "wait_timer", timer=TimerDefinition(kind="cycle", text="R2/2026-01-01T00:00:00Z/P1D")
        )
        .intermediate_throw_event("milestone")
        .end_event("end", error_code="Reply")  # an error code may share a message's name
        .sub_process("catch_all", triggered_by_event=True)
        .start_event("catch_all_start", parent="catch_all", error=True)
        .end_event("catch_all_end", parent="catch_all")
        .sub_process("on_signal", triggered_by_event=True)
        .start_event("on_signal_start", parent="on_signal", signal="Go", interrupting=False)
        .end_event("on_signal_end", parent="on_signal")
        .chain("start", "split")
        .chain("by_signal", "split")
        .chain("by_date", "split")
        .chain("split", "outer", "join")
        .chain("split", "wait_signal", "wait_message", "wait_timer", "join")
        .chain("join", "milestone", "end")
        .chain("outer_start", "inner", "outer_end")
        .chain("inner_start", "inner_wait", "inner_fail")
        .chain("inner_timeout", "outer_timed_out")
        .chain("inner_nudge", "outer_end")
        .chain("inner_error", "outer_end")
        .chain("inner_stop", "outer_end")
        .chain("inner_cancel", "outer_end")
        .chain("outer_events_start", "outer_events_throw", "outer_events_end")
        .chain("catch_all_start", "catch_all_end")
        .chain("on_signal_start", "on_signal_end")
        .build()
    )


TWINS = {
    "claim_handling.bpmn": claim_handling,
    "document_review.bpmn": document_review,
    "shipment_tracking.bpmn": shipment_tracking,
    "payment_retry.bpmn": payment_retry,
}


@pytest.mark.parametrize("name", sorted(TWINS))
def test_builder_twins_equal_the_parsed_event_fixtures(name: str) -> None:
    assert parse_bpmn((DATA / name).read_bytes(), name) == [TWINS[name]()]


def test_builder_model_equals_the_parsed_fixture() -> None:
    parsed = parse_bpmn((DATA / "invoice_approval.bpmn").read_bytes(), "invoice_approval.bpmn")
    assert parsed == [invoice_approval()]


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_write_then_parse_roundtrips_every_fixture(path: Path) -> None:
    for model in parse_bpmn(path.read_bytes(), path.name):
        written = write_bpmn([model])
        assert parse_bpmn(written) == [model]
        assert write_bpmn(parse_bpmn(written)) == written


@pytest.mark.parametrize(
    "build",
    [
        invoice_approval,
        everything,
        claim_handling,
        document_review,
        shipment_tracking,
        payment_retry,
        events_everything,
        decisions_everything,
    ],
)
def test_write_then_parse_roundtrips_builder_models(build: Callable[[], ProcessModel]) -> None:
    model = build()
    assert parse_bpmn(write_bpmn([model])) == [model]


def test_several_models_share_one_document_and_message_elements() -> None:
    first = everything()
    second = (
        ProcessBuilder("second")
        .start_event("Message_1", message="Kick off")
        .end_event("e")
        .chain("Message_1", "e")
        .build()
    )
    written = write_bpmn([first, second])
    assert written.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<bpmn:definitions')
    assert written.count("<bpmn:message ") == 1
    assert 'id="Message_1"' in written  # the node keeps its id; the message element gets another
    assert parse_bpmn(written) == [first, second]


def test_writer_uses_camunda_attributes() -> None:
    written = write_bpmn([everything()])
    assert 'camunda:delegateExpression="${doWork}"' in written
    assert 'camunda:class="com.acme.DoWork"' in written
    assert 'camunda:type="external" camunda:topic="work"' in written
    assert 'camunda:taskPriority="-2"' in written
    assert 'camunda:asyncAfter="true"' in written
    assert 'isExecutable="true" camunda:versionTag="7"' in written
    assert '<bpmn:timeCycle xsi:type="bpmn:tFormalExpression">R/PT1H</bpmn:timeCycle>' in written
    assert "<bpmn:terminateEventDefinition/>" in written
    assert "&lt;angles&gt;" in written and "&#10;" in written


def test_builder_fills_incoming_and_outgoing_in_flow_order() -> None:
    model = (
        ProcessBuilder("order")
        .start_event("s")
        .exclusive_gateway("g", default="to_b")
        .task("a")
        .task("b")
        .end_event("e")
        .flow("s", "g")
        .flow("g", "b", id="to_b")
        .flow("g", "a", condition="${go}")
        .chain("b", "e")
        .chain("a", "e")
        .build()
    )
    assert model.node("g").outgoing == ("to_b", "Flow_g_a")
    assert model.node("e").incoming == ("Flow_b_e", "Flow_a_e")
    assert model.node("s").outgoing == ("Flow_s_g",)
    condition = model.flow("Flow_g_a").condition
    assert condition is not None and condition.evaluate({"go": True}) is True
    assert parse_bpmn(write_bpmn([model])) == [model]


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(6)), st.permutations(range(3)))
def test_any_flow_order_survives_a_roundtrip(flow_order: list[int], task_order: list[int]) -> None:
    builder = ProcessBuilder("shuffled").start_event("s").parallel_gateway("split")
    builder.parallel_gateway("join").end_event("e").chain("s", "split").chain("join", "e")
    for index in task_order:
        builder.task(f"t{index}")
    pairs = [("split", f"t{i}") for i in range(3)] + [(f"t{i}", "join") for i in range(3)]
    for index in flow_order:
        builder.flow(*pairs[index])
    model = builder.build()
    assert parse_bpmn(write_bpmn([model])) == [model]


@pytest.mark.parametrize(
    ("build", "fragment", "element_id"),
    [
        (lambda b: b.task("x").task("x"), "duplicate element id", "x"),
        (lambda b: b.task("x").flow("s", "e", id="x"), "duplicate element id", "x"),
        (lambda b: b.flow("s", "e", id="c", condition="${a ="), "invalid condition on", "c"),
        (lambda b: b.flow("s", "e", id="c", condition="${f(1)}"), "calls are not allowed", "c"),
        (lambda b: b.flow("s", "e", id="c", condition="a > 1"), "must be written as ${...}", "c"),
        (lambda b: b.service_task("x", handler="no spaces"), "is not a name", "x"),
        (lambda b: b.service_task("x"), "needs exactly one implementation", "x"),
        (lambda b: b.service_task("x", handler="a", topic="t"), "exactly one implementation", "x"),
        (lambda b: b.service_task("x", topic=""), "non-empty topic", "x"),
        (lambda b: b.user_task("x", assignee="${a.__class__}"), "assignee: names starting", "x"),
        (
            lambda b: b.start_event("x", message="m", timer=TimerDefinition(kind="date", text="t")),
            "either a message or a timer",
            "x",
        ),
        (
            lambda b: b.start_event("x", timer=TimerDefinition(kind="date", text=" PT1M")),
            "whitespace",
            "x",
        ),
        (
            lambda b: b.start_event("x", timer=TimerDefinition(kind="date", text="${;}")),
            "timer: ';' is not allowed",
            "x",
        ),
        (lambda b: b.flow("s", "nowhere", id="c"), "targetRef 'nowhere' names no flow node", "c"),
        (
            lambda b: b.exclusive_gateway("x", default="missing").chain("s", "x"),
            "default flow 'missing' is not an outgoing flow",
            "x",
        ),
        (lambda b: b.task("t").flow("t", "s", id="c"), "a start event cannot have incoming", "s"),
    ],
)
def test_builder_errors_name_the_element(
    build: Callable[[ProcessBuilder], object], fragment: str, element_id: str
) -> None:
    builder = ProcessBuilder("broken").start_event("s").end_event("e")
    with pytest.raises(ModelError) as caught:
        build(builder)
        builder.build()
    assert fragment in str(caught.value)
    assert caught.value.element_id == element_id
    assert caught.value.file == "<builder broken>"


def test_builder_returns_plain_model_nodes() -> None:
    model = everything()
    assert isinstance(model.node("by_message"), StartEvent)
    review = model.node("review")
    assert isinstance(review, UserTask) and review.async_before
    external = model.node("external")
    assert isinstance(external, ServiceTask) and external.is_external
    assert model.key == "everything" and model.version_tag == "7" and model.name is None


def test_empty_key_is_rejected() -> None:
    with pytest.raises(ModelError, match="needs a key"):
        ProcessBuilder("")


# --- scopes, events and their XML -------------------------------------------------------------


def test_boundary_events_take_the_parent_of_their_activity() -> None:
    model = events_everything()
    assert model.node("inner").parent == "outer"
    for boundary in model.boundary_events("inner"):
        assert boundary.parent == "outer"
    assert {node.id for node in model.children("inner")} == {
        "inner_start",
        "inner_wait",
        "inner_fail",
    }
    assert [sp.id for sp in model.event_subprocesses("outer")] == ["outer_events"]
    assert [sp.id for sp in model.event_subprocesses(None)] == ["catch_all", "on_signal"]
    start = model.node("outer_events_start")
    assert isinstance(start, StartEvent) and (start.is_error, start.error_code) == (True, "E2")


def test_writer_writes_scopes_and_definitions() -> None:
    written = write_bpmn([events_everything()])
    assert written.count("<bpmn:subProcess ") == 5
    assert '<bpmn:subProcess id="outer_events" triggeredByEvent="true">' in written
    assert 'attachedToRef="inner" cancelActivity="false"' in written
    assert 'isInterrupting="false"' in written
    assert (
        "<bpmn:extensionElements>\n"
        "        <camunda:failedJobRetryTimeCycle>R3/PT5M</camunda:failedJobRetryTimeCycle>\n"
        "      </bpmn:extensionElements>"
    ) in written
    assert '<bpmn:receiveTask id="inner_wait" messageRef="Message_' in written
    for name in ("Go", "Stop", "Alarm"):
        assert f'name="{name}"/>' in written
    assert written.count("<bpmn:signal ") == 3
    assert written.count("<bpmn:message ") == 2
    assert 'name="E1" errorCode="E1"/>' in written
    assert written.count("<bpmn:error ") == 3  # E1, E2, Reply; the catch-alls have no errorRef
    assert "<bpmn:errorEventDefinition/>" in written


def test_definitions_level_ids_never_clash_across_models() -> None:
    first = (
        ProcessBuilder("Signal_1")
        .start_event("Error_1", signal="S")
        .end_event("Message_1", error_code="X")
        .chain("Error_1", "Message_1")
        .build()
    )
    second = (
        ProcessBuilder("second")
        .start_event("Signal_2", message="M")
        .intermediate_catch_event("Error_2", signal="S")
        .end_event("e", error_code="Y")
        .chain("Signal_2", "Error_2", "e")
        .build()
    )
    written = write_bpmn([first, second])
    assert written.count("<bpmn:signal ") == 1  # shared by name
    assert '<bpmn:signal id="Signal_3" name="S"/>' in written
    assert '<bpmn:message id="Message_2" name="M"/>' in written
    assert '<bpmn:error id="Error_3" name="X" errorCode="X"/>' in written
    assert '<bpmn:error id="Error_4" name="Y" errorCode="Y"/>' in written
    assert parse_bpmn(written) == [first, second]


@pytest.mark.parametrize(
    ("build", "fragment", "element_id"),
    [
        (
            lambda b: b.start_event("x", signal="s", message="m"),
            "not message and signal",
            "x",
        ),
        (
            lambda b: b.start_event("x", error=True, timer=TimerDefinition(kind="date", text="t")),
            "not timer and error",
            "x",
        ),
        (lambda b: b.start_event("x", signal=""), "a signal needs a non-empty name", "x"),
        (lambda b: b.start_event("x", error_code=""), "an error code cannot be empty", "x"),
        (
            lambda b: b.start_event("x", timer=TimerDefinition(kind="date", text="P1D")),
            "timer: 'P1D' is not an ISO 8601 date-time",
            "x",
        ),
        (
            lambda b: b.start_event("x", timer=TimerDefinition(kind="cycle", text="PT1H")),
            "timer: 'PT1H' is a duration, not a cycle",
            "x",
        ),
        (
            lambda b: b.start_event(
                "x",
                # "weekly" is no timer kind: the builder refuses what the type forbids.
                timer=TimerDefinition(kind="weekly", text="P1W"),  # type: ignore[arg-type]
            ),
            "timer: 'weekly' is not a timer kind",
            "x",
        ),
        (
            lambda b: b.task("x", retry_cycle="PT5M"),
            "camunda:failedJobRetryTimeCycle: 'PT5M' is a duration, not a cycle",
            "x",
        ),
        (lambda b: b.task("x", retry_cycle=" R3/PT5M"), "whitespace", "x"),
        (lambda b: b.task("x", retry_cycle="${r}"), "expressions in camunda:", "x"),
        (lambda b: b.receive_task("x", message=""), "a receive task's message needs a name", "x"),
        (lambda b: b.intermediate_catch_event("x", message=""), "non-empty name", "x"),
        (
            lambda b: b.intermediate_catch_event("x", message="m", signal="s"),
            "not message and signal",
            "x",
        ),
        (
            lambda b: b.intermediate_catch_event("x").chain("s", "x", "e"),
            "an intermediate catch event needs exactly one trigger",
            "x",
        ),
        (
            lambda b: b.boundary_event("x", "e", error=True).chain("x", "e"),
            "attachedToRef 'e' names no task or subprocess",
            "x",
        ),
        (
            lambda b: b.task("t").boundary_event("x", "t").chain("s", "t", "e").chain("x", "e"),
            "a boundary event needs exactly one trigger",
            "x",
        ),
        (
            lambda b: (
                b.task("t")
                .boundary_event("x", "t", error=True, cancel_activity=False)
                .chain("s", "t", "e")
                .chain("x", "e")
            ),
            "an error boundary event is always interrupting",
            "x",
        ),
        (
            lambda b: b.task("t").boundary_event("x", "t", signal="s").chain("s", "t", "e"),
            "a boundary event needs an outgoing flow",
            "x",
        ),
        (
            lambda b: b.end_event("x", terminate=True, error=True),
            "cannot both terminate and throw an error",
            "x",
        ),
        (lambda b: b.task("x", parent="nowhere"), "parent 'nowhere' names no subprocess", "x"),
        (
            lambda b: b.sub_process("sp").task("x", parent="sp").chain("s", "x"),
            "a sequence flow cannot cross a subprocess boundary",
            "Flow_s_x",
        ),
        (
            lambda b: b.sub_process("sp").chain("s", "sp", "e"),
            "a subprocess needs exactly one none start event",
            "sp",
        ),
        (
            lambda b: b.sub_process("sp", triggered_by_event=True).start_event("x", parent="sp"),
            "the start event of an event subprocess needs a trigger",
            "x",
        ),
        (
            lambda b: b.start_event("x", error=True),
            "an error start event belongs in an event subprocess",
            "x",
        ),
        (
            lambda b: b.start_event("x", message="m", interrupting=False),
            "only the start event of an event subprocess can be non-interrupting",
            "x",
        ),
    ],
)
def test_builder_event_errors_name_the_element(
    build: Callable[[ProcessBuilder], object], fragment: str, element_id: str
) -> None:
    builder = ProcessBuilder("broken").start_event("s").end_event("e")
    with pytest.raises(ModelError) as caught:
        build(builder)
        builder.build()
    assert fragment in str(caught.value)
    assert caught.value.element_id == element_id
    assert caught.value.file == "<builder broken>"


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(8)), st.booleans())
def test_any_flow_order_inside_nested_scopes_survives_a_roundtrip(
    flow_order: list[int], nested: bool
) -> None:
    inner_parent = "outer" if nested else None
    builder = (
        ProcessBuilder("scoped")
        .start_event("s")
        .end_event("e")
        .sub_process("outer")
        .start_event("outer_s", parent="outer")
        .end_event("outer_e", parent="outer")
        .sub_process("inner", parent=inner_parent)
        .start_event("inner_s", parent="inner")
        .parallel_gateway("split", parent="inner")
        .parallel_gateway("join", parent="inner")
        .task("a", parent="inner")
        .task("b", parent="inner")
        .end_event("inner_e", parent="inner")
        .boundary_event("late", "inner", timer=TimerDefinition(kind="duration", text="PT1M"))
    )
    pairs = [
        ("inner_s", "split"),
        ("split", "a"),
        ("split", "b"),
        ("a", "join"),
        ("b", "join"),
        ("join", "inner_e"),
        ("late", "outer_e" if nested else "e"),
        ("outer_s", "inner" if nested else "outer_e"),
    ]
    for index in flow_order:
        builder.flow(*pairs[index])
    builder.chain("s", "outer", "e")
    if not nested:
        builder.chain("outer", "inner")  # the process level: outer, then inner
    else:
        builder.chain("inner", "outer_e")
    model = builder.build()
    assert model.node("late").parent == inner_parent
    assert parse_bpmn(write_bpmn([model])) == [model]
