"""Every change to users, groups and group memberships, as Camunda's identity service makes
them: each in its own transaction with its audit entry. Tenants are changed in
engine/commands/identity_tenants.py, authorizations in engine/commands/identity_authorizations.py.

No command may leave no user in an admin group (`admin`, `camunda-admin`): deleting the last
admin, or taking them out of the last admin group they are in, is refused (`LastAdmin`). Nor may
a user take their own full administration (ALL on authorizations, as the built-in admin groups
grant it) away from themselves: leaving the groups that give it, deleting or weakening an
authorization that does, revoking it, deleting themselves (`OwnAdministration`, judged from the
rows as the change leaves them, in its transaction). The built-in groups can be neither deleted
nor renamed. Passwords never reach an audit entry, a result or a command's repr."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import (
    ADD_GROUP_MEMBER,
    ADMINISTER,
    CREATE_GROUP,
    CREATE_USER,
    DELETE_GROUP,
    DELETE_USER,
    REMOVE_GROUP_MEMBER,
    UPDATE_GROUP,
    UPDATE_OWN_USER,
    On,
    Permit,
)
from engine.errors import BadRequest, Conflict, NotFound
from engine.identity.accounts import (
    MIN_PASSWORD,
    PasswordRecord,
    Role,
    check_password,
    hash_password,
    valid_name,
)
from engine.identity.permissions import (
    ADMIN_GROUPS,
    ALL,
    BUILTIN_ROLES,
    RESOURCE_NAMES,
    ResourceType,
)
from engine.queries import grants as grant_reads
from engine.states import AuditEntity, AuditOperation
from engine.store import accounts as account_store
from engine.store import identity as store
from engine.store.identity import GroupRow, UserRow

PASSWORD = "password"


class LastAdmin(Conflict):
    """The change would leave no user in an admin group."""


class OwnAdministration(BadRequest):
    """The change would take full administration away from the user who makes it."""


# Full administration: every permission on authorizations, which lets its holder grant
# themselves anything else (what the built-in admin groups are granted).
_ADMINISTRATION = (ALL, ResourceType.AUTHORIZATION)


def _administers(tx: Tx, user_id: str) -> bool:
    """Whether `user_id` holds full administration, as the transaction's rows say now."""
    return grant_reads.grants(tx.conn, user_id).allows(*_ADMINISTRATION)


@dataclass(frozen=True)
class KeepOwnAdministration:
    """The acting user's full administration, kept across a change: `before` (ahead of the
    change) notes whether they hold it, locking their user row so that their own changes to it
    take turns; `after` (once the change is written, in the same transaction) refuses the change
    when it took it away from them. Nothing to keep when no user with grants acts (the engine's
    own work, the command line, an API token of a group's own)."""

    user_id: str | None

    @classmethod
    def before(cls, tx: Tx) -> KeepOwnAdministration:
        grants = tx.actor.grants if tx.actor is not None else None
        user_id = grants.user_id if grants is not None else None
        if user_id is None:
            return cls(None)
        store.lock_user(tx.conn, user_id)
        return cls(user_id if _administers(tx, user_id) else None)

    def after(self, tx: Tx, field: str) -> None:
        if self.user_id is None or _administers(tx, self.user_id):
            return
        raise OwnAdministration(
            f"'{self.user_id}' cannot take their own administration away: after this change "
            f"they would no longer hold ALL on {RESOURCE_NAMES[ResourceType.AUTHORIZATION]} "
            "(as the admin group grants it); another administrator can make this change",
            field=field,
        )


@dataclass(frozen=True)
class IdentityChanged(Result):
    """What a command changed: the entity and its id; `changed` False when it was so already
    (a membership added twice, one removed that was not there: nothing written, not audited)."""

    entity: str
    id: str
    changed: bool = True


def _refuse_no_admin(tx: Tx, leaving: Iterable[tuple[str, str]]) -> None:
    """Refuse when removing the (admin group, user) memberships `leaving` leaves no admin."""
    memberships = store.admin_memberships(tx.conn)
    gone = set(leaving)
    if memberships and not {user for group, user in memberships - gone}:
        raise LastAdmin("this would leave no user in an admin group; make another user admin first")


def admin_memberships_of(tx: Tx, user_id: str) -> set[tuple[str, str]]:
    """The user's memberships of admin groups (all of them locked)."""
    return {(g, u) for g, u in store.admin_memberships(tx.conn) if u == user_id}


def refuse_demoting_last_admin(tx: Tx, user_id: str) -> None:
    """Refuse a change that takes `user_id` out of every admin group when no other user is in
    one (for engine/commands/accounts.py: deleting a user, changing their role)."""
    _refuse_no_admin(tx, admin_memberships_of(tx, user_id))


def checked_id(value: str, field: str, what: str) -> str:
    if not valid_name(value) or value != value.strip():
        raise BadRequest(f"{what} needs an id without surrounding spaces", field=field)
    return value


def _password(password: str, field: str = "password") -> str:
    if len(password) < MIN_PASSWORD:
        raise BadRequest(f"a password needs at least {MIN_PASSWORD} characters", field=field)
    return password


def record_change(
    tx: Tx, operation: AuditOperation, entity: AuditEntity, entity_id: str, **fields: Any
) -> IdentityChanged:
    audit.record(tx, operation, entity, entity_id=entity_id, **fields)
    return IdentityChanged(entity.value, entity_id)


def _profile(user: UserRow) -> dict[str, str | None]:
    return {"firstName": user.first_name, "lastName": user.last_name, "email": user.email}


def _user(tx: Tx, user_id: str) -> UserRow:
    found = store.lock_user(tx.conn, user_id) if valid_name(user_id) else None
    if found is None:
        raise NotFound(f"User with id {user_id} does not exist", field="userId")
    return found


# -- users ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateUserProfile:
    """A new user with a profile and, if given, a password. They act with no role until they
    join a built-in group."""

    name: ClassVar[str] = "CreateUserProfile"
    permits: ClassVar[tuple[Permit, ...]] = (CREATE_USER,)
    result_type: ClassVar[type[Result]] = IdentityChanged

    user_id: str
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    password: str | None = dataclasses.field(default=None, repr=False)

    def execute(self, tx: Tx) -> IdentityChanged:
        user = UserRow(
            checked_id(self.user_id, "id", "a user"), self.first_name, self.last_name, self.email
        )
        if self.password is not None:
            _password(self.password)
        if not store.insert_user(tx.conn, user):
            raise Conflict(f"The user with id '{user.id}' already exists", field="id")
        if self.password is not None:
            account_store.insert_credential(
                tx.conn, user.id, PASSWORD, hash_password(self.password), user_id=user.id
            )
        return record_change(
            tx, AuditOperation.CREATE, AuditEntity.USER, user.id, after=_profile(user)
        )


@dataclass(frozen=True)
class UpdateUserProfile:
    name: ClassVar[str] = "UpdateUserProfile"
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_OWN_USER,)
    permit_ids: ClassVar[dict[On, str]] = {On.USER: "user_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    user_id: str
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None

    def execute(self, tx: Tx) -> IdentityChanged:
        before = _user(tx, self.user_id)
        after = UserRow(before.id, self.first_name, self.last_name, self.email)
        store.update_user(tx.conn, after)
        return record_change(
            tx,
            AuditOperation.UPDATE,
            AuditEntity.USER,
            before.id,
            property="profile",
            before=_profile(before),
            after=_profile(after),
        )


@dataclass(frozen=True)
class DeleteUser:
    """Delete a user with their password, tokens, sessions, memberships and authorizations."""

    name: ClassVar[str] = "DeleteUser"
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_USER,)
    permit_ids: ClassVar[dict[On, str]] = {On.USER: "user_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    user_id: str

    def execute(self, tx: Tx) -> IdentityChanged:
        keep = KeepOwnAdministration.before(tx)
        user = _user(tx, self.user_id)
        refuse_demoting_last_admin(tx, user.id)
        account_store.delete_user(tx.conn, user.id)
        keep.after(tx, "id")
        return record_change(
            tx, AuditOperation.DELETE, AuditEntity.USER, user.id, before=_profile(user)
        )


@dataclass(frozen=True)
class SetUserPassword:
    """Give a user a new password; every session of theirs ends. `actor` changing it gives
    their own current password as `actor_password` (Camunda's authenticatedUserPassword):
    required when they change their own, checked whenever given."""

    name: ClassVar[str] = "SetUserPassword"
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_OWN_USER,)
    permit_ids: ClassVar[dict[On, str]] = {On.USER: "user_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    user_id: str
    password: str = dataclasses.field(repr=False)
    actor: str | None = None
    actor_password: str | None = dataclasses.field(default=None, repr=False)

    def execute(self, tx: Tx) -> IdentityChanged:
        user = _user(tx, self.user_id)
        _password(self.password)
        if self.actor is not None and (self.actor_password is not None or self.actor == user.id):
            stored = account_store.password_hash(tx.conn, self.actor)
            record = (
                PasswordRecord(UUID(int=0), self.actor, Role.VIEWER, stored) if stored else None
            )
            if not check_password(self.actor_password or "", record):
                raise BadRequest(
                    "The given authenticated user password is not valid",
                    field="authenticatedUserPassword",
                )
        secret = hash_password(self.password)
        if not account_store.update_password(tx.conn, user.id, secret):
            account_store.insert_credential(tx.conn, user.id, PASSWORD, secret, user_id=user.id)
        return record_change(
            tx, AuditOperation.UPDATE, AuditEntity.USER, user.id, property="password"
        )


@dataclass(frozen=True)
class UnlockUser:
    """Let a user whose log-ins were refused after failures try again (the failures are counted
    by the server, which forgets the user's once this commits)."""

    name: ClassVar[str] = "UnlockUser"
    permits: ClassVar[tuple[Permit, ...]] = (ADMINISTER,)
    result_type: ClassVar[type[Result]] = IdentityChanged

    user_id: str

    def execute(self, tx: Tx) -> IdentityChanged:
        user = _user(tx, self.user_id)
        return record_change(tx, AuditOperation.UNLOCK, AuditEntity.USER, user.id)


# -- groups and memberships ----------------------------------------------------------------------


def _group(tx: Tx, group_id: str) -> GroupRow:
    found = store.lock_group(tx.conn, group_id) if valid_name(group_id) else None
    if found is None:
        raise NotFound(f"Group with id {group_id} does not exist", field="groupId")
    return found


def _group_fields(group: GroupRow) -> dict[str, str | None]:
    return {"name": group.name, "type": group.type}


@dataclass(frozen=True)
class CreateGroup:
    name: ClassVar[str] = "CreateGroup"
    permits: ClassVar[tuple[Permit, ...]] = (CREATE_GROUP,)
    result_type: ClassVar[type[Result]] = IdentityChanged

    group_id: str
    group_name: str | None = None
    group_type: str | None = None

    def execute(self, tx: Tx) -> IdentityChanged:
        group = GroupRow(
            checked_id(self.group_id, "id", "a group"), self.group_name, self.group_type
        )
        if not store.insert_group(tx.conn, group):
            raise Conflict(f"The group with id '{group.id}' already exists", field="id")
        return record_change(
            tx, AuditOperation.CREATE, AuditEntity.GROUP, group.id, after=_group_fields(group)
        )


@dataclass(frozen=True)
class UpdateGroup:
    """Change a group's name and type; a built-in group's stay as they are."""

    name: ClassVar[str] = "UpdateGroup"
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_GROUP,)
    permit_ids: ClassVar[dict[On, str]] = {On.GROUP: "group_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    group_id: str
    group_name: str | None = None
    group_type: str | None = None

    def execute(self, tx: Tx) -> IdentityChanged:
        before = _group(tx, self.group_id)
        after = GroupRow(before.id, self.group_name, self.group_type)
        if before.id in BUILTIN_ROLES and after != before:
            raise BadRequest(
                f"the built-in group '{before.id}' cannot be renamed or retyped", field="name"
            )
        store.update_group(tx.conn, after)
        return record_change(
            tx,
            AuditOperation.UPDATE,
            AuditEntity.GROUP,
            before.id,
            before=_group_fields(before),
            after=_group_fields(after),
        )


@dataclass(frozen=True)
class DeleteGroup:
    """Delete a group with its memberships, tokens and authorizations; not a built-in one."""

    name: ClassVar[str] = "DeleteGroup"
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_GROUP,)
    permit_ids: ClassVar[dict[On, str]] = {On.GROUP: "group_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    group_id: str

    def execute(self, tx: Tx) -> IdentityChanged:
        keep = KeepOwnAdministration.before(tx)
        group = _group(tx, self.group_id)
        if group.id in BUILTIN_ROLES:
            raise BadRequest(f"the built-in group '{group.id}' cannot be deleted", field="id")
        store.delete_group(tx.conn, group.id)
        keep.after(tx, "id")
        return record_change(
            tx, AuditOperation.DELETE, AuditEntity.GROUP, group.id, before=_group_fields(group)
        )


@dataclass(frozen=True)
class AddGroupMember:
    name: ClassVar[str] = "AddGroupMember"
    permits: ClassVar[tuple[Permit, ...]] = (ADD_GROUP_MEMBER,)
    permit_ids: ClassVar[dict[On, str]] = {On.GROUP: "group_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    group_id: str
    user_id: str

    def execute(self, tx: Tx) -> IdentityChanged:
        group = _group(tx, self.group_id)
        if not valid_name(self.user_id) or not store.user_exists(tx.conn, self.user_id):
            raise NotFound(f"User with id {self.user_id} does not exist", field="userId")
        if not store.insert_membership(tx.conn, group.id, self.user_id):
            return IdentityChanged(AuditEntity.GROUP_MEMBERSHIP.value, group.id, changed=False)
        return record_change(
            tx,
            AuditOperation.CREATE,
            AuditEntity.GROUP_MEMBERSHIP,
            group.id,
            property="userId",
            after=self.user_id,
        )


@dataclass(frozen=True)
class RemoveGroupMember:
    """Take a user out of a group; not the last admin out of the last admin group."""

    name: ClassVar[str] = "RemoveGroupMember"
    permits: ClassVar[tuple[Permit, ...]] = (REMOVE_GROUP_MEMBER,)
    permit_ids: ClassVar[dict[On, str]] = {On.GROUP: "group_id"}
    result_type: ClassVar[type[Result]] = IdentityChanged

    group_id: str
    user_id: str

    def execute(self, tx: Tx) -> IdentityChanged:
        keep = KeepOwnAdministration.before(tx)
        group = _group(tx, self.group_id)
        if group.id in ADMIN_GROUPS:
            _refuse_no_admin(tx, [(group.id, self.user_id)])
        if not store.delete_membership(tx.conn, group.id, self.user_id):
            return IdentityChanged(AuditEntity.GROUP_MEMBERSHIP.value, group.id, changed=False)
        keep.after(tx, "userId")
        return record_change(
            tx,
            AuditOperation.DELETE,
            AuditEntity.GROUP_MEMBERSHIP,
            group.id,
            property="userId",
            before=self.user_id,
        )
