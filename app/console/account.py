"""The Account page of every signed-in user: their profile, their password (when they have
one: a user the OpenID provider signs in may have none), their console sessions, and their own
API tokens, which act as them (with their grants, never more), created and revoked by them. An
admin also sees the tokens of a group of their own (which act with that built-in group's grants)
and creates and revokes those. Each change runs the identity and account commands, which audit
it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app import gates
from app.auth import require, session_of, user_id_of
from app.console.admin import one_user, optional
from app.console.common import engine_of, flash, form_text, read, render
from app.errors import Forbidden
from app.gates import Gate
from app.params import Query
from engine.api import Engine
from engine.commands.accounts import (
    TOKEN,
    CreateOwnToken,
    CreateToken,
    DeleteCredential,
    EndSessions,
    RevokeOwnToken,
)
from engine.commands.identity import SetUserPassword, UpdateUserProfile
from engine.core import actors
from engine.errors import BadRequest, InterlockError
from engine.identity import accounts
from engine.identity.accounts import Role
from engine.queries import accounts as account_reads

Work = Callable[[Engine, str, FormData], str]


def _me(request: Request) -> str:
    user = user_id_of(request)
    if user is None:
        raise Forbidden("the Account page is for a signed-in user", role="anonymous")
    return user


def _account(engine: Engine, user: str, idle_seconds: float, admin: bool) -> dict[str, Any]:
    sessions = [
        s for s in account_reads.list_sessions(engine, idle_seconds=idle_seconds) if s.user == user
    ]
    mine = account_reads.tokens_of(engine, user)
    everyone = account_reads.list_all(engine) if admin else []
    return {
        "me": one_user(engine, user),
        "has_password": account_reads.password_record(engine, user) is not None,
        "sessions": sessions,
        "my_tokens": [(n, None) for n in mine],
        "tokens": [(n, role) for kind, n, role in everyone if kind == TOKEN and n not in mine],
        "roles": [r.value for r in Role],
    }


async def account_page(request: Request) -> Response:
    user = _me(request)
    idle = float(request.app.state.authenticator.settings.session_idle_seconds)
    current = session_of(request)
    admin = gates.passes(actors.current(), Gate.ADMINISTER)
    context = await read(request, _account, engine_of(request), user, idle, admin)
    context |= {
        "page": "account",
        "current_id": current.id if current else None,
        "can_admin": admin,
    }
    if Query(request.query_params).text("fragment"):
        return render(request, "_account_sessions.html", context)
    return render(request, "account.html", context)


async def _mutate(request: Request, work: Work) -> Response:
    try:
        user = _me(request)
        form = await request.form()
        message = await run_in_threadpool(work, engine_of(request), user, form)
    except InterlockError as error:
        return flash(request, error=error)
    return flash(request, message=message)


async def save_profile(request: Request) -> Response:
    def work(engine: Engine, user: str, form: FormData) -> str:
        engine.run(
            UpdateUserProfile(
                user,
                optional(form, "first_name"),
                optional(form, "last_name"),
                optional(form, "email"),
            )
        )
        return "Your profile is saved."

    return await _mutate(request, work)


async def change_password(request: Request) -> Response:
    def work(engine: Engine, user: str, form: FormData) -> str:
        new = form_text(form, "password")
        if new != form_text(form, "repeat"):
            raise BadRequest("the new password and its repetition differ", field="repeat")
        current = form_text(form, "current")
        engine.run(SetUserPassword(user, new, actor=user, actor_password=current))
        return "Your password is changed; every session of yours has ended, log in again."

    return await _mutate(request, work)


async def end_session(request: Request) -> Response:
    session_id: UUID = request.path_params["session_id"]

    def work(engine: Engine, user: str, form: FormData) -> str:
        engine.run(EndSessions(session_id=session_id))
        return "Session ended."

    return await _mutate(request, work)


async def end_others(request: Request) -> Response:
    current = session_of(request)

    def work(engine: Engine, user: str, form: FormData) -> str:
        ended = engine.run(EndSessions(user=user, keep=current.id if current else None)).ended
        return f"Ended {ended} other session{'s' if ended != 1 else ''}."

    return await _mutate(request, work)


async def create_token(request: Request) -> Response:
    """A token of the signed-in user's own; with a `role`, a token of that built-in group's
    (an admin's: the command checks it)."""
    try:
        require(request)
        form = await request.form()
        label = form_text(form, "label").strip()
        token = accounts.new_token()
        command: CreateToken | CreateOwnToken
        if form_text(form, "role"):
            try:
                role = Role(form_text(form, "role"))
            except ValueError:
                raise BadRequest("choose the token's role", field="role") from None
            command = CreateToken(label, role, token)
        else:
            command = CreateOwnToken(label, _me(request), token)
        await run_in_threadpool(engine_of(request).run, command)
    except InterlockError as error:
        return flash(request, error=error)
    return render(
        request,
        "_account_token.html",
        {"label": label, "token": token},
        headers={"HX-Trigger": "interlock:changed"},
    )


def _revoke(engine: Engine, user: str, label: str) -> None:
    """The user's own token by that label; else a group's token (an admin's to revoke)."""
    if label in account_reads.tokens_of(engine, user):
        engine.run(RevokeOwnToken(label, user))
    else:
        engine.run(DeleteCredential(TOKEN, label))


async def revoke_token(request: Request) -> Response:
    label = request.path_params["label"]
    try:
        require(request)
        await run_in_threadpool(_revoke, engine_of(request), _me(request), label)
    except InterlockError as error:
        return flash(request, error=error)
    return flash(request, message=f"Token '{label}' revoked: it no longer works.")


routes = [
    Route("/account", account_page, methods=["GET"]),
    Route("/account/profile", save_profile, methods=["POST"]),
    Route("/account/password", change_password, methods=["POST"]),
    Route("/account/sessions/end-others", end_others, methods=["POST"]),
    Route("/account/sessions/{session_id:uuid}/end", end_session, methods=["POST"]),
    Route("/account/tokens", create_token, methods=["POST"]),
    Route("/account/tokens/{label}/revoke", revoke_token, methods=["POST"]),
]
