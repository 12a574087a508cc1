"""Run a token that is parked Ready (before an asynchronous continuation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from uuid import UUID

from engine.commands.common import advance, persist, require_running
from engine.commands.loading import load
from engine.core.executor import Result, Tx
from engine.core.permits import ENGINE_WORK, Permit
from engine.errors import InvariantViolation, InvariantViolationKind, NotFound
from engine.states import TokenState, check_token_transition
from engine.store import runs


@dataclass(frozen=True)
class TokenResult(Result):
    token_id: str
    instance_id: str
    instance_state: str


@dataclass(frozen=True)
class ExecuteToken:
    name: ClassVar[str] = "ExecuteToken"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = TokenResult

    token_id: UUID
    # The version the caller read: with it, the claim is a compare-and-swap against that read.
    expected_version: int | None = None

    def execute(self, tx: Tx) -> TokenResult:
        instance_id = runs.instance_of_token(tx.conn, self.token_id)
        if instance_id is None:
            raise NotFound(f"token {self.token_id} does not exist", token_id=str(self.token_id))
        run = load(tx, instance_id, extra_token_ids=[self.token_id])
        token = run.tokens[self.token_id]
        stale = self.expected_version is not None and token.version != self.expected_version
        if token.state.is_final and not stale:
            check_token_transition(token.id, token.state, TokenState.EXECUTING)
        if token.state is not TokenState.READY or stale:
            raise InvariantViolation(
                InvariantViolationKind.TOKEN_CLAIM_CONFLICT,
                f"token {self.token_id} was claimed by another command (now {token.state.value}, "
                f"version {token.version})",
                token_id=str(self.token_id),
                state=token.state.value,
            )
        require_running(run)
        runs.claim_token(tx.conn, token, tx.now)
        advance(tx, run).execute_ready(token)
        persist(tx, run)
        return TokenResult(str(self.token_id), str(instance_id), run.instance.state.value)
