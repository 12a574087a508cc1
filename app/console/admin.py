"""The console's Admin section (admins only): users and groups. Tenants are in
app/console/admin_tenants.py, authorizations in app/console/admin_authorizations.py. Every change
runs one of the identity commands, which audit it; a refusal is shown next to the form."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from app.auth import require
from app.console.common import engine_of, flash, form_text, read, render
from app.gates import Gate
from app.params import Query
from engine.api import Engine
from engine.commands.identity import (
    AddGroupMember,
    CreateGroup,
    CreateUserProfile,
    DeleteGroup,
    DeleteUser,
    RemoveGroupMember,
    SetUserPassword,
    UpdateGroup,
    UpdateUserProfile,
)
from engine.errors import InterlockError, NotFound
from engine.identity.permissions import BUILTIN_ROLES
from engine.queries import identity as reads
from engine.queries.camunda.common import CamundaPage
from engine.queries.identity import GroupRow, UserRow

ALL_ROWS = CamundaPage()

Work = Callable[[Engine, FormData], str]


def optional(form: FormData, name: str) -> str | None:
    """A form's text field; None when it is left empty."""
    return form_text(form, name).strip() or None


def admin_page(request: Request, section: str) -> dict[str, Any]:
    """Refuse anyone without READ on every authorization (the Admin section's gate); the context
    every Admin page shares."""
    require(request, Gate.READ_AUTHORIZATIONS)
    return {"page": "admin", "section": section}


async def mutate(request: Request, work: Work) -> Response:
    """Run one admin change with the form's fields; its message, or its refusal, as a flash. The
    Admin section's gate applies to its forms too; each command checks its own permits."""
    try:
        require(request, Gate.READ_AUTHORIZATIONS)
        form = await request.form()
        message = await run_in_threadpool(work, engine_of(request), form)
    except InterlockError as error:
        return flash(request, error=error)
    return flash(request, message=message)


def listed(rows: object) -> list[Any]:
    assert isinstance(rows, list)
    return rows


# -- users ---------------------------------------------------------------------------------------


def _users(engine: Engine, like: str | None) -> dict[str, Any]:
    rows: list[UserRow] = listed(reads.users(engine, ALL_ROWS))
    if like:
        needle = like.lower()
        rows = [
            r
            for r in rows
            if any(needle in (v or "").lower() for v in (r.id, r.first_name, r.last_name, r.email))
        ]
    return {"users": rows, "like": like or ""}


def one_user(engine: Engine, user_id: str) -> UserRow:
    rows: list[UserRow] = listed(reads.users(engine, ALL_ROWS, user_id=user_id))
    if not rows:
        raise NotFound(f"no user '{user_id}'", field="userId")
    return rows[0]


def _user(engine: Engine, user_id: str) -> dict[str, Any]:
    user = one_user(engine, user_id)
    member_of: list[GroupRow] = listed(reads.groups(engine, ALL_ROWS, member=user_id))
    groups: list[GroupRow] = listed(reads.groups(engine, ALL_ROWS))
    joined = {g.id for g in member_of}
    return {
        "user": user,
        "member_of": member_of,
        "other_groups": [g for g in groups if g.id not in joined],
    }


async def users_page(request: Request) -> Response:
    context = admin_page(request, "users")
    query = Query(request.query_params)
    context |= await read(request, _users, engine_of(request), query.text("like"))
    if query.text("fragment"):
        return render(request, "_admin_user_rows.html", context)
    return render(request, "admin_users.html", context)


async def user_page(request: Request) -> Response:
    context = admin_page(request, "users")
    user_id = request.path_params["user_id"]
    context |= await read(request, _user, engine_of(request), user_id)
    if Query(request.query_params).text("fragment"):
        return render(request, "_admin_user_groups.html", context)
    return render(request, "admin_user.html", context)


async def create_user(request: Request) -> Response:
    def work(engine: Engine, form: FormData) -> str:
        user_id = form_text(form, "id")
        engine.run(
            CreateUserProfile(
                user_id,
                optional(form, "first_name"),
                optional(form, "last_name"),
                optional(form, "email"),
                form_text(form, "password"),
            )
        )
        return f"User '{user_id}' created."

    return await mutate(request, work)


async def update_user(request: Request) -> Response:
    user_id = request.path_params["user_id"]

    def work(engine: Engine, form: FormData) -> str:
        engine.run(
            UpdateUserProfile(
                user_id,
                optional(form, "first_name"),
                optional(form, "last_name"),
                optional(form, "email"),
            )
        )
        return f"Profile of '{user_id}' saved."

    return await mutate(request, work)


async def reset_password(request: Request) -> Response:
    user_id = request.path_params["user_id"]

    def work(engine: Engine, form: FormData) -> str:
        engine.run(SetUserPassword(user_id, form_text(form, "password")))
        return f"New password set for '{user_id}'; their sessions ended."

    return await mutate(request, work)


async def delete_user(request: Request) -> Response:
    user_id = request.path_params["user_id"]

    def work(engine: Engine, form: FormData) -> str:
        engine.run(DeleteUser(user_id))
        return f"User '{user_id}' deleted."

    return await mutate(request, work)


async def join_group(request: Request) -> Response:
    user_id = request.path_params["user_id"]

    def work(engine: Engine, form: FormData) -> str:
        group_id = form_text(form, "group_id")
        engine.run(AddGroupMember(group_id, user_id))
        return f"'{user_id}' added to '{group_id}'."

    return await mutate(request, work)


async def leave_group(request: Request) -> Response:
    user_id = request.path_params["user_id"]

    def work(engine: Engine, form: FormData) -> str:
        group_id = form_text(form, "group_id")
        engine.run(RemoveGroupMember(group_id, user_id))
        return f"'{user_id}' taken out of '{group_id}'."

    return await mutate(request, work)


# -- groups --------------------------------------------------------------------------------------


def _groups(engine: Engine) -> dict[str, Any]:
    return {"groups": listed(reads.groups(engine, ALL_ROWS)), "builtin": BUILTIN_ROLES}


def _group(engine: Engine, group_id: str) -> dict[str, Any]:
    rows: list[GroupRow] = listed(reads.groups(engine, ALL_ROWS, group_id=group_id))
    if not rows:
        raise NotFound(f"no group '{group_id}'", field="groupId")
    members: list[UserRow] = listed(reads.users(engine, ALL_ROWS, member_of_group=group_id))
    everyone: list[UserRow] = listed(reads.users(engine, ALL_ROWS))
    inside = {u.id for u in members}
    return {
        "group": rows[0],
        "members": members,
        "others": [u for u in everyone if u.id not in inside],
        "builtin": BUILTIN_ROLES,
    }


async def groups_page(request: Request) -> Response:
    context = admin_page(request, "groups")
    context |= await read(request, _groups, engine_of(request))
    if Query(request.query_params).text("fragment"):
        return render(request, "_admin_group_rows.html", context)
    return render(request, "admin_groups.html", context)


async def group_page(request: Request) -> Response:
    context = admin_page(request, "groups")
    context |= await read(request, _group, engine_of(request), request.path_params["group_id"])
    if Query(request.query_params).text("fragment"):
        return render(request, "_admin_group_members.html", context)
    return render(request, "admin_group.html", context)


async def create_group(request: Request) -> Response:
    def work(engine: Engine, form: FormData) -> str:
        group_id = form_text(form, "id")
        engine.run(CreateGroup(group_id, optional(form, "name"), optional(form, "type")))
        return f"Group '{group_id}' created."

    return await mutate(request, work)


async def rename_group(request: Request) -> Response:
    group_id = request.path_params["group_id"]

    def work(engine: Engine, form: FormData) -> str:
        engine.run(UpdateGroup(group_id, optional(form, "name"), optional(form, "type")))
        return f"Group '{group_id}' saved."

    return await mutate(request, work)


async def delete_group(request: Request) -> Response:
    group_id = request.path_params["group_id"]

    def work(engine: Engine, form: FormData) -> str:
        engine.run(DeleteGroup(group_id))
        return f"Group '{group_id}' deleted."

    return await mutate(request, work)


async def add_member(request: Request) -> Response:
    group_id = request.path_params["group_id"]

    def work(engine: Engine, form: FormData) -> str:
        user_id = form_text(form, "user_id")
        engine.run(AddGroupMember(group_id, user_id))
        return f"'{user_id}' added to '{group_id}'."

    return await mutate(request, work)


async def remove_member(request: Request) -> Response:
    group_id = request.path_params["group_id"]

    def work(engine: Engine, form: FormData) -> str:
        user_id = form_text(form, "user_id")
        engine.run(RemoveGroupMember(group_id, user_id))
        return f"'{user_id}' taken out of '{group_id}'."

    return await mutate(request, work)


async def admin_home(request: Request) -> Response:
    require(request, Gate.READ_AUTHORIZATIONS)
    return RedirectResponse("/admin/users", status_code=303)


routes = [
    Route("/admin", admin_home, methods=["GET"]),
    Route("/admin/users", users_page, methods=["GET"]),
    Route("/admin/users", create_user, methods=["POST"]),
    Route("/admin/users/{user_id}", user_page, methods=["GET"]),
    Route("/admin/users/{user_id}/profile", update_user, methods=["POST"]),
    Route("/admin/users/{user_id}/password", reset_password, methods=["POST"]),
    Route("/admin/users/{user_id}/delete", delete_user, methods=["POST"]),
    Route("/admin/users/{user_id}/groups/add", join_group, methods=["POST"]),
    Route("/admin/users/{user_id}/groups/remove", leave_group, methods=["POST"]),
    Route("/admin/groups", groups_page, methods=["GET"]),
    Route("/admin/groups", create_group, methods=["POST"]),
    Route("/admin/groups/{group_id}", group_page, methods=["GET"]),
    Route("/admin/groups/{group_id}/rename", rename_group, methods=["POST"]),
    Route("/admin/groups/{group_id}/delete", delete_group, methods=["POST"]),
    Route("/admin/groups/{group_id}/members/add", add_member, methods=["POST"]),
    Route("/admin/groups/{group_id}/members/remove", remove_member, methods=["POST"]),
]
