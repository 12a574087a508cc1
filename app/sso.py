"""Single sign-on for the console: the OpenID Connect authorization-code flow with PKCE.

GET /auth/sso starts it: a fresh state, nonce and PKCE verifier go into a short-lived cookie
(`FLOW_COOKIE`, sent only to the callback, SameSite=Lax so that it comes back with the
provider's top-level redirect), and the browser goes to the provider's authorization endpoint
(app/oidc.py). GET /auth/callback ends it: the state must be the cookie's (a callback this browser
did not start is refused), the provider must be the configured issuer (`iss`, RFC 9207), the code
is exchanged with the verifier, and the id token must verify (signature, issuer, audience,
expiry, the cookie's nonce). The user is then provisioned (`SignInExternal`, their role from the
groups claim) and logged in as with a password (`StartSession`): a session as any other,
revocable.

Anything that goes wrong ends on the log-in page with a message saying what: never a 500.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from app.auth import Authenticator, same_bytes
from app.login import page, start_session
from app.oidc import Identity, OidcClient, SignInRefused
from app.params import Query
from app.settings import CALLBACK_PATH
from engine.core import audit
from engine.errors import InterlockError
from engine.states import AuditChannel

FLOW_COOKIE = "interlock_sso_flow"
# How long a sign-in at the provider may take.
FLOW_SECONDS = 10 * 60


def _authenticator(request: Request) -> Authenticator:
    authenticator: Authenticator = request.app.state.authenticator
    return authenticator


def _oidc(request: Request) -> OidcClient | None:
    return _authenticator(request).oidc


def _next(value: str | None) -> str:
    return value if value and value.startswith("/") and not value.startswith("//") else "/"


def _encode(flow: dict[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(flow).encode()).decode().rstrip("=")


def _decode(cookie: str | None) -> dict[str, str] | None:
    if not cookie or len(cookie) > 2000:
        return None
    try:
        flow = json.loads(base64.urlsafe_b64decode(cookie + "=" * (-len(cookie) % 4)))
    except (binascii.Error, ValueError):
        return None
    if not isinstance(flow, dict) or not all(
        isinstance(flow.get(key), str) for key in ("state", "nonce", "verifier", "next")
    ):
        return None
    return {key: str(flow[key]) for key in ("state", "nonce", "verifier", "next")}


def _refused(request: Request, message: str, status_code: int, next_path: str = "/") -> Response:
    response = page(
        request, f"Single sign-on failed: {message}.", status_code=status_code, next_path=next_path
    )
    _forget_flow(request, response)
    return response


def _forget_flow(request: Request, response: Response) -> None:
    response.delete_cookie(
        FLOW_COOKIE,
        path=CALLBACK_PATH,
        httponly=True,
        samesite="lax",
        secure=_authenticator(request).settings.cookies_secure,
    )


async def start(request: Request) -> Response:
    oidc = _oidc(request)
    target = _next(Query(request.query_params).text("next"))
    if oidc is None:
        return page(request, "Single sign-on is not configured.", status_code=404)
    flow = {
        "state": secrets.token_urlsafe(32),
        "nonce": secrets.token_urlsafe(32),
        "verifier": secrets.token_urlsafe(64),
        "next": target,
    }
    try:
        url = await run_in_threadpool(
            oidc.authorization_url,
            state=flow["state"],
            nonce=flow["nonce"],
            code_verifier=flow["verifier"],
        )
    except SignInRefused as error:
        return _refused(request, str(error), 502, target)
    response = RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})
    response.set_cookie(
        FLOW_COOKIE,
        _encode(flow),
        max_age=FLOW_SECONDS,
        path=CALLBACK_PATH,
        httponly=True,
        samesite="lax",
        secure=_authenticator(request).settings.cookies_secure,
    )
    return response


async def callback(request: Request) -> Response:
    oidc = _oidc(request)
    if oidc is None:
        return page(request, "Single sign-on is not configured.", status_code=404)
    flow = _decode(request.cookies.get(FLOW_COOKIE))
    if flow is None:
        return _refused(request, "this sign-in was not started here or took too long", 400)
    try:
        return await _finish(request, oidc, flow)
    except SignInRefused as problem:
        return _refused(request, str(problem), 401, flow["next"])
    except InterlockError as problem:
        return _refused(request, problem.message, 400, flow["next"])


async def _finish(request: Request, oidc: OidcClient, flow: dict[str, str]) -> Response:
    params = Query(request.query_params)
    if not same_bytes(params.text("state") or "", flow["state"]):
        raise SignInRefused("the answer does not belong to this sign-in (state)")
    error = params.text("error")
    if error:
        described = params.text("error_description") or error
        raise SignInRefused(f"the identity provider answered: {described[:200]}")
    issuer = params.text("iss")
    if issuer is not None and issuer != oidc.settings.issuer:
        raise SignInRefused("the answer came from another identity provider")
    code = params.text("code")
    if not code:
        raise SignInRefused("the identity provider sent no code")
    identity, id_token = await run_in_threadpool(
        oidc.sign_in, code, flow["verifier"], flow["nonce"]
    )
    user = await run_in_threadpool(_provision, _authenticator(request), identity)
    response = await start_session(request, user[0], user[1], flow["next"], id_token=id_token)
    _forget_flow(request, response)
    return response


def _provision(authenticator: Authenticator, identity: Identity) -> tuple[UUID, str]:
    """The credential id and name of the provider's user, created or updated now (their own
    console action)."""
    with audit.acting(audit.Actor(identity.name, AuditChannel.CONSOLE)):
        result = authenticator.engine.run(authenticator.sign_in_command(identity))
    return result.credential_id, result.user


routes = [
    Route("/auth/sso", start, methods=["GET"]),
    Route(CALLBACK_PATH, callback, methods=["GET"]),
]
