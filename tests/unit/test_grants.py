"""Which rows a principal's grants reach: the scope of a permission over one resource type (every
one but revoked ids, or some ids), and the one SQL condition `Where.authorized` writes for it."""

from __future__ import annotations

from uuid import UUID

from engine.core.actors import Actor, acting
from engine.identity.evaluate import Rule
from engine.identity.grants import Scope, grants_of
from engine.identity.permissions import AuthorizationType, ResourceType
from engine.sql.filters import Cover, Covers, Where
from engine.states import AuditChannel

GRANT, REVOKE = AuthorizationType.GRANT, AuthorizationType.REVOKE
PD, PI = ResourceType.PROCESS_DEFINITION, ResourceType.PROCESS_INSTANCE
READ_INSTANCE = 512  # Camunda's ProcessDefinitionPermissions.READ_INSTANCE
READ = 2
INSTANCE_ID = "0190d7b4-0000-7000-8000-000000000001"


def rule(kind: AuthorizationType, resource: ResourceType, resource_id: str, bits: int) -> Rule:
    return Rule(kind, "ann", None, int(resource), resource_id, bits)


def test_scope_of_some_definitions() -> None:
    grants = grants_of("ann", [], [rule(GRANT, PD, "order", READ_INSTANCE)])
    assert grants.scope(READ_INSTANCE, PD) == Scope(everything=False, ids=frozenset({"order"}))
    assert grants.scope(READ, PD) == Scope(everything=False)


def test_scope_of_all_but_a_revoked_one() -> None:
    grants = grants_of(
        "ann",
        [],
        [rule(GRANT, PD, "*", READ_INSTANCE), rule(REVOKE, PD, "payroll", READ_INSTANCE)],
    )
    assert grants.scope(READ_INSTANCE, PD) == Scope(
        everything=True, except_ids=frozenset({"payroll"})
    )


def covers() -> Covers:
    return Covers(
        (
            Cover(READ_INSTANCE, PD, "pi.definition_key"),
            Cover(READ, PI, "pi.id", uuid=True),
        ),
        "pi.tenant_id",
    )


def condition(where: Where) -> str:
    return where.conditions().as_string(None)


def test_no_actor_reads_everything() -> None:
    where = Where()
    where.authorized(covers())
    assert condition(where) == "TRUE"


def test_a_principal_reads_their_definitions_and_instances() -> None:
    grants = grants_of(
        "ann",
        [],
        [
            rule(GRANT, PD, "order", READ_INSTANCE),
            rule(GRANT, PI, INSTANCE_ID, READ),
            rule(GRANT, PI, "not-a-uuid", READ),
        ],
    )
    where = Where()
    with acting(Actor("ann", AuditChannel.API, grants=grants)):
        where.authorized(covers())
    assert condition(where) == "(pi.definition_key = ANY(%(p0)s) OR pi.id = ANY(%(p1)s))"
    assert where.params() == {"p0": ["order"], "p1": [UUID(INSTANCE_ID)]}


def test_all_but_revoked_and_nothing_at_all() -> None:
    every = grants_of(
        "ann",
        [],
        [rule(GRANT, PD, "*", READ_INSTANCE), rule(REVOKE, PD, "payroll", READ_INSTANCE)],
    )
    where = Where()
    with acting(Actor("ann", AuditChannel.API, grants=every)):
        where.authorized(Covers((Cover(READ_INSTANCE, PD, "pi.definition_key"),), "pi.tenant_id"))
    assert condition(where) == "(NOT (pi.definition_key = ANY(%(p0)s)))"
    assert where.params() == {"p0": ["payroll"]}

    nothing = Where()
    with acting(Actor("bob", AuditChannel.API, grants=grants_of("bob", [], []))):
        nothing.authorized(covers())
    assert condition(nothing) == "FALSE"

    whole = Where()
    with acting(
        Actor(
            "ann",
            AuditChannel.API,
            grants=grants_of("ann", [], [rule(GRANT, PD, "*", READ_INSTANCE)]),
        )
    ):
        whole.authorized(covers())
    assert condition(whole) == "TRUE"


def test_a_principal_of_some_tenants_reads_their_rows_and_those_of_none() -> None:
    whole = grants_of("ann", [], [rule(GRANT, PD, "*", READ_INSTANCE)])
    where = Where()
    with acting(Actor("ann", AuditChannel.API, grants=whole, tenant_ids=frozenset({"b", "a"}))):
        where.authorized(covers())
    # Every definition by grant, but only the rows of her tenants and of none.
    assert condition(where) == "(pi.tenant_id IS NULL OR pi.tenant_id = ANY(%(p0)s))"
    assert where.params() == {"p0": ["a", "b"]}

    narrowed = Where()
    some = grants_of("ann", [], [rule(GRANT, PD, "order", READ_INSTANCE)])
    with acting(Actor("ann", AuditChannel.API, grants=some, tenant_ids=frozenset())):
        narrowed.authorized(covers())
    assert condition(narrowed) == (
        "(pi.tenant_id IS NULL OR pi.tenant_id = ANY(%(p0)s)) AND (pi.definition_key = ANY(%(p1)s))"
    )
