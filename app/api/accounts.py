"""Users (HTTP Basic and console log-in), API tokens and console sessions. Admins only. Secrets
are stored hashed and shown once, when created; so these POSTs are not replayable: a repeat is a
409. Deleting a user ends their sessions with it."""

from __future__ import annotations

import secrets
from typing import Any
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response

from app.api import views
from app.api.body import Body
from app.api.http import Op, Reply, call, engine_of, path_id, path_text, reply
from app.api.schemas import STRING, ref, request
from app.auth import principal_of
from app.gates import Gate
from engine.api import Engine
from engine.commands.accounts import (
    CreateOwnToken,
    CreateToken,
    CreateUser,
    DeleteCredential,
    EndSessions,
    RevokeOwnToken,
    SetPassword,
    SetRole,
)
from engine.errors import BadRequest, NotFound
from engine.identity import accounts
from engine.identity.accounts import Role, SessionRow
from engine.queries import accounts as account_reads

ROLE = {**STRING, "enum": [r.value for r in Role]}
USER_BODY = request({"name": STRING, "role": ROLE, "password": STRING}, required=("name", "role"))
TOKEN_BODY = request({"name": STRING, "role": ROLE}, required=("name", "role"))
OWN_TOKEN_BODY = request({"name": STRING}, required=("name",))
PASSWORD_BODY = request({"password": STRING}, required=("password",))
ROLE_BODY = request({"role": ROLE}, required=("role",))


def _role(body: Body) -> Role:
    text = body.required_text("role")
    try:
        return Role(text)
    except ValueError:
        raise BadRequest(
            f"unknown role '{text}'; known: {', '.join(r.value for r in Role)}", field="role"
        ) from None


def _create_user(engine: Engine, name: str, role: Role, password: str) -> None:
    engine.run(CreateUser(name, role, password))


def _create_token(engine: Engine, name: str, role: Role) -> str:
    token = accounts.new_token()
    engine.run(CreateToken(name, role, token))
    return token


def _listed(engine: Engine, kind: str) -> list[dict[str, Any]]:
    return [
        {"name": name, "role": role}
        for found, name, role in account_reads.list_all(engine)
        if found == kind
    ]


def _delete(engine: Engine, kind: str, name: str) -> None:
    engine.run(DeleteCredential(kind, name))


def _set_password(engine: Engine, name: str, password: str) -> None:
    engine.run(SetPassword(name, password))


def _set_role(engine: Engine, kind: str, name: str, role: Role) -> None:
    engine.run(SetRole(kind, name, role))


def session_view(row: SessionRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "user": row.user,
        "role": row.role.value,
        "created_at": views.iso(row.created_at),
        "last_seen_at": views.iso(row.last_seen_at),
        "expires_at": views.iso(row.expires_at),
        "client_address": row.client_address,
        "user_agent": row.user_agent,
    }


def list_sessions(engine: Engine, idle_seconds: float) -> list[SessionRow]:
    return account_reads.list_sessions(engine, idle_seconds=idle_seconds)


def end_session(engine: Engine, session_id: UUID) -> None:
    engine.run(EndSessions(session_id=session_id))


def end_sessions_of(engine: Engine, name: str, keep: UUID | None = None) -> int:
    return engine.run(EndSessions(user=name, keep=keep)).ended


def _idle_seconds(request: Request) -> float:
    return float(request.app.state.authenticator.settings.session_idle_seconds)


async def add_user(request: Request) -> Response:
    body = await Body.read(request, USER_BODY)
    name, role = body.required_text("name"), _role(body)
    given = body.text("password")
    password = given if given is not None else secrets.token_urlsafe(12)
    await call(_create_user, engine_of(request), name, role, password)
    return reply({"name": name, "role": role.value, "password": None if given else password}, 201)


async def add_token(request: Request) -> Response:
    body = await Body.read(request, TOKEN_BODY)
    name, role = body.required_text("name"), _role(body)
    token = await call(_create_token, engine_of(request), name, role)
    return reply({"name": name, "role": role.value, "token": token}, 201)


def _me(request: Request) -> str:
    """The signed-in user a token of their own belongs to; a token of a group, or nobody
    (authentication switched off), has none."""
    user = principal_of(request).user_id
    if user is None:
        raise BadRequest("only a user has tokens of their own; this caller is none")
    return user


def _create_own_token(engine: Engine, name: str, owner: str) -> str:
    token = accounts.new_token()
    engine.run(CreateOwnToken(name, owner, token))
    return token


async def add_own_token(request: Request) -> Response:
    body = await Body.read(request, OWN_TOKEN_BODY)
    name, owner = body.required_text("name"), _me(request)
    token = await call(_create_own_token, engine_of(request), name, owner)
    return reply({"name": name, "owner": owner, "token": token}, 201)


async def list_own_tokens(request: Request) -> Response:
    """The caller's tokens; a caller who is no user (a group's token) has none."""
    owner = principal_of(request).user_id
    names = [] if owner is None else await call(account_reads.tokens_of, engine_of(request), owner)
    return reply(views.items([{"name": name} for name in names]))


async def delete_own_token(request: Request) -> Response:
    name, owner = path_text(request, "name"), principal_of(request).user_id
    if owner is None:
        raise NotFound(f"no token of the caller's own named '{name}'")
    await call(engine_of(request).run, RevokeOwnToken(name, owner))
    return Response(status_code=204)


async def list_users(request: Request) -> Response:
    return reply(views.items(await call(_listed, engine_of(request), "password")))


async def list_tokens(request: Request) -> Response:
    return reply(views.items(await call(_listed, engine_of(request), "token")))


async def change_password(request: Request) -> Response:
    body = await Body.read(request, PASSWORD_BODY)
    password = body.required_text("password")
    await call(_set_password, engine_of(request), path_text(request, "name"), password)
    return Response(status_code=204)


async def _change_role(request: Request, kind: str) -> Response:
    role = _role(await Body.read(request, ROLE_BODY))
    await call(_set_role, engine_of(request), kind, path_text(request, "name"), role)
    return Response(status_code=204)


async def change_user_role(request: Request) -> Response:
    return await _change_role(request, "password")


async def change_token_role(request: Request) -> Response:
    return await _change_role(request, "token")


async def delete_user(request: Request) -> Response:
    await call(_delete, engine_of(request), "password", path_text(request, "name"))
    return Response(status_code=204)


async def delete_token(request: Request) -> Response:
    await call(_delete, engine_of(request), "token", path_text(request, "name"))
    return Response(status_code=204)


async def get_sessions(request: Request) -> Response:
    rows = await call(list_sessions, engine_of(request), _idle_seconds(request))
    return reply(views.items([session_view(row) for row in rows]))


async def delete_session(request: Request) -> Response:
    await call(end_session, engine_of(request), path_id(request, "id"))
    return Response(status_code=204)


async def delete_user_sessions(request: Request) -> Response:
    ended = await call(end_sessions_of, engine_of(request), path_text(request, "name"))
    return reply({"ended": ended})


_DELETED = {204: Reply("Deleted", None)}

operations = [
    Op(
        "GET",
        "/account/tokens",
        list_own_tokens,
        "List the caller's own API tokens (never the tokens themselves)",
        replies={200: Reply("Tokens", ref("OwnTokenList"))},
    ),
    Op(
        "POST",
        "/account/tokens",
        add_own_token,
        "Create an API token of the caller's own: it acts as them, with their grants and no more;"
        " the response is the only time it is shown",
        body=OWN_TOKEN_BODY,
        body_required=True,
        replies={201: Reply("Created", ref("NewOwnToken"))},
    ),
    Op(
        "DELETE",
        "/account/tokens/{name}",
        delete_own_token,
        "Revoke an API token of the caller's own",
        replies={204: Reply("Revoked", None)},
    ),
    Op(
        "GET",
        "/users",
        list_users,
        "List users (never their passwords)",
        replies={200: Reply("Users", ref("CredentialList"))},
        gate=Gate.ADMINISTER,
    ),
    Op(
        "POST",
        "/users",
        add_user,
        "Create a user; without `password` one is generated and returned once",
        body=USER_BODY,
        body_required=True,
        replies={201: Reply("Created", ref("NewUser"))},
    ),
    Op("DELETE", "/users/{name}", delete_user, "Delete a user", replies=_DELETED),
    Op(
        "POST",
        "/users/{name}/password",
        change_password,
        "Set a user's password; every session of theirs ends",
        body=PASSWORD_BODY,
        body_required=True,
        replies={204: Reply("Changed", None)},
    ),
    Op(
        "POST",
        "/users/{name}/role",
        change_user_role,
        "Change a user's role; their sessions act with it from their next request",
        body=ROLE_BODY,
        body_required=True,
        replies={204: Reply("Changed", None)},
    ),
    Op(
        "POST",
        "/tokens/{name}/role",
        change_token_role,
        "Change an API token's role",
        body=ROLE_BODY,
        body_required=True,
        replies={204: Reply("Changed", None)},
    ),
    Op(
        "GET",
        "/tokens",
        list_tokens,
        "List API tokens (never the tokens themselves)",
        replies={200: Reply("Tokens", ref("CredentialList"))},
        gate=Gate.ADMINISTER,
    ),
    Op(
        "POST",
        "/tokens",
        add_token,
        "Create an API token; the response is the only time it is shown",
        body=TOKEN_BODY,
        body_required=True,
        replies={201: Reply("Created", ref("NewToken"))},
    ),
    Op(
        "DELETE",
        "/tokens/{name}",
        delete_token,
        "Delete an API token",
        replies=_DELETED,
    ),
    Op(
        "DELETE",
        "/users/{name}/sessions",
        delete_user_sessions,
        "End every console session of a user",
        replies={200: Reply("Ended", ref("EndedSessions"))},
    ),
    Op(
        "GET",
        "/sessions",
        get_sessions,
        "List live console sessions (never their cookies)",
        replies={200: Reply("Sessions", ref("SessionList"))},
        gate=Gate.ADMINISTER,
    ),
    Op(
        "DELETE",
        "/sessions/{id}",
        delete_session,
        "End a console session: its cookie stops working at once",
        replies=_DELETED,
    ),
]
