"""Camunda 7's precedence of authorizations, as its user guide states it: a user's own grants
and revokes over their groups', their groups' over the global ones; at one level a revoke wins
over a grant; ALL is every permission; `*` is every resource. Each row of the table is one case
from the guide, written out with the permission bits Camunda gives them."""

from __future__ import annotations

import pytest

from engine.identity.evaluate import Rule, is_authorized
from engine.identity.permissions import ALL, AuthorizationType, ResourceType

GLOBAL, GRANT, REVOKE = AuthorizationType.GLOBAL, AuthorizationType.GRANT, AuthorizationType.REVOKE
PD = int(ResourceType.PROCESS_DEFINITION)
PI = int(ResourceType.PROCESS_INSTANCE)
READ, UPDATE, DELETE_INSTANCE = 2, 4, 2048


def user(kind: AuthorizationType, bits: int, resource: str = "*", who: str = "ann") -> Rule:
    return Rule(kind, who, None, PD, resource, bits)


def group(kind: AuthorizationType, bits: int, resource: str = "*", name: str = "sales") -> Rule:
    return Rule(kind, None, name, PD, resource, bits)


def everybody(bits: int, resource: str = "*", resource_type: int = PD) -> Rule:
    return Rule(GLOBAL, "*", None, resource_type, resource, bits)


# (case, rules, permission asked, resource id asked, expected)
TABLE: list[tuple[str, list[Rule], int, str | None, bool]] = [
    ("nothing granted: denied", [], READ, "order", False),
    ("a global grant applies to everybody", [everybody(READ)], READ, "order", True),
    ("a global grant of another permission", [everybody(UPDATE)], READ, "order", False),
    ("a grant to the user", [user(GRANT, READ)], READ, "order", True),
    ("a grant to another user", [user(GRANT, READ, who="bob")], READ, "order", False),
    ("a grant to the user's group", [group(GRANT, READ)], READ, "order", True),
    ("a grant to a group the user is not in", [group(GRANT, READ, name="hr")], READ, "x", False),
    (
        "a group revoke beats a global grant",
        [everybody(READ), group(REVOKE, READ)],
        READ,
        "x",
        False,
    ),
    (
        "a user grant beats a group revoke",
        [group(REVOKE, READ), user(GRANT, READ)],
        READ,
        "x",
        True,
    ),
    (
        "a user revoke beats a group grant",
        [group(GRANT, READ), user(REVOKE, READ)],
        READ,
        "x",
        False,
    ),
    ("a user revoke beats a global grant", [everybody(READ), user(REVOKE, READ)], READ, "x", False),
    (
        "between groups a revoke wins over a grant",
        [group(GRANT, READ), group(REVOKE, READ, name="temps")],
        READ,
        "x",
        False,
    ),
    (
        "for one user a revoke wins over a grant",
        [user(GRANT, READ), user(REVOKE, READ)],
        READ,
        "x",
        False,
    ),
    (
        "a level that says nothing of the permission defers to the next",
        [user(GRANT, UPDATE), group(GRANT, READ)],
        READ,
        "x",
        True,
    ),
    ("ALL grants every permission", [user(GRANT, ALL)], DELETE_INSTANCE, "x", True),
    ("ALL asked needs every permission", [user(GRANT, READ | UPDATE)], ALL, "x", False),
    ("ALL granted answers ALL", [group(GRANT, ALL)], ALL, "x", True),
    (
        "revoking one permission takes away ALL",
        [group(GRANT, ALL), user(REVOKE, UPDATE)],
        ALL,
        "x",
        False,
    ),
    (
        "revoking one permission leaves the others",
        [group(GRANT, ALL), user(REVOKE, UPDATE)],
        READ,
        "x",
        True,
    ),
    (
        "revoking ALL takes away each permission",
        [everybody(ALL), group(REVOKE, ALL)],
        READ,
        "x",
        False,
    ),
    ("a grant on one resource id applies to it", [user(GRANT, READ, "order")], READ, "order", True),
    (
        "a grant on one resource id not to another",
        [user(GRANT, READ, "order")],
        READ,
        "bill",
        False,
    ),
    (
        "a grant on one id not to the type as a whole",
        [user(GRANT, READ, "order")],
        READ,
        None,
        False,
    ),
    ("a grant on * applies to the type as a whole", [user(GRANT, READ)], READ, None, True),
    (
        "a revoke on one id beats a global grant on * for that id",
        [everybody(READ), user(REVOKE, READ, "order")],
        READ,
        "order",
        False,
    ),
    (
        "and leaves the other ids",
        [everybody(READ), user(REVOKE, READ, "order")],
        READ,
        "bill",
        True,
    ),
    ("another resource type's grant", [everybody(READ, resource_type=PI)], READ, "x", False),
    (
        "several permissions asked: all granted",
        [user(GRANT, READ | UPDATE)],
        READ | UPDATE,
        "x",
        True,
    ),
    ("several permissions asked: one missing", [user(GRANT, READ)], READ | UPDATE, "x", False),
]


@pytest.mark.parametrize(
    ("rules", "permission", "resource_id", "expected"),
    [case[1:] for case in TABLE],
    ids=[case[0] for case in TABLE],
)
def test_precedence(
    rules: list[Rule], permission: int, resource_id: str | None, expected: bool
) -> None:
    assert (
        is_authorized(
            rules,
            user_id="ann",
            group_ids=["sales", "temps"],
            permission=permission,
            resource_type=PD,
            resource_id=resource_id,
        )
        is expected
    )


def test_without_a_user_only_groups_and_global_count() -> None:
    rules = [user(GRANT, READ), group(GRANT, UPDATE), everybody(DELETE_INSTANCE)]

    def allowed(permission: int) -> bool:
        return is_authorized(
            rules, user_id=None, group_ids=["sales"], permission=permission, resource_type=PD
        )

    assert not allowed(READ)
    assert allowed(UPDATE | DELETE_INSTANCE)
