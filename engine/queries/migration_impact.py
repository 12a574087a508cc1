"""What a migration would touch, read before it runs, nothing written: how many instances a
selection matches now, a sample of them, the running tokens per node among them, and the
validation of all of them against the plan.

The validation is bounded by the models, not by the number of instances: what
`instance_failures` finds depends only on an instance's live tokens' nodes, the joins it waits
at (gateway and the flows the branches arrived by), and its jobs' and subscriptions' nodes and
kinds. Instances with the same such signature validate the same, so one statement groups the
selection by it and one instance of each group is loaded and validated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from psycopg import sql

from engine.errors import NotFound
from engine.queries import Connection, query
from engine.queries import definitions as definition_store
from engine.queries import summaries as summary_reads
from engine.semantics.migration import (
    InstructionReport,
    MigrationPlan,
    instance_failures,
    validate_plan,
)
from engine.sql.filters import Where
from engine.states import FINAL_TOKEN_STATES, InstanceState
from engine.store import runs
from engine.store.instances import InstanceFilter, matching
from engine.store.migration import models_of

if TYPE_CHECKING:
    from engine.core.definitions import DefinitionCache
    from engine.queries.definitions import DefinitionRow

__all__ = [
    "SAMPLE",
    "Impact",
    "Refusal",
    "Sample",
    "Selection",
    "count",
    "default_source",
    "impact",
    "token_counts",
]

# How many of the matching instances the impact lists.
SAMPLE = 20
# How many groups of instances (by what they wait at) are validated; the instances of further
# groups are counted as not validated.
MAX_GROUPS = 100
# The states a version's instances are counted running in, for the choice of a default source.
RUNNING = (InstanceState.ACTIVE.value, InstanceState.SUSPENDED.value)
_FINAL = sorted(s.value for s in FINAL_TOKEN_STATES)


@query
def default_source(conn: Connection, key: str, target_id: str) -> DefinitionRow | None:
    """The version of `key` a migration to `target_id` is offered from: the newest other version
    with running instances (summary rows: no instance is read); None when there is none."""
    counts: dict[str, int] = {}
    for (definition_id, state), n in summary_reads.key_instance_counts(conn, key).items():
        if state in RUNNING:
            counts[definition_id] = counts.get(definition_id, 0) + n
    versions = sorted(definition_store.list_all(conn, key), key=lambda v: -v.version)
    for version in versions:
        if version.id != target_id and counts.get(version.id, 0) > 0:
            return version
    return None


@dataclass(frozen=True)
class Selection:
    """The instances a migration selects: the running instances of the source definition that
    the filters keep, and of those only `instance_ids` when any are given."""

    source_definition_id: str
    state: str | None = None
    business_key: str | None = None
    has_incident: bool | None = None
    instance_ids: tuple[UUID, ...] = ()

    def where(self) -> Where:
        found = matching(
            InstanceFilter(
                definition_id=self.source_definition_id,
                state=self.state,
                business_key=self.business_key,
                has_incident=self.has_incident,
            )
        )
        found.fixed("p.ended_at IS NULL")
        if self.instance_ids:
            found.add("p.id = ANY({})", list(self.instance_ids))
        return found


@dataclass(frozen=True)
class Sample:
    id: UUID
    business_key: str | None
    state: str
    started_at: datetime


@dataclass(frozen=True)
class Refusal:
    """One reason instances would be refused: how many have it, and one of them."""

    reason: str
    count: int
    example: str


@dataclass(frozen=True)
class Impact:
    """What a migration of a selection would touch now. `refused`: how many instances would be
    refused (by validation of their group); `unvalidated`: how many fell in groups past
    MAX_GROUPS; `missing`: ids asked for that are no running instance of the source."""

    count: int
    sample: list[Sample]
    plan_failures: list[InstructionReport]
    refusals: list[Refusal]
    refused: int
    unvalidated: int
    groups: int
    tokens: dict[str, int]
    missing: list[str] = field(default_factory=list)

    @property
    def migratable(self) -> int:
        if self.plan_failures:
            return 0
        return self.count - self.refused - self.unvalidated


def _selected(selection: Selection) -> tuple[sql.Composed, dict[str, Any]]:
    where = selection.where()
    return sql.SQL("SELECT p.id FROM process_instance p") + where.sql(), where.params()


@query
def token_counts(conn: Connection, selection: Selection) -> dict[str, int]:
    """The live tokens per node of the selected instances."""
    selected, params = _selected(selection)
    statement = (
        sql.SQL("SELECT t.node_id, count(*) FROM token t WHERE t.instance_id IN (")
        + selected
        + sql.SQL(") AND NOT (t.state = ANY(%(final_token_states)s)) GROUP BY t.node_id")
    )
    params = {**params, "final_token_states": _FINAL}
    return {node: int(n) for node, n in conn.execute(statement, params).fetchall()}


# An instance's signature: what its validation depends on (see the module docstring).
_SIGNATURE = """
SELECT s.id,
  coalesce((SELECT string_agg(DISTINCT t.node_id, ',' ORDER BY t.node_id) FROM token t
            WHERE t.instance_id = s.id AND NOT (t.state = ANY(%(final_token_states)s))), '')
    AS tokens,
  coalesce((SELECT string_agg(j.gateway_id || '<' || coalesce(
                     (SELECT string_agg(DISTINCT a->>'flow', '+' ORDER BY a->>'flow')
                      FROM jsonb_array_elements(j.arrivals) a), ''),
                   ',' ORDER BY j.gateway_id, j.scope_key) FROM join_state j
            WHERE j.instance_id = s.id), '') AS joins,
  coalesce((SELECT string_agg(DISTINCT b.node_id || ':' || b.kind, ','
                              ORDER BY b.node_id || ':' || b.kind) FROM job b
            WHERE b.instance_id = s.id), '') AS jobs,
  coalesce((SELECT string_agg(DISTINCT e.node_id || ':' || e.kind, ','
                              ORDER BY e.node_id || ':' || e.kind) FROM event_subscription e
            WHERE e.instance_id = s.id), '') AS subscriptions
FROM selected s
"""


def _groups(conn: Connection, selection: Selection) -> list[tuple[int, UUID]]:
    """(how many, one of them) per signature of the selected instances, the largest first."""
    selected, params = _selected(selection)
    statement = (
        sql.SQL("WITH selected AS (")
        + selected
        + sql.SQL("), signed AS (" + _SIGNATURE + ") ")
        + sql.SQL(
            "SELECT count(*), min(id::text) FROM signed "
            "GROUP BY tokens, joins, jobs, subscriptions ORDER BY count(*) DESC, 2"
        )
    )
    params = {**params, "final_token_states": _FINAL}
    return [(int(n), UUID(example)) for n, example in conn.execute(statement, params).fetchall()]


@query
def count(conn: Connection, selection: Selection) -> int:
    """How many instances `selection` matches now."""
    selected, params = _selected(selection)
    statement = sql.SQL("SELECT count(*) FROM (") + selected + sql.SQL(") s")
    row = conn.execute(statement, params).fetchone()
    return int(row[0]) if row else 0


def _sample(conn: Connection, selection: Selection, limit: int) -> list[Sample]:
    where = selection.where()
    statement = (
        sql.SQL("SELECT p.id, p.business_key, p.state, p.started_at FROM process_instance p")
        + where.sql()
        + sql.SQL(" ORDER BY p.started_at DESC, p.id DESC")
        + where.limit(limit)
    )
    return [Sample(*row) for row in conn.execute(statement, where.params()).fetchall()]


@query
def impact(
    conn: Connection,
    cache: DefinitionCache,
    plan: MigrationPlan,
    selection: Selection,
    now: datetime,
    sample: int = SAMPLE,
) -> Impact:
    """What migrating `selection` along `plan` would touch now (see the module docstring)."""
    models = models_of(conn, cache, plan)
    matched = count(conn, selection)
    rows = _sample(conn, selection, sample)
    missing: list[str] = []
    if selection.instance_ids:
        selected, params = _selected(selection)
        found = {row[0] for row in conn.execute(selected, params).fetchall()}
        missing = [str(i) for i in selection.instance_ids if i not in found]
    plan_failures = validate_plan(plan, models.source, models.target)
    tokens = token_counts(conn, selection)
    if plan_failures:
        return Impact(matched, rows, plan_failures, [], 0, 0, 0, tokens, missing)
    groups = _groups(conn, selection)
    reasons: dict[str, Refusal] = {}
    refused = unvalidated = 0
    for index, (n, example) in enumerate(groups):
        if index >= MAX_GROUPS:
            unvalidated += n
            continue
        try:
            run = runs.load_run(conn, example, now, lock=False)
        except NotFound:  # gone since it was grouped
            unvalidated += n
            continue
        failures = instance_failures(run, plan, models)
        if failures:
            refused += n
        for reason in dict.fromkeys(str(f) for f in failures):
            seen = reasons.get(reason)
            total = n + (seen.count if seen else 0)
            reasons[reason] = Refusal(reason, total, seen.example if seen else str(example))
    ordered = sorted(reasons.values(), key=lambda r: (-r.count, r.reason))
    return Impact(matched, rows, [], ordered, refused, unvalidated, len(groups), tokens, missing)
