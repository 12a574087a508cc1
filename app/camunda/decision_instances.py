"""Camunda's historic decision instances: `/history/decision-instance` lists and counts the
decision evaluations (direct ones and business rule tasks'), each with its inputs and outputs
when asked (`includeInputs`, `includeOutputs`), and `/history/decision-instance/{id}` reads one.
An input's or output's id is its evaluation's id and its place (`{id}:in:{n}`, `{id}:out:{n}`)."""

from __future__ import annotations

from starlette.responses import Response

from app.camunda.decisions import dmn_value
from app.camunda.dto import Json, format_date, text
from app.camunda.http import Call, Endpoint, found, json_response, listed
from app.params import as_uuid
from engine.queries import decision_history as dh
from engine.queries.camunda.common import CamundaPage


def _inputs(row: dh.EvaluationRow) -> list[Json]:
    created, root = format_date(row.evaluated_at), text(row.root_instance_id)
    return [
        {
            "id": f"{row.id}:in:{n}",
            "decisionInstanceId": str(row.id),
            "clauseId": item.get("id"),
            "clauseName": item.get("label"),
            "errorMessage": None,
            **dmn_value(item.get("value"), item.get("type")),
            "createTime": created,
            "removalTime": None,
            "rootProcessInstanceId": root,
        }
        for n, item in enumerate(row.inputs)
    ]


def _outputs(row: dh.EvaluationRow) -> list[Json]:
    created, root = format_date(row.evaluated_at), text(row.root_instance_id)
    return [
        {
            "id": f"{row.id}:out:{n}",
            "decisionInstanceId": str(row.id),
            "clauseId": item.get("id"),
            "clauseName": item.get("label"),
            "ruleId": item.get("rule_id"),
            "ruleOrder": item.get("rule_order"),
            "variableName": item.get("name"),
            "errorMessage": None,
            **dmn_value(item.get("value"), item.get("type")),
            "createTime": created,
            "removalTime": None,
            "rootProcessInstanceId": root,
        }
        for n, item in enumerate(row.outputs)
    ]


def decision_instance(row: dh.EvaluationRow, *, inputs: bool, outputs: bool) -> Json:
    """Camunda's HistoricDecisionInstanceDto; inputs and outputs null unless included."""
    return {
        "id": str(row.id),
        "decisionDefinitionId": row.definition_id,
        "decisionDefinitionKey": row.decision_key,
        "decisionDefinitionName": row.definition_name,
        "evaluationTime": format_date(row.evaluated_at),
        "removalTime": None,
        "processDefinitionId": row.process_definition_id,
        "processDefinitionKey": row.process_definition_key,
        "processInstanceId": text(row.instance_id),
        "rootProcessInstanceId": text(row.root_instance_id),
        "caseDefinitionId": None,
        "caseDefinitionKey": None,
        "caseInstanceId": None,
        "activityId": row.node_id,
        "activityInstanceId": text(row.history_id),
        "tenantId": None,
        "userId": row.user_id,
        "inputs": _inputs(row) if inputs else None,
        "outputs": _outputs(row) if outputs else None,
        "collectResultValue": row.collect_value,
        "rootDecisionInstanceId": text(row.root_id),
        "decisionRequirementsDefinitionId": None,
        "decisionRequirementsDefinitionKey": None,
    }


def _filter(call: Call) -> dh.EvaluationFilter:
    return dh.EvaluationFilter(
        evaluation_id=call.uuid("decisionInstanceId"),
        evaluation_ids=call.uuids("decisionInstanceIdIn"),
        definition_id=call.text("decisionDefinitionId"),
        definition_ids=call.csv("decisionDefinitionIdIn"),
        key=call.text("decisionDefinitionKey"),
        keys=call.csv("decisionDefinitionKeyIn"),
        name=call.text("decisionDefinitionName"),
        process_definition_id=call.text("processDefinitionId"),
        process_definition_key=call.text("processDefinitionKey"),
        instance_id=call.uuid("processInstanceId"),
        node_ids=call.csv("activityIdIn"),
        history_ids=call.uuids("activityInstanceIdIn"),
        evaluated_before=call.date("evaluatedBefore"),
        evaluated_after=call.date("evaluatedAfter"),
        user_id=call.text("userId"),
        root_id=call.uuid("rootDecisionInstanceId"),
        roots_only=bool(call.flag("rootDecisionInstancesOnly")),
    )


def _included(call: Call) -> tuple[bool, bool]:
    return bool(call.flag("includeInputs")), bool(call.flag("includeOutputs"))


def list_decision_instances(call: Call) -> Response:
    inputs, outputs = _included(call)
    rows = dh.evaluations(
        call.engine,
        call.page(dh.EVALUATION_SORT),
        _filter(call),
        details=inputs or outputs,
    )
    return json_response(
        [decision_instance(row, inputs=inputs, outputs=outputs) for row in listed(rows)]
    )


def count_decision_instances(call: Call) -> Response:
    count = dh.evaluations(call.engine, CamundaPage(), _filter(call), count=True)
    return json_response({"count": count})


def decision_instance_by_id(call: Call) -> Response:
    inputs, outputs = _included(call)
    evaluation_id = call.path["id"]
    row = found(
        dh.evaluation(call.engine, as_uuid(evaluation_id)),
        f"Historic decision instance with id '{evaluation_id}' does not exist",
    )
    return json_response(decision_instance(row, inputs=inputs, outputs=outputs))


endpoints = [
    Endpoint("/history/decision-instance", "GET", list_decision_instances),
    Endpoint("/history/decision-instance/count", "GET", count_decision_instances),
    Endpoint("/history/decision-instance/{id}", "GET", decision_instance_by_id),
]
