"""How the engine connects: the libpq options of every session it opens.

Every connection gets a connect timeout and TCP keepalives (a server that vanished without
closing its sockets is noticed within seconds, not at the kernel's TCP timeout), and the
session limits of `EngineSettings`: statement, lock and idle-in-transaction timeouts, so that a
stuck query or a forgotten transaction cannot hold a worker or a lock forever. Each setting's
default comes from its environment variable (`ENV`), else from `DEFAULTS`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.executor import EngineSettings

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
# Seconds of silence before TCP probes a connection, between probes, and probes unanswered
# before the connection counts as dead; and how long sent data may go unacknowledged.
_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 3,
    "keepalives_count": 3,
    "tcp_user_timeout": 20_000,
}


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


def session_options(settings: EngineSettings, *extra: tuple[str, str]) -> str:
    """The libpq `options` that set the session limits (and `extra` settings) at connect."""
    values = [
        ("statement_timeout", str(settings.statement_timeout_ms)),
        ("lock_timeout", str(settings.lock_timeout_ms)),
        ("idle_in_transaction_session_timeout", str(settings.idle_in_transaction_timeout_ms)),
        *extra,
    ]
    return " ".join(f"-c {name}={value}" for name, value in values)


def connect_kwargs(settings: EngineSettings, *extra: tuple[str, str]) -> dict[str, Any]:
    """Keyword arguments of `psycopg.connect` for a session of the engine."""
    return {
        "connect_timeout": max(1, settings.connect_timeout_s) if settings.connect_timeout_s else 0,
        **_KEEPALIVES,
        "options": session_options(settings, *extra),
    }
