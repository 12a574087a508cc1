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
from typing import Any, LiteralString
from uuid import UUID

from psycopg import sql

from engine.core import decision_cache
from engine.db.paging import Key
from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaPage
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows

# -- decision definitions -------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionDefinitionRow:
    id: str
    key: str
    version: int
    name: str | None
    version_tag: str | None
    deployment_id: UUID
    resource_name: str
    created_at: datetime
    history_ttl_days: int | None
    # The namespace of the DMN file's definitions (Camunda's category); see `categories`.
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


@dataclass(frozen=True)
class DecisionDefinitionFilter:
    """Camunda's decision definition filters (None: not filtered)."""

    definition_id: str | None = None
    definition_ids: Sequence[str] | None = None
    key: str | None = None
    keys: Sequence[str] | None = None
    key_like: str | None = None
    name: str | None = None
    name_like: str | None = None
    deployment_id: UUID | None = None
    version: int | None = None
    latest_version: bool = False
    version_tag: str | None = None
    version_tag_like: str | None = None
    resource_name: str | None = None
    resource_name_like: str | None = None


_LATEST: LiteralString = (
    "d.version = (SELECT max(l.version) FROM decision_definition l WHERE l.key = d.key)"
)


@query
def decision_definitions(
    conn: Connection, page: CamundaPage, found: DecisionDefinitionFilter, *, count: bool = False
) -> list[DecisionDefinitionRow] | int:
    """Every deployed decision definition matching Camunda's filters, each with its category."""
    where = Where()
    where.equals("d.id", found.definition_id)
    where.any_of("d.id", found.definition_ids)
    where.equals("d.key", found.key)
    where.any_of("d.key", found.keys)
    where.equals("d.name", found.name)
    where.equals("d.deployment_id", found.deployment_id)
    where.equals("d.version", found.version)
    where.equals("d.version_tag", found.version_tag)
    where.equals("d.resource_name", found.resource_name)
    for column, pattern in (
        ("d.key", found.key_like),
        ("d.name", found.name_like),
        ("d.version_tag", found.version_tag_like),
        ("d.resource_name", found.resource_name_like),
    ):
        where.like(column, pattern)
    if found.latest_version:
        where.fixed(_LATEST)
    source = sql.SQL("FROM decision_definition d")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT d.id, d.key, d.version, d.name, d.version_tag, d.deployment_id, "
            "d.resource_name, d.created_at, d.history_ttl_days "
        )
        + source
        + where.sql()
        + order_by(page.sort, DECISION_DEFINITION_SORT, "d.key, d.version")
        + where.offset_limit(page.first, page.max)
    )
    rows = fetch_all(conn, DecisionDefinitionRow, statement, where.params())
    named = categories(conn, [row.id for row in rows])
    return [replace(row, category=named.get(row.id)) for row in rows]


# The namespace of each definition's DMN file, read once per definition (they never change).
def categories(conn: Connection, definition_ids: Sequence[str]) -> dict[str, str | None]:
    """The namespace of the DMN definitions each decision definition came from."""
    found = {i: decision_cache.deployed(conn, i) for i in definition_ids}
    return {i: d.file.definitions.namespace for i, d in found.items() if d is not None}


# -- decision evaluations -------------------------------------------------------------------------


@dataclass(frozen=True)
class EvaluationRow:
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

    evaluation_id: UUID | None = None
    evaluation_ids: Sequence[UUID] | None = None
    definition_id: str | None = None
    definition_ids: Sequence[str] | None = None
    key: str | None = None
    keys: Sequence[str] | None = None
    name: str | None = None
    process_definition_id: str | None = None
    process_definition_key: str | None = None
    instance_id: UUID | None = None
    node_ids: Sequence[str] | None = None
    history_ids: Sequence[UUID] | None = None
    evaluated_before: datetime | None = None
    evaluated_after: datetime | None = None
    user_id: str | None = None
    root_id: UUID | None = None
    roots_only: bool = False


_EVALUATION_SOURCE: LiteralString = (
    "FROM decision_evaluation e JOIN decision_definition d ON d.id = e.definition_id "
    "LEFT JOIN process_instance p ON p.id = e.instance_id"
)


def _evaluation_where(found: EvaluationFilter) -> Where:
    where = Where()
    where.equals("e.id", found.evaluation_id)
    where.any_of("e.id", found.evaluation_ids)
    where.equals("e.definition_id", found.definition_id)
    where.any_of("e.definition_id", found.definition_ids)
    where.equals("e.decision_key", found.key)
    where.any_of("e.decision_key", found.keys)
    where.equals("d.name", found.name)
    where.equals("e.process_definition_id", found.process_definition_id)
    where.equals("p.definition_key", found.process_definition_key)
    where.equals("e.instance_id", found.instance_id)
    where.any_of("e.node_id", found.node_ids)
    where.any_of("e.history_id", found.history_ids)
    where.at_most("e.evaluated_at", found.evaluated_before)
    where.at_least("e.evaluated_at", found.evaluated_after)
    where.equals("e.user_id", found.user_id)
    where.when(found.root_id, "(e.root_id = {} OR e.id = {})")
    if found.roots_only:
        where.fixed("e.root_id IS NULL")
    return where


def _evaluation_select(details: bool) -> sql.Composable:
    return sql.SQL(
        "SELECT e.id, e.root_id, e.definition_id, e.decision_key, d.name AS definition_name, "
        "d.version AS definition_version, e.evaluated_at, e.instance_id, "
        "e.process_definition_id, p.definition_key AS process_definition_key, "
        "COALESCE(p.root_instance_id, p.id) AS root_instance_id, e.token_id, e.node_id, "
        "e.history_id, e.user_id"
        + (", e.inputs, e.outputs, e.result, e.collect_value " if details else " ")
    ) + sql.SQL(_EVALUATION_SOURCE)


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
    where = _evaluation_where(found)
    if count:
        return count_rows(conn, sql.SQL(_EVALUATION_SOURCE), where)
    statement = (
        _evaluation_select(details)
        + where.sql()
        + order_by(page.sort, EVALUATION_SORT, "e.evaluated_at, e.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, EvaluationRow, statement, where.params())


@query
def evaluation(conn: Connection, evaluation_id: UUID) -> EvaluationRow | None:
    """One decision evaluation, with its inputs, outputs and result."""
    rows = evaluations(
        conn, CamundaPage(), EvaluationFilter(evaluation_id=evaluation_id), details=True
    )
    assert isinstance(rows, list)
    return rows[0] if rows else None


@query
def evaluations_after(
    conn: Connection, found: EvaluationFilter, limit: int, after: Key | None
) -> list[EvaluationRow]:
    """At most `limit` evaluations matching `found`, newest first, strictly after the key
    `after` (evaluated_at, id): a keyset page, with inputs, outputs and result."""
    where = _evaluation_where(found)
    where.keyset("(e.evaluated_at, e.id)", after, descending=True)
    statement = (
        _evaluation_select(True)
        + where.sql()
        + sql.SQL(" ORDER BY e.evaluated_at DESC, e.id DESC")
        + where.limit(limit)
    )
    return fetch_all(conn, EvaluationRow, statement, where.params())
