"""Deploy files: each executable process and decision becomes a new version of its key, unless
duplicate filtering leaves its file out; every file deployed is kept as uploaded."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar
from uuid import UUID

from engine.bpmn.diagram import diagram_for_deployment
from engine.bpmn.parser import parse_bpmn_file
from engine.bpmn.resources import embed_scripts, is_script_resource
from engine.commands.alerts import declare_from_model as declare_alert_thresholds
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import CREATE_DEPLOYMENT, DELETE_DEPLOYMENT, REDEPLOY, On, Permit
from engine.core.settings import EngineSettings
from engine.db.ids import new_id
from engine.dmn import parse_dmn
from engine.dmn.evaluate import compile_definitions
from engine.dmn.model import Decision
from engine.errors import BadRequest, Conflict, NotFound
from engine.identity.accounts import valid_name
from engine.language.json_input import text_problem
from engine.model import (
    ModelLimits,
    ProcessModel,
)
from engine.schema import JOB_CHANNEL
from engine.states import AuditEntity, AuditOperation
from engine.store import cleanup as cleanup_store
from engine.store import definitions, job_definitions, start_triggers
from engine.store import deployments as deployment_store
from engine.store.definitions import DECISIONS

DMN_SUFFIXES = (".dmn", ".dmn11.xml")


BPMN_SUFFIXES = (".bpmn", ".bpmn20.xml")
BPMN_NAMESPACE = b"http://www.omg.org/spec/BPMN/20100524/MODEL"
# Files kept but never parsed, whatever they hold.
OTHER_SUFFIXES = (".form", ".html", ".htm", ".json", ".js", ".txt", ".png", ".jpg", ".svg")


def is_dmn_resource(name: str) -> bool:
    return name.lower().endswith(DMN_SUFFIXES)


def is_bpmn_resource(name: str, content: bytes) -> bool:
    """A BPMN file: named `*.bpmn` or `*.bpmn20.xml`, or a file of no other known kind whose
    start is in BPMN's namespace."""
    lowered = name.lower()
    if lowered.endswith(BPMN_SUFFIXES):
        return True
    if is_dmn_resource(name) or is_script_resource(name) or lowered.endswith(OTHER_SUFFIXES):
        return False
    return BPMN_NAMESPACE in content[:4096]


@dataclass(frozen=True)
class Resource:
    name: str
    content: bytes


@dataclass(frozen=True)
class DeploymentResult(Result):
    deployment_id: str | None
    # [{"id", "key", "version", "name", "resource_name", "created": bool}]
    definitions: list[dict[str, Any]] = field(default_factory=list)
    # The decisions of the deployment's DMN files, described alike.
    decisions: list[dict[str, Any]] = field(default_factory=list)
    # The processes of its BPMN files that deploy no definition: [{"resource", "process",
    # "reason"}] (not executable, or a pool without flow nodes), as Camunda skips them.
    skipped: list[dict[str, str]] = field(default_factory=list)


class DuplicateFiltering(StrEnum):
    """Which files of a deployment are left out as already deployed.

    `KEYS` (Interlock's native rule): a process or decision whose file is unchanged since the
    latest version of its key gets no new version; a deployment that creates none is not made.
    `WHOLE` and `CHANGED` (Camunda's `enable-duplicate-filtering` and `deploy-changed-only`):
    each file is compared, byte for byte, with the newest file of its name among deployments of
    the same name, of a source that is none or the same, and of the same tenant. When none
    differs nothing is deployed and the newest such deployment is the answer; otherwise `WHOLE`
    deploys every file again and `CHANGED` only the changed ones. `NONE`: every file is
    deployed, every process and decision a new version."""

    NONE = "none"
    KEYS = "keys"
    WHOLE = "whole"
    CHANGED = "changed"


@dataclass(frozen=True)
class Deploy:
    """Deploy the files of `resources` in one deployment, each kept as uploaded: BPMN files
    (every executable process a new version of its key), DMN files (`.dmn`, `.dmn11.xml`: each
    decision a definition of its own, versioned per decision key), the scripts BPMN files name,
    and any other file (forms, images), only kept. Files are filtered as `filtering` says."""

    name: ClassVar[str] = "Deploy"
    result_type: ClassVar[type[Result]] = DeploymentResult
    permits: ClassVar[tuple[Permit, ...]] = (CREATE_DEPLOYMENT,)

    resources: tuple[Resource, ...]
    deployment_name: str | None = None
    source: str | None = None
    filtering: DuplicateFiltering = DuplicateFiltering.KEYS
    # Camunda's tenant identifier: the deployment's and its definitions' (None: no tenant).
    tenant_id: str | None = None

    def execute(self, tx: Tx) -> DeploymentResult:
        return deploy(tx, self)


def deploy(tx: Tx, command: Deploy) -> DeploymentResult:
    """Run `command` in `tx` (a redeployment runs one too)."""
    limits = _limits(tx.settings)
    submitted = tuple({r.name: r for r in command.resources}.values())
    if not submitted:
        raise BadRequest("the deployment contains no file")
    for resource in submitted:
        problem = text_problem(resource.name) if resource.name else "is empty"
        if problem is not None:
            raise BadRequest(f"a resource name {problem}", field="resource")
    tenant = checked_tenant(command.tenant_id, "tenant-id")
    filtering = command.filtering
    deployed = submitted
    if filtering in (DuplicateFiltering.WHOLE, DuplicateFiltering.CHANGED):
        changed = _changed(tx, command, submitted, tenant)
        if not changed:
            previous = deployment_store.latest_named(tx.conn, command.deployment_name, tenant)
            return DeploymentResult(str(previous) if previous else None)
        if filtering is DuplicateFiltering.CHANGED:
            deployed = changed
    scripts = {r.name: r.content for r in submitted if is_script_resource(r.name)}
    processes = [
        Resource(r.name, embed_scripts(r.content, r.name, scripts))
        for r in deployed
        if is_bpmn_resource(r.name, r.content)
    ]
    files = [(r, parse_bpmn_file(r.content, r.name, limits, deploying=True)) for r in processes]
    parsed = [_process(r, model) for r, file in files for model in file.models]
    skipped = [
        {"resource": r.name, "process": process, "reason": reason}
        for r, file in files
        for process, reason in file.skipped
    ]
    rules = [
        _decision(resource, decision)
        for resource in deployed
        if is_dmn_resource(resource.name)
        for decision in _parse_dmn(resource, limits)
    ]
    by_key = filtering is DuplicateFiltering.KEYS
    if by_key and not parsed and not rules:
        left_out = "".join(
            f"; process '{item['process']}' of {item['resource']} is skipped: {item['reason']}"
            for item in skipped
        )
        raise BadRequest(f"the deployment contains no executable process and no decision{left_out}")
    for items, what in ((parsed, "process"), (rules, "decision")):
        seen: set[str] = set()
        for item in items:
            if item.key in seen:
                raise BadRequest(f"the deployment defines {what} '{item.key}' more than once")
            seen.add(item.key)
    deployment_id = new_id()
    created, listed = _plan(tx, parsed, deployment_id, by_key, tenant=tenant)
    created_rules, listed_rules = _plan(tx, rules, deployment_id, by_key, DECISIONS, tenant=tenant)
    if by_key and not created and not created_rules:
        return DeploymentResult(None, listed, listed_rules, skipped)
    definitions.insert_deployment(
        tx.conn, deployment_id, command.deployment_name, command.source, tx.now, tenant
    )
    deployment_store.insert_resources(
        tx.conn, deployment_id, [(new_id(), r.name, r.content) for r in deployed]
    )
    for row, item in created:
        model, resource = item.parsed, item.resource
        diagram = diagram_for_deployment(resource.content, resource.name, model.key)
        definitions.insert_definition(tx.conn, row, resource.content.decode("utf-8"), diagram)
        job_definitions.insert(tx.conn, row.id, model)
        declare_alert_thresholds(tx, row.key, model)
        start_triggers.replace(
            tx.conn,
            model,
            row.id,
            tx.now,
            tx.settings.default_retries,
            tx.settings.timer_limits,
        )
        tx.announcements.add(JOB_CHANNEL)
        tx.definitions.put(row.id, model)
        tx.definitions.forget_latest(row.key)
    for row, rule in created_rules:
        source = rule.resource.content.decode("utf-8")
        definitions.insert_definition(tx.conn, row, source, table=DECISIONS)
    audit.record(
        tx,
        AuditOperation.CREATE,
        AuditEntity.DEPLOYMENT,
        entity_id=str(deployment_id),
        definition_id=created[0][0].id if len(created) == 1 else None,
        definition_key=created[0][0].key if len(created) == 1 else None,
        details={
            "name": command.deployment_name,
            "source": command.source,
            "tenant_id": tenant,
            "filtering": filtering.value,
            "resources": [r.name for r in deployed],
            "definitions": [row.id for row, _ in created],
            "decisions": [row.id for row, _ in created_rules],
        },
    )
    return DeploymentResult(str(deployment_id), listed, listed_rules, skipped)


def _changed(
    tx: Tx, command: Deploy, submitted: tuple[Resource, ...], tenant: str | None
) -> tuple[Resource, ...]:
    """The files of `submitted` that differ from the newest file of their name in deployments
    of the same name, source and tenant (Camunda's duplicate filtering)."""
    deployment_store.lock_name(tx.conn, command.deployment_name, tenant)
    existing = deployment_store.latest_by_name(
        tx.conn,
        command.deployment_name,
        [r.name for r in submitted],
        command.source or deployment_store.PROCESS_APPLICATION_SOURCE,
        tenant,
    )
    return tuple(
        r for r in submitted if r.name not in existing or existing[r.name].content != r.content
    )


T = TypeVar("T", ProcessModel, Decision)


@dataclass(frozen=True)
class _Item(Generic[T]):
    """One process or decision of the deployment, with what its definition row takes from it."""

    resource: Resource
    parsed: T
    key: str
    name: str | None
    version_tag: str | None
    history_ttl_days: int | None


def _process(resource: Resource, model: ProcessModel) -> _Item[ProcessModel]:
    return _Item(resource, model, model.key, model.name, model.version_tag, model.history_ttl_days)


def _decision(resource: Resource, decision: Decision) -> _Item[Decision]:
    return _Item(
        resource,
        decision,
        decision.id,
        decision.name,
        decision.version_tag,
        decision.history_time_to_live,
    )


def _plan(
    tx: Tx,
    items: list[_Item[T]],
    deployment_id: UUID,
    filtering: bool,
    table: str = definitions.PROCESSES,
    *,
    tenant: str | None = None,
) -> tuple[list[tuple[definitions.DefinitionRow, _Item[T]]], list[dict[str, Any]]]:
    """The definitions to create (each key's next version within `tenant`, unless filtered out
    as unchanged: the same key and resource as its latest version) and the description of every
    process or decision of the deployment; locks each key of the tenant."""
    created: list[tuple[definitions.DefinitionRow, _Item[T]]] = []
    listed: list[dict[str, Any]] = []
    for item in sorted(items, key=lambda item: item.key):
        definitions.lock_key(tx.conn, item.key, table, tenant)
        content_hash = hashlib.sha256(item.key.encode() + b"\0" + item.resource.content).hexdigest()
        latest = definitions.latest_for_tenant(tx.conn, item.key, tenant, table)
        if filtering and latest is not None and latest.content_hash == content_hash:
            listed.append(_describe(latest, created=False))
            continue
        version = latest.version + 1 if latest else 1
        row = definitions.DefinitionRow(
            id=f"{item.key}:{version}:{new_id()}",
            key=item.key,
            version=version,
            name=item.name,
            version_tag=item.version_tag,
            deployment_id=deployment_id,
            resource_name=item.resource.name,
            content_hash=content_hash,
            created_at=tx.now,
            history_ttl_days=item.history_ttl_days,
            tenant_id=tenant,
        )
        created.append((row, item))
        listed.append(_describe(row, created=True))
    return created, listed


def checked_tenant(tenant_id: str | None, field: str) -> str | None:
    """A tenant id as given, refused when empty or holding NUL (which no text column holds)."""
    if tenant_id is not None and (not valid_name(tenant_id) or tenant_id != tenant_id.strip()):
        raise BadRequest(
            f"'{field}': a tenant id needs characters and no surrounding spaces", field=field
        )
    return tenant_id


def _parse_dmn(resource: Resource, limits: ModelLimits) -> tuple[Decision, ...]:
    """The decisions of a DMN file, every expression compiled (refused naming file and line)."""
    parsed = parse_dmn(resource.content, resource.name, limits)
    compile_definitions(parsed, resource.name)
    return parsed.decisions


def _limits(settings: EngineSettings) -> ModelLimits:
    return ModelLimits(
        max_bytes=settings.max_bpmn_bytes,
        max_nodes=settings.max_process_nodes,
        max_fan_out=settings.max_fan_out,
        max_rules=settings.max_decision_rules,
        max_decisions=settings.max_dmn_decisions,
        timers=settings.timer_limits,
    )


def _describe(row: definitions.DefinitionRow, *, created: bool) -> dict[str, Any]:
    return {
        "id": row.id,
        "key": row.key,
        "version": row.version,
        "name": row.name,
        "resource_name": row.resource_name,
        "tenant_id": row.tenant_id,
        "created": created,
    }


# -- deleting and redeploying ---------------------------------------------------------------------


@dataclass(frozen=True)
class DeletionResult(Result):
    deployment_id: str
    # The instances deleted with the deployment (cascade only).
    instances: int = 0
    definitions: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)


class DeploymentInUse(Conflict):
    """A deployment deleted without cascade while its definitions have running instances (or
    ended ones, whose history is their rows): `running` holds (definition id, count) pairs."""

    def __init__(self, message: str, running: list[tuple[str, int]]) -> None:
        super().__init__(message, running=running)
        self.running = running


def delete_families(tx: Tx, deployment_id: UUID | None, definition_ids: Sequence[str] = ()) -> int:
    """Delete every instance of the deployment's definitions (with `deployment_id` None: of the
    process definitions `definition_ids`) with the families they root; an instance of them
    called by a family rooted elsewhere is a Conflict. The count of instances deleted."""
    members, outside = deployment_store.lock_families(tx.conn, deployment_id, definition_ids)
    if outside:
        instance, root = outside[0]
        raise Conflict(
            f"process instance {instance} was called by the family of process instance {root}, "
            "whose definition is not deleted: cancel that instance first",
            instance_id=str(instance),
            root_instance_id=str(root),
        )
    return cleanup_store.delete_instances(tx.conn, members)


def refuse_running(using: deployment_store.Dependants) -> None:
    """Camunda's refusal of a deletion without cascade while instances run."""
    if using.running:
        definition_id, count = next(iter(using.running.items()))
        raise DeploymentInUse(
            "ENGINE-03076 Deletion of process definition without cascading failed. "
            f"Process definition with id: {definition_id} can't be deleted, since "
            f"there exists {count} dependening process instances.",
            sorted(using.running.items()),
        )


@dataclass(frozen=True)
class DeleteDeployment:
    """Delete a deployment: its files, its process and decision definitions, their start timers
    and start subscriptions, and the evaluations of its decisions. Without `cascade` a
    deployment whose definitions have instances is refused; with it, every instance of its
    definitions is deleted with its family's called instances and all their rows (tasks, jobs,
    incidents, variables, history), as Camunda deletes them. Instances are deleted, not
    cancelled: no end listener or output mapping runs (as with Camunda's skipCustomListeners
    and skipIoMappings, which are accepted for that reason). Each key whose latest version goes
    gives its start timers and subscriptions back to its version now latest."""

    name: ClassVar[str] = "DeleteDeployment"
    result_type: ClassVar[type[Result]] = DeletionResult
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_DEPLOYMENT,)
    permit_ids: ClassVar[dict[On, str]] = {On.DEPLOYMENT: "deployment_id"}

    deployment_id: UUID
    cascade: bool = False
    skip_custom_listeners: bool = False
    skip_io_mappings: bool = False

    def execute(self, tx: Tx) -> DeletionResult:
        found = deployment_store.lock(tx.conn, self.deployment_id)
        if found is None:
            raise NotFound(f"Deployment with id '{self.deployment_id}' do not exist")
        deployment_store.lock_definitions(tx.conn, self.deployment_id)
        deleted = 0
        if self.cascade:
            deleted = delete_families(tx, self.deployment_id)
        else:
            using = deployment_store.dependants(tx.conn, self.deployment_id)
            refuse_running(using)
            if using.ended or using.evaluations:
                raise DeploymentInUse(
                    f"deployment {self.deployment_id} keeps the history of {using.ended} ended "
                    f"instances and {using.evaluations} decision evaluations: delete it with "
                    "cascade=true to delete them too",
                    [],
                )
        removed = deployment_store.delete(tx.conn, self.deployment_id)
        for key, tenant in sorted({(key, tenant) for _, key, tenant in removed.processes}):
            restore_start_triggers(tx, key, tenant)
        audit.record(
            tx,
            AuditOperation.DELETE,
            AuditEntity.DEPLOYMENT,
            entity_id=str(self.deployment_id),
            details={
                "name": found.name,
                "cascade": self.cascade,
                "instances": deleted,
                "definitions": [definition_id for definition_id, _, _ in removed.processes],
                "decisions": removed.decisions,
            },
        )
        return DeletionResult(
            str(self.deployment_id),
            deleted,
            [definition_id for definition_id, _, _ in removed.processes],
            removed.decisions,
        )


def restore_start_triggers(tx: Tx, key: str, tenant: str | None) -> None:
    """The start triggers of `key`'s version now latest (none when no version is left)."""
    latest = definitions.latest_for_tenant(tx.conn, key, tenant)
    if latest is None:
        return
    model = tx.definitions.get(tx.conn, latest.id, latest.key)
    start_triggers.replace(
        tx.conn, model, latest.id, tx.now, tx.settings.default_retries, tx.settings.timer_limits
    )
    tx.announcements.add(JOB_CHANNEL)


@dataclass(frozen=True)
class Redeploy:
    """A new deployment of files of deployment `deployment_id`, under its name and tenant: those
    of `resource_ids` and `resource_names`, or every one when both are empty. Nothing is
    filtered: every process and decision becomes a new version (Camunda's redeploy)."""

    name: ClassVar[str] = "Redeploy"
    result_type: ClassVar[type[Result]] = DeploymentResult
    permits: ClassVar[tuple[Permit, ...]] = (REDEPLOY,)
    permit_ids: ClassVar[dict[On, str]] = {On.DEPLOYMENT: "deployment_id"}

    deployment_id: UUID
    resource_ids: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    source: str | None = None

    def execute(self, tx: Tx) -> DeploymentResult:
        found = deployment_store.lock(tx.conn, self.deployment_id)
        if found is None:
            raise NotFound(f"Deployment with id '{self.deployment_id}' does not exist")
        stored = deployment_store.resources(tx.conn, self.deployment_id)
        chosen = stored
        if self.resource_ids or self.resource_names:
            by_id = {str(r.id): r for r in stored}
            by_name = {r.name: r for r in stored}
            for wanted, index, what in (
                (self.resource_ids, by_id, "id"),
                (self.resource_names, by_name, "name"),
            ):
                missing = [w for w in wanted if w not in index]
                if missing:
                    raise NotFound(
                        f"The deployment with id '{self.deployment_id}' does not contain the "
                        f"following resources with {what}: {', '.join(missing)}"
                    )
            picked = {by_id[i].name: by_id[i] for i in self.resource_ids}
            picked.update({name: by_name[name] for name in self.resource_names})
            chosen = list(picked.values())
        command = Deploy(
            tuple(Resource(r.name, r.content) for r in chosen),
            found.name,
            self.source,
            DuplicateFiltering.NONE,
            tenant_id=found.tenant_id,
        )
        return deploy(tx, command)
