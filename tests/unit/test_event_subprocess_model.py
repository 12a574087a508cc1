"""Event subprocesses started by messages, timers and signals: the builder makes what Camunda
Modeler saves."""

from __future__ import annotations

from pathlib import Path

from engine.bpmn.parser import parse_bpmn
from engine.builder import ProcessBuilder
from engine.model import ProcessModel, TimerDefinition

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def order_watch() -> ProcessModel:
    """The builder twin of tests/data/bpmn/order_watch.bpmn."""
    return (
        ProcessBuilder("order_watch", "Order watch")
        .start_event("StartEvent_Order", "Order placed")
        .sub_process("Activity_Fulfil", "Fulfil order")
        .start_event("StartEvent_Fulfil", "Fulfilment started", parent="Activity_Fulfil")
        .user_task("Task_Pack", "Pack goods", parent="Activity_Fulfil")
        .end_event("EndEvent_Packed", "Packed", parent="Activity_Fulfil")
        .sub_process(
            "Activity_PackLate", "Packing late", parent="Activity_Fulfil", triggered_by_event=True
        )
        .start_event(
            "StartEvent_PackLate",
            "Packing takes too long",
            parent="Activity_PackLate",
            timer=TimerDefinition(kind="duration", text="${packTimeout}"),
        )
        .user_task("Task_Escalate", "Pack by hand", parent="Activity_PackLate")
        .end_event("EndEvent_Escalated", "Packed by hand", parent="Activity_PackLate")
        .user_task("Task_Ship", "Ship order")
        .end_event("EndEvent_Shipped", "Order shipped")
        .sub_process("Activity_AddressChanged", "Address changed", triggered_by_event=True)
        .start_event(
            "StartEvent_AddressChanged",
            "New address",
            parent="Activity_AddressChanged",
            message="AddressChanged",
            interrupting=False,
        )
        .user_task("Task_UpdateAddress", "Update address", parent="Activity_AddressChanged")
        .end_event("EndEvent_AddressUpdated", "Address updated", parent="Activity_AddressChanged")
        .sub_process("Activity_Cancelled", "Order cancelled", triggered_by_event=True)
        .start_event(
            "StartEvent_Cancelled",
            "Cancellation",
            parent="Activity_Cancelled",
            signal="OrdersCancelled",
        )
        .end_event("EndEvent_Cancelled", "Cancelled", parent="Activity_Cancelled")
        .flow("StartEvent_Fulfil", "Task_Pack", id="Flow_ToPack")
        .flow("Task_Pack", "EndEvent_Packed", id="Flow_ToPacked")
        .flow("StartEvent_PackLate", "Task_Escalate", id="Flow_ToEscalate")
        .flow("Task_Escalate", "EndEvent_Escalated", id="Flow_ToEscalated")
        .flow("StartEvent_Order", "Activity_Fulfil", id="Flow_ToFulfil")
        .flow("Activity_Fulfil", "Task_Ship", id="Flow_ToShip")
        .flow("Task_Ship", "EndEvent_Shipped", id="Flow_ToShipped")
        .flow("StartEvent_AddressChanged", "Task_UpdateAddress", id="Flow_ToUpdateAddress")
        .flow("Task_UpdateAddress", "EndEvent_AddressUpdated", id="Flow_ToAddressUpdated")
        .flow("StartEvent_Cancelled", "EndEvent_Cancelled", id="Flow_ToCancelled")
        .build()
    )


def test_the_builder_twin_equals_the_parsed_fixture() -> None:
    parsed = parse_bpmn((DATA / "order_watch.bpmn").read_bytes(), "order_watch.bpmn")
    assert parsed == [order_watch()]
