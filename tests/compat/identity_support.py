"""What the identity tests share: the audit entries a server wrote, read from its database."""

from __future__ import annotations

from typing import Any

from tests.server import LiveServer


def audit_entries(server: LiveServer, entity: str) -> list[dict[str, Any]]:
    """The audit entries of `entity` (Camunda's entity type), the oldest first."""
    with server.engine.connection() as conn:
        rows = conn.execute(
            "SELECT user_id, operation, entity_id, property, before, after FROM audit_entry"
            " WHERE entity = %s ORDER BY at, id",
            (entity,),
        ).fetchall()
    keys = ("userId", "operation", "entityId", "property", "before", "after")
    return [dict(zip(keys, row, strict=True)) for row in rows]
