"""BPMN files as Camunda Modeler writes them, for the compatibility tests."""

from __future__ import annotations

HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Definitions_{key}" '
    'targetNamespace="http://bpmn.io/schema/bpmn">\n'
)


def _process(key: str, name: str, body: str) -> str:
    return (
        HEADER.format(key=key)
        + f'  <bpmn:process id="{key}" name="{name}" isExecutable="true">\n{body}'
        + "  </bpmn:process>\n</bpmn:definitions>\n"
    )


def _flow(flow_id: str, source: str, target: str) -> str:
    return f'    <bpmn:sequenceFlow id="{flow_id}" sourceRef="{source}" targetRef="{target}" />\n'


def external_then_review(key: str = "charge", topic: str = "charge-card") -> str:
    """start -> external task on `topic` -> user task "Review" -> end."""
    return _process(
        key,
        "Charge and review",
        '    <bpmn:startEvent id="Start" name="Order placed" />\n'
        f'    <bpmn:serviceTask id="Charge" name="Charge card" camunda:type="external" '
        f'camunda:topic="{topic}" />\n'
        '    <bpmn:userTask id="Review" name="Review payment" camunda:formKey="app:review" />\n'
        '    <bpmn:endEvent id="End" name="Done" />\n'
        + _flow("f1", "Start", "Charge")
        + _flow("f2", "Charge", "Review")
        + _flow("f3", "Review", "End"),
    )


def external_only(key: str, topic: str) -> str:
    """start -> external task on `topic` -> end."""
    return _process(
        key,
        "External work",
        '    <bpmn:startEvent id="Start" />\n'
        f'    <bpmn:serviceTask id="Work" name="Work" camunda:type="external" '
        f'camunda:topic="{topic}" />\n'
        '    <bpmn:endEvent id="End" />\n'
        + _flow("f1", "Start", "Work")
        + _flow("f2", "Work", "End"),
    )


def external_with_error_boundary(key: str = "credit-check", topic: str = "check-credit") -> str:
    """start -> external task; its error boundary (code REJECTED) -> user task "Handle rejection";
    the normal path -> end."""
    return _process(
        key,
        "Credit check",
        '    <bpmn:startEvent id="Start" />\n'
        f'    <bpmn:serviceTask id="Check" name="Check credit" camunda:type="external" '
        f'camunda:topic="{topic}" />\n'
        '    <bpmn:boundaryEvent id="Rejected" name="Rejected" attachedToRef="Check">\n'
        '      <bpmn:errorEventDefinition errorRef="Error_Rejected" />\n'
        "    </bpmn:boundaryEvent>\n"
        '    <bpmn:userTask id="HandleRejection" name="Handle rejection" />\n'
        '    <bpmn:endEvent id="Approved" />\n'
        '    <bpmn:endEvent id="Closed" />\n'
        + _flow("f1", "Start", "Check")
        + _flow("f2", "Check", "Approved")
        + _flow("f3", "Rejected", "HandleRejection")
        + _flow("f4", "HandleRejection", "Closed"),
    ).replace(
        "  </bpmn:process>",
        '  </bpmn:process>\n  <bpmn:error id="Error_Rejected" name="Rejected" '
        'errorCode="REJECTED" />',
    )


def approval(key: str = "approval") -> str:
    """start -> user task "Approve" -> message catch "PaymentReceived" -> end."""
    return _process(
        key,
        "Approval",
        '    <bpmn:startEvent id="Start" />\n'
        '    <bpmn:userTask id="Approve" name="Approve order" />\n'
        '    <bpmn:intermediateCatchEvent id="WaitPayment" name="Payment received">\n'
        '      <bpmn:messageEventDefinition messageRef="Message_Payment" />\n'
        "    </bpmn:intermediateCatchEvent>\n"
        '    <bpmn:endEvent id="End" />\n'
        + _flow("f1", "Start", "Approve")
        + _flow("f2", "Approve", "WaitPayment")
        + _flow("f3", "WaitPayment", "End"),
    ).replace(
        "  </bpmn:process>",
        '  </bpmn:process>\n  <bpmn:message id="Message_Payment" name="PaymentReceived" />',
    )


def message_start(key: str = "inbound", message: str = "OrderReceived") -> str:
    """message start event -> user task -> end."""
    return _process(
        key,
        "Inbound order",
        '    <bpmn:startEvent id="Received">\n'
        '      <bpmn:messageEventDefinition messageRef="Message_Start" />\n'
        "    </bpmn:startEvent>\n"
        '    <bpmn:userTask id="Handle" name="Handle order" />\n'
        '    <bpmn:endEvent id="End" />\n'
        + _flow("f1", "Received", "Handle")
        + _flow("f2", "Handle", "End"),
    ).replace(
        "  </bpmn:process>",
        f'  </bpmn:process>\n  <bpmn:message id="Message_Start" name="{message}" />',
    )


def timer_and_subprocess(key: str = "nested") -> str:
    """start -> exclusive gateway -> embedded subprocess (start -> user task "Inner" -> end) with
    a timer boundary; parallel split/join around a task; end."""
    return _process(
        key,
        "Nested",
        '    <bpmn:startEvent id="Start" />\n'
        '    <bpmn:exclusiveGateway id="Choose" default="f2" />\n'
        '    <bpmn:subProcess id="Sub" name="Sub work">\n'
        '      <bpmn:startEvent id="SubStart" />\n'
        '      <bpmn:userTask id="Inner" name="Inner task" />\n'
        '      <bpmn:endEvent id="SubEnd" />\n'
        + _flow("s1", "SubStart", "Inner").replace("    <", "      <")
        + _flow("s2", "Inner", "SubEnd").replace("    <", "      <")
        + "    </bpmn:subProcess>\n"
        '    <bpmn:boundaryEvent id="Late" attachedToRef="Sub">\n'
        "      <bpmn:timerEventDefinition>\n"
        "        <bpmn:timeDuration>PT1H</bpmn:timeDuration>\n"
        "      </bpmn:timerEventDefinition>\n"
        "    </bpmn:boundaryEvent>\n"
        '    <bpmn:endEvent id="End" />\n'
        '    <bpmn:endEvent id="LateEnd" />\n'
        + _flow("f1", "Start", "Choose")
        + _flow("f2", "Choose", "Sub")
        + _flow("f3", "Sub", "End")
        + _flow("f4", "Late", "LateEnd"),
    )


def candidate_review(key: str, users: str | None = None, groups: str | None = None) -> str:
    """start -> user task "Review" with camunda:candidateUsers `users` and candidateGroups
    `groups` (lists or expressions; None: not set) -> end."""
    attributes = "".join(
        f' camunda:{name}="{value}"'
        for name, value in (("candidateUsers", users), ("candidateGroups", groups))
        if value is not None
    )
    return _process(
        key,
        "Candidate review",
        '    <bpmn:startEvent id="Start" />\n'
        f'    <bpmn:userTask id="Review" name="Review"{attributes} />\n'
        '    <bpmn:endEvent id="End" />\n'
        + _flow("f1", "Start", "Review")
        + _flow("f2", "Review", "End"),
    )


# start -> user task "Review" -> end; on the task an error boundary event (code REJECTED) leads to
# the user task "HandleRejection", and a non-interrupting escalation boundary event (code HELP) to
# the user task "Help".
REVIEW_WITH_BOUNDARIES = (
    HEADER.format(key="review")
    + """  <bpmn:process id="review" isExecutable="true">
    <bpmn:startEvent id="Start" />
    <bpmn:userTask id="Review" name="Review order" />
    <bpmn:boundaryEvent id="Rejected" attachedToRef="Review">
      <bpmn:errorEventDefinition errorRef="Error_Rejected" />
    </bpmn:boundaryEvent>
    <bpmn:boundaryEvent id="AskHelp" attachedToRef="Review" cancelActivity="false">
      <bpmn:escalationEventDefinition escalationRef="Escalation_Help" />
    </bpmn:boundaryEvent>
    <bpmn:userTask id="HandleRejection" name="Handle rejection" />
    <bpmn:userTask id="Help" name="Help the reviewer" />
    <bpmn:endEvent id="Done" />
    <bpmn:endEvent id="Closed" />
    <bpmn:endEvent id="Helped" />
    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Review" />
    <bpmn:sequenceFlow id="f2" sourceRef="Review" targetRef="Done" />
    <bpmn:sequenceFlow id="f3" sourceRef="Rejected" targetRef="HandleRejection" />
    <bpmn:sequenceFlow id="f4" sourceRef="HandleRejection" targetRef="Closed" />
    <bpmn:sequenceFlow id="f5" sourceRef="AskHelp" targetRef="Help" />
    <bpmn:sequenceFlow id="f6" sourceRef="Help" targetRef="Helped" />
  </bpmn:process>
  <bpmn:error id="Error_Rejected" errorCode="REJECTED" />
  <bpmn:escalation id="Escalation_Help" escalationCode="HELP" />
</bpmn:definitions>
"""
)
