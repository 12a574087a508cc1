"""Camunda 7's JSON shapes: every field its DTOs carry, null where Interlock has no such thing,
dates as `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, and BPMN elements named by Camunda's activity types."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from app.params import parse_time
from engine.model import (
    MULTI_INSTANCE_BODY,
    BoundaryEvent,
    EndEvent,
    EventBasedGateway,
    ExclusiveGateway,
    InclusiveGateway,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    Node,
    NoneTask,
    ParallelGateway,
    ProcessModel,
    ReceiveTask,
    SendTask,
    ServiceTask,
    StartEvent,
    SubProcess,
    Transaction,
    UserTask,
)
from engine.model.job_definitions import DEFINED_JOBS, job_definition_id
from engine.queries.camunda import activities as activity_reads
from engine.queries.camunda import deployments as deployment_reads
from engine.queries.camunda import external_tasks as external_task_reads
from engine.queries.camunda import instances as instance_reads
from engine.queries.camunda import jobs as job_reads
from engine.queries.camunda import tasks as task_reads
from engine.queries.definitions import DefinitionRow
from engine.queries.instances import InstanceInfo
from engine.queries.work import IncidentInfo
from engine.states import InstanceState, VisitState

Json = dict[str, Any]


def format_date(value: datetime | None) -> str | None:
    """Camunda's default date format, in UTC: 2026-01-31T10:00:00.000+0000."""
    if value is None:
        return None
    utc = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}+0000"


parse_date = parse_time
"""Camunda's Date values read as the times of query parameters are (see app/params.py)."""


def duration_ms(start: datetime | None, end: datetime | None) -> int | None:
    if start is None or end is None:
        return None
    return int((end - start).total_seconds() * 1000)


def link(base: str, path: str) -> Json:
    return {"method": "GET", "href": f"{base}{path}", "rel": "self"}


def text(value: UUID | str | None) -> str | None:
    return None if value is None else str(value)


# -- activity types -------------------------------------------------------------------------------


def _trigger(node: StartEvent | BoundaryEvent | IntermediateCatchEvent) -> str | None:
    """What the event waits for: a timer, a message, a signal or a condition; None for none of
    them."""
    if node.timer is not None:
        return "timer"
    if node.message_name is not None:
        return "message"
    if node.signal_name is not None:
        return "signal"
    if node.conditional is not None:
        return "conditional"
    return None


# Each event's type by its trigger (None: no timer, message, signal or condition).
_START_TYPES: dict[str | None, str] = {
    "timer": "startTimerEvent",
    "message": "messageStartEvent",
    "signal": "signalStartEvent",
    "conditional": "conditionalStartEvent",
    None: "startEvent",
}
_BOUNDARY_TYPES: dict[str | None, str] = {
    "timer": "boundaryTimer",
    "message": "boundaryMessage",
    "signal": "boundarySignal",
    "conditional": "boundaryConditional",
    None: "boundaryError",
}
_CATCH_TYPES: dict[str | None, str] = {
    "timer": "intermediateTimer",
    "message": "intermediateMessageCatch",
    "signal": "intermediateSignalCatch",
    "conditional": "intermediateConditional",
    None: "intermediateSignalCatch",
}


# End and intermediate throw events by what they throw (None: nothing). Camunda creates no
# activity for a link throw event (its token jumps to the catch event); this engine records the
# visit, under a name in the style of the others.
_END_TYPES: dict[str | None, str] = {
    "terminate": "terminateEndEvent",
    "error": "errorEndEvent",
    "cancel": "cancelEndEvent",
    "escalation": "escalationEndEvent",
    "signal": "signalEndEvent",
    "message": "messageEndEvent",
    None: "noneEndEvent",
}
_THROW_TYPES: dict[str | None, str] = {
    "escalation": "intermediateEscalationThrowEvent",
    "signal": "intermediateSignalThrow",
    "message": "intermediateMessageThrowEvent",
    "link": "intermediateLinkThrowEvent",
    None: "intermediateNoneThrowEvent",
}


# Compensation events as Camunda names them (a compensation handler keeps its own type).
_COMPENSATION_TYPES: dict[type[Node], str] = {
    StartEvent: "compensationStartEvent",
    BoundaryEvent: "compensationBoundaryCatch",
    IntermediateThrowEvent: "intermediateCompensationThrowEvent",
    EndEvent: "compensationEndEvent",
}


def _is_compensation(node: Node) -> bool:
    if isinstance(node, StartEvent | BoundaryEvent):
        return node.is_compensation
    return isinstance(node, IntermediateThrowEvent | EndEvent) and node.compensation is not None


def activity_type(node: Node) -> str:
    """The name Camunda's history and activity instances give this kind of element."""
    if _is_compensation(node):
        return _COMPENSATION_TYPES[type(node)]
    if isinstance(node, StartEvent):
        trigger = _trigger(node)
        if trigger is None and node.is_escalation:
            return "escalationStartEvent"
        return "errorStartEvent" if trigger is None and node.is_error else _START_TYPES[trigger]
    if isinstance(node, EndEvent):
        return _END_TYPES[node.throws[0] if node.throws else None]
    if isinstance(node, BoundaryEvent) and node.is_cancel:
        return "cancelBoundaryCatch"
    if isinstance(node, BoundaryEvent):
        return "boundaryEscalation" if node.is_escalation else _BOUNDARY_TYPES[_trigger(node)]
    if isinstance(node, IntermediateCatchEvent):
        return "intermediateLinkCatch" if node.link_name else _CATCH_TYPES[_trigger(node)]
    if isinstance(node, IntermediateThrowEvent):
        return _THROW_TYPES[node.throws[0] if node.throws else None]
    if isinstance(node, NoneTask):
        return "manualTask" if node.manual else "task"
    simple: list[tuple[type[Node], str]] = [
        (SendTask, "sendTask"),
        (ServiceTask, "serviceTask"),
        (UserTask, "userTask"),
        (ReceiveTask, "receiveTask"),
        (ExclusiveGateway, "exclusiveGateway"),
        (ParallelGateway, "parallelGateway"),
        (InclusiveGateway, "inclusiveGateway"),
        (EventBasedGateway, "eventBasedGateway"),
        (Transaction, "transaction"),
        (SubProcess, "subProcess"),
    ]
    for kind, name in simple:
        if isinstance(node, kind):
            return name
    return node.kind.value


# Which stored node kinds each Camunda activity type can come from (for filtering in SQL).
NODE_KINDS_OF_TYPE: dict[str, str] = {
    "startEvent": "startEvent",
    "startTimerEvent": "startEvent",
    "messageStartEvent": "startEvent",
    "signalStartEvent": "startEvent",
    "conditionalStartEvent": "startEvent",
    "errorStartEvent": "startEvent",
    "escalationStartEvent": "startEvent",
    "noneEndEvent": "endEvent",
    "terminateEndEvent": "endEvent",
    "errorEndEvent": "endEvent",
    "messageEndEvent": "endEvent",
    "escalationEndEvent": "endEvent",
    "signalEndEvent": "endEvent",
    "compensationEndEvent": "endEvent",
    "cancelEndEvent": "endEvent",
    "cancelBoundaryCatch": "boundaryEvent",
    "compensationStartEvent": "startEvent",
    "compensationBoundaryCatch": "boundaryEvent",
    "intermediateCompensationThrowEvent": "intermediateThrowEvent",
    "boundaryTimer": "boundaryEvent",
    "boundaryMessage": "boundaryEvent",
    "boundarySignal": "boundaryEvent",
    "boundaryError": "boundaryEvent",
    "boundaryConditional": "boundaryEvent",
    "boundaryEscalation": "boundaryEvent",
    "intermediateTimer": "intermediateCatchEvent",
    "intermediateMessageCatch": "intermediateCatchEvent",
    "intermediateSignalCatch": "intermediateCatchEvent",
    "intermediateConditional": "intermediateCatchEvent",
    "intermediateLinkCatch": "intermediateCatchEvent",
    "intermediateSignalThrow": "intermediateThrowEvent",
    "intermediateEscalationThrowEvent": "intermediateThrowEvent",
    "intermediateLinkThrowEvent": "intermediateThrowEvent",
    "intermediateNoneThrowEvent": "intermediateThrowEvent",
    "intermediateMessageThrowEvent": "intermediateThrowEvent",
    "task": "task",
    "manualTask": "manualTask",
    "serviceTask": "serviceTask",
    "scriptTask": "scriptTask",
    "sendTask": "sendTask",
    "userTask": "userTask",
    "receiveTask": "receiveTask",
    "exclusiveGateway": "exclusiveGateway",
    "parallelGateway": "parallelGateway",
    "inclusiveGateway": "inclusiveGateway",
    "eventBasedGateway": "eventBasedGateway",
    "subProcess": "subProcess",
    "transaction": "transaction",
    "callActivity": "callActivity",
    MULTI_INSTANCE_BODY: MULTI_INSTANCE_BODY,
}


def body_id(node_id: str) -> str:
    """Camunda's activity id of the multi-instance body of the activity `node_id`."""
    return f"{node_id}#{MULTI_INSTANCE_BODY}"


def node_activity_type(model: ProcessModel | None, node_id: str, stored_kind: str) -> str:
    if stored_kind == MULTI_INSTANCE_BODY:
        return MULTI_INSTANCE_BODY
    if model is not None and model.has_node(node_id):
        return activity_type(model.node(node_id))
    return stored_kind


# -- definitions and deployments ------------------------------------------------------------------


def process_definition(row: DefinitionRow) -> Json:
    return {
        "id": row.id,
        "key": row.key,
        "category": None,
        "description": None,
        "name": row.name,
        "version": row.version,
        "resource": row.resource_name,
        "deploymentId": str(row.deployment_id),
        "diagram": None,
        "suspended": row.suspended,
        "tenantId": row.tenant_id,
        "versionTag": row.version_tag,
        "historyTimeToLive": None,
        "startableInTasklist": True,
    }


def deployment(
    base: str,
    row: deployment_reads.DeploymentRow,
    deployed: list[DefinitionRow] | None,
    decisions: dict[str, Json] | None = None,
) -> Json:
    return {
        "links": [link(base, f"/deployment/{row.id}")],
        "id": str(row.id),
        "name": row.name,
        "source": row.source,
        "deploymentTime": format_date(row.created_at),
        "tenantId": row.tenant_id,
        "deployedProcessDefinitions": (
            {d.id: process_definition(d) for d in deployed} if deployed else None
        ),
        "deployedCaseDefinitions": None,
        "deployedDecisionDefinitions": decisions or None,
        "deployedDecisionRequirementsDefinitions": None,
    }


def deployment_of(row: deployment_reads.DeploymentRow) -> Json:
    """Camunda's DeploymentDto, as its list and GET /deployment/{id} answer it."""
    return {
        "links": [],
        "id": str(row.id),
        "name": row.name,
        "source": row.source,
        "deploymentTime": format_date(row.created_at),
        "tenantId": row.tenant_id,
    }


def deployment_resource(row: deployment_reads.ResourceRow) -> Json:
    return {"id": str(row.id), "name": row.name, "deploymentId": str(row.deployment_id)}


# -- process instances ----------------------------------------------------------------------------


def process_instance(
    base: str,
    instance_id: UUID | str,
    definition_id: str,
    definition_key: str,
    business_key: str | None,
    state: str,
    tenant_id: str | None = None,
) -> Json:
    return {
        "links": [link(base, f"/process-instance/{instance_id}")],
        "id": str(instance_id),
        "definitionId": definition_id,
        "definitionKey": definition_key,
        "businessKey": business_key,
        "caseInstanceId": None,
        "ended": state in (InstanceState.COMPLETED, InstanceState.TERMINATED),
        "suspended": state == InstanceState.SUSPENDED,
        "tenantId": tenant_id,
    }


def instance_from_info(base: str, info: InstanceInfo) -> Json:
    return process_instance(
        base,
        info.id,
        info.definition_id,
        info.definition_key,
        info.business_key,
        info.state,
        info.tenant_id,
    )


def instance_from_row(base: str, row: instance_reads.InstanceRow) -> Json:
    return process_instance(
        base,
        row.id,
        row.definition_id,
        row.definition_key,
        row.business_key,
        row.state,
        row.tenant_id,
    )


HISTORIC_STATES = {
    "Created": "ACTIVE",
    "Active": "ACTIVE",
    "Terminating": "ACTIVE",
    "Suspended": "SUSPENDED",
    "Completed": "COMPLETED",
    "Terminated": "EXTERNALLY_TERMINATED",
}


def historic_state(state: str, *, internally_terminated: bool) -> str:
    """Camunda's state of a historic process instance: a Terminated one that its caller's own
    flow ended is INTERNALLY_TERMINATED, one cancelled by a request EXTERNALLY_TERMINATED."""
    if state == InstanceState.TERMINATED and internally_terminated:
        return "INTERNALLY_TERMINATED"
    return HISTORIC_STATES.get(state, "ACTIVE")


def historic_process_instance(row: instance_reads.HistoricInstanceRow) -> Json:
    return {
        "id": str(row.id),
        "rootProcessInstanceId": str(row.root_instance_id or row.id),
        "superProcessInstanceId": text(row.super_instance_id),
        "superCaseInstanceId": None,
        "caseInstanceId": None,
        "processDefinitionName": row.definition_name,
        "processDefinitionKey": row.definition_key,
        "processDefinitionVersion": row.definition_version,
        "processDefinitionId": row.definition_id,
        "businessKey": row.business_key,
        "startTime": format_date(row.started_at),
        "endTime": format_date(row.ended_at),
        "removalTime": None,
        "durationInMillis": duration_ms(row.started_at, row.ended_at),
        "startUserId": None,
        "startActivityId": row.start_activity_id,
        "deleteReason": None,
        "tenantId": row.tenant_id,
        "state": historic_state(row.state, internally_terminated=row.internally_terminated),
        "restartedProcessInstanceId": None,
    }


def complete_scope(activity_type: str, state: str) -> bool:
    """Camunda's `completeScope` of a historic activity instance: an end event that completed."""
    return activity_type.endswith("EndEvent") and state == VisitState.COMPLETED


def historic_activity_instance(
    row: activity_reads.ActivityRow, model: ProcessModel | None, parent_id: str
) -> Json:
    kind = node_activity_type(model, row.node_id, row.node_type)
    return {
        "id": str(row.id),
        "parentActivityInstanceId": parent_id,
        "activityId": body_id(row.node_id) if kind == MULTI_INSTANCE_BODY else row.node_id,
        "activityName": row.node_name,
        "activityType": kind,
        "processDefinitionKey": row.definition_key,
        "processDefinitionId": row.definition_id,
        "processInstanceId": str(row.instance_id),
        "executionId": str(row.token_id),
        "taskId": text(row.task_id),
        "assignee": row.assignee,
        "calledProcessInstanceId": text(row.called_instance_id),
        "calledCaseInstanceId": None,
        "startTime": format_date(row.started_at),
        "endTime": format_date(row.ended_at),
        "durationInMillis": duration_ms(row.started_at, row.ended_at),
        "canceled": row.state == VisitState.TERMINATED,
        "completeScope": complete_scope(kind, row.state),
        "tenantId": row.tenant_id,
        "removalTime": None,
        "rootProcessInstanceId": str(row.root_instance_id or row.instance_id),
    }


# -- tasks ----------------------------------------------------------------------------------------


def task(row: task_reads.TaskRow, form_key: str | None) -> Json:
    return {
        "id": str(row.id),
        "name": row.name,
        "assignee": row.assignee,
        "owner": row.owner,
        "created": format_date(row.created_at),
        "lastUpdated": None,
        "due": format_date(row.due_at),
        "followUp": format_date(row.follow_up_at),
        "delegationState": row.delegation_state,
        "description": row.description,
        "executionId": text(row.token_id),
        "parentTaskId": text(row.parent_task_id),
        "priority": row.priority,
        "processDefinitionId": row.definition_id,
        "processInstanceId": text(row.instance_id),
        "caseExecutionId": None,
        "caseDefinitionId": None,
        "caseInstanceId": None,
        "taskDefinitionKey": row.node_id or None,  # none for a standalone task
        "suspended": row.instance_state == InstanceState.SUSPENDED,
        "formKey": form_key,
        "camundaFormRef": None,
        "tenantId": row.tenant_id,
        "taskState": None,
        "attachment": row.has_attachment,
        "comment": row.has_comment,
    }


# -- external tasks -------------------------------------------------------------------------------


def external_task(row: external_task_reads.ExternalTaskRow) -> Json:
    return {
        "activityId": row.node_id,
        "activityInstanceId": text(row.activity_instance_id),
        "errorMessage": row.error_message,
        "executionId": str(row.token_id),
        "id": str(row.id),
        "lockExpirationTime": format_date(row.lock_expires_at) if row.worker_id else None,
        "createTime": format_date(row.created_at),
        "processDefinitionId": row.definition_id,
        "processDefinitionKey": row.definition_key,
        "processDefinitionVersionTag": row.version_tag,
        "processInstanceId": str(row.instance_id),
        "retries": row.retries,
        "suspended": row.instance_state == InstanceState.SUSPENDED,
        "workerId": row.worker_id,
        "topicName": row.topic,
        "tenantId": row.tenant_id,
        "priority": row.priority,
        "businessKey": row.business_key,
    }


def locked_external_task(
    task: dict[str, Any],
    variables: dict[str, Json],
    details: external_task_reads.LockedTaskDetails | None,
) -> Json:
    """One task of a fetchAndLock answer, from the engine's fetch result."""
    lock = task["lock_expires_at"]
    return {
        "activityId": task["node_id"],
        "activityInstanceId": text(details.activity_instance_id) if details else None,
        "errorMessage": task["error_message"],
        "errorDetails": task["error_details"],
        "executionId": text(details.token_id) if details else None,
        "id": task["id"],
        "lockExpirationTime": format_date(datetime.fromisoformat(lock)) if lock else None,
        "createTime": format_date(datetime.fromisoformat(task["created_at"])),
        "processDefinitionId": task["definition_id"],
        "processDefinitionKey": task["definition_key"],
        "processDefinitionVersionTag": details.version_tag if details else None,
        "processInstanceId": task["instance_id"],
        "retries": task["retries"],
        "workerId": task["worker_id"],
        "topicName": task["topic"],
        "tenantId": task.get("tenant_id"),
        "variables": variables,
        "priority": task["priority"],
        "businessKey": task["business_key"],
        "extensionProperties": {},
    }


# -- incidents and jobs ---------------------------------------------------------------------------


def incident(row: IncidentInfo) -> Json:
    # A failed job's or external task's id; a custom incident's own configuration.
    configuration = text(row.job_id or row.external_task_id) or row.configuration
    return {
        "id": str(row.id),
        "processDefinitionId": row.definition_id,
        "processInstanceId": str(row.instance_id),
        "executionId": text(row.token_id or row.instance_id),
        "incidentTimestamp": format_date(row.created_at),
        "incidentType": row.type,
        "activityId": row.node_id,
        "failedActivityId": row.node_id,
        "causeIncidentId": str(row.id),
        "rootCauseIncidentId": str(row.id),
        "configuration": configuration,
        "tenantId": row.tenant_id,
        "incidentMessage": row.message,
        "jobDefinitionId": None,
        "annotation": row.annotation,
    }


def job(row: job_reads.JobRow) -> Json:
    return {
        "id": str(row.id),
        "jobDefinitionId": job_definition_id(row.definition_id, row.node_id, row.kind)
        if row.definition_id and row.kind in DEFINED_JOBS
        else None,
        "processInstanceId": text(row.instance_id),
        "processDefinitionId": row.definition_id,
        "processDefinitionKey": row.definition_key,
        # A process-level event subprocess's timer: the instance's own execution, as Camunda's.
        "executionId": text(row.token_id or row.instance_id),
        "exceptionMessage": row.error_message,
        "failedActivityId": row.node_id if row.error_message else None,
        "retries": row.retries,
        "dueDate": format_date(row.due_at),
        "suspended": row.suspended or row.instance_state == InstanceState.SUSPENDED,
        "priority": row.priority,
        "tenantId": row.tenant_id,
        "createTime": format_date(row.created_at),
        "batchId": None,
    }
