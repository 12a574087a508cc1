"""What one principal may do, as the reads and the commands ask it: the authorizations that can
apply to a user (their own, their groups', the global ones), evaluated by Camunda's precedence
(engine/identity/evaluate.py). Pure: the rows are read once per request
(engine/queries/grants.py) and travel with the request's actor (engine/core/actors.py).

A read asks for a `Scope`: which resources of one type the principal holds a permission on,
either every one but a few revoked ids, or a set of ids. `engine/sql/filters.Where.authorized`
turns scopes into one SQL condition over indexed columns (a definition key, an instance id), so
that rows a principal may not see are never read, whatever the page size.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.identity.evaluate import Rule, is_authorized
from engine.identity.permissions import ANY, READ, ResourceType


@dataclass(frozen=True)
class Scope:
    """The resources of one type a permission covers: every one but `except_ids`
    (`everything`), or only `ids`."""

    everything: bool
    ids: frozenset[str] = frozenset()
    except_ids: frozenset[str] = frozenset()

    def allows(self, resource_id: str) -> bool:
        if self.everything:
            return resource_id not in self.except_ids
        return resource_id in self.ids

    @property
    def unrestricted(self) -> bool:
        return self.everything and not self.except_ids

    @property
    def empty(self) -> bool:
        return not self.everything and not self.ids


EVERYTHING = Scope(everything=True)


@dataclass(frozen=True)
class Grants:
    """A principal's user id, groups and every authorization row that can apply to them."""

    user_id: str | None
    group_ids: frozenset[str]
    rules: tuple[Rule, ...] = field(default=())

    def allows(
        self, permission: int, resource_type: ResourceType, resource_id: str | None = None
    ) -> bool:
        """Whether every bit of `permission` is held on the resource (on the type as a whole
        when no id is given: only `*` authorizations count then)."""
        return is_authorized(
            self.rules,
            user_id=self.user_id,
            group_ids=self.group_ids,
            permission=permission,
            resource_type=resource_type,
            resource_id=resource_id,
        )

    def scope(self, permission: int, resource_type: ResourceType) -> Scope:
        """Which resources of `resource_type` the principal holds `permission` on. A user reads
        their own user (Camunda grants it to every user it creates) and the groups they belong
        to, always."""
        named = {
            rule.resource_id
            for rule in self.rules
            if rule.resource_type == resource_type and rule.resource_id != ANY
        }
        own: set[str] = set()
        if permission == READ and resource_type == ResourceType.USER and self.user_id:
            own = {self.user_id}
        elif permission == READ and resource_type == ResourceType.GROUP:
            own = set(self.group_ids)
        if self.allows(permission, resource_type):
            revoked = (i for i in named - own if not self.allows(permission, resource_type, i))
            return Scope(everything=True, except_ids=frozenset(revoked))
        granted = {i for i in named if self.allows(permission, resource_type, i)}
        return Scope(everything=False, ids=frozenset(granted | own))


def grants_of(user_id: str | None, group_ids: Iterable[str], rules: Iterable[Rule]) -> Grants:
    return Grants(user_id, frozenset(group_ids), tuple(rules))
