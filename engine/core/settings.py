"""What a deployment of the engine may tune: `EngineSettings`, handed to every command's
transaction (`Tx.settings`). The database session limits default to their INTERLOCK_*
environment variables (`ENV`), else to `DEFAULTS`; engine/db/connections.py applies them to every
session the engine opens."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

from engine.db.retention import RetentionSettings
from engine.language.timers import TimerLimits, time_zone

DEFAULTS: dict[str, int] = {
    "statement_timeout_ms": 120_000,
    "lock_timeout_ms": 30_000,
    "idle_in_transaction_timeout_ms": 300_000,
    "connect_timeout_s": 2,
    "pool_timeout_ms": 5_000,
}
ENV: dict[str, str] = {
    "statement_timeout_ms": "INTERLOCK_STATEMENT_TIMEOUT_MS",
    "lock_timeout_ms": "INTERLOCK_LOCK_TIMEOUT_MS",
    "idle_in_transaction_timeout_ms": "INTERLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS",
    "connect_timeout_s": "INTERLOCK_CONNECT_TIMEOUT_S",
    "pool_timeout_ms": "INTERLOCK_POOL_TIMEOUT_MS",
}


TIMEZONE_ENV = "INTERLOCK_TIMEZONE"


def env_time_zone() -> str:
    """The time zone of cron timer cycles from INTERLOCK_TIMEZONE (an IANA name), else UTC."""
    name = os.environ.get(TIMEZONE_ENV, "").strip()
    if not name:
        return "UTC"
    try:
        time_zone(name)
    except ValueError as error:
        raise ValueError(f"{TIMEZONE_ENV}: {error}") from None
    return name


def env_setting(name: str) -> int:
    """The setting `name` from its environment variable, else its default."""
    variable = ENV[name]
    text = os.environ.get(variable, "").strip()
    if not text:
        return DEFAULTS[name]
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{variable} must be a whole number, not {text!r}") from None
    if value < 0:
        raise ValueError(f"{variable} must not be negative, not {text!r}")
    return value


@dataclass(frozen=True)
class EngineSettings:
    """Behaviour a deployment may tune. `unhandled_bpmn_error`: "end" ends the execution that
    threw an uncaught BPMN error (Camunda 7's default); "incident" stops it with an incident."""

    default_retries: int = 3
    unhandled_bpmn_error: Literal["end", "incident"] = "end"
    # How large a model a deployment accepts (engine.model.ModelLimits; these are its defaults):
    # bytes of BPMN or DMN input, flow nodes in one process, sequence flows into or out of one
    # node, rules in one decision table, decisions in one DMN file.
    max_bpmn_bytes: int = 5 * 1024 * 1024
    max_process_nodes: int = 10_000
    max_fan_out: int = 1_000
    max_decision_rules: int = 10_000
    max_dmn_decisions: int = 100
    # The shortest interval of a timer cycle and the longest timer duration, at deployment and
    # whenever a timer starts (an expression's result included).
    min_timer_cycle_ms: int = 1000
    max_timer_years: int = 100
    # The IANA time zone whose wall clock cron timer cycles fire on (engine/language/cron.py:
    # a time skipped when clocks go forward is skipped, a repeated one fires once), from
    # INTERLOCK_TIMEZONE, else UTC. ISO 8601 timers keep the offsets they are written with.
    timezone: str = field(default_factory=env_time_zone)
    # Bounds of what callers of the HTTP APIs may ask for (a 400 beyond them): how long a worker
    # may lock or extend an external task, how long a failed task may wait before its retry, and
    # how many tasks one fetch may lock.
    max_lock_duration_ms: int = 86_400_000
    max_retry_timeout_ms: int = 2_592_000_000
    max_fetch_tasks: int = 1000
    # How long one script of a model (engine/scripting.py) may run, and how large its
    # isolate's heap may grow, before the command that runs it fails.
    script_timeout_ms: int = 1000
    script_max_memory_bytes: int = 64 * 1024 * 1024
    # Database sessions (engine/db/connections.py; 0 turns a timeout off): how long one statement
    # may run, wait for a lock, or a transaction may sit idle before PostgreSQL ends it; how
    # long connecting may take; how long a request waits for a pooled connection while the
    # database is up (while it is down, requests fail at once: engine/db/outage.py). Defaults
    # come from the INTERLOCK_* variables named in ENV.
    statement_timeout_ms: int = field(default_factory=lambda: env_setting("statement_timeout_ms"))
    lock_timeout_ms: int = field(default_factory=lambda: env_setting("lock_timeout_ms"))
    idle_in_transaction_timeout_ms: int = field(
        default_factory=lambda: env_setting("idle_in_transaction_timeout_ms")
    )
    connect_timeout_s: int = field(default_factory=lambda: env_setting("connect_timeout_s"))
    pool_timeout_ms: int = field(default_factory=lambda: env_setting("pool_timeout_ms"))
    # History time to live and the cleanup (engine/db/retention.py), from INTERLOCK_* variables.
    retention: RetentionSettings = dataclasses.field(default_factory=RetentionSettings.from_env)

    def __post_init__(self) -> None:
        time_zone(self.timezone)  # an unknown zone is refused when the engine is set up

    @property
    def timer_limits(self) -> TimerLimits:
        return TimerLimits(
            timedelta(milliseconds=self.min_timer_cycle_ms), self.max_timer_years, self.timezone
        )
