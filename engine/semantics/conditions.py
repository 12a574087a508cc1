"""Conditional events: waits for a `${}` condition over the variables to hold.

Each wait is a `conditional` event_subscription row, made when the wait starts and deleted when
it ends: an intermediate catch event's is owned by its waiting token (or by the token waiting at
an event-based gateway before it), a boundary event's by its activity's token, an event
subprocess start's by the token of its scope (None at the process level).

As in Camunda 7, a condition is evaluated when its wait starts (true: it triggers at once) and
then after every change of a variable it sees: each create, update and delete is one change,
and a change evaluates only the waits in whose scope the variable is visible (a root variable
reaches every wait; a local one only the waits of its owner and of the scopes inside it),
outermost first. A change that leaves the condition true triggers the event, once per change:
an interrupting event's wait ends with it, a non-interrupting one triggers again at each later
change after which its condition holds (camunda:variableName and camunda:variableEvents narrow
which changes count). Waits are evaluated in the command that changed the variables, in its
transaction, after the change is applied; a wait made in that command hears only the changes
made after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from engine.core.runtime import InstanceRun, Subscription, Token, VariableChange
from engine.db.ids import new_id
from engine.errors import Conflict, ExpressionError
from engine.model import (
    BoundaryEvent,
    ConditionalTrigger,
    EventBasedGateway,
    IntermediateCatchEvent,
    StartEvent,
    SubProcess,
)
from engine.states import InstanceState, SubscriptionKind, TokenState

if TYPE_CHECKING:
    from engine.language.expression_context import ExpressionContext
    from engine.model import Node, ProcessModel, SequenceFlow
    from engine.semantics import Advance


class ScopeMoves(Protocol):
    """What a scope's start and end use of an advance."""

    run: InstanceRun
    model: ProcessModel

    def _context(self, token: Token | None, values: Mapping[str, Any]) -> ExpressionContext: ...

    def _start_event_subprocess(
        self, sub: SubProcess, start: StartEvent, scope_id: Any
    ) -> Token: ...


class Moves(ScopeMoves, Protocol):
    """What triggering conditional events uses of an advance."""

    def _leave(self, token: Token, node: Node, flows: list[SequenceFlow] | None = None) -> None: ...

    def _trigger_boundary(self, boundary: BoundaryEvent, activity_token: Token) -> None: ...


def listen(moves: Moves, token: Token, event: IntermediateCatchEvent | BoundaryEvent) -> None:
    """The wait of a conditional catch or boundary event starts for `token` (the waiting token,
    or the token of the activity the boundary event is attached to)."""
    assert event.conditional is not None
    _open(moves, token, event.id, event.conditional)


def open_scope(moves: ScopeMoves, scope_token: Token | None) -> None:
    """The scope of `scope_token` (None: the process) starts: the conditional start events of
    its event subprocesses start waiting, and those whose condition holds already trigger (an
    interrupting one before anything else of the scope runs)."""
    run = moves.run
    scope_node = scope_token.node_id if scope_token is not None else None
    for sub in moves.model.event_subprocesses(scope_node):
        start = _conditional_start(moves, sub)
        if start is not None and start.conditional is not None:
            subscription = _open(moves, scope_token, start.id, start.conditional)
            if start.interrupting and subscription.id in run.conditions.due:
                run.conditions.due.remove(subscription.id)
                moves._start_event_subprocess(sub, start, subscription.token_id)
                return


def close_scope(moves: ScopeMoves, scope_token_id: Any) -> None:
    """The conditional event-subprocess starts of a scope stop waiting: the scope ended (the
    process's own, `scope_token_id` None, when the instance ends; a subprocess's also go with
    its token) or an interrupting event subprocess started in it."""
    if not _any_waits(moves.run):
        return
    for subscription in list(moves.run.subscriptions.values()):
        if (
            subscription.kind == SubscriptionKind.CONDITIONAL
            and subscription.token_id == scope_token_id
            and not subscription.deleted
            and isinstance(_node(moves, subscription), StartEvent)
        ):
            subscription.deleted = True


def dispatch(moves: Moves) -> bool:
    """Trigger the waits whose condition held when they started, then evaluate the waits each
    variable change since the last call reaches, in order. Whether anything triggered (its
    tokens are queued on `moves`)."""
    run = moves.run
    log = run.conditions
    state = run.instance.state
    if state not in (InstanceState.ACTIVE, InstanceState.SUSPENDED) or not _any_waits(run):
        log.evaluated = len(log.changes)
        log.due.clear()
        return False
    fired = False
    while log.due or log.evaluated < len(log.changes):
        if log.due:
            subscription = run.subscriptions.get(log.due.pop(0))
            if subscription is not None and not subscription.deleted:
                _fire(moves, subscription)
                fired = True
            continue
        index = log.evaluated
        log.evaluated += 1
        for subscription, context in _reached(moves, log.changes[index], index):
            if subscription.deleted or (context is not None and not context.is_live):
                continue  # an earlier trigger of this change ended it
            if _holds(moves, subscription, context):
                _fire(moves, subscription)
                fired = True
    return fired


def settle(moves: Moves, token: Token) -> bool:
    """Before `token` goes on (its activity starts executing, or leaves after its handler or
    script ran), the waits the variable changes so far reach are evaluated, as Camunda does at
    the end of each phase of an activity: its own boundary events hear them. Whether the token
    is still live (an interrupting event may have ended it)."""
    dispatch(moves)
    return token.is_live


def variables_changed(advance: Advance) -> None:
    """A command changed variables without moving a token: the waits they reach are evaluated
    and what triggers runs, in the command's transaction. A suspended instance moves nothing:
    a change that would trigger a wait there is refused (see `_fire`)."""
    if advance.run.instance.state is InstanceState.ACTIVE:
        advance._drain()
    else:
        dispatch(advance)


# --- the waits ---------------------------------------------------------------------------------


def _open(
    moves: ScopeMoves, token: Token | None, node_id: str, trigger: ConditionalTrigger
) -> Subscription:
    run = moves.run
    subscription = Subscription(
        id=new_id(),
        kind=SubscriptionKind.CONDITIONAL,
        name=trigger.condition.source,
        token_id=token.id if token is not None else None,
        node_id=node_id,
        created_at=run.now,
        is_new=True,
    )
    run.add_subscription(subscription)
    run.conditions.waiting = True
    run.conditions.made_after[subscription.id] = len(run.conditions.changes)
    if _evaluate(moves, trigger, node_id, token):
        run.conditions.due.append(subscription.id)
    return subscription


def _conditional_start(moves: ScopeMoves, sub: SubProcess) -> StartEvent | None:
    for node in moves.model.children(sub.id):
        if isinstance(node, StartEvent) and node.conditional is not None:
            return node
    return None


def _node(moves: ScopeMoves, subscription: Subscription) -> Any:
    model = moves.model
    return model.node(subscription.node_id) if model.has_node(subscription.node_id) else None


def _any_waits(run: InstanceRun) -> bool:
    """Whether the instance has had a conditional wait in this command (once it has, every
    dispatch looks at them; one made later sets it, see `_open`)."""
    log = run.conditions
    if log.waiting is None:
        log.waiting = any(
            s.kind == SubscriptionKind.CONDITIONAL for s in run.subscriptions.values()
        )
    return log.waiting


def _context_of(moves: Moves, subscription: Subscription) -> Token | None:
    """The token whose view of the variables the wait's condition reads: the waiting token, the
    activity's token, the scope's token (None: the process)."""
    if subscription.token_id is None:
        return None
    return moves.run.tokens.get(subscription.token_id)


def _depth(moves: Moves, subscription: Subscription, context: Token | None) -> float:
    """How deep the wait listens, for the outermost-first order: a boundary event listens just
    outside its activity's scope, an event subprocess start inside its scope."""
    depth = float(len(moves.run.scope_chain(context))) if context is not None else 0.0
    return depth - 0.5 if isinstance(_node(moves, subscription), BoundaryEvent) else depth


def _reached(
    moves: Moves, change: VariableChange, index: int
) -> list[tuple[Subscription, Token | None]]:
    """The waits `change` (the `index`th of the command) reaches, outermost first: those that
    existed before it, whose event listens to it, in whose view the changed variable is."""
    run = moves.run
    reached: list[tuple[float, int, Subscription, Token | None]] = []
    for order, subscription in enumerate(list(run.subscriptions.values())):
        if subscription.kind != SubscriptionKind.CONDITIONAL or subscription.deleted:
            continue
        if run.conditions.made_after.get(subscription.id, 0) > index:
            continue
        node = _node(moves, subscription)
        trigger = getattr(node, "conditional", None)
        if not isinstance(trigger, ConditionalTrigger):
            continue
        if not trigger.listens_to(change.name, change.change):
            continue
        context = _context_of(moves, subscription)
        if subscription.token_id is not None and (context is None or not context.is_live):
            continue
        chain = run.scope_chain(context) if context is not None else []
        if change.owner_id is not None and change.owner_id not in chain:
            continue
        reached.append((_depth(moves, subscription, context), order, subscription, context))
    reached.sort(key=lambda found: (found[0], found[1]))
    return [(subscription, context) for _, _, subscription, context in reached]


def _holds(moves: Moves, subscription: Subscription, context: Token | None) -> bool:
    node = _node(moves, subscription)
    assert isinstance(node.conditional, ConditionalTrigger)
    return _evaluate(moves, node.conditional, node.id, context)


def _evaluate(
    moves: ScopeMoves, trigger: ConditionalTrigger, node_id: str, context: Token | None
) -> bool:
    """The condition's value from `context`'s view of the variables. As in Camunda, a condition
    that names a variable that does not exist (yet) does not hold."""
    values = moves.run.values_for(context)
    try:
        value = trigger.condition.evaluate(values, moves._context(context, values))
    except ExpressionError as exc:
        if exc.message.startswith("unknown variable"):
            return False
        message = f"condition of conditional event '{node_id}' failed: {exc.message}"
        raise ExpressionError(message, node_id=node_id) from exc
    if value is None:
        return False
    if not isinstance(value, bool):
        message = (
            f"condition of conditional event '{node_id}' gave {value!r}, not a boolean "
            f"({trigger.condition.source})"
        )
        raise ExpressionError(message, node_id=node_id)
    return value


# --- triggering --------------------------------------------------------------------------------


def _fire(moves: Moves, subscription: Subscription) -> None:
    """The wait's event triggers: a catch event's token passes it, a boundary event's path
    starts (the activity ends first if it interrupts), an event subprocess starts. In a
    suspended instance nothing moves: the change that would trigger it is refused, as in
    Camunda."""
    node = _node(moves, subscription)
    run = moves.run
    if run.instance.state is InstanceState.SUSPENDED:
        raise Conflict(
            f"process instance {run.instance.id} is suspended: the change would trigger "
            f"conditional event '{subscription.node_id}'",
            instance_id=str(run.instance.id),
            node_id=subscription.node_id,
        )
    if isinstance(node, BoundaryEvent):
        assert subscription.token_id is not None
        if node.cancel_activity:
            subscription.deleted = True
        moves._trigger_boundary(node, run.tokens[subscription.token_id])
    elif isinstance(node, IntermediateCatchEvent):
        assert subscription.token_id is not None
        subscription.deleted = True
        _pass(moves, run.tokens[subscription.token_id], node)
    elif isinstance(node, StartEvent) and node.parent is not None:
        sub = moves.model.node(node.parent)
        assert isinstance(sub, SubProcess)
        moves._start_event_subprocess(sub, node, subscription.token_id)


def _pass(moves: Moves, token: Token, event: IntermediateCatchEvent) -> None:
    """The waiting token leaves its catch event, or its event-based gateway towards the event
    (which drops the gateway's other waits)."""
    at = moves.model.node(token.node_id)
    token.move_to(TokenState.EXECUTING, moves.run.now)
    if isinstance(at, EventBasedGateway):
        flows = [moves.model.flow(f) for f in at.outgoing]
        moves._leave(token, at, [f for f in flows if f.target == event.id])
    else:
        moves._leave(token, event)
