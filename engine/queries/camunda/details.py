"""Camunda's historic details (`/history/detail`) from the rows Interlock keeps. Interlock does not
log every variable write of the engine (that would add rows to the write of every instance):
the details are the variable changes an operator made (the audit entries, with the value
after each change) and each variable's current value, as its latest update. Submitted form
values are kept only as the variables they set, so no detail is a form field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of, state_literal
from engine.states import AuditEntity, AuditOperation


@dataclass(frozen=True)
class DetailRow:
    """One variable update: its variable (instance, scope, name), its type and value after the
    update, when, the operator's operation and task (none for a current value), and whether it
    set the variable first."""

    id: UUID
    instance_id: UUID
    scope_key: str
    name: str
    type: str
    value: Any
    at: datetime
    operation_id: UUID | None
    task_id: UUID | None
    initial: bool
    definition_id: str
    definition_key: str
    tenant_id: str | None
    root_instance_id: UUID | None
    execution_id: UUID
    activity_instance_id: UUID


# The type of an audited value, read from its JSON as a value given without a type is typed
# (engine/language/variables.py `infer`).
_JSON_TYPE = (
    "CASE jsonb_typeof(e.value) WHEN 'null' THEN 'null' WHEN 'boolean' THEN 'boolean' "
    "WHEN 'string' THEN 'string' WHEN 'number' THEN CASE WHEN e.value::text ~ '^-?[0-9]+$' "
    "THEN CASE WHEN e.value::numeric >= -2147483648 AND e.value::numeric < 2147483648 "
    "THEN 'integer' ELSE 'long' END ELSE 'double' END ELSE 'json' END"
)

_VARIABLE: LiteralString = state_literal(AuditEntity.VARIABLE)
# The task an audited change went through (its entry names it).
_TASK: LiteralString = (
    "CASE WHEN a.entity_id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' "
    "THEN a.entity_id::uuid END"
)
_REMOVED: LiteralString = state_literal(AuditOperation.REMOVE_VARIABLE)
_SET: LiteralString = state_literal(AuditOperation.SET_VARIABLE)

# Every detail: each variable's current value, then each variable an audited operator change
# set (one entry may name several: one detail per name). A task's local change is of the task's
# token's scope.
_DETAILS: LiteralString = (
    "(SELECT md5('v/' || v.instance_id || '/' || v.scope_key || '/' || v.name)::uuid AS id, "
    "v.instance_id, v.scope_key, v.name, v.type, v.value, v.updated_at AS at, "
    "NULL::uuid AS operation_id, NULL::uuid AS task_id, false AS initial FROM variable v "
    "UNION ALL "
    "SELECT md5('a/' || a.id || '/' || e.name)::uuid, a.instance_id, "
    "CASE WHEN a.details->>'local' = 'true' THEN coalesce(("
    "SELECT u.token_id::text FROM user_task u WHERE u.id = " + _TASK + "), '') ELSE '' END, "
    "e.name, " + _JSON_TYPE + ", e.value, a.at, a.id, " + _TASK + ", "
    "CASE WHEN a.property IS NULL THEN NOT coalesce(a.before ? e.name, false) "
    "ELSE a.operation = " + _SET + " END "
    "FROM audit_entry a CROSS JOIN LATERAL jsonb_each(CASE WHEN a.property IS NULL "
    "THEN a.after ELSE jsonb_build_object(a.property, a.after) END) e(name, value) "
    "WHERE a.entity = " + _VARIABLE + " AND a.instance_id IS NOT NULL "
    "AND a.operation <> " + _REMOVED + ") x "
    "JOIN process_instance p ON p.id = x.instance_id "
    "LEFT JOIN token t ON x.scope_key <> '' AND t.id = CAST(NULLIF(x.scope_key, '') AS uuid)"
)

_EXECUTION: LiteralString = "COALESCE(t.id, x.instance_id)"
_ACTIVITY_INSTANCE: LiteralString = (
    "CASE WHEN x.scope_key = '' THEN x.instance_id ELSE COALESCE(t.visit_id, t.id) END"
)

DETAIL_SORT: dict[str, LiteralString] = {
    "processInstanceId": "x.instance_id",
    "variableName": "x.name",
    "variableType": "x.type",
    # Interlock numbers no revisions: every detail is revision 0.
    "variableRevision": "0",
    "formPropertyId": "x.name",
    "time": "x.at",
    "occurrence": "x.at",
    "tenantId": "p.tenant_id",
}


class DetailFilters(TypedDict, total=False):
    """Camunda's filters of historic details (None: not filtered; a flag that is false filters
    nothing)."""

    detail_id: Annotated[UUID | None, Filter.equals("x.id")]
    instance_id: Annotated[UUID | None, Filter.equals("x.instance_id")]
    execution_id: Annotated[UUID | None, Filter.equals(_EXECUTION)]
    task_id: Annotated[UUID | None, Filter.equals("x.task_id")]
    activity_instance_id: Annotated[UUID | None, Filter.equals(_ACTIVITY_INSTANCE)]
    variable_types: Annotated[Sequence[str] | None, Filter.any_given("x.type")]
    # No detail is a form field.
    form_fields: Annotated[bool | None, Filter.if_true("FALSE")]
    exclude_task_details: Annotated[bool | None, Filter.if_true("x.task_id IS NULL")]
    operation_id: Annotated[UUID | None, Filter.equals("x.operation_id")]
    occurred_before: Annotated[datetime | None, Filter.at_most("x.at")]
    occurred_after: Annotated[datetime | None, Filter.at_least("x.at")]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("p.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("p.tenant_id IS NULL")]


_DETAIL_LIST = CamundaList(
    DetailRow,
    "x.id, x.instance_id, x.scope_key, x.name, x.type, x.value, x.at, x.operation_id, "
    "x.task_id, x.initial, p.definition_id, p.definition_key, p.tenant_id, "
    "p.root_instance_id, " + _EXECUTION + " AS execution_id, " + _ACTIVITY_INSTANCE + " AS "
    "activity_instance_id",
    _DETAILS,
    DETAIL_SORT,
    # By instance and variable, each variable's details oldest first. Unfiltered, a page sorts
    # every variable row; by instance (or execution, task...) it reads that instance's alone.
    "x.instance_id, x.scope_key, x.name, x.at, x.id",
    filters_of(DetailFilters),
    covers=covers.history("p.definition_key", "x.instance_id", tenant="p.tenant_id"),
)


@query
def details(
    conn: Connection,
    page: CamundaPage,
    *,
    count: bool = False,
    **filters: Unpack[DetailFilters],
) -> list[DetailRow] | int:
    """Historic details of the instances whose history the principal may read, by instance and
    variable, each variable's oldest first, unless sorted otherwise."""
    return _DETAIL_LIST.read(conn, page, filters, count=count, where=Where())
