"""Tenants in the console's Admin section (admins only): list, create, rename, delete, and their
user and group members, each change through the tenant commands (which audit it)."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.admin import ALL_ROWS, admin_page, listed, mutate, optional
from app.console.common import engine_of, form_text, read, render
from app.params import Query
from engine.api import Engine
from engine.commands.identity_tenants import (
    AddTenantMember,
    CreateTenant,
    DeleteTenant,
    RemoveTenantMember,
    UpdateTenant,
)
from engine.errors import NotFound
from engine.queries import identity as reads
from engine.queries.identity import GroupRow, TenantRow, UserRow


def _tenants(engine: Engine) -> dict[str, Any]:
    return {"tenants": listed(reads.tenants(engine, ALL_ROWS))}


def _tenant(engine: Engine, tenant_id: str) -> dict[str, Any]:
    rows: list[TenantRow] = listed(reads.tenants(engine, ALL_ROWS, tenant_id=tenant_id))
    if not rows:
        raise NotFound(f"no tenant '{tenant_id}'", field="tenantId")
    users: list[UserRow] = listed(reads.users(engine, ALL_ROWS, member_of_tenant=tenant_id))
    groups: list[GroupRow] = listed(reads.groups(engine, ALL_ROWS, member_of_tenant=tenant_id))
    user_ids = {u.id for u in users}
    group_ids = {g.id for g in groups}
    all_users: list[UserRow] = listed(reads.users(engine, ALL_ROWS))
    all_groups: list[GroupRow] = listed(reads.groups(engine, ALL_ROWS))
    return {
        "tenant": rows[0],
        "users": users,
        "groups": groups,
        "other_users": [u for u in all_users if u.id not in user_ids],
        "other_groups": [g for g in all_groups if g.id not in group_ids],
    }


async def tenants_page(request: Request) -> Response:
    context = admin_page(request, "tenants")
    context |= await read(request, _tenants, engine_of(request))
    if Query(request.query_params).text("fragment"):
        return render(request, "_admin_tenant_rows.html", context)
    return render(request, "admin_tenants.html", context)


async def tenant_page(request: Request) -> Response:
    context = admin_page(request, "tenants")
    context |= await read(request, _tenant, engine_of(request), request.path_params["tenant_id"])
    if Query(request.query_params).text("fragment"):
        return render(request, "_admin_tenant_members.html", context)
    return render(request, "admin_tenant.html", context)


async def create_tenant(request: Request) -> Response:
    def work(engine: Engine, form: FormData) -> str:
        tenant_id = form_text(form, "id")
        engine.run(CreateTenant(tenant_id, optional(form, "name")))
        return f"Tenant '{tenant_id}' created."

    return await mutate(request, work)


async def rename_tenant(request: Request) -> Response:
    tenant_id = request.path_params["tenant_id"]

    def work(engine: Engine, form: FormData) -> str:
        engine.run(UpdateTenant(tenant_id, optional(form, "name")))
        return f"Tenant '{tenant_id}' saved."

    return await mutate(request, work)


async def delete_tenant(request: Request) -> Response:
    tenant_id = request.path_params["tenant_id"]

    def work(engine: Engine, form: FormData) -> str:
        engine.run(DeleteTenant(tenant_id))
        return f"Tenant '{tenant_id}' deleted."

    return await mutate(request, work)


def _member(form: FormData) -> tuple[str | None, str | None, str]:
    user, group = optional(form, "user_id"), optional(form, "group_id")
    return user, group, f"user '{user}'" if user else f"group '{group}'"


async def add_member(request: Request) -> Response:
    tenant_id = request.path_params["tenant_id"]

    def work(engine: Engine, form: FormData) -> str:
        user, group, who = _member(form)
        engine.run(AddTenantMember(tenant_id, user_id=user, group_id=group))
        return f"The {who} is now a member of '{tenant_id}'."

    return await mutate(request, work)


async def remove_member(request: Request) -> Response:
    tenant_id = request.path_params["tenant_id"]

    def work(engine: Engine, form: FormData) -> str:
        user, group, who = _member(form)
        engine.run(RemoveTenantMember(tenant_id, user_id=user, group_id=group))
        return f"The {who} is no longer a member of '{tenant_id}'."

    return await mutate(request, work)


routes = [
    Route("/admin/tenants", tenants_page, methods=["GET"]),
    Route("/admin/tenants", create_tenant, methods=["POST"]),
    Route("/admin/tenants/{tenant_id}", tenant_page, methods=["GET"]),
    Route("/admin/tenants/{tenant_id}/rename", rename_tenant, methods=["POST"]),
    Route("/admin/tenants/{tenant_id}/delete", delete_tenant, methods=["POST"]),
    Route("/admin/tenants/{tenant_id}/members/add", add_member, methods=["POST"]),
    Route("/admin/tenants/{tenant_id}/members/remove", remove_member, methods=["POST"]),
]
