"""Camunda's process instances: the running ones (runtime) and every one, running or ended
(history), with their variable and family filters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, LiteralString, TypedDict, Unpack
from uuid import UUID

from psycopg import sql
from psycopg.types.json import Jsonb

from engine.queries import Connection, fetch_one, query
from engine.queries.camunda.common import RUNNING_STATES, CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import LIKE_ESCAPE, Filter, Where, filters_of, like_pattern
from engine.states import IncidentState, InstanceState
from engine.store.columns import select_list


@dataclass(frozen=True)
class VariableFilter:
    """`name_op_value`: op is eq, neq, gt, gteq, lt, lteq or like. `values` holds the JSON
    values the text may stand for (the text itself, and a number or boolean it spells)."""

    name: str
    op: str
    text: str
    number: float | None
    values: tuple[Any, ...]


_COMPARISONS: dict[str, LiteralString] = {"gt": ">", "gteq": ">=", "lt": "<", "lteq": "<="}


# The variables `v` of the root scope of the instance `p`.
ROOT_SCOPE_OF_INSTANCE: LiteralString = "v.instance_id = p.id AND v.scope_key = ''"


def variable_clauses(
    where: Where, scope: LiteralString, filters: Sequence[VariableFilter] | None
) -> None:
    """A condition per filter: a variable `v` that `scope` (a condition on `v`) holds has the
    filter's name and passes its test."""
    for f in filters or ():
        value = where.bind(f.name)
        test: sql.Composable
        match f.op:
            case "eq" | "neq":
                any_of = where.bind([Jsonb(v) for v in f.values])
                test = sql.SQL("v.value = ANY({}::jsonb[])").format(any_of)
                if f.op == "neq":
                    test = sql.SQL("NOT ({})").format(test)
            case "like":
                test = sql.SQL(
                    "jsonb_typeof(v.value) = 'string' AND v.value #>> '{{}}' LIKE {} " + LIKE_ESCAPE
                ).format(where.bind(like_pattern(f.text)))
            case _:
                symbol = sql.SQL(_COMPARISONS[f.op])
                if f.number is not None:
                    test = sql.SQL(
                        "jsonb_typeof(v.value) = 'number' AND (v.value)::numeric {} {}::numeric"
                    ).format(symbol, where.bind(f.number))
                else:
                    test = sql.SQL(
                        "jsonb_typeof(v.value) = 'string' AND v.value #>> '{{}}' {} {}"
                    ).format(symbol, where.bind(f.text))
        # Bytes and File values (base64 text in the column) are compared with nothing.
        where.compose(
            sql.SQL(
                "EXISTS (SELECT 1 FROM variable v WHERE {} AND v.name = {} "
                "AND v.type NOT IN ('bytes', 'file') AND {})"
            ).format(sql.SQL(scope), value, test)
        )


# The instance `p` has an open incident.
_WITH_OPEN_INCIDENT: LiteralString = (
    "EXISTS (SELECT 1 FROM incident i WHERE i.instance_id = p.id AND i.state = {})"
)


@dataclass(frozen=True)
class InstanceRow:
    id: UUID
    definition_id: str
    definition_key: str
    business_key: str | None
    state: str
    tenant_id: str | None = None


INSTANCE_SORT: dict[str, LiteralString] = {
    "instanceId": "p.id",
    "definitionKey": "p.definition_key",
    "definitionId": "p.definition_id",
    "businessKey": "p.business_key",
}


class SharedInstanceFilters(TypedDict, total=False):
    """Camunda's filters of instances, runtime and historic (None: not filtered; `ids`: an empty
    list matches nothing, `definition_keys`: an empty list filters nothing)."""

    ids: Annotated[Sequence[UUID] | None, Filter.any_of("p.id")]
    business_key: Annotated[str | None, Filter.equals("p.business_key")]
    business_key_like: Annotated[str | None, Filter.like("p.business_key")]
    definition_id: Annotated[str | None, Filter.equals("p.definition_id")]
    definition_key: Annotated[str | None, Filter.equals("p.definition_key")]
    definition_keys: Annotated[Sequence[str] | None, Filter.any_given("p.definition_key")]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("p.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("p.tenant_id IS NULL")]


class InstanceFilters(SharedInstanceFilters, total=False):
    """The runtime's filters of instances (`with_incident` false filters nothing)."""

    suspended: Annotated[bool | None, Filter.holds("p.state = {}", InstanceState.SUSPENDED)]
    with_incident: Annotated[bool | None, Filter.if_true(_WITH_OPEN_INCIDENT, IncidentState.OPEN)]


_INSTANCES = CamundaList(
    InstanceRow,
    select_list(InstanceRow, [("p", "process_instance")]),
    "process_instance p",
    INSTANCE_SORT,
    "p.started_at, p.id",
    filters_of(InstanceFilters),
    covers=covers.instance("p.definition_key", "p.id", tenant="p.tenant_id"),
)


@query
def process_instances(
    conn: Connection,
    page: CamundaPage,
    *,
    variables: Sequence[VariableFilter] = (),
    family: FamilyFilter | None = None,
    count: bool = False,
    **filters: Unpack[InstanceFilters],
) -> list[InstanceRow] | int:
    """Running instances (Camunda's runtime: ended ones are history only)."""
    where = Where()
    where.any_of("p.state", RUNNING_STATES)
    # Implied by the states (an instance gets its end time as it ends): lets the partial index
    # of unfinished instances serve the list in start order.
    where.fixed("p.ended_at IS NULL")
    if family is not None:
        _family_clauses(where, family, running=True)
    variable_clauses(where, ROOT_SCOPE_OF_INSTANCE, variables)
    return _INSTANCES.read(conn, page, filters, count=count, where=where)


@dataclass(frozen=True)
class FamilyFilter:
    """Camunda's filters on the calls between instances: the instances `super_instance` called
    (superProcessInstance), the one that called `sub_instance` (subProcessInstance), the members
    of the family whose root is `root_instance` (the root included), only instances nobody called
    (`roots_only` True; False: only called ones), only instances that call none (`leaves_only`)."""

    super_instance: UUID | None = None
    sub_instance: UUID | None = None
    root_instance: UUID | None = None
    roots_only: bool | None = None
    leaves_only: bool | None = None


def _family_clauses(where: Where, family: FamilyFilter, *, running: bool) -> None:
    """The family filters on `p`; `running`: a leaf calls no running instance (the runtime's
    view), else no instance at all (the history's)."""
    where.equals("p.super_instance_id", family.super_instance)
    where.when(
        family.sub_instance,
        "p.id = (SELECT s.super_instance_id FROM process_instance s WHERE s.id = {})",
    )
    # The root by its primary key, its called instances by their partial index.
    where.when(
        family.root_instance,
        "(p.id = {} OR (p.super_instance_id IS NOT NULL AND p.root_instance_id = {}))",
    )
    if family.roots_only is not None:
        called = "p.super_instance_id IS NOT NULL"
        where.fixed("p.super_instance_id IS NULL" if family.roots_only else called)
    if family.leaves_only:
        if running:
            where.exists(
                "SELECT 1 FROM process_instance c WHERE c.super_instance_id = p.id "
                "AND c.state = ANY({})",
                list(RUNNING_STATES),
                negated=True,
            )
        else:
            where.exists(
                "SELECT 1 FROM process_instance c WHERE c.super_instance_id = p.id", negated=True
            )


@dataclass(frozen=True)
class HistoricInstanceRow:
    id: UUID
    definition_id: str
    definition_key: str
    definition_name: str | None
    definition_version: int
    business_key: str | None
    state: str
    started_at: datetime
    ended_at: datetime | None
    start_activity_id: str | None
    super_instance_id: UUID | None
    root_instance_id: UUID | None
    tenant_id: str | None = None
    # Terminated by its caller's own flow (Camunda's INTERNALLY_TERMINATED), not by a request.
    internally_terminated: bool = False


HISTORIC_INSTANCE_SORT: dict[str, LiteralString] = {
    "instanceId": "p.id",
    "definitionId": "p.definition_id",
    "definitionKey": "p.definition_key",
    "definitionName": "d.name",
    "definitionVersion": "d.version",
    "businessKey": "p.business_key",
    "startTime": "p.started_at",
    "endTime": "p.ended_at",
    "duration": "(p.ended_at - p.started_at)",
}

# Camunda's historic states (active, suspended, completed, externallyTerminated,
# internallyTerminated) by their rows': both terminated ones are Terminated rows, told apart by
# `internally_terminated` (the `terminated_internally` filter).
HISTORIC_STATE_FILTERS: dict[str, tuple[InstanceState, ...]] = {
    "active": (InstanceState.CREATED, InstanceState.ACTIVE, InstanceState.TERMINATING),
    "suspended": (InstanceState.SUSPENDED,),
    "completed": (InstanceState.COMPLETED,),
    "externallyTerminated": (InstanceState.TERMINATED,),
    "internallyTerminated": (InstanceState.TERMINATED,),
}


def _terminated_internally(where: Where, flag: bool | None) -> None:
    """Of the Terminated instances, only those terminated internally (True) or by a request
    (False); instances in any other state pass."""
    if flag is not None:
        where.add(
            "(p.state <> {} OR p.internally_terminated = {})", InstanceState.TERMINATED.value, flag
        )


class HistoricInstanceFilters(SharedInstanceFilters, total=False):
    """The history's filters of instances (`with_incidents` false filters nothing)."""

    instance_id: Annotated[UUID | None, Filter.equals("p.id")]
    finished: Annotated[bool | None, Filter.present("p.ended_at")]
    states: Annotated[Sequence[str] | None, Filter.any_of("p.state")]
    terminated_internally: Annotated[bool | None, Filter(_terminated_internally)]
    with_incidents: Annotated[bool | None, Filter.if_true(_WITH_OPEN_INCIDENT, IncidentState.OPEN)]
    started_before: Annotated[datetime | None, Filter.at_most("p.started_at")]
    started_after: Annotated[datetime | None, Filter.at_least("p.started_at")]
    finished_before: Annotated[datetime | None, Filter.at_most("p.ended_at")]
    finished_after: Annotated[datetime | None, Filter.at_least("p.ended_at")]


_HISTORIC_INSTANCES = CamundaList(
    HistoricInstanceRow,
    select_list(
        HistoricInstanceRow,
        [("p", "process_instance")],
        {
            "definition_name": "d.name",
            "definition_version": "d.version",
            "start_activity_id": "(SELECT h.node_id FROM history h WHERE h.instance_id = p.id "
            "ORDER BY h.started_at, h.id LIMIT 1)",
        },
    ),
    "process_instance p JOIN process_definition d ON d.id = p.definition_id",
    HISTORIC_INSTANCE_SORT,
    "p.started_at, p.id",
    filters_of(HistoricInstanceFilters),
    covers=covers.history("p.definition_key", "p.id", tenant="p.tenant_id"),
)


@query
def historic_instance(conn: Connection, instance_id: UUID) -> HistoricInstanceRow | None:
    """The historic instance (None: there is none the request's principal may read)."""
    where = Where()
    where.equals("p.id", instance_id)
    where.authorized(_HISTORIC_INSTANCES.covers)
    statement = (
        sql.SQL(f"SELECT {_HISTORIC_INSTANCES.columns} FROM {_HISTORIC_INSTANCES.source}")
        + where.sql()
    )
    return fetch_one(conn, HistoricInstanceRow, statement, where.params())


@query
def historic_instances(
    conn: Connection,
    page: CamundaPage,
    *,
    family: FamilyFilter | None = None,
    count: bool = False,
    **filters: Unpack[HistoricInstanceFilters],
) -> list[HistoricInstanceRow] | int:
    """Every instance, running or ended (Camunda's history)."""
    where = Where()
    if family is not None:
        _family_clauses(where, family, running=False)
    return _HISTORIC_INSTANCES.read(conn, page, filters, count=count, where=where)
