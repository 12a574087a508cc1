"""Deploy BPMN resources: each executable process becomes a new version of its key, unless the
content is unchanged and duplicate filtering is on."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar
from uuid import UUID

from engine.bpmn.diagram import diagram_for_deployment
from engine.bpmn.parser import parse_bpmn
from engine.bpmn.resources import embed_scripts, is_script_resource
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import CREATE_DEPLOYMENT, Permit
from engine.core.settings import EngineSettings
from engine.db.ids import new_id
from engine.dmn import parse_dmn
from engine.dmn.evaluate import compile_definitions
from engine.dmn.model import Decision
from engine.errors import BadRequest
from engine.identity.accounts import valid_name
from engine.model import (
    ModelLimits,
    ProcessModel,
)
from engine.schema import JOB_CHANNEL
from engine.states import AuditEntity, AuditOperation
from engine.store import definitions, start_triggers
from engine.store.definitions import DECISIONS

DMN_SUFFIXES = (".dmn", ".dmn11.xml")


def is_dmn_resource(name: str) -> bool:
    return name.lower().endswith(DMN_SUFFIXES)


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


@dataclass(frozen=True)
class Deploy:
    """Deploy the processes and decisions of `resources` in one deployment: BPMN files, DMN
    files (`.dmn`, `.dmn11.xml`: each decision a definition of its own, versioned per decision
    key), and the scripts BPMN files name.

    With `duplicate_filtering`, a process whose resource is unchanged since its latest version
    gets no new version. With `whole_deployment` as well (Camunda's enable-duplicate-filtering
    without deploy-changed-only), the deployment is filtered as a whole: nothing is deployed when
    nothing changed, and every process gets a new version when any one changed."""

    name: ClassVar[str] = "Deploy"
    result_type: ClassVar[type[Result]] = DeploymentResult
    permits: ClassVar[tuple[Permit, ...]] = (CREATE_DEPLOYMENT,)

    resources: tuple[Resource, ...]
    deployment_name: str | None = None
    source: str | None = None
    duplicate_filtering: bool = True
    whole_deployment: bool = False
    # Camunda's tenant identifier: the deployment's and its definitions' (None: no tenant).
    tenant_id: str | None = None

    def execute(self, tx: Tx) -> DeploymentResult:
        limits = _limits(tx.settings)
        scripts = {r.name: r.content for r in self.resources if is_script_resource(r.name)}
        processes = [
            Resource(r.name, embed_scripts(r.content, r.name, scripts))
            for r in self.resources
            if not is_script_resource(r.name) and not is_dmn_resource(r.name)
        ]
        parsed = [_process(r, model) for r in processes for model in _parse(r, limits)]
        rules = [
            _decision(resource, decision)
            for resource in self.resources
            if is_dmn_resource(resource.name)
            for decision in _parse_dmn(resource, limits)
        ]
        if not parsed and not rules:
            raise BadRequest("the deployment contains no executable process and no decision")
        for items, what in ((parsed, "process"), (rules, "decision")):
            seen: set[str] = set()
            for item in items:
                if item.key in seen:
                    raise BadRequest(f"the deployment defines {what} '{item.key}' more than once")
                seen.add(item.key)
        deployment_id = new_id()
        filtering = self.duplicate_filtering
        tenant = checked_tenant(self.tenant_id, "tenant-id")
        created, listed = _plan(tx, parsed, deployment_id, filtering, tenant=tenant)
        created_rules, listed_rules = _plan(
            tx, rules, deployment_id, filtering, DECISIONS, tenant=tenant
        )
        total = len(created) + len(created_rules)
        if self.whole_deployment and total and total < len(parsed) + len(rules):
            created, listed = _plan(tx, parsed, deployment_id, filtering=False, tenant=tenant)
            created_rules, listed_rules = _plan(
                tx, rules, deployment_id, False, DECISIONS, tenant=tenant
            )
        if not created and not created_rules:
            return DeploymentResult(None, definitions=listed, decisions=listed_rules)
        definitions.insert_deployment(
            tx.conn, deployment_id, self.deployment_name, self.source, tx.now, tenant
        )
        for row, item in created:
            model, resource = item.parsed, item.resource
            diagram = diagram_for_deployment(resource.content, resource.name, model.key)
            definitions.insert_definition(tx.conn, row, resource.content.decode("utf-8"), diagram)
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
                "name": self.deployment_name,
                "source": self.source,
                "tenant_id": tenant,
                "definitions": [row.id for row, _ in created],
                "decisions": [row.id for row, _ in created_rules],
            },
        )
        return DeploymentResult(str(deployment_id), definitions=listed, decisions=listed_rules)


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
        raise BadRequest("a tenant id needs characters and no surrounding spaces", field=field)
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


def _parse(resource: Resource, limits: ModelLimits) -> list[ProcessModel]:
    return parse_bpmn(resource.content, resource.name, limits)


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
