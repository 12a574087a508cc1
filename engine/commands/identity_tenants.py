"""Every change to tenants and their members (users or groups), each in its own transaction
with its audit entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.commands.identity import IdentityChanged, checked_id, record_change
from engine.core.executor import Result, Tx
from engine.core.permits import (
    ADD_TENANT_MEMBER,
    CREATE_TENANT,
    DELETE_TENANT,
    REMOVE_TENANT_MEMBER,
    UPDATE_TENANT,
    On,
    Permit,
)
from engine.errors import BadRequest, Conflict, NotFound
from engine.identity.accounts import valid_name
from engine.states import AuditEntity, AuditOperation
from engine.store import identity as store
from engine.store.identity import TenantRow


def _tenant(tx: Tx, tenant_id: str) -> TenantRow:
    found = store.lock_tenant(tx.conn, tenant_id) if valid_name(tenant_id) else None
    if found is None:
        raise NotFound(f"Tenant with id {tenant_id} does not exist", field="tenantId")
    return found


@dataclass(frozen=True)
class CreateTenant:
    name: ClassVar[str] = "CreateTenant"
    permits: ClassVar[tuple[Permit, ...]] = (CREATE_TENANT,)
    result_type: ClassVar[type[Result]] = IdentityChanged

    tenant_id: str
    tenant_name: str | None = None

    def execute(self, tx: Tx) -> IdentityChanged:
        tenant = TenantRow(checked_id(self.tenant_id, "id", "a tenant"), self.tenant_name)
        if not store.insert_tenant(tx.conn, tenant):
            raise Conflict(f"The tenant with id '{tenant.id}' already exists", field="id")
        return record_change(
            tx, AuditOperation.CREATE, AuditEntity.TENANT, tenant.id, after={"name": tenant.name}
        )


@dataclass(frozen=True)
class UpdateTenant:
    name: ClassVar[str] = "UpdateTenant"
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_TENANT,)
    permit_ids: ClassVar[dict[On, str]] = {On.TENANT: "tenant_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    tenant_id: str
    tenant_name: str | None = None

    def execute(self, tx: Tx) -> IdentityChanged:
        before = _tenant(tx, self.tenant_id)
        store.update_tenant(tx.conn, TenantRow(before.id, self.tenant_name))
        return record_change(
            tx,
            AuditOperation.UPDATE,
            AuditEntity.TENANT,
            before.id,
            property="name",
            before=before.name,
            after=self.tenant_name,
        )


@dataclass(frozen=True)
class DeleteTenant:
    name: ClassVar[str] = "DeleteTenant"
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_TENANT,)
    permit_ids: ClassVar[dict[On, str]] = {On.TENANT: "tenant_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    tenant_id: str

    def execute(self, tx: Tx) -> IdentityChanged:
        tenant = _tenant(tx, self.tenant_id)
        store.delete_tenant(tx.conn, tenant.id)
        return record_change(
            tx, AuditOperation.DELETE, AuditEntity.TENANT, tenant.id, before={"name": tenant.name}
        )


def _member_field(user_id: str | None, group_id: str | None) -> tuple[str, str]:
    if (user_id is None) == (group_id is None):
        raise BadRequest("a tenant member is one user or one group", field="userId")
    return ("userId", user_id) if user_id is not None else ("groupId", group_id or "")


@dataclass(frozen=True)
class AddTenantMember:
    """Make a user or a group (one of them) a member of a tenant."""

    name: ClassVar[str] = "AddTenantMember"
    permits: ClassVar[tuple[Permit, ...]] = (ADD_TENANT_MEMBER,)
    permit_ids: ClassVar[dict[On, str]] = {On.TENANT: "tenant_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    tenant_id: str
    user_id: str | None = None
    group_id: str | None = None

    def execute(self, tx: Tx) -> IdentityChanged:
        field, member = _member_field(self.user_id, self.group_id)
        tenant = _tenant(tx, self.tenant_id)
        if self.user_id is not None:
            if not valid_name(member) or not store.user_exists(tx.conn, member):
                raise NotFound(f"User with id {member} does not exist", field=field)
        elif not valid_name(member) or not store.group_exists(tx.conn, member):
            raise NotFound(f"Group with id {member} does not exist", field=field)
        if not store.insert_tenant_member(
            tx.conn, tenant.id, user_id=self.user_id, group_id=self.group_id
        ):
            return IdentityChanged(AuditEntity.TENANT_MEMBERSHIP.value, tenant.id, changed=False)
        return record_change(
            tx,
            AuditOperation.CREATE,
            AuditEntity.TENANT_MEMBERSHIP,
            tenant.id,
            property=field,
            after=member,
        )


@dataclass(frozen=True)
class RemoveTenantMember:
    name: ClassVar[str] = "RemoveTenantMember"
    permits: ClassVar[tuple[Permit, ...]] = (REMOVE_TENANT_MEMBER,)
    permit_ids: ClassVar[dict[On, str]] = {On.TENANT: "tenant_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    tenant_id: str
    user_id: str | None = None
    group_id: str | None = None

    def execute(self, tx: Tx) -> IdentityChanged:
        field, member = _member_field(self.user_id, self.group_id)
        tenant = _tenant(tx, self.tenant_id)
        if not valid_name(member) or not store.delete_tenant_member(
            tx.conn, tenant.id, user_id=self.user_id, group_id=self.group_id
        ):
            return IdentityChanged(AuditEntity.TENANT_MEMBERSHIP.value, tenant.id, changed=False)
        return record_change(
            tx,
            AuditOperation.DELETE,
            AuditEntity.TENANT_MEMBERSHIP,
            tenant.id,
            property=field,
            before=member,
        )
