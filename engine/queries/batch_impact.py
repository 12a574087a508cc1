"""What a batch created from a list's filter would touch, read before it is created: how many
items the filter matches now (one COUNT through the filter builder, narrowed by what the caller
may read) and a sample of them, newest instances or oldest incidents first, as the lists order
them. The batch itself takes its items from the same filter when it is created."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Generic, TypeVar

from engine.queries import Connection, query
from engine.queries.console import IncidentRow, count_open_incidents, open_incidents
from engine.queries.lists import IncidentFilter
from engine.store import instances as instance_store
from engine.store.instance_reads import InstanceInfo
from engine.store.instances import InstanceFilter

__all__ = ["SAMPLE_SIZE", "Impact", "incidents", "instances", "unfinished"]

# How many of the matching items a preview lists.
SAMPLE_SIZE = 10

T = TypeVar("T")


@dataclass(frozen=True)
class Impact(Generic[T]):
    count: int
    sample: list[T]


def unfinished(where: InstanceFilter, *, roots: bool = False) -> InstanceFilter:
    """`where` narrowed to the instances a batch can still change: those that have not ended,
    and with `roots` only those nobody called (a called instance is cancelled with its root)."""
    return dataclasses.replace(where, unfinished=True, root_only=True if roots else where.root_only)


@query
def instances(
    conn: Connection, where: InstanceFilter, sample: int = SAMPLE_SIZE
) -> Impact[InstanceInfo]:
    return Impact(
        instance_store.count_matching(conn, where),
        instance_store.rows_after(conn, where, None, sample),
    )


@query
def incidents(
    conn: Connection, where: IncidentFilter, sample: int = SAMPLE_SIZE
) -> Impact[IncidentRow]:
    count = count_open_incidents(
        conn,
        definition_key=where.definition_key,
        incident_type=where.incident_type,
        node_id=where.node_id,
        text=where.text,
    )
    rows = open_incidents(
        conn,
        definition_key=where.definition_key,
        incident_type=where.incident_type,
        node_id=where.node_id,
        text=where.text,
        limit=sample,
    )
    return Impact(count, rows)
