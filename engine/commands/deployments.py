"""Deploy BPMN resources: each executable process becomes a new version of its key, unless the
content is unchanged and duplicate filtering is on."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, ClassVar
from uuid import UUID

from engine import audit
from engine.bpmn.diagram import diagram_for_deployment
from engine.bpmn.parser import parse_bpmn
from engine.bpmn.resources import embed_scripts, is_script_resource
from engine.dmn import parse_dmn
from engine.dmn.evaluate import compile_definitions
from engine.dmn.model import Decision
from engine.errors import BadRequest
from engine.executor import EngineSettings, Result, Tx
from engine.ids import new_id
from engine.model import (
    ModelLimits,
    ProcessModel,
)
from engine.schema import JOB_CHANNEL
from engine.states import AuditEntity, AuditOperation
from engine.store import decisions, definitions, start_triggers

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

    resources: tuple[Resource, ...]
    deployment_name: str | None = None
    source: str | None = None
    duplicate_filtering: bool = True
    whole_deployment: bool = False

    def execute(self, tx: Tx) -> DeploymentResult:
        limits = _limits(tx.settings)
        scripts = {r.name: r.content for r in self.resources if is_script_resource(r.name)}
        processes = [
            Resource(r.name, embed_scripts(r.content, r.name, scripts))
            for r in self.resources
            if not is_script_resource(r.name) and not is_dmn_resource(r.name)
        ]
        parsed = [(resource, model) for resource in processes for model in _parse(resource, limits)]
        rules = [
            (resource, decision)
            for resource in self.resources
            if is_dmn_resource(resource.name)
            for decision in _parse_dmn(resource, limits)
        ]
        if not parsed and not rules:
            raise BadRequest("the deployment contains no executable process and no decision")
        keys = [model.key for _, model in parsed]
        if len(set(keys)) != len(keys):
            raise BadRequest(f"the deployment defines process '{keys[0]}' more than once")
        decision_keys = [decision.id for _, decision in rules]
        if len(set(decision_keys)) != len(decision_keys):
            twice = next(k for k in decision_keys if decision_keys.count(k) > 1)
            raise BadRequest(f"the deployment defines decision '{twice}' more than once")
        deployment_id = new_id()
        filtering = self.duplicate_filtering
        created, listed = _plan(tx, parsed, deployment_id, filtering)
        created_rules, listed_rules = _plan_decisions(tx, rules, deployment_id, filtering)
        total = len(created) + len(created_rules)
        if self.whole_deployment and total and total < len(parsed) + len(rules):
            created, listed = _plan(tx, parsed, deployment_id, filtering=False)
            created_rules, listed_rules = _plan_decisions(tx, rules, deployment_id, False)
        if not created and not created_rules:
            return DeploymentResult(None, definitions=listed, decisions=listed_rules)
        definitions.insert_deployment(
            tx.conn, deployment_id, self.deployment_name, self.source, tx.now
        )
        for row, resource, model in created:
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
        for decision_row, resource in created_rules:
            decisions.insert_definition(tx.conn, decision_row, resource.content.decode("utf-8"))
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
                "definitions": [row.id for row, _, _ in created],
                "decisions": [row.id for row, _ in created_rules],
            },
        )
        return DeploymentResult(str(deployment_id), definitions=listed, decisions=listed_rules)


_Created = list[tuple[definitions.DefinitionRow, Resource, ProcessModel]]


def _plan(
    tx: Tx,
    parsed: list[tuple[Resource, ProcessModel]],
    deployment_id: UUID,
    filtering: bool,
) -> tuple[_Created, list[dict[str, Any]]]:
    """The definitions to create (each process's next version, unless filtered out as unchanged)
    and the description of every process of the deployment; locks each key."""
    created: _Created = []
    listed: list[dict[str, Any]] = []
    for resource, model in sorted(parsed, key=lambda pair: pair[1].key):
        definitions.lock_key(tx.conn, model.key)
        content_hash = hashlib.sha256(model.key.encode() + b"\0" + resource.content).hexdigest()
        latest = definitions.latest(tx.conn, model.key)
        if filtering and latest is not None and latest.content_hash == content_hash:
            listed.append(_describe(latest, created=False))
            continue
        version = latest.version + 1 if latest else 1
        row = definitions.DefinitionRow(
            id=f"{model.key}:{version}:{new_id()}",
            key=model.key,
            version=version,
            name=model.name,
            version_tag=model.version_tag,
            deployment_id=deployment_id,
            resource_name=resource.name,
            content_hash=content_hash,
            created_at=tx.now,
            history_ttl_days=model.history_ttl_days,
        )
        created.append((row, resource, model))
        listed.append(_describe(row, created=True))
    return created, listed


_CreatedDecisions = list[tuple[decisions.DecisionRow, Resource]]


def _plan_decisions(
    tx: Tx,
    parsed: list[tuple[Resource, Decision]],
    deployment_id: UUID,
    filtering: bool,
) -> tuple[_CreatedDecisions, list[dict[str, Any]]]:
    """`_plan` for the decisions of the DMN files: a decision whose file is unchanged since its
    latest version is filtered out; every other gets its key's next version."""
    created: _CreatedDecisions = []
    listed: list[dict[str, Any]] = []
    for resource, decision in sorted(parsed, key=lambda pair: pair[1].id):
        decisions.lock_key(tx.conn, decision.id)
        content_hash = hashlib.sha256(decision.id.encode() + b"\0" + resource.content).hexdigest()
        latest = decisions.latest(tx.conn, decision.id)
        if filtering and latest is not None and latest.content_hash == content_hash:
            listed.append(_describe(latest, created=False))
            continue
        version = latest.version + 1 if latest else 1
        row = decisions.DecisionRow(
            id=f"{decision.id}:{version}:{new_id()}",
            key=decision.id,
            version=version,
            name=decision.name,
            version_tag=decision.version_tag,
            deployment_id=deployment_id,
            resource_name=resource.name,
            content_hash=content_hash,
            created_at=tx.now,
            history_ttl_days=decision.history_time_to_live,
        )
        created.append((row, resource))
        listed.append(_describe(row, created=True))
    return created, listed


def _parse_dmn(resource: Resource, limits: ModelLimits) -> tuple[Decision, ...]:
    """The decisions of a DMN file, every expression compiled (refused naming file and line)."""
    parsed = parse_dmn(resource.content, resource.name, limits.max_bytes)
    compile_definitions(parsed, resource.name)
    return parsed.decisions


def _limits(settings: EngineSettings) -> ModelLimits:
    return ModelLimits(
        max_bytes=settings.max_bpmn_bytes,
        max_nodes=settings.max_process_nodes,
        max_fan_out=settings.max_fan_out,
        timers=settings.timer_limits,
    )


def _parse(resource: Resource, limits: ModelLimits) -> list[ProcessModel]:
    return parse_bpmn(resource.content, resource.name, limits)


def _describe(
    row: definitions.DefinitionRow | decisions.DecisionRow, *, created: bool
) -> dict[str, Any]:
    return {
        "id": row.id,
        "key": row.key,
        "version": row.version,
        "name": row.name,
        "resource_name": row.resource_name,
        "created": created,
    }
