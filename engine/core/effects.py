"""What an instance's advance asks of other instances: effects.

Token semantics (engine/semantics) work on one locked instance and never touch SQL. When a move
reaches beyond its instance (a call activity starts its called instance, a called instance ends
and its caller goes on, a signal is thrown to every instance waiting for it, an error or an
escalation leaves a called instance for its caller), the advance records an effect on its run.
The command layer (engine/commands/family.py) applies the effects in the same transaction, loading
and locking the other instances as it goes (the family's root first), until none is left, and
then writes every instance it touched in one go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID

from engine.language.variables import TypedValue


@dataclass(frozen=True)
class SignalThrown:
    """A signal throw event broadcast `name`: every subscription waiting for it (in this instance
    and in others) and every signal start event receive it."""

    name: str
    variables: Mapping[str, Any] = field(default_factory=dict)
    # The throwing instance's own subscriptions to the signal when it was thrown: only these of
    # its own receive it, as in Camunda, where the throw delivers before its token moves on.
    waiting: frozenset[UUID] = frozenset()


@dataclass(frozen=True)
class ThrownToCaller:
    """A BPMN error or an escalation that no scope of a called instance caught: it is thrown
    again at its caller's token, waiting at the call activity."""

    kind: Literal["error", "escalation"]
    code: str
    message: str = ""


@dataclass(frozen=True)
class CalledInstanceEnds:
    """The token `token_id` waiting at a call activity was ended early (cancelled, interrupted):
    the instance it called, and everything that one called, are terminated."""

    token_id: UUID


@dataclass(frozen=True)
class StartCalled:
    """The token `token_id` arrived at the call activity `activity_id`: an instance of the
    process `key` (the version `binding` picks) starts with `variables` and `business_key`,
    called by that token."""

    token_id: UUID
    activity_id: str
    key: str
    binding: str
    version: int | None
    version_tag: str | None
    variables: Mapping[str, TypedValue]
    business_key: str | None
    # The tenant whose definitions are called (`tenant_id`, None: those of no tenant) when the
    # call activity names one; else (`tenant_given` False) the calling instance's.
    tenant_given: bool = False
    tenant_id: str | None = None


@dataclass(frozen=True)
class CalledCompleted:
    """A called instance completed: its caller's token leaves the call activity, with the
    variables its `camunda:out` mappings copy back."""


Effect = SignalThrown | ThrownToCaller | CalledInstanceEnds | StartCalled | CalledCompleted
