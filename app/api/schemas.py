"""JSON Schemas (OpenAPI 3.1) of what the API sends and accepts. Response objects list every field
as required: the API always sends every field, null when there is no value."""

from __future__ import annotations

from typing import Any

from engine.language.variables import VariableType
from engine.states import TokenMode

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
MODE: Schema = {"type": "string", "enum": [mode.value for mode in TokenMode]}
INTEGER: Schema = {"type": "integer"}
BOOLEAN: Schema = {"type": "boolean"}
TIME: Schema = {"type": "string", "format": "date-time"}
UUID: Schema = {"type": "string", "format": "uuid"}
ANY: Schema = {}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    if "$ref" in schema:
        return {"oneOf": [schema, {"type": "null"}]}
    return {**schema, "type": [schema["type"], "null"]}


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def record(properties: dict[str, Schema], description: str = "") -> Schema:
    """A response object: every property is always present."""
    schema: Schema = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
    }
    if description:
        schema["description"] = description
    return schema


def request(properties: dict[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


NO_BODY: Schema = request({})
RETRIES_BODY: Schema = request({"retries": INTEGER}, required=("retries",))


def page(item: str) -> Schema:
    return record({"items": array(ref(item)), "next": nullable(STRING)})


VARIABLES_IN: Schema = {
    "type": "object",
    "description": 'Variables: `{"name": value}` (type inferred) or '
    '`{"name": {"type": "integer", "value": 5}}`. Types: string, integer, long, double, '
    "boolean, null, json, date.",
    "additionalProperties": ANY,
}

# An instance as its start left it: every field of an instance but its end.
_STARTED_INSTANCE: dict[str, Schema] = {
    "id": UUID,
    "definition_id": STRING,
    "definition_key": STRING,
    "business_key": nullable(STRING),
    "state": STRING,
    "started_at": TIME,
}

# A deployed process or decision definition.
DEFINITION = record(
    {
        "id": STRING,
        "key": STRING,
        "version": INTEGER,
        "name": nullable(STRING),
        "version_tag": nullable(STRING),
        "deployment_id": UUID,
        "resource_name": STRING,
        "history_ttl_days": nullable(INTEGER),
        "created_at": TIME,
        # A suspended process definition starts nothing until activated (a decision: false).
        "suspended": BOOLEAN,
    }
)
# A process or decision of a deployment, and whether this deployment created its version.
DEPLOYED = record(
    {
        "id": STRING,
        "key": STRING,
        "version": INTEGER,
        "name": nullable(STRING),
        "resource_name": STRING,
        "tenant_id": nullable(STRING),
        "created": BOOLEAN,
    }
)

COMPONENTS: dict[str, Schema] = {
    "Error": record(
        {"type": STRING, "message": STRING, "detail": {"type": "object"}},
        "An error: a stable type, a message for people and machine-readable detail.",
    ),
    "TypedValue": record(
        {"type": {"type": "string", "enum": [kind.value for kind in VariableType]}, "value": ANY},
        "A variable: its type and its value as stored (a date as ISO 8601 text; bytes as base64"
        " text; a file as {filename, mimeType, encoding, data}, data in base64; an object as"
        " {objectTypeName, value}).",
    ),
    "Variables": {"type": "object", "additionalProperties": ref("TypedValue")},
    "Definition": DEFINITION,
    "Deployment": record(
        {
            "deployment_id": nullable(UUID),
            "definitions": array(DEPLOYED),
            "decisions": array(DEPLOYED),
            "skipped": array(
                record(
                    {"resource": STRING, "process": STRING, "reason": STRING}, "A process left out."
                )
            ),
        },
        "A deployment; `deployment_id` is null when every process and decision was unchanged; "
        "`skipped`: the processes that deploy no definition (not executable, or without flow "
        "nodes), as Camunda skips them.",
    ),
    "Decision": DEFINITION,
    "DecisionEvaluation": record(
        {
            "id": UUID,
            "root_id": nullable(UUID),
            "definition_id": STRING,
            "key": STRING,
            "name": nullable(STRING),
            "version": INTEGER,
            "evaluated_at": TIME,
            "instance_id": nullable(UUID),
            "process_definition_id": nullable(STRING),
            "node_id": nullable(STRING),
            "user_id": nullable(STRING),
            "inputs": array({"type": "object"}),
            "outputs": array({"type": "object"}),
            "result": array({"type": "object"}),
            "collect_value": ANY,
        },
        "One decision evaluated: `root_id` names the evaluation of the decision that required "
        "it (null: it was asked for); `inputs` are `{id, label, type, value}` per input clause, "
        "`outputs` `{id, label, name, rule_id, rule_order, type, value}` per output of each "
        "matched rule, `result` the list of result entries (output name to value).",
    ),
    "DecisionEvaluationPage": page("DecisionEvaluation"),
    "Instance": record({**_STARTED_INSTANCE, "ended_at": nullable(TIME)}),
    "InstancePage": page("Instance"),
    "UserTaskPage": page("UserTask"),
    "ExternalTaskPage": page("ExternalTask"),
    "IncidentPage": page("Incident"),
    "JobPage": page("Job"),
    "AuditEntryPage": page("AuditEntry"),
    "AuditEntry": record(
        {
            "id": UUID,
            "at": TIME,
            "user": STRING,
            "channel": STRING,
            "operation": STRING,
            "entity": STRING,
            "entity_id": nullable(STRING),
            "instance_id": nullable(UUID),
            "definition_id": nullable(STRING),
            "definition_key": nullable(STRING),
            "batch_id": nullable(UUID),
            "property": nullable(STRING),
            "before": ANY,
            "after": ANY,
            "annotation": nullable(STRING),
            "details": ANY,
        },
        "Who changed what: `before` and `after` are JSON values (a variable's, a role's...).",
    ),
    "StartedInstance": record(
        _STARTED_INSTANCE, "A new instance; `state` is its state when the start committed."
    ),
    "InstanceResult": record({"id": UUID, "definition_id": STRING, "state": STRING}),
    "SuspensionResult": record(
        {"definition_ids": array(STRING), "instance_ids": array(STRING)},
        "The definitions and the instances whose suspension state changed.",
    ),
    "Token": record(
        {
            "id": UUID,
            "node_id": STRING,
            "node_name": nullable(STRING),
            "state": STRING,
            "version": INTEGER,
            # Forward, or Compensation for a token running a compensation handler.
            "mode": MODE,
        }
    ),
    "Track": record(
        {
            "id": UUID,
            "parent_id": nullable(UUID),
            "merged_into": nullable(UUID),
            "state": STRING,
            "mode": MODE,
            "steps": array(
                record(
                    {
                        "node_id": STRING,
                        "node_name": nullable(STRING),
                        "node_type": STRING,
                        "state": STRING,
                        "started_at": TIME,
                        "ended_at": nullable(TIME),
                    }
                )
            ),
        },
        "One track of tokens with its fork (parent) and merge lineage and its visits.",
    ),
    "UserTask": record(
        {
            "id": UUID,
            "instance_id": UUID,
            "node_id": STRING,
            "name": nullable(STRING),
            "state": STRING,
            "assignee": nullable(STRING),
            "candidate_users": array(STRING),
            "candidate_groups": array(STRING),
            "priority": INTEGER,
            "due_at": nullable(TIME),
            "created_at": TIME,
            "ended_at": nullable(TIME),
            "definition_id": STRING,
            "definition_key": STRING,
            "business_key": nullable(STRING),
        }
    ),
    "TaskResult": record({"task_id": UUID, "instance_id": UUID, "instance_state": STRING}),
    "ExternalTask": record(
        {
            "id": UUID,
            "instance_id": UUID,
            "node_id": STRING,
            "topic": STRING,
            "state": STRING,
            "priority": INTEGER,
            "worker_id": nullable(STRING),
            "lock_expires_at": nullable(TIME),
            "retries": nullable(INTEGER),
            "error_message": nullable(STRING),
            "error_details": nullable(STRING),
            "created_at": TIME,
            "definition_id": STRING,
            "definition_key": STRING,
            "business_key": nullable(STRING),
            "tenant_id": nullable(STRING),
        }
    ),
    "LockedExternalTask": record(
        {
            "id": UUID,
            "topic": STRING,
            "worker_id": STRING,
            "lock_expires_at": TIME,
            "instance_id": UUID,
            "definition_id": STRING,
            "definition_key": STRING,
            "business_key": nullable(STRING),
            "tenant_id": nullable(STRING),
            "node_id": STRING,
            "retries": nullable(INTEGER),
            "error_message": nullable(STRING),
            "error_details": nullable(STRING),
            "priority": INTEGER,
            "created_at": TIME,
            "variables": ref("Variables"),
        }
    ),
    "ExternalTaskResult": record({"task_id": UUID, "instance_id": UUID, "instance_state": STRING}),
    "Deliveries": record(
        {"deliveries": array(record({"kind": STRING, "instance_id": UUID}))},
        "What a message or signal reached: `kind` is `instance` (a waiting instance) or "
        "`start` (a new instance).",
    ),
    "Incident": record(
        {
            "id": UUID,
            "type": STRING,
            "instance_id": UUID,
            "definition_id": STRING,
            "token_id": nullable(UUID),
            "node_id": STRING,
            "job_id": nullable(UUID),
            "external_task_id": nullable(UUID),
            "message": STRING,
            "details": nullable(STRING),
            "state": STRING,
            "created_at": TIME,
            "resolved_at": nullable(TIME),
        }
    ),
    "IncidentResult": record({"incident_id": UUID, "instance_id": UUID, "state": STRING}),
    "Job": record(
        {
            "id": UUID,
            "kind": STRING,
            "instance_id": nullable(UUID),
            "token_id": nullable(UUID),
            "node_id": STRING,
            # None for the history cleanup job only.
            "definition_id": nullable(STRING),
            "due_at": TIME,
            "lock_owner": nullable(STRING),
            "lock_expires_at": nullable(TIME),
            "retries": INTEGER,
            "timer_text": nullable(STRING),
            "repetitions_left": nullable(INTEGER),
            "error_message": nullable(STRING),
            "created_at": TIME,
        }
    ),
    "JobResult": record({"job_id": UUID, "outcome": STRING, "instance_id": nullable(UUID)}),
    "Credential": record({"name": STRING, "role": STRING}),
    "NewUser": record(
        {"name": STRING, "role": STRING, "password": nullable(STRING)},
        "`password` is the generated password (shown once), or null when the request set one.",
    ),
    "NewToken": record(
        {"name": STRING, "role": STRING, "token": STRING}, "`token` is shown this once only."
    ),
    "OwnToken": record({"name": STRING}),
    "NewOwnToken": record(
        {"name": STRING, "owner": STRING, "token": STRING},
        "A token of the caller's own, acting as them; `token` is shown this once only.",
    ),
    "Session": record(
        {
            "id": UUID,
            "user": STRING,
            "role": STRING,
            "created_at": TIME,
            "last_seen_at": TIME,
            "expires_at": TIME,
            "client_address": nullable(STRING),
            "user_agent": nullable(STRING),
        },
        "A console session. `id` is public: it ends the session but cannot be used to log in.",
    ),
    "EndedSessions": record({"ended": INTEGER}),
}

_LISTED = (
    "Definition",
    "Decision",
    "Token",
    "Track",
    "UserTask",
    "ExternalTask",
    "LockedExternalTask",
    "Incident",
    "Job",
    "Credential",
    "OwnToken",
    "Session",
)
for _name in _LISTED:
    COMPONENTS[f"{_name}List"] = record({"items": array(ref(_name)), "next": {"type": "null"}})
