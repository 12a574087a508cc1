"""The token state machine, in one place (no database)."""

from __future__ import annotations

import itertools

import pytest

from engine.errors import InvariantViolation, InvariantViolationKind
from engine.states import TOKEN_TRANSITIONS, TokenState, check_token_transition

ALLOWED = {(a, b) for a, targets in TOKEN_TRANSITIONS.items() for b in targets}


@pytest.mark.parametrize("current,target", sorted(ALLOWED))
def test_allowed_transitions(current: TokenState, target: TokenState) -> None:
    check_token_transition("t", current, target)


@pytest.mark.parametrize(
    "current,target",
    sorted(set(itertools.product(TokenState, TokenState)) - ALLOWED),
)
def test_every_other_transition_is_rejected_with_its_kind(
    current: TokenState, target: TokenState
) -> None:
    with pytest.raises(InvariantViolation) as caught:
        check_token_transition("t", current, target)
    expected = (
        InvariantViolationKind.TOKEN_FINALIZED_TWICE
        if current.is_final and target.is_final
        else InvariantViolationKind.TOKEN_INVALID_TRANSITION
    )
    assert caught.value.kind is expected


def test_completed_to_executing_is_an_invalid_transition() -> None:
    with pytest.raises(InvariantViolation) as caught:
        check_token_transition("t", TokenState.COMPLETED, TokenState.EXECUTING)
    assert caught.value.kind is InvariantViolationKind.TOKEN_INVALID_TRANSITION
    assert "Completed" in caught.value.message
