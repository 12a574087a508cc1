"""History retention: how long ended instances are kept, when the cleanup runs, how much it
deletes at a time, and what it may never delete.

The removal time of a family of instances (a root and everything it called) is its root's end
time plus the history time to live of the root's definition: the model's
`camunda:historyTimeToLive`, else `RetentionSettings.history_ttl_days`. The whole family is
deleted together once its root has ended and that time has passed; a called instance never goes
before its root. The cleanup itself is engine/commands/cleanup.py.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

import psycopg

from engine.language.history_ttl import check_history_ttl


@dataclass(frozen=True)
class CleanupWindow:
    """The daily window the cleanup runs in by itself, in UTC: from `start` until `end`, across
    midnight when `end` is earlier; all day when they are equal."""

    start: time
    end: time

    @classmethod
    def parse(cls, text: str) -> CleanupWindow | None:
        """`HH:MM-HH:MM`, or `off` (None: the cleanup runs only when started by hand)."""
        value = text.strip().lower()
        if value in ("off", "none", ""):
            return None
        found = re.fullmatch(r"(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})", value)
        if found is None:
            raise ValueError(f"a cleanup window is HH:MM-HH:MM or off, not {text!r}")
        hours = (int(found.group(1)), int(found.group(3)))
        minutes = (int(found.group(2)), int(found.group(4)))
        if max(hours) > 23 or max(minutes) > 59:
            raise ValueError(f"a cleanup window is HH:MM-HH:MM or off, not {text!r}")
        return cls(time(hours[0], minutes[0]), time(hours[1], minutes[1]))

    def __str__(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"

    def _opening(self, now: datetime) -> datetime:
        """The latest start of the window at or before `now`."""
        utc = now.astimezone(UTC)
        opening = datetime.combine(utc.date(), self.start, UTC)
        return opening if opening <= utc else opening - timedelta(days=1)

    def _length(self) -> timedelta:
        start = timedelta(hours=self.start.hour, minutes=self.start.minute)
        end = timedelta(hours=self.end.hour, minutes=self.end.minute)
        return (end - start) % timedelta(days=1) or timedelta(days=1)

    def contains(self, now: datetime) -> bool:
        return now.astimezone(UTC) < self._opening(now) + self._length()

    def next_start(self, now: datetime) -> datetime:
        """The first start of the window after `now`."""
        return self._opening(now) + timedelta(days=1)

    def span(self, now: datetime) -> tuple[datetime, datetime]:
        """Start and end of the window `now` is in, else of the next one."""
        start = self._opening(now) if self.contains(now) else self.next_start(now)
        return start, start + self._length()

    def due(self, now: datetime) -> datetime:
        """When a run should start: now inside the window, else at its next start."""
        return now if self.contains(now) else self.next_start(now)


DEFAULT_WINDOW = CleanupWindow(time(22, 0), time(6, 0))


@dataclass(frozen=True)
class RetentionSettings:
    """How long history is kept and how the cleanup runs (see README, "Retention")."""

    # Days an ended instance is kept when its model sets no camunda:historyTimeToLive
    # (None: kept forever). Camunda 7.20 deploys with 180 days by default.
    history_ttl_days: int | None = 180
    # When the cleanup runs by itself (None: only when started by hand).
    window: CleanupWindow | None = DEFAULT_WINDOW
    # Families of instances deleted per transaction; idempotency and outbox rows per
    # transaction are ten times as many.
    batch_size: int = 500
    # Idempotency entries are forgotten this long after their first use.
    idempotency_days: int = 7
    # Outbox rows are deleted this long after they were written, once every consumer passed them.
    outbox_days: int = 7
    # Runs of the cleanup kept for the record.
    runs_kept: int = 30

    def __post_init__(self) -> None:
        if self.history_ttl_days is not None:
            check_history_ttl(self.history_ttl_days)
        if self.batch_size < 1 or self.idempotency_days < 0 or self.outbox_days < 0:
            raise ValueError(
                "the cleanup's batch size must be positive and its windows not negative"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RetentionSettings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        ttl = env.get("INTERLOCK_HISTORY_TTL_DAYS")
        if ttl is not None and ttl.strip():
            values["history_ttl_days"] = (
                None if ttl.strip().lower() in ("none", "off") else _days(ttl, "HISTORY_TTL_DAYS")
            )
        window = env.get("INTERLOCK_CLEANUP_WINDOW")
        if window is not None and window.strip():
            try:
                values["window"] = CleanupWindow.parse(window)
            except ValueError as exc:
                raise ValueError(f"INTERLOCK_CLEANUP_WINDOW: {exc}") from None
        for name, variable in _NUMBERS.items():
            text = env.get(f"INTERLOCK_{variable}")
            if text is not None and text.strip():
                values[name] = _days(text, variable)
        try:
            return cls(**values)
        except ValueError as exc:
            raise ValueError(f"retention settings: {exc}") from None


_NUMBERS = {
    "batch_size": "CLEANUP_BATCH_SIZE",
    "idempotency_days": "IDEMPOTENCY_RETENTION_DAYS",
    "outbox_days": "OUTBOX_RETENTION_DAYS",
}


def _days(text: str, variable: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"INTERLOCK_{variable} must be a whole number, not {text!r}")
    return value


def outbox_floor(conn: psycopg.Connection[Any]) -> int | None:
    """The lowest outbox seq that must be kept because a consumer has not passed it yet; None
    when no consumer holds any back. The one place that says what the outbox's consumers still
    need: the cleanup deletes only rows below it (and older than the retention window), and
    keeps every family of instances that ended after that row was written (its events may be
    at or above it).

    The stream's tails read the outbox live and resume from a client's last seq within the
    retention window; nothing they keep is in the database. Webhook subscriptions hold back every
    row they have not fanned out into deliveries yet (engine/webhooks)."""
    from engine import webhooks

    return webhooks.outbox_floor(conn)
