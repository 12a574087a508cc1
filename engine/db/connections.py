"""How the engine connects: the libpq options of every session it opens.

Every connection gets a connect timeout and TCP keepalives (a server that vanished without
closing its sockets is noticed within seconds, not at the kernel's TCP timeout), and the
session limits of `EngineSettings`: statement, lock and idle-in-transaction timeouts, so that a
stuck query or a forgotten transaction cannot hold a worker or a lock forever. Each setting's
default comes from its environment variable, else from a default (engine/core/settings.py).
"""

from __future__ import annotations

from typing import Any

from engine.core.settings import EngineSettings

# Seconds of silence before TCP probes a connection, between probes, and probes unanswered
# before the connection counts as dead; and how long sent data may go unacknowledged.
_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 3,
    "keepalives_count": 3,
    "tcp_user_timeout": 20_000,
}


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
