"""Throw events: signals, escalations and links, intermediate and at the end of a path.

A signal is broadcast beyond the instance: the throw records the effect and the command layer
delivers it (engine/core/effects.py). An escalation is searched for outwards scope by scope, as in
Camunda 7: the first escalation boundary event on an enclosing subprocess or escalation event
subprocess that catches its code takes it; uncaught it is ignored (a called instance hands it to
its caller). A link throw event sends its token on to the link catch event of its scope.
"""

from __future__ import annotations

from engine.core.effects import SignalThrown, ThrownToCaller
from engine.core.runtime import Token
from engine.model import BoundaryEvent, EndEvent, IntermediateThrowEvent, StartEvent, SubProcess
from engine.semantics.calls import mapped_inputs
from engine.semantics.events import EventMoves
from engine.semantics.mappings import map_outputs
from engine.states import SubscriptionKind, VisitState


class ThrowMoves(EventMoves):
    def _throw_event(self, token: Token, node: IntermediateThrowEvent) -> None:
        """A signal, escalation or link throw event (a none throw event passes straight on)."""
        if node.link_name is not None:
            self._follow_link(token, node)
            return
        if node.signal_name is not None:
            self._signal(token, node)
        elif node.is_escalation:
            assert node.escalation_code is not None  # see model.validate
            self._escalate(token, node.escalation_code, node.parent)
            if not token.is_live:  # an interrupting catch ended the scope the throw was in
                return
        self._leave(token, node)

    def _end(self, token: Token, node: EndEvent) -> None:
        """A signal end event broadcasts its signal, an escalation end event throws its
        escalation; then the token ends there like at any end event."""
        if node.signal_name is not None:
            self._signal(token, node)
        elif node.is_escalation:
            assert node.escalation_code is not None  # see model.validate
            self._escalate(token, node.escalation_code, node.parent)
            if not token.is_live:
                return
        super()._end(token, node)

    def _signal(self, token: Token, node: IntermediateThrowEvent | EndEvent) -> None:
        """The signal is broadcast (by the command layer) with the variables its camunda:in
        mappings pass, computed now, where the token is."""
        assert node.signal_name is not None
        name = self._event_name(token, node.signal_name)
        typed, _ = mapped_inputs(self.run, token, node, node.signal_inputs)
        variables = {key: value.value for key, value in typed.items()}
        waiting = frozenset(
            subscription.id
            for subscription in self.run.subscriptions.values()
            if subscription.kind == SubscriptionKind.SIGNAL
            and subscription.name == name
            and not subscription.deleted
        )
        self.run.effects.append(SignalThrown(name, variables, waiting))

    def _follow_link(self, token: Token, node: IntermediateThrowEvent) -> None:
        """The throw event's visit completes and the token arrives at the link catch event of the
        same name in its scope, as if a sequence flow led there."""
        self.scripts.execution_event(token, node, "end")
        map_outputs(self.run, token, node)
        self._close_visit(token, VisitState.COMPLETED)
        self.run.drop_listeners(token)
        self._queue.append((token, self.model.link_target(node), None, False))

    def _escalate(self, token: Token, code: str, thrown_in: str | None) -> None:
        """The escalation `code` thrown where `token` is: searched outwards scope by scope (an
        iteration of a multi-instance activity by its body's boundary events) for an escalation
        boundary event of an enclosing activity or an escalation event subprocess that catches
        it. Interrupting: its scope ends, the thrower with it. Not interrupting: a token leaves
        the boundary event or the event subprocess runs beside, and the thrower goes on.
        Uncaught it is ignored, as in Camunda 7; at the top of a called instance it is handed to
        the caller's call activity. `thrown_in` is the event subprocess (if it is one) the throw
        event sits in: it does not catch its own content's escalation again."""
        caught = self._catcher(
            token,
            lambda boundary: boundary.is_escalation and boundary.escalation_code in (None, code),
            # An event subprocess does not catch what its own content throws again.
            lambda sub: None if sub.id == thrown_in else self._escalation_start(sub, code),
        )
        if caught is not None:
            current, catcher, sub = caught
            self.run.emit("escalation.caught", current)
            if isinstance(catcher, BoundaryEvent):
                self._trigger_boundary(catcher, current)
            else:
                assert sub is not None
                self._start_event_subprocess(sub, catcher, current.scope_id)
            self._set_caught_escalation(catcher, current, code)
            return
        if self.run.instance.super_instance_id is not None:
            self.run.effects.append(ThrownToCaller("escalation", code))

    def _set_caught_escalation(
        self, catcher: StartEvent | BoundaryEvent, caught_at: Token, code: str
    ) -> None:
        """The caught code goes to the variable the catching event names
        (camunda:escalationCodeVariable), set as Camunda sets it: from the scope that handles the
        escalation (the scope of `caught_at`)."""
        if catcher.escalation_code_variable:
            scope = self.run.tokens[caught_at.scope_id] if caught_at.scope_id else None
            self.set_variables({catcher.escalation_code_variable: code}, scope)

    def _escalation_start(self, sub: SubProcess, code: str) -> StartEvent | None:
        for node in self.model.children(sub.id):
            if isinstance(node, StartEvent) and node.is_escalation:
                return node if node.escalation_code in (None, code) else None
        return None
