"""A real OpenID provider for tests: `oidc-provider` (npm) run by node on 127.0.0.1.

`tests/oidc/provider.mjs` serves it; this module writes its configuration (clients, accounts,
RSA signing keys, resource servers), starts it as a subprocess, waits for the line it prints once
it listens, and stops it. The session fixture `oidc_provider` (registered in tests/conftest.py)
yields an `OidcProvider`:

    def test_bearer(oidc_provider: OidcProvider) -> None:
        token = oidc_provider.client_credentials_token()            # JWT, aud "interlock-api"
        expired = oidc_provider.mint({"sub": "ada"}, expires_in=-60)  # signed with its real key
        client = oidc_provider.register_client([f"{console}/auth/callback"], [f"{console}/"])

- Accounts (`oidc_provider.accounts` by username): ada (groups engineering), grace (admin),
  alan (viewer, research), password `<username>-password`. The `groups` claim is in the id token
  and userinfo when the `groups` scope is asked, and always in JWT access tokens of a user.
- Access tokens are JWTs (RS256, `typ` at+jwt) for a resource server: client_credentials ones
  for "interlock-api" unless asked otherwise; a code flow gets one when its authorization
  request names the resource (`resource_indicator()`), else an opaque one for userinfo.
- Its log-in page is a plain form (`#login-form` with `#username`, `#password`,
  `#login-submit`; a wrong password answers 401 with `#login-error`); consent is granted without
  asking. Its log-out confirmation page submits itself in a browser; over httpx post it with
  `submit_form(client, page, "op.logoutForm")`.
- `rotate_keys()` restarts it on the same issuer and port; the restart forgets sessions and
  grants but keeps clients, including those from `register_client`. A test that rotates leaves
  the session's provider rotated: read keys from `jwks()`/`key_set()`, never remember them.
- `running_oidc_provider(dir, access_token_ttl=2, ...)` runs one of a test's own.

Needs node >= 20.18 and `npm ci --prefix tests/oidc` (`make test` runs it): without them the
fixture skips, and under CI=true it fails.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import queue
import secrets
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, KeySetSerialization, RSAKey

NODE_DIR = Path(__file__).parent / "oidc"
SCRIPT = NODE_DIR / "provider.mjs"
PACKAGE = NODE_DIR / "node_modules" / "oidc-provider"

AUDIENCE = "interlock-api"
OTHER_AUDIENCE = "other-api"
GROUPS_SCOPE = "groups"
GROUPS_CLAIM = "groups"
DEFAULT_SCOPE = f"openid profile email {GROUPS_SCOPE}"
READY_TIMEOUT = 60.0


@dataclass(frozen=True)
class OidcAccount:
    """An account at the provider; `sub` is the id tokens' subject."""

    username: str
    password: str
    given_name: str
    family_name: str
    email: str
    groups: tuple[str, ...]
    sub: str = ""

    @property
    def subject(self) -> str:
        return self.sub or self.username

    def config(self) -> dict[str, Any]:
        return {
            "sub": self.subject,
            "username": self.username,
            "password": self.password,
            "given_name": self.given_name,
            "family_name": self.family_name,
            "email": self.email,
            "groups": list(self.groups),
        }


@dataclass(frozen=True)
class OidcClient:
    """A confidential client (client_secret_basic), PKCE required for its code flow."""

    client_id: str
    client_secret: str
    redirect_uris: tuple[str, ...]
    post_logout_redirect_uris: tuple[str, ...] = ()
    grant_types: tuple[str, ...] = ("authorization_code", "client_credentials", "refresh_token")
    # Claims added to its client_credentials access tokens (e.g. {"groups": ["operator"]}).
    access_token_claims: Mapping[str, Any] = field(default_factory=dict)

    def config(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "redirect_uris": list(self.redirect_uris),
            "post_logout_redirect_uris": list(self.post_logout_redirect_uris),
            "grant_types": list(self.grant_types),
            "response_types": ["code"] if "authorization_code" in self.grant_types else [],
            "token_endpoint_auth_method": "client_secret_basic",
            "access_token_claims": dict(self.access_token_claims),
        }


@dataclass(frozen=True)
class ResourceServer:
    """An API whose JWT access tokens the provider issues; `indicator` is the RFC 8707
    `resource` parameter (an absolute URI), `audience` the tokens' `aud`."""

    indicator: str
    audience: str
    scope: str = ""

    def config(self) -> dict[str, Any]:
        return {"indicator": self.indicator, "audience": self.audience, "scope": self.scope}


DEFAULT_ACCOUNTS = (
    OidcAccount("ada", "ada-password", "Ada", "Lovelace", "ada@example.org", ("engineering",)),
    OidcAccount("grace", "grace-password", "Grace", "Hopper", "grace@example.org", ("admin",)),
    OidcAccount(
        "alan", "alan-password", "Alan", "Turing", "alan@example.org", ("viewer", "research")
    ),
)
DEFAULT_RESOURCE_SERVERS = (
    ResourceServer("urn:interlock:api", AUDIENCE, "api"),
    ResourceServer("urn:other:api", OTHER_AUDIENCE, ""),
)


def new_signing_key() -> RSAKey:
    """A fresh 2048-bit RSA signing key with a kid of its own."""
    return RSAKey.generate_key(
        2048,
        parameters={"kid": f"k-{secrets.token_hex(6)}", "use": "sig", "alg": "RS256"},
        private=True,
    )


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class _Form(HTMLParser):
    """The first form of a page: its action and its inputs' values."""

    def __init__(self, form_id: str | None) -> None:
        super().__init__()
        self.form_id = form_id
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and self.action is None:
            if self.form_id is None or values.get("id") == self.form_id:
                self.action = values.get("action", "")
                self._inside = True
        elif tag == "input" and self._inside and "name" in values:
            self.fields[values["name"]] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._inside = False


def submit_form(
    client: httpx.Client, page: httpx.Response, form_id: str | None = None, **values: str
) -> httpx.Response:
    """POST a page's form (the one with `form_id`, else the first) with `values` over its
    own fields, as a browser would."""
    form = _Form(form_id)
    form.feed(page.text)
    if form.action is None:
        raise AssertionError(f"no form {form_id or ''} on {page.url}: {page.text[:500]}")
    return client.post(urljoin(str(page.url), form.action), data={**form.fields, **values})


def follow(
    client: httpx.Client, response: httpx.Response, stop_at: str | None = None
) -> httpx.Response:
    """Follow `response`'s redirects with `client` (which must not follow them itself) up to
    the page they end on, or up to the redirect whose target starts with `stop_at` (a client's
    redirect URI, which nothing serves here): that redirect is returned, not followed."""
    for _ in range(20):
        if not response.is_redirect:
            return response
        target = urljoin(str(response.url), response.headers["location"])
        if stop_at is not None and target.startswith(stop_at):
            return response
        response = client.get(target)
    raise AssertionError(f"too many redirects, last to {response.url}")


def login(
    client: httpx.Client, page: httpx.Response, username: str, password: str
) -> httpx.Response:
    """Sign in on the provider's log-in page; the answer is a redirect back into the flow
    (see `follow`), or the form again, status 401, when the password is wrong."""
    return submit_form(client, page, "login-form", username=username, password=password)


class OidcProvider:
    """The running provider and what tests need from it (see the module's docstring)."""

    def __init__(
        self,
        workdir: Path,
        *,
        accounts: Sequence[OidcAccount] = DEFAULT_ACCOUNTS,
        clients: Sequence[OidcClient] | None = None,
        resource_servers: Sequence[ResourceServer] = DEFAULT_RESOURCE_SERVERS,
        access_token_ttl: int = 300,
        id_token_ttl: int = 3600,
    ) -> None:
        self.workdir = workdir
        self.accounts = {account.username: account for account in accounts}
        self.clients: dict[str, OidcClient] = {}
        for client in clients or (
            OidcClient(
                "interlock-console",
                secrets.token_urlsafe(24),
                ("http://127.0.0.1/callback",),
                ("http://127.0.0.1/signed-out",),
            ),
        ):
            self.clients[client.client_id] = client
        self.client = next(iter(self.clients.values()))
        self.resource_servers = {server.audience: server for server in resource_servers}
        self.audience = next(iter(self.resource_servers))
        self.access_token_ttl = access_token_ttl
        self.id_token_ttl = id_token_ttl
        self.groups_scope = GROUPS_SCOPE
        self.groups_claim = GROUPS_CLAIM
        self.keys: list[RSAKey] = [new_signing_key()]
        self.port = 0
        self.issuer = ""
        self.startup_seconds = 0.0
        self._registration_token = secrets.token_urlsafe(24)
        self._cookie_keys = [secrets.token_urlsafe(24)]
        self._process: subprocess.Popen[str] | None = None
        self._starts = 0

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start node on `self.port` (0: any free port), returning once it listens."""
        self._starts += 1
        config = self.workdir / f"provider-{self._starts}.json"
        config.write_text(json.dumps(self._config()))
        log = (self.workdir / f"provider-{self._starts}.log").open("w")
        started = time.monotonic()
        process = subprocess.Popen(
            [_node(), str(SCRIPT), str(config)],
            cwd=NODE_DIR,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        log.close()
        self._process = process
        lines: queue.Queue[str] = queue.Queue()
        assert process.stdout is not None
        stdout = process.stdout
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=READY_TIMEOUT)
            problem = "exited before it listened"
        except queue.Empty:
            line, problem = "", f"did not listen within {READY_TIMEOUT} s"
        if not line:
            self.stop()
            log_text = (self.workdir / f"provider-{self._starts}.log").read_text()
            raise RuntimeError(f"the OpenID provider {problem}:\n{log_text}")
        ready = json.loads(line)
        self.startup_seconds = time.monotonic() - started
        self.port = int(ready["port"])
        self.issuer = str(ready["issuer"])

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def restart(self) -> None:
        """Stop and start again on the same issuer and port (sessions and grants are lost)."""
        self.stop()
        self.start()

    def rotate_keys(self, keep_old: bool = False) -> RSAKey:
        """Restart signing with a new key; the old ones stay published (after it) only with
        `keep_old`. Returns the new key."""
        key = new_signing_key()
        self.keys = [key, *self.keys] if keep_old else [key]
        self.restart()
        return key

    def _config(self) -> dict[str, Any]:
        return {
            "port": self.port,
            "jwks": {"keys": [key.as_dict(private=True) for key in self.keys]},
            "cookie_keys": self._cookie_keys,
            "registration_token": self._registration_token,
            "clients": [client.config() for client in self.clients.values()],
            "accounts": [account.config() for account in self.accounts.values()],
            "resource_servers": [server.config() for server in self.resource_servers.values()],
            "groups_scope": self.groups_scope,
            "groups_claim": self.groups_claim,
            "access_token_ttl": self.access_token_ttl,
            "id_token_ttl": self.id_token_ttl,
        }

    # --- endpoints ---------------------------------------------------------------------------

    @property
    def discovery_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def metadata(self) -> dict[str, Any]:
        """The discovery document."""
        response = httpx.get(self.discovery_url)
        response.raise_for_status()
        document: dict[str, Any] = response.json()
        return document

    def jwks(self) -> dict[str, Any]:
        """The published key set (public keys only)."""
        response = httpx.get(self.metadata()["jwks_uri"])
        response.raise_for_status()
        keys: dict[str, Any] = response.json()
        return keys

    def key_set(self) -> KeySet:
        """The published key set, fetched now, to verify tokens with."""
        return KeySet.import_key_set(cast(KeySetSerialization, self.jwks()))

    @property
    def signing_key(self) -> RSAKey:
        """The private key the provider signs with now."""
        return self.keys[0]

    def resource_indicator(self, audience: str | None = None) -> str:
        """The `resource` parameter that asks for tokens with `audience` (default: ours)."""
        return self.resource_servers[audience or self.audience].indicator

    # --- tokens ------------------------------------------------------------------------------

    def register_client(
        self,
        redirect_uris: Sequence[str],
        post_logout_redirect_uris: Sequence[str] = (),
        grant_types: Sequence[str] = ("authorization_code", "client_credentials", "refresh_token"),
    ) -> OidcClient:
        """A new client registered at runtime (RFC 7591), e.g. for a console on a port known
        only now. It survives restarts."""
        metadata = {
            "redirect_uris": list(redirect_uris),
            "post_logout_redirect_uris": list(post_logout_redirect_uris),
            "grant_types": list(grant_types),
            "response_types": ["code"] if "authorization_code" in grant_types else [],
            "token_endpoint_auth_method": "client_secret_basic",
        }
        response = httpx.post(
            self.metadata()["registration_endpoint"],
            json=metadata,
            headers={"Authorization": f"Bearer {self._registration_token}"},
        )
        assert response.status_code == 201, response.text
        body = response.json()
        client = OidcClient(
            body["client_id"],
            body["client_secret"],
            tuple(redirect_uris),
            tuple(post_logout_redirect_uris),
            tuple(grant_types),
        )
        self.clients[client.client_id] = client
        return client

    def client_credentials_token(
        self,
        audience: str | None = None,
        *,
        client: OidcClient | None = None,
        scope: str | None = None,
    ) -> str:
        """A JWT access token for `audience` (default "interlock-api") by client_credentials."""
        client = client or self.client
        data = {"grant_type": "client_credentials", "resource": self.resource_indicator(audience)}
        if scope is not None:
            data["scope"] = scope
        response = httpx.post(
            self.metadata()["token_endpoint"],
            data=data,
            auth=(client.client_id, client.client_secret),
        )
        assert response.status_code == 200, response.text
        token: str = response.json()["access_token"]
        return token

    def authorization_code_tokens(
        self,
        username: str,
        password: str | None = None,
        *,
        client: OidcClient | None = None,
        scope: str = DEFAULT_SCOPE,
        audience: str | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The token response of a whole code flow with PKCE, signed in as `username` through
        the log-in form, plus the `nonce` it sent: `id_token`, `access_token` (a JWT for
        `audience` when given, else an opaque one for userinfo), and a `refresh_token` when
        `scope` has `offline_access` and `extra` has `prompt=consent` (as OpenID Connect
        wants). `extra` are more authorization request parameters."""
        client = client or self.client
        metadata = self.metadata()
        verifier, challenge = pkce_pair()
        state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": client.redirect_uris[0],
            "scope": scope,
            "state": state,
            "nonce": nonce,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if audience is not None:
            params["resource"] = self.resource_indicator(audience)
        params.update(extra or {})
        account = self.accounts[username]
        with httpx.Client() as browser:
            form = follow(browser, browser.get(metadata["authorization_endpoint"], params=params))
            assert form.status_code == 200, form.text
            signed_in = login(browser, form, username, password or account.password)
            callback = follow(browser, signed_in, stop_at=client.redirect_uris[0])
        assert callback.is_redirect, callback.text
        query = parse_qs(urlsplit(callback.headers["location"]).query)
        assert query.get("state") == [state], query
        assert "code" in query, query
        response = httpx.post(
            metadata["token_endpoint"],
            data={
                "grant_type": "authorization_code",
                "code": query["code"][0],
                "redirect_uri": client.redirect_uris[0],
                "code_verifier": verifier,
            },
            auth=(client.client_id, client.client_secret),
        )
        assert response.status_code == 200, response.text
        tokens: dict[str, Any] = response.json()
        tokens["nonce"] = nonce
        return tokens

    def mint(
        self,
        claims: Mapping[str, Any],
        expires_in: int = 300,
        key: RSAKey | None = None,
        *,
        header: Mapping[str, Any] | None = None,
    ) -> str:
        """A JWT signed with the provider's current key (or `key`), for cases the provider
        would not issue itself: `iss`, `aud` ("interlock-api"), `iat`, `exp` (now +
        `expires_in`, negative for an expired one) and `jti` are set unless `claims` sets them."""
        key = key or self.signing_key
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "aud": self.audience,
            "iat": now,
            "exp": now + expires_in,
            "jti": secrets.token_urlsafe(12),
            **claims,
        }
        fields = {"alg": "RS256", "typ": "at+jwt", "kid": key.kid, **(header or {})}
        return jwt.encode(fields, payload, key)


def _node() -> str:
    node = shutil.which("node")
    assert node is not None
    return node


# oidc-provider 9 calls URL.parse, which node has since 20.18 (Debian 12's own node is 18).
NODE_AT_LEAST = (20, 18)


def require_node() -> None:
    """Skip (fail under CI=true) when node, a recent enough one, or the provider's npm
    packages are missing."""
    missing = None
    node = shutil.which("node")
    if node is None:
        missing = "node is not installed"
    else:
        version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
        numbers = tuple(int(part) for part in version.lstrip("v").split(".")[:2])
        if numbers < NODE_AT_LEAST:
            missing = f"node {version} is too old for oidc-provider 9 (it needs >= 20.18)"
        elif not PACKAGE.is_dir():
            missing = (
                "the OpenID provider's npm packages are missing: "
                f"run `npm ci --prefix {NODE_DIR}` (make test does)"
            )
    if missing is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{missing}; it is needed under CI=true to run the OpenID provider")
    pytest.skip(missing)


@contextmanager
def running_oidc_provider(workdir: Path, **options: Any) -> Iterator[OidcProvider]:
    """A provider of its own for the block (options: see `OidcProvider`)."""
    require_node()
    provider = OidcProvider(workdir, **options)
    provider.start()
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OidcProvider]:
    """The session's provider; a test that restarts it (rotate_keys) leaves it restarted."""
    with running_oidc_provider(tmp_path_factory.mktemp("oidc")) as provider:
        yield provider
