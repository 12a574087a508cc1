"""Decision definitions: list and count them with Camunda's filters, read one by id or by key
(its latest version) and its DMN XML, and evaluate one directly. The evaluation answers
Camunda's result list: one object per result entry, each output's name mapped to a typed value
typed by the output's typeRef (or, without one, by its value)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from uuid import UUID

from starlette.responses import Response

from app.camunda.dto import Json, format_date
from app.camunda.errors import invalid_request, rest_error
from app.camunda.http import Call, Endpoint, json_response, listed, listing
from app.camunda.variables import to_typed_map
from engine.errors import BadRequest, ExpressionError
from engine.queries import decision_history as dh
from engine.queries import decisions as decision_reads
from engine.queries.camunda.common import CamundaPage

# Camunda's value type of each DMN typeRef (lower case, without a `feel:` prefix).
TYPE_REFS = {
    "string": "String",
    "boolean": "Boolean",
    "integer": "Integer",
    "long": "Long",
    "double": "Double",
    "date": "Date",
    "datetime": "Date",
    "date and time": "Date",
}


def dmn_value(value: Any, type_ref: str | None) -> Json:
    """A decision's value (an input, an output, a result entry) as Camunda's typed value: the
    type its typeRef names, or else the type of the value (a whole number untyped is a Long, as
    Camunda's FEEL engine hands it back). Dates in Camunda's date format."""
    kind = (type_ref or "").strip().lower().removeprefix("feel:")
    name = TYPE_REFS.get(kind)
    if value is None:
        return {"type": "Null", "value": None, "valueInfo": {}}
    if name == "Date" and isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            name = None
    if isinstance(value, datetime | date):
        moment = value if isinstance(value, datetime) else datetime(*value.timetuple()[:3])
        return {"type": "Date", "value": format_date(moment), "valueInfo": {}}
    if name is None or name == "Date":
        name = _inferred(value)
    if name == "String" and not isinstance(value, str):
        value = str(value)
    return {"type": name, "value": value, "valueInfo": {}}


def _inferred(value: Any) -> str:
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, int):
        return "Long"
    if isinstance(value, float):
        return "Double"
    if isinstance(value, dict | list):
        return "Json"
    return "String"


# -- definitions ----------------------------------------------------------------------------------


def definition_dto(row: dh.DecisionDefinitionRow) -> Json:
    """Camunda's DecisionDefinitionDto; `category` is the DMN definitions' namespace."""
    return {
        "id": row.id,
        "key": row.key,
        "category": row.category,
        "name": row.name,
        "version": row.version,
        "resource": row.resource_name,
        "deploymentId": str(row.deployment_id),
        "decisionRequirementsDefinitionId": None,
        "decisionRequirementsDefinitionKey": None,
        "tenantId": row.tenant_id,
        "versionTag": row.version_tag,
        "historyTimeToLive": row.history_ttl_days,
    }


def _definition_query(call: Call, *, count: bool) -> list[dh.DecisionDefinitionRow] | int:
    tenant_ids = call.csv("tenantIdIn")
    with_bare = bool(call.flag("includeDecisionDefinitionsWithoutTenantId"))
    found = dh.DecisionDefinitionFilter(
        definition_id=call.text("decisionDefinitionId"),
        definition_ids=call.csv("decisionDefinitionIdIn"),
        key=call.text("key"),
        keys=call.csv("keyIn"),
        key_like=call.text("keyLike"),
        name=call.text("name"),
        name_like=call.text("nameLike"),
        deployment_id=call.uuid("deploymentId"),
        version=call.integer("version"),
        latest_version=bool(call.flag("latestVersion")),
        version_tag=call.text("versionTag"),
        version_tag_like=call.text("versionTagLike"),
        resource_name=call.text("resourceName"),
        resource_name_like=call.text("resourceNameLike"),
        tenant_ids=None if with_bare else tenant_ids,
        tenant_ids_or_none=tenant_ids if with_bare else None,
        without_tenant=bool(call.flag("withoutTenantId")),
    )
    return dh.decision_definitions(
        call.engine, call.page(dh.DECISION_DEFINITION_SORT), found, count=count
    )


def _one(call: Call, found: dh.DecisionDefinitionFilter) -> dh.DecisionDefinitionRow | None:
    rows = listed(dh.decision_definitions(call.engine, CamundaPage(), found))
    return rows[0] if rows else None


def _by_key(call: Call) -> dh.DecisionDefinitionRow:
    key = call.path["key"]
    row = _one(call, dh.DecisionDefinitionFilter(key=key, latest_version=True, without_tenant=True))
    if row is None:
        raise invalid_request(
            f"No matching decision definition with key: {key} and no tenant-id", 404
        )
    return row


def _by_id(call: Call) -> dh.DecisionDefinitionRow:
    definition_id = call.path["id"]
    row = _one(call, dh.DecisionDefinitionFilter(definition_id=definition_id))
    if row is None:
        raise invalid_request(f"No matching decision definition with id: {definition_id}", 404)
    return row


def _xml(call: Call, row: dh.DecisionDefinitionRow) -> Response:
    return json_response({"id": row.id, "dmnXml": decision_reads.source_xml(call.engine, row.id)})


def definition_by_key(call: Call) -> Response:
    return json_response(definition_dto(_by_key(call)))


def definition_by_id(call: Call) -> Response:
    return json_response(definition_dto(_by_id(call)))


def xml_by_key(call: Call) -> Response:
    return _xml(call, _by_key(call))


def xml_by_id(call: Call) -> Response:
    return _xml(call, _by_id(call))


# -- evaluation -----------------------------------------------------------------------------------


def _evaluate(call: Call, row: dh.DecisionDefinitionRow) -> Response:
    variables = to_typed_map(call.field("variables"))
    plain = {name: typed.value for name, typed in variables.items()}
    try:
        evaluated = call.engine.evaluate_decision(definition_id=row.id, variables=plain)
    except (BadRequest, ExpressionError) as exc:
        raise rest_error(400, f"Cannot evaluate decision {row.id}: {exc.message}", exc) from exc
    history = dh.evaluation(call.engine, UUID(evaluated.evaluation_id))
    types = {o["name"]: o.get("type") for o in (history.outputs if history else [])}
    return json_response(
        [
            {name: dmn_value(value, types.get(name)) for name, value in entry.items()}
            for entry in evaluated.result
        ]
    )


def evaluate_by_key(call: Call) -> Response:
    return _evaluate(call, _by_key(call))


def evaluate_by_id(call: Call) -> Response:
    return _evaluate(call, _by_id(call))


endpoints = [
    *listing("/decision-definition", _definition_query, definition_dto),
    Endpoint("/decision-definition/key/{key}", "GET", definition_by_key),
    Endpoint("/decision-definition/key/{key}/xml", "GET", xml_by_key),
    Endpoint(
        "/decision-definition/key/{key}/evaluate",
        "POST",
        evaluate_by_key,
        body="json",
    ),
    Endpoint("/decision-definition/{id}", "GET", definition_by_id),
    Endpoint("/decision-definition/{id}/xml", "GET", xml_by_id),
    Endpoint("/decision-definition/{id}/evaluate", "POST", evaluate_by_id, body="json"),
]
