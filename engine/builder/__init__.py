"""Build a `ProcessModel` in Python; the result equals the model parsed from the same BPMN.

    model = (
        ProcessBuilder("invoice", "Invoice approval")
        .start_event("Start")
        .user_task("Approve", assignee="${approver}")
        .exclusive_gateway("Approved", default="Flow_Rejected")
        .service_task("Pay", handler="payInvoice")
        .end_event("Paid")
        .end_event("Rejected")
        .chain("Start", "Approve", "Approved")
        .flow("Approved", "Pay", condition="${approved}")
        .flow("Approved", "Rejected", id="Flow_Rejected")
        .chain("Pay", "Paid")
        .build()
    )

Incoming and outgoing flows are listed in the order the flows were added, as the parser lists them
in document order. Nodes inside an embedded subprocess name it as `parent`; a boundary event takes
the parent of the activity it is attached to:

    (
        ProcessBuilder("claims")
        .start_event("Start")
        .sub_process("Assess")
        .start_event("AssessStart", parent="Assess")
        .user_task("Review", parent="Assess", retry_cycle="R3/PT5M")
        .end_event("AssessEnd", parent="Assess")
        .chain("AssessStart", "Review", "AssessEnd")
        .boundary_event("TooLate", "Assess", timer=TimerDefinition(kind="duration", text="P2D"))
        ...
    )

The families of nodes are one module each (events, tasks, gateways, scopes, on the shared checks
of `base.py`); `ProcessBuilder` (process.py) joins them with flows, listeners and mappings.
"""

from engine.builder.process import ProcessBuilder

__all__ = ["ProcessBuilder"]
