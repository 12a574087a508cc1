"""Camunda's executions (engine/store/executions.py says what they are): every running
instance's own execution and every live token of it, with Camunda's execution query filters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, query
from engine.queries.camunda.common import RUNNING_STATES, CamundaList, CamundaPage
from engine.queries.camunda.instances import (
    ROOT_SCOPE_OF_INSTANCE,
    VariableFilter,
    variable_clauses,
)
from engine.sql import covers
from engine.sql.filters import (
    LIKE_ESCAPE,
    Filter,
    Where,
    filters_of,
    like_pattern,
    state_literal,
)
from engine.states import FINAL_TOKEN_STATES, IncidentState, InstanceState, SubscriptionKind
from engine.store.columns import select_list


@dataclass(frozen=True)
class ExecutionRow:
    """An execution: `id` the instance's (its own execution, `node_id` None) or a live
    token's; the instance's definition, business key, state and tenant."""

    id: UUID
    instance_id: UUID
    node_id: str | None
    definition_id: str
    definition_key: str
    business_key: str | None
    state: str
    tenant_id: str | None


_FINAL: LiteralString = ", ".join(state_literal(s) for s in sorted(FINAL_TOKEN_STATES))

# Each running instance's own execution (scope '' of its variables; an instance gets its end
# time as it ends, so the running ones are among those without one) and each live token (its
# locals' scope is its id), with the instance `p`.
EXECUTION_SOURCE: LiteralString = (
    "(SELECT i.id, i.id AS instance_id, NULL::text AS node_id, '' AS scope_key"
    " FROM process_instance i WHERE i.ended_at IS NULL"
    " UNION ALL SELECT t.id, t.instance_id, t.node_id, t.id::text FROM token t"
    " WHERE t.state NOT IN (" + _FINAL + ")) x JOIN process_instance p ON p.id = x.instance_id"
)

# The variables `v` of the execution `x`'s own scope.
_OWN_SCOPE: LiteralString = "v.instance_id = x.instance_id AND v.scope_key = x.scope_key"

EXECUTION_SORT: dict[str, LiteralString] = {
    "instanceId": "x.instance_id",
    "definitionKey": "p.definition_key",
    "definitionId": "p.definition_id",
    "tenantId": "p.tenant_id",
}

# The execution's own subscriptions and open incidents: a token's, or the instance's own
# (rows that name no token).
_SUBSCRIBED: LiteralString = (
    "EXISTS (SELECT 1 FROM event_subscription s WHERE s.instance_id = x.instance_id AND "
    "coalesce(s.token_id, s.instance_id) = x.id AND s.kind = {} AND s.name = {})"
)
_INCIDENT: LiteralString = (
    "EXISTS (SELECT 1 FROM incident n WHERE n.instance_id = x.instance_id AND "
    "coalesce(n.token_id, n.instance_id) = x.id AND n.state = "
    + state_literal(IncidentState.OPEN)
    + " AND "
)


class ExecutionFilters(TypedDict, total=False):
    """Camunda's filters of executions (None: not filtered)."""

    execution_id: Annotated[UUID | None, Filter.equals("x.id")]
    business_key: Annotated[str | None, Filter.equals("p.business_key")]
    definition_id: Annotated[str | None, Filter.equals("p.definition_id")]
    definition_key: Annotated[str | None, Filter.equals("p.definition_key")]
    instance_id: Annotated[UUID | None, Filter.equals("x.instance_id")]
    node_id: Annotated[str | None, Filter.equals("x.node_id")]
    signal_name: Annotated[
        str | None,
        Filter(lambda where, name: where.when(name, _named(SubscriptionKind.SIGNAL))),
    ]
    message_name: Annotated[
        str | None,
        Filter(lambda where, name: where.when(name, _named(SubscriptionKind.MESSAGE))),
    ]
    suspended: Annotated[bool | None, Filter.holds("p.state = {}", InstanceState.SUSPENDED.value)]
    incident_id: Annotated[UUID | None, Filter.condition(_INCIDENT + "n.id = {})")]
    incident_type: Annotated[str | None, Filter.condition(_INCIDENT + "n.type = {})")]
    incident_message: Annotated[str | None, Filter.condition(_INCIDENT + "n.message = {})")]
    incident_message_like: Annotated[
        str | None,
        Filter(
            lambda where, text: where.when(
                None if text is None else like_pattern(text),
                _INCIDENT + "n.message LIKE {} " + LIKE_ESCAPE + ")",
            )
        ),
    ]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("p.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("p.tenant_id IS NULL")]


def _named(kind: SubscriptionKind) -> LiteralString:
    """The subscription condition with the kind fixed and the name the filter's value."""
    return _SUBSCRIBED.replace("s.kind = {}", "s.kind = " + state_literal(kind))


_EXECUTIONS = CamundaList(
    ExecutionRow,
    select_list(
        ExecutionRow,
        [("p", "process_instance")],
        {"id": "x.id", "instance_id": "x.instance_id", "node_id": "x.node_id"},
    ),
    EXECUTION_SOURCE,
    EXECUTION_SORT,
    "x.instance_id, x.id",
    filters_of(ExecutionFilters),
    covers=covers.instance("p.definition_key", "x.instance_id", tenant="p.tenant_id"),
)


@query
def executions(
    conn: Connection,
    page: CamundaPage,
    *,
    variables: Sequence[VariableFilter] = (),
    process_variables: Sequence[VariableFilter] = (),
    count: bool = False,
    **filters: Unpack[ExecutionFilters],
) -> list[ExecutionRow] | int:
    """The executions of running instances, with Camunda's filters: `variables` test the
    execution's own variables, `process_variables` its instance's root scope's."""
    where = Where()
    where.any_of("p.state", RUNNING_STATES)
    variable_clauses(
        where, "v.instance_id = x.instance_id AND v.scope_key = x.scope_key", variables
    )
    variable_clauses(where, ROOT_SCOPE_OF_INSTANCE, process_variables)
    return _EXECUTIONS.read(conn, page, filters, count=count, where=where)
