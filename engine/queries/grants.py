"""What a principal may do and which tenants they see, read once per request in one statement:
the groups of the user (and a token's own group), every authorization row that can apply to them
(the global ones, the user's, those groups'), and the tenants of the user and of those groups,
over the indexed `group_membership.user_id`, `authorization_rule.user_id`,
`authorization_rule.group_id`, `tenant_membership.user_id` and `tenant_membership.group_id`. The
request's actor carries the `Grants` and the tenants (app/access.py); reads narrow their rows by
them (engine/sql/filters.py)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.identity.evaluate import Rule
from engine.identity.grants import Grants, grants_of
from engine.identity.permissions import ANY, AuthorizationType
from engine.queries import Connection, query

__all__ = ["Access", "access", "grants"]

# One row per group (its id in the 7th column), per authorization (the first six) and per tenant
# (the 8th). A tenant is the principal's when the user, one of the user's groups or the token's
# own group belongs to it.
_ACCESS = """
WITH member_of AS (
    SELECT m.group_id FROM group_membership m WHERE m.user_id = %(user)s
), groups AS (
    SELECT group_id FROM member_of
    UNION SELECT %(group)s::text WHERE %(group)s::text IS NOT NULL
)
SELECT NULL, NULL, NULL, NULL, NULL, NULL, g.group_id, NULL FROM groups g
UNION ALL
SELECT r.type, r.user_id, r.group_id, r.resource_type, r.resource_id, r.permissions, NULL, NULL
FROM authorization_rule r WHERE r.user_id = ANY(%(users)s)
UNION ALL
SELECT r.type, r.user_id, r.group_id, r.resource_type, r.resource_id, r.permissions, NULL, NULL
FROM authorization_rule r WHERE r.group_id IN (SELECT group_id FROM groups)
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, t.tenant_id FROM (
    SELECT m.tenant_id FROM tenant_membership m WHERE m.user_id = %(user)s
    UNION SELECT m.tenant_id FROM tenant_membership m
    WHERE m.group_id IN (SELECT group_id FROM groups)
) t
"""


@dataclass(frozen=True)
class Access:
    """A principal's grants, and the tenants whose rows they see besides those of no tenant
    (a user's own and their groups', a token's own group's)."""

    grants: Grants
    tenant_ids: frozenset[str]


@query
def access(conn: Connection, user_id: str | None, group_id: str | None = None) -> Access:
    """The grants and tenants of the user `user_id` (None: of nobody's user), and of the
    token's own group `group_id` if any. The global authorizations (user id `*`) apply to
    everybody."""
    users = [ANY] if user_id is None else [ANY, user_id]
    rows = conn.execute(_ACCESS, {"user": user_id, "group": group_id, "users": users}).fetchall()
    groups = [row[6] for row in rows if row[6] is not None]
    tenants = frozenset(row[7] for row in rows if row[7] is not None)
    rules = [
        Rule(AuthorizationType(row[0]), row[1], row[2], row[3], row[4], row[5])
        for row in rows
        if row[0] is not None
    ]
    return Access(grants_of(user_id, groups, rules), tenants)


@query
def grants(conn: Connection, user_id: str | None, group_id: str | None = None) -> Grants:
    """The grants of `access`."""
    return access(conn, user_id, group_id).grants
