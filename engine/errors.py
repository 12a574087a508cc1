"""The error contract: one base error with a stable code; invariant violations carry a kind."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class InterlockError(Exception):
    """Base of every error the engine raises on purpose. `code` is stable and machine-readable."""

    code = "InterlockError"

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.code, "message": self.message, "detail": self.detail}


class NotFound(InterlockError):
    code = "NotFound"


class BadRequest(InterlockError):
    """The caller sent something the engine cannot act on (a wrong type, an unknown name)."""

    code = "BadRequest"


class Conflict(InterlockError):
    """The request is valid but the current state does not allow it (suspended instance, ...)."""

    code = "Conflict"


class Forbidden(InterlockError):
    """The caller may not do this (HTTP answers 403)."""

    code = "Forbidden"


@dataclass(frozen=True)
class MissingAuthorization:
    """One permission that would have allowed a refused command: its name, the resource type's
    name (Camunda's: "ProcessInstance") and the resource id (`*`: every one)."""

    permission: str
    resource_type: str
    resource_id: str

    def to_dict(self) -> dict[str, str]:
        return {
            "permission": self.permission,
            "resource_type": self.resource_type,
            "resource_id": self.resource_id,
        }


class AuthorizationDenied(Forbidden):
    """A command's actor holds none of the permissions that would allow it (engine/core/
    permits.py); raised inside the command's transaction, so nothing was written. `missing`
    is a disjunction: any one of them would have done."""

    def __init__(self, user_id: str, missing: tuple[MissingAuthorization, ...]) -> None:
        wanted = " or ".join(
            f"'{m.permission}' permission on resource '{m.resource_id}' of type '{m.resource_type}'"
            for m in missing
        )
        super().__init__(
            f"The user with id '{user_id}' does not have one of the following permissions: "
            f"{wanted}.",
            user_id=user_id,
            missing=[m.to_dict() for m in missing],
        )
        self.user_id = user_id
        self.missing = missing

    @property
    def plain(self) -> str:
        """The refusal in an operator's words."""
        wanted = ", or ".join(
            f"{m.permission} on {_plain_resource(m.resource_type, m.resource_id)}"
            for m in self.missing
        )
        return f"You may not do this. It needs {wanted}: an administrator can grant it."


def _plain_resource(resource_type: str, resource_id: str) -> str:
    words = "".join(f" {c.lower()}" if c.isupper() else c for c in resource_type).strip()
    if resource_id == "*":
        return f"every {words}"
    return f"{words} '{resource_id}'"


class Suspended(Conflict):
    """The instance or definition a command would act on is suspended: its tokens wait, and a
    suspended definition starts nothing, until it is activated (Camunda's
    SuspendedEntityInteractionException)."""

    code = "Suspended"


class InstanceEnded(Conflict):
    """The instance a command would change has ended (completed or terminated): a conflict like
    any other, that a surface which forgets ended instances may answer as one it does not know."""


class IdempotencyKeyReused(InterlockError):
    """An idempotency key the caller already used for a different request: the first request's
    result is not this request's answer, and running this one would break the key's promise."""

    code = "IdempotencyKeyReused"


class ModelError(InterlockError):
    """A BPMN file or built model the engine refuses to deploy. Names file, line and element."""

    code = "ModelError"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        element_id: str | None = None,
    ) -> None:
        where = ", ".join(
            part
            for part in (
                file,
                f"line {line}" if line is not None else None,
                f"element '{element_id}'" if element_id else None,
            )
            if part
        )
        super().__init__(
            f"{where}: {message}" if where else message,
            file=file,
            line=line,
            element_id=element_id,
        )
        self.file = file
        self.line = line
        self.element_id = element_id


class ExpressionError(InterlockError):
    """An expression that does not compile (at deploy) or cannot be evaluated (at run time)."""

    code = "ExpressionError"


class HandlerError(InterlockError):
    """A service-task handler raised; the command that ran it was rolled back."""

    code = "HandlerError"


class DatabaseUnavailable(InterlockError):
    """The database cannot be reached (down, restarting, failing over): nothing was done, and the
    same request may succeed once it is back (HTTP answers 503 with Retry-After)."""

    code = "DatabaseUnavailable"


class NoMatchingFlow(InterlockError):
    """An exclusive or inclusive gateway found no condition true and has no default flow."""

    code = "NoMatchingFlow"


class InvariantViolationKind(StrEnum):
    TOKEN_FINALIZED_TWICE = "TokenFinalizedTwice"
    JOIN_INCOMPLETE = "JoinIncomplete"
    EXTERNAL_TASK_LEASE_CONFLICT = "ExternalTaskLeaseConflict"
    TOKEN_INVALID_TRANSITION = "TokenInvalidTransition"
    TOKEN_CLAIM_CONFLICT = "TokenClaimConflict"
    STALE_WRITE = "StaleWrite"
    INSTANCE_INVALID_TRANSITION = "InstanceInvalidTransition"


# The SQLSTATE of interlock_expect_rows(): a write found rows changed underneath its command.
STALE_WRITE_SQLSTATE = "IL409"


class InvariantViolation(InterlockError):
    """The operation would break an engine invariant and was rejected; nothing was written."""

    code = "InvariantViolation"

    def __init__(self, kind: InvariantViolationKind, message: str, **detail: Any) -> None:
        super().__init__(message, kind=kind.value, **detail)
        self.kind = kind


class NeedsTransaction(Exception):
    """An optimistic attempt (see engine/core/executor.py) reached work that must run inside a
    transaction, such as a service-task handler, which may write with the command's connection.
    The executor runs the command again under the instance lock; the caller never sees this."""


class BpmnError(Exception):
    """Raised by a handler (or reported by a worker) to throw a BPMN error with `code`: a business
    outcome that a boundary error event or an error event subprocess may catch, not a failure."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.code = code
        self.message = message
