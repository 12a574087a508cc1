"""Camunda's statistics: per definition (running instances, failed jobs, open incidents by
type), per activity of one definition (live tokens, failed jobs, open incidents by type) and the
history per activity (running and ended visits, scope completions, canceled visits, incidents).

Instances, tokens, visits (running, ended and ended canceled) and open incidents per node come
from the summary rows (engine/queries/summaries.py): exact, and never a scan of the big tables.
Failed jobs (retries run out), open incidents by type and resolved incidents are counted from
partial indexes that hold only those rows (ix_job_failed, ix_incident_open_definition,
ix_incident_resolved_definition), read alone. Every read is narrowed to what the request's
principal may read, by grant and by tenant."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import LiteralString

from psycopg import sql

from engine.model import CallActivity
from engine.queries import Connection, query
from engine.queries import summaries as summary_reads
from engine.sql import covers
from engine.sql.filters import Where, state_literal
from engine.states import IncidentState
from engine.store import definitions as definitions_store
from engine.store.definitions import DefinitionRow

# Open incidents as their partial index names them (engine/schema.py).
_OPEN_INCIDENT = state_literal(IncidentState.OPEN)
_RESOLVED_INCIDENT = state_literal(IncidentState.RESOLVED)
# Rows of an instance (alias r) that carry its definition id: readable with that definition
# (alias d, left-joined; a principal whose reads are not narrowed references no column of it,
# and PostgreSQL leaves the join out).
_DEFINED = " LEFT JOIN process_definition d ON d.id = r.definition_id"


@dataclass(frozen=True)
class Counts:
    """What Camunda counts for a definition or an activity: running instances (per activity:
    its live tokens), failed jobs, and open incidents by type."""

    instances: int = 0
    failed_jobs: int = 0
    incidents: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Incidents:
    """Which incidents a statistics read counts: none, every type, or one type."""

    included: bool = False
    type: str | None = None


def _readable(where: Where) -> None:
    where.authorized(covers.instance("d.key", "r.instance_id", tenant="r.tenant_id"))


def _node(definition_id: str | None) -> LiteralString:
    """The node column of a count: of one definition per node, of every definition none ('')."""
    return "r.node_id" if definition_id is not None else "''::text"


def _failed_jobs(conn: Connection, definition_id: str | None) -> dict[tuple[str, str], int]:
    """Jobs whose retries ran out, per (definition id, node id); of every definition (no
    `definition_id`) per (definition id, '')."""
    where = Where()
    where.fixed("r.retries = 0 AND r.definition_id IS NOT NULL")
    where.equals("r.definition_id", definition_id)
    _readable(where)
    statement = (
        sql.SQL(f"SELECT r.definition_id, {_node(definition_id)}, count(*) FROM job r{_DEFINED}")
        + where.sql()
        + sql.SQL(" GROUP BY 1, 2")
    )
    return {(d, n): int(c) for d, n, c in conn.execute(statement, where.params())}


def _incidents(
    conn: Connection, definition_id: str | None, which: Incidents
) -> dict[tuple[str, str, str], int]:
    """Open incidents (of `which.type` when given) per (definition id, node id, type); of every
    definition (no `definition_id`) per (definition id, '', type)."""
    where = Where()
    where.fixed("r.state = " + _OPEN_INCIDENT)
    where.equals("r.definition_id", definition_id)
    where.equals("r.type", which.type)
    _readable(where)
    statement = (
        sql.SQL(
            f"SELECT r.definition_id, {_node(definition_id)}, r.type, count(*) "
            f"FROM incident r{_DEFINED}"
        )
        + where.sql()
        + sql.SQL(" GROUP BY 1, 2, 3")
    )
    return {(d, n, t): int(c) for d, n, t, c in conn.execute(statement, where.params())}


@query
def definitions(conn: Connection, failed_jobs: bool, incidents: Incidents) -> dict[str, Counts]:
    """Per definition id: its running instances, with `failed_jobs` its jobs out of retries,
    with `incidents` its open incidents by type (of every type or of `incidents.type`).
    Definitions with nothing to count are left out."""
    running = summary_reads.running_counts(conn)
    jobs: dict[str, int] = {}
    if failed_jobs:
        for (definition_id, _), count in _failed_jobs(conn, None).items():
            jobs[definition_id] = jobs.get(definition_id, 0) + count
    by_type: dict[str, dict[str, int]] = {}
    if incidents.included:
        for (definition_id, _, kind), count in _incidents(conn, None, incidents).items():
            types = by_type.setdefault(definition_id, {})
            types[kind] = types.get(kind, 0) + count
    return {
        definition_id: Counts(
            running.get(definition_id, 0),
            jobs.get(definition_id, 0),
            by_type.get(definition_id, {}),
        )
        for definition_id in sorted({*running, *jobs, *by_type})
    }


@query
def activities(
    conn: Connection, definition_id: str, failed_jobs: bool, incidents: Incidents
) -> dict[str, Counts]:
    """Per node of `definition_id` that has any: its live tokens, with `failed_jobs` its jobs
    out of retries, with `incidents` its open incidents by type."""
    tokens = {
        node: counts.active_tokens
        for node, counts in summary_reads.node_counts(conn, definition_id).items()
        if counts.active_tokens
    }
    jobs: dict[str, int] = {}
    if failed_jobs:
        jobs = {node: n for (_, node), n in _failed_jobs(conn, definition_id).items()}
    by_type: dict[str, dict[str, int]] = {}
    if incidents.included:
        for (_, node, kind), count in _incidents(conn, definition_id, incidents).items():
            by_type.setdefault(node, {})[kind] = count
    return {
        node: Counts(tokens.get(node, 0), jobs.get(node, 0), by_type.get(node, {}))
        for node in sorted({*tokens, *jobs, *by_type})
    }


@dataclass(frozen=True)
class HistoryCounts:
    """Camunda's historic activity statistics of one node: running visits, ended visits,
    visits ended by cancellation, scope completions, and incidents open and resolved."""

    instances: int = 0
    finished: int = 0
    canceled: int = 0
    complete_scope: int = 0
    open_incidents: int = 0
    resolved_incidents: int = 0


@query
def history(
    conn: Connection,
    definition_id: str,
    *,
    end_events: frozenset[str],
    canceled: bool,
    incidents: bool,
) -> dict[str, HistoryCounts]:
    """Per node of `definition_id`: visits running and ended (the summary rows), the ended
    visits of `end_events` as scope completions, with `canceled` the visits ended canceled (the
    summary rows), with `incidents` the incidents open (the summary rows) and resolved."""
    nodes = summary_reads.node_counts(conn, definition_id, history=True)
    ended_canceled: dict[str, int] = {}
    if canceled:
        ended_canceled = {n: c.canceled_visits for n, c in nodes.items() if c.canceled_visits}
    resolved: dict[str, int] = {}
    if incidents:
        where = Where()
        where.equals("r.definition_id", definition_id)
        where.fixed("r.state = " + _RESOLVED_INCIDENT)
        where.authorized(covers.history("d.key", "r.instance_id", tenant="r.tenant_id"))
        statement = (
            sql.SQL(f"SELECT r.node_id, count(*) FROM incident r{_DEFINED}")
            + where.sql()
            + sql.SQL(" GROUP BY 1")
        )
        resolved = {n: int(c) for n, c in conn.execute(statement, where.params())}
    found: dict[str, HistoryCounts] = {}
    for node in sorted({*nodes, *ended_canceled, *resolved}):
        counts = nodes.get(node)
        visits = counts.visits if counts else 0
        ended = counts.completed_visits if counts else 0
        found[node] = HistoryCounts(
            instances=visits - ended,
            finished=ended,
            canceled=ended_canceled.get(node, 0),
            complete_scope=ended if node in end_events else 0,
            open_incidents=counts.open_incidents if counts else 0,
            resolved_incidents=resolved.get(node, 0),
        )
    return found


def _written(text: str | None) -> bool:
    """Whether a call activity's attribute is written as a value (not an expression)."""
    return text is not None and "${" not in text and "#{" not in text


def _statically_called(
    conn: Connection, caller: DefinitionRow, node: CallActivity
) -> DefinitionRow | None:
    """The definition `node` calls whatever the variables: its key (and version) written, not
    expressions, picked by its binding as a call picks it (engine/commands/family.py)."""
    key = node.called_element
    if not _written(key):
        return None
    if node.binding == "deployment":
        return definitions_store.latest_in_deployment(conn, key, caller.deployment_id)
    if node.binding == "version":
        version = (node.version or "").strip()
        if not _written(node.version) or not version.isdigit():
            return None
        return definitions_store.by_version(conn, key, int(version), caller.tenant_id)
    if node.binding == "versionTag":
        if node.version_tag is None:
            return None
        return definitions_store.latest_with_tag(conn, key, node.version_tag, caller.tenant_id)
    return definitions_store.latest_for_tenant(conn, key, caller.tenant_id)


@query
def called_definitions(
    conn: Connection, caller: DefinitionRow, calls: Sequence[CallActivity]
) -> list[tuple[DefinitionRow, list[str]]]:
    """The definitions `caller`'s call activities `calls` name statically (Camunda's static
    called process definitions), each once with the ids of the activities that call it, in
    the order they are first called; definitions the principal may not read are left out."""
    found: dict[str, tuple[DefinitionRow, list[str]]] = {}
    for node in sorted(calls, key=lambda n: n.id):
        called = _statically_called(conn, caller, node)
        if called is None:
            continue
        if called.id not in found:
            readable = definitions_store.readable(conn, definition_id=called.id)
            if readable is None:
                continue
            found[called.id] = (readable, [])
        found[called.id][1].append(node.id)
    return list(found.values())
