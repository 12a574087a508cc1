"""Decision definitions (stored as process definitions are: engine/store/definitions.py, with
`table=DECISIONS`) and the decision evaluations written in a command's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from engine.sql.filters import Where
from engine.store import definitions
from engine.store.columns import fetch_one
from engine.store.definitions import COLUMNS, DECISIONS, PROCESSES, DefinitionRow

# A decision definition has a process definition's columns.
DecisionRow = DefinitionRow


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
    return definitions.latest(conn, key, DECISIONS)


def find(
    conn: psycopg.Connection[Any],
    key: str,
    *,
    version: int | None = None,
    version_tag: str | None = None,
    deployed_with: str | None = None,
    called_from: str | None = None,
) -> DecisionRow | None:
    """The decision `key` a binding picks: a version, the latest with a version tag, the latest
    deployed with the process definition `deployed_with`, or else the latest. Called from the
    process definition `called_from` (a business rule task): of its tenant, as Camunda's (of no
    tenant for a process of none); else of a tenant the request's principal sees, or of none."""
    where = Where()
    where.equals("key", key)
    if called_from is None:
        where.tenants("tenant_id")
    else:
        where.add(
            f"tenant_id IS NOT DISTINCT FROM (SELECT tenant_id FROM {PROCESSES} WHERE id = {{}})",
            called_from,
        )
    where.equals("version", version)
    where.equals("version_tag", version_tag)
    where.when(
        deployed_with,
        f"deployment_id = (SELECT deployment_id FROM {PROCESSES} WHERE id = {{}})",
    )
    query = (
        sql.SQL(f"SELECT {COLUMNS} FROM {DECISIONS}")
        + where.sql()
        + sql.SQL(" ORDER BY version DESC LIMIT 1")
    )
    return fetch_one(conn, DecisionRow, query, where.params())


def by_id(conn: psycopg.Connection[Any], definition_id: str) -> DecisionRow | None:
    return definitions.by_id(conn, definition_id, DECISIONS)


def source_xml(conn: psycopg.Connection[Any], definition_id: str) -> str | None:
    row = conn.execute(
        "SELECT source_xml FROM decision_definition WHERE id = %s", (definition_id,)
    ).fetchone()
    return row[0] if row else None


def deployed_source(
    conn: psycopg.Connection[Any], definition_id: str
) -> tuple[str, str, dict[str, str]] | None:
    """The decision definition's file as deployed: its resource name, its DMN text, and the
    definition ids of the decisions deployed with it, by key (None: no such definition)."""
    row = conn.execute(
        f"SELECT d.resource_name, d.source_xml, (SELECT jsonb_object_agg(o.key, o.id) "
        f"FROM {DECISIONS} o WHERE o.deployment_id = d.deployment_id) "
        f"FROM {DECISIONS} d WHERE d.id = %s",
        (definition_id,),
    ).fetchone()
    if row is None:
        return None
    name, source, keys = row
    return name, source, keys


def list_all(conn: psycopg.Connection[Any], key: str | None = None) -> list[DecisionRow]:
    return definitions.list_all(conn, key, DECISIONS)


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
            Jsonb(getattr(row, name)) if name in _JSON_FIELDS else getattr(row, name)
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


def insert_outbox(
    conn: psycopg.Connection[Any], event: str, evaluation_id: UUID, decision_key: str
) -> None:
    """The outbox row of a direct evaluation: no instance, so the evaluation's row stands for
    it (its id is both the row's instance id and its history id; the node id is the key)."""
    conn.execute(
        "INSERT INTO outbox (instance_id, events) VALUES (%s, jsonb_build_array("
        "jsonb_build_object('event', %s::text, 'node_id', %s::text, 'history_id', %s::uuid)))",
        (evaluation_id, event, decision_key, evaluation_id),
    )
