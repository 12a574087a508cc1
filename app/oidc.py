"""OpenID Connect, as a relying party of one provider: its discovery document and signing keys,
the authorization request and the code exchange of the console's log-in (authlib's OAuth 2
client over httpx: PKCE with S256), and the checks of the provider's JWTs (joserfc): id tokens
for the console, access tokens for /api/v1 and /engine-rest.

What is kept in memory is only what the provider publishes: its metadata, and its public keys,
fetched again when a token names a key id not among them (the provider rotated its keys; at
most once a `REFETCH_SECONDS`, so that tokens with made-up key ids cannot make us hammer the
provider) and when they are older than `KEYS_MAX_AGE` (a key the provider withdrew stops being
accepted). A flow's state, nonce and PKCE verifier live in the browser's cookie (app/sso.py).

Every failure is a `SignInRefused` whose message can be shown to the user: the provider
unreachable or answering nonsense, a token that does not verify.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlencode

import httpx
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.httpx_client import OAuth2Client
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, KeySetSerialization

from app.settings import CALLBACK_PATH, OidcSettings, Settings
from engine.identity.accounts import Role

# Signature algorithms accepted from the provider: asymmetric ones only (never `none`, never an
# HMAC keyed by something public).
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
# Clock difference tolerated on exp, nbf and iat.
LEEWAY_SECONDS = 30
KEYS_MAX_AGE = 600.0
METADATA_MAX_AGE = 3600.0
REFETCH_SECONDS = 1.0
# The clock the caches age by (tests move it past REFETCH_SECONDS instead of waiting).
clock: Callable[[], float] = time.monotonic
HTTP_TIMEOUT = 10.0


class SignInRefused(Exception):
    """The provider or a token failed a check; the message says which, for the log-in page."""


@dataclass(frozen=True)
class Identity:
    """Who a verified token names, as Interlock will know them."""

    name: str
    role: Role
    subject: str
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None


def looks_like_jwt(token: str) -> bool:
    """Three base64url parts whose first is a JSON header with an `alg`: a JWT, not one of our
    opaque API tokens (which have no dots)."""
    parts = token.split(".")
    if len(parts) != 3 or not all(parts):
        return False
    header = _header(token)
    return header is not None and isinstance(header.get("alg"), str)


def _header(token: str) -> dict[str, Any] | None:
    first = token.split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(first + "=" * (-len(first) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _text(claims: dict[str, Any], name: str) -> str | None:
    value = claims.get(name)
    return value if isinstance(value, str) and value else None


class OidcClient:
    """The console's and the APIs' view of the provider configured in `settings.oidc`."""

    def __init__(self, settings: OidcSettings, *, base_url: str) -> None:
        self.settings = settings
        self.redirect_url = settings.redirect_url or base_url + CALLBACK_PATH
        self.post_logout_url = base_url + "/login"
        self._lock = threading.Lock()
        # Held while the keys are fetched: concurrent requests wait for one fetch.
        self._keys_lock = threading.Lock()
        self._metadata: dict[str, Any] | None = None
        self._metadata_at = 0.0
        self._keys: KeySet | None = None
        self._keys_at = 0.0

    @classmethod
    def from_settings(cls, settings: Settings) -> OidcClient | None:
        if settings.oidc is None:
            return None
        # Settings made sure there is one.
        return cls(settings.oidc, base_url=settings.base_url or "")

    # --- what the provider publishes ---------------------------------------------------------

    def _get_json(self, url: str, what: str) -> dict[str, Any]:
        try:
            response = httpx.get(url, timeout=HTTP_TIMEOUT, follow_redirects=False)
            response.raise_for_status()
            body = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise SignInRefused(f"the identity provider's {what} could not be read") from error
        if not isinstance(body, dict):
            raise SignInRefused(f"the identity provider's {what} is not a JSON object")
        return body

    def metadata(self) -> dict[str, Any]:
        """The discovery document, fetched once (again after METADATA_MAX_AGE); its issuer must
        be the configured one."""
        with self._lock:
            if self._metadata is not None and clock() - self._metadata_at < (METADATA_MAX_AGE):
                return self._metadata
        issuer = self.settings.issuer
        document = self._get_json(
            issuer + "/.well-known/openid-configuration", "discovery document"
        )
        if document.get("issuer") != issuer:
            raise SignInRefused("the identity provider's discovery document names another issuer")
        for endpoint in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(document.get(endpoint), str):
                raise SignInRefused(f"the identity provider publishes no {endpoint}")
        with self._lock:
            self._metadata, self._metadata_at = document, clock()
        return document

    def _key_set(self, kid: object) -> KeySet:
        """The provider's public keys, fetched again when `kid` is not among them (at most once
        a REFETCH_SECONDS) or when they are older than KEYS_MAX_AGE."""
        with self._keys_lock:
            keys, age = self._keys, clock() - self._keys_at
            known = keys is not None and any(key.kid == kid for key in keys.keys)
            if keys is not None and age < KEYS_MAX_AGE and (known or age < REFETCH_SECONDS):
                return keys
            body = self._get_json(self.metadata()["jwks_uri"], "signing keys")
            try:
                fresh = KeySet.import_key_set(cast(KeySetSerialization, body))
            except (JoseError, ValueError, TypeError, KeyError) as error:
                raise SignInRefused(
                    "the identity provider's signing keys are unreadable"
                ) from error
            self._keys, self._keys_at = fresh, clock()
            return fresh

    # --- tokens ------------------------------------------------------------------------------

    def _verify(self, token: str, audience: str, what: str) -> dict[str, Any]:
        header = _header(token)
        if header is None or header.get("alg") not in ALGORITHMS:
            raise SignInRefused(f"the {what} is not a JWT signed with an accepted algorithm")
        keys = self._key_set(header.get("kid"))
        try:
            decoded = jwt.decode(token, keys, algorithms=list(ALGORITHMS))
            jwt.JWTClaimsRegistry(
                leeway=LEEWAY_SECONDS,
                iss={"essential": True, "value": self.settings.issuer},
                aud={"essential": True, "value": audience},
                exp={"essential": True},
                sub={"essential": True},
            ).validate(decoded.claims)
        except JoseError as error:
            raise SignInRefused(f"the {what} is not valid: {error.error}") from error
        except (ValueError, TypeError) as error:
            raise SignInRefused(f"the {what} is malformed") from error
        return decoded.claims

    def verify_id_token(self, token: str, nonce: str) -> dict[str, Any]:
        """The claims of an id token for this client: signature, issuer, audience, expiry, and
        the nonce of the flow that asked for it."""
        claims = self._verify(token, self.settings.client_id, "id token")
        audience = claims.get("aud")
        several = isinstance(audience, list) and len(audience) > 1
        if several and claims.get("azp") != self.settings.client_id:
            raise SignInRefused("the id token was issued to another client")
        if claims.get("nonce") != nonce:
            raise SignInRefused("the id token does not belong to this sign-in (nonce)")
        return claims

    def verify_access_token(self, token: str) -> dict[str, Any]:
        """The claims of a bearer JWT for the APIs (audience INTERLOCK_OIDC_AUDIENCE)."""
        if self.settings.audience is None:
            raise SignInRefused("the APIs accept no JWT (INTERLOCK_OIDC_AUDIENCE is not set)")
        return self._verify(token, self.settings.audience, "access token")

    def identity(self, claims: dict[str, Any]) -> Identity:
        """Who verified claims name: the configured user claim, else `sub`; the role their
        groups map to; their profile when present."""
        subject = str(claims["sub"])
        name = _text(claims, self.settings.user_claim) or subject
        return Identity(
            name=name,
            role=self.settings.role_for(claims.get(self.settings.groups_claim)),
            subject=subject,
            first_name=_text(claims, "given_name"),
            last_name=_text(claims, "family_name"),
            email=_text(claims, "email"),
        )

    # --- the code flow -----------------------------------------------------------------------

    def _client(self) -> OAuth2Client:
        secret = self.settings.client_secret
        return OAuth2Client(
            self.settings.client_id,
            secret or None,
            scope=self.settings.scopes,
            redirect_uri=self.redirect_url,
            code_challenge_method="S256",
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
            timeout=HTTP_TIMEOUT,
        )

    def authorization_url(self, *, state: str, nonce: str, code_verifier: str) -> str:
        """Where to send the browser to sign in: the code flow with PKCE (S256)."""
        endpoint = self.metadata()["authorization_endpoint"]
        with self._client() as client:
            url, _ = client.create_authorization_url(
                endpoint, state=state, nonce=nonce, code_verifier=code_verifier
            )
        return str(url)

    def exchange(self, code: str, code_verifier: str) -> dict[str, Any]:
        """The token response for a code of this client's flow."""
        endpoint = self.metadata()["token_endpoint"]
        try:
            with self._client() as client:
                tokens = client.fetch_token(
                    endpoint,
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=code_verifier,
                )
        except OAuthError as error:
            raise SignInRefused(
                f"the identity provider refused the sign-in: {error.error}"
            ) from error
        except (httpx.HTTPError, ValueError) as error:
            raise SignInRefused("the identity provider could not be reached") from error
        if not isinstance(tokens.get("id_token"), str):
            raise SignInRefused("the identity provider sent no id token")
        return dict(tokens)

    def userinfo(self, access_token: str, subject: str) -> dict[str, Any]:
        """The userinfo claims of the signed-in user (when the id token lacks the groups claim);
        empty when the provider has no userinfo endpoint or names another subject."""
        endpoint = self.metadata().get("userinfo_endpoint")
        if not isinstance(endpoint, str):
            return {}
        try:
            response = httpx.get(
                endpoint,
                headers={"Authorization": f"Bearer {access_token}"},
                timeout=HTTP_TIMEOUT,
            )
            response.raise_for_status()
            claims = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise SignInRefused("the identity provider's userinfo could not be read") from error
        if not isinstance(claims, dict) or claims.get("sub") != subject:
            return {}
        return claims

    def sign_in(self, code: str, code_verifier: str, nonce: str) -> tuple[Identity, str]:
        """The user a callback's code signs in, and their id token (for the log-out)."""
        tokens = self.exchange(code, code_verifier)
        id_token = str(tokens["id_token"])
        claims = self.verify_id_token(id_token, nonce)
        if self.settings.groups_claim not in claims and isinstance(tokens.get("access_token"), str):
            extra = self.userinfo(str(tokens["access_token"]), str(claims["sub"]))
            claims = {**extra, **claims}
        return self.identity(claims), id_token

    def end_session_url(self, id_token: str) -> str | None:
        """The provider's log-out for the user of `id_token` (RP-initiated log-out), coming
        back to the log-in page; None when the provider has none (or cannot be reached)."""
        try:
            endpoint = self.metadata().get("end_session_endpoint")
        except SignInRefused:
            return None
        if not isinstance(endpoint, str):
            return None
        query = urlencode(
            {
                "id_token_hint": id_token,
                "post_logout_redirect_uri": self.post_logout_url,
                "client_id": self.settings.client_id,
            }
        )
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"
