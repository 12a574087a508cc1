"""The authorization matrix's table (tests/api/test_authorization_matrix.py): for each Camunda
resource type and permission, the routes of the console, /api/v1 and /engine-rest that need it,
each with a fresh target per call and the status it answers when allowed.

The table is written down here from Camunda 7's documented authorization rules, not read from
the code under test: the resource type ids and names are Camunda's, the permissions are named
as Camunda names them, and the grants are made through `POST /engine-rest/authorization/create`."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.accounts import CreateToken, CreateUser, StartSession
from engine.commands.audit import AnnotateEntry
from engine.commands.batches import CreateBatch, RunBatchItems, SuspendBatch
from engine.commands.identity import (
    AddGroupMember,
    CreateGroup,
    CreateUserProfile,
)
from engine.commands.identity_tenants import AddTenantMember, CreateTenant
from engine.commands.webhooks import CreateSubscription
from engine.core.actors import Actor, acting
from engine.identity import accounts
from engine.identity.accounts import Role
from engine.queries import accounts as account_reads
from engine.states import AuditChannel, BatchType
from tests.api import identity_scenarios, processes

DMN = Path(__file__).resolve().parents[1] / "data" / "dmn"
_serial = itertools.count(1)


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_serial)}"


class Surface(StrEnum):
    CONSOLE = "console"
    API = "/api/v1"
    REST = "/engine-rest"


@dataclass(frozen=True)
class Resource:
    """A Camunda resource type: its integer id and its name in `AuthorizationException`s."""

    id: int
    name: str


USER = Resource(1, "User")
GROUP = Resource(2, "Group")
GROUP_MEMBERSHIP = Resource(3, "Group membership")
AUTHORIZATION = Resource(4, "Authorization")
PROCESS_DEFINITION = Resource(6, "ProcessDefinition")
TASK = Resource(7, "Task")
PROCESS_INSTANCE = Resource(8, "ProcessInstance")
DEPLOYMENT = Resource(9, "Deployment")
DECISION_DEFINITION = Resource(10, "DecisionDefinition")
TENANT = Resource(11, "Tenant")
TENANT_MEMBERSHIP = Resource(12, "TenantMembership")
BATCH = Resource(13, "Batch")

# What every principal of the matrix may read (a group of its own holds these on `*`): enough
# to find each target, nothing that changes one.
READS: tuple[tuple[Resource, tuple[str, ...]], ...] = (
    (PROCESS_DEFINITION, ("READ", "READ_INSTANCE", "READ_TASK", "READ_HISTORY")),
    (PROCESS_INSTANCE, ("READ",)),
    (TASK, ("READ",)),
    (DEPLOYMENT, ("READ",)),
    (DECISION_DEFINITION, ("READ",)),  # an evaluation answers without READ_HISTORY
    (BATCH, ("READ",)),
    (USER, ("READ",)),
    (GROUP, ("READ",)),
    (TENANT, ("READ",)),
    (AUTHORIZATION, ("READ",)),
)

# The processes the matrix's targets are instances of, deployed once.
WAITING, REVIEW, TIMER, STRAIGHT = "matrix-waiting", "matrix-review", "matrix-timer", "matrix-go"
EXTERNAL, MIGRATING, SIGNALLED = "matrix-external", "matrix-migrating", "matrix-signalled"
# A process deployed for the tenant TENANT only (whose members are the matrix's readers).
TENANTED, TENANT_ID = "matrix-tenanted", "matrix-tenant"
# A process started by POST /condition when the variable `matrixHot` is positive.
CONDITIONAL = "matrix-conditional"
PROCESSES = (
    ProcessBuilder(CONDITIONAL)
    .start_event("start")
    .conditional("start", "${matrixHot > 0}")
    .user_task("task")
    .end_event("end")
    .chain("start", "task", "end")
    .build(),
    processes.catch(SIGNALLED, signal="matrix-ping"),
    processes.waiting(MIGRATING, "Version 1"),
    processes.waiting(MIGRATING, "Version 2"),
    processes.waiting(WAITING),
    processes.review(REVIEW),
    processes.timer(TIMER),
    processes.straight(STRAIGHT),
    processes.external(EXTERNAL, topic=EXTERNAL),
)


@dataclass(frozen=True)
class Target:
    """A concrete request on a fresh target: the path (under its surface), the request's
    options (json, data, files), the resource id a grant names, and `probe`, what the call
    could change, read before and after it."""

    path: str
    request: dict[str, Any]
    resource_id: str
    probe: Callable[[Engine], Any]


@dataclass(frozen=True)
class Also:
    """A grant every principal of a row holds besides the row's permission (on `*`, or on the
    target's resource id): a start needs CREATE on process instances and CREATE_INSTANCE on
    its definition, and each row asks about one of them."""

    resource: Resource
    permission: str
    on_target: bool = False


@dataclass(frozen=True)
class Row:
    resource: Resource
    permission: str
    surface: Surface
    method: str
    route: str
    make: Callable[[Engine], Target]
    status: int
    also: tuple[Also, ...] = field(default=())
    # The row's permission is on `*` whatever the target (CREATE on process instances).
    on_any: bool = False

    @property
    def key(self) -> tuple[str, str, str]:
        return self.surface.value, self.method, self.route

    @property
    def id(self) -> str:
        where = f"{self.surface.name}-{self.method}{self.route}"
        return f"{self.resource.name.replace(' ', '')}.{self.permission}-{where}"


# -- probes: what a call could change -------------------------------------------------------------


def scalar(engine: Engine, statement: str, *params: Any) -> Any:
    """The one row `statement` reads: its value, or its values when it has several columns."""
    with engine.connection() as conn:
        row = conn.execute(statement, params).fetchone()
    assert row is not None
    return row[0] if len(row) == 1 else tuple(row)


def instance_rows(instance: str) -> Callable[[Engine], Any]:
    """The instance, its variables, tokens, jobs, incidents and tasks."""
    tables = ("token", "variable", "job", "incident", "user_task", "external_task")
    parts = ", ".join(
        f"(SELECT json_agg(to_jsonb(t) ORDER BY to_jsonb(t)::text) FROM {table} t"
        " WHERE t.instance_id = %(id)s)"
        for table in tables
    )

    def probe(engine: Engine) -> Any:
        with engine.connection() as conn:
            row = conn.execute(
                "SELECT (SELECT to_jsonb(p) FROM process_instance p WHERE p.id = %(id)s), " + parts,
                {"id": uuid.UUID(instance)},
            ).fetchone()
        return row

    return probe


def instances_of(key: str) -> Callable[[Engine], Any]:
    return lambda engine: scalar(
        engine,
        "SELECT count(*) FROM process_instance p JOIN process_definition d"
        " ON d.id = p.definition_id WHERE d.key = %s",
        key,
    )


def count_of(table: str) -> Callable[[Engine], Any]:
    return lambda engine: scalar(engine, f"SELECT count(*) FROM {table}")


def batch_row(batch: str) -> Callable[[Engine], Any]:
    return lambda engine: scalar(
        engine, "SELECT to_jsonb(b) FROM batch b WHERE b.id = %s", uuid.UUID(batch)
    )


_IDENTITY_OF = (
    "SELECT (SELECT json_agg(to_jsonb(u) ORDER BY u.id) FROM identity_user u"
    "  WHERE u.id = ANY(%(ids)s)),"
    " (SELECT json_agg(to_jsonb(g) ORDER BY g.id) FROM identity_group g"
    "  WHERE g.id = ANY(%(ids)s)),"
    " (SELECT json_agg(to_jsonb(m) ORDER BY m.group_id, m.user_id) FROM group_membership m"
    "  WHERE m.group_id = ANY(%(ids)s) OR m.user_id = ANY(%(ids)s)),"
    " (SELECT json_agg(to_jsonb(t) ORDER BY t.id) FROM tenant t WHERE t.id = ANY(%(ids)s)),"
    " (SELECT json_agg(to_jsonb(m) ORDER BY m.id) FROM tenant_membership m"
    "  WHERE m.tenant_id = ANY(%(ids)s) OR m.user_id = ANY(%(ids)s)"
    "  OR m.group_id = ANY(%(ids)s)),"
    " (SELECT json_agg(to_jsonb(a) ORDER BY a.id) FROM authorization_rule a"
    "  WHERE a.id::text = ANY(%(ids)s) OR a.group_id = ANY(%(ids)s)"
    "  OR a.user_id = ANY(%(ids)s)),"
    " (SELECT json_agg(to_jsonb(c) ORDER BY c.id) FROM credential c"
    "  WHERE c.name = ANY(%(ids)s) OR c.user_id = ANY(%(ids)s))"
)


def identity_of(*ids: str) -> Callable[[Engine], Any]:
    """The identity rows of the users, groups, tenants and authorizations `ids`: the rows
    themselves, their memberships, the authorizations naming them, their credentials."""

    def probe(engine: Engine) -> Any:
        with engine.connection() as conn:
            return conn.execute(_IDENTITY_OF, {"ids": list(ids)}).fetchone()

    return probe


def identity_counts(engine: Engine) -> Any:
    """How many users, groups, tenants, memberships, authorizations and credentials exist."""
    tables = (
        "identity_user",
        "identity_group",
        "group_membership",
        "tenant",
        "tenant_membership",
        "authorization_rule",
        "credential",
    )
    return scalar(engine, "SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in tables))


# -- fresh targets --------------------------------------------------------------------------------


def instance(engine: Engine, key: str = WAITING, business_key: str | None = None) -> str:
    """A fresh instance of `key` with the variable `note`."""
    return str(engine.start_latest(key, {"note": "first"}, business_key=business_key).id)


def suspended(engine: Engine) -> str:
    handle = engine.start_latest(WAITING)
    handle.suspend()
    return str(handle.id)


def task(engine: Engine) -> tuple[str, str]:
    """A review task's id and its instance's (which has the variable `note`)."""
    handle = engine.start_latest(REVIEW, {"note": "first"})
    return str(handle.user_tasks()[0].id), str(handle.id)


def timer_job(engine: Engine) -> tuple[str, str]:
    handle = engine.start_latest(TIMER)
    (job,) = engine.jobs(handle.id)
    return str(job.id), str(handle.id)


def incident(engine: Engine, message: str = "broken") -> tuple[str, str]:
    """An open incident of a failed external task, and the instance's id."""
    task_id, instance_id = failed_external(engine, message)
    (found,) = engine.incidents(instance_id=instance_id)
    return str(found.id), instance_id


def failed_external(engine: Engine, message: str = "broken") -> tuple[str, str]:
    """A fresh instance's external task, failed with no retries left (an incident), and the
    instance's id. The fetch locks every task of the topic a worker may fetch (retried ones
    come back) and fails the new instance's."""
    task_id, worker, instance_id = locked_external(engine)
    engine.fail_external_task(task_id, worker, message, retries=0)
    return task_id, instance_id


def locked_external(engine: Engine) -> tuple[str, str, str]:
    """A fresh instance's external task locked by a worker of its own: the task's id, the
    worker's and the instance's."""
    handle = engine.start_latest(EXTERNAL)
    worker = unique("w")
    locked = engine.fetch_and_lock(worker, {EXTERNAL: 600_000}, max_tasks=1000)
    (mine,) = [t for t in locked if str(t["instance_id"]) == str(handle.id)]
    return str(mine["id"]), worker, str(handle.id)


def batch(engine: Engine) -> str:
    """A running batch that waits (the server runs no jobs) to cancel a fresh instance."""
    made = CreateBatch(BatchType.CANCEL_INSTANCES, (instance(engine),))
    return str(engine.run(made).batch_id)


def failed_batch(engine: Engine) -> str:
    """A completed batch with one failed item (an instance that does not exist)."""
    made = CreateBatch(BatchType.CANCEL_INSTANCES, (str(uuid.uuid4()),))
    batch_id = engine.run(made).batch_id
    engine.run(RunBatchItems(uuid.UUID(batch_id)))
    return str(batch_id)


def suspended_batch(engine: Engine) -> str:
    batch_id = batch(engine)
    engine.run(SuspendBatch(uuid.UUID(batch_id)))
    return batch_id


def user(engine: Engine) -> str:
    name = unique("target-user")
    engine.run(CreateUserProfile(name, password="a-long-password"))
    return name


def group(engine: Engine) -> str:
    group_id = unique("target-group")
    engine.run(CreateGroup(group_id, "A group"))
    return group_id


def member(engine: Engine) -> tuple[str, str]:
    group_id, name = group(engine), user(engine)
    engine.run(AddGroupMember(group_id, name))
    return group_id, name


def tenant(engine: Engine) -> str:
    tenant_id = unique("target-tenant")
    engine.run(CreateTenant(tenant_id, "A tenant"))
    return tenant_id


def tenant_user(engine: Engine) -> tuple[str, str]:
    tenant_id, name = tenant(engine), user(engine)
    engine.run(AddTenantMember(tenant_id, user_id=name))
    return tenant_id, name


def tenant_group(engine: Engine) -> tuple[str, str]:
    tenant_id, group_id = tenant(engine), group(engine)
    engine.run(AddTenantMember(tenant_id, group_id=group_id))
    return tenant_id, group_id


def authorization(engine: Engine) -> str:
    return identity_scenarios._authorization(engine)


# -- target makers, by what the grant names -------------------------------------------------------

Make = Callable[[Engine], Target]


def on_instance(path: str, key_grant: bool, **request: Any) -> Make:
    """A fresh waiting instance; the grant names its definition key or its id."""

    def make(engine: Engine) -> Target:
        made = instance(engine)
        return Target(
            path.format(made), request, WAITING if key_grant else made, instance_rows(made)
        )

    return make


def on_suspended(path: str, key_grant: bool) -> Make:
    def make(engine: Engine) -> Target:
        made = suspended(engine)
        return Target(path.format(made), {}, WAITING if key_grant else made, instance_rows(made))

    return make


def on_task(path: str, grant: str, **request: Any) -> Make:
    """A fresh review task; the grant names the definition key, the instance or the task."""

    def make(engine: Engine) -> Target:
        task_id, instance_id = task(engine)
        named = {"key": REVIEW, "instance": instance_id, "task": task_id}[grant]
        return Target(path.format(task_id), request, named, instance_rows(instance_id))

    return make


def on_job(path: str, key_grant: bool, **request: Any) -> Make:
    def make(engine: Engine) -> Target:
        job_id, instance_id = timer_job(engine)
        named = TIMER if key_grant else instance_id
        return Target(path.format(job_id), request, named, instance_rows(instance_id))

    return make


def on_incident(path: str, key_grant: bool, **request: Any) -> Make:
    def make(engine: Engine) -> Target:
        incident_id, instance_id = incident(engine)
        named = EXTERNAL if key_grant else instance_id
        return Target(path.format(incident_id), request, named, instance_rows(instance_id))

    return make


def on_external(path: str, key_grant: bool, **request: Any) -> Make:
    def make(engine: Engine) -> Target:
        task_id, instance_id = failed_external(engine)
        named = EXTERNAL if key_grant else instance_id
        return Target(path.format(task_id), request, named, instance_rows(instance_id))

    return make


def on_worker_task(path: str, body: dict[str, Any], worker_field: str, form: bool = False) -> Make:
    """A fresh locked external task, reported by its worker; the grant names the key."""

    def make(engine: Engine) -> Target:
        task_id, worker, instance_id = locked_external(engine)
        sent = {**body, worker_field: worker} if worker_field else body
        request = {"data": sent} if form else {"json": sent}
        return Target(path.format(task_id), request, EXTERNAL, instance_rows(instance_id))

    return make


def on_claimed(path: str, **request: Any) -> Make:
    """A fresh review task claimed by someone else; the grant names the key."""

    def make(engine: Engine) -> Target:
        task_id, instance_id = task(engine)
        engine.claim_task(task_id, "someone")
        return Target(path.format(task_id), request, REVIEW, instance_rows(instance_id))

    return make


def correlate(path: str, body: Callable[[str], dict[str, Any]]) -> Make:
    """A fresh waiting instance with a business key of its own, and its message."""

    def make(engine: Engine) -> Target:
        key = unique("bk")
        made = instance(engine, business_key=key)
        return Target(path, {"json": body(key)}, WAITING, instance_rows(made))

    return make


def history_delete_batch(engine: Engine) -> Target:
    made = instance(engine, STRAIGHT)  # ends at once: its history can go
    body = {"historicProcessInstanceIds": [made], "deleteReason": "x"}
    return Target("/history/process-instance/delete", {"json": body}, "*", count_of("batch"))


def modification_batch(engine: Engine) -> Target:
    made = instance(engine)
    body = {
        "processDefinitionId": str(engine.latest_definition(WAITING).id),
        "processInstanceIds": [made],
        "instructions": [{"type": "cancel", "activityId": "go"}],
    }
    return Target("/modification/executeAsync", {"json": body}, "*", count_of("batch"))


def start(path: str, key: str = STRAIGHT, **request: Any) -> Make:
    def make(engine: Engine) -> Target:
        definition = engine.latest_definition(key)
        concrete = path.format(key=key, id=definition.id)
        return Target(concrete, request, key, instances_of(key))

    return make


def new_batch(path: str, body: Callable[[str], dict[str, Any]]) -> Make:
    """A batch created over a fresh instance: CREATE on batches (`*`)."""

    def make(engine: Engine) -> Target:
        return Target(path, body(instance(engine)), "*", count_of("batch"))

    return make


def on_batch(path: str, made: Callable[[Engine], str], **request: Any) -> Make:
    def make(engine: Engine) -> Target:
        batch_id = made(engine)
        return Target(path.format(batch_id), request, batch_id, batch_row(batch_id))

    return make


def creating(path: str, table: str, body: Callable[[], dict[str, Any]]) -> Make:
    return lambda engine: Target(path, body(), "*", count_of(table))


def creating_identity(path: str, body: Callable[[], dict[str, Any]]) -> Make:
    return lambda engine: Target(path, body(), "*", identity_counts)


def on_identity(path: str, made: Callable[[Engine], Any], index: int = 0, **request: Any) -> Make:
    """A fresh identity target (a user, group, tenant, membership, authorization): the path is
    formatted with its parts; the grant names part `index` (the group of a membership)."""

    def make(engine: Engine) -> Target:
        parts = made(engine)
        parts = parts if isinstance(parts, tuple) else (parts,)
        return Target(path.format(*parts), dict(request), parts[index], identity_of(*parts))

    return make


def deployment_files() -> dict[str, Any]:
    source = processes.xml(processes.straight(unique("deployed"))).encode()
    return {"files": {"files": ("p.bpmn", source)}}


def rest_deployment() -> dict[str, Any]:
    source = processes.xml(processes.straight(unique("deployed"))).encode()
    return {"data": {"deployment-name": unique("d")}, "files": {"p.bpmn": ("p.bpmn", source)}}


def _evaluation(engine: Engine, path: str, body: dict[str, Any]) -> Target:
    latest = "SELECT id FROM decision_definition WHERE key = %s ORDER BY version DESC LIMIT 1"
    concrete = path.format(id=scalar(engine, latest, "dish") if "{id}" in path else "")
    return Target(concrete, {"json": body}, "dish", count_of("decision_evaluation"))


def evaluate(path: str, body: dict[str, Any]) -> Make:
    return lambda engine: _evaluation(engine, path, body)


def rest_variables(**values: Any) -> dict[str, Any]:
    return {name: {"value": value} for name, value in values.items()}


def cancel_by_business_key(engine: Engine) -> Target:
    key = unique("bk")
    instance(engine, business_key=key)
    return Target(
        "/instances/batch-cancel", {"data": {"business_key": key}}, "*", count_of("batch")
    )


def set_variables_by_business_key(engine: Engine) -> Target:
    key = unique("bk")
    instance(engine, business_key=key)
    data = {"business_key": key, "set_name_0": "note", "set_type_0": "string", "set_value_0": "x"}
    return Target("/instances/batch-set-variables", {"data": data}, "*", count_of("batch"))


def suspend_by_business_key(engine: Engine) -> Target:
    key = unique("bk")
    instance(engine, business_key=key)
    return Target(
        "/instances/batch-suspend", {"data": {"business_key": key}}, "*", count_of("batch")
    )


def resume_by_business_key(engine: Engine) -> Target:
    key = unique("bk")
    engine.start_latest(WAITING, business_key=key).suspend()
    return Target(
        "/instances/batch-resume", {"data": {"business_key": key}}, "*", count_of("batch")
    )


def retry_by_message(engine: Engine) -> Target:
    text = unique("broken")
    incident(engine, text)
    return Target("/incidents/batch", {"data": {"text": text}}, "*", count_of("batch"))


def job_retries_batch(engine: Engine) -> Target:
    job_id, _ = timer_job(engine)
    body = {"json": {"jobIds": [job_id], "retries": 2}}
    return Target("/job/retries", body, "*", count_of("batch"))


def external_retries_batch(engine: Engine) -> Target:
    task_id, _ = failed_external(engine)
    body = {"json": {"externalTaskIds": [task_id], "retries": 2}}
    return Target("/external-task/retries-async", body, "*", count_of("batch"))


def _rule() -> dict[str, Any]:
    return {"type": 1, "permissions": ["READ"], "userId": None, "groupId": unique("g")}


def rest_rule() -> dict[str, Any]:
    return {**_rule(), "resourceType": 6, "resourceId": unique("definition")}


def console_rule() -> dict[str, Any]:
    return {
        "type": "grant",
        "group_id": unique("g"),
        "resource": "ProcessDefinition",
        "resource_id": unique("definition"),
        "permissions": "READ",
    }


def with_user_field(path: str, parts: tuple[str, str]) -> Target:
    """A console membership form: the path names the group or tenant, the form the user."""
    data = {"data": {"user_id": parts[1]}}
    return Target(path.format(*parts), data, parts[0], identity_of(*parts))


def with_group_field(path: str, parts: tuple[str, str]) -> Target:
    """The user page's membership form: the path names the user, the form the group."""
    data = {"data": {"group_id": parts[0]}}
    return Target(path.format(*parts), data, parts[0], identity_of(*parts))


def modification(engine: Engine) -> Target:
    made = instance(engine)
    body = {
        "processDefinitionId": str(engine.latest_definition(WAITING).id),
        "processInstanceIds": [made],
        "instructions": [{"type": "cancel", "activityId": "go"}],
    }
    return Target("/modification/execute", {"json": body}, WAITING, instance_rows(made))


# -- Interlock's own administration (no Camunda resource): ALL on authorizations, which only the
# administrators' groups hold; replays of webhook deliveries: UPDATE on every instance ----------


def token(engine: Engine) -> str:
    label = unique("token")
    engine.run(CreateToken(label, Role.VIEWER, accounts.new_token()))
    return label


def sessions(engine: Engine) -> Any:
    return scalar(engine, "SELECT json_agg(id ORDER BY id) FROM console_session")


def signed_in(engine: Engine) -> str:
    """A fresh user with a console session of their own."""
    name = unique("signed-in")
    engine.run(CreateUser(name, Role.VIEWER, "a-long-password"))
    record = account_reads.password_record(engine, name)
    assert record is not None
    engine.run(
        StartSession(record.id, name, accounts.new_session(), max_seconds=600, idle_seconds=600)
    )
    return name


def session_of(engine: Engine) -> tuple[str, str]:
    """A fresh user's console session: its id and the user's."""
    name = signed_in(engine)
    session = scalar(
        engine,
        "SELECT s.id FROM console_session s JOIN credential c ON c.id = s.credential_id"
        " WHERE c.name = %s",
        name,
    )
    return str(session), name


def ending_sessions(path: str, made: Callable[[Engine], Any]) -> Make:
    """A fresh user's sessions, ended (the grant names the user: their sessions are theirs)."""

    def make(engine: Engine) -> Target:
        parts = made(engine)
        parts = parts if isinstance(parts, tuple) else (parts,)
        return Target(path.format(*parts), {}, parts[-1], sessions)

    return make


def webhooks(engine: Engine) -> Any:
    return scalar(
        engine,
        "SELECT (SELECT json_agg(to_jsonb(s) ORDER BY s.id) FROM webhook_subscription s),"
        " (SELECT json_agg(to_jsonb(d) ORDER BY d.id) FROM webhook_delivery d)",
    )


def webhook(engine: Engine) -> tuple[str, str]:
    """A disabled subscription (nothing is delivered to its address) with one dead letter:
    their ids."""
    made = engine.run(
        CreateSubscription(
            unique("hook"), "http://127.0.0.1:9/", "a-secret-of-16-chars", enabled=False
        )
    )
    delivery = uuid.uuid4()
    with engine.connection() as conn:
        conn.execute(
            "INSERT INTO webhook_delivery (id, subscription_id, seq, instance_id, event, payload,"
            " state, attempts, next_attempt_at) VALUES (%s, %s, 1, %s, 'instance.started', '{}',"
            " 'dead', 3, now())",
            (delivery, made.subscription_id, uuid.uuid4()),
        )
    return str(made.subscription_id), str(delivery)


def admin(
    path: str,
    made: Callable[[Engine], Any] | None,
    probe: Callable[[Engine], Any] | None,
    **request: Any,
) -> Make:
    """A target of an administrator's route (the grant names `*`): the path formatted with
    what `made` returns; `probe` None: the identity rows of those."""

    def make(engine: Engine) -> Target:
        parts = made(engine) if made else ()
        parts = parts if isinstance(parts, tuple) else (parts,)
        probe_of = probe or identity_of(*parts)
        return Target(path.format(*parts), dict(request), "*", probe_of)

    return make


def hook(**more: Any) -> dict[str, Any]:
    return {"name": unique("hook"), "url": "https://example.com/", "secret": "s" * 16, **more}


def _versions(engine: Engine) -> tuple[str, str]:
    latest = "SELECT id FROM process_definition WHERE key = %s AND version = %s"
    return str(scalar(engine, latest, MIGRATING, 1)), str(scalar(engine, latest, MIGRATING, 2))


def _migration_body(engine: Engine, made: str) -> dict[str, Any]:
    source, target = _versions(engine)
    same = [{"sourceActivityIds": [n], "targetActivityIds": [n]} for n in ("paid", "go")]
    plan = {
        "sourceProcessDefinitionId": source,
        "targetProcessDefinitionId": target,
        "instructions": same,
    }
    return {"migrationPlan": plan, "processInstanceIds": [made]}


def migration(engine: Engine) -> Target:
    """A fresh instance of version 1, moved to version 2 (the grant names the key of both)."""
    made = str(engine.start_version(MIGRATING, 1).id)
    body = _migration_body(engine, made)
    return Target("/migration/execute", {"json": body}, MIGRATING, instance_rows(made))


def migration_batch(engine: Engine) -> Target:
    made = str(engine.start_version(MIGRATING, 1).id)
    body = _migration_body(engine, made)
    return Target("/migration/executeAsync", {"json": body}, "*", count_of("batch"))


def with_local(path: str) -> Make:
    """A fresh review task with the task-local variable `local`; the grant names the task."""

    def make(engine: Engine) -> Target:
        task_id, instance_id = task(engine)
        engine.modify_task_variables(task_id, {"local": "x"}, local=True)
        return Target(path.format(task_id), {}, task_id, instance_rows(instance_id))

    return make


def console_migration(path: str, table: str | None) -> Make:
    """The definition page's migration form over a fresh instance of version 1: run now (the
    grant names the key of both versions) or as a batch (`table` "batch": CREATE on batches)."""

    def make(engine: Engine) -> Target:
        made = str(engine.start_version(MIGRATING, 1).id)
        source, target = _versions(engine)
        form = {"source": source, "target": target, "instances": made}
        form |= {f"target:{node}": node for node in ("paid", "go")}
        probe = count_of(table) if table else instance_rows(made)
        return Target(path, {"data": form}, "*" if table else MIGRATING, probe)

    return make


def audit_entry(engine: Engine, note: str | None = None) -> str:
    """An operator's audit entry (a fresh waiting instance suspended by `matrix-operator`), with
    the annotation `note`: its id."""
    made = instance(engine)
    with acting(Actor("matrix-operator", AuditChannel.API)):
        engine.instance(made).suspend()
    entry = scalar(engine, "SELECT id FROM audit_entry WHERE instance_id = %s", uuid.UUID(made))
    if note is not None:
        engine.run(AnnotateEntry(entry, note))
    return str(entry)


def on_entry(path: str, note: str | None, **request: Any) -> Make:
    """An audit entry; the grant names its instance's definition key."""

    def make(engine: Engine) -> Target:
        entry = audit_entry(engine, note)
        probe = lambda e: scalar(  # noqa: E731
            e, "SELECT to_jsonb(a) FROM audit_entry a WHERE a.id = %s", uuid.UUID(entry)
        )
        return Target(path.format(entry), request, WAITING, probe)

    return make
