"""What a principal may do, read once per request: the groups of the user (and a token's own
group) and every authorization row that can apply to them (the global ones, the user's, those
groups'), in one statement over the indexed `group_membership.user_id`,
`authorization_rule.user_id` and `authorization_rule.group_id`. The request's actor carries the
`Grants` (app/access.py); reads narrow their rows by them (engine/sql/filters.py)."""

from __future__ import annotations

from engine.identity.evaluate import Rule
from engine.identity.grants import Grants, grants_of
from engine.identity.permissions import ANY, AuthorizationType
from engine.queries import Connection, query

__all__ = ["grants"]

_GRANTS = """
WITH groups AS (
    SELECT m.group_id FROM group_membership m WHERE m.user_id = %(user)s
    UNION SELECT %(group)s::text WHERE %(group)s::text IS NOT NULL
)
SELECT NULL, NULL, NULL, NULL, NULL, NULL, g.group_id FROM groups g
UNION ALL
SELECT r.type, r.user_id, r.group_id, r.resource_type, r.resource_id, r.permissions, NULL
FROM authorization_rule r WHERE r.user_id = ANY(%(users)s)
UNION ALL
SELECT r.type, r.user_id, r.group_id, r.resource_type, r.resource_id, r.permissions, NULL
FROM authorization_rule r WHERE r.group_id IN (SELECT group_id FROM groups)
"""


@query
def grants(conn: Connection, user_id: str | None, group_id: str | None = None) -> Grants:
    """The grants of the user `user_id` (None: of nobody's user), and of the token's own group
    `group_id` if any. The global authorizations (user id `*`) apply to everybody."""
    users = [ANY] if user_id is None else [ANY, user_id]
    rows = conn.execute(_GRANTS, {"user": user_id, "group": group_id, "users": users}).fetchall()
    groups = [row[6] for row in rows if row[6] is not None]
    rules = [
        Rule(AuthorizationType(row[0]), row[1], row[2], row[3], row[4], row[5])
        for row in rows
        if row[6] is None
    ]
    return grants_of(user_id, groups, rules)
