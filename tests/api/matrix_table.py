"""The authorization matrix's table (tests/api/test_authorization_matrix.py): for each Camunda
resource type and permission, the routes of the console, /api/v1 and /engine-rest that need it,
each with a fresh target per call (tests/api/matrix_routes.py) and the status it answers when
allowed. Written down from Camunda 7's documented authorization rules, not read from the code
under test."""

from __future__ import annotations

from typing import Any

from engine.api import Engine
from tests.api import identity_scenarios
from tests.api.matrix_alerts import ALERT_ROWS
from tests.api.matrix_executions import EXECUTIONS_ROWS
from tests.api.matrix_filters import FILTER_ROWS
from tests.api.matrix_routes import (
    AUTHORIZATION,
    BATCH,
    CONDITIONAL,
    DECISION_DEFINITION,
    DEPLOYMENT,
    GROUP,
    GROUP_MEMBERSHIP,
    MIGRATING,
    PROCESS_DEFINITION,
    PROCESS_INSTANCE,
    SIGNALLED,
    STRAIGHT,
    TASK,
    TENANT,
    TENANT_ID,
    TENANT_MEMBERSHIP,
    TENANTED,
    USER,
    Also,
    Make,
    Resource,
    Row,
    Surface,
    Target,
    admin,
    authorization,
    batch,
    cancel_by_business_key,
    console_migration,
    console_rule,
    correlate,
    count_of,
    creating,
    creating_identity,
    deployment_files,
    ending_sessions,
    evaluate,
    external_retries_batch,
    failed_batch,
    group,
    history_delete_batch,
    hook,
    identity_counts,
    instance,
    instance_rows,
    instances_of,
    job_retries_batch,
    member,
    migration,
    migration_batch,
    modification,
    modification_batch,
    new_batch,
    on_batch,
    on_claimed,
    on_entry,
    on_external,
    on_identity,
    on_incident,
    on_instance,
    on_job,
    on_suspended,
    on_task,
    on_worker_task,
    rest_deployment,
    rest_rule,
    rest_variables,
    retry_by_message,
    scalar,
    session_of,
    signed_in,
    start,
    suspended_batch,
    tenant,
    tenant_group,
    tenant_user,
    token,
    unique,
    user,
    webhook,
    webhooks,
    with_group_field,
    with_local,
    with_user_field,
)
from tests.api.matrix_suspension import SUSPENSION_ROWS
from tests.api.matrix_tasks_jobs import TASKS_JOBS_ROWS


def cleanup_rows(engine: Engine) -> Any:
    return scalar(
        engine,
        "SELECT (SELECT json_agg(to_jsonb(r) ORDER BY r.id) FROM history_cleanup_run r),"
        " (SELECT json_agg(to_jsonb(j) ORDER BY j.id) FROM job j WHERE j.instance_id IS NULL)",
    )


def signal(path: str, body: dict[str, Any]) -> Make:
    """A fresh instance waiting for the signal `matrix-ping` (the only one that does), which
    every waiting instance receives."""

    def make(engine: Engine) -> Target:
        made = instance(engine, SIGNALLED)
        return Target(path, {"json": body}, SIGNALLED, instance_rows(made))

    return make


def condition(engine: Engine) -> Target:
    definition = engine.latest_definition(CONDITIONAL)
    body = {
        "variables": {"matrixHot": {"value": 1, "type": "Integer"}},
        "processDefinitionId": str(definition.id),
    }
    return Target("/condition", {"json": body}, CONDITIONAL, instances_of(CONDITIONAL))


def history_batch(engine: Engine) -> Target:
    """/api/v1's batch deleting the history of a fresh ended instance: CREATE on batches, and
    DELETE_HISTORY (on every definition: the items are any instances)."""
    made = instance(engine, STRAIGHT)
    body = {"json": {"type": "delete-history", "items": [made]}}
    return Target("/batches", body, "*", count_of("batch"))


def start_for_tenant(engine: Engine) -> Target:
    path = f"/process-definition/key/{TENANTED}/tenant-id/{TENANT_ID}/start"
    return Target(path, {"json": {}}, TENANTED, instances_of(TENANTED))


# -- the rows -------------------------------------------------------------------------------------

C, A, R = Surface.CONSOLE, Surface.API, Surface.REST
PD, PI = PROCESS_DEFINITION, PROCESS_INSTANCE
# A start needs CREATE on process instances (`*`) and CREATE_INSTANCE on the definition's key.
CREATE_PI = (Also(PI, "CREATE"),)
CREATE_INSTANCE_OF_KEY = (Also(PD, "CREATE_INSTANCE", on_target=True),)
# A batch migration needs, besides CREATE on batches, MIGRATE_INSTANCE on both definitions.
MIGRATE = (Also(PD, "MIGRATE_INSTANCE"),)
# So does deleting history: DELETE_HISTORY (on every definition: the items are any instances).
DELETE_HISTORY = (Also(PD, "DELETE_HISTORY"),)
# Putting a user or token into a built-in group (its role) also needs CREATE on that group's
# memberships, as Camunda's `PUT /group/{id}/members/{userId}` does (granted here on `*`).
INTO_GROUP = (Also(GROUP_MEMBERSHIP, "CREATE"),)
BEFORE_PAID = '[{"op": "before", "node": "paid"}]'
NOTE = {"name": "note", "type": "string", "value": "second"}
REST_NOTE = {"value": "second", "type": "String"}
# A Bytes variable set over multipart (`.../variables/{name}/data`).
BINARY_NOTE = {"data": ("note.bin", b"\x00\x01note", "application/octet-stream")}
DISH = {"season": "Winter", "guestCount": 4}


def _row(
    resource: Resource,
    permission: str,
    surface: Surface,
    method: str,
    route: str,
    make: Make,
    status: int,
    also: tuple[Also, ...] = (),
    on_any: bool = False,
) -> Row:
    return Row(resource, permission, surface, method, route, make, status, also, on_any)


ROWS: list[Row] = [
    # ---- process definition: starting ---
    _row(PD, "CREATE_INSTANCE", A, "POST", "/definitions/key/{key}/start",
         start("/definitions/key/{key}/start", json={}), 201, CREATE_PI),
    _row(PD, "CREATE_INSTANCE", A, "POST", "/definitions/key/{key}/versions/{version:int}/start",
         start("/definitions/key/{key}/versions/1/start", json={}), 201, CREATE_PI),
    _row(PD, "CREATE_INSTANCE", A, "POST", "/definitions/{id}/start",
         start("/definitions/{id}/start", json={}), 201, CREATE_PI),
    _row(PD, "CREATE_INSTANCE", R, "POST", "/process-definition/key/{key}/start",
         start("/process-definition/key/{key}/start", json={}), 200, CREATE_PI),
    _row(PD, "CREATE_INSTANCE", R, "POST", "/process-definition/{id}/start",
         start("/process-definition/{id}/start", json={}), 200, CREATE_PI),
    _row(PD, "CREATE_INSTANCE", R, "POST", "/process-definition/key/{key}/submit-form",
         start("/process-definition/key/{key}/submit-form", json={}), 200, CREATE_PI),
    _row(PD, "CREATE_INSTANCE", R, "POST", "/process-definition/{id}/submit-form",
         start("/process-definition/{id}/submit-form", json={}), 200, CREATE_PI),
    _row(PD, "CREATE_INSTANCE", C, "POST", "/definitions/{key}/start",
         start("/definitions/{key}/start", data={}), 200, CREATE_PI),
    _row(PI, "CREATE", A, "POST", "/definitions/key/{key}/start",
         start("/definitions/key/{key}/start", json={}), 201, CREATE_INSTANCE_OF_KEY, True),
    _row(PI, "CREATE", R, "POST", "/process-definition/key/{key}/start",
         start("/process-definition/key/{key}/start", json={}), 200, CREATE_INSTANCE_OF_KEY,
         True),
    _row(PI, "CREATE", C, "POST", "/definitions/{key}/start",
         start("/definitions/{key}/start", data={}), 200, CREATE_INSTANCE_OF_KEY, True),
    # ---- process definition / instance: changing instances ---
    _row(PD, "UPDATE_INSTANCE_VARIABLE", A, "POST", "/instances/{id}/variables",
         on_instance("/instances/{}/variables", True, json={"variables": {"note": "x"}}), 200),
    _row(PD, "UPDATE_INSTANCE_VARIABLE", R, "POST", "/process-instance/{id}/variables",
         on_instance("/process-instance/{}/variables", True,
                     json={"modifications": rest_variables(note="x")}), 204),
    _row(PD, "UPDATE_INSTANCE_VARIABLE", R, "PUT", "/process-instance/{id}/variables/{name}",
         on_instance("/process-instance/{}/variables/note", True, json=REST_NOTE), 204),
    _row(PD, "UPDATE_INSTANCE_VARIABLE", R, "DELETE", "/process-instance/{id}/variables/{name}",
         on_instance("/process-instance/{}/variables/note", True), 204),
    _row(PD, "UPDATE_INSTANCE_VARIABLE", R, "POST",
         "/process-instance/{id}/variables/{name}/data",
         on_instance("/process-instance/{}/variables/note/data", True, files=BINARY_NOTE), 204),
    _row(PD, "UPDATE_INSTANCE_VARIABLE", C, "POST", "/instances/{instance_id:uuid}/variables",
         on_instance("/instances/{}/variables", True, data=NOTE), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/instances/{id}/variables",
         on_instance("/instances/{}/variables", True, json={"variables": {"note": "x"}}), 200),
    _row(PI, "UPDATE", R, "PUT", "/process-instance/{id}/variables/{name}",
         on_instance("/process-instance/{}/variables/note", False, json=REST_NOTE), 204),
    _row(PI, "UPDATE_VARIABLE", R, "PUT", "/process-instance/{id}/variables/{name}",
         on_instance("/process-instance/{}/variables/note", False, json=REST_NOTE), 204),
    _row(PI, "UPDATE", C, "POST", "/instances/{instance_id:uuid}/variables",
         on_instance("/instances/{}/variables", False, data=NOTE), 200),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/process-instance/{id}/modification",
         on_instance("/process-instance/{}/modification", True,
                     json={"instructions": [{"type": "cancel", "activityId": "go"}]}), 204),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/modification/execute",
         lambda e: modification(e), 204),
    _row(PD, "UPDATE_INSTANCE", C, "POST", "/instances/{instance_id:uuid}/modify",
         on_instance("/instances/{}/modify", True, data={"instructions": BEFORE_PAID}), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/incidents/{id}/resolve",
         on_incident("/incidents/{}/resolve", True), 200),
    _row(PD, "UPDATE_INSTANCE", C, "POST", "/incidents/{incident_id:uuid}/resolve",
         on_incident("/incidents/{}/resolve", True), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/incidents/{id}/retry",
         on_incident("/incidents/{}/retry", True), 200),
    _row(PD, "UPDATE_INSTANCE", C, "POST", "/incidents/{incident_id:uuid}/retry",
         on_incident("/incidents/{}/retry", True), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/incidents/{id}/retries",
         on_incident("/incidents/{}/retries", True, json={"retries": 2}), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/external-tasks/{id}/retries",
         on_external("/external-tasks/{}/retries", True, json={"retries": 4}), 200),
    _row(PD, "UPDATE_INSTANCE", R, "PUT", "/external-task/{id}/retries",
         on_external("/external-task/{}/retries", True, json={"retries": 4}), 204),
    _row(PD, "UPDATE_INSTANCE", C, "POST", "/external-tasks/{task_id:uuid}/retries",
         on_external("/external-tasks/{}/retries", True, data={"retries": "4"}), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/jobs/{id}/execute",
         on_job("/jobs/{}/execute", True), 200),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/job/{id}/execute",
         on_job("/job/{}/execute", True), 204),
    _row(PD, "UPDATE_INSTANCE", C, "POST", "/jobs/{job_id:uuid}/execute",
         on_job("/jobs/{}/execute", True), 200),
    _row(PI, "UPDATE", A, "POST", "/jobs/{id}/execute", on_job("/jobs/{}/execute", False), 200),
    # ---- suspension ---
    _row(PD, "SUSPEND_INSTANCE", A, "POST", "/instances/{id}/suspend",
         on_instance("/instances/{}/suspend", True), 200),
    _row(PD, "SUSPEND_INSTANCE", A, "POST", "/instances/{id}/resume",
         on_suspended("/instances/{}/resume", True), 200),
    _row(PD, "SUSPEND_INSTANCE", C, "POST", "/instances/{instance_id:uuid}/suspend",
         on_instance("/instances/{}/suspend", True), 200),
    _row(PD, "SUSPEND_INSTANCE", C, "POST", "/instances/{instance_id:uuid}/resume",
         on_suspended("/instances/{}/resume", True), 200),
    _row(PI, "SUSPEND", A, "POST", "/instances/{id}/suspend",
         on_instance("/instances/{}/suspend", False), 200),
    _row(PI, "UPDATE", C, "POST", "/instances/{instance_id:uuid}/resume",
         on_suspended("/instances/{}/resume", False), 200),
    # ---- deleting instances ---
    _row(PD, "DELETE_INSTANCE", A, "POST", "/instances/{id}/cancel",
         on_instance("/instances/{}/cancel", True), 200),
    _row(PD, "DELETE_INSTANCE", R, "DELETE", "/process-instance/{id}",
         on_instance("/process-instance/{}", True), 204),
    _row(PD, "DELETE_INSTANCE", C, "POST", "/instances/{instance_id:uuid}/cancel",
         on_instance("/instances/{}/cancel", True), 200),
    _row(PI, "DELETE", A, "POST", "/instances/{id}/cancel",
         on_instance("/instances/{}/cancel", False), 200),
    _row(PI, "DELETE", R, "DELETE", "/process-instance/{id}",
         on_instance("/process-instance/{}", False), 204),
    _row(PI, "DELETE", C, "POST", "/instances/{instance_id:uuid}/cancel",
         on_instance("/instances/{}/cancel", False), 200),
    # ---- job retries ---
    _row(PD, "RETRY_JOB", A, "POST", "/jobs/{id}/retries",
         on_job("/jobs/{}/retries", True, json={"retries": 7}), 200),
    _row(PD, "RETRY_JOB", R, "PUT", "/job/{id}/retries",
         on_job("/job/{}/retries", True, json={"retries": 7}), 204),
    _row(PD, "RETRY_JOB", C, "POST", "/jobs/{job_id:uuid}/retries",
         on_job("/jobs/{}/retries", True, data={"retries": "7"}), 200),
    _row(PI, "RETRY_JOB", A, "POST", "/jobs/{id}/retries",
         on_job("/jobs/{}/retries", False, json={"retries": 7}), 200),
    _row(PI, "RETRY_JOB", R, "PUT", "/job/{id}/retries",
         on_job("/job/{}/retries", False, json={"retries": 7}), 204),
    # ---- tasks ---
    _row(PD, "TASK_WORK", A, "POST", "/user-tasks/{id}/complete",
         on_task("/user-tasks/{}/complete", "key", json={}), 200),
    _row(PD, "TASK_WORK", R, "POST", "/task/{id}/complete",
         on_task("/task/{}/complete", "key", json={}), 204),
    _row(PD, "TASK_WORK", C, "POST", "/tasks/{task_id:uuid}/complete",
         on_task("/tasks/{}/complete", "key", data={}), 200),
    _row(PD, "TASK_WORK", R, "POST", "/task/{id}/submit-form",
         on_task("/task/{}/submit-form", "key", json={}), 204),
    _row(PD, "TASK_WORK", C, "POST", "/tasks/{task_id:uuid}/form",
         on_task("/tasks/{}/form", "key", data={}), 200),
    _row(PD, "TASK_ASSIGN", A, "POST", "/user-tasks/{id}/assignee",
         on_task("/user-tasks/{}/assignee", "key", json={"user_id": "x"}), 200),
    _row(PD, "TASK_ASSIGN", R, "POST", "/task/{id}/assignee",
         on_task("/task/{}/assignee", "key", json={"userId": "x"}), 204),
    _row(PD, "TASK_ASSIGN", A, "POST", "/user-tasks/{id}/claim",
         on_task("/user-tasks/{}/claim", "key", json={}), 200),
    _row(PD, "TASK_ASSIGN", R, "POST", "/task/{id}/claim",
         on_task("/task/{}/claim", "key", json={"userId": "x"}), 204),
    _row(PD, "TASK_ASSIGN", C, "POST", "/tasks/{task_id:uuid}/claim",
         on_task("/tasks/{}/claim", "key", data={}), 200),
    _row(TASK, "TASK_WORK", A, "POST", "/user-tasks/{id}/complete",
         on_task("/user-tasks/{}/complete", "task", json={}), 200),
    _row(TASK, "TASK_WORK", R, "POST", "/task/{id}/complete",
         on_task("/task/{}/complete", "task", json={}), 204),
    _row(TASK, "TASK_WORK", C, "POST", "/tasks/{task_id:uuid}/complete",
         on_task("/tasks/{}/complete", "task", data={}), 200),
    _row(TASK, "TASK_ASSIGN", A, "POST", "/user-tasks/{id}/assignee",
         on_task("/user-tasks/{}/assignee", "task", json={"user_id": "x"}), 200),
    _row(TASK, "TASK_ASSIGN", R, "POST", "/task/{id}/assignee",
         on_task("/task/{}/assignee", "task", json={"userId": "x"}), 204),
    _row(TASK, "TASK_ASSIGN", R, "POST", "/task/{id}/claim",
         on_task("/task/{}/claim", "task", json={"userId": "x"}), 204),
    _row(TASK, "UPDATE", R, "POST", "/task/{id}/variables",
         on_task("/task/{}/variables", "task",
                 json={"modifications": rest_variables(note="x")}), 204),
    _row(TASK, "UPDATE", R, "PUT", "/task/{id}/variables/{name}",
         on_task("/task/{}/variables/note", "task", json=REST_NOTE), 204),
    _row(TASK, "UPDATE", R, "POST", "/task/{id}/localVariables",
         on_task("/task/{}/localVariables", "task",
                 json={"modifications": rest_variables(local="x")}), 204),
    _row(TASK, "UPDATE", R, "PUT", "/task/{id}/localVariables/{name}",
         on_task("/task/{}/localVariables/local", "task", json=REST_NOTE), 204),
    _row(TASK, "UPDATE", R, "POST", "/task/{id}/variables/{name}/data",
         on_task("/task/{}/variables/note/data", "task", files=BINARY_NOTE), 204),
    _row(TASK, "UPDATE", R, "POST", "/task/{id}/localVariables/{name}/data",
         on_task("/task/{}/localVariables/local/data", "task", files=BINARY_NOTE), 204),
    _row(TASK, "UPDATE", R, "POST", "/task/{id}/identity-links",
         on_task("/task/{}/identity-links", "task",
                 json={"groupId": "more", "type": "candidate"}), 204),
    # ---- deployments and decisions ---
    _row(DEPLOYMENT, "CREATE", A, "POST", "/deployments",
         creating("/deployments", "deployment", deployment_files), 201),
    _row(DEPLOYMENT, "CREATE", R, "POST", "/deployment/create",
         creating("/deployment/create", "deployment", rest_deployment), 200),
    _row(DECISION_DEFINITION, "CREATE_INSTANCE", A, "POST", "/decisions/{key}/evaluate",
         evaluate("/decisions/dish/evaluate", {"variables": DISH}), 200),
    _row(DECISION_DEFINITION, "CREATE_INSTANCE", R, "POST",
         "/decision-definition/key/{key}/evaluate",
         evaluate("/decision-definition/key/dish/evaluate",
                  {"variables": rest_variables(**DISH)}), 200),
    _row(DECISION_DEFINITION, "CREATE_INSTANCE", R, "POST", "/decision-definition/{id}/evaluate",
         evaluate("/decision-definition/{id}/evaluate",
                  {"variables": rest_variables(**DISH)}), 200),
    # ---- batches ---
    _row(BATCH, "CREATE", A, "POST", "/batches",
         new_batch("/batches", lambda i: {"json": {"type": "cancel-instances", "items": [i]}}),
         201),
    _row(BATCH, "CREATE", R, "POST", "/process-instance/delete",
         new_batch("/process-instance/delete",
                   lambda i: {"json": {"processInstanceIds": [i], "deleteReason": "x"}}), 200),
    _row(BATCH, "CREATE", R, "POST", "/job/retries", job_retries_batch, 200),
    _row(BATCH, "CREATE", R, "POST", "/external-task/retries-async", external_retries_batch, 200),
    _row(BATCH, "CREATE", C, "POST", "/instances/batch-cancel", cancel_by_business_key, 200),
    _row(BATCH, "CREATE", C, "POST", "/incidents/batch", retry_by_message, 200),
    _row(BATCH, "UPDATE", A, "POST", "/batches/{id}/suspend",
         on_batch("/batches/{}/suspend", batch), 200),
    _row(BATCH, "UPDATE", A, "POST", "/batches/{id}/resume",
         on_batch("/batches/{}/resume", suspended_batch), 200),
    _row(BATCH, "UPDATE", R, "PUT", "/batch/{id}/suspended",
         on_batch("/batch/{}/suspended", batch, json={"suspended": True}), 204),
    _row(BATCH, "UPDATE", C, "POST", "/batches/{batch_id:uuid}/suspend",
         on_batch("/batches/{}/suspend", batch), 200),
    _row(BATCH, "UPDATE", C, "POST", "/batches/{batch_id:uuid}/resume",
         on_batch("/batches/{}/resume", suspended_batch), 200),
    _row(BATCH, "DELETE", A, "POST", "/batches/{id}/cancel",
         on_batch("/batches/{}/cancel", batch), 200),
    _row(BATCH, "DELETE", R, "DELETE", "/batch/{id}", on_batch("/batch/{}", batch), 204),
    _row(BATCH, "DELETE", C, "POST", "/batches/{batch_id:uuid}/cancel",
         on_batch("/batches/{}/cancel", batch), 200),
    # ---- users ---
    _row(USER, "CREATE", R, "POST", "/user/create",
         creating_identity("/user/create", lambda: {
             "json": {"profile": {"id": unique("new-user")},
                      "credentials": {"password": "a-long-password"}}}), 204),
    _row(USER, "CREATE", C, "POST", "/admin/users",
         creating_identity("/admin/users", lambda: {
             "data": {"id": unique("new-user"), "password": "a-long-password"}}), 200),
    _row(USER, "UPDATE", R, "PUT", "/user/{id}/profile",
         on_identity("/user/{0}/profile", user, json={"firstName": "Changed"}), 204),
    _row(USER, "UPDATE", A, "POST", "/users/{name}/profile",
         on_identity("/users/{0}/profile", user, json={"first_name": "Changed"}), 200),
    _row(USER, "UPDATE", C, "POST", "/admin/users/{user_id}/profile",
         on_identity("/admin/users/{0}/profile", user, data={"first_name": "Changed"}), 200),
    _row(USER, "UPDATE", R, "PUT", "/user/{id}/credentials",
         on_identity("/user/{0}/credentials", user, json={"password": "another-long-one"}),
         204),
    _row(USER, "UPDATE", C, "POST", "/admin/users/{user_id}/password",
         on_identity("/admin/users/{0}/password", user, data={"password": "another-long-one"}),
         200),
    _row(USER, "DELETE", R, "DELETE", "/user/{id}", on_identity("/user/{0}", user), 204),
    _row(USER, "DELETE", C, "POST", "/admin/users/{user_id}/delete",
         on_identity("/admin/users/{0}/delete", user), 200),
    # ---- groups ---
    _row(GROUP, "CREATE", R, "POST", "/group/create",
         creating_identity("/group/create",
                           lambda: {"json": {"id": unique("new-group"), "name": "G"}}), 204),
    _row(GROUP, "CREATE", A, "POST", "/groups",
         creating_identity("/groups", lambda: {"json": {"id": unique("new-group")}}), 201),
    _row(GROUP, "CREATE", C, "POST", "/admin/groups",
         creating_identity("/admin/groups", lambda: {"data": {"id": unique("new-group")}}), 200),
    _row(GROUP, "UPDATE", R, "PUT", "/group/{id}",
         on_identity("/group/{0}", group, json={"name": "Renamed"}), 204),
    _row(GROUP, "UPDATE", A, "POST", "/groups/{id}",
         on_identity("/groups/{0}", group, json={"name": "Renamed"}), 200),
    _row(GROUP, "UPDATE", C, "POST", "/admin/groups/{group_id}/rename",
         on_identity("/admin/groups/{0}/rename", group, data={"name": "Renamed"}), 200),
    _row(GROUP, "DELETE", R, "DELETE", "/group/{id}", on_identity("/group/{0}", group), 204),
    _row(GROUP, "DELETE", A, "DELETE", "/groups/{id}", on_identity("/groups/{0}", group), 204),
    _row(GROUP, "DELETE", C, "POST", "/admin/groups/{group_id}/delete",
         on_identity("/admin/groups/{0}/delete", group), 200),
    # ---- group memberships (the grant names the group) ---
    _row(GROUP_MEMBERSHIP, "CREATE", R, "PUT", "/group/{id}/members/{name}",
         on_identity("/group/{0}/members/{1}", lambda e: (group(e), user(e))), 204),
    _row(GROUP_MEMBERSHIP, "CREATE", A, "POST", "/groups/{id}/members/{name}",
         on_identity("/groups/{0}/members/{1}", lambda e: (group(e), user(e))), 204),
    _row(GROUP_MEMBERSHIP, "CREATE", C, "POST", "/admin/groups/{group_id}/members/add",
         lambda e: with_user_field("/admin/groups/{0}/members/add", (group(e), user(e))), 200),
    _row(GROUP_MEMBERSHIP, "CREATE", C, "POST", "/admin/users/{user_id}/groups/add",
         lambda e: with_group_field("/admin/users/{1}/groups/add", (group(e), user(e))), 200),
    _row(GROUP_MEMBERSHIP, "DELETE", R, "DELETE", "/group/{id}/members/{name}",
         on_identity("/group/{0}/members/{1}", member), 204),
    _row(GROUP_MEMBERSHIP, "DELETE", A, "DELETE", "/groups/{id}/members/{name}",
         on_identity("/groups/{0}/members/{1}", member), 204),
    _row(GROUP_MEMBERSHIP, "DELETE", C, "POST", "/admin/groups/{group_id}/members/remove",
         lambda e: with_user_field("/admin/groups/{0}/members/remove", member(e)), 200),
    _row(GROUP_MEMBERSHIP, "DELETE", C, "POST", "/admin/users/{user_id}/groups/remove",
         lambda e: with_group_field("/admin/users/{1}/groups/remove", member(e)), 200),
    # ---- tenants ---
    _row(TENANT, "CREATE", R, "POST", "/tenant/create",
         creating_identity("/tenant/create",
                           lambda: {"json": {"id": unique("new-tenant"), "name": "T"}}), 204),
    _row(TENANT, "CREATE", A, "POST", "/tenants",
         creating_identity("/tenants", lambda: {"json": {"id": unique("new-tenant")}}), 201),
    _row(TENANT, "CREATE", C, "POST", "/admin/tenants",
         creating_identity("/admin/tenants", lambda: {"data": {"id": unique("new-tenant")}}),
         200),
    _row(TENANT, "UPDATE", R, "PUT", "/tenant/{id}",
         on_identity("/tenant/{0}", tenant, json={"name": "Renamed"}), 204),
    _row(TENANT, "UPDATE", A, "POST", "/tenants/{id}",
         on_identity("/tenants/{0}", tenant, json={"name": "Renamed"}), 200),
    _row(TENANT, "UPDATE", C, "POST", "/admin/tenants/{tenant_id}/rename",
         on_identity("/admin/tenants/{0}/rename", tenant, data={"name": "Renamed"}), 200),
    _row(TENANT, "DELETE", R, "DELETE", "/tenant/{id}", on_identity("/tenant/{0}", tenant), 204),
    _row(TENANT, "DELETE", A, "DELETE", "/tenants/{id}",
         on_identity("/tenants/{0}", tenant), 204),
    _row(TENANT, "DELETE", C, "POST", "/admin/tenants/{tenant_id}/delete",
         on_identity("/admin/tenants/{0}/delete", tenant), 200),
    # ---- tenant memberships (the grant names the tenant) ---
    _row(TENANT_MEMBERSHIP, "CREATE", R, "PUT", "/tenant/{id}/user-members/{name}",
         on_identity("/tenant/{0}/user-members/{1}", lambda e: (tenant(e), user(e))), 204),
    _row(TENANT_MEMBERSHIP, "CREATE", R, "PUT", "/tenant/{id}/group-members/{name}",
         on_identity("/tenant/{0}/group-members/{1}", lambda e: (tenant(e), group(e))), 204),
    _row(TENANT_MEMBERSHIP, "CREATE", A, "POST", "/tenants/{id}/users/{name}",
         on_identity("/tenants/{0}/users/{1}", lambda e: (tenant(e), user(e))), 204),
    _row(TENANT_MEMBERSHIP, "CREATE", A, "POST", "/tenants/{id}/groups/{name}",
         on_identity("/tenants/{0}/groups/{1}", lambda e: (tenant(e), group(e))), 204),
    _row(TENANT_MEMBERSHIP, "CREATE", C, "POST", "/admin/tenants/{tenant_id}/members/add",
         lambda e: with_user_field("/admin/tenants/{0}/members/add", (tenant(e), user(e))),
         200),
    _row(TENANT_MEMBERSHIP, "DELETE", R, "DELETE", "/tenant/{id}/user-members/{name}",
         on_identity("/tenant/{0}/user-members/{1}", tenant_user), 204),
    _row(TENANT_MEMBERSHIP, "DELETE", R, "DELETE", "/tenant/{id}/group-members/{name}",
         on_identity("/tenant/{0}/group-members/{1}", tenant_group), 204),
    _row(TENANT_MEMBERSHIP, "DELETE", A, "DELETE", "/tenants/{id}/users/{name}",
         on_identity("/tenants/{0}/users/{1}", tenant_user), 204),
    _row(TENANT_MEMBERSHIP, "DELETE", A, "DELETE", "/tenants/{id}/groups/{name}",
         on_identity("/tenants/{0}/groups/{1}", tenant_group), 204),
    _row(TENANT_MEMBERSHIP, "DELETE", C, "POST", "/admin/tenants/{tenant_id}/members/remove",
         lambda e: with_user_field("/admin/tenants/{0}/members/remove", tenant_user(e)), 200),
    # ---- authorizations ---
    _row(AUTHORIZATION, "CREATE", R, "POST", "/authorization/create",
         creating_identity("/authorization/create", lambda: {"json": rest_rule()}), 200),
    _row(AUTHORIZATION, "CREATE", A, "POST", "/authorizations",
         creating_identity("/authorizations", identity_scenarios._rule_body), 201),
    _row(AUTHORIZATION, "CREATE", C, "POST", "/admin/authorizations",
         creating_identity("/admin/authorizations", lambda: {"data": console_rule()}), 200),
    _row(AUTHORIZATION, "UPDATE", R, "PUT", "/authorization/{id}",
         on_identity("/authorization/{0}", authorization, json=rest_rule()), 204),
    _row(AUTHORIZATION, "UPDATE", A, "POST", "/authorizations/{id}",
         lambda e: on_identity("/authorizations/{0}", authorization,
                               **identity_scenarios._rule_body())(e), 200),
    _row(AUTHORIZATION, "UPDATE", C, "POST", "/admin/authorizations/{rule_id:uuid}",
         on_identity("/admin/authorizations/{0}", authorization, data=console_rule()), 200),
    _row(AUTHORIZATION, "DELETE", R, "DELETE", "/authorization/{id}",
         on_identity("/authorization/{0}", authorization), 204),
    _row(AUTHORIZATION, "DELETE", A, "DELETE", "/authorizations/{id}",
         on_identity("/authorizations/{0}", authorization), 204),
    _row(AUTHORIZATION, "DELETE", C, "POST", "/admin/authorizations/{rule_id:uuid}/delete",
         on_identity("/admin/authorizations/{0}/delete", authorization), 200),
    # ---- external tasks reported by their worker ---
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/external-tasks/{id}/complete",
         on_worker_task("/external-tasks/{}/complete", {}, "worker_id"), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/external-tasks/{id}/failure",
         on_worker_task("/external-tasks/{}/failure", {"error_message": "no", "retries": 1},
                        "worker_id"), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/external-tasks/{id}/bpmn-error",
         on_worker_task("/external-tasks/{}/bpmn-error", {"error_code": "E"}, "worker_id"), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/external-tasks/{id}/extend-lock",
         on_worker_task("/external-tasks/{}/extend-lock", {"new_duration_ms": 900_000},
                        "worker_id"), 200),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/external-tasks/{id}/unlock",
         on_worker_task("/external-tasks/{}/unlock", {}, ""), 200),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/external-task/{id}/complete",
         on_worker_task("/external-task/{}/complete", {}, "workerId"), 204),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/external-task/{id}/failure",
         on_worker_task("/external-task/{}/failure",
                        {"errorMessage": "no", "retries": 1, "retryTimeout": 0}, "workerId"), 204),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/external-task/{id}/bpmnError",
         on_worker_task("/external-task/{}/bpmnError", {"errorCode": "E"}, "workerId"), 204),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/external-task/{id}/extendLock",
         on_worker_task("/external-task/{}/extendLock", {"newDuration": 900_000}, "workerId"),
         204),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/external-task/{id}/unlock",
         on_worker_task("/external-task/{}/unlock", {}, "workerId"), 204),
    _row(PD, "UPDATE_INSTANCE", C, "POST", "/external-tasks/{task_id:uuid}/unlock",
         on_worker_task("/external-tasks/{}/unlock", {}, "", form=True), 200),
    # ---- messages ---
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/messages",
         correlate("/messages", lambda bk: {"message_name": "order-paid", "business_key": bk}),
         200),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/message",
         correlate("/message", lambda bk: {"messageName": "order-paid", "businessKey": bk}), 204),
    # ---- releasing a claimed task ---
    _row(PD, "TASK_ASSIGN", A, "POST", "/user-tasks/{id}/unclaim",
         on_claimed("/user-tasks/{}/unclaim", json={}), 200),
    _row(PD, "TASK_ASSIGN", R, "POST", "/task/{id}/unclaim",
         on_claimed("/task/{}/unclaim", json={}), 204),
    _row(PD, "TASK_ASSIGN", C, "POST", "/tasks/{task_id:uuid}/unclaim",
         on_claimed("/tasks/{}/unclaim", data={}), 200),
    _row(TASK, "UPDATE", R, "DELETE", "/task/{id}/variables/{name}",
         on_task("/task/{}/variables/note", "task"), 204),
    _row(TASK, "UPDATE", R, "POST", "/task/{id}/identity-links/delete",
         on_task("/task/{}/identity-links/delete", "task",
                 json={"groupId": "reviewers", "type": "candidate"}), 204),
    # ---- more batches ---
    _row(BATCH, "CREATE", R, "POST", "/history/process-instance/delete", history_delete_batch,
         200, DELETE_HISTORY),
    _row(PD, "DELETE_HISTORY", R, "POST", "/history/process-instance/delete",
         history_delete_batch, 200, (Also(BATCH, "CREATE"),), on_any=True),
    _row(BATCH, "CREATE", R, "POST", "/modification/executeAsync", modification_batch, 200),
    _row(BATCH, "UPDATE", A, "POST", "/batches/{id}/retry",
         on_batch("/batches/{}/retry", failed_batch), 200),
    _row(BATCH, "UPDATE", C, "POST", "/batches/{batch_id:uuid}/retry",
         on_batch("/batches/{}/retry", failed_batch), 200),
    # ---- users over /api/v1 ---
    _row(USER, "CREATE", A, "POST", "/users",
         creating_identity("/users", lambda: {
             "json": {"name": unique("new-user"), "role": "viewer"}}), 201, INTO_GROUP),
    _row(USER, "UPDATE", A, "POST", "/users/{name}/password",
         on_identity("/users/{0}/password", user, json={"password": "another-long-one"}), 204),
    _row(USER, "DELETE", A, "DELETE", "/users/{name}", on_identity("/users/{0}", user), 204),
]  # fmt: skip


ALL = "ALL"
ADMIN_ROWS: list[Row] = [
    _row(AUTHORIZATION, ALL, A, "POST", "/tokens",
         admin("/tokens", None, identity_counts, json={"name": unique("t"), "role": "viewer"}), 201,
         INTO_GROUP, on_any=True),
    _row(AUTHORIZATION, ALL, A, "POST", "/tokens/{name}/role",
         admin("/tokens/{0}/role", token, None, json={"role": "operator"}), 204,
         INTO_GROUP, on_any=True),
    _row(AUTHORIZATION, ALL, A, "DELETE", "/tokens/{name}",
         admin("/tokens/{0}", token, None), 204, on_any=True),
    _row(AUTHORIZATION, ALL, A, "POST", "/users/{name}/role",
         admin("/users/{0}/role", user, None, json={"role": "operator"}), 204,
         INTO_GROUP, on_any=True),
    _row(USER, "UPDATE", A, "DELETE", "/users/{name}/sessions",
         ending_sessions("/users/{0}/sessions", signed_in), 200),
    _row(USER, "UPDATE", A, "DELETE", "/sessions/{id}",
         ending_sessions("/sessions/{0}", session_of), 204),
    # Unlocking changes no row but the audit log (the server counts the failed log-ins).
    _row(AUTHORIZATION, ALL, R, "POST", "/user/{id}/unlock",
         admin("/user/{0}/unlock", user, count_of("audit_entry")), 204, on_any=True),
    _row(AUTHORIZATION, ALL, A, "POST", "/webhooks",
         lambda e: admin("/webhooks", None, webhooks, json=hook(enabled=False))(e), 201,
         on_any=True),
    _row(AUTHORIZATION, ALL, A, "POST", "/webhooks/{id}",
         admin("/webhooks/{0}", webhook, webhooks, json={"name": "renamed"}), 200, on_any=True),
    _row(AUTHORIZATION, ALL, A, "DELETE", "/webhooks/{id}",
         admin("/webhooks/{0}", webhook, webhooks), 204, on_any=True),
    _row(AUTHORIZATION, ALL, C, "POST", "/webhooks",
         lambda e: admin("/webhooks", None, webhooks, data=hook())(e), 200, on_any=True),
    _row(AUTHORIZATION, ALL, C, "POST", "/webhooks/{subscription_id:uuid}",
         admin("/webhooks/{0}", webhook, webhooks,
               data={"name": "renamed", "url": "http://127.0.0.1:9/"}), 200, on_any=True),
    _row(AUTHORIZATION, ALL, C, "POST", "/webhooks/{subscription_id:uuid}/delete",
         admin("/webhooks/{0}/delete", webhook, webhooks), 200, on_any=True),
    _row(PI, "UPDATE", A, "POST", "/webhooks/{id}/replay",
         admin("/webhooks/{0}/replay", webhook, webhooks), 200, on_any=True),
    _row(PI, "UPDATE", A, "POST", "/webhooks/{id}/deliveries/{delivery_id}/replay",
         admin("/webhooks/{0}/deliveries/{1}/replay", webhook, webhooks), 200, on_any=True),
    _row(PI, "UPDATE", C, "POST", "/webhooks/{subscription_id:uuid}/replay",
         admin("/webhooks/{0}/replay", webhook, webhooks), 200, on_any=True),
    _row(PI, "UPDATE", C, "POST",
         "/webhooks/{subscription_id:uuid}/deliveries/{delivery_id:uuid}/replay",
         admin("/webhooks/{0}/deliveries/{1}/replay", webhook, webhooks), 200, on_any=True),
]  # fmt: skip
ROWS += ADMIN_ROWS


MORE_ROWS: list[Row] = [
    # A cleanup asks membership of camunda-admin in Camunda; UPDATE on every instance here.
    # (A worker's fetch is narrowed, never refused: test_a_fetch_locks_only_what_it_may_update.)
    _row(PI, "UPDATE", R, "POST", "/history/cleanup",
         admin("/history/cleanup", None, cleanup_rows), 200, on_any=True),
    _row(PD, "CREATE_INSTANCE", R, "POST", "/condition", condition, 200, CREATE_PI),
    _row(BATCH, "CREATE", A, "POST", "/batches", history_batch, 201, DELETE_HISTORY),
    _row(PD, "DELETE_HISTORY", A, "POST", "/batches", history_batch, 201,
         (Also(BATCH, "CREATE"),), on_any=True),
    _row(PD, "CREATE_INSTANCE", R, "POST",
         "/process-definition/key/{key}/tenant-id/{tenant_id}/start", start_for_tenant, 200,
         CREATE_PI),
    _row(TASK, "UPDATE", R, "DELETE", "/task/{id}/localVariables/{name}",
         with_local("/task/{}/localVariables/local"), 204),
    _row(PD, "MIGRATE_INSTANCE", C, "POST", "/definitions/{key}/migrate/run",
         console_migration(f"/definitions/{MIGRATING}/migrate/run", None), 200),
    _row(BATCH, "CREATE", C, "POST", "/definitions/{key}/migrate/batch",
         console_migration(f"/definitions/{MIGRATING}/migrate/batch", "batch"), 200, MIGRATE),
    _row(PD, "MIGRATE_INSTANCE", R, "POST", "/migration/execute", migration, 204),
    _row(BATCH, "CREATE", R, "POST", "/migration/executeAsync", migration_batch, 200, MIGRATE),
    _row(PD, "UPDATE_INSTANCE", A, "POST", "/signals",
         signal("/signals", {"signal_name": "matrix-ping"}), 200),
    _row(PD, "UPDATE_INSTANCE", R, "POST", "/signal",
         signal("/signal", {"name": "matrix-ping"}), 204),
    _row(PI, "UPDATE", C, "POST", "/cleanup/start",
         admin("/cleanup/start", None, cleanup_rows, data={}), 200, on_any=True),
]  # fmt: skip
ROWS += MORE_ROWS


ANNOTATION_ROWS: list[Row] = [
    _row(PD, "UPDATE_HISTORY", R, "PUT", "/history/user-operation/{id}/set-annotation",
         on_entry("/history/user-operation/{}/set-annotation", None, json={"annotation": "x"}),
         204),
    _row(PD, "UPDATE_HISTORY", R, "PUT", "/history/user-operation/{id}/clear-annotation",
         on_entry("/history/user-operation/{}/clear-annotation", "noted"), 204),
    _row(PD, "UPDATE_HISTORY", C, "POST", "/audit/{entry_id:uuid}/annotation",
         on_entry("/audit/{}/annotation", None, data={"annotation": "x"}), 200),
]  # fmt: skip
ROWS += ANNOTATION_ROWS
ROWS += SUSPENSION_ROWS
ROWS += TASKS_JOBS_ROWS
ROWS += FILTER_ROWS
ROWS += EXECUTIONS_ROWS
ROWS += ALERT_ROWS
