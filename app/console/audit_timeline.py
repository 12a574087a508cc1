"""The instance's audit entries in the inspector's history timeline: each entry goes between
the visits it happened between, so the timeline tells who did what when, among what the
instance did."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol
from uuid import UUID

from engine.api import Engine
from engine.queries import audit as audit_reads
from engine.queries.audit import AuditRow


class _Visit(Protocol):
    @property
    def started_at(self) -> datetime: ...


class _Entry(Protocol):
    @property
    def visit(self) -> _Visit: ...


def placed(
    engine: Engine, instance_id: UUID, timeline: Sequence[_Entry], node: str | None
) -> dict[int, list[AuditRow]]:
    """The instance's entries by the index of the timeline entry each goes before (the length
    of the timeline: after the last one); none when the timeline shows one node only."""
    if node is not None:
        return {}
    rows = audit_reads.instance_entries(engine, instance_id)
    starts = [entry.visit.started_at for entry in timeline]
    found: dict[int, list[AuditRow]] = {}
    position = 0
    for row in rows:  # oldest first, as the timeline
        while position < len(starts) and starts[position] <= row.at:
            position += 1
        found.setdefault(position, []).append(row)
    return found
