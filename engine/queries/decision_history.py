"""Reads of decision definitions with Camunda's filters, and of the decision evaluations (the
history every direct evaluation and business rule task writes): Camunda's list and count with
its filters, sorting and paging, one evaluation by id, and a keyset-paged list for /api/v1.

Filters bind parameters only; a list filter matches any of its values (an empty list matches
nothing). An evaluation's definition name and version come from its decision definition; its
process definition key and root instance from the instance that evaluated it (none for a direct
evaluation)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Annotated, Any, LiteralString
from uuid import UUID

from psycopg import sql

from engine.core import decision_cache
from engine.db.paging import Key
from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of, state_literal
from engine.states import DefinitionState
from engine.store.columns import select_list
from engine.store.definitions import DefinitionRow

# -- decision definitions -------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionDefinitionRow(DefinitionRow):
    """A decision definition's row, and the namespace of its DMN file's definitions (Camunda's
    category; see `categories`)."""

    category: str | None = None


DECISION_DEFINITION_SORT: dict[str, LiteralString] = {
    "id": "d.id",
    "key": "d.key",
    "name": "d.name",
    "version": "d.version",
    "deploymentId": "d.deployment_id",
    "deployTime": "d.created_at",
    "versionTag": "d.version_tag",
}


_LATEST: LiteralString = (
    "d.version = (SELECT max(l.version) FROM decision_definition l WHERE l.key = d.key "
    "AND l.tenant_id IS NOT DISTINCT FROM d.tenant_id)"
)


@dataclass(frozen=True)
class DecisionDefinitionFilter:
    """Camunda's decision definition filters (None: not filtered)."""

    definition_id: Annotated[str | None, Filter.equals("d.id")] = None
    definition_ids: Annotated[Sequence[str] | None, Filter.any_of("d.id")] = None
    key: Annotated[str | None, Filter.equals("d.key")] = None
    keys: Annotated[Sequence[str] | None, Filter.any_of("d.key")] = None
    key_like: Annotated[str | None, Filter.like("d.key")] = None
    name: Annotated[str | None, Filter.equals("d.name")] = None
    name_like: Annotated[str | None, Filter.like("d.name")] = None
    deployment_id: Annotated[UUID | None, Filter.equals("d.deployment_id")] = None
    version: Annotated[int | None, Filter.equals("d.version")] = None
    latest_version: Annotated[bool, Filter.if_true(_LATEST)] = False
    version_tag: Annotated[str | None, Filter.equals("d.version_tag")] = None
    version_tag_like: Annotated[str | None, Filter.like("d.version_tag")] = None
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("d.tenant_id")] = None
    # `tenantIdIn` with `includeDecisionDefinitionsWithoutTenantId`.
    tenant_ids_or_none: Annotated[
        Sequence[str] | None, Filter.condition("(d.tenant_id = ANY({}) OR d.tenant_id IS NULL)")
    ] = None
    without_tenant: Annotated[bool, Filter.if_true("d.tenant_id IS NULL")] = False
    resource_name: Annotated[str | None, Filter.equals("d.resource_name")] = None
    resource_name_like: Annotated[str | None, Filter.like("d.resource_name")] = None


_DEFINITIONS = CamundaList(
    DecisionDefinitionRow,
    # A decision is never suspended.
    select_list(
        DecisionDefinitionRow,
        [("d", "decision_definition")],
        {"category": "NULL", "state": state_literal(DefinitionState.ACTIVE)},
    ),
    "decision_definition d",
    DECISION_DEFINITION_SORT,
    "d.key, d.version",
    filters_of(DecisionDefinitionFilter),
    covers=covers.decision("d.key", tenant="d.tenant_id"),
)


@query
def decision_definitions(
    conn: Connection, page: CamundaPage, found: DecisionDefinitionFilter, *, count: bool = False
) -> list[DecisionDefinitionRow] | int:
    """Every deployed decision definition matching Camunda's filters, each with its category."""
    rows = _DEFINITIONS.read(conn, page, vars(found), count=count)
    if isinstance(rows, int):
        return rows
    named = categories(conn, [row.id for row in rows])
    return [replace(row, category=named.get(row.id)) for row in rows]


# The namespace of each definition's DMN file, read once per definition (they never change).
def categories(conn: Connection, definition_ids: Sequence[str]) -> dict[str, str | None]:
    """The namespace of the DMN definitions each decision definition came from."""
    found = {i: decision_cache.deployed(conn, i) for i in definition_ids}
    return {i: d.file.definitions.namespace for i, d in found.items() if d is not None}


# -- decision evaluations -------------------------------------------------------------------------


@dataclass(frozen=True)
class EvaluationSummary:
    """One decision_evaluation row with its definition's name and version, and the process
    definition key and root instance of the instance that evaluated it (if one did)."""

    id: UUID
    root_id: UUID | None
    definition_id: str
    decision_key: str
    definition_name: str | None
    definition_version: int
    evaluated_at: datetime
    instance_id: UUID | None
    process_definition_id: str | None
    process_definition_key: str | None
    root_instance_id: UUID | None
    token_id: UUID | None
    node_id: str | None
    history_id: UUID | None
    user_id: str | None


@dataclass(frozen=True)
class EvaluationRow(EvaluationSummary):
    """An evaluation, and what it read and decided (left empty where a read asks only for the
    summary)."""

    # [{"id", "label", "type", "value"}] per input clause.
    inputs: list[dict[str, Any]] = field(default_factory=list)
    # [{"id", "label", "name", "rule_id", "rule_order", "type", "value"}] per output.
    outputs: list[dict[str, Any]] = field(default_factory=list)
    result: list[dict[str, Any]] = field(default_factory=list)
    collect_value: Any = None


EVALUATION_SORT: dict[str, LiteralString] = {
    "evaluationTime": "e.evaluated_at",
    "decisionInstanceId": "e.id",
}


@dataclass(frozen=True)
class EvaluationFilter:
    """Camunda's historic decision instance filters (None: not filtered)."""

    evaluation_id: Annotated[UUID | None, Filter.equals("e.id")] = None
    evaluation_ids: Annotated[Sequence[UUID] | None, Filter.any_of("e.id")] = None
    definition_id: Annotated[str | None, Filter.equals("e.definition_id")] = None
    definition_ids: Annotated[Sequence[str] | None, Filter.any_of("e.definition_id")] = None
    key: Annotated[str | None, Filter.equals("e.decision_key")] = None
    keys: Annotated[Sequence[str] | None, Filter.any_of("e.decision_key")] = None
    name: Annotated[str | None, Filter.equals("d.name")] = None
    process_definition_id: Annotated[str | None, Filter.equals("e.process_definition_id")] = None
    process_definition_key: Annotated[str | None, Filter.equals("p.definition_key")] = None
    instance_id: Annotated[UUID | None, Filter.equals("e.instance_id")] = None
    node_ids: Annotated[Sequence[str] | None, Filter.any_of("e.node_id")] = None
    history_ids: Annotated[Sequence[UUID] | None, Filter.any_of("e.history_id")] = None
    evaluated_before: Annotated[datetime | None, Filter.at_most("e.evaluated_at")] = None
    evaluated_after: Annotated[datetime | None, Filter.at_least("e.evaluated_at")] = None
    user_id: Annotated[str | None, Filter.equals("e.user_id")] = None
    root_id: Annotated[UUID | None, Filter.condition("(e.root_id = {} OR e.id = {})")] = None
    roots_only: Annotated[bool, Filter.if_true("e.root_id IS NULL")] = False


def _evaluation_columns(row: type[EvaluationSummary]) -> str:
    return select_list(
        row,
        [("e", "decision_evaluation")],
        {
            "definition_name": "d.name",
            "definition_version": "d.version",
            "process_definition_key": "p.definition_key",
            "root_instance_id": "COALESCE(p.root_instance_id, p.id)",
        },
    )


# The evaluations, each with what it read and decided (`_SUMMARIES`: without).
_EVALUATIONS = CamundaList(
    EvaluationRow,
    _evaluation_columns(EvaluationRow),
    "decision_evaluation e JOIN decision_definition d ON d.id = e.definition_id "
    "LEFT JOIN process_instance p ON p.id = e.instance_id",
    EVALUATION_SORT,
    "e.evaluated_at, e.id",
    filters_of(EvaluationFilter),
    covers=covers.decision_history("d.key", tenant="d.tenant_id"),
)
_SUMMARIES = replace(_EVALUATIONS, columns=_evaluation_columns(EvaluationSummary))


@query
def evaluations(
    conn: Connection,
    page: CamundaPage,
    found: EvaluationFilter,
    *,
    details: bool = False,
    count: bool = False,
) -> list[EvaluationRow] | int:
    """The decision evaluations matching Camunda's filters, oldest first unless sorted; with
    `details`, each with its inputs, outputs and result."""
    return (_EVALUATIONS if details else _SUMMARIES).read(conn, page, vars(found), count=count)


@query
def evaluation(conn: Connection, evaluation_id: UUID) -> EvaluationRow | None:
    """One decision evaluation, with its inputs, outputs and result."""
    rows = evaluations(
        conn, CamundaPage(), EvaluationFilter(evaluation_id=evaluation_id), details=True
    )
    assert isinstance(rows, list)
    return rows[0] if rows else None


@query
def evaluated(conn: Connection, evaluation_id: UUID) -> EvaluationRow | None:
    """The evaluation a command has just made, by its id, for answering the one who asked:
    not narrowed to their reads (EvaluateDecision checked CREATE_INSTANCE, all Camunda's
    evaluate asks; the history's READ_HISTORY is for reading evaluations back later)."""
    where = Where()
    where.equals("e.id", evaluation_id)
    statement = sql.SQL(f"SELECT {_EVALUATIONS.columns} FROM {_EVALUATIONS.source}") + where.sql()
    rows = fetch_all(conn, EvaluationRow, statement, where.params())
    return rows[0] if rows else None


@query
def evaluations_after(
    conn: Connection, found: EvaluationFilter, limit: int, after: Key | None
) -> list[EvaluationRow]:
    """At most `limit` evaluations matching `found`, newest first, strictly after the key
    `after` (evaluated_at, id): a keyset page, with inputs, outputs and result."""
    where = Where()
    where.apply(_EVALUATIONS.filters, vars(found))
    where.keyset("(e.evaluated_at, e.id)", after, descending=True)
    where.authorized(_EVALUATIONS.covers)
    statement = (
        sql.SQL(f"SELECT {_EVALUATIONS.columns} FROM {_EVALUATIONS.source}")
        + where.sql()
        + sql.SQL(" ORDER BY e.evaluated_at DESC, e.id DESC")
        + where.limit(limit)
    )
    return fetch_all(conn, EvaluationRow, statement, where.params())
