"""Transaction subprocesses: cancelling one from a cancel end event inside it.

A token that reaches a cancel end event cancels the transaction it is directly in (the model
guarantees where a cancel end event stands and that its transaction has one cancel boundary
event): the transaction's other live work in that run (tokens, joins, the starts of its event
subprocesses) ends, as Camunda's cancel end event interrupts its flow scope; then every
completed compensable activity of the run is compensated, newest first, each once (the rows of
engine/semantics/compensation.py); the token waits at the cancel end event while the handlers
run, as Camunda's activity-instance tree shows it. When no handler is live any more (at once when
there was nothing to compensate; in a later command or job when a handler waits or is
asynchronous) the cancel end event's visit completes and the cancel boundary event triggers on
the transaction (on a multi-instance transaction's body), which ends the transaction and sends a
token along the boundary's flow. A transaction that completes normally compensates nothing: what
completed inside it stays compensable from outside, as for an embedded subprocess.
"""

from __future__ import annotations

from engine.core.runtime import Token
from engine.model import BoundaryEvent, EndEvent, Node, Transaction
from engine.semantics import conditions
from engine.semantics.compensation import CompensationMoves, rows_in
from engine.states import TokenMode, TokenState, VisitState


class TransactionMoves(CompensationMoves):
    def _end(self, token: Token, node: EndEvent) -> None:
        if node.cancel:
            self._cancel(token, node)
            return
        super()._end(token, node)

    def _cancel(self, token: Token, event: EndEvent) -> None:
        """`token` reached the cancel end event `event`: end the transaction's other work,
        compensate what completed in it, then leave by the cancel boundary event."""
        assert token.scope_id is not None  # a cancel end event is inside a transaction
        scope = self.run.tokens[token.scope_id]
        for other in self.run.live_in_scope(scope.id):
            if other.id != token.id:
                self._kill(other)
        for key in self.run.joins_in_scope(str(scope.id)):
            self._delete_join(key)
        self._close_scope_events(scope.id)
        conditions.close_scope(self, scope.id)
        started = 0
        for row in reversed(rows_in(self.run, str(scope.id))):
            started += self._compensate(row, token, iteration=False)
        if started:
            self.run.emit("compensation.thrown", token)
            self._wait(token)
            return
        self._cancelled(token, event)

    def _cancelled(self, token: Token, event: EndEvent) -> None:
        """The cancelled transaction's compensation is over: the cancel end event's visit
        completes and the transaction leaves through its cancel boundary event."""
        self.scripts.execution_event(token, event, "end")
        self._close_visit(token, VisitState.COMPLETED)
        token.move_to(TokenState.COMPLETED, self.run.now)
        scope = self.run.tokens[token.scope_id] if token.scope_id is not None else None
        assert scope is not None
        owner = self._host_of(scope) or scope  # a multi-instance transaction: its body
        transaction = self.model.node(owner.node_id)
        assert isinstance(transaction, Transaction)
        boundary = _cancel_boundary(self.model.boundary_events(transaction.id))
        self._trigger_boundary(boundary, owner)

    def _ended(self, token: Token) -> None:
        super()._ended(token)
        if token.mode != TokenMode.COMPENSATION or token.parent_id is None:
            return
        thrower = self.run.tokens.get(token.parent_id)
        if thrower is None or thrower.state is not TokenState.WAITING:
            return
        event = self.model.node(thrower.node_id)
        if not _is_cancel_end(event):
            return
        if any(t.parent_id == thrower.id and t.is_live for t in self.run.tokens.values()):
            return
        assert isinstance(event, EndEvent)
        thrower.move_to(TokenState.EXECUTING, self.run.now)
        self._cancelled(thrower, event)


def _is_cancel_end(node: Node) -> bool:
    return isinstance(node, EndEvent) and node.cancel


def _cancel_boundary(boundaries: tuple[BoundaryEvent, ...]) -> BoundaryEvent:
    [boundary] = [b for b in boundaries if b.is_cancel]  # see engine/model/validation.py
    return boundary
