"""Camunda 7's authorization vocabulary, declared once: resource types with their integer ids and
names, each resource type's permissions with their names and bits, the authorization type, and
the built-in groups with what they grant.

Bits are per resource type (RETRY_JOB is 32 on a process definition, ACCESS is 32 on the
application): a permission is always read with its resource type. `ALL` is every bit and `NONE`
no bit, on every resource type.

Pure: no SQL. The rows are `identity_group`, `group_membership` and `authorization_rule`
(engine/schema.py); a grant or revoke row keeps the bits it names (for a revoke: the bits it
takes away).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum

from engine.states import Role

ALL = 2**31 - 1  # Camunda's Integer.MAX_VALUE: every permission
NONE = 0
ANY = "*"  # a resource id or user id that stands for every one


class AuthorizationType(IntEnum):
    """Camunda's authorization types: a global one applies to everybody (its user id is `*`),
    a grant or a revoke to one user or one group."""

    GLOBAL = 0
    GRANT = 1
    REVOKE = 2


class ResourceType(IntEnum):
    """Camunda's resource types, by their integer ids."""

    APPLICATION = 0
    USER = 1
    GROUP = 2
    GROUP_MEMBERSHIP = 3
    AUTHORIZATION = 4
    FILTER = 5
    PROCESS_DEFINITION = 6
    TASK = 7
    PROCESS_INSTANCE = 8
    DEPLOYMENT = 9
    DECISION_DEFINITION = 10
    TENANT = 11
    TENANT_MEMBERSHIP = 12
    BATCH = 13
    DECISION_REQUIREMENTS_DEFINITION = 14
    REPORT = 15
    DASHBOARD = 16
    HISTORIC_TASK = 19
    HISTORIC_PROCESS_INSTANCE = 20


# Camunda's resource names (its entity types), as `/authorization/check` takes and answers them.
RESOURCE_NAMES: Mapping[ResourceType, str] = {
    ResourceType.APPLICATION: "Application",
    ResourceType.USER: "User",
    ResourceType.GROUP: "Group",
    ResourceType.GROUP_MEMBERSHIP: "Group membership",
    ResourceType.AUTHORIZATION: "Authorization",
    ResourceType.FILTER: "Filter",
    ResourceType.PROCESS_DEFINITION: "ProcessDefinition",
    ResourceType.TASK: "Task",
    ResourceType.PROCESS_INSTANCE: "ProcessInstance",
    ResourceType.DEPLOYMENT: "Deployment",
    ResourceType.DECISION_DEFINITION: "DecisionDefinition",
    ResourceType.TENANT: "Tenant",
    ResourceType.TENANT_MEMBERSHIP: "TenantMembership",
    ResourceType.BATCH: "Batch",
    ResourceType.DECISION_REQUIREMENTS_DEFINITION: "DecisionRequirementsDefinition",
    ResourceType.REPORT: "Report",
    ResourceType.DASHBOARD: "Dashboard",
    ResourceType.HISTORIC_TASK: "HistoricTask",
    ResourceType.HISTORIC_PROCESS_INSTANCE: "HistoricProcessInstance",
}

# READ is the same bit on every resource type that has it.
READ, _UPDATE, _CREATE, _DELETE = 2, 4, 8, 16
_CRUD = {"READ": READ, "UPDATE": _UPDATE, "CREATE": _CREATE, "DELETE": _DELETE}

# Each resource type's permissions (besides ALL and NONE), by name: Camunda's per-resource
# permission sets where it has one, else the resource types its generic permissions list.
PERMISSIONS: Mapping[ResourceType, Mapping[str, int]] = {
    ResourceType.APPLICATION: {"ACCESS": 32},
    ResourceType.USER: _CRUD,
    ResourceType.GROUP: _CRUD,
    ResourceType.GROUP_MEMBERSHIP: {"CREATE": _CREATE, "DELETE": _DELETE},
    ResourceType.AUTHORIZATION: _CRUD,
    ResourceType.FILTER: _CRUD,
    ResourceType.PROCESS_DEFINITION: {
        "READ": READ,
        "UPDATE": _UPDATE,
        "DELETE": _DELETE,
        "RETRY_JOB": 32,
        "READ_TASK": 64,
        "UPDATE_TASK": 128,
        "CREATE_INSTANCE": 256,
        "READ_INSTANCE": 512,
        "UPDATE_INSTANCE": 1024,
        "DELETE_INSTANCE": 2048,
        "READ_HISTORY": 4096,
        "DELETE_HISTORY": 8192,
        "TASK_WORK": 16384,
        "TASK_ASSIGN": 32768,
        "MIGRATE_INSTANCE": 65536,
        "SUSPEND_INSTANCE": 131072,
        "UPDATE_INSTANCE_VARIABLE": 262144,
        "UPDATE_TASK_VARIABLE": 524288,
        "SUSPEND": 1048576,
        "READ_INSTANCE_VARIABLE": 2097152,
        "READ_HISTORY_VARIABLE": 4194304,
        "READ_TASK_VARIABLE": 8388608,
        "UPDATE_HISTORY": 16777216,
    },
    ResourceType.TASK: {
        **_CRUD,
        "UPDATE_VARIABLE": 32,
        "READ_VARIABLE": 64,
        "READ_HISTORY": 4096,
        "TASK_WORK": 16384,
        "TASK_ASSIGN": 32768,
    },
    ResourceType.PROCESS_INSTANCE: {
        **_CRUD,
        "RETRY_JOB": 32,
        "SUSPEND": 64,
        "UPDATE_VARIABLE": 128,
    },
    ResourceType.DEPLOYMENT: {"READ": READ, "CREATE": _CREATE, "DELETE": _DELETE},
    ResourceType.DECISION_DEFINITION: {
        "READ": READ,
        "UPDATE": _UPDATE,
        "CREATE_INSTANCE": 256,
        "READ_HISTORY": 4096,
        "DELETE_HISTORY": 8192,
    },
    ResourceType.TENANT: _CRUD,
    ResourceType.TENANT_MEMBERSHIP: {"CREATE": _CREATE, "DELETE": _DELETE},
    ResourceType.BATCH: {
        **_CRUD,
        "READ_HISTORY": 4096,
        "DELETE_HISTORY": 8192,
        "CREATE_BATCH_MIGRATE_PROCESS_INSTANCES": 32,
        "CREATE_BATCH_MODIFY_PROCESS_INSTANCES": 64,
        "CREATE_BATCH_RESTART_PROCESS_INSTANCES": 128,
        "CREATE_BATCH_DELETE_RUNNING_PROCESS_INSTANCES": 256,
        "CREATE_BATCH_DELETE_FINISHED_PROCESS_INSTANCES": 512,
        "CREATE_BATCH_DELETE_DECISION_INSTANCES": 1024,
        "CREATE_BATCH_SET_JOB_RETRIES": 2048,
        "CREATE_BATCH_SET_EXTERNAL_TASK_RETRIES": 16384,
        "CREATE_BATCH_UPDATE_PROCESS_INSTANCES_SUSPEND": 32768,
        "CREATE_BATCH_SET_REMOVAL_TIME": 65536,
        "CREATE_BATCH_SET_VARIABLES": 131072,
    },
    ResourceType.DECISION_REQUIREMENTS_DEFINITION: {"READ": READ},
    ResourceType.REPORT: _CRUD,
    ResourceType.DASHBOARD: _CRUD,
    ResourceType.HISTORIC_TASK: {"READ": READ, "READ_VARIABLE": 64},
    ResourceType.HISTORIC_PROCESS_INSTANCE: {"READ": READ},
}


def permission_bits(resource: ResourceType, names: list[str]) -> int:
    """The bitmask of `names` on `resource`; ALL and NONE on every resource. KeyError names the
    first permission the resource type does not have."""
    bits = 0
    for name in names:
        if name == "ALL":
            bits |= ALL
        elif name != "NONE":
            bits |= PERMISSIONS[resource][name]
    return bits


def permission_names(resource: ResourceType, bits: int) -> list[str]:
    """The names of the bits set in `bits` on `resource`: ["ALL"] when every bit is set,
    ["NONE"] when none is, else each named bit in the order of their values."""
    if bits == ALL:
        return ["ALL"]
    if bits == NONE:
        return ["NONE"]
    named = sorted(PERMISSIONS.get(resource, {}).items(), key=lambda item: item[1])
    return [name for name, bit in named if bits & bit]


def resource_named(name: str) -> ResourceType | None:
    """The resource type Camunda names `name` (its entity type), else None."""
    for resource, resource_name in RESOURCE_NAMES.items():
        if resource_name == name:
            return resource
    return None


# -- built-in groups ------------------------------------------------------------------------------

SYSTEM_GROUP_TYPE = "SYSTEM"
# Camunda's administrators group. A group of its own (a real row, its members listed and changed
# like any group's), which answers as `admin`: its members act as admins and it is granted what
# `admin` is granted. Camunda front-ends that make a user an administrator by adding them to
# `camunda-admin` so work unchanged.
CAMUNDA_ADMIN = "camunda-admin"

# Which role a built-in group's members act with; a principal acts with the highest role of the
# built-in groups it belongs to (admin > operator > viewer), and with none without any.
BUILTIN_ROLES: Mapping[str, Role] = {
    Role.VIEWER.value: Role.VIEWER,
    Role.OPERATOR.value: Role.OPERATOR,
    Role.ADMIN.value: Role.ADMIN,
    CAMUNDA_ADMIN: Role.ADMIN,
}
BUILTIN_NAMES: Mapping[str, str] = {
    Role.VIEWER.value: "Viewers",
    Role.OPERATOR.value: "Operators",
    Role.ADMIN.value: "Administrators",
    CAMUNDA_ADMIN: "Camunda administrators",
}
# The groups that make a principal an admin.
ADMIN_GROUPS = tuple(group for group, role in BUILTIN_ROLES.items() if role is Role.ADMIN)

PD = ResourceType.PROCESS_DEFINITION

# What a viewer may do: read everything the console and the APIs show (not users, groups,
# tenants or authorizations, which only admins see).
_VIEWER: Mapping[ResourceType, tuple[str, ...]] = {
    ResourceType.APPLICATION: ("ACCESS",),
    PD: (
        "READ",
        "READ_TASK",
        "READ_INSTANCE",
        "READ_HISTORY",
        "READ_INSTANCE_VARIABLE",
        "READ_HISTORY_VARIABLE",
        "READ_TASK_VARIABLE",
    ),
    ResourceType.PROCESS_INSTANCE: ("READ",),
    ResourceType.TASK: ("READ", "READ_VARIABLE", "READ_HISTORY"),
    ResourceType.DEPLOYMENT: ("READ",),
    ResourceType.DECISION_DEFINITION: ("READ", "READ_HISTORY"),
    ResourceType.DECISION_REQUIREMENTS_DEFINITION: ("READ",),
    ResourceType.BATCH: ("READ", "READ_HISTORY"),
    ResourceType.HISTORIC_PROCESS_INSTANCE: ("READ",),
    ResourceType.HISTORIC_TASK: ("READ", "READ_VARIABLE"),
}

# What an operator may do besides: start, change, suspend, cancel and retry instances, jobs and
# incidents, work on and assign tasks, run batches, evaluate decisions. Not deployments,
# migrations, deleting history, accounts or webhooks: those are an admin's.
_OPERATOR: Mapping[ResourceType, tuple[str, ...]] = {
    PD: (
        "RETRY_JOB",
        "UPDATE_TASK",
        "CREATE_INSTANCE",
        "UPDATE_INSTANCE",
        "DELETE_INSTANCE",
        "TASK_WORK",
        "TASK_ASSIGN",
        "SUSPEND_INSTANCE",
        "UPDATE_INSTANCE_VARIABLE",
        "UPDATE_TASK_VARIABLE",
        "UPDATE_HISTORY",  # notes on audit entries
    ),
    ResourceType.PROCESS_INSTANCE: (
        "CREATE",
        "UPDATE",
        "DELETE",
        "RETRY_JOB",
        "SUSPEND",
        "UPDATE_VARIABLE",
    ),
    ResourceType.TASK: ("UPDATE", "UPDATE_VARIABLE", "TASK_WORK", "TASK_ASSIGN"),
    ResourceType.DECISION_DEFINITION: ("CREATE_INSTANCE",),
    ResourceType.BATCH: (
        "CREATE",
        "UPDATE",
        "DELETE",
        "CREATE_BATCH_MODIFY_PROCESS_INSTANCES",
        "CREATE_BATCH_DELETE_RUNNING_PROCESS_INSTANCES",
        "CREATE_BATCH_SET_JOB_RETRIES",
        "CREATE_BATCH_SET_EXTERNAL_TASK_RETRIES",
        "CREATE_BATCH_UPDATE_PROCESS_INSTANCES_SUSPEND",
        "CREATE_BATCH_SET_VARIABLES",
    ),
}


@dataclass(frozen=True)
class BuiltinGrant:
    """One GRANT authorization of a built-in group on every resource (`*`) of a type."""

    group_id: str
    resource_type: ResourceType
    permissions: int


def builtin_grants() -> list[BuiltinGrant]:
    """What the built-in groups are granted, one row per group and resource type: exactly what
    the roles allowed before there were authorizations."""
    grants: list[BuiltinGrant] = []
    for resource in ResourceType:
        viewer = permission_bits(resource, list(_VIEWER.get(resource, ())))
        operator = viewer | permission_bits(resource, list(_OPERATOR.get(resource, ())))
        for group, role in BUILTIN_ROLES.items():
            bits = {Role.VIEWER: viewer, Role.OPERATOR: operator, Role.ADMIN: ALL}[role]
            if bits:
                grants.append(BuiltinGrant(group, resource, bits))
    return grants
