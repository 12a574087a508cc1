"""The token and instance state machines, enforced here and nowhere else."""

from __future__ import annotations

from enum import StrEnum

from engine.errors import InvariantViolation, InvariantViolationKind


class TokenState(StrEnum):
    CREATED = "Created"
    READY = "Ready"
    EXECUTING = "Executing"
    WAITING = "Waiting"
    COMPLETED = "Completed"
    FAILED = "Failed"
    TERMINATED = "Terminated"

    @property
    def is_final(self) -> bool:
        return self in FINAL_TOKEN_STATES


FINAL_TOKEN_STATES = frozenset({TokenState.COMPLETED, TokenState.TERMINATED})

_T = TokenState
TOKEN_TRANSITIONS: dict[TokenState, frozenset[TokenState]] = {
    _T.CREATED: frozenset({_T.READY, _T.TERMINATED}),
    # Ready -> Failed: the job that was to run a parked token ran out of retries.
    _T.READY: frozenset({_T.EXECUTING, _T.FAILED, _T.TERMINATED}),
    # Executing -> Ready parks the token before an asynchronous continuation.
    _T.EXECUTING: frozenset({_T.WAITING, _T.READY, _T.COMPLETED, _T.FAILED, _T.TERMINATED}),
    _T.WAITING: frozenset({_T.EXECUTING, _T.READY, _T.COMPLETED, _T.FAILED, _T.TERMINATED}),
    # A failed path stops with an incident; a retry puts the token back where it waited.
    _T.FAILED: frozenset({_T.READY, _T.WAITING, _T.TERMINATED}),
    _T.COMPLETED: frozenset(),
    _T.TERMINATED: frozenset(),
}


def check_token_transition(token_id: object, current: TokenState, target: TokenState) -> None:
    """Raise the invariant violation that moving `current` -> `target` would be."""
    if target in TOKEN_TRANSITIONS[current]:
        return
    if current.is_final and target.is_final:
        raise InvariantViolation(
            InvariantViolationKind.TOKEN_FINALIZED_TWICE,
            f"token {token_id} is already {current.value} and cannot become {target.value}",
            token_id=str(token_id),
            state=current.value,
        )
    raise InvariantViolation(
        InvariantViolationKind.TOKEN_INVALID_TRANSITION,
        f"token {token_id} cannot move from {current.value} to {target.value}",
        token_id=str(token_id),
        state=current.value,
        target=target.value,
    )


class InstanceState(StrEnum):
    """An open vocabulary: readers must tolerate values added later."""

    CREATED = "Created"
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    COMPLETED = "Completed"
    TERMINATING = "Terminating"
    TERMINATED = "Terminated"

    @property
    def is_final(self) -> bool:
        return self in (InstanceState.COMPLETED, InstanceState.TERMINATED)


class TokenView(StrEnum):
    """How a token looks from outside: the projection `InstanceHandle.tokens()` reports."""

    ALIVE = "Alive"
    WAIT_FOR_EVENT = "WaitForEvent"
    CONSUMED = "Consumed"
    FAILED = "Failed"
    TERMINATED = "Terminated"


def view_of(state: TokenState) -> TokenView:
    if state in (TokenState.CREATED, TokenState.READY, TokenState.EXECUTING):
        return TokenView.ALIVE
    if state is TokenState.WAITING:
        return TokenView.WAIT_FOR_EVENT
    if state is TokenState.FAILED:
        return TokenView.FAILED
    if state is TokenState.TERMINATED:
        return TokenView.TERMINATED
    return TokenView.CONSUMED
