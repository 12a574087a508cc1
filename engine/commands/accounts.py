"""Changes to credentials (users, API tokens) and console sessions made by an administrator,
each audited. Secrets never reach an audit entry, a result or a command's repr."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

from engine import accounts, audit
from engine.accounts import Role
from engine.errors import NotFound
from engine.executor import Result, Tx
from engine.states import AuditEntity, AuditOperation

PASSWORD = "password"
TOKEN = "token"


@dataclass(frozen=True)
class CredentialResult(Result):
    kind: str
    name: str


def _entity(kind: str) -> AuditEntity:
    return AuditEntity.USER if kind == PASSWORD else AuditEntity.API_TOKEN


def _missing(kind: str, name: str) -> NotFound:
    return NotFound(f"no {'user' if kind == PASSWORD else 'token'} named '{name}'")


def _record(
    tx: Tx, operation: AuditOperation, kind: str, name: str, **fields: Any
) -> CredentialResult:
    audit.record(tx, operation, _entity(kind), entity_id=name, **fields)
    return CredentialResult(kind, name)


@dataclass(frozen=True)
class CreateUser:
    name: ClassVar[str] = "CreateUser"
    result_type: ClassVar[type[Result]] = CredentialResult

    user: str
    role: Role
    password: str = dataclasses.field(repr=False)

    def execute(self, tx: Tx) -> CredentialResult:
        accounts.create_password(tx.conn, self.user, self.role, self.password)
        return _record(
            tx, AuditOperation.CREATE, PASSWORD, self.user, property="role", after=self.role.value
        )


@dataclass(frozen=True)
class CreateToken:
    """Keep `token` (made by `accounts.new_token`, shown to its creator once) under `label`."""

    name: ClassVar[str] = "CreateToken"
    result_type: ClassVar[type[Result]] = CredentialResult

    label: str
    role: Role
    token: str = dataclasses.field(repr=False)

    def execute(self, tx: Tx) -> CredentialResult:
        accounts.add_token(tx.conn, self.label, self.role, self.token)
        return _record(
            tx, AuditOperation.CREATE, TOKEN, self.label, property="role", after=self.role.value
        )


@dataclass(frozen=True)
class DeleteCredential:
    """Delete a user (their sessions and saved views go with them) or an API token."""

    name: ClassVar[str] = "DeleteCredential"
    result_type: ClassVar[type[Result]] = CredentialResult

    kind: str
    label: str

    def execute(self, tx: Tx) -> CredentialResult:
        role = accounts.role_of(tx.conn, self.kind, self.label)
        if role is None or not accounts.delete(tx.conn, self.kind, self.label):
            raise _missing(self.kind, self.label)
        return _record(
            tx, AuditOperation.DELETE, self.kind, self.label, property="role", before=role.value
        )


@dataclass(frozen=True)
class SetRole:
    """Change a credential's role; a user's sessions act with it from their next request."""

    name: ClassVar[str] = "SetRole"
    result_type: ClassVar[type[Result]] = CredentialResult

    kind: str
    label: str
    role: Role

    def execute(self, tx: Tx) -> CredentialResult:
        before = accounts.role_of(tx.conn, self.kind, self.label)
        if before is None:
            raise _missing(self.kind, self.label)
        accounts.set_role(tx.conn, self.kind, self.label, self.role)
        return _record(
            tx,
            AuditOperation.UPDATE,
            self.kind,
            self.label,
            property="role",
            before=before.value,
            after=self.role.value,
        )


@dataclass(frozen=True)
class SetPassword:
    """Give a user a new password; every session of theirs ends."""

    name: ClassVar[str] = "SetPassword"
    result_type: ClassVar[type[Result]] = CredentialResult

    user: str
    password: str = dataclasses.field(repr=False)

    def execute(self, tx: Tx) -> CredentialResult:
        if not accounts.set_password(tx.conn, self.user, self.password):
            raise _missing(PASSWORD, self.user)
        return _record(tx, AuditOperation.UPDATE, PASSWORD, self.user, property="password")


@dataclass(frozen=True)
class SessionsEnded(Result):
    ended: int


@dataclass(frozen=True)
class EndSessions:
    """End the console sessions of a user (but `keep`), or the one session `session_id`."""

    name: ClassVar[str] = "EndSessions"
    result_type: ClassVar[type[Result]] = SessionsEnded

    user: str | None = None
    session_id: UUID | None = None
    keep: UUID | None = None

    def execute(self, tx: Tx) -> SessionsEnded:
        if self.session_id is not None:
            user = _session_user(tx, self.session_id)
            if user is None:
                raise NotFound(f"no session with id '{self.session_id}'")
            accounts.end_session(tx.conn, self.session_id)  # found and locked above
            ended = 1
        else:
            user = self.user or ""
            found = accounts.end_sessions_of(tx.conn, user, keep=self.keep)
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


def _session_user(tx: Tx, session_id: UUID) -> str | None:
    row = tx.conn.execute(
        "SELECT c.name FROM console_session s JOIN credential c ON c.id = s.credential_id "
        "WHERE s.id = %s FOR UPDATE OF s",
        (session_id,),
    ).fetchone()
    return str(row[0]) if row else None
