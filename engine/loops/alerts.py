"""The alert watch: a background thread that raises stuck-instance alerts (engine/commands/
alerts.py `RaiseAlerts`) every few seconds, and at the next known crossing when that comes
sooner, so an alert is raised (its webhook event and its live page refresh) within a tick of the
time passing, not only when something commits.

Any number of processes may run one: the thresholds are locked SKIP LOCKED by the tick that
raises them, and a crossing is recorded once whoever records it.
"""

from __future__ import annotations

import logging
import os
from datetime import datetime
from typing import Protocol, TypeVar

from engine.commands.alerts import RaiseAlerts
from engine.core.executor import Clock, Command, Idempotency, Result
from engine.db.outage import is_database_outage
from engine.loops.threads import Looping, Loops

T = TypeVar("T", bound=Result)
log = logging.getLogger("engine.alerts")  # the name operators' log settings know

# Seconds between ticks at most (INTERLOCK_ALERT_TICK_SECONDS; default 5).
TICK_ENV = "INTERLOCK_ALERT_TICK_SECONDS"
DEFAULT_TICK_SECONDS = 5.0
_MIN_WAIT_SECONDS = 0.05
_MAX_BACKOFF_SECONDS = 60.0


def default_tick_seconds() -> float:
    text = os.environ.get(TICK_ENV)
    if not text:
        return DEFAULT_TICK_SECONDS
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ValueError(f"{TICK_ENV} must be a positive number of seconds, not {text}")
    return value


class AlertingEngine(Protocol):
    """What the watch needs of an engine (engine.api.Engine is one)."""

    clock: Clock

    def run(self, command: Command[T], idempotency_key: str | Idempotency | None = None) -> T: ...


class AlertWatch(Looping):
    owner = "in this process"
    _log = log

    def __init__(self, engine: AlertingEngine, tick: float | None = None) -> None:
        self.engine = engine
        self.tick = tick if tick is not None else default_tick_seconds()
        self._loops = Loops("interlock-alerts", "alert watch")

    def start(self) -> None:
        self._loops.start(self._loop, 1)

    def run_once(self) -> float:
        """Raise what crossed; the seconds until the next tick."""
        result = self.engine.run(RaiseAlerts())
        if not result.next_crossing:
            return self.tick
        due = datetime.fromisoformat(result.next_crossing)
        until = (due - self.engine.clock()).total_seconds()
        return max(_MIN_WAIT_SECONDS, min(self.tick, until))

    def _loop(self) -> None:
        failures = 0
        wait = 0.0
        stopping = self._loops.stopping
        while not stopping.wait(wait):
            try:
                wait = self.run_once()
                failures = 0
            except Exception as exc:
                failures += 1
                wait = min(_MAX_BACKOFF_SECONDS, self.tick * 2 ** min(failures, 10))
                if is_database_outage(exc):
                    log.warning("alert watch: the database is away; again in %.1fs", wait)
                else:
                    log.exception("alert watch failed; again in %.1fs", wait)
