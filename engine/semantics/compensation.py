"""Compensation: undoing completed activities with their handlers, as tokens in Compensation mode.

When an activity with a compensation boundary event completes, a `compensate` event subscription
row records that it can be compensated, in the transaction that completes it: its `name` is the
key of the scope it completed in ('' for the process, else the scope token's id), its `node_id`
the activity, its `token_id` the token that ran it (for an embedded subprocess or a looping
activity, the scope token whose id keys the rows of what completed inside it). Rows of one scope
are ordered by (created_at, id): the order of completion. A completed subprocess gets a row when
something inside it can be compensated or it has a compensation event subprocess; a multi-
instance or loop body gets one when one of its iterations can (each iteration has its own row,
in the body's scope, so each is compensated once).

A compensation throw event compensates the rows of its scope (inside an event subprocess: the
scope around it), all of them or those of its activityRef, newest first: a task's row starts its
handler; a subprocess's row starts its compensation event subprocess, or else compensates the
rows inside it, newest first, and then starts its own handler if it has one; a body's row
compensates its iterations. Every row is deleted as its compensation starts, so a step is
compensated at most once.

A subprocess with a compensation event subprocess keeps its local variables when it completes
(Camunda's snapshot): they move from its scope token (which goes on to the next node) to the id
of its row, and become the locals of the Compensation-mode visit that runs its event subprocess,
so the event subprocess sees them as they were at completion, beside the enclosing scopes'
current variables; they go when that visit ends, or with the instance.

Handlers run as Compensation-mode tokens in the throwing token's scope, with the throwing token as
their parent; with waitForCompletion the throwing token waits until none of them is live, then
leaves (or, at an end event, ends). When the instance ends, its rows go.
"""

from __future__ import annotations

from uuid import UUID

from engine.core.runtime import InstanceRun, Subscription, Token
from engine.db.ids import new_id
from engine.model import (
    ACTIVITY_TYPES,
    EndEvent,
    IntermediateThrowEvent,
    Node,
    SequenceFlow,
    SubProcess,
)
from engine.model.compensation import compensation_boundary, compensation_start
from engine.semantics.loops import LoopMoves
from engine.states import SubscriptionKind, TokenMode, TokenState, VisitState

ThrowEvent = IntermediateThrowEvent | EndEvent


def rows_in(run: InstanceRun, key: str) -> list[Subscription]:
    """The compensation rows of the scope `key`, in the order their activities completed."""
    rows = [
        row
        for row in run.subscriptions.values()
        if row.kind == SubscriptionKind.COMPENSATE and row.name == key and not row.deleted
    ]
    return sorted(rows, key=lambda row: (row.created_at, row.id))


class CompensationMoves(LoopMoves):
    # -- recording what can be compensated ----------------------------------------------------

    def _leave(self, token: Token, node: Node, flows: list[SequenceFlow] | None = None) -> None:
        if token.mode == TokenMode.COMPENSATION and self._compensates_subprocess(token, node):
            # The subprocess's compensation event subprocess ended: so does its compensation.
            self._close_visit(token, VisitState.COMPLETED)
            token.move_to(TokenState.COMPLETED, self.run.now)
            self._ended(token)
            return
        if isinstance(node, ACTIVITY_TYPES) and token.mode == TokenMode.FORWARD:
            host = self._host_of(token)
            if node.loop is None or host is not None:  # a body records in `_finish_body`
                self._record(token, node)
        super()._leave(token, node, flows)

    def _finish_body(self, host: Token, node: Node) -> None:
        if host.mode == TokenMode.FORWARD and rows_in(self.run, str(host.id)):
            self._add_row(host, node)
        super()._finish_body(host, node)

    def _record(self, token: Token, node: Node) -> None:
        """`token` completes `node`: a row when the node can be compensated."""
        compensable = compensation_boundary(self.model, node.id) is not None
        if isinstance(node, SubProcess) and not compensable:
            compensable = compensation_start(self.model, node) is not None or bool(
                rows_in(self.run, str(token.id))
            )
        if compensable:
            self._add_row(token, node)

    def _add_row(self, token: Token, node: Node) -> None:
        row = Subscription(
            id=new_id(),
            kind=SubscriptionKind.COMPENSATE,
            name=token.scope_key,
            token_id=token.id,
            node_id=node.id,
            created_at=self.run.now,
            is_new=True,
        )
        self.run.add_subscription(row)
        body = node.loop is not None and self._host_of(token) is None  # its iterations' rows
        if (
            isinstance(node, SubProcess)
            and not body
            and compensation_start(self.model, node) is not None
        ):
            self._move_locals(token.id, row.id)  # the snapshot its compensation will see

    def _move_locals(self, source: UUID, target: UUID) -> None:
        for name, value in self.run.locals.get(source, {}).items():
            self.run.set_local(target, name, value)
        self.run.drop_locals(source)

    # -- throwing compensation ----------------------------------------------------------------

    def _throw_compensation(self, token: Token, event: ThrowEvent) -> None:
        """`token` arrived at a compensation throw event: start the handlers, then wait for them
        or go on."""
        assert event.compensation is not None
        rows = rows_in(self.run, self._compensated_key(token))
        ref = event.compensation.activity_ref
        started = 0
        for row in reversed(rows):
            if ref is None or row.node_id == ref:
                started += self._compensate(row, token, iteration=False)
        self.run.emit("compensation.thrown", token)
        if started and event.compensation.wait_for_completion:
            self._wait(token)
            return
        self._compensation_done(token, event)

    def _compensated_key(self, token: Token) -> str:
        """The key of the scope a throw by `token` compensates (see `compensated_scope` in
        engine/model/compensation.py): inside a compensation event subprocess, the rows of the
        completed subprocess it compensates (the id of that subprocess's scope token, which its
        own scope token keeps as parent); inside another event subprocess, its scope's."""
        if token.scope_id is None:
            return ""
        scope = self.run.tokens[token.scope_id]
        node = self.model.node(scope.node_id)
        if isinstance(node, SubProcess) and node.triggered_by_event:
            starts = self.model.children(node.id)
            if any(getattr(start, "is_compensation", False) for start in starts):
                return str(scope.parent_id)
            return scope.scope_key
        return str(scope.id)

    def _compensate(self, row: Subscription, thrower: Token, *, iteration: bool) -> int:
        """Compensate what `row` recorded; how many handler tokens that started."""
        row.deleted = True
        node = self.model.node(row.node_id)
        inner = str(row.token_id)
        started = 0
        if node.loop is not None and not iteration:  # a body: each iteration on its own
            for found in reversed(rows_in(self.run, inner)):
                started += self._compensate(found, thrower, iteration=True)
            return started
        if isinstance(node, SubProcess):
            start = compensation_start(self.model, node)
            if start is not None:
                self._run_event_subprocess(node, row, thrower)
                return 1
            for found in reversed(rows_in(self.run, inner)):
                started += self._compensate(found, thrower, iteration=False)
        boundary = compensation_boundary(self.model, node.id)
        if boundary is not None and boundary.compensate_handler is not None:
            handler = self._compensation_token(boundary.compensate_handler, thrower)
            self._queue.append((handler, handler.node_id, None, False))
            started += 1
        return started

    def _compensation_token(self, node_id: str, thrower: Token) -> Token:
        """A Compensation-mode token at `node_id`, child of `thrower`, in the thrower's scope;
        a throw inside a compensation event subprocess starts it in the scope that event
        subprocess runs in (the compensated subprocess's visit, whose snapshot it sees), where
        Camunda's activity-instance tree shows it."""
        token = self.run.new_token(
            node_id,
            parent_id=thrower.id,
            scope_id=self._handler_scope(thrower),
            mode=TokenMode.COMPENSATION,
        )
        self._activate(token)
        return token

    def _handler_scope(self, thrower: Token) -> UUID | None:
        scope = self.run.tokens.get(thrower.scope_id) if thrower.scope_id is not None else None
        if scope is None or scope.mode != TokenMode.COMPENSATION:
            return thrower.scope_id
        node = self.model.node(scope.node_id)
        if isinstance(node, SubProcess) and node.triggered_by_event and node.parent is not None:
            sub = self.model.node(node.parent)
            if isinstance(sub, SubProcess) and compensation_start(self.model, sub) is not None:
                return scope.scope_id
        return thrower.scope_id

    def _run_event_subprocess(self, sub: SubProcess, row: Subscription, thrower: Token) -> None:
        """The completed subprocess `sub` is compensated by its compensation event subprocess: a
        Compensation-mode token visits `sub` again as the scope of the event subprocess, whose
        scope token names the subprocess's old scope token as parent (so a throw inside it
        compensates what completed in that subprocess)."""
        start = compensation_start(self.model, sub)
        assert start is not None and start.parent is not None
        event_sub = self.model.node(start.parent)
        host = self._compensation_token(sub.id, thrower)
        self._open_visit(host, sub)
        self._move_locals(row.id, host.id)  # the snapshot taken at completion
        self._wait(host)
        scope = self.run.new_token(
            event_sub.id, parent_id=row.token_id, scope_id=host.id, mode=TokenMode.COMPENSATION
        )
        self._activate(scope)
        self._open_visit(scope, event_sub)
        self._wait(scope)
        self._enter_scope(scope, start)

    def _compensates_subprocess(self, token: Token, node: Node) -> bool:
        """Whether `token` is the Compensation-mode visit of a completed subprocess that its
        compensation event subprocess compensates (it ends instead of following flows)."""
        return (
            isinstance(node, SubProcess)
            and not node.is_for_compensation
            and compensation_start(self.model, node) is not None
        )

    # -- the end of compensation --------------------------------------------------------------

    def _ended(self, token: Token) -> None:
        super()._ended(token)
        if token.mode != TokenMode.COMPENSATION or token.parent_id is None:
            return
        thrower = self.run.tokens.get(token.parent_id)
        if thrower is None or thrower.state is not TokenState.WAITING:
            return
        event = self.model.node(thrower.node_id)
        if not isinstance(event, IntermediateThrowEvent | EndEvent) or event.compensation is None:
            return
        if any(t.parent_id == thrower.id and t.is_live for t in self.run.tokens.values()):
            return
        thrower.move_to(TokenState.EXECUTING, self.run.now)
        self._compensation_done(thrower, event)

    def _compensation_done(self, token: Token, event: ThrowEvent) -> None:
        """The throw event's work is done: an intermediate one is left, an end event ends."""
        if isinstance(event, EndEvent):
            self._end(token, event)
        else:
            self._leave(token, event)
