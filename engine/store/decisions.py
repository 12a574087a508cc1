"""Decision definitions and the decision evaluations written in a command's transaction."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from engine.store.columns import fetch_all, fetch_one

_COLUMNS = (
    "id, key, version, name, version_tag, deployment_id, resource_name, content_hash, created_at, "
    "history_ttl_days"
)


@dataclass(frozen=True)
class DecisionRow:
    id: str
    key: str
    version: int
    name: str | None
    version_tag: str | None
    deployment_id: UUID
    resource_name: str
    content_hash: str
    created_at: datetime
    history_ttl_days: int | None = None


@dataclass(frozen=True)
class EvaluationRow:
    """One decision_evaluation row to write (see engine/schema.py's DecisionEvaluation)."""

    id: UUID
    root_id: UUID | None
    definition_id: str
    decision_key: str
    evaluated_at: datetime
    instance_id: UUID | None
    process_definition_id: str | None
    token_id: UUID | None
    node_id: str | None
    history_id: UUID | None
    user_id: str | None
    variables: dict[str, Any]
    inputs: list[dict[str, Any]]
    matched_rules: list[str]
    outputs: list[dict[str, Any]]
    result: list[dict[str, Any]]
    collect_value: Any


def latest(conn: psycopg.Connection[Any], key: str) -> DecisionRow | None:
    return fetch_one(
        conn,
        DecisionRow,
        f"SELECT {_COLUMNS} FROM decision_definition WHERE key = %s ORDER BY version DESC LIMIT 1",
        (key,),
    )


def find(
    conn: psycopg.Connection[Any],
    key: str,
    *,
    version: int | None = None,
    version_tag: str | None = None,
    deployment_id: UUID | None = None,
) -> DecisionRow | None:
    """The decision `key` a binding picks: a version, the latest with a version tag, the latest
    of a deployment, or else the latest."""
    return fetch_one(
        conn,
        DecisionRow,
        f"SELECT {_COLUMNS} FROM decision_definition WHERE key = %(key)s "
        "AND (%(version)s::int IS NULL OR version = %(version)s::int) "
        "AND (%(tag)s::text IS NULL OR version_tag = %(tag)s::text) "
        "AND (%(deployment)s::uuid IS NULL OR deployment_id = %(deployment)s::uuid) "
        "ORDER BY version DESC LIMIT 1",
        {"key": key, "version": version, "tag": version_tag, "deployment": deployment_id},
    )


def by_id(conn: psycopg.Connection[Any], definition_id: str) -> DecisionRow | None:
    return fetch_one(
        conn,
        DecisionRow,
        f"SELECT {_COLUMNS} FROM decision_definition WHERE id = %s",
        (definition_id,),
    )


def source_xml(conn: psycopg.Connection[Any], definition_id: str) -> str | None:
    row = conn.execute(
        "SELECT source_xml FROM decision_definition WHERE id = %s", (definition_id,)
    ).fetchone()
    return row[0] if row else None


def in_deployment(conn: psycopg.Connection[Any], deployment_id: UUID) -> dict[str, str]:
    """The decision keys of a deployment and their definition ids."""
    rows = conn.execute(
        "SELECT key, id FROM decision_definition WHERE deployment_id = %s", (deployment_id,)
    ).fetchall()
    return {key: definition_id for key, definition_id in rows}


def list_all(conn: psycopg.Connection[Any], key: str | None = None) -> list[DecisionRow]:
    return fetch_all(
        conn,
        DecisionRow,
        f"SELECT {_COLUMNS} FROM decision_definition WHERE %s::text IS NULL OR key = %s "
        "ORDER BY key, version",
        (key, key),
    )


def lock_key(conn: psycopg.Connection[Any], key: str) -> None:
    """Serialise deployments of one decision key until the transaction ends."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('decision:' || %s, 0))", (key,))


def insert_definition(conn: psycopg.Connection[Any], row: DecisionRow, source: str) -> None:
    conn.execute(
        "INSERT INTO decision_definition (id, key, version, name, version_tag, deployment_id, "
        "resource_name, source_xml, content_hash, created_at, history_ttl_days) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            row.id,
            row.key,
            row.version,
            row.name,
            row.version_tag,
            row.deployment_id,
            row.resource_name,
            source,
            row.content_hash,
            row.created_at,
            row.history_ttl_days,
        ),
    )


_FIELDS = tuple(EvaluationRow.__dataclass_fields__)
_JSON_FIELDS = frozenset(
    {"variables", "inputs", "matched_rules", "outputs", "result", "collect_value"}
)


def insert_evaluations(conn: psycopg.Connection[Any], rows: Sequence[EvaluationRow]) -> None:
    """Write the evaluations of one command, in one statement."""
    if not rows:
        return
    values = [
        tuple(
            Jsonb(json_ready(getattr(row, name))) if name in _JSON_FIELDS else getattr(row, name)
            for name in _FIELDS
        )
        for row in rows
    ]
    placeholders = "(" + ", ".join(["%s"] * len(_FIELDS)) + ")"
    conn.execute(
        f"INSERT INTO decision_evaluation ({', '.join(_FIELDS)}) VALUES "
        + ", ".join([placeholders] * len(values)),
        [item for value in values for item in value],
    )


def json_ready(value: Any) -> Any:
    """A value as JSON keeps it: dates and durations as ISO text, decimals as numbers."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _iso_duration(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _iso_duration(value: dt.timedelta) -> str:
    seconds = value.total_seconds()
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, rest = divmod(rest, 60)
    time = "".join(
        f"{int(n) if part != 'S' else (int(n) if n == int(n) else n)}{part}"
        for n, part in ((hours, "H"), (minutes, "M"), (rest, "S"))
        if n
    )
    text = f"{sign}P{f'{int(days)}D' if days else ''}{'T' + time if time else ''}"
    return text if text not in ("P", "-P") else "PT0S"


def insert_outbox(
    conn: psycopg.Connection[Any], event: str, evaluation_id: UUID, decision_key: str
) -> None:
    """The outbox row of a direct evaluation: no instance, so the evaluation's row stands for
    it (its id is both the row's instance id and its history id; the node id is the key)."""
    conn.execute(
        "INSERT INTO outbox (event, instance_id, node_id, history_id) VALUES (%s, %s, %s, %s)",
        (event, evaluation_id, decision_key, evaluation_id),
    )
