"""The migration page of a definition: both versions' diagrams side by side, the plan as an
editable table, the instances chosen by filter, a validation report per instance, and the
migration itself (admins only): at once, at most MAX_INSTANCES while the request waits, or as a
`migrate` batch of every selected instance, worked through by the job executors.

What the page submits is a plan and a selection; `MigrationRequest` is the two resolved into
the plan and the list of instance ids, which `run_migration` migrates one transaction each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app import reads
from app.auth import require
from app.console.common import engine_of, flash, read, render
from app.params import Query
from engine.api import Engine
from engine.commands.batches import MAX_ITEMS, CreateBatch
from engine.commands.migration import MigrateInstance
from engine.core import actors, permits
from engine.core.permits import MIGRATE_INSTANCE
from engine.errors import BadRequest, InterlockError, NotFound
from engine.queries import console, migration_impact
from engine.queries import definitions as definition_store
from engine.queries import instances as instance_reads
from engine.queries import migration as migration_reads
from engine.queries.definitions import DefinitionRow
from engine.queries.instances import InstanceFilter, InstanceInfo
from engine.queries.migration_impact import Impact, Selection
from engine.semantics.migration import (
    Instruction,
    MigrationPlan,
    has_event_trigger,
    holds_instances,
    wait_kind,
)
from engine.states import BatchType, InstanceState

# The most instances one submission migrates: the page runs them while the request waits.
MAX_INSTANCES = 200
# The states an instance may be selected in (a migration moves running instances).
SELECTABLE_STATES = (InstanceState.ACTIVE.value, InstanceState.SUSPENDED.value)
NO_MAPPING = ""
# Instances read per query while a selection is gathered.
PAGE = 500


def _version_of(engine: Engine, key: str, definition_id: str | None, default: int) -> DefinitionRow:
    """The version `definition_id` names (of `key`), else the `default`-th from the latest."""
    versions = definition_store.list_all(engine, key)
    if not versions:
        raise NotFound(f"'{key}' is not deployed")
    if definition_id:
        for row in versions:
            if row.id == definition_id:
                return row
        raise NotFound(f"'{definition_id}' is not a version of '{key}'")
    ordered = sorted(versions, key=lambda v: v.version)
    return ordered[max(0, len(ordered) - 1 - default)]


@dataclass(frozen=True)
class Row:
    """One row of the plan table: a source node and the target it maps to (NO_MAPPING: none)."""

    node_id: str
    label: str
    kind: str
    target: str
    update: bool
    has_trigger: bool


def _instance_of(engine: Engine, key: str, text: str | None) -> InstanceInfo | None:
    """The instance the page migrates alone (`instance=<id>`), of `key`."""
    if not text:
        return None
    try:
        instance_id = UUID(text)
    except ValueError as exc:
        raise BadRequest(f"'{text}' is not an instance id", field="instance") from exc
    info = instance_reads.instance(engine, instance_id)
    if info is None or info.definition_key != key:
        raise NotFound(f"instance {instance_id} is not an instance of '{key}'")
    return info


def _versions(
    engine: Engine, key: str, source_id: str | None, target_id: str | None, instance: str | None
) -> tuple[DefinitionRow, DefinitionRow, InstanceInfo | None, bool]:
    """The source and target versions the page shows, the one instance it migrates (if any),
    and whether the source was asked for but is the target (the latest) while another version
    has running instances: then that version is the source instead. Without a source: the
    instance's version, else the newest version other than the target with running instances,
    else the one before the target."""
    alone = _instance_of(engine, key, instance)
    target = _version_of(engine, key, target_id, 0)
    if alone is not None and not source_id:
        source_id = alone.definition_id
    if source_id and (source_id != target.id or target_id):
        return _version_of(engine, key, source_id, 1), target, alone, False
    offered = migration_impact.default_source(engine, key, target.id)
    if offered is not None:
        return offered, target, alone, False
    return _version_of(engine, key, None, 1), target, alone, True


def _page(
    engine: Engine,
    key: str,
    source_id: str | None,
    target_id: str | None,
    instance: str | None = None,
) -> dict[str, Any]:
    source, target, alone, none_running = _versions(engine, key, source_id, target_id, instance)
    source_model = reads.model(engine, source.id, source.key)
    target_model = reads.model(engine, target.id, target.key)
    plan = migration_reads.plan(engine, engine.definition_cache, source.id, target.id)
    mapped = {i.source[0]: i for i in plan.instructions}
    rows = [
        Row(
            node.id,
            node.label,
            wait_kind(node),
            mapped[node.id].target[0] if node.id in mapped else NO_MAPPING,
            False,
            has_event_trigger(node),
        )
        for node in sorted(source_model.nodes, key=lambda n: n.label.lower())
        if holds_instances(source_model, node)
    ]
    targets = sorted(
        (
            (n.id, n.label, wait_kind(n))
            for n in target_model.nodes
            if holds_instances(target_model, n)
        ),
        key=lambda t: t[1].lower(),
    )
    counts = console.version_counts(engine, key).get(source.id, {})
    if alone is not None:
        tokens = migration_impact.token_counts(
            engine, Selection(source.id, instance_ids=(alone.id,))
        )
    else:
        tokens = {
            s.node_id: s.active_tokens
            for s in console.definition_node_stats(engine, source.id)
            if s.active_tokens
        }
    return {
        "key": key,
        "source": source,
        "target": target,
        "alone": alone,
        "none_running": none_running,
        "versions": sorted(definition_store.list_all(engine, key), key=lambda v: -v.version),
        "rows": rows,
        "targets": targets,
        "tokens": tokens,
        "running": sum(counts.get(s, 0) for s in SELECTABLE_STATES),
        "states": SELECTABLE_STATES,
        "max_instances": MAX_INSTANCES,
        "max_items": MAX_ITEMS,
    }


async def migration_page(request: Request) -> Response:
    query = Query(request.query_params)
    key = request.path_params["key"]
    context = await read(
        request,
        _page,
        engine_of(request),
        key,
        query.text("source"),
        query.text("target"),
        query.text("instance"),
    )
    can_migrate = permits.holds(actors.current(), MIGRATE_INSTANCE, definition=key, target=key)
    return render(
        request, "migration.html", {"page": "definitions", "can_migrate": can_migrate, **context}
    )


# -- what the page submits -----------------------------------------------------------------------


@dataclass(frozen=True)
class MigrationRequest:
    """A plan and the instances it is to migrate: what a submission comes to."""

    plan: MigrationPlan
    instance_ids: tuple[UUID, ...]


def plan_of(form: Mapping[str, str]) -> MigrationPlan:
    """The plan the table submitted: `target:<node>` (empty: no mapping) and `update:<node>`."""
    source, target = form.get("source", ""), form.get("target", "")
    if not source or not target:
        raise BadRequest("the form names no source and target version", field="source")
    instructions = tuple(
        Instruction((name[7:],), (value,), form.get(f"update:{name[7:]}") == "on")
        for name, value in sorted(form.items())
        if name.startswith("target:") and value != NO_MAPPING
    )
    return MigrationPlan(source, target, instructions)


def _ids(text: str) -> list[UUID]:
    found = []
    for part in text.replace(",", " ").split():
        try:
            found.append(UUID(part))
        except ValueError as exc:
            raise BadRequest(f"'{part}' is not an instance id", field="instances") from exc
    return found


def _filters(form: Mapping[str, str]) -> tuple[str | None, str | None, bool | None]:
    """The state, business key and has-incident filters the form gives (None: any)."""
    state = form.get("state", "")
    if state and state not in SELECTABLE_STATES:
        raise BadRequest(f"state must be one of {', '.join(SELECTABLE_STATES)}", field="state")
    incident = form.get("incident", "")
    if incident not in ("", "yes", "no"):
        raise BadRequest("incident must be yes, no or empty", field="incident")
    business_key = form.get("business_key", "").strip() or None
    return state or None, business_key, {"yes": True, "no": False}.get(incident)


def selection_of(plan: MigrationPlan, form: Mapping[str, str]) -> Selection:
    """What the form selects, as the impact reads it: the running instances of the source
    version that the filters keep, only the typed ids when any are typed."""
    state, business_key, has_incident = _filters(form)
    typed = tuple(dict.fromkeys(_ids(form.get("instances", ""))))
    if typed:
        return Selection(plan.source_definition_id, instance_ids=typed)
    return Selection(plan.source_definition_id, state, business_key, has_incident)


def selection(
    engine: Engine, plan: MigrationPlan, form: Mapping[str, str], limit: int | None = None
) -> list[UUID]:
    """The instances chosen: the ids typed in, else (up to `limit` of, one past MAX_INSTANCES
    unless given) the running instances of the source version that the filters (state,
    business key, incidents) select."""
    limit = MAX_INSTANCES + 1 if limit is None else limit
    typed = _ids(form.get("instances", ""))
    if typed:
        return list(dict.fromkeys(typed))
    state, business_key, has_incident = _filters(form)
    where = InstanceFilter(
        definition_id=plan.source_definition_id,
        state=state,
        business_key=business_key,
        has_incident=has_incident,
    )
    found: list[UUID] = []
    after = None
    while len(found) < limit:
        page = instance_reads.page(engine, where, limit=min(PAGE, limit - len(found)), after=after)
        found.extend(i.id for i in page.items if i.ended_at is None)
        if page.next is None:
            break
        after = page.next
    return found


def check_expected(engine: Engine, plan: MigrationPlan, form: Mapping[str, str]) -> None:
    """When the form says how many instances the operator confirmed (`expected`, the impact's
    count), the selection must still match that many, else nothing runs."""
    text = form.get("expected", "").strip()
    if not text:
        return
    if not text.isdigit():
        raise BadRequest("expected must be a number of instances", field="expected")
    now = migration_impact.count(engine, selection_of(plan, form))
    if now != int(text):
        raise BadRequest(
            f"the selection matches {now} instance{'' if now == 1 else 's'} now, not the "
            f"{text} confirmed: check the impact again",
            field="expected",
        )


def request_of(engine: Engine, form: Mapping[str, str]) -> MigrationRequest:
    plan = plan_of(form)
    check_expected(engine, plan, form)
    ids = selection(engine, plan, form)
    if len(ids) > MAX_INSTANCES:
        raise BadRequest(
            f"more than {MAX_INSTANCES} instances are selected: narrow the filters",
            field="instances",
        )
    return MigrationRequest(plan, tuple(ids))


@dataclass(frozen=True)
class Outcome:
    """How a submission went: instances migrated, and those refused with why."""

    migrated: list[str]
    refused: list[tuple[str, str]]


def run_migration(engine: Engine, request: MigrationRequest) -> Outcome:
    """Migrate each instance in a transaction of its own; a refused one is reported, the
    others go on."""
    migrated, refused = [], []
    for instance_id in request.instance_ids:
        try:
            engine.run(MigrateInstance(instance_id, request.plan))
        except InterlockError as error:
            refused.append((str(instance_id), error.message))
        else:
            migrated.append(str(instance_id))
    return Outcome(migrated, refused)


async def _submitted(request: Request) -> tuple[Engine, dict[str, str]]:
    # Each instance's migration checks its permit; the plan's own checks (validating, no command)
    # ask the same of the definition the path names first.
    key = request.path_params["key"]
    require(request)
    permits.demand(actors.current(), MIGRATE_INSTANCE, permits.facts_of(definition=key, target=key))
    form = await request.form()
    return engine_of(request), {k: v for k, v in form.items() if isinstance(v, str)}


def _impact(engine: Engine, form: Mapping[str, str]) -> tuple[MigrationPlan, Impact]:
    plan = plan_of(form)
    found = migration_impact.impact(
        engine, engine.definition_cache, plan, selection_of(plan, form), engine.clock()
    )
    return plan, found


async def validate(request: Request) -> Response:
    """What the migration would touch now: the count, a sample, the refusals by reason."""
    try:
        engine, form = await _submitted(request)
        plan, found = await run_in_threadpool(_impact, engine, form)
    except InterlockError as error:
        return flash(request, error=error)
    return render(
        request,
        "_migration_impact.html",
        {
            "impact": found,
            "plan": plan,
            "max_instances": MAX_INSTANCES,
            "max_items": MAX_ITEMS,
        },
    )


def _migrate(engine: Engine, form: Mapping[str, str]) -> Outcome:
    return run_migration(engine, request_of(engine, form))


async def migrate(request: Request) -> Response:
    try:
        engine, form = await _submitted(request)
        outcome = await run_in_threadpool(_migrate, engine, form)
    except InterlockError as error:
        return flash(request, error=error)
    return render(
        request,
        "_migration_outcome.html",
        {"outcome": outcome},
        headers={"HX-Trigger": "interlock:changed"},
    )


def _create_batch(engine: Engine, form: Mapping[str, str]) -> str:
    """A migrate batch of every instance the form selects (the batch holds up to MAX_ITEMS):
    the plan is checked once, now, and each instance is migrated in a chunk of its batch."""
    plan = plan_of(form)
    check_expected(engine, plan, form)
    ids = selection(engine, plan, form, limit=MAX_ITEMS + 1)
    if not ids:
        raise BadRequest("no running instance of the source version is selected", field="instances")
    if len(ids) > MAX_ITEMS:
        raise BadRequest(
            f"more than {MAX_ITEMS} instances are selected: narrow the filters", field="instances"
        )
    items = tuple(str(i) for i in ids)
    return engine.run(CreateBatch(BatchType.MIGRATE, items, plan.to_json())).batch_id


async def migrate_as_batch(request: Request) -> Response:
    """Migrate the selection as a batch; the browser goes to the batch's page."""
    try:
        engine, form = await _submitted(request)
        batch_id = await run_in_threadpool(_create_batch, engine, form)
    except InterlockError as error:
        return flash(request, error=error)
    response = flash(request, message="Migration batch created.")
    response.headers["HX-Redirect"] = f"/batches/{batch_id}"
    return response


routes = [
    Route("/definitions/{key}/migrate", migration_page, methods=["GET"]),
    Route("/definitions/{key}/migrate/validate", validate, methods=["POST"]),
    Route("/definitions/{key}/migrate/run", migrate, methods=["POST"]),
    Route("/definitions/{key}/migrate/batch", migrate_as_batch, methods=["POST"]),
]
