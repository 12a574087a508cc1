"""Finding the waiting subscriptions a message or signal reaches."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql

from engine.language.variables import infer
from engine.sql.filters import Where
from engine.states import InstanceState


def _keys(values: Mapping[str, Any] | None) -> str:
    """Variables to match, as the JSON the statements read them from."""
    return json.dumps([{"name": k, "value": infer(v).to_json()} for k, v in (values or {}).items()])


def waiting_instances(
    conn: psycopg.Connection[Any],
    kind: str,
    name: str,
    *,
    business_key: str | None = None,
    instance_id: UUID | None = None,
    correlation_keys: Mapping[str, Any] | None = None,
    tenant_id: str | None = None,
    without_tenant: bool = False,
    or_none: bool = False,
    narrowed: bool = True,
    local_keys: Mapping[str, Any] | None = None,
) -> list[tuple[UUID, UUID]]:
    """(subscription id, instance id) of active instances waiting for `name` that match, in
    the order their instances are to be locked: by family root, then by instance (each
    instance is locked after its root, so the roots are locked in id order, as
    `engine.store.runs.load_runs` locks them). Of tenant `tenant_id` (with `or_none`, and of no
    tenant), or `without_tenant` of none; `narrowed`: only of the tenants the request's principal
    sees (a request's correlation; not a signal a process throws). `correlation_keys` are
    matched with the instance's variables, `local_keys` (Camunda's localCorrelationKeys) with
    the variables of the waiting execution: the subscription's token's own, else those of its
    token's scope."""
    keys = _keys(correlation_keys)
    where = Where()
    where.add("s.kind = {}", kind)
    where.add("s.name = {}", name)
    where.add("p.state = {}", InstanceState.ACTIVE)
    where.equals("p.business_key", business_key)
    where.equals("p.id", instance_id)
    where.tenant("p.tenant_id", tenant_id, without_tenant, or_none=or_none)
    if narrowed:
        where.tenants("p.tenant_id")
    where.add(
        "NOT EXISTS ("
        "  SELECT 1 FROM jsonb_to_recordset({}::jsonb) AS k(name text, value jsonb) "
        "  WHERE NOT EXISTS (SELECT 1 FROM variable v WHERE v.instance_id = p.id "
        "    AND v.scope_key = '' AND v.name = k.name AND v.value = k.value))",
        keys,
    )
    if local_keys:
        # The nearest variable of the name: the token's own local, else its scope's.
        where.add(
            "NOT EXISTS ("
            "  SELECT 1 FROM jsonb_to_recordset({}::jsonb) AS k(name text, value jsonb) "
            "  WHERE (SELECT v.value FROM variable v WHERE v.instance_id = p.id "
            "    AND v.name = k.name AND v.scope_key IN (s.token_id::text, "
            "      coalesce(t.scope_id::text, '')) "
            "    ORDER BY v.scope_key = s.token_id::text DESC LIMIT 1) "
            "  IS DISTINCT FROM k.value)",
            _keys(local_keys),
        )
    rows = conn.execute(
        sql.SQL(
            "SELECT s.id, s.instance_id FROM event_subscription s "
            "JOIN process_instance p ON p.id = s.instance_id "
            "LEFT JOIN token t ON t.id = s.token_id"
        )
        + where.sql()
        + sql.SQL(" ORDER BY p.root_instance_id, s.instance_id, s.created_at, s.id"),
        where.params(),
    ).fetchall()
    return [(row[0], row[1]) for row in rows]
