"""Authorizations in the console's Admin section (admins only), one resource type at a time: a
matrix whose rows are that type's authorizations (global, grant or revoke; for a user or a group;
on a resource id) and whose columns are the type's permissions by Camunda's names, a tick per
held permission. Each is created, changed and deleted through the authorization commands."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.admin import ALL_ROWS, admin_page, listed, mutate, optional
from app.console.common import engine_of, form_text, read, render
from app.params import Query
from engine.api import Engine
from engine.commands.identity_authorizations import DeleteAuthorization, SaveAuthorization
from engine.db.ids import new_id
from engine.errors import BadRequest, NotFound
from engine.identity.permissions import (
    ALL,
    PERMISSIONS,
    RESOURCE_NAMES,
    AuthorizationType,
    ResourceType,
    permission_bits,
    resource_named,
)
from engine.queries import identity as reads
from engine.queries.identity import AuthorizationRow

DEFAULT = ResourceType.PROCESS_DEFINITION
TYPES = {t.name.lower(): t for t in AuthorizationType}


def resource_of(name: str | None) -> ResourceType:
    """The resource type a page or form names (its Camunda name); the default when none."""
    if not name:
        return DEFAULT
    found = resource_named(name)
    if found is None:
        raise BadRequest(f"unknown resource type '{name}'", field="resource")
    return found


def columns(resource: ResourceType) -> list[tuple[str, int]]:
    """The type's permissions, ALL first, in the order of their bits."""
    named = sorted(PERMISSIONS[resource].items(), key=lambda item: item[1])
    return [("ALL", ALL), *named]


def held(rule: AuthorizationRow, cols: list[tuple[str, int]]) -> set[str]:
    """The names of the columns whose every bit the rule holds."""
    return {name for name, bit in cols if rule.permissions & bit == bit}


def _order(rule: AuthorizationRow) -> tuple[int, str, str, str]:
    return (rule.type, rule.user_id or "", rule.group_id or "", rule.resource_id)


def _matrix(engine: Engine, resource: ResourceType) -> dict[str, Any]:
    rows: list[AuthorizationRow] = listed(
        reads.authorizations(engine, ALL_ROWS, resource_type=int(resource))
    )
    cols = columns(resource)
    return {
        "held": {r.id: held(r, cols) for r in rows},
        "resource": resource,
        "resource_name": RESOURCE_NAMES[resource],
        "resources": [(r, RESOURCE_NAMES[r]) for r in ResourceType if r in PERMISSIONS],
        "columns": cols,
        "rules": sorted(rows, key=_order),
        "types": list(TYPES),
    }


def _one(engine: Engine, rule_id: UUID) -> dict[str, Any]:
    rows: list[AuthorizationRow] = listed(
        reads.authorizations(engine, ALL_ROWS, authorization_id=rule_id)
    )
    if not rows:
        raise NotFound(f"no authorization '{rule_id}'", field="id")
    resource = ResourceType(rows[0].resource_type)
    return {"rule": rows[0], **_matrix(engine, resource)}


async def matrix_page(request: Request) -> Response:
    context = admin_page(request, "authorizations")
    query = Query(request.query_params)
    resource = resource_of(query.text("resource"))
    context |= await read(request, _matrix, engine_of(request), resource)
    if query.text("fragment"):
        return render(request, "_admin_authorization_rows.html", context)
    return render(request, "admin_authorizations.html", context)


async def rule_page(request: Request) -> Response:
    context = admin_page(request, "authorizations")
    context |= await read(request, _one, engine_of(request), request.path_params["rule_id"])
    return render(request, "admin_authorization.html", context)


def rule_of(form: FormData, rule_id: UUID) -> AuthorizationRow:
    """The authorization a form describes; a field that is not right is named."""
    resource = resource_of(form_text(form, "resource"))
    kind = form_text(form, "type")
    if kind not in TYPES:
        raise BadRequest(f"the type is one of {', '.join(TYPES)}", field="type")
    names = [v for v in form.getlist("permissions") if isinstance(v, str)]
    try:
        bits = permission_bits(resource, names)
    except KeyError as exc:
        raise BadRequest(
            f"{RESOURCE_NAMES[resource]} has no permission {exc.args[0]}", field="permissions"
        ) from None
    return AuthorizationRow(
        rule_id,
        TYPES[kind],
        optional(form, "user_id"),
        optional(form, "group_id"),
        int(resource),
        form_text(form, "resource_id").strip(),
        bits,
    )


async def create_rule(request: Request) -> Response:
    def work(engine: Engine, form: FormData) -> str:
        engine.run(SaveAuthorization(rule_of(form, new_id()), create=True))
        return "Authorization created."

    return await mutate(request, work)


async def update_rule(request: Request) -> Response:
    rule_id: UUID = request.path_params["rule_id"]

    def work(engine: Engine, form: FormData) -> str:
        engine.run(SaveAuthorization(rule_of(form, rule_id), create=False))
        return "Authorization saved."

    return await mutate(request, work)


async def delete_rule(request: Request) -> Response:
    rule_id: UUID = request.path_params["rule_id"]

    def work(engine: Engine, form: FormData) -> str:
        engine.run(DeleteAuthorization(rule_id))
        return "Authorization deleted."

    return await mutate(request, work)


routes = [
    Route("/admin/authorizations", matrix_page, methods=["GET"]),
    Route("/admin/authorizations", create_rule, methods=["POST"]),
    Route("/admin/authorizations/{rule_id:uuid}", rule_page, methods=["GET"]),
    Route("/admin/authorizations/{rule_id:uuid}", update_rule, methods=["POST"]),
    Route("/admin/authorizations/{rule_id:uuid}/delete", delete_rule, methods=["POST"]),
]
