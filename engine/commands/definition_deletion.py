"""Deleting process definitions one by one (Camunda's `deleteProcessDefinition`): one version by
id, or every version of a key. The deployment that brought them stays, with its files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from engine.commands.deployments import (
    DeploymentInUse,
    checked_tenant,
    delete_families,
    refuse_running,
    restore_start_triggers,
)
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import DELETE_DEFINITION, Permit, check
from engine.errors import BadRequest, NotFound
from engine.states import AuditEntity, AuditOperation
from engine.store import definitions
from engine.store import deployments as deployment_store


@dataclass(frozen=True)
class DefinitionDeletionResult(Result):
    definition_ids: list[str] = field(default_factory=list)
    # The instances deleted with them (cascade only).
    instances: int = 0


@dataclass(frozen=True)
class DeleteProcessDefinitions:
    """Delete the process definition `definition_id`, or every version of `key` (of `tenant_id`,
    or of no tenant with `without_tenant`; neither: of every tenant the actor sees). Without
    `cascade` definitions with instances are refused (an ended instance's history is its rows);
    with it their instances are deleted with their families, as a deployment's deletion deletes
    them. Each key whose latest version goes gives its start timers and subscriptions back to
    the version now latest."""

    name: ClassVar[str] = "DeleteProcessDefinitions"
    result_type: ClassVar[type[Result]] = DefinitionDeletionResult
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_DEFINITION,)

    definition_id: str | None = None
    key: str | None = None
    tenant_id: str | None = None
    without_tenant: bool = False
    cascade: bool = False
    skip_custom_listeners: bool = False
    skip_io_mappings: bool = False

    def execute(self, tx: Tx) -> DefinitionDeletionResult:
        if (self.definition_id is None) == (self.key is None):
            raise BadRequest(
                "name either a process definition id or a process definition key", field="id"
            )
        rows = definitions.to_suspend(
            tx.conn,
            definition_id=self.definition_id,
            key=self.key,
            tenant_id=checked_tenant(self.tenant_id, "tenantId"),
            without_tenant=self.without_tenant,
        )
        if not rows:
            what = self.definition_id if self.definition_id is not None else f"key {self.key}"
            raise NotFound(f"No process definition found with id '{what}'")
        for row in rows:
            check(tx, DELETE_DEFINITION, definition=row.key)
        ids = [row.id for row in rows]
        deleted = 0
        if self.cascade:
            deleted = delete_families(tx, None, ids)
        else:
            using = deployment_store.dependants(tx.conn, None, ids)
            refuse_running(using)
            if using.ended:
                raise DeploymentInUse(
                    f"the process definitions keep the history of {using.ended} ended instances: "
                    "delete them with cascade=true to delete that history too",
                    [],
                )
        deployment_store.delete_processes(tx.conn, ids)
        for key, tenant in sorted({(row.key, row.tenant_id) for row in rows}):
            restore_start_triggers(tx, key, tenant)
        for row in rows:
            audit.record(
                tx,
                AuditOperation.DELETE,
                AuditEntity.PROCESS_DEFINITION,
                entity_id=row.id,
                definition_id=row.id,
                definition_key=row.key,
                details={"cascade": self.cascade, "version": row.version},
            )
        return DefinitionDeletionResult(ids, deleted)
