"""Who is calling, and may they do this?

API clients authenticate on every request with a Bearer token or HTTP Basic (Camunda clients use
Basic). With single sign-on configured, a Bearer JWT from the OpenID provider is accepted too (told
from our opaque tokens by its shape, checked by app/oidc.py) and acts as the user it names,
provisioned by the command `SignInExternal` when new or when their groups map to another role.
With local passwords switched off, HTTP Basic is refused.

Console users log in once and carry a session cookie: a random id whose row in the database
(`console_session`) says whose session it is; the user's role is read from their credential on
every request, so log-out, deleting a user, changing a password or a role take effect at the
next request. Every console mutation must also carry the session's CSRF token in
the `X-CSRF-Token` header (and, on every surface, come from this server's own origin when a
browser sends it: app.guard checks that first). With authentication switched off (loopback
only), everyone is an admin.

Failed log-ins (console form, HTTP Basic) are throttled per user name and per client address,
unknown API tokens per address; a valid API token is never throttled. See `Throttle`.

Anything malformed in a credential (a cookie, an Authorization header, a CSRF token) counts as
no credential or a wrong one, never as an error of the server.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import math
import re
import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from limits import RateLimitItem, RateLimitItemPerSecond
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from app import gates
from app.errors import Forbidden, Unauthorized, error_response
from app.gates import Gate
from app.guard import SAFE_METHODS
from app.oidc import Identity, OidcClient, SignInRefused, looks_like_jwt
from app.settings import Settings
from engine.api import Engine
from engine.commands.accounts import EndSessions, SignInExternal, StartSession, TouchSession
from engine.core import actors, audit
from engine.errors import BadRequest, Conflict, InterlockError, NotFound
from engine.identity import accounts
from engine.identity.accounts import LiveSession, NewSession, PasswordRecord, Principal, Role
from engine.queries import accounts as account_reads
from engine.states import AuditChannel

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SESSION_COOKIE = "interlock_session"
CSRF_HEADER = "x-csrf-token"
API_PREFIXES = ("/api/", "/engine-rest")
PUBLIC_PATHS = ("/login", "/auth/", "/health", "/static/")
# Read by machines and by people: credentials in a header are checked as for the API, else a
# console session; without either the answer is a 401, never the redirect to /login.
MACHINE_PATHS = ("/metrics",)
ANONYMOUS_ADMIN = Principal("anonymous", Role.ADMIN)
# What `secrets.token_urlsafe(32)` makes; any other cookie value names no session.
_SESSION_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")
# The last-seen time of a session is written at most this often (not on every request).
TOUCH_SECONDS = 60.0


class TooManyAttempts(InterlockError):
    """Too many failed log-ins for this user name or from this address; 429 with Retry-After."""

    code = "TooManyRequests"

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            f"too many failed log-in attempts; try again in {retry_after} s",
            retry_after=retry_after,
        )
        self.retry_after = retry_after


def too_many_response(error: TooManyAttempts) -> JSONResponse:
    return JSONResponse(
        error.to_dict(), status_code=429, headers={"Retry-After": str(error.retry_after)}
    )


def same_bytes(sent: str, expected: str) -> bool:
    """Constant-time equality of two secrets as bytes; any text compares (never raises)."""
    if not sent or not expected:
        return False
    return hmac.compare_digest(
        sent.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


@dataclass(frozen=True)
class Attempt:
    """A check admitted by the throttle: it holds a place until `Throttle.finish`."""

    keys: tuple[tuple[str, str], ...]


def address_key(address: str | None) -> str:
    """What the throttle counts an address under: an IPv6 client by its /64 (one host usually
    has the whole /64), anything else as it is."""
    if not address:
        return "unknown"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Throttle:
    """Failed log-ins, counted in a moving window with the `limits` library, so that guessing is
    slow and nobody's correct credentials are refused because of someone else's failures.

    A password check (console form, HTTP Basic) is admitted only while, counting the failures
    already recorded plus the checks still running (so that however many requests arrive at
    once, no more than the limit are ever checked):
    - the user name has fewer than `per_user` failures from this address;
    - the user name has fewer than `per_user_all` failures from all addresses (a guesser using
      many addresses: a higher limit, so that one address can never refuse a user elsewhere);
    - the address is under `per_address` failures (password guesses of any name and unknown API
      tokens), or else the name has not failed from this address at all: past its limit an
      address gets no further guess at any name it has guessed, while a user behind the same
      address (a proxy, a NAT) whose name was not guessed still logs in.
    Successful log-ins do not count. A valid API token is never throttled (`Authenticator`
    checks it first); an unknown one counts against its address, and past the address's limit
    unknown tokens are refused without a look-up.

    The counts live in memory, in this process: every server process keeps its own, and they
    start from zero when it restarts.
    """

    def __init__(
        self, *, per_user: int, per_user_all: int, per_address: int, window_seconds: int
    ) -> None:
        window = max(window_seconds, 1)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())
        self._items: dict[str, RateLimitItem] = {
            "pair": RateLimitItemPerSecond(max(per_user, 1), window),
            "user": RateLimitItemPerSecond(max(per_user_all, 1), window),
            "address": RateLimitItemPerSecond(max(per_address, 1), window),
        }
        self._running: Counter[tuple[str, str]] = Counter()
        self._failed_pairs: set[str] = set()  # the (user, address) keys with failures, to forget
        self._lock = threading.Lock()

    @staticmethod
    def _keys(name: str | None, address: str | None) -> tuple[tuple[str, str], ...]:
        where = address_key(address)
        if name is None:
            return (("address", where),)
        # A digest: any name, however long, takes the same room.
        user = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
        return (("pair", f"{user} {where}"), ("user", user), ("address", where))

    def _wait(self, kind: str, value: str, allowed: int | None = None) -> int | None:
        """Seconds until a check for this key is admitted again (with `allowed` places instead
        of the key's limit); None: admitted now."""
        item = self._items[kind]
        stats = self._limiter.get_window_stats(item, kind, value)
        failures = item.amount - stats.remaining
        limit = item.amount if allowed is None else allowed
        if failures + self._running[(kind, value)] < limit:
            return None
        if failures < limit:
            return 1  # only checks in flight hold the places: they end in moments
        return max(1, math.ceil(stats.reset_time - time.time()))

    def _waits(self, name: str | None, address: str | None) -> list[int]:
        keys = dict(self._keys(name, address))
        address_wait = self._wait("address", keys["address"])
        if name is None:
            return [] if address_wait is None else [address_wait]
        waits = [self._wait("pair", keys["pair"]), self._wait("user", keys["user"])]
        if address_wait is not None and self._wait("pair", keys["pair"], allowed=1) is not None:
            # The address is full and this name has failed from it: admitted again once the
            # address frees a place.
            waits.append(address_wait)
        return [w for w in waits if w is not None]

    def blocked(self, name: str | None, address: str | None) -> int | None:
        """Retry-After seconds if a check now would not be admitted, else None. Without a name:
        whether an unknown API token from this address is refused."""
        with self._lock:
            waits = self._waits(name, address)
        return max(waits) if waits else None

    def admit(self, name: str, address: str | None) -> Attempt | TooManyAttempts:
        with self._lock:
            waits = self._waits(name, address)
            if waits:
                return TooManyAttempts(max(waits))
            keys = self._keys(name, address)
            for key in keys:
                self._running[key] += 1
        return Attempt(keys)

    def failed(self, name: str | None, address: str | None) -> None:
        """Count a failure that took no place among the checks (an unknown API token)."""
        with self._lock:
            for kind, value in self._keys(name, address):
                self._limiter.hit(self._items[kind], kind, value)

    def finish(self, attempt: Attempt, *, failed: bool) -> None:
        with self._lock:
            for kind, value in attempt.keys:
                self._running[(kind, value)] -= 1
                if self._running[(kind, value)] <= 0:
                    del self._running[(kind, value)]
                if failed:
                    self._limiter.hit(self._items[kind], kind, value)
                    if kind == "pair" and len(self._failed_pairs) < 100_000:
                        self._failed_pairs.add(value)

    def forget(self, name: str) -> None:
        """Forget the user's failures from every address (an admin unlocked them)."""
        user = dict(self._keys(name, None))["user"]
        with self._lock:
            self._limiter.clear(self._items["user"], "user", user)
            for key in [k for k in self._failed_pairs if k.startswith(f"{user} ")]:
                self._limiter.clear(self._items["pair"], "pair", key)
                self._failed_pairs.discard(key)

    @contextmanager
    def checking(self, attempt: Attempt) -> Iterator[list[bool]]:
        """`with throttle.checking(a) as ok: ok.append(result)`: a check that raised or found
        nothing true counts as failed."""
        outcome: list[bool] = []
        try:
            yield outcome
        finally:
            self.finish(attempt, failed=not any(outcome))


class BasicCache:
    """Password hashing is slow on purpose; clients send Basic on every request. Remember which
    stored hash a (name, password) pair was verified against, under a keyed digest of the pair.
    A hit only saves the PBKDF2: the caller still reads the user's row on every request and
    accepts only while the stored hash is the one remembered, so a deleted user or a changed
    password is refused at once."""

    def __init__(self, ttl: float = 300.0, size: int = 1024) -> None:
        self._ttl, self._size = ttl, size
        self._key = secrets.token_bytes(32)
        self._entries: OrderedDict[bytes, tuple[float, str]] = OrderedDict()
        self._lock = threading.Lock()
        self._flights: dict[bytes, tuple[threading.Lock, int]] = {}

    def key(self, name: str, password: str) -> bytes:
        pair = f"{name}\0{password}".encode("utf-8", "surrogatepass")
        return hmac.new(self._key, pair, hashlib.sha256).digest()

    def get(self, key: bytes) -> str | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] < time.monotonic():
                return None
            return entry[1]

    def put(self, key: bytes, secret_hash: str) -> None:
        with self._lock:
            self._entries[key] = (time.monotonic() + self._ttl, secret_hash)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    @contextmanager
    def one_at_a_time(self, key: bytes) -> Iterator[None]:
        """Concurrent checks of the same pair wait for the first one instead of each hashing."""
        with self._lock:
            lock, users = self._flights.get(key, (threading.Lock(), 0))
            self._flights[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._lock:
                lock, users = self._flights[key]
                if users <= 1:
                    del self._flights[key]
                else:
                    self._flights[key] = (lock, users - 1)


class Sessions:
    """Console sessions, kept in the database (`engine.identity.accounts`), started, marked seen and
    ended by commands. The server's secret keys only the CSRF token of the console without
    authentication; a session's own token is random and stored with it."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)
        self._engine: Engine | None = None
        self.settings = Settings()

    def bind(self, engine: Engine, settings: Settings) -> None:
        self._engine, self.settings = engine, settings

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("sessions are used before the engine is open")
        return self._engine

    @property
    def _touch_seconds(self) -> float:
        return min(TOUCH_SECONDS, self.settings.session_idle_seconds / 4)

    def issue(
        self,
        credential_id: UUID,
        name: str,
        *,
        client_address: str | None,
        user_agent: str | None,
    ) -> NewSession:
        """Log the user in (their password checked, or their provider's token): a new session,
        audited as their own action in the console."""
        session = accounts.new_session()
        command = StartSession(
            credential_id,
            name,
            session,
            max_seconds=self.settings.session_max_seconds,
            idle_seconds=self.settings.session_idle_seconds,
            client_address=client_address,
            user_agent=user_agent,
        )
        with audit.acting(audit.Actor(name, AuditChannel.CONSOLE)):
            self.engine.run(command)
        return session

    def read(self, cookie: str | None) -> LiveSession | None:
        """The live session a cookie names, with its user's role as of now; None for anything
        else (no cookie, a malformed one, an ended or expired session, a deleted user)."""
        if not cookie or not _SESSION_TOKEN.fullmatch(cookie):
            return None
        found = account_reads.find_session(
            self.engine,
            cookie,
            idle_seconds=self.settings.session_idle_seconds,
            touch_seconds=self._touch_seconds,
        )
        if found is None:
            return None
        if found.touch_due:
            self.engine.run(TouchSession(found.session.id))
        return found.session

    def end(self, session_id: Any) -> bool:
        """Log out: end the session, audited as the caller's action (the same command and entry
        as an admin ending it). False: it had ended already."""
        try:
            self.engine.run(EndSessions(session_id=session_id))
        except NotFound:
            return False
        return True

    def csrf_token(self, session_id: str) -> str:
        """The CSRF token of the console without authentication (no session rows there)."""
        return hmac.new(self._secret, b"csrf:" + session_id.encode(), hashlib.sha256).hexdigest()


class Authenticator:
    def __init__(
        self,
        engine: Engine,
        *,
        enabled: bool,
        sessions: Sessions,
        settings: Settings | None = None,
        oidc: OidcClient | None = None,
    ) -> None:
        self.engine = engine
        self.enabled = enabled
        self.settings = settings or Settings()
        self.oidc = oidc
        self.sessions = sessions
        sessions.bind(engine, self.settings)
        self.throttle = Throttle(
            per_user=self.settings.login_failures_per_user,
            per_user_all=self.settings.login_failures_per_user_all_addresses,
            per_address=self.settings.login_failures_per_address,
            window_seconds=self.settings.login_failure_window_seconds,
        )
        self._basic = BasicCache()

    def authenticate(
        self,
        header: str,
        address: str | None = None,
        channel: AuditChannel = AuditChannel.API,
    ) -> Principal | TooManyAttempts | None:
        """The caller an Authorization header names; TooManyAttempts when throttled; None for a
        wrong or malformed credential. `channel`: where a JWT's new user is audited."""
        scheme, _, value = header.strip().partition(" ")
        value = value.strip()
        if scheme.lower() == "bearer" and value and self.oidc and looks_like_jwt(value):
            found = self._jwt(self.oidc, value, channel)
            if found is not None:
                return found
            return self._unknown_token(address)
        if scheme.lower() == "bearer" and value:
            # A token is random (256 bits) and looked up by its digest: it cannot be guessed, so
            # a valid one is accepted whatever else came from this address. An unknown one
            # counts against the address; past the address's limit the answer is 429.
            found = account_reads.verify_token(self.engine, value)
            if found is not None:
                return found
            return self._unknown_token(address)
        if scheme.lower() == "basic" and value and self.settings.local_passwords:
            credentials = _basic_credentials(value)
            if credentials is None:
                return None
            return self._basic_auth(*credentials, address)
        return None

    def _unknown_token(self, address: str | None) -> TooManyAttempts | None:
        wait = self.throttle.blocked(None, address)
        if wait is not None:
            return TooManyAttempts(wait)
        self.throttle.failed(None, address)
        return None

    def _jwt(self, oidc: OidcClient, token: str, channel: AuditChannel) -> Principal | None:
        """The user a provider's access token names, once it verifies."""
        try:
            identity = oidc.identity(oidc.verify_access_token(token))
            return self.provision(identity, channel)
        except (SignInRefused, BadRequest, Conflict):
            return None

    def provision(self, identity: Identity, channel: AuditChannel) -> Principal:
        """The provider's user as Interlock knows them: created, or their role updated, by
        `SignInExternal` (audited as their own action) when that changes anything; a read
        otherwise."""
        record = account_reads.password_record(self.engine, identity.name)
        if record is None or record.role is not identity.role:
            with audit.acting(audit.Actor(identity.name, channel)):
                self.engine.run(self.sign_in_command(identity))
        return Principal(identity.name, identity.role, identity.name)

    def sign_in_command(self, identity: Identity) -> SignInExternal:
        issuer = self.oidc.settings.issuer if self.oidc else ""
        return SignInExternal(
            identity.name,
            identity.role,
            issuer,
            identity.subject,
            first_name=identity.first_name,
            last_name=identity.last_name,
            email=identity.email,
        )

    def from_header(self, header: str, address: str | None = None) -> Principal | None:
        found = self.authenticate(header, address)
        return found if isinstance(found, Principal) else None

    def _basic_auth(
        self, name: str, password: str, address: str | None
    ) -> Principal | TooManyAttempts | None:
        # Checked before the cache too: else a blocked name could still be guessed against it.
        wait = self.throttle.blocked(name, address)
        if wait is not None:
            return TooManyAttempts(wait)
        key = self._basic.key(name, password)
        record = account_reads.password_record(self.engine, name)
        if record is not None and self._basic.get(key) == record.secret_hash:
            return Principal(record.name, record.role, record.name)
        with self._basic.one_at_a_time(key):
            if record is not None and self._basic.get(key) == record.secret_hash:
                return Principal(record.name, record.role, record.name)
            attempt = self.throttle.admit(name, address)
            if isinstance(attempt, TooManyAttempts):
                return attempt
            with self.throttle.checking(attempt) as ok:
                ok.append(accounts.check_password(password, record))
            if not ok[0] or record is None:
                return None
            self._basic.put(key, record.secret_hash)
            return Principal(record.name, record.role, record.name)

    def login(
        self, name: str, password: str, address: str | None = None
    ) -> PasswordRecord | TooManyAttempts | None:
        """The user a console log-in names, if the password is theirs (never with local
        passwords switched off)."""
        if not self.settings.local_passwords:
            return None
        attempt = self.throttle.admit(name, address)
        if isinstance(attempt, TooManyAttempts):
            return attempt
        with self.throttle.checking(attempt) as ok:
            record = account_reads.password_record(self.engine, name)
            ok.append(accounts.check_password(password, record))
        return record if ok[0] else None


def _basic_credentials(value: str) -> tuple[str, str] | None:
    """(name, password) of a Basic credential; None unless it is valid base64 of UTF-8 text with
    a colon and a name without NUL."""
    try:
        raw = base64.b64decode(value.encode("latin-1"), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeError):
        return None
    name, colon, password = text.partition(":")
    if not colon or not accounts.valid_name(name):
        return None
    return name, password


def client_address(scope: Scope) -> str | None:
    client = scope.get("client")
    return str(client[0]) if client else None


def _headers(scope: Scope) -> dict[str, str]:
    # latin-1 maps every byte: whatever a client sends, reading the headers cannot fail.
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


class AuthMiddleware:
    """Pure ASGI: sets `scope["principal"]` (and `scope["session_id"]`, `scope["session"]` for
    console sessions), answers 401 for API calls without valid credentials (429 when throttled),
    sends console visitors to /login, and refuses console mutations without the session's CSRF
    token."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # The lifespan builds the authenticator once the engine is open.
        auth: Authenticator = scope["app"].state.authenticator
        path: str = scope["path"]
        method: str = scope["method"]
        headers = _headers(scope)
        machine = path in MACHINE_PATHS
        api = path.startswith(API_PREFIXES) or (machine and "authorization" in headers)
        if not auth.enabled:
            scope["principal"] = ANONYMOUS_ADMIN
            scope["session_id"] = "anonymous"
            await self.app(scope, receive, send)
            return
        if api:
            found: Principal | TooManyAttempts | None = None
            if "authorization" in headers:
                found = await run_in_threadpool(
                    auth.authenticate,
                    headers["authorization"],
                    client_address(scope),
                    AuditChannel.ENGINE_REST
                    if path.startswith("/engine-rest")
                    else AuditChannel.API,
                )
            if isinstance(found, TooManyAttempts):
                await too_many_response(found)(scope, receive, send)
                return
            if found is None:
                await error_response(
                    Unauthorized("valid credentials are required (Bearer token or HTTP Basic)")
                )(scope, receive, send)
                return
            scope["principal"] = found
            await self.app(scope, receive, send)
            return
        if path.startswith(PUBLIC_PATHS) or path == "/favicon.ico":
            await self.app(scope, receive, send)
            return
        cookie = _cookie(headers.get("cookie", ""), SESSION_COOKIE)
        session = await run_in_threadpool(auth.sessions.read, cookie) if cookie else None
        if session is None:
            if path == "/logout" and method == "POST":
                # Nothing to end: just forget the cookie.
                await _redirect("/login", forget=SESSION_COOKIE)(scope, receive, send)
            elif method in SAFE_METHODS and "hx-request" not in headers and not machine:
                await _redirect("/login?next=" + path)(scope, receive, send)
            else:
                await error_response(Unauthorized("log in first"))(scope, receive, send)
            return
        if method not in SAFE_METHODS and not same_bytes(
            headers.get(CSRF_HEADER, ""), session.csrf_token
        ):
            await error_response(Forbidden("missing or wrong CSRF token"))(scope, receive, send)
            return
        scope["principal"] = session.principal
        scope["session_id"] = str(session.id)
        scope["session"] = session
        await self.app(scope, receive, send)


def user_id_of(request: Request) -> str | None:
    """The authenticated user's id, for the engine's records (`camunda:initiator`,
    `authenticatedUserId`); None when nobody is authenticated (authentication switched off)."""
    principal = request.scope.get("principal")
    if not isinstance(principal, Principal) or principal is ANONYMOUS_ADMIN:
        return None
    return principal.name


def principal_of(request: Request) -> Principal:
    principal = request.scope.get("principal")
    if not isinstance(principal, Principal):
        raise Unauthorized("not authenticated")
    return principal


def session_of(request: Request) -> LiveSession | None:
    session = request.scope.get("session")
    return session if isinstance(session, LiveSession) else None


def require(request: Request, gate: Gate = Gate.SIGNED_IN) -> Principal:
    """The caller, if authenticated and passing `gate` (app/gates.py) by their authorizations;
    else Unauthorized or AuthorizationDenied naming what is missing."""
    principal = principal_of(request)
    gates.demand(actors.current(), gate)
    return principal


def csrf_token(request: Request, sessions: Sessions) -> str:
    session = session_of(request)
    if session is not None:
        return session.csrf_token
    return sessions.csrf_token(str(request.scope.get("session_id", "")))


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value.strip('"')
    return None


def _redirect(location: str, forget: str | None = None) -> Any:
    from starlette.responses import RedirectResponse

    response = RedirectResponse(location, status_code=303)
    if forget:
        response.delete_cookie(forget, httponly=True, samesite="strict")
    return response
