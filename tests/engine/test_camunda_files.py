"""Process files as Camunda 7 users bring them deploy and run to the end: flows without ids,
prefixed references, the legacy activiti namespace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.api import Engine, InstanceHandle
from engine.bpmn import parse_bpmn
from engine.core.handlers import TaskContext
from engine.errors import BpmnError
from engine.queries.console import join_states
from engine.states import InstanceState, JobOutcome

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def test_flows_without_ids_run_to_the_end_under_the_same_ids(engine: Engine) -> None:
    handed_over: list[str] = []

    def handover(ctx: TaskContext) -> dict[str, Any]:
        handed_over.append(ctx.node_id)
        return {"carrier": "post"}

    engine.register_handler("handover", handover)
    path = DATA / "parcel_dispatch.bpmn"
    [deployed] = engine.deploy(path).definitions
    instance = engine.start_latest("parcel_dispatch")
    tasks = {task.node_id: task for task in instance.user_tasks()}
    assert sorted(tasks) == ["Task_Label", "Task_Pack"]
    engine.complete_task(tasks["Task_Pack"].id)
    with engine.connection() as conn:
        [join] = join_states(conn, instance.id)
    assert (join.gateway_id, join.flows) == (
        "Gateway_Join",
        ["sequenceFlow__Task_Pack__Gateway_Join"],
    )
    # A cold cache parses the stored file again (as after a restart): the join still knows
    # which flow its first token came by.
    engine.definition_cache.clear()
    engine.complete_task(tasks["Task_Label"].id)
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables() == {"carrier": "post"}
    assert handed_over == ["Task_Handover"]
    visited = sorted({step.node_id for track in instance.history() for step in track.steps})
    assert visited == [
        "End_Shipped",
        "Gateway_Join",
        "Gateway_Split",
        "Start_Order",
        "Task_Handover",
        "Task_Label",
        "Task_Pack",
    ]
    stored = engine.model(deployed["id"], "parcel_dispatch")
    [parsed] = parse_bpmn(path.read_bytes(), path.name)
    assert [f.id for f in stored.flows] == [f.id for f in parsed.flows]
    assert "sequenceFlow__Task_Label__Gateway_Join" in [f.id for f in stored.flows]


def _inbox(engine: Engine) -> None:
    def check_invoice(ctx: TaskContext) -> dict[str, Any]:
        if ctx.variables["amount"] < 0:
            raise BpmnError("INVOICE_REJECTED", "a negative amount")
        return {"checked": True}

    engine.register_handler("checkInvoice", check_invoice)
    engine.deploy(DATA / "invoice_inbox.bpmn")


def _path(instance: InstanceHandle) -> list[str]:
    return [step.node_id for track in instance.history() for step in track.steps]


def test_prefixed_references_correlate_messages_and_catch_errors(engine: Engine) -> None:
    _inbox(engine)
    paid = engine.start_latest("invoice_inbox", {"amount": 300}, business_key="INV-1")
    assert engine.correlate_message("invoiceApproved", business_key="INV-1").deliveries
    assert engine.correlate_message("invoicePaid", business_key="INV-1").deliveries
    assert paid.state is InstanceState.COMPLETED
    assert _path(paid) == [
        "Start_Received",
        "Task_Check",
        "Task_Approval",
        "Gateway_Amount",
        "Event_Paid",
        "End_Paid",
    ]
    audited = engine.start_latest("invoice_inbox", {"amount": 5000}, business_key="INV-2")
    engine.correlate_message("invoiceApproved", business_key="INV-2")
    assert audited.state is InstanceState.COMPLETED
    assert _path(audited)[-1] == "End_Audit"
    rejected = engine.start_latest("invoice_inbox", {"amount": -1})
    assert rejected.state is InstanceState.COMPLETED
    assert _path(rejected) == ["Start_Received", "Task_Check", "Event_Rejected", "End_Rejected"]
    recalled = engine.start_latest("invoice_inbox", {"amount": 10})
    engine.signal("invoiceRecalled")
    assert recalled.state is InstanceState.COMPLETED
    assert _path(recalled)[-2:] == ["Event_Recalled", "End_Recalled"]


def test_a_file_in_the_legacy_activiti_namespace_runs_its_camunda_attributes(
    engine: Engine,
) -> None:
    engine.register_handler("bookExpense", lambda ctx: {"booked": ctx.variables["amount"]})
    engine.deploy(DATA / "expense_claim_legacy.bpmn")
    instance = engine.start_latest("expense_claim", {"amount": 42, "claimant": "mary"})
    [task] = engine.fetch_and_lock("w1", {"expense-check": 60_000})
    assert (task["topic"], task["priority"], task["instance_id"]) == (
        "expense-check",
        5,
        str(instance.id),
    )
    engine.complete_external_task(task["id"], "w1", {"receipts": "ok"})
    # camunda:asyncBefore: the booking waits for a job.
    [job] = engine.jobs(instance_id=instance.id)
    assert job.node_id == "ServiceTask_Book"
    assert engine.execute_job(job.id) is JobOutcome.EXECUTED
    [confirm] = instance.user_tasks()
    assert (confirm.node_id, confirm.assignee) == ("UserTask_Confirm", "mary")
    assert instance.variables()["booking"] == {"booked": 42}
    engine.complete_task(confirm.id)
    assert instance.state is InstanceState.COMPLETED


def test_descriptive_extensions_are_kept_and_change_nothing(engine: Engine) -> None:
    [deployed] = engine.deploy(DATA / "supplier_onboarding.bpmn").definitions
    engine.definition_cache.clear()
    model = engine.model(deployed["id"], "supplier_onboarding")
    assert model.properties == (("department", "purchasing"), ("sla", "P5D"))
    assert model.node("Task_Review").properties == (
        ("checklist", "register"),
        ("checklist", "bank"),
        ("icon", ""),
    )
    instance = engine.start_latest("supplier_onboarding", {"reviewDue": "2030-01-31T12:00:00Z"})
    [review] = instance.user_tasks()
    assert (review.node_id, review.candidate_users, review.candidate_groups) == (
        "Task_Review",
        ["anna", "ben"],
        ["purchasing"],
    )
    assert review.due_at is not None and review.due_at.isoformat() == "2030-01-31T12:00:00+00:00"
    engine.complete_task(review.id)
    assert instance.state is InstanceState.COMPLETED
