"""Settings of the web process, from arguments or the environment."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    # Never in the repr: the URL may carry the database password.
    database_url: str | None = field(default=None, repr=False)
    home: Path | None = None
    host: str = "127.0.0.1"
    demo: bool = False
    auth: bool = True
    run_jobs: bool = True
    # Keys the CSRF token of the console without authentication (sessions keep their own);
    # random per process unless set.
    secret: str | None = None
    # The absolute URL clients reach this server at (behind a proxy: https://host[/prefix]);
    # absolute links are built from it, never from the request's Host header.
    public_url: str | None = None
    # Request bodies larger than this are refused (413) before they are read; deployment
    # uploads (whole BPMN files) get the larger limit.
    max_body_bytes: int = 1024 * 1024
    max_deployment_bytes: int = 16 * 1024 * 1024
    # Proxy addresses whose X-Forwarded-For/-Proto uvicorn believes (comma-separated; none).
    forwarded_allow_ips: str | None = None
    # Console sessions end this long after log-in, or after this long without a request.
    session_max_seconds: int = 12 * 3600
    session_idle_seconds: int = 30 * 60
    # Failed log-ins (console, HTTP Basic) allowed per user name from one client address, per
    # user name from all addresses, and per client address (unknown API tokens count there too)
    # within the window (moving, in seconds); more are answered 429 with Retry-After. See
    # app.auth.Throttle for what a full address still lets through.
    login_failures_per_user: int = 10
    login_failures_per_user_all_addresses: int = 100
    login_failures_per_address: int = 100
    login_failure_window_seconds: int = 300
    # Send cookies with `Secure` (HTTPS only); always when public_url is https.
    secure_cookies: bool = False
    # On SIGTERM: how long commands, jobs and tasks in flight get to finish before the process
    # exits anyway (their locks then expire as after a crash).
    shutdown_grace_seconds: float = 15.0

    @property
    def cookies_secure(self) -> bool:
        return self.secure_cookies or (self.public_url or "").lower().startswith("https://")

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        home = os.environ.get("INTERLOCK_HOME")
        values: dict[str, object] = {
            "database_url": os.environ.get("DATABASE_URL") or None,
            "home": Path(home) if home else None,
            "demo": os.environ.get("INTERLOCK_DEMO", "") == "1",
            "secret": os.environ.get("INTERLOCK_SECRET") or None,
            "public_url": os.environ.get("INTERLOCK_PUBLIC_URL") or None,
            "forwarded_allow_ips": os.environ.get("INTERLOCK_FORWARDED_ALLOW_IPS") or None,
        }
        for name, variable in _SIZES.items():
            if os.environ.get(variable):
                values[name] = _size(os.environ[variable])
        for name, variable in _LOGIN.items():
            if os.environ.get(variable):
                values[name] = _positive(variable, os.environ[variable])
        if os.environ.get(GRACE_ENV):
            values["shutdown_grace_seconds"] = grace_seconds(os.environ[GRACE_ENV])
        if os.environ.get("INTERLOCK_SECURE_COOKIES"):
            values["secure_cookies"] = os.environ["INTERLOCK_SECURE_COOKIES"] == "1"
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


GRACE_ENV = "INTERLOCK_SHUTDOWN_GRACE_SECONDS"


def grace_seconds(text: str) -> float:
    """The shutdown grace period from its setting: a number of seconds from 0 to 3600."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 3600:
        raise ValueError(f"{GRACE_ENV} must be a number of seconds from 0 to 3600, not {text}")
    return value


_SIZES = {
    "max_body_bytes": "INTERLOCK_MAX_BODY_BYTES",
    "max_deployment_bytes": "INTERLOCK_MAX_DEPLOYMENT_BYTES",
}


def _size(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"a size limit must be a positive number of bytes, not {text}")
    return value


_LOGIN = {
    "session_max_seconds": "INTERLOCK_SESSION_MAX_SECONDS",
    "session_idle_seconds": "INTERLOCK_SESSION_IDLE_SECONDS",
    "login_failures_per_user": "INTERLOCK_LOGIN_FAILURES_PER_USER",
    "login_failures_per_user_all_addresses": "INTERLOCK_LOGIN_FAILURES_PER_USER_ALL_ADDRESSES",
    "login_failures_per_address": "INTERLOCK_LOGIN_FAILURES_PER_ADDRESS",
    "login_failure_window_seconds": "INTERLOCK_LOGIN_FAILURE_WINDOW_SECONDS",
}


def _positive(variable: str, text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"{variable} must be a positive whole number, not {text}")
    return value
