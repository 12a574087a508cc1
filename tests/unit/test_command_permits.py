"""Every command declares what its actor must hold (engine/core/permits.py), and a permit is
decided by Camunda's rules: any need of a group, every group, the assignee or a candidate where
the permit says so; a refusal names each permission that would have done."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from typing import Any

import pytest

import engine.commands
from engine.core import permits
from engine.core.actors import Actor
from engine.errors import AuthorizationDenied, MissingAuthorization
from engine.identity.evaluate import Rule
from engine.identity.grants import grants_of
from engine.identity.permissions import AuthorizationType, ResourceType, permission_bits
from engine.states import AuditChannel

GRANT, REVOKE = AuthorizationType.GRANT, AuthorizationType.REVOKE
PD, PI, TASK = ResourceType.PROCESS_DEFINITION, ResourceType.PROCESS_INSTANCE, ResourceType.TASK


def _commands() -> list[type[Any]]:
    found = []
    for info in pkgutil.iter_modules(engine.commands.__path__):
        module = importlib.import_module(f"engine.commands.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and isinstance(cls.__dict__.get("name"), str):
                found.append(cls)
    return found


def test_every_command_declares_its_permits() -> None:
    commands = _commands()
    assert len(commands) > 50
    undeclared = [
        c.__name__ for c in commands if not isinstance(getattr(c, "permits", None), tuple)
    ]
    assert undeclared == []
    for command in commands:
        assert all(isinstance(p, permits.Permit) for p in command.permits), command.__name__


@dataclass
class _Tx:
    actor: Actor | None


def _tx(*rules: Rule, user: str = "ann", groups: tuple[str, ...] = ()) -> Any:
    return _Tx(Actor(user, AuditChannel.API, grants=grants_of(user, groups, rules)))


def _rule(kind: AuthorizationType, resource: ResourceType, rid: str, *names: str) -> Rule:
    return Rule(kind, "ann", None, int(resource), rid, permission_bits(resource, list(names)))


def test_either_the_instance_or_its_definition_will_do() -> None:
    on_instance = _tx(_rule(GRANT, PI, "i-1", "UPDATE"))
    permits.check(on_instance, permits.UPDATE_INSTANCE, instance="i-1", definition="order")
    on_definition = _tx(_rule(GRANT, PD, "order", "UPDATE_INSTANCE"))
    permits.check(on_definition, permits.UPDATE_INSTANCE, instance="i-1", definition="order")
    with pytest.raises(AuthorizationDenied) as refused:
        permits.check(on_definition, permits.UPDATE_INSTANCE, instance="i-2", definition="pay")
    assert refused.value.message == (
        "The user with id 'ann' does not have one of the following permissions: 'UPDATE' "
        "permission on resource 'i-2' of type 'ProcessInstance' or 'UPDATE_INSTANCE' "
        "permission on resource 'pay' of type 'ProcessDefinition'."
    )
    assert [m.to_dict() for m in refused.value.missing] == [
        {"permission": "UPDATE", "resource_type": "ProcessInstance", "resource_id": "i-2"},
        {
            "permission": "UPDATE_INSTANCE",
            "resource_type": "ProcessDefinition",
            "resource_id": "pay",
        },
    ]


def test_starting_needs_both_create_permissions() -> None:
    only_definition = _tx(_rule(GRANT, PD, "order", "CREATE_INSTANCE"))
    with pytest.raises(AuthorizationDenied) as refused:
        permits.check(only_definition, permits.START_INSTANCE, definition="order")
    assert [m.permission for m in refused.value.missing] == ["CREATE"]
    both = _tx(_rule(GRANT, PD, "order", "CREATE_INSTANCE"), _rule(GRANT, PI, "*", "CREATE"))
    permits.check(both, permits.START_INSTANCE, definition="order")


def test_the_assignee_and_candidates_need_no_grant() -> None:
    nobody = _tx()
    facts: dict[str, Any] = {"task": "t-1", "definition": "order"}
    permits.check(nobody, permits.WORK_ON_TASK, assignee="ann", **facts)
    with pytest.raises(AuthorizationDenied):
        permits.check(nobody, permits.WORK_ON_TASK, assignee="bob", **facts)
    in_group = _tx(groups=("clerks",))
    permits.check(in_group, permits.CLAIM_TASK, candidate_groups=["clerks"], **facts)
    with pytest.raises(AuthorizationDenied):
        permits.check(in_group, permits.ASSIGN_TASK, candidate_groups=["clerks"], **facts)


def test_nothing_is_checked_without_grants() -> None:
    nobody: Any = _Tx(None)
    permits.check(nobody, permits.UPDATE_INSTANCE, instance="i", definition="d")
    unbound: Any = _Tx(Actor("ann", AuditChannel.CLI))
    permits.check(unbound, permits.UPDATE_INSTANCE, instance="i", definition="d")


def test_the_operator_words_name_the_permissions() -> None:
    refused = AuthorizationDenied(
        "ann",
        (
            MissingAuthorization("UPDATE", "ProcessInstance", "i-1"),
            MissingAuthorization("UPDATE_INSTANCE", "ProcessDefinition", "*"),
        ),
    )
    assert refused.plain == (
        "You may not do this. It needs UPDATE on process instance 'i-1', or UPDATE_INSTANCE "
        "on every process definition: an administrator can grant it."
    )


def test_a_user_is_their_own_and_administering_needs_all() -> None:
    permits.check(_tx(), permits.UPDATE_OWN_USER, user="ann")
    with pytest.raises(AuthorizationDenied):
        permits.check(_tx(), permits.UPDATE_OWN_USER, user="bob")
    everything: Any = _Tx(
        Actor(
            "ann",
            AuditChannel.API,
            grants=grants_of(
                "ann",
                ["admin"],
                [Rule(GRANT, None, "admin", int(ResourceType.AUTHORIZATION), "*", 2**31 - 1)],
            ),
        )
    )
    permits.check(everything, permits.ADMINISTER)
    most = _tx(_rule(GRANT, ResourceType.AUTHORIZATION, "*", "READ", "UPDATE", "CREATE"))
    with pytest.raises(AuthorizationDenied) as refused:
        permits.check(most, permits.ADMINISTER)
    assert [m.permission for m in refused.value.missing] == ["ALL"]
