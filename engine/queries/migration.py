"""Reads of a version migration, nothing written: the plan Camunda's generator makes between two
deployed definitions, and what of a plan and of each instance cannot follow it (the checks
`MigrateInstance` applies, over committed rows read without a lock)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import UUID

from engine.core.runtime import InstanceRun
from engine.errors import NotFound
from engine.queries import Connection, query
from engine.semantics.migration import (
    MigrationPlan,
    ValidationReport,
    generate_plan,
    validation_report,
)
from engine.store import runs
from engine.store.migration import models_of

if TYPE_CHECKING:
    from engine.core.definitions import DefinitionCache

__all__ = ["MigrationPlan", "ValidationReport", "plan", "validation"]


@query
def plan(
    conn: Connection,
    cache: DefinitionCache,
    source_id: str,
    target_id: str,
    update_event_triggers: bool = False,
) -> MigrationPlan:
    """The nodes of the same id and type in both definitions, mapped."""
    models = models_of(conn, cache, MigrationPlan(source_id, target_id))
    return generate_plan(models.source, models.target, source_id, target_id, update_event_triggers)


@query
def validation(
    conn: Connection,
    cache: DefinitionCache,
    plan: MigrationPlan,
    instance_ids: Iterable[UUID],
    now: datetime,
) -> ValidationReport:
    """The plan's instruction failures and, per instance, what of it cannot follow the plan."""
    return validation_report(plan, models_of(conn, cache, plan), _runs(conn, instance_ids, now))


def _runs(
    conn: Connection, instance_ids: Iterable[UUID], now: datetime
) -> Iterator[tuple[UUID, InstanceRun | None]]:
    """Each instance's committed rows, read without a lock (None: no such instance)."""
    for instance_id in instance_ids:
        try:
            yield instance_id, runs.load_run(conn, instance_id, now, lock=False)
        except NotFound:
            yield instance_id, None
