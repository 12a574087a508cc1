"""Whether a user may do something, by Camunda 7's precedence of authorizations. Pure: the rows
that could apply are read by the caller (engine/queries/identity.py).

The rules, as Camunda's user guide gives them:
- an authorization applies to a resource when its resource type is the resource's and its
  resource id is the resource's id or `*`; asked about a resource type as a whole (no id), only
  the `*` ones apply;
- the user's own GRANT and REVOKE authorizations come first, then those of the user's groups,
  then the GLOBAL ones (which apply to everybody);
- at the first level that says anything about a permission, a REVOKE wins over a GRANT;
- a permission nobody grants is not granted;
- ALL is every permission: granting it grants each one, revoking it (or any one permission)
  takes away ALL.

Each permission bit asked for is decided on its own: a request for several (or ALL) is allowed
only when every bit is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.identity.permissions import ANY, AuthorizationType


@dataclass(frozen=True)
class Rule:
    """An authorization row as the evaluator needs it. For a revoke, `permissions` are the bits
    it takes away."""

    type: AuthorizationType
    user_id: str | None
    group_id: str | None
    resource_type: int
    resource_id: str
    permissions: int


def _applies(rule: Rule, resource_type: int, resource_id: str | None) -> bool:
    if rule.resource_type != resource_type:
        return False
    return rule.resource_id == ANY or (resource_id is not None and rule.resource_id == resource_id)


def is_authorized(
    rules: Iterable[Rule],
    *,
    user_id: str | None,
    group_ids: Iterable[str],
    permission: int,
    resource_type: int,
    resource_id: str | None = None,
) -> bool:
    """Whether `user_id`, a member of `group_ids`, holds every bit of `permission` on the
    resource (see the module's rules). `rules` may hold rows of anybody: those of other users
    and groups are left out here."""
    groups = set(group_ids)
    levels: list[list[Rule]] = [[], [], []]
    for rule in rules:
        if not _applies(rule, resource_type, resource_id):
            continue
        if rule.type is AuthorizationType.GLOBAL:
            levels[2].append(rule)
        elif user_id is not None and rule.user_id == user_id:
            levels[0].append(rule)
        elif rule.group_id is not None and rule.group_id in groups:
            levels[1].append(rule)
    decided = allowed = 0
    for level in levels:
        revoked = granted = 0
        for rule in level:
            if rule.type is AuthorizationType.REVOKE:
                revoked |= rule.permissions
            else:
                granted |= rule.permissions
        open_bits = permission & ~decided
        allowed |= open_bits & granted & ~revoked
        decided |= open_bits & (granted | revoked)
    return permission != 0 and allowed & permission == permission
