"""Camunda's history of variables and incidents: `/history/variable-instance` (the variables of
running and ended instances, kept until the history cleanup deletes the instance) and
`/history/incident` (open and ended incidents, with their end times and open, resolved and
deleted flags). Interlock keeps no log of each job or external task attempt, so it serves no
`/history/job-log` or `/history/external-task-log`."""

from __future__ import annotations

from app.camunda.dto import Json, format_date, text
from app.camunda.http import Call, listing
from app.camunda.variable_instances import variable_instance_id
from app.camunda.variables import stored_to_dto
from engine.queries.camunda import history as history_reads

# Every variable row served is a live one: Interlock deletes a variable's row with it.
CREATED = "CREATED"


def _variable(row: history_reads.HistoricVariableRow) -> Json:
    return {
        "id": variable_instance_id(row.instance_id, row.scope_key, row.name),
        "name": row.name,
        **stored_to_dto(row.type, row.value),
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
        "rootProcessInstanceId": str(row.root_instance_id or row.instance_id),
    }


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
    configuration = row.job_id or row.external_task_id
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
        "configuration": text(configuration),
        "historyConfiguration": None,
        "incidentMessage": row.message,
        "tenantId": None,
        "jobDefinitionId": None,
        "open": row.open,
        "deleted": row.deleted,
        "resolved": row.resolved,
        "annotation": None,
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


endpoints = [
    *listing("/history/variable-instance", _variable_query, _variable),
    *listing("/history/incident", _incident_query, _incident),
]
