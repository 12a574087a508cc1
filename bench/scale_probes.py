"""What bench/console_at_scale.py times: every console page and fragment, every /api/v1 and
/engine-rest GET (lists and counts with each filter), against ids of the generated database.

Every declared GET route must be exercised by a probe or be listed in NOT_TIMED with a reason:
tests/integration/test_console_at_scale.py checks it and requests each probe once on a small fill.
A new GET route goes into its surface's list here."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from app.console.inspector import PANELS
from bench.scale_fill import (
    ADMIN,
    DEPLOYMENT,
    FILTER_ID,
    KIND_EXTERNAL_TASK,
    KIND_INCIDENT,
    KIND_INSTANCE,
    KIND_JOB,
    KIND_USER_TASK,
    PARALLEL,
    RESOURCE,
    WEBHOOK_ID,
    Sizes,
    uid,
)
from engine.model.job_definitions import job_definition_id
from engine.states import JobKind

# A batch id the fill never creates.
NO_BATCH = "00000000-0000-4000-8000-0000000ba7c4"
# An id no row of the fill has: the fill writes no task comment nor attachment.
NO_ROW = "00000000-0000-4000-8000-000000000000"


@dataclass(frozen=True)
class Sample:
    """Ids the probes address: a running instance (with variables, a task, an incident...), an
    ended one, the running instance's user task, external task, incident and job, and the
    deployment of PARALLEL's definition and its file."""

    definition_id: str
    running: str
    ended: str
    user_task: str
    external_task: str
    incident: str
    job: str
    webhook: str = WEBHOOK_ID
    key: str = PARALLEL
    deployment: str = NO_ROW
    resource: str = NO_ROW

    @property
    def job_definition(self) -> str:
        """The job definition of PARALLEL's boundary timer."""
        return job_definition_id(self.definition_id, "remind", JobKind.TIMER)


def sample(sizes: Sizes, definitions: dict[str, str]) -> Sample:
    # The first running instance whose number is a multiple of --variables-every has variables.
    n = sizes.every
    while n % sizes.variables_every:
        n += sizes.every
    if n / sizes.every > sizes.active:
        n = sizes.every
    return Sample(
        definition_id=definitions[PARALLEL],
        running=uid(KIND_INSTANCE, n),
        ended=uid(KIND_INSTANCE, 1),
        user_task=uid(KIND_USER_TASK, n),
        external_task=uid(KIND_EXTERNAL_TASK, n),
        incident=uid(KIND_INCIDENT, n),
        job=uid(KIND_JOB, n),
        deployment=definitions[DEPLOYMENT],
        resource=definitions[RESOURCE],
    )


@dataclass(frozen=True)
class Probe:
    """One timed GET: `surface` is console, api or camunda; `route` the declared path template
    it exercises (every GET route must have a probe: a test checks it); `path` the request."""

    surface: str
    route: str
    path: str
    # The status the route answers the generated database with.
    expect: int = 200


def console_probes(s: Sample) -> list[Probe]:
    def p(route: str, path: str | None = None) -> Probe:
        return Probe("console", route, path or route)

    instance = "/instances/{instance_id:uuid}"
    rows = "/instances?fragment=rows"
    return [
        p("/"),
        p("/overview/body"),
        p("/definitions"),
        p("/definitions/{key}", f"/definitions/{s.key}"),
        p("/definitions/{key}/stats", f"/definitions/{s.key}/stats"),
        p("/definitions/{key}/diagram.json", f"/definitions/{s.key}/diagram.json"),
        p("/definitions/{key}/xml", f"/definitions/{s.key}/xml"),
        # The history view: a definition's visits, durations and incidents over 30 days.
        p("/definitions/{key}", f"/definitions/{s.key}?view=history&period=30d"),
        p("/definitions/{key}/diagram.json", f"/definitions/{s.key}/diagram.json?view=history"),
        p("/definitions/{key}/migrate", f"/definitions/{s.key}/migrate"),
        # Stuck-instance alerts: the page, its live fragment (filtered too), a definition's panel.
        p("/alerts"),
        p("/alerts/body"),
        p("/alerts/body", f"/alerts/body?definition={s.key}&kind=waiting"),
        p("/alerts/body", f"/alerts/body?definition={s.key}&kind=incident"),
        p("/definitions/{key}/alerts", f"/definitions/{s.key}/alerts"),
        p("/deployments/{id}", f"/deployments/{s.deployment}"),
        p("/deployments/{id}/files/{rid}", f"/deployments/{s.deployment}/files/{s.resource}"),
        p("/decisions"),
        # The fill deploys no decision.
        Probe("console", "/decisions/{key}", f"/decisions/{s.key}?period=30d", 404),
        p("/instances"),
        p("/instances", rows),
        p("/instances", f"{rows}&definition={s.key}"),
        p("/instances", f"{rows}&definition={s.key}&version=1"),
        p("/instances", f"{rows}&state=Active"),
        p("/instances", f"{rows}&state=Suspended"),
        p("/instances", f"{rows}&state=Completed"),
        p("/instances", f"{rows}&state=Terminated"),
        p("/instances", f"{rows}&business_key=order-3"),
        p("/instances", f"{rows}&incident=yes"),
        p("/instances", f"{rows}&incident=no"),
        p("/instances", f"{rows}&retrying=yes"),
        p("/instances", f"{rows}&retrying=no"),
        p("/instances", f"{rows}&started_from=2020-01-01&started_to=2100-01-01"),
        p("/instances", f"{rows}&var_name=customer&var_value=customer-5"),
        p("/instances", f"{rows}&root=true"),
        p("/instances", f"{rows}&called_by={s.running}"),
        p("/instances", f"{rows}&definition={s.key}&state=Active&incident=yes"),
        # Each sort of the list, both ways, and one continued after a cursor of its sort.
        *(
            p("/instances", f"{rows}&sort={by}&order={order}")
            for by in ("started", "ended", "state", "business_key", "definition")
            for order in ("asc", "desc")
        ),
        p("/instances", f"{rows}&state=Active&sort=business_key&order=asc"),
        p("/instances", f"{rows}&definition={s.key}&sort=ended&order=desc"),
        p(instance, f"/instances/{s.running}"),
        p(instance, f"/instances/{s.ended}"),
        p(f"{instance}/header", f"/instances/{s.running}/header"),
        *(p(f"{instance}/panel/{{name}}", f"/instances/{s.running}/panel/{n}") for n in PANELS),
        *(p(f"{instance}/panel/{{name}}", f"/instances/{s.ended}/panel/{n}") for n in PANELS),
        p(f"{instance}/diagram.json", f"/instances/{s.running}/diagram.json"),
        # The fill writes no Bytes nor File variable: `amount` is no download.
        Probe(
            "console",
            f"{instance}/variables/data",
            f"/instances/{s.running}/variables/data?name=amount",
            404,
        ),
        # One live refresh of an open inspector: every part, and the tokens panel alone.
        p(f"{instance}/live", f"/instances/{s.running}/live"),
        p(f"{instance}/live", f"/instances/{s.running}/live?parts=tokens"),
        p("/definitions/{key}/live", f"/definitions/{s.key}/live"),
        # Exports are streams: a narrow filter, so the probe times a whole answer.
        p("/instances/export.{format}", "/instances/export.csv?business_key=order-3"),
        p("/instances/export.{format}", "/instances/export.json?business_key=order-3"),
        p("/instances/export.{format}", "/instances/export.csv?retrying=yes"),
        p("/incidents/export.{format}", f"/incidents/export.csv?definition={s.key}&text=zz-none"),
        p("/tasks/export.{format}", "/tasks/export.json?show=mine"),
        # The fill attaches nothing to a task.
        Probe(
            "console",
            "/tasks/{task_id:uuid}/attachments/{attachment_id:uuid}",
            f"/tasks/{s.user_task}/attachments/{NO_ROW}",
            404,
        ),
        Probe("console", "/jump", f"/jump?q={s.running}", expect=303),
        Probe("console", "/jump", "/jump?q=order-3", expect=303),
        Probe("console", "/jump", f"/jump?q={s.key}", expect=303),
        # The short id a list shows, a business key in another case, the start of many keys.
        Probe("console", "/jump", f"/jump?q={str(s.running)[-8:]}", expect=303),
        Probe("console", "/jump", "/jump?q=ORDER-3", expect=303),
        Probe("console", "/jump", "/jump?q=order-1"),
        # A variable as an export's column, over the first batch of the list.
        p("/instances/export.{format}", "/instances/export.csv?variables=amount,region"),
        # What a batch over a filter would touch: a count and a sample.
        p("/instances/batch-preview", f"/instances/batch-preview?action=cancel&definition={s.key}"),
        p("/instances/batch-preview", "/instances/batch-preview?action=cancel"),
        p("/incidents/batch-preview", f"/incidents/batch-preview?definition={s.key}"),
        p("/incidents"),
        p("/incidents", "/incidents?fragment=rows"),
        p("/incidents", f"/incidents?fragment=rows&definition={s.key}"),
        p("/incidents", "/incidents?fragment=rows&type=failedJob"),
        p("/incidents", "/incidents?fragment=rows&node=check"),
        p("/incidents", "/incidents?fragment=rows&text=unavailable"),
        # Grouped by node and message; a group's incidents.
        p("/incidents", "/incidents?group=node"),
        p("/incidents", "/incidents?fragment=rows&group=node"),
        p("/incidents", f"/incidents?fragment=rows&group=node&definition={s.key}"),
        p("/incidents", "/incidents?fragment=group&node=check&message=service+unavailable"),
        p("/tasks"),
        p("/tasks", "/tasks?fragment=rows&show=all"),
        p("/tasks", "/tasks?fragment=rows&show=mine"),
        p("/tasks", "/tasks?fragment=rows&show=unassigned"),
        p("/tasks", f"/tasks?fragment=rows&show=all&definition={s.key}"),
        p("/workers"),
        p("/workers", "/workers?fragment=1"),
        p("/cleanup"),
        p("/batches"),
        p("/batches", "/batches?fragment=rows"),
        # The fill creates no batch.
        Probe("console", "/batches/{batch_id:uuid}", f"/batches/{NO_BATCH}", 404),
        p("/webhooks"),
        p("/webhooks/{subscription_id:uuid}", f"/webhooks/{s.webhook}"),
        p("/sessions"),
        Probe("console", "/admin", "/admin", 303),
        p("/admin/users"),
        p("/admin/users", "/admin/users?fragment=1&like=adm"),
        p("/admin/users/{user_id}", f"/admin/users/{ADMIN}"),
        p("/admin/groups"),
        p("/admin/groups/{group_id}", "/admin/groups/admin"),
        p("/admin/tenants"),
        # The fill creates no tenant and no authorization of its own.
        Probe("console", "/admin/tenants/{tenant_id}", "/admin/tenants/no-tenant", 404),
        p("/admin/authorizations"),
        p("/admin/authorizations", "/admin/authorizations?resource=Batch&fragment=1"),
        Probe(
            "console",
            "/admin/authorizations/{rule_id:uuid}",
            f"/admin/authorizations/{NO_BATCH}",
            404,
        ),
        p("/account"),
        p("/audit"),
        p("/audit", "/audit?fragment=rows"),
        p("/audit", f"/audit?fragment=rows&instance={s.running}"),
        p("/audit", "/audit?fragment=rows&user=admin&operation=Retry&from=2020-01-01T00:00"),
    ]


def api_probes(s: Sample) -> list[Probe]:
    def p(route: str, path: str | None = None) -> Probe:
        return Probe("api", route, "/api/v1" + (path or route))

    return [
        p("/definitions"),
        p("/definitions", f"/definitions?key={s.key}"),
        p("/definitions/key/{key}", f"/definitions/key/{s.key}"),
        p("/definitions/{id}", f"/definitions/{quote(s.definition_id)}"),
        p("/definitions/{id}/xml", f"/definitions/{quote(s.definition_id)}/xml"),
        # The fill deploys no decision and evaluates none.
        p("/decisions"),
        p("/decisions", f"/decisions?key={s.key}"),
        Probe("api", "/decisions/{id}", f"/api/v1/decisions/{quote(s.definition_id)}", 404),
        p("/decision-evaluations"),
        p("/decision-evaluations", f"/decision-evaluations?key={s.key}"),
        p("/decision-evaluations", f"/decision-evaluations?instance_id={s.running}"),
        p("/instances"),
        p("/instances", f"/instances?definition_key={s.key}"),
        p("/instances", f"/instances?definition_id={quote(s.definition_id)}"),
        p("/instances", f"/instances?definition_key={s.key}&version=1"),
        p("/instances", "/instances?state=Active"),
        p("/instances", "/instances?state=Completed"),
        p("/instances", "/instances?business_key=order-3"),
        p("/instances", "/instances?has_incident=true"),
        p("/instances", "/instances?has_incident=false"),
        p("/instances", "/instances?retrying=true"),
        p("/instances", "/instances?retrying=false"),
        p("/instances", "/instances?started_after=2020-01-01T00:00:00Z"),
        p("/instances", "/instances?started_before=2100-01-01T00:00:00Z"),
        p("/instances", '/instances?var=customer:"customer-5"'),
        p("/instances", "/instances?root_only=true"),
        p("/instances", f"/instances?called_by={s.running}"),
        p("/instances", "/instances?limit=500"),
        p("/instances/{id}", f"/instances/{s.running}"),
        p("/instances/{id}/tokens", f"/instances/{s.running}/tokens"),
        p("/instances/{id}/history", f"/instances/{s.running}/history"),
        p("/instances/{id}/variables", f"/instances/{s.running}/variables"),
        p("/user-tasks"),
        p("/user-tasks", "/user-tasks?limit=1000"),
        p("/user-tasks", f"/user-tasks?instance_id={s.running}"),
        p("/user-tasks", f"/user-tasks?definition_key={s.key}"),
        p("/user-tasks", f"/user-tasks?assignee={ADMIN}"),
        p("/user-tasks", "/user-tasks?candidate_group=clerks"),
        p("/user-tasks", "/user-tasks?candidate_user=nobody"),
        p("/user-tasks", "/user-tasks?state=Completed"),
        p("/user-tasks/{id}", f"/user-tasks/{s.user_task}"),
        p("/external-tasks"),
        p("/external-tasks", "/external-tasks?limit=1000"),
        p("/external-tasks", "/external-tasks?topic=check"),
        p("/external-tasks", f"/external-tasks?instance_id={s.running}"),
        p("/external-tasks", "/external-tasks?worker_id=worker-0"),
        p("/external-tasks", "/external-tasks?locked=true"),
        p("/external-tasks", "/external-tasks?locked=false"),
        p("/external-tasks/{id}", f"/external-tasks/{s.external_task}"),
        p("/incidents"),
        p("/incidents", "/incidents?limit=1000"),
        p("/incidents", f"/incidents?instance_id={s.running}"),
        p("/incidents", f"/incidents?definition_key={s.key}"),
        p("/incidents", f"/incidents?definition_id={quote(s.definition_id)}"),
        p("/incidents", "/incidents?type=failedJob"),
        p("/incidents", "/incidents?node_id=check"),
        p("/incidents", "/incidents?state=Resolved"),
        p("/incidents/{id}", f"/incidents/{s.incident}"),
        p("/jobs"),
        p("/jobs", "/jobs?limit=1000"),
        p("/jobs", f"/jobs?instance_id={s.running}"),
        p("/jobs", "/jobs?with_retries_left=false"),
        p("/jobs/{id}", f"/jobs/{s.job}"),
        p("/batches"),
        p("/batches", "/batches?state=Running&type=retry-incidents"),
        Probe("api", "/batches/{id}", f"/api/v1/batches/{NO_BATCH}", 404),
        p("/users"),
        p("/tokens"),
        p("/account/tokens"),
        p("/sessions"),
        Probe("api", "/users/{name}/profile", "/api/v1/users/nobody-here/profile", 404),
        p("/groups"),
        p("/groups", "/groups?member=admin&type=SYSTEM"),
        p("/groups/{id}", "/groups/viewer"),
        p("/tenants"),
        p("/tenants", "/tenants?user=admin"),
        Probe("api", "/tenants/{id}", "/api/v1/tenants/nowhere", 404),
        p("/authorizations"),
        p("/authorizations", "/authorizations?group=viewer&resource_type=ProcessDefinition"),
        p(
            "/authorizations/check",
            "/authorizations/check?permission=READ&resource_type=ProcessDefinition",
        ),
        Probe("api", "/authorizations/{id}", f"/api/v1/authorizations/{NO_BATCH}", 404),
        p("/webhooks"),
        p("/webhooks/{id}", f"/webhooks/{s.webhook}"),
        p("/webhooks/{id}/deliveries", f"/webhooks/{s.webhook}/deliveries"),
        p("/audit"),
        p("/audit", f"/audit?instance_id={s.running}"),
        p("/audit", "/audit?user=admin&operation=Retry,Delete&entity=Incident"),
        p("/openapi.json"),
    ]


def camunda_probes(s: Sample) -> list[Probe]:
    def p(route: str, path: str | None = None) -> Probe:
        return Probe("camunda", route, "/engine-rest" + (path or route))

    def listed(route: str, *filters: str) -> list[Probe]:
        """The list (first page of 50) and the count, unfiltered and with each filter."""
        found = []
        for f in ("", *filters):
            found.append(p(route, f"{route}?maxResults=50{'&' + f if f else ''}"))
            found.append(p(f"{route}/count", f"{route}/count{'?' + f if f else ''}"))
        return found

    def missing(route: str, path: str) -> Probe:
        return Probe("camunda", route, "/engine-rest" + path, 404)

    pid = quote(s.definition_id)
    # Where the definition is addressed: by key and by id.
    forms = [("key/{key}", f"key/{s.key}"), ("{id}", pid)]
    return [
        *listed("/process-definition", f"key={s.key}", "latestVersion=true"),
        p("/process-definition/key/{key}", f"/process-definition/key/{s.key}"),
        p("/process-definition/key/{key}/xml", f"/process-definition/key/{s.key}/xml"),
        missing(
            "/process-definition/key/{key}/tenant-id/{tenant_id}",
            f"/process-definition/key/{s.key}/tenant-id/no-such-tenant",
        ),
        missing(
            "/process-definition/key/{key}/tenant-id/{tenant_id}/xml",
            f"/process-definition/key/{s.key}/tenant-id/no-such-tenant/xml",
        ),
        p("/process-definition/{id}", f"/process-definition/{pid}"),
        p("/process-definition/{id}/xml", f"/process-definition/{pid}/xml"),
        p("/process-definition/key/{key}/startForm", f"/process-definition/key/{s.key}/startForm"),
        p(
            "/process-definition/key/{key}/form-variables",
            f"/process-definition/key/{s.key}/form-variables",
        ),
        p("/process-definition/{id}/startForm", f"/process-definition/{pid}/startForm"),
        p("/process-definition/{id}/form-variables", f"/process-definition/{pid}/form-variables"),
        # The models set no form key and no form fields: Camunda's 400 for a deployed form, 404
        # for a rendered one.
        *(
            Probe(
                "camunda",
                f"/process-definition/{route}/{form}",
                f"/engine-rest/process-definition/{path}/{form}",
                status,
            )
            for route, path in forms
            for form, status in (("deployed-start-form", 400), ("rendered-form", 404))
        ),
        # Statistics: from the summary rows, with failed jobs and incidents from their rows.
        p("/process-definition/statistics"),
        p(
            "/process-definition/statistics",
            "/process-definition/statistics?failedJobs=true&incidents=true",
        ),
        p(
            "/process-definition/statistics",
            "/process-definition/statistics?failedJobs=true&incidentsForType=failedJob",
        ),
        p("/process-definition/statistics", "/process-definition/statistics?rootIncidents=true"),
        p("/process-definition/{id}/statistics", f"/process-definition/{pid}/statistics"),
        p(
            "/process-definition/{id}/statistics",
            f"/process-definition/{pid}/statistics?failedJobs=true&incidents=true",
        ),
        p(
            "/history/process-definition/{id}/statistics",
            f"/history/process-definition/{pid}/statistics",
        ),
        p(
            "/history/process-definition/{id}/statistics",
            f"/history/process-definition/{pid}/statistics?finished=true&completeScope=true"
            "&incidents=true",
        ),
        p(
            "/history/process-definition/{id}/statistics",
            f"/history/process-definition/{pid}/statistics?canceled=true",
        ),
        p(
            "/process-definition/{id}/static-called-process-definitions",
            f"/process-definition/{pid}/static-called-process-definitions",
        ),
        # The fill deploys no decision: the lists are empty, a decision by key or id a 404.
        *listed("/decision-definition", f"key={s.key}", "latestVersion=true", "nameLike=Dish%25"),
        missing("/decision-definition/key/{key}", f"/decision-definition/key/{s.key}"),
        missing("/decision-definition/key/{key}/xml", f"/decision-definition/key/{s.key}/xml"),
        missing("/decision-definition/{id}", f"/decision-definition/{pid}"),
        missing("/decision-definition/{id}/xml", f"/decision-definition/{pid}/xml"),
        *listed(
            "/history/decision-instance",
            f"decisionDefinitionKey={s.key}",
            f"processInstanceId={s.running}",
            "rootDecisionInstancesOnly=true",
            "evaluatedAfter=2020-01-01T00:00:00.000%2B0000",
            "includeInputs=true&includeOutputs=true",
        ),
        missing("/history/decision-instance/{id}", f"/history/decision-instance/{s.running}"),
        *listed("/event-subscription", "eventType=message", f"processInstanceId={s.running}"),
        *listed(
            "/external-task",
            "topicName=check",
            "locked=true",
            "notLocked=true",
            "workerId=worker-0",
            "withRetriesLeft=true",
            "noRetriesLeft=true",
            f"processInstanceId={s.running}",
            "activityId=check",
            f"processDefinitionId={pid}",
        ),
        p("/external-task/{id}", f"/external-task/{s.external_task}"),
        # The fill's failures carry no details: Camunda's 204.
        Probe(
            "camunda",
            "/external-task/{id}/errorDetails",
            f"/engine-rest/external-task/{s.external_task}/errorDetails",
            204,
        ),
        # No cleanup job is scheduled: the bench's server runs without the job executor.
        Probe("camunda", "/history/cleanup/job", "/engine-rest/history/cleanup/job", 404),
        p("/history/cleanup/jobs"),
        p("/history/cleanup/configuration"),
        *listed("/batch", "type=instance-deletion", "suspended=true"),
        *listed("/batch/statistics", "type=set-job-retries"),
        Probe("camunda", "/batch/{id}", f"/engine-rest/batch/{NO_BATCH}", 404),
        *listed("/history/batch", "type=instance-deletion", "completed=true"),
        Probe("camunda", "/history/batch/{id}", f"/engine-rest/history/batch/{NO_BATCH}", 404),
        *listed(
            "/history/user-operation",
            f"processInstanceId={s.running}",
            "userId=admin",
            "entityType=Incident",
            "category=Operator",
            "afterTimestamp=2020-01-01T00:00:00.000%2B0000",
        ),
        *listed(
            "/incident",
            "incidentType=failedJob",
            f"processDefinitionId={pid}",
            f"processDefinitionKeyIn={s.key}",
            f"processInstanceId={s.running}",
            "activityId=check",
        ),
        p("/incident/{id}", f"/incident/{s.incident}"),
        *listed(
            "/execution",
            f"processInstanceId={s.running}",
            f"processDefinitionKey={s.key}",
            "businessKey=order-3",
            "activityId=check",
            "incidentType=failedJob",
            "messageEventSubscriptionName=zz-none",
            "suspended=true",
            "variables=customer_eq_customer-5",
            "processVariables=customer_eq_customer-5",
        ),
        p("/execution/{id}", f"/execution/{s.running}"),
        p("/execution/{id}/localVariables", f"/execution/{s.running}/localVariables"),
        p(
            "/execution/{id}/localVariables/{name}",
            f"/execution/{s.running}/localVariables/amount",
        ),
        # The fill's instances wait for no message.
        missing(
            "/execution/{id}/messageSubscriptions/{name}",
            f"/execution/{s.running}/messageSubscriptions/zz-none",
        ),
        *listed(
            "/process-instance",
            f"processDefinitionKey={s.key}",
            f"processDefinitionId={pid}",
            "businessKey=order-3",
            "businessKeyLike=order-3%25",
            "active=true",
            "suspended=true",
            "withIncident=true",
            "variables=customer_eq_customer-5",
            "rootProcessInstances=true",
        ),
        p("/process-instance/{id}", f"/process-instance/{s.running}"),
        p("/process-instance/{id}/variables", f"/process-instance/{s.running}/variables"),
        p(
            "/process-instance/{id}/variables/{name}",
            f"/process-instance/{s.running}/variables/amount",
        ),
        # The fill writes no Bytes nor File variable: `amount` is refused as not binary.
        Probe(
            "camunda",
            "/process-instance/{id}/variables/{name}/data",
            f"/engine-rest/process-instance/{s.running}/variables/amount/data",
            400,
        ),
        p(
            "/process-instance/{id}/activity-instances",
            f"/process-instance/{s.running}/activity-instances",
        ),
        *listed(
            "/history/process-instance",
            f"processDefinitionKey={s.key}",
            "finished=true",
            "unfinished=true",
            "completed=true",
            "externallyTerminated=true",
            "withIncidents=true",
            "processInstanceBusinessKey=order-3",
            "startedAfter=2020-01-01T00:00:00.000%2B0000",
            "finishedAfter=2020-01-01T00:00:00.000%2B0000",
            f"processInstanceId={s.ended}",
        ),
        p("/history/process-instance/{id}", f"/history/process-instance/{s.ended}"),
        *listed(
            "/history/variable-instance",
            f"processInstanceId={s.ended}",
            f"processDefinitionKey={s.key}",
            "variableName=customer",
        ),
        *listed(
            "/history/incident",
            f"processInstanceId={s.running}",
            "open=true",
            "resolved=true",
            f"processDefinitionKey={s.key}",
        ),
        *listed(
            "/history/task",
            f"processInstanceId={s.running}",
            f"processDefinitionKey={s.key}",
            "finished=true",
            "unfinished=true",
            "taskAssignee=nobody",
            "sortBy=startTime&sortOrder=desc",
        ),
        *listed(
            "/history/activity-instance",
            "activityId=join",
            f"processInstanceId={s.running}",
            f"processDefinitionId={pid}",
            "activityType=userTask",
            "unfinished=true",
            "finished=true",
            "withoutTenantId=true",
            "activityNameLike=Ch%25",
        ),
        *listed(
            "/job",
            f"processInstanceId={s.running}",
            "withException=true",
            "noRetriesLeft=true",
            "timers=true",
            "executable=true",
            f"processDefinitionKey={s.key}",
            "activityId=remind",
        ),
        p("/job/{id}", f"/job/{s.job}"),
        Probe("camunda", "/job/{id}/stacktrace", f"/engine-rest/job/{s.job}/stacktrace", 204),
        # Historic details: each variable's current value and the audited operator changes.
        *listed(
            "/history/detail",
            f"processInstanceId={s.running}",
            "excludeTaskDetails=true",
            "variableTypeIn=String",
            "sortBy=time&sortOrder=desc",
        ),
        missing("/history/detail/{id}", f"/history/detail/{NO_ROW}"),
        # The job log and the external task log: by job or task, by instance, by definition;
        # the fill logs nothing, so an entry is not found.
        *listed(
            "/history/job-log",
            f"jobId={s.job}",
            f"processInstanceId={s.running}",
            f"processDefinitionKey={s.key}",
            "failureLog=true",
            "sortBy=timestamp&sortOrder=desc",
        ),
        missing("/history/job-log/{id}", f"/history/job-log/{NO_ROW}"),
        missing("/history/job-log/{id}/stacktrace", f"/history/job-log/{NO_ROW}/stacktrace"),
        *listed(
            "/history/external-task-log",
            f"externalTaskId={s.external_task}",
            f"processInstanceId={s.running}",
            "topicName=ship",
            "failureLog=true",
        ),
        missing("/history/external-task-log/{id}", f"/history/external-task-log/{NO_ROW}"),
        missing(
            "/history/external-task-log/{id}/error-details",
            f"/history/external-task-log/{NO_ROW}/error-details",
        ),
        *listed(
            "/job-definition",
            f"processDefinitionKey={s.key}",
            f"processDefinitionId={pid}",
            "activityIdIn=remind,check",
            "suspended=true",
        ),
        p("/job-definition/{id}", f"/job-definition/{s.job_definition}"),
        *listed(
            "/deployment", "name=console-at-scale", "nameLike=console%25", f"id={s.deployment}"
        ),
        p("/deployment/{id}", f"/deployment/{s.deployment}"),
        p("/deployment/{id}/resources", f"/deployment/{s.deployment}/resources"),
        p(
            "/deployment/{id}/resources/{rid}",
            f"/deployment/{s.deployment}/resources/{s.resource}",
        ),
        p(
            "/deployment/{id}/resources/{rid}/data",
            f"/deployment/{s.deployment}/resources/{s.resource}/data",
        ),
        p("/engine"),
        p("/version"),
        p("/metrics/{name}/sum", "/metrics/activity-instance-start/sum"),
        p(
            "/metrics/{name}/sum",
            "/metrics/root-process-instance-start/sum?startDate=2020-01-01T00:00:00.000%2B0000",
        ),
        p("/metrics/{name}/sum", "/metrics/activity-instance-end/sum"),
        p("/telemetry/data"),
        *listed(
            "/task",
            f"assignee={ADMIN}",
            "unassigned=true",
            "candidateGroup=clerks",
            f"processDefinitionKey={s.key}",
            f"processInstanceId={s.running}",
            "taskDefinitionKey=review",
            "name=Review",
        ),
        p("/task/{id}", f"/task/{s.user_task}"),
        # The fill saves one filter, of PARALLEL's open tasks, newest first.
        *listed("/filter", f"owner={ADMIN}", "nameLike=scale%25", "itemCount=true"),
        p("/filter/{id}", f"/filter/{FILTER_ID}?itemCount=true"),
        p("/filter/{id}/list", f"/filter/{FILTER_ID}/list?maxResults=50"),
        p("/filter/{id}/count", f"/filter/{FILTER_ID}/count"),
        # It finds many tasks: not a single result.
        Probe(
            "camunda",
            "/filter/{id}/singleResult",
            f"/engine-rest/filter/{FILTER_ID}/singleResult",
            400,
        ),
        missing("/filter/{id}", f"/filter/{NO_ROW}"),
        p("/task/{id}/form", f"/task/{s.user_task}/form"),
        p("/task/{id}/identity-links", f"/task/{s.user_task}/identity-links"),
        p("/task/{id}/form-variables", f"/task/{s.user_task}/form-variables"),
        p("/task/{id}/variables", f"/task/{s.user_task}/variables"),
        p("/task/{id}/variables/{name}", f"/task/{s.user_task}/variables/amount"),
        p("/task/{id}/localVariables", f"/task/{s.user_task}/localVariables"),
        Probe(
            "camunda",
            "/task/{id}/variables/{name}/data",
            f"/engine-rest/task/{s.user_task}/variables/amount/data",
            400,
        ),
        missing(
            "/task/{id}/localVariables/{name}/data",
            f"/task/{s.user_task}/localVariables/amount/data",
        ),
        # The task has no form key and no form fields.
        Probe(
            "camunda",
            "/task/{id}/deployed-form",
            f"/engine-rest/task/{s.user_task}/deployed-form",
            400,
        ),
        missing("/task/{id}/rendered-form", f"/task/{s.user_task}/rendered-form"),
        # The fill writes no comment nor attachment: the lists are empty, one by id a 404.
        p("/task/{id}/comment", f"/task/{s.user_task}/comment"),
        missing("/task/{id}/comment/{commentId}", f"/task/{s.user_task}/comment/{NO_ROW}"),
        p("/task/{id}/attachment", f"/task/{s.user_task}/attachment"),
        missing("/task/{id}/attachment/{attachmentId}", f"/task/{s.user_task}/attachment/{NO_ROW}"),
        missing(
            "/task/{id}/attachment/{attachmentId}/data",
            f"/task/{s.user_task}/attachment/{NO_ROW}/data",
        ),
        *listed(
            "/variable-instance",
            "variableName=customer",
            f"processInstanceIdIn={s.running}",
            "variableNameLike=cust%25",
        ),
        missing("/variable-instance/{id}/data", f"/variable-instance/{NO_ROW}/data"),
        missing(
            "/history/variable-instance/{id}/data", f"/history/variable-instance/{NO_ROW}/data"
        ),
        *listed("/user", "firstNameLike=a%25", "memberOfGroup=admin", "emailLike=%25example%25"),
        missing("/user/{id}/profile", "/user/nobody-here/profile"),
        *listed("/group", "member=admin", "type=SYSTEM", "nameLike=Op%25"),
        p("/group/{id}", "/group/viewer"),
        *listed("/tenant", "userMember=admin", "nameLike=n%25"),
        missing("/tenant/{id}", "/tenant/nowhere"),
        *listed("/authorization", "groupIdIn=viewer", "resourceType=6", "type=1"),
        p(
            "/authorization/check",
            "/authorization/check?permissionName=READ&resourceName=ProcessDefinition"
            "&resourceType=6",
        ),
        missing("/authorization/{id}", f"/authorization/{NO_BATCH}"),
        p("/identity/groups", "/identity/groups?userId=admin"),
    ]


# Declared GET routes no probe times, by (surface, route), and why. A test fails on any other
# GET route left out.
NOT_TIMED: dict[tuple[str, str], str] = {
    ("camunda", "/task/{id}/localVariables/{name}"): "the fill writes no task-local variable",
}


def probes(s: Sample) -> list[Probe]:
    """Everything timed, in order. Extend the surface's list when a GET route is added."""
    return [*console_probes(s), *api_probes(s), *camunda_probes(s)]
