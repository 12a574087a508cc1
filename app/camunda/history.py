"""Camunda's history of variables, incidents and user tasks: `/history/variable-instance` (the
variables of running and ended instances, kept until the history cleanup deletes the instance),
`/history/incident` (open and ended incidents, with their end times and open, resolved and
deleted flags) and `/history/task` (open and ended user tasks, kept with their instance). The
job log and the external task log are app/camunda/history_logs.py's."""

from __future__ import annotations

from app.camunda.dto import Json, format_date, text
from app.camunda.http import Call, listing
from app.camunda.variable_instances import variable_instance_id
from app.camunda.variables import stored_to_dto, wants_serialized
from engine.queries.camunda import history as history_reads
from engine.states import TaskState

# Every variable row served is a live one: Interlock deletes a variable's row with it.
CREATED = "CREATED"


def _variable(row: history_reads.HistoricVariableRow, serialized: bool = False) -> Json:
    return {
        "id": variable_instance_id(row.instance_id, row.scope_key, row.name),
        "name": row.name,
        **stored_to_dto(row.type, row.value, serialized=serialized),
        "processDefinitionKey": row.definition_key,
        "processDefinitionId": row.definition_id,
        "processInstanceId": str(row.instance_id),
        "executionId": str(row.execution_id),
        "activityInstanceId": str(row.activity_instance_id),
        "caseDefinitionKey": None,
        "caseDefinitionId": None,
        "caseInstanceId": None,
        "caseExecutionId": None,
        "taskId": None,
        "tenantId": None,
        "errorMessage": None,
        "state": CREATED,
        "createTime": format_date(row.created_at),
        "removalTime": None,
        "rootProcessInstanceId": text(row.root_instance_id or row.instance_id),
    }


def _variables_shown(call: Call, rows: list[history_reads.HistoricVariableRow]) -> list[Json]:
    serialized = wants_serialized(call)
    return [_variable(row, serialized) for row in rows]


def _variable_query(call: Call, *, count: bool) -> list[history_reads.HistoricVariableRow] | int:
    return history_reads.historic_variables(
        call.engine,
        call.page(history_reads.HISTORIC_VARIABLE_SORT),
        instance_id=call.uuid("processInstanceId"),
        instance_ids=call.uuids("processInstanceIdIn"),
        execution_ids=call.uuids("executionIdIn"),
        activity_instance_ids=call.uuids("activityInstanceIdIn"),
        name=call.text("variableName"),
        name_like=call.text("variableNameLike"),
        names=call.csv("variableNameIn"),
        types=call.csv("variableTypeIn"),
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        count=count,
    )


def _incident(row: history_reads.HistoricIncidentRow) -> Json:
    configuration = text(row.job_id or row.external_task_id) or row.configuration
    return {
        "id": str(row.id),
        "processDefinitionKey": row.definition_key,
        "processDefinitionId": row.definition_id,
        "processInstanceId": str(row.instance_id),
        "executionId": text(row.token_id or row.instance_id),
        "rootProcessInstanceId": str(row.root_instance_id or row.instance_id),
        "createTime": format_date(row.created_at),
        "endTime": format_date(row.resolved_at),
        "removalTime": None,
        "incidentType": row.type,
        "activityId": row.node_id,
        "failedActivityId": row.node_id,
        "causeIncidentId": str(row.id),
        "rootCauseIncidentId": str(row.id),
        "configuration": configuration,
        "historyConfiguration": None,
        "incidentMessage": row.message,
        "tenantId": None,
        "jobDefinitionId": None,
        "open": row.open,
        "deleted": row.deleted,
        "resolved": row.resolved,
        "annotation": row.annotation,
    }


def _incident_query(call: Call, *, count: bool) -> list[history_reads.HistoricIncidentRow] | int:
    found = history_reads.IncidentFilter(
        incident_id=call.uuid("incidentId"),
        incident_type=call.text("incidentType"),
        message=call.text("incidentMessage"),
        message_like=call.text("incidentMessageLike"),
        definition_id=call.text("processDefinitionId"),
        definition_keys=(
            [key]
            if (key := call.text("processDefinitionKey"))
            else call.csv("processDefinitionKeyIn")
        ),
        instance_id=call.uuid("processInstanceId"),
        execution_id=call.uuid("executionId"),
        node_id=call.text("activityId") or call.text("failedActivityId"),
        configuration=call.uuid("configuration"),
        created_before=call.date("createTimeBefore"),
        created_after=call.date("createTimeAfter"),
        ended_before=call.date("endTimeBefore"),
        ended_after=call.date("endTimeAfter"),
        open=call.flag("open"),
        resolved=call.flag("resolved"),
        deleted=call.flag("deleted"),
    )
    return history_reads.historic_incidents(
        call.engine, call.page(history_reads.HISTORIC_INCIDENT_SORT), found, count=count
    )


# Camunda's deleteReason and taskState of an ended task: completed, or deleted with its
# activity (a cancellation, a boundary event, a modification).
_ENDED = {
    TaskState.COMPLETED: ("completed", "Completed"),
    TaskState.RETIRED: ("deleted", "Deleted"),
}


def _task(row: history_reads.HistoricTaskRow) -> Json:
    delete_reason, task_state = _ENDED.get(TaskState(row.state), (None, "Created"))
    duration = None
    if row.ended_at is not None:
        duration = int((row.ended_at - row.created_at).total_seconds() * 1000)
    return {
        "id": str(row.id),
        "processDefinitionKey": row.definition_key,
        "processDefinitionId": row.definition_id,
        "processInstanceId": text(row.instance_id),
        "executionId": text(row.token_id),
        "caseDefinitionKey": None,
        "caseDefinitionId": None,
        "caseInstanceId": None,
        "caseExecutionId": None,
        "activityInstanceId": text(row.token_id),
        "name": row.name,
        "description": row.description,
        "deleteReason": delete_reason,
        "owner": row.owner,
        "assignee": row.assignee,
        "startTime": format_date(row.created_at),
        "endTime": format_date(row.ended_at),
        "duration": duration,
        "taskDefinitionKey": row.node_id,
        "priority": row.priority,
        "due": format_date(row.due_at),
        "parentTaskId": text(row.parent_task_id),
        "followUp": format_date(row.follow_up_at),
        "tenantId": row.tenant_id,
        "removalTime": None,
        "rootProcessInstanceId": str(row.root_instance_id or row.instance_id),
        "taskState": task_state,
    }


def _task_query(call: Call, *, count: bool) -> list[history_reads.HistoricTaskRow] | int:
    return history_reads.historic_tasks(
        call.engine,
        call.page(history_reads.HISTORIC_TASK_SORT),
        task_id=call.uuid("taskId"),
        instance_id=call.uuid("processInstanceId"),
        execution_id=call.uuid("executionId"),
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        name=call.text("taskName"),
        name_like=call.text("taskNameLike"),
        assignee=call.text("taskAssignee"),
        assignee_like=call.text("taskAssigneeLike"),
        node_id=call.text("taskDefinitionKey"),
        finished=call.flag("finished"),
        unfinished=call.flag("unfinished"),
        started_before=call.date("startedBefore"),
        started_after=call.date("startedAfter"),
        finished_before=call.date("finishedBefore"),
        finished_after=call.date("finishedAfter"),
        tenant_ids=call.csv("tenantIdIn"),
        without_tenant=call.flag("withoutTenantId"),
        count=count,
    )


endpoints = [
    *listing("/history/variable-instance", _variable_query, shown=_variables_shown),
    *listing("/history/incident", _incident_query, _incident),
    *listing("/history/task", _task_query, _task),
]
