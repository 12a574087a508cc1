"""Every change to Camunda's authorizations, each in its own transaction with its audit entry
(the authorization as it was and as it is, its permissions by name)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.identity import IdentityChanged, KeepOwnAdministration, record_change
from engine.core.executor import Result, Tx
from engine.core.permits import (
    CREATE_AUTHORIZATION,
    DELETE_AUTHORIZATION,
    UPDATE_AUTHORIZATION,
    On,
    Permit,
    check,
)
from engine.errors import BadRequest, Conflict, NotFound
from engine.identity.accounts import valid_name
from engine.identity.permissions import (
    ANY,
    PERMISSIONS,
    AuthorizationType,
    ResourceType,
    permission_names,
)
from engine.states import AuditEntity, AuditOperation
from engine.store import identity as store
from engine.store.identity import AuthorizationRow


def authorization_fields(rule: AuthorizationRow) -> dict[str, Any]:
    """An authorization as its audit entries show it."""
    return {
        "type": int(rule.type),
        "userId": rule.user_id,
        "groupId": rule.group_id,
        "resourceType": rule.resource_type,
        "resourceId": rule.resource_id,
        "permissions": permission_names(ResourceType(rule.resource_type), rule.permissions)
        if rule.resource_type in PERMISSIONS
        else rule.permissions,
    }


def _check_rule(rule: AuthorizationRow) -> None:
    if rule.type is AuthorizationType.GLOBAL:
        if rule.group_id is not None or rule.user_id not in (None, ANY):
            raise BadRequest(
                "a global authorization names no user or group (its user id is '*')",
                field="userId",
            )
    elif rule.user_id == ANY:
        raise BadRequest(
            "userId '*' (every user) is for a global authorization, not a grant or revoke",
            field="userId",
        )
    elif (rule.user_id is None) == (rule.group_id is None):
        raise BadRequest(
            "an authorization of type grant or revoke names either a userId or a groupId",
            field="userId",
        )
    if not rule.resource_id or not valid_name(rule.resource_id):
        raise BadRequest("an authorization needs a resourceId ('*': all)", field="resourceId")


@dataclass(frozen=True)
class SaveAuthorization:
    """Create the authorization `rule` (`create`), or change the one with its id."""

    name: ClassVar[str] = "SaveAuthorization"
    permits: ClassVar[tuple[Permit, ...]] = (CREATE_AUTHORIZATION, UPDATE_AUTHORIZATION)
    result_type: ClassVar[type[Result]] = IdentityChanged

    rule: AuthorizationRow
    create: bool

    def execute(self, tx: Tx) -> IdentityChanged:
        rule = self.rule
        if self.create:
            check(tx, CREATE_AUTHORIZATION)
        else:
            check(tx, UPDATE_AUTHORIZATION, authorization=rule.id)
        if rule.type is AuthorizationType.GLOBAL:
            rule = dataclasses.replace(rule, user_id=ANY, group_id=None)
        _check_rule(rule)
        keep = KeepOwnAdministration.before(tx)
        before = None
        if not self.create:
            before = store.lock_authorization(tx.conn, rule.id)
            if before is None:
                raise NotFound(f"Authorization with id {rule.id} does not exist", field="id")
        if not store.upsert_authorization(tx.conn, rule):
            raise Conflict(
                "an authorization of this type for this user or group and resource exists",
                field="resourceId",
            )
        keep.after(tx, "permissions")
        return record_change(
            tx,
            AuditOperation.CREATE if before is None else AuditOperation.UPDATE,
            AuditEntity.AUTHORIZATION,
            str(rule.id),
            before=None if before is None else authorization_fields(before),
            after=authorization_fields(rule),
        )


@dataclass(frozen=True)
class DeleteAuthorization:
    name: ClassVar[str] = "DeleteAuthorization"
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_AUTHORIZATION,)
    permit_ids: ClassVar[dict[On, str]] = {On.AUTHORIZATION: "authorization_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    authorization_id: UUID

    def execute(self, tx: Tx) -> IdentityChanged:
        keep = KeepOwnAdministration.before(tx)
        before = store.lock_authorization(tx.conn, self.authorization_id)
        if before is None:
            raise NotFound(
                f"Authorization with id {self.authorization_id} does not exist", field="id"
            )
        store.delete_authorization(tx.conn, before.id)
        keep.after(tx, "id")
        return record_change(
            tx,
            AuditOperation.DELETE,
            AuditEntity.AUTHORIZATION,
            str(before.id),
            before=authorization_fields(before),
        )
