"""The "retrying" early warning in the inspector: an instance's failed jobs and external tasks
that still have retries left, with their last error and next attempt, as of one moment."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

from engine.queries import Reader, retrying
from engine.queries.retrying import RetryingWork


@dataclass(frozen=True)
class Retrying:
    """`work`: the instance's retrying jobs and tasks, the one tried next first; `now`: the
    moment the next attempts are told against ("in 30s", "being tried now")."""

    work: list[RetryingWork]
    now: datetime

    def of(self, row_id: UUID) -> RetryingWork | None:
        """The retrying job or external task with this id, if it is one."""
        return next((w for w in self.work if w.id == row_id), None)


def retrying_of(engine: Reader, instance_id: UUID) -> Retrying:
    return Retrying(retrying.of_instance(engine, instance_id), datetime.now(UTC))
