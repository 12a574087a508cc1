"""What the console's decision pages read: every decision key with its latest version, its
number of versions and of evaluations; one definition's evaluations, newest first, a keyset page
at a time; an instance's evaluations in the order they ran; and how often each rule of a
decision table matched, over all time or a period."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg import sql

from engine.db.paging import Key, Page, keyset
from engine.queries import Connection, fetch_all, query
from engine.sql import covers
from engine.sql.filters import Where

__all__ = [
    "PAGE_SIZE",
    "DecisionSummary",
    "Evaluation",
    "RuleCounts",
    "definition_evaluations",
    "instance_evaluations",
    "rule_counts",
    "summaries",
    "version_evaluations",
]

# How many evaluations a page of a decision's evaluations shows.
PAGE_SIZE = 50


@dataclass(frozen=True)
class DecisionSummary:
    """One decision key: its latest version (and that version's name), how many versions are
    deployed and how many evaluations of any version are recorded."""

    key: str
    name: str | None
    latest_version: int
    versions: int
    evaluations: int


@query
def summaries(conn: Connection) -> list[DecisionSummary]:
    """Every deployed decision key the request's principal may read, in key order: over the
    definitions they see (of their tenants and of none), the evaluations of those."""
    where = Where()
    where.authorized(covers.decision("key", tenant="tenant_id"))
    statement = (
        sql.SQL(
            "SELECT k.key, d.name, k.latest_version, k.versions, "
            "(SELECT count(*) FROM decision_evaluation e WHERE e.definition_id = ANY(k.ids))"
            " AS evaluations FROM (SELECT key, max(version) AS latest_version,"
            " count(*) AS versions, array_agg(id) AS ids,"
            " (array_agg(id ORDER BY version DESC, created_at DESC))[1] AS latest_id"
            " FROM decision_definition"
        )
        + where.sql()
        + sql.SQL(
            " GROUP BY key) k JOIN decision_definition d ON d.id = k.latest_id ORDER BY k.key"
        )
    )
    return fetch_all(conn, DecisionSummary, statement, where.params())


@query
def version_evaluations(conn: Connection, key: str) -> dict[int, int]:
    """How many evaluations each version of the decision `key` has (versions with none: 0), of
    the definitions the principal may read."""
    where = Where()
    where.equals("d.key", key)
    where.authorized(covers.decision("d.key", tenant="d.tenant_id"))
    rows = conn.execute(
        sql.SQL(
            "SELECT d.version, sum((SELECT count(*) FROM decision_evaluation e "
            "WHERE e.definition_id = d.id))::int FROM decision_definition d"
        )
        + where.sql()
        + sql.SQL(" GROUP BY d.version ORDER BY d.version"),
        where.params(),
    ).fetchall()
    return {version: count for version, count in rows}


@dataclass(frozen=True)
class Evaluation:
    """One decision evaluated (a decision_evaluation row, see engine/schema.py) with the version
    of its definition. `root_id` names the evaluation that required this one."""

    id: UUID
    root_id: UUID | None
    definition_id: str
    decision_key: str
    version: int
    evaluated_at: datetime
    instance_id: UUID | None
    process_definition_id: str | None
    node_id: str | None
    history_id: UUID | None
    user_id: str | None
    inputs: list[dict[str, Any]]
    matched_rules: list[str]
    outputs: list[dict[str, Any]]
    result: list[dict[str, Any]]
    collect_value: Any


_EVALUATION = (
    "SELECT e.id, e.root_id, e.definition_id, e.decision_key, d.version, e.evaluated_at, "
    "e.instance_id, e.process_definition_id, e.node_id, e.history_id, e.user_id, e.inputs, "
    "e.matched_rules, e.outputs, e.result, e.collect_value "
    "FROM decision_evaluation e JOIN decision_definition d ON d.id = e.definition_id "
)


def _newest(
    conn: Connection, definition_id: str, limit: int, after: Key | None
) -> list[Evaluation]:
    if after is None:
        return fetch_all(
            conn,
            Evaluation,
            _EVALUATION + "WHERE e.definition_id = %s "
            "ORDER BY e.evaluated_at DESC, e.id DESC LIMIT %s",
            (definition_id, limit),
        )
    at, row_id = after
    return fetch_all(
        conn,
        Evaluation,
        _EVALUATION + "WHERE e.definition_id = %s AND e.evaluated_at <= %s "
        "AND (e.evaluated_at, e.id) < (%s, %s) "
        "ORDER BY e.evaluated_at DESC, e.id DESC LIMIT %s",
        (definition_id, at, at, row_id, limit),
    )


@query
def definition_evaluations(
    conn: Connection, definition_id: str, after: str | None = None, limit: int = PAGE_SIZE
) -> Page[Evaluation]:
    """The evaluations of one decision definition, newest first, after the cursor `after` (a
    cursor that is not one is a BadRequest naming `after`)."""
    return keyset(
        lambda n, key: _newest(conn, definition_id, n, key),
        lambda e: (e.evaluated_at, e.id),
        limit=limit,
        after=after,
    )


@query
def instance_evaluations(conn: Connection, instance_id: UUID) -> list[Evaluation]:
    """The decisions evaluated in one process instance, in the order they were evaluated: a
    required decision before the one that required it."""
    return fetch_all(
        conn,
        Evaluation,
        _EVALUATION + "WHERE e.instance_id = %s ORDER BY e.evaluated_at, e.root_id IS NULL, e.id",
        (instance_id,),
    )


@dataclass(frozen=True)
class RuleCounts:
    """How many evaluations a period holds and, per rule id, how many of them it matched."""

    evaluations: int
    rules: dict[str, int]

    def share(self, rule_id: str) -> float:
        """The part of the evaluations that matched the rule, 0 to 1."""
        return self.rules.get(rule_id, 0) / self.evaluations if self.evaluations else 0.0


@query
def rule_counts(
    conn: Connection,
    *,
    definition_id: str | None = None,
    key: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
) -> RuleCounts:
    """Per rule, how often it matched in the evaluations of one decision definition (or of
    every version of the decision `key`) evaluated in [start, end) (None: unbounded). Each
    version's rows are one range of ix_decision_evaluation_definition."""
    if (definition_id is None) == (key is None):
        raise ValueError("give one of definition_id and key")
    where = Where()
    where.equals("e.definition_id", definition_id)
    where.when(key, "e.definition_id IN (SELECT id FROM decision_definition WHERE key = {})")
    where.at_least("e.evaluated_at", start)
    where.below("e.evaluated_at", end)
    statement = (
        sql.SQL("WITH picked AS MATERIALIZED (SELECT e.matched_rules FROM decision_evaluation e")
        + where.sql()
        + sql.SQL(
            ") SELECT NULL::text, count(*) FROM picked UNION ALL "
            "SELECT rule.id, count(*) FROM picked, "
            "jsonb_array_elements_text(picked.matched_rules) AS rule(id) GROUP BY rule.id"
        )
    )
    rows = conn.execute(statement, where.params()).fetchall()
    total = next(count for rule_id, count in rows if rule_id is None)
    return RuleCounts(total, {rule_id: count for rule_id, count in rows if rule_id is not None})
