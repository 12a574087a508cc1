"""Writes of the audit log (engine/core/audit.py): one `audit_entry` row, in the command's
transaction; an entry's annotation (engine/commands/audit.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from engine.core.actors import Actor
from engine.db.ids import new_id
from engine.states import AuditEntity, AuditOperation
from engine.store.columns import fetch_one


def insert_entry(
    conn: psycopg.Connection[Any],
    at: datetime,
    actor: Actor,
    *,
    operation: AuditOperation,
    entity: AuditEntity,
    entity_id: str | None,
    instance_id: UUID | None,
    definition_id: str | None,
    definition_key: str | None,
    property: str | None,
    before: Any,
    after: Any,
    annotation: str | None,
    details: Any,
) -> UUID:
    """Write one entry done by `actor` at `at`; its id."""
    entry_id = new_id()
    conn.execute(
        "INSERT INTO audit_entry (id, at, user_id, channel, operation, entity, entity_id, "
        "instance_id, definition_id, definition_key, batch_id, property, before, after, "
        "annotation, details) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            entry_id,
            at,
            actor.user,
            actor.channel.value,
            operation.value,
            entity.value,
            entity_id,
            instance_id,
            definition_id,
            definition_key,
            actor.batch_id,
            property,
            None if before is None else Jsonb(before),
            None if after is None else Jsonb(after),
            annotation,
            None if details is None else Jsonb(details),
        ),
    )
    return entry_id


@dataclass(frozen=True)
class AnnotatedEntry:
    """What an annotation of an entry records of it: the annotation it had, and what it was
    about."""

    annotation: str | None
    entity: str
    entity_id: str | None
    instance_id: UUID | None
    definition_id: str | None
    definition_key: str | None


def lock_entry(conn: psycopg.Connection[Any], entry_id: UUID) -> AnnotatedEntry | None:
    """The entry `entry_id`, locked until the transaction ends; None when there is none."""
    return fetch_one(
        conn,
        AnnotatedEntry,
        "SELECT annotation, entity, entity_id, instance_id, definition_id, definition_key "
        "FROM audit_entry WHERE id = %s FOR UPDATE",
        (entry_id,),
    )


def set_annotation(conn: psycopg.Connection[Any], entry_id: UUID, annotation: str | None) -> None:
    conn.execute("UPDATE audit_entry SET annotation = %s WHERE id = %s", (annotation, entry_id))
