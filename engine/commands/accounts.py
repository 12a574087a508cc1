"""Every change to credentials (users, API tokens) and console sessions: an administrator's, a
user logging in and out, a user the OpenID provider vouches for (`SignInExternal`), the first
start's admin, a session marked seen. Each runs in its own
transaction with its audit entry (engine/core/audit.py: written when someone acts, as for every
command). Secrets never reach an audit entry, a result or a command's repr."""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.identity import KeepOwnAdministration, refuse_demoting_last_admin
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import (
    ADMINISTER,
    ADMINISTER_INTO_GROUP,
    CREATE_USER_IN_GROUP,
    DELETE_USER,
    ENGINE_WORK,
    UPDATE_OWN_USER,
    On,
    Permit,
    check,
)
from engine.errors import BadRequest, Conflict, NotFound
from engine.identity.accounts import (
    MIN_PASSWORD,
    NewSession,
    Role,
    hash_password,
    token_hash,
    valid_name,
)
from engine.states import AuditEntity, AuditOperation
from engine.store import accounts as store
from engine.store import identity as identity_store
from engine.store.identity import UserRow

PASSWORD = "password"
TOKEN = "token"
# The credentials a first start creates (see `CreateFirstAdmin`).
FIRST_ADMIN = "admin"
FIRST_ADMIN_TOKEN = "admin-token"


@dataclass(frozen=True)
class CredentialResult(Result):
    kind: str
    name: str


def _value(found: tuple[Role | None]) -> str | None:
    return found[0].value if found[0] is not None else None


def _entity(kind: str) -> AuditEntity:
    return AuditEntity.USER if kind == PASSWORD else AuditEntity.API_TOKEN


def _missing(kind: str, name: str) -> NotFound:
    return NotFound(f"no {'user' if kind == PASSWORD else 'token'} named '{name}'")


def _record(
    tx: Tx, operation: AuditOperation, kind: str, name: str, **fields: Any
) -> CredentialResult:
    audit.record(tx, operation, _entity(kind), entity_id=name, **fields)
    return CredentialResult(kind, name)


def _add_user(tx: Tx, name: str, role: Role, password: str) -> None:
    if not valid_name(name) or len(password) < MIN_PASSWORD:
        raise BadRequest(
            f"a user needs a name and a password of at least {MIN_PASSWORD} characters"
        )
    if not identity_store.insert_user(tx.conn, UserRow(name, None, None, None)):
        raise Conflict(f"user '{name}' already exists")
    store.insert_credential(tx.conn, name, PASSWORD, hash_password(password), user_id=name)
    identity_store.insert_membership(tx.conn, role.value, name)


def _add_token(tx: Tx, label: str, role: Role, token: str) -> None:
    """A token of its own group: the built-in group of `role`."""
    if not store.insert_credential(tx.conn, label, TOKEN, token_hash(token), group_id=role.value):
        raise Conflict(f"a token named '{label}' already exists")


@dataclass(frozen=True)
class CreateUser:
    name: ClassVar[str] = "CreateUser"
    permits: ClassVar[tuple[Permit, ...]] = (CREATE_USER_IN_GROUP,)
    permit_ids: ClassVar[dict[On, str]] = {On.GROUP: "role"}  # the role's built-in group
    result_type: ClassVar[type[Result]] = CredentialResult

    user: str
    role: Role
    password: str = dataclasses.field(repr=False)

    def execute(self, tx: Tx) -> CredentialResult:
        _add_user(tx, self.user, self.role, self.password)
        return _record(
            tx, AuditOperation.CREATE, PASSWORD, self.user, property="role", after=self.role.value
        )


@dataclass(frozen=True)
class CreateToken:
    """Keep `token` (made by `accounts.new_token`, shown to its creator once) under `label`."""

    name: ClassVar[str] = "CreateToken"
    permits: ClassVar[tuple[Permit, ...]] = (ADMINISTER_INTO_GROUP,)
    permit_ids: ClassVar[dict[On, str]] = {On.GROUP: "role"}  # the token's built-in group
    result_type: ClassVar[type[Result]] = CredentialResult

    label: str
    role: Role
    token: str = dataclasses.field(repr=False)

    def execute(self, tx: Tx) -> CredentialResult:
        _add_token(tx, self.label, self.role, self.token)
        return _record(
            tx, AuditOperation.CREATE, TOKEN, self.label, property="role", after=self.role.value
        )


@dataclass(frozen=True)
class CreateOwnToken:
    """Keep `token` (made by `accounts.new_token`, shown once) under `label` as an API token of
    the user `owner`: it acts as that user, with their grants and never more. A user makes their
    own (or whoever may UPDATE that user)."""

    name: ClassVar[str] = "CreateOwnToken"
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_OWN_USER,)
    permit_ids: ClassVar[dict[On, str]] = {On.USER: "owner"}
    result_type: ClassVar[type[Result]] = CredentialResult

    label: str
    owner: str
    token: str = dataclasses.field(repr=False)

    def execute(self, tx: Tx) -> CredentialResult:
        if not valid_name(self.label) or not valid_name(self.owner):
            raise BadRequest("a token needs a label", field="label")
        if identity_store.lock_user(tx.conn, self.owner) is None:
            raise NotFound(f"no user named '{self.owner}'")
        made = store.insert_credential(
            tx.conn, self.label, TOKEN, token_hash(self.token), user_id=self.owner
        )
        if not made:
            raise Conflict(f"a token named '{self.label}' already exists")
        return _record(
            tx, AuditOperation.CREATE, TOKEN, self.label, property="owner", after=self.owner
        )


@dataclass(frozen=True)
class RevokeOwnToken:
    """Delete the API token `label` of the user `owner` (theirs to revoke, or whoever's who may
    UPDATE that user); another token by that label is not touched."""

    name: ClassVar[str] = "RevokeOwnToken"
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_OWN_USER,)
    permit_ids: ClassVar[dict[On, str]] = {On.USER: "owner"}
    result_type: ClassVar[type[Result]] = CredentialResult

    label: str
    owner: str

    def execute(self, tx: Tx) -> CredentialResult:
        if not store.delete_own_token(tx.conn, self.label, self.owner):
            raise NotFound(f"'{self.owner}' has no token named '{self.label}'")
        return _record(
            tx, AuditOperation.DELETE, TOKEN, self.label, property="owner", before=self.owner
        )


@dataclass(frozen=True)
class FirstAdmin(Result):
    # False: some credential existed already; nothing was created.
    created: bool


@dataclass(frozen=True)
class CreateFirstAdmin:
    """A first start's credentials, while there are none: the admin user `admin` with
    `password`, and the admin API token `admin-token` (made by `accounts.new_token`)."""

    name: ClassVar[str] = "CreateFirstAdmin"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = FirstAdmin

    password: str = dataclasses.field(repr=False)
    token: str = dataclasses.field(repr=False)

    def execute(self, tx: Tx) -> FirstAdmin:
        if store.count(tx.conn) > 0:
            return FirstAdmin(False)
        _add_user(tx, FIRST_ADMIN, Role.ADMIN, self.password)
        _record(tx, AuditOperation.CREATE, PASSWORD, FIRST_ADMIN, property="role", after="admin")
        _add_token(tx, FIRST_ADMIN_TOKEN, Role.ADMIN, self.token)
        _record(tx, AuditOperation.CREATE, TOKEN, FIRST_ADMIN_TOKEN, property="role", after="admin")
        return FirstAdmin(True)


@dataclass(frozen=True)
class DeleteCredential:
    """Delete a user (their sessions and saved views go with them) or an API token."""

    name: ClassVar[str] = "DeleteCredential"
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_USER, ADMINISTER)
    result_type: ClassVar[type[Result]] = CredentialResult

    kind: str
    label: str

    def execute(self, tx: Tx) -> CredentialResult:
        # A user: DELETE on them; an API token (no resource of Camunda's): an administrator's.
        if self.kind == PASSWORD:
            check(tx, DELETE_USER, user=self.label)
        else:
            check(tx, ADMINISTER)
        keep = KeepOwnAdministration.before(tx)
        found = store.lock_role(tx.conn, self.kind, self.label)
        if found is not None and self.kind == PASSWORD:
            refuse_demoting_last_admin(tx, self.label)
        if found is None or not store.delete_credential(tx.conn, self.kind, self.label):
            raise _missing(self.kind, self.label)
        keep.after(tx, "name")
        return _record(
            tx, AuditOperation.DELETE, self.kind, self.label, property="role", before=_value(found)
        )


@dataclass(frozen=True)
class SetRole:
    """Change a credential's role; a user's sessions act with it from their next request."""

    name: ClassVar[str] = "SetRole"
    permits: ClassVar[tuple[Permit, ...]] = (ADMINISTER_INTO_GROUP,)
    permit_ids: ClassVar[dict[On, str]] = {On.GROUP: "role"}  # the built-in group it joins
    result_type: ClassVar[type[Result]] = CredentialResult

    kind: str
    label: str
    role: Role

    def execute(self, tx: Tx) -> CredentialResult:
        keep = KeepOwnAdministration.before(tx)
        before = store.lock_role(tx.conn, self.kind, self.label)
        if before is not None and self.kind == PASSWORD and self.role is not Role.ADMIN:
            refuse_demoting_last_admin(tx, self.label)
        if before is None or not store.update_role(tx.conn, self.kind, self.label, self.role):
            raise _missing(self.kind, self.label)
        keep.after(tx, "role")
        return _record(
            tx,
            AuditOperation.UPDATE,
            self.kind,
            self.label,
            property="role",
            before=_value(before),
            after=self.role.value,
        )


@dataclass(frozen=True)
class SetPassword:
    """Give a user a new password; every session of theirs ends."""

    name: ClassVar[str] = "SetPassword"
    # Camunda grants each user UPDATE on themselves: their own password is theirs to change.
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_OWN_USER,)
    result_type: ClassVar[type[Result]] = CredentialResult

    user: str
    password: str = dataclasses.field(repr=False)

    def execute(self, tx: Tx) -> CredentialResult:
        if len(self.password) < MIN_PASSWORD:
            raise BadRequest(f"a password needs at least {MIN_PASSWORD} characters")
        check(tx, UPDATE_OWN_USER, user=self.user)
        if not store.update_password(tx.conn, self.user, hash_password(self.password)):
            raise _missing(PASSWORD, self.user)
        return _record(tx, AuditOperation.UPDATE, PASSWORD, self.user, property="password")


@dataclass(frozen=True)
class ExternalUser(Result):
    credential_id: UUID
    user: str
    role: Role
    # True: first sign-in, the user was created now. `changed`: their role was brought in line.
    created: bool
    changed: bool


# The longest user name a provider's claim may give.
MAX_EXTERNAL_NAME = 200


@dataclass(frozen=True)
class SignInExternal:
    """A user the OpenID provider vouches for (app/oidc.py checked its token): created on their
    first sign-in with the profile from the token and no usable password (the hash of a random
    one nobody is told), else their profile updated with what the token carries; either way
    their role (the built-in group they are in) brought in line with what their provider
    groups map to. A local password they have is kept. Audited as their own action: the
    creation (role, provider, subject and profile), a change of role or profile; nothing when
    nothing changed (a console log-in's session is audited by `StartSession`)."""

    name: ClassVar[str] = "SignInExternal"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = ExternalUser

    user: str
    role: Role
    issuer: str
    subject: str
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None

    def execute(self, tx: Tx) -> ExternalUser:
        if not valid_name(self.user) or len(self.user) > MAX_EXTERNAL_NAME:
            raise BadRequest(
                f"the provider's user name must be 1 to {MAX_EXTERNAL_NAME} characters without NUL"
            )
        profile = UserRow(self.user, self.first_name, self.last_name, self.email)
        found = store.lock_user(tx.conn, self.user)
        created = False
        if found is None:
            # False: the person exists already (without a password), or a concurrent first
            # sign-in of the same user committed meanwhile.
            created = identity_store.insert_user(tx.conn, profile)
            unusable = hash_password(secrets.token_urlsafe(32))
            store.insert_credential(tx.conn, self.user, PASSWORD, unusable, user_id=self.user)
            found = store.lock_user(tx.conn, self.user)
            if found is None:
                raise Conflict(f"user '{self.user}' was deleted while signing in")
        credential_id, before = found
        changed = before is not self.role
        if changed:
            store.update_role(tx.conn, PASSWORD, self.user, self.role)
        provider = {"provider": self.issuer, "subject": self.subject}
        if created:
            known = {
                "first_name": self.first_name,
                "last_name": self.last_name,
                "email": self.email,
            }
            audit.record(
                tx,
                AuditOperation.CREATE,
                AuditEntity.USER,
                entity_id=self.user,
                property="role",
                after=self.role.value,
                details=provider | {k: v for k, v in known.items() if v},
            )
            return ExternalUser(credential_id, self.user, self.role, True, False)
        self._update_profile(tx, profile, provider)
        if changed:
            audit.record(
                tx,
                AuditOperation.UPDATE,
                AuditEntity.USER,
                entity_id=self.user,
                property="role",
                before=before.value if before else None,
                after=self.role.value,
                details=provider,
            )
        return ExternalUser(credential_id, self.user, self.role, False, changed)

    def _update_profile(self, tx: Tx, sent: UserRow, provider: dict[str, str]) -> None:
        """Take the names and e-mail the provider sent (what it did not send is kept)."""
        current = identity_store.lock_user(tx.conn, self.user)
        if current is None:
            return
        merged = UserRow(
            self.user,
            sent.first_name or current.first_name,
            sent.last_name or current.last_name,
            sent.email or current.email,
        )
        if merged == current:
            return
        identity_store.update_user(tx.conn, merged)
        audit.record(
            tx,
            AuditOperation.UPDATE,
            AuditEntity.USER,
            entity_id=self.user,
            property="profile",
            before=dataclasses.asdict(current),
            after=dataclasses.asdict(merged),
            details=provider,
        )


# -- console sessions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionStarted(Result):
    # False: the user was deleted since their password was checked; no session was kept.
    started: bool


@dataclass(frozen=True)
class StartSession:
    """Log a password user in: keep `session` (made by `accounts.new_session`; its cookie is
    known to the browser alone) for them, and forget every session that has run out. Audited as
    the user's own action, under the session's id."""

    name: ClassVar[str] = "StartSession"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = SessionStarted

    credential_id: UUID
    user: str
    session: NewSession = dataclasses.field(repr=False)
    max_seconds: float
    idle_seconds: float
    client_address: str | None = None
    user_agent: str | None = None

    def execute(self, tx: Tx) -> SessionStarted:
        started = store.insert_session(
            tx.conn,
            self.session,
            self.credential_id,
            max_seconds=self.max_seconds,
            idle_seconds=self.idle_seconds,
            client_address=self.client_address,
            user_agent=self.user_agent,
        )
        if started:
            details: dict[str, Any] = {"started": 1, "session": str(self.session.id)}
            if self.client_address:
                details["client_address"] = self.client_address
            audit.record(
                tx,
                AuditOperation.UPDATE,
                AuditEntity.USER,
                entity_id=self.user,
                property="sessions",
                details=details,
            )
        return SessionStarted(started)


@dataclass(frozen=True)
class SessionTouched(Result):
    pass


@dataclass(frozen=True)
class TouchSession:
    """Mark a live session seen now, which pushes its idle timeout back. A request does this
    only when the last mark is old (see app/auth.py), not on every request; nobody's action, so
    not audited."""

    name: ClassVar[str] = "TouchSession"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = SessionTouched
    one_statement: ClassVar[bool] = True

    session_id: UUID

    def execute(self, tx: Tx) -> SessionTouched:
        store.touch_session(tx.conn, self.session_id)
        return SessionTouched()


@dataclass(frozen=True)
class SessionsEnded(Result):
    ended: int


@dataclass(frozen=True)
class EndSessions:
    """End the console sessions of a user (but `keep`), or the one session `session_id`: an
    admin ending them, or a user logging out (their own session, the same entry)."""

    name: ClassVar[str] = "EndSessions"
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_OWN_USER,)
    result_type: ClassVar[type[Result]] = SessionsEnded

    user: str | None = None
    session_id: UUID | None = None
    keep: UUID | None = None

    def execute(self, tx: Tx) -> SessionsEnded:
        if self.session_id is not None:
            user = store.lock_session_user(tx.conn, self.session_id)
            if user is None:
                raise NotFound(f"no session with id '{self.session_id}'")
            check(tx, UPDATE_OWN_USER, user=user)
            store.delete_session(tx.conn, self.session_id)  # found and locked above
            ended = 1
        else:
            user = self.user or ""
            check(tx, UPDATE_OWN_USER, user=user)
            found = store.delete_sessions_of(tx.conn, user, keep=self.keep)
            if found is None:
                raise _missing(PASSWORD, user)
            ended = found
        audit.record(
            tx,
            AuditOperation.UPDATE,
            AuditEntity.USER,
            entity_id=user,
            property="sessions",
            details={"ended": ended}
            | ({"session": str(self.session_id)} if self.session_id else {}),
        )
        return SessionsEnded(ended)
