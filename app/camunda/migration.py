"""Process instance migration: generate a plan, validate it, execute it over instances.

`/migration/executeAsync` runs the same migration as a batch (one `MigrateInstance` per item,
see engine/commands/migration.py); it belongs to the batches' endpoints.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from starlette.responses import Response

from app.camunda.dto import Json
from app.camunda.errors import CamundaError, invalid_request
from app.camunda.http import Call, Endpoint, json_response, no_content
from app.gates import Gate
from engine.commands.migration import MigrationInvalid
from engine.errors import BadRequest, NotFound
from engine.queries import migration as migration_reads
from engine.queries import selection
from engine.semantics.migration import MigrationPlan, ValidationReport

# The most instances one synchronous execute migrates; more go through executeAsync.
MAX_SYNC_INSTANCES = 1000

# The processInstanceQuery fields a selection may use, and the filter field each one sets.
_QUERY_FIELDS = {
    "processDefinitionId": "definition_id",
    "processDefinitionKey": "definition_key",
    "businessKey": "business_key",
}


def _uuid(value: Any, name: str) -> UUID:
    try:
        return UUID(str(value))
    except ValueError as exc:
        raise invalid_request(
            f"'{name}' holds '{value}', which is not a process instance id"
        ) from exc


def _plan(call: Call) -> MigrationPlan:
    body = call.field("migrationPlan")
    if body is None:
        raise invalid_request("'migrationPlan' is required")
    try:
        return MigrationPlan.from_json(body)
    except BadRequest as exc:
        raise invalid_request(exc.message) from exc


def _plan_report(report: ValidationReport) -> Json:
    """Camunda's MigrationPlanReportDto."""
    return {
        "instructionReports": [r.to_json() for r in report.instructions],
        "variableReports": {},
    }


def generate(call: Call) -> Response:
    source = call.body_text("sourceProcessDefinitionId")
    target = call.body_text("targetProcessDefinitionId")
    if not source or not target:
        raise invalid_request(
            "'sourceProcessDefinitionId' and 'targetProcessDefinitionId' are required"
        )
    update = call.body_flag("updateEventTriggers")
    try:
        plan = migration_reads.plan(
            call.engine, call.engine.definition_cache, source, target, update
        )
    except NotFound as exc:
        raise invalid_request(exc.message) from exc
    return json_response(plan.to_json())


def validate(call: Call) -> Response:
    """Camunda's POST /migration/validate: the body is the plan itself."""
    try:
        plan = MigrationPlan.from_json(call.body, where="body")
    except BadRequest as exc:
        raise invalid_request(exc.message) from exc
    try:
        report = migration_reads.validation(
            call.engine, call.engine.definition_cache, plan, [], call.engine.clock()
        )
    except NotFound as exc:
        raise invalid_request(exc.message) from exc
    return json_response(_plan_report(report))


def _instance_ids(call: Call) -> list[UUID]:
    """The instances to migrate: `processInstanceIds` and those `processInstanceQuery` selects."""
    raw = call.field("processInstanceIds", [])
    if not isinstance(raw, list) or not all(isinstance(i, str) for i in raw):
        raise invalid_request("'processInstanceIds' must be a list of process instance ids")
    ids = [_uuid(i, "processInstanceIds") for i in raw]
    query = call.field("processInstanceQuery")
    if query is not None:
        ids.extend(_selected(call, query))
    unique = list(dict.fromkeys(ids))
    if not unique:
        raise invalid_request(
            "'processInstanceIds' or 'processInstanceQuery' must select instances"
        )
    if len(unique) > MAX_SYNC_INSTANCES:
        raise invalid_request(
            f"{len(unique)} instances selected: execute migrates at most {MAX_SYNC_INSTANCES}, "
            "select fewer"
        )
    return unique


def _selected(call: Call, query: Any) -> list[UUID]:
    """The running instances `processInstanceQuery` selects, newest first; one more than an
    execute migrates at most, so that too many are refused."""
    if not isinstance(query, dict):
        raise invalid_request("'processInstanceQuery' must be an object")
    fields: dict[str, Any] = {}
    for name, value in query.items():
        if value is None:
            continue
        if name == "processInstanceIds":
            continue  # read below
        if name not in _QUERY_FIELDS:
            raise invalid_request(f"processInstanceQuery.{name} is not supported")
        if not isinstance(value, str):
            raise invalid_request(f"processInstanceQuery.{name} must be a string")
        fields[_QUERY_FIELDS[name]] = value
    wanted = query.get("processInstanceIds")
    allowed = None
    if wanted is not None:
        if not isinstance(wanted, list):
            raise invalid_request("processInstanceQuery.processInstanceIds must be a list")
        allowed = {_uuid(i, "processInstanceIds") for i in wanted}
    return selection.running_instance_ids(
        call.engine, **fields, ids=allowed, limit=MAX_SYNC_INSTANCES + 1
    )


def _refusal(exc: MigrationInvalid) -> CamundaError:
    """Camunda's MigrationPlanValidationException (the plan) or
    MigratingProcessInstanceValidationException (an instance, its first failing one)."""
    instructions = exc.detail.get("instructions") or []
    if instructions:
        return CamundaError(
            400,
            "MigrationPlanValidationException",
            exc.message,
            extra={"validationReport": {"instructionReports": instructions, "variableReports": {}}},
        )
    instances = exc.detail.get("instances") or [
        {"processInstanceId": exc.detail.get("instance_id"), "failures": exc.detail.get("failures")}
    ]
    first = instances[0]
    failures = first.get("failures") or []
    general = [f["reason"] for f in failures if f["kind"] == "instance"]
    activities = [
        {
            "migrationInstruction": None,
            "activityInstanceId": f["id"],
            "sourceScopeId": f["activityId"],
            "failures": [f["reason"]],
        }
        for f in failures
        if f["kind"] != "instance"
    ]
    return CamundaError(
        400,
        "MigratingProcessInstanceValidationException",
        exc.message,
        extra={
            "validationReport": {
                "processInstanceId": first.get("processInstanceId"),
                "failures": general,
                "activityInstanceValidationReports": activities,
                "transitionInstanceValidationReports": [],
            }
        },
    )


def execute(call: Call) -> Response:
    plan = _plan(call)
    for flag in ("skipCustomListeners", "skipIoMappings"):
        call.body_flag(flag)  # accepted: a migration runs no listeners and no mappings
    ids = _instance_ids(call)
    try:
        call.engine.migrate(plan, ids)
    except MigrationInvalid as exc:
        raise _refusal(exc) from exc
    except NotFound as exc:
        raise invalid_request(exc.message) from exc
    return no_content()


endpoints = [
    Endpoint("/migration/generate", "POST", generate, body="json", gate=Gate.OPERATE),
    Endpoint("/migration/validate", "POST", validate, body="json", gate=Gate.OPERATE),
    Endpoint("/migration/execute", "POST", execute, body="json"),
]
