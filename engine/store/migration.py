"""The writes of a version migration: an instance's rows move to the nodes of another definition;
and the plan's two definitions, read.

Each kind of row is one statement over arrays of (id, new values). The statement that changes the
instance's definition writes nothing else of the instance (its summary trigger moves the
instance's counts from one definition to the other, see engine/db/summaries.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from engine.core.definitions import DefinitionCache
from engine.errors import NotFound
from engine.semantics.migration import MigrationPlan, Models
from engine.store import definitions as definition_store


def models_of(conn: psycopg.Connection[Any], cache: DefinitionCache, plan: MigrationPlan) -> Models:
    """The plan's source and target definitions, parsed (NotFound naming the one missing)."""
    found = []
    for role, definition_id in (
        ("source", plan.source_definition_id),
        ("target", plan.target_definition_id),
    ):
        row = definition_store.by_id(conn, definition_id)
        if row is None:
            raise NotFound(
                f"{role} process definition '{definition_id}' does not exist",
                field=f"{role}ProcessDefinitionId",
            )
        found.append((row, cache.get(conn, row.id, row.key)))
    (_, source), (target_row, target) = found
    return Models(source, target, target_row.key)


@dataclass
class MigrationMoves:
    """What one instance's migration writes; every list holds rows that keep their ids."""

    tokens: list[tuple[UUID, str]] = field(default_factory=list)
    # (history id, node id, node name, node type): the open visit of a moved token.
    visits: list[tuple[UUID, str, str | None, str]] = field(default_factory=list)
    tasks: list[tuple[UUID, str]] = field(default_factory=list)
    external_tasks: list[tuple[UUID, str]] = field(default_factory=list)
    # (job id, node id, due at, timer text, repetitions left)
    jobs: list[tuple[UUID, str, datetime, str | None, int | None]] = field(default_factory=list)
    # (subscription id, node id, name)
    subscriptions: list[tuple[UUID, str, str]] = field(default_factory=list)
    incidents: list[tuple[UUID, str]] = field(default_factory=list)
    # (old gateway id, scope key, new gateway id, new arrivals)
    joins: list[tuple[str, str, str, list[dict[str, str]]]] = field(default_factory=list)


def _columns(rows: list[tuple[Any, ...]]) -> list[list[Any]]:
    return [list(column) for column in zip(*rows, strict=True)]


def move_definition(
    conn: psycopg.Connection[Any], instance_id: UUID, definition_id: str, definition_key: str
) -> None:
    """The instance now runs `definition_id` (alone in its statement), and its external tasks
    carry the key of that definition."""
    conn.execute(
        "WITH moved AS (UPDATE process_instance SET definition_id = %(id)s, "
        "definition_key = %(key)s WHERE id = %(instance)s) "
        "UPDATE external_task SET definition_key = %(key)s WHERE instance_id = %(instance)s",
        {"id": definition_id, "key": definition_key, "instance": instance_id},
    )


def apply(
    conn: psycopg.Connection[Any], instance_id: UUID, definition_id: str, moves: MigrationMoves
) -> None:
    """Move the instance's rows to their nodes of `definition_id`."""
    if moves.tokens:
        ids, nodes = _columns(moves.tokens)
        conn.execute(
            "UPDATE token t SET node_id = m.node_id, version = t.version + 1 "
            "FROM unnest(%s::uuid[], %s::text[]) AS m(id, node_id) "
            "WHERE t.id = m.id AND t.instance_id = %s",
            (ids, nodes, instance_id),
        )
    if moves.visits:
        ids, nodes, names, types = _columns(moves.visits)
        conn.execute(
            "UPDATE history h SET node_id = m.node_id, node_name = m.node_name, "
            "node_type = m.node_type "
            "FROM unnest(%s::uuid[], %s::text[], %s::text[], %s::text[]) "
            "AS m(id, node_id, node_name, node_type) WHERE h.id = m.id AND h.instance_id = %s",
            (ids, nodes, names, types, instance_id),
        )
    for table, rows in (("user_task", moves.tasks), ("external_task", moves.external_tasks)):
        if rows:
            ids, nodes = _columns(rows)
            conn.execute(
                f"UPDATE {table} w SET node_id = m.node_id "
                "FROM unnest(%s::uuid[], %s::text[]) AS m(id, node_id) "
                "WHERE w.id = m.id AND w.instance_id = %s",
                (ids, nodes, instance_id),
            )
    if moves.jobs:
        ids, nodes, dues, texts, left = _columns(moves.jobs)
        conn.execute(
            "UPDATE job j SET node_id = m.node_id, definition_id = %s, due_at = m.due_at, "
            "timer_text = m.timer_text, repetitions_left = m.repetitions_left "
            "FROM unnest(%s::uuid[], %s::text[], %s::timestamptz[], %s::text[], %s::int[]) "
            "AS m(id, node_id, due_at, timer_text, repetitions_left) "
            "WHERE j.id = m.id AND j.instance_id = %s",
            (definition_id, ids, nodes, dues, texts, left, instance_id),
        )
    if moves.subscriptions:
        ids, nodes, names = _columns(moves.subscriptions)
        conn.execute(
            "UPDATE event_subscription e SET node_id = m.node_id, name = m.name, "
            "definition_id = %s FROM unnest(%s::uuid[], %s::text[], %s::text[]) "
            "AS m(id, node_id, name) WHERE e.id = m.id AND e.instance_id = %s",
            (definition_id, ids, nodes, names, instance_id),
        )
    # Every incident of the instance names its definition; the open ones move with their token.
    ids, nodes = _columns(moves.incidents) if moves.incidents else ([], [])
    conn.execute(
        "UPDATE incident i SET definition_id = %s, node_id = coalesce(m.node_id, i.node_id) "
        "FROM incident x LEFT JOIN unnest(%s::uuid[], %s::text[]) AS m(id, node_id) "
        "ON m.id = x.id WHERE i.id = x.id AND x.instance_id = %s",
        (definition_id, ids, nodes, instance_id),
    )
    for old, scope_key, new, arrivals in moves.joins:
        conn.execute(
            "UPDATE join_state SET gateway_id = %s, arrivals = %s, version = version + 1 "
            "WHERE instance_id = %s AND gateway_id = %s AND scope_key = %s",
            (new, Jsonb(arrivals), instance_id, old, scope_key),
        )
