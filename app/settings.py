"""Settings of the web process, from arguments or the environment."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from engine.states import Role

# Provider groups that map to Interlock's roles when INTERLOCK_OIDC_ROLE_GROUPS is not set: the
# built-in groups' own names (`admin` also answering to Camunda's `camunda-admin`).
DEFAULT_ROLE_GROUPS: tuple[tuple[str, Role], ...] = (
    ("viewer", Role.VIEWER),
    ("operator", Role.OPERATOR),
    ("admin", Role.ADMIN),
    ("camunda-admin", Role.ADMIN),
)
# Where the provider sends the browser back to, under the public URL unless configured.
CALLBACK_PATH = "/auth/callback"


@dataclass(frozen=True)
class OidcSettings:
    """Single sign-on through an OpenID provider (app/oidc.py, app/sso.py)."""

    issuer: str
    client_id: str
    client_secret: str = field(default="", repr=False)
    scopes: str = "openid profile email"
    # The claim that names the user (falling back to `sub` when a token lacks it), and the one
    # that lists their groups at the provider.
    user_claim: str = "preferred_username"
    groups_claim: str = "groups"
    # The callback the provider redirects to; None: CALLBACK_PATH under the public URL.
    redirect_url: str | None = None
    # The `aud` that bearer JWTs for the APIs must carry; None: the APIs accept no JWT.
    audience: str | None = None
    # (provider group, role): a user acts with the highest role any of their groups maps to,
    # else as a viewer.
    role_groups: tuple[tuple[str, Role], ...] = DEFAULT_ROLE_GROUPS

    def role_for(self, groups: object) -> Role:
        """The role a user with these provider groups (the groups claim's value) acts with."""
        names = {groups} if isinstance(groups, str) else groups
        held = set(names) if isinstance(names, (list, tuple, set)) else set()
        role = Role.VIEWER
        for group, mapped in self.role_groups:
            if group in held and mapped.allows(role):
                role = mapped
        return role


def role_groups(text: str) -> tuple[tuple[str, Role], ...]:
    """`admin=platform-admins,operator=ops` (a role may appear more than once) as pairs."""
    pairs: list[tuple[str, Role]] = []
    for part in text.split(","):
        if not part.strip():
            continue
        role, equals, group = (piece.strip() for piece in part.partition("="))
        if not equals or not group or role not in tuple(Role):
            raise ValueError(
                "INTERLOCK_OIDC_ROLE_GROUPS must read ROLE=GROUP[,ROLE=GROUP...] with ROLE one "
                f"of viewer, operator, admin, not {text!r}"
            )
        pairs.append((group, Role(role)))
    return tuple(pairs)


def _switch(variable: str, text: str) -> bool:
    value = text.strip().lower()
    if value in ("on", "1", "true", "yes"):
        return True
    if value in ("off", "0", "false", "no"):
        return False
    raise ValueError(f"{variable} must be on or off, not {text}")


def oidc_from_env() -> OidcSettings | None:
    """The INTERLOCK_OIDC_* variables; None without an issuer."""
    env = os.environ
    issuer = env.get("INTERLOCK_OIDC_ISSUER", "").strip().rstrip("/")
    if not issuer:
        return None
    parts = urlsplit(issuer)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"INTERLOCK_OIDC_ISSUER must be an http(s) URL, not {issuer}")
    client_id = env.get("INTERLOCK_OIDC_CLIENT_ID", "").strip()
    if not client_id:
        raise ValueError("INTERLOCK_OIDC_CLIENT_ID is required with INTERLOCK_OIDC_ISSUER")
    values: dict[str, object] = {
        "issuer": issuer,
        "client_id": client_id,
        "client_secret": env.get("INTERLOCK_OIDC_CLIENT_SECRET", ""),
        "redirect_url": env.get("INTERLOCK_OIDC_REDIRECT_URL") or None,
        "audience": env.get("INTERLOCK_OIDC_AUDIENCE") or None,
    }
    for name, variable in _OIDC_TEXT.items():
        if env.get(variable, "").strip():
            values[name] = env[variable].strip()
    if env.get("INTERLOCK_OIDC_ROLE_GROUPS", "").strip():
        values["role_groups"] = role_groups(env["INTERLOCK_OIDC_ROLE_GROUPS"])
    return OidcSettings(**values)  # type: ignore[arg-type]


_OIDC_TEXT = {
    "scopes": "INTERLOCK_OIDC_SCOPES",
    "user_claim": "INTERLOCK_OIDC_USER_CLAIM",
    "groups_claim": "INTERLOCK_OIDC_GROUPS_CLAIM",
}


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
    # Single sign-on (None: off), and whether local passwords (the log-in form, HTTP Basic) are
    # accepted; off needs single sign-on.
    oidc: OidcSettings | None = None
    local_passwords: bool = True
    # The origins of front-ends served elsewhere that may call /engine-rest and /api/v1 from a
    # browser (CORS), exactly as a browser sends them; none by default.
    cors_origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.local_passwords and self.oidc is None:
            raise ValueError(
                "INTERLOCK_LOCAL_PASSWORDS=off needs single sign-on (INTERLOCK_OIDC_ISSUER)"
            )
        if self.oidc is not None:
            redirect = self.oidc.redirect_url
            if redirect and not urlsplit(redirect).path.endswith(CALLBACK_PATH):
                raise ValueError(f"INTERLOCK_OIDC_REDIRECT_URL must end with {CALLBACK_PATH}")
            if self.base_url is None:
                raise ValueError(
                    "single sign-on needs INTERLOCK_PUBLIC_URL or INTERLOCK_OIDC_REDIRECT_URL"
                )

    @property
    def base_url(self) -> str | None:
        """Where this server's pages are, for the provider's redirects: the public URL, else
        the origin of the configured callback."""
        if self.public_url:
            return self.public_url.rstrip("/")
        if self.oidc is not None and self.oidc.redirect_url:
            parts = urlsplit(self.oidc.redirect_url)
            return f"{parts.scheme}://{parts.netloc}"
        return None

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
        values["oidc"] = oidc_from_env()
        if os.environ.get("INTERLOCK_LOCAL_PASSWORDS"):
            values["local_passwords"] = _switch(
                "INTERLOCK_LOCAL_PASSWORDS", os.environ["INTERLOCK_LOCAL_PASSWORDS"]
            )
        if os.environ.get(CORS_ENV, "").strip():
            values["cors_origins"] = cors_origins(os.environ[CORS_ENV])
        if os.environ.get("INTERLOCK_SECURE_COOKIES"):
            values["secure_cookies"] = os.environ["INTERLOCK_SECURE_COOKIES"] == "1"
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


GRACE_ENV = "INTERLOCK_SHUTDOWN_GRACE_SECONDS"
CORS_ENV = "INTERLOCK_CORS_ORIGINS"


# The paths `INTERLOCK_CORS_ORIGINS` opens to the listed origins; never the console's.
CORS_PREFIXES = ("/engine-rest/", "/api/v1/")


def cors_origins(text: str) -> tuple[str, ...]:
    """Comma-separated exact origins (`https://tasks.example.com`, `http://localhost:5173`):
    a scheme, a host and maybe a port, nothing more; no wildcard."""
    found: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        parts = urlsplit(part)
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or "*" in part
            or parts.path
            or parts.query
            or parts.fragment
            or parts.username is not None
            or part != f"{parts.scheme}://{parts.netloc}"
        ):
            raise ValueError(
                f"{CORS_ENV} holds exact origins such as https://tasks.example.com, not {part}"
            )
        found.append(part)
    return tuple(found)


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
