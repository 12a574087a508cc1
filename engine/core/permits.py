"""What a command needs its actor to hold, checked inside the command's transaction.

Each command declares its permits once (`permits: ClassVar[tuple[Permit, ...]]`, the
vocabulary below): a `Permit` is a conjunction of `AnyOf`s, each a disjunction of `Need`s, as
Camunda's authorization checks are (to start an instance: CREATE on process instances, and
CREATE_INSTANCE on the definition; to change one: UPDATE on it, or UPDATE_INSTANCE on its
definition). A need names the fact that gives its resource id (`On`): the executor checks,
before the command runs (`before`), a permit that needs no fact or whose facts are the command's
own fields (`permit_ids`: a user's, a group's, a tenant's id); a command checks the others with
`check` once it has loaded what they name (the instance's id and definition key, the task's
assignee and candidates), before it writes. A refusal is `AuthorizationDenied`, raised inside the
transaction, so nothing the command did is committed and no audit entry is written.

Nothing is checked when no actor is bound or the actor carries no grants: the engine's own work,
the command line, the Python API of a hosting program, and a batch's items (they run as the
batch's creator, who was checked when creating the batch).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from engine.errors import AuthorizationDenied, MissingAuthorization
from engine.identity.permissions import ANY, RESOURCE_NAMES, ResourceType, permission_bits
from engine.states import BatchType

if TYPE_CHECKING:
    from engine.core.actors import Actor
    from engine.core.executor import Tx


class On(StrEnum):
    """Which fact names the resource a need is about."""

    EVERY = "*"  # every resource of the type: `*` authorizations only
    INSTANCE = "instance"  # the process instance's id
    DEFINITION = "definition"  # the process definition's key
    TARGET = "target"  # a migration's target definition key
    TASK = "task"  # the user task's id
    DECISION = "decision"  # the decision definition's key
    BATCH = "batch"  # the batch's id
    USER = "user"  # the user's id
    GROUP = "group"  # the group's id
    TENANT = "tenant"  # the tenant's id
    AUTHORIZATION = "authorization"  # the authorization's id
    DEPLOYMENT = "deployment"  # the deployment's id
    FILTER = "filter"  # the filter's id (a saved view of the task inbox)


@dataclass(frozen=True)
class Need:
    permission: str
    resource_type: ResourceType
    on: On = On.EVERY

    def __post_init__(self) -> None:
        permission_bits(self.resource_type, [self.permission])  # a KeyError names a typo


@dataclass(frozen=True)
class AnyOf:
    """Held when any need is; `assignee`: the task's assignee holds it whatever their grants;
    `candidate`: so does a candidate user of the task or a member of a candidate group; `own`:
    so does the user the command is about (their own sessions, password)."""

    needs: tuple[Need, ...]
    assignee: bool = False
    candidate: bool = False
    own: bool = False


@dataclass(frozen=True)
class Permit:
    """Held when every one of `all_of` is."""

    all_of: tuple[AnyOf, ...]

    @property
    def needs_facts(self) -> bool:
        return any(
            need.on is not On.EVERY or group.assignee or group.candidate or group.own
            for group in self.all_of
            for need in group.needs
        )


@dataclass(frozen=True)
class Facts:
    """What a command knows about the resource it acts on, as `check` is given it."""

    ids: dict[On, str]
    assignee: str | None = None
    candidate_users: tuple[str, ...] = ()
    candidate_groups: tuple[str, ...] = ()
    # Resources the target has none of: a standalone task has no definition, so the needs on
    # one are not asked (Camunda checks a standalone task's own permissions only).
    absent: frozenset[On] = frozenset()


def any_of(
    *needs: Need, assignee: bool = False, candidate: bool = False, own: bool = False
) -> AnyOf:
    return AnyOf(needs, assignee, candidate, own)


def permit(*groups: AnyOf | Need) -> Permit:
    return Permit(tuple(g if isinstance(g, AnyOf) else AnyOf((g,)) for g in groups))


PI = ResourceType.PROCESS_INSTANCE
PD = ResourceType.PROCESS_DEFINITION
TASK = ResourceType.TASK


def _on_instance(instance: str, definition: str) -> AnyOf:
    return any_of(Need(instance, PI, On.INSTANCE), Need(definition, PD, On.DEFINITION))


# -- the permits commands declare, by Camunda's rules ---------------------------------------------

START_INSTANCE = permit(Need("CREATE", PI), Need("CREATE_INSTANCE", PD, On.DEFINITION))
UPDATE_INSTANCE = permit(_on_instance("UPDATE", "UPDATE_INSTANCE"))
DELETE_INSTANCE = permit(_on_instance("DELETE", "DELETE_INSTANCE"))
SUSPEND_INSTANCE = permit(
    any_of(
        Need("SUSPEND", PI, On.INSTANCE),
        Need("UPDATE", PI, On.INSTANCE),
        Need("SUSPEND_INSTANCE", PD, On.DEFINITION),
        Need("UPDATE_INSTANCE", PD, On.DEFINITION),
    )
)
UPDATE_INSTANCE_VARIABLES = permit(
    any_of(
        Need("UPDATE_VARIABLE", PI, On.INSTANCE),
        Need("UPDATE", PI, On.INSTANCE),
        Need("UPDATE_INSTANCE_VARIABLE", PD, On.DEFINITION),
        Need("UPDATE_INSTANCE", PD, On.DEFINITION),
    )
)
RETRY_JOB = permit(
    any_of(
        Need("RETRY_JOB", PI, On.INSTANCE),
        Need("UPDATE", PI, On.INSTANCE),
        Need("RETRY_JOB", PD, On.DEFINITION),
        Need("UPDATE_INSTANCE", PD, On.DEFINITION),
    )
)
RETRY_START_JOB = permit(
    any_of(Need("RETRY_JOB", PD, On.DEFINITION), Need("UPDATE", PD, On.DEFINITION))
)
UPDATE_DEFINITION = permit(Need("UPDATE", PD, On.DEFINITION))
DELETE_DEFINITION = permit(Need("DELETE", PD, On.DEFINITION))
SUSPEND_DEFINITION = permit(
    any_of(Need("SUSPEND", PD, On.DEFINITION), Need("UPDATE", PD, On.DEFINITION))
)
MIGRATE_INSTANCE = permit(
    Need("MIGRATE_INSTANCE", PD, On.DEFINITION), Need("MIGRATE_INSTANCE", PD, On.TARGET)
)
WORK_ON_TASK = permit(
    any_of(
        Need("TASK_WORK", TASK, On.TASK),
        Need("UPDATE", TASK, On.TASK),
        Need("TASK_WORK", PD, On.DEFINITION),
        Need("UPDATE_TASK", PD, On.DEFINITION),
        assignee=True,
    )
)
CLAIM_TASK = permit(
    any_of(
        Need("TASK_WORK", TASK, On.TASK),
        Need("TASK_ASSIGN", TASK, On.TASK),
        Need("UPDATE", TASK, On.TASK),
        Need("TASK_WORK", PD, On.DEFINITION),
        Need("TASK_ASSIGN", PD, On.DEFINITION),
        Need("UPDATE_TASK", PD, On.DEFINITION),
        candidate=True,
    )
)
ASSIGN_TASK = permit(
    any_of(
        Need("TASK_ASSIGN", TASK, On.TASK),
        Need("UPDATE", TASK, On.TASK),
        Need("TASK_ASSIGN", PD, On.DEFINITION),
        Need("UPDATE_TASK", PD, On.DEFINITION),
    )
)
# Camunda's saveTask of a task's details.
# Camunda's for a standalone task (one of no process instance): CREATE on tasks.
CREATE_TASK = permit(Need("CREATE", TASK))
UPDATE_TASK = permit(any_of(Need("UPDATE", TASK, On.TASK), Need("UPDATE_TASK", PD, On.DEFINITION)))
UPDATE_TASK_VARIABLES = permit(
    any_of(
        Need("UPDATE_VARIABLE", TASK, On.TASK),
        Need("TASK_WORK", TASK, On.TASK),
        Need("UPDATE", TASK, On.TASK),
        Need("UPDATE_TASK_VARIABLE", PD, On.DEFINITION),
        Need("TASK_WORK", PD, On.DEFINITION),
        Need("UPDATE_TASK", PD, On.DEFINITION),
        assignee=True,
    )
)
DELETE_HISTORY = permit(Need("DELETE_HISTORY", PD, On.DEFINITION))
EVALUATE_DECISION = permit(Need("CREATE_INSTANCE", ResourceType.DECISION_DEFINITION, On.DECISION))
CREATE_DEPLOYMENT = permit(Need("CREATE", ResourceType.DEPLOYMENT))
DELETE_DEPLOYMENT = permit(Need("DELETE", ResourceType.DEPLOYMENT, On.DEPLOYMENT))
# A redeployment creates a deployment from the files of one it may read.
REDEPLOY = permit(
    Need("CREATE", ResourceType.DEPLOYMENT), Need("READ", ResourceType.DEPLOYMENT, On.DEPLOYMENT)
)
UPDATE_BATCH = permit(Need("UPDATE", ResourceType.BATCH, On.BATCH))
DELETE_BATCH = permit(Need("DELETE", ResourceType.BATCH, On.BATCH))
CREATE_USER = permit(Need("CREATE", ResourceType.USER))
DELETE_USER = permit(Need("DELETE", ResourceType.USER, On.USER))
UPDATE_OWN_USER = permit(any_of(Need("UPDATE", ResourceType.USER, On.USER), own=True))
# Reading a user's profile or groups (no command, the read asks): READ on the user, or being them.
READ_OWN_USER = permit(any_of(Need("READ", ResourceType.USER, On.USER), own=True))
CREATE_GROUP = permit(Need("CREATE", ResourceType.GROUP))
UPDATE_GROUP = permit(Need("UPDATE", ResourceType.GROUP, On.GROUP))
DELETE_GROUP = permit(Need("DELETE", ResourceType.GROUP, On.GROUP))
ADD_GROUP_MEMBER = permit(Need("CREATE", ResourceType.GROUP_MEMBERSHIP, On.GROUP))
# A user created into a built-in group (their role): CREATE on users, and the membership of that
# group as Camunda's `PUT /group/{id}/members/{userId}` asks it.
CREATE_USER_IN_GROUP = permit(
    Need("CREATE", ResourceType.USER), Need("CREATE", ResourceType.GROUP_MEMBERSHIP, On.GROUP)
)
REMOVE_GROUP_MEMBER = permit(Need("DELETE", ResourceType.GROUP_MEMBERSHIP, On.GROUP))
CREATE_TENANT = permit(Need("CREATE", ResourceType.TENANT))
UPDATE_TENANT = permit(Need("UPDATE", ResourceType.TENANT, On.TENANT))
DELETE_TENANT = permit(Need("DELETE", ResourceType.TENANT, On.TENANT))
ADD_TENANT_MEMBER = permit(Need("CREATE", ResourceType.TENANT_MEMBERSHIP, On.TENANT))
REMOVE_TENANT_MEMBER = permit(Need("DELETE", ResourceType.TENANT_MEMBERSHIP, On.TENANT))
CREATE_AUTHORIZATION = permit(Need("CREATE", ResourceType.AUTHORIZATION))
UPDATE_AUTHORIZATION = permit(Need("UPDATE", ResourceType.AUTHORIZATION, On.AUTHORIZATION))
DELETE_AUTHORIZATION = permit(Need("DELETE", ResourceType.AUTHORIZATION, On.AUTHORIZATION))
CREATE_FILTER = permit(Need("CREATE", ResourceType.FILTER))
UPDATE_FILTER = permit(Need("UPDATE", ResourceType.FILTER, On.FILTER))
DELETE_FILTER = permit(Need("DELETE", ResourceType.FILTER, On.FILTER))
# Reading a filter and running its query (no command, the read asks): READ on the filter.
READ_FILTER = permit(Need("READ", ResourceType.FILTER, On.FILTER))
ANNOTATE_ENTRY = permit(Need("UPDATE_HISTORY", PD, On.DEFINITION))
# Setting or removing a stuck-instance alert threshold of a definition key (Camunda has no such
# thing): UPDATE on the definition, or UPDATE_INSTANCE on it, which operators hold.
SET_ALERT = permit(
    any_of(Need("UPDATE", PD, On.DEFINITION), Need("UPDATE_INSTANCE", PD, On.DEFINITION))
)
# Camunda's administrators' work (history cleanup, webhooks, accounts, the audit log's notes,
# summaries): nothing short of ALL on the authorization resource, what only admins hold.
ADMINISTER = permit(Need("ALL", ResourceType.AUTHORIZATION))
# Putting a credential (a user's role, a token of a built-in group's) into a built-in group: an
# administrator's work, and the membership of that group (as `ADD_GROUP_MEMBER`).
ADMINISTER_INTO_GROUP = permit(
    Need("ALL", ResourceType.AUTHORIZATION),
    Need("CREATE", ResourceType.GROUP_MEMBERSHIP, On.GROUP),
)
# Operators' work that Camunda has no permission of its own for (replaying webhook deliveries,
# starting a history cleanup run now): UPDATE on every process instance, what operators hold.
OPERATE = permit(Need("UPDATE", ResourceType.PROCESS_INSTANCE))
# The engine's own work (jobs, leases, deliveries, signing in): nothing to check.
ENGINE_WORK: tuple[Permit, ...] = ()
# A principal's own records (saved views), which the route names the principal's: nothing more.
OWN_RECORDS: tuple[Permit, ...] = ()


# Creating a batch: CREATE on batches, or the batch type's own CREATE_BATCH_* permission.
_BATCH_TYPE_PERMISSIONS = {
    BatchType.RETRY_INCIDENTS: "CREATE_BATCH_SET_JOB_RETRIES",
    BatchType.SET_JOB_RETRIES: "CREATE_BATCH_SET_JOB_RETRIES",
    BatchType.SET_EXTERNAL_TASK_RETRIES: "CREATE_BATCH_SET_EXTERNAL_TASK_RETRIES",
    BatchType.CANCEL_INSTANCES: "CREATE_BATCH_DELETE_RUNNING_PROCESS_INSTANCES",
    BatchType.SUSPEND_INSTANCES: "CREATE_BATCH_UPDATE_PROCESS_INSTANCES_SUSPEND",
    BatchType.RESUME_INSTANCES: "CREATE_BATCH_UPDATE_PROCESS_INSTANCES_SUSPEND",
    BatchType.SET_VARIABLES: "CREATE_BATCH_SET_VARIABLES",
    BatchType.DELETE_HISTORY: "CREATE_BATCH_DELETE_FINISHED_PROCESS_INSTANCES",
    BatchType.MODIFY: "CREATE_BATCH_MODIFY_PROCESS_INSTANCES",
    BatchType.MIGRATE: "CREATE_BATCH_MIGRATE_PROCESS_INSTANCES",
}
CREATE_BATCH: dict[BatchType, Permit] = {
    kind: permit(any_of(Need("CREATE", ResourceType.BATCH), Need(name, ResourceType.BATCH)))
    for kind, name in _BATCH_TYPE_PERMISSIONS.items()
}


# -- checking ------------------------------------------------------------------------------------


def declared(command: Any) -> tuple[Permit, ...]:
    """The permits `command` declares; a command of engine/commands declares them always
    (tests/unit/test_command_permits.py), one defined elsewhere (a test's) needs nothing."""
    found: tuple[Permit, ...] = getattr(type(command), "permits", ())
    return found


def before(tx: Tx, command: Any) -> None:
    """The executor's check before `command` runs: its one permit when that needs no fact, or
    when the facts it needs are the command's fields its `permit_ids` name (On -> field). A
    command that declares several permits chooses among them itself (`check`), as it runs."""
    named: dict[On, str] = getattr(type(command), "permit_ids", {})
    match declared(command):
        case (only,) if not only.needs_facts:
            demand(tx.actor, only, Facts({}))
        case (only,) if named:
            ids = {on: str(getattr(command, name)) for on, name in named.items()}
            demand(tx.actor, only, Facts(ids))
        case _:
            pass


def facts_of(
    *,
    instance: object | None = None,
    definition: str | None = None,
    target: str | None = None,
    task: object | None = None,
    decision: str | None = None,
    batch: object | None = None,
    user: str | None = None,
    group: str | None = None,
    tenant: str | None = None,
    authorization: object | None = None,
    filter: object | None = None,
    assignee: str | None = None,
    candidate_users: Iterable[str] = (),
    candidate_groups: Iterable[str] = (),
) -> Facts:
    """The facts a check names, by the keyword of each."""
    named = {
        On.INSTANCE: instance,
        On.DEFINITION: definition,
        On.TARGET: target,
        On.TASK: task,
        On.DECISION: decision,
        On.BATCH: batch,
        On.USER: user,
        On.GROUP: group,
        On.TENANT: tenant,
        On.AUTHORIZATION: authorization,
        On.FILTER: filter,
    }
    ids = {on: str(value) for on, value in named.items() if value is not None}
    # A task that names no definition is a standalone task (no process instance).
    absent = frozenset({On.DEFINITION}) if task is not None and definition is None else frozenset()
    return Facts(ids, assignee, tuple(candidate_users), tuple(candidate_groups), absent)


def check(tx: Tx, permit: Permit, **named: Any) -> None:
    """Refuse (AuthorizationDenied) unless the transaction's actor holds `permit` on the resource
    the facts name (the keywords of `facts_of`); nothing when no actor with grants is bound."""
    demand(tx.actor, permit, facts_of(**named))


def demand(actor: Actor | None, permit: Permit, facts: Facts) -> None:
    """Refuse (AuthorizationDenied) unless `actor` holds `permit` on the resource `facts` name;
    nothing when no actor, or one without grants, is given."""
    refused = refusal(actor, permit, facts)
    if refused is not None:
        raise refused


def holds(actor: Actor | None, permit: Permit, **named: Any) -> bool:
    """Whether `actor` holds `permit` on the resource the facts name (the keywords of
    `facts_of`): what a command declaring it would allow, asked before offering it (the
    console shows a control exactly when this is true)."""
    return refusal(actor, permit, facts_of(**named)) is None


def refusal(actor: Actor | None, permit: Permit, facts: Facts) -> AuthorizationDenied | None:
    """Why `actor` may not act under `permit` on the resource `facts` name; None: they may."""
    if actor is None or actor.grants is None:
        return None
    grants = actor.grants
    user = grants.user_id or actor.user
    for group in permit.all_of:
        if group.assignee and facts.assignee is not None and facts.assignee == user:
            continue
        if group.own and facts.ids.get(On.USER) == user:
            continue
        if group.candidate and (
            user in facts.candidate_users or grants.group_ids & set(facts.candidate_groups)
        ):
            continue
        missing = []
        held = False
        for need in group.needs:
            resource_id = ANY if need.on is On.EVERY else facts.ids.get(need.on)
            if resource_id is None:
                if need.on in facts.absent:
                    continue
                raise AssertionError(f"{need} asked without its {need.on.value}")
            bits = permission_bits(need.resource_type, [need.permission])
            asked = None if resource_id == ANY else resource_id
            if grants.allows(bits, need.resource_type, asked):
                held = True
                break
            missing.append(
                MissingAuthorization(
                    need.permission, RESOURCE_NAMES[need.resource_type], resource_id
                )
            )
        if not held:
            return AuthorizationDenied(user, tuple(missing))
    return None
