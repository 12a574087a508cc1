"""The authorization matrix's rows for /engine-rest's incidents and executions
(tests/api/matrix_table.py adds them to its table), from Camunda 7's rules: annotating an
incident, resolving a custom one, opening one on an execution, signalling an execution,
sending a signal to one execution (POST /signal with executionId) and triggering its message
subscription are checkUpdateProcessInstance (UPDATE on the instance, or
UPDATE_INSTANCE on its definition); an execution's local variables are
checkUpdateProcessInstanceVariables (UPDATE_VARIABLE or UPDATE on the instance,
UPDATE_INSTANCE_VARIABLE or UPDATE_INSTANCE on its definition).

Each call has a fresh target: an instance of the waiting process (a message catch `paid` and a
signal catch `go`), whose execution at `paid` the call addresses, or a fresh incident."""

from __future__ import annotations

import uuid
from typing import Any

from engine.api import Engine
from engine.commands.executions import CreateIncident
from engine.commands.incidents import AnnotateIncident
from tests.api.matrix_routes import (
    EXTERNAL,
    PROCESS_DEFINITION,
    PROCESS_INSTANCE,
    WAITING,
    Make,
    Resource,
    Row,
    Surface,
    Target,
    incident,
    instance,
    instance_rows,
    scalar,
)

R = Surface.REST
PD, PI = PROCESS_DEFINITION, PROCESS_INSTANCE


def _at_paid(engine: Engine, instance_id: str) -> str:
    """The execution (token) of the instance waiting at the message catch `paid`."""
    return str(
        scalar(
            engine,
            "SELECT id FROM token WHERE instance_id = %s AND node_id = 'paid'",
            uuid.UUID(instance_id),
        )
    )


def on_execution(path: str, key_grant: bool, own: bool = False, **request: Any) -> Make:
    """A fresh waiting instance's execution at `paid` (`own`: the instance's own execution,
    whose variables are the root scope's, `note` among them); the grant names the key or the
    instance."""

    def make(engine: Engine) -> Target:
        instance_id = instance(engine)
        execution_id = instance_id if own else _at_paid(engine, instance_id)
        named = WAITING if key_grant else instance_id
        return Target(path.format(execution_id), request, named, instance_rows(instance_id))

    return make


def signal_at_go(engine: Engine) -> Target:
    """POST /signal to one execution: a fresh waiting instance's at the signal catch `go`;
    the grant names the instance (a broadcast's rows name the key)."""
    instance_id = instance(engine)
    token = scalar(
        engine,
        "SELECT id FROM token WHERE instance_id = %s AND node_id = 'go'",
        uuid.UUID(instance_id),
    )
    body = {"name": "go", "executionId": str(token)}
    return Target("/signal", {"json": body}, instance_id, instance_rows(instance_id))


def on_custom_incident(path: str, key_grant: bool, **request: Any) -> Make:
    """A custom incident opened on a fresh waiting instance's execution at `paid`."""

    def make(engine: Engine) -> Target:
        instance_id = instance(engine)
        execution_id = uuid.UUID(_at_paid(engine, instance_id))
        made = engine.run(CreateIncident(execution_id, "custom", message="stuck"))
        named = WAITING if key_grant else instance_id
        return Target(path.format(made.incident_id), request, named, instance_rows(instance_id))

    return make


def on_failed_incident(path: str, key_grant: bool, **request: Any) -> Make:
    """A failed external task's incident, whose annotation the call changes."""

    def make(engine: Engine) -> Target:
        incident_id, instance_id = incident(engine)
        if request.get("json") is None:  # clearing: an annotation to clear first
            engine.run(_annotate(incident_id))
        named = EXTERNAL if key_grant else instance_id
        return Target(path.format(incident_id), request, named, instance_rows(instance_id))

    return make


def _annotate(incident_id: str) -> AnnotateIncident:
    return AnnotateIncident(uuid.UUID(incident_id), "noted")


def _row(
    resource: Resource, permission: str, method: str, route: str, make: Make, status: int
) -> Row:
    return Row(resource, permission, R, method, route, make, status)


NOTE = {"annotation": "looked at"}
PAID = {"variables": {"paid": {"value": True, "type": "Boolean"}}}
INCIDENT = {"incidentType": "custom", "message": "stuck"}
TRIGGER = "/execution/{id}/messageSubscriptions/{name}/trigger"
LOCAL = {"modifications": {"local": {"value": 1, "type": "Integer"}}}

EXECUTIONS_ROWS: list[Row] = [
    # ---- an incident: UPDATE on its instance, or UPDATE_INSTANCE on its definition ---
    _row(PD, "UPDATE_INSTANCE", "PUT", "/incident/{id}/annotation",
         on_failed_incident("/incident/{}/annotation", True, json=NOTE), 204),
    _row(PI, "UPDATE", "PUT", "/incident/{id}/annotation",
         on_failed_incident("/incident/{}/annotation", False, json=NOTE), 204),
    _row(PD, "UPDATE_INSTANCE", "DELETE", "/incident/{id}/annotation",
         on_failed_incident("/incident/{}/annotation", True), 204),
    _row(PI, "UPDATE", "PUT", "/incident/{id}/clear-annotation",
         on_failed_incident("/incident/{}/clear-annotation", False), 204),
    _row(PD, "UPDATE_INSTANCE", "DELETE", "/incident/{id}",
         on_custom_incident("/incident/{}", True), 204),
    _row(PI, "UPDATE", "DELETE", "/incident/{id}",
         on_custom_incident("/incident/{}", False), 204),
    # ---- an execution: the same, for a signal, a message, a custom incident ---
    _row(PD, "UPDATE_INSTANCE", "POST", "/execution/{id}/signal",
         on_execution("/execution/{}/signal", True, json=PAID), 204),
    _row(PI, "UPDATE", "POST", "/execution/{id}/signal",
         on_execution("/execution/{}/signal", False, json=PAID), 204),
    _row(PD, "UPDATE_INSTANCE", "POST", TRIGGER,
         on_execution("/execution/{}/messageSubscriptions/order-paid/trigger", True, json=PAID),
         204),
    _row(PI, "UPDATE", "POST", TRIGGER,
         on_execution("/execution/{}/messageSubscriptions/order-paid/trigger", False, json=PAID),
         204),
    _row(PI, "UPDATE", "POST", "/signal", signal_at_go, 204),
    _row(PD, "UPDATE_INSTANCE", "POST", "/execution/{id}/create-incident",
         on_execution("/execution/{}/create-incident", True, json=INCIDENT), 200),
    _row(PI, "UPDATE", "POST", "/execution/{id}/create-incident",
         on_execution("/execution/{}/create-incident", False, json=INCIDENT), 200),
    # ---- an execution's local variables: UPDATE_VARIABLE on its instance, or
    # UPDATE_INSTANCE_VARIABLE on its definition ---
    _row(PD, "UPDATE_INSTANCE_VARIABLE", "POST", "/execution/{id}/localVariables",
         on_execution("/execution/{}/localVariables", True, json=LOCAL), 204),
    _row(PI, "UPDATE_VARIABLE", "POST", "/execution/{id}/localVariables",
         on_execution("/execution/{}/localVariables", False, json=LOCAL), 204),
    _row(PD, "UPDATE_INSTANCE_VARIABLE", "PUT", "/execution/{id}/localVariables/{name}",
         on_execution("/execution/{}/localVariables/local", True,
                      json={"value": 2, "type": "Integer"}), 204),
    _row(PI, "UPDATE_VARIABLE", "DELETE", "/execution/{id}/localVariables/{name}",
         on_execution("/execution/{}/localVariables/note", False, own=True), 204),
]  # fmt: skip
