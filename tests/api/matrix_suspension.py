"""The authorization matrix's rows for suspension and deployments (tests/api/matrix_table.py
adds them to its table), from Camunda 7's rules:

- suspending or activating a definition: SUSPEND (or UPDATE) on the process definition;
- suspending or activating an instance: SUSPEND (or UPDATE) on it, or SUSPEND_INSTANCE (or
  UPDATE_INSTANCE) on its definition; as a batch: CREATE on batches;
- deleting a process definition (by id, or every version of a key): DELETE on it;
- deleting a deployment: DELETE on it; redeploying one: CREATE on deployments (and READ on the
  one redeployed, which every principal of the matrix holds).

Each call has a fresh target: a definition deployed for it alone (suspending a shared one
would stop the other rows' starts), a fresh instance, a fresh deployment."""

from __future__ import annotations

from typing import Any

from engine.api import Engine
from engine.commands.suspension import SuspendDefinition
from tests.api import processes
from tests.api.matrix_routes import (
    BATCH,
    DEPLOYMENT,
    PROCESS_DEFINITION,
    PROCESS_INSTANCE,
    TENANT_ID,
    WAITING,
    Make,
    Row,
    Surface,
    Target,
    count_of,
    instance,
    instance_rows,
    on_instance,
    scalar,
    unique,
)

C, A, R = Surface.CONSOLE, Surface.API, Surface.REST
PD, PI = PROCESS_DEFINITION, PROCESS_INSTANCE


def definition(engine: Engine, *, suspended: bool = False, tenant: bool = False) -> str:
    """A process deployed for one call (of the matrix's tenant with `tenant`): its key."""
    key = unique("matrix-suspending")
    engine.deploy(processes.straight(key), tenant_id=TENANT_ID if tenant else None)
    if suspended:
        engine.run(SuspendDefinition(key=key, tenant_id=TENANT_ID if tenant else None))
    return key


def definition_state(key: str) -> Any:
    return lambda engine: scalar(
        engine,
        "SELECT array_agg(state ORDER BY version) FROM process_definition WHERE key = %s",
        key,
    )


def on_definition(
    path: str, *, suspended: bool = False, tenant: bool = False, **request: Any
) -> Make:
    """A fresh definition; the path formatted with its `key`, `id` and `tenant`, and so is the
    JSON body's `processDefinitionKey`; the grant names its key."""

    def make(engine: Engine) -> Target:
        key = definition(engine, suspended=suspended, tenant=tenant)
        definition_id = scalar(engine, "SELECT id FROM process_definition WHERE key = %s", key)
        body = dict(request)
        if "json" in body:
            body["json"] = {
                name: key if value == "{key}" else value for name, value in body["json"].items()
            }
        concrete = path.format(key=key, id=definition_id, tenant=TENANT_ID)
        return Target(concrete, body, key, definition_state(key))

    return make


def instances_named(path: str, key_grant: bool, **fields: Any) -> Make:
    """A fresh waiting instance, named in the JSON body's `processInstanceIds`; the grant names
    its definition key (or its id); `key_grant` None: the grant is on `*` (a batch's)."""

    def make(engine: Engine) -> Target:
        made = instance(engine)
        body = {"json": {"processInstanceIds": [made], **fields}}
        if key_grant:
            return Target(path, body, WAITING, instance_rows(made))
        return Target(path, body, "*", count_of("batch"))

    return make


def on_deployment(path: str, probe: str, **request: Any) -> Make:
    """A fresh deployment (of one process); the grant names its id. `probe`: what changes, its
    rows (`rows`) or the count of every deployment (`count`)."""

    def make(engine: Engine) -> Target:
        key = definition(engine)
        deployment_id = scalar(
            engine, "SELECT deployment_id::text FROM process_definition WHERE key = %s", key
        )
        changes = (
            count_of("deployment")
            if probe == "count"
            else lambda e: scalar(
                e,
                "SELECT (SELECT count(*) FROM deployment WHERE id = %s::uuid),"
                " (SELECT count(*) FROM process_definition WHERE key = %s)",
                deployment_id,
                key,
            )
        )
        return Target(path.format(deployment_id), dict(request), deployment_id, changes)

    return make


def _row(
    resource: Any,
    permission: str,
    surface: Surface,
    method: str,
    route: str,
    make: Make,
    status: int,
    on_any: bool = False,
) -> Row:
    return Row(resource, permission, surface, method, route, make, status, (), on_any)


SUSPENSION_ROWS: list[Row] = [
    # ---- a definition: SUSPEND (or UPDATE) on it ---
    _row(PD, "SUSPEND", A, "POST", "/definitions/key/{key}/suspend",
         on_definition("/definitions/key/{key}/suspend", json={}), 200),
    _row(PD, "SUSPEND", A, "POST", "/definitions/key/{key}/activate",
         on_definition("/definitions/key/{key}/activate", suspended=True, json={}), 200),
    _row(PD, "SUSPEND", A, "POST", "/definitions/{id}/suspend",
         on_definition("/definitions/{id}/suspend", json={}), 200),
    _row(PD, "UPDATE", A, "POST", "/definitions/{id}/activate",
         on_definition("/definitions/{id}/activate", suspended=True, json={}), 200),
    _row(PD, "SUSPEND", R, "PUT", "/process-definition/key/{key}/suspended",
         on_definition("/process-definition/key/{key}/suspended", json={"suspended": True}), 204),
    _row(PD, "SUSPEND", R, "PUT", "/process-definition/key/{key}/tenant-id/{tenant_id}/suspended",
         on_definition("/process-definition/key/{key}/tenant-id/{tenant}/suspended",
                       tenant=True, json={"suspended": True}), 204),
    _row(PD, "UPDATE", R, "PUT", "/process-definition/suspended",
         on_definition("/process-definition/suspended",
                       json={"processDefinitionKey": "{key}", "suspended": True}), 204),
    _row(PD, "SUSPEND", R, "PUT", "/process-definition/{id}/suspended",
         on_definition("/process-definition/{id}/suspended", suspended=True,
                       json={"suspended": False}), 204),
    _row(PD, "SUSPEND", C, "POST", "/definitions/{key}/suspend",
         on_definition("/definitions/{key}/suspend", data={}), 200),
    _row(PD, "UPDATE", C, "POST", "/definitions/{key}/activate",
         on_definition("/definitions/{key}/activate", suspended=True, data={}), 200),
    # ---- an instance: SUSPEND (or UPDATE) on it, or SUSPEND_INSTANCE on its definition ---
    _row(PI, "SUSPEND", R, "PUT", "/process-instance/{id}/suspended",
         on_instance("/process-instance/{}/suspended", False, json={"suspended": True}), 204),
    _row(PD, "SUSPEND_INSTANCE", R, "PUT", "/process-instance/suspended",
         instances_named("/process-instance/suspended", True, suspended=True), 204),
    _row(BATCH, "CREATE", R, "POST", "/process-instance/suspended-async",
         instances_named("/process-instance/suspended-async", False, suspended=True), 200),
    # ---- deleting definitions: DELETE on the definition ---
    _row(PD, "DELETE", R, "DELETE", "/process-definition/{id}",
         on_definition("/process-definition/{id}"), 204),
    _row(PD, "DELETE", R, "DELETE", "/process-definition/key/{key}/delete",
         on_definition("/process-definition/key/{key}/delete"), 204),
    _row(PD, "DELETE", R, "DELETE", "/process-definition/key/{key}/tenant-id/{tenant_id}/delete",
         on_definition("/process-definition/key/{key}/tenant-id/{tenant}/delete", tenant=True),
         204),
    # ---- deployments ---
    _row(DEPLOYMENT, "DELETE", R, "DELETE", "/deployment/{id}",
         on_deployment("/deployment/{}", "rows"), 204),
    _row(DEPLOYMENT, "CREATE", R, "POST", "/deployment/{id}/redeploy",
         on_deployment("/deployment/{}/redeploy", "count", json={}), 200, on_any=True),
]  # fmt: skip
