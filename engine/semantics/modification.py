"""Instance modification: cancel tokens and start new ones where an operator says, in one advance.

The instructions (engine/commands/modification.py) apply in order to one locked instance, each
through the moves the engine already makes:

- cancelling ends a token as an interruption does (`ScopeMoves._kill`: its work retires, what
  it called ends, everything inside a subprocess's scope ends with it), its arrival at a join is
  forgotten, an iteration leaves its multi-instance body's counters (a parallel body then waits
  for one iteration fewer), and a scope left without a live token is cancelled in turn, up to
  the process level;
- starting puts a new token before a node, after a node (on its single outgoing flow) or on a
  flow, in the node's scope: the enclosing subprocesses' scope tokens are found (the one that
  is active, or the one `ancestor` names) or created when none is, and the token runs as any
  token arriving there would (an asynchronous continuation parks it, a multi-instance activity
  starts its body, a user task opens). Starting after a converging gateway whose join waits in
  that scope completes the join: its waiting tokens merge into the new one.

The instance ends only after the last instruction, when no live token is left: Terminated when
a cancellation left it empty, Completed when a started token ran to the end (as in Camunda 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from uuid import UUID

from engine.core.runtime import Token
from engine.errors import BadRequest, Conflict
from engine.language.variables import TypedValue, infer, typed
from engine.model import (
    MULTI_INSTANCE_BODY,
    EndEvent,
    InclusiveGateway,
    IntermediateThrowEvent,
    MultiInstance,
    Node,
    ParallelGateway,
    ProcessModel,
    SequenceFlow,
    StartEvent,
    SubProcess,
)
from engine.semantics import conditions
from engine.semantics.loops import ACTIVE, INSTANCES
from engine.semantics.mappings import map_inputs
from engine.states import InstanceState, TokenMode, TokenState, VisitState

if TYPE_CHECKING:
    from engine.semantics import Advance


@dataclass(frozen=True)
class StartVariable:
    """A variable a start instruction sets before its token runs: as Camunda's setVariable from
    the new token (where the name already lives, else the root scope), or (`local`) local to the
    new token's activity instance."""

    name: str
    value: TypedValue
    local: bool = False


@dataclass(frozen=True)
class CancelToken:
    """Cancel one activity instance: a live token by its id, or by the id of its open visit
    (Camunda's activityInstanceId and transitionInstanceId)."""

    id: UUID

    def describe(self) -> dict[str, Any]:
        return {"type": "cancel", "activityInstanceId": str(self.id)}


@dataclass(frozen=True)
class CancelNode:
    """Cancel every live token at `node_id` (Camunda's cancel with an activityId; the id of a
    multi-instance body, `X#multiInstanceBody`, names its activity `X`)."""

    node_id: str

    def describe(self) -> dict[str, Any]:
        return {"type": "cancel", "activityId": self.node_id}


@dataclass(frozen=True)
class _Start:
    variables: tuple[StartVariable, ...] = ()
    # The activity instance (a scope token's id or visit id; the instance's id: the process)
    # the new token starts inside, when several could hold it.
    ancestor: UUID | None = None

    def _described(self, kind: str, **where: str) -> dict[str, Any]:
        found: dict[str, Any] = {"type": kind, **where}
        if self.ancestor is not None:
            found["ancestorActivityInstanceId"] = str(self.ancestor)
        if self.variables:
            found["variables"] = [{"name": v.name, "local": v.local} for v in self.variables]
        return found


@dataclass(frozen=True)
class StartBefore(_Start):
    """A new token arrives at `node_id` as if by a flow."""

    node_id: str = ""

    def describe(self) -> dict[str, Any]:
        return self._described("startBeforeActivity", activityId=self.node_id)


@dataclass(frozen=True)
class StartAfter(_Start):
    """A new token leaves `node_id` along its single outgoing flow."""

    node_id: str = ""

    def describe(self) -> dict[str, Any]:
        return self._described("startAfterActivity", activityId=self.node_id)


@dataclass(frozen=True)
class StartOnFlow(_Start):
    """A new token takes the sequence flow `flow_id`."""

    flow_id: str = ""

    def describe(self) -> dict[str, Any]:
        return self._described("startTransition", transitionId=self.flow_id)


Instruction = CancelToken | CancelNode | StartBefore | StartAfter | StartOnFlow
START_TYPES = (StartBefore, StartAfter, StartOnFlow)


def start_variables(
    variables: dict[str, Any] | None = None, local: dict[str, Any] | None = None
) -> tuple[StartVariable, ...]:
    """Plain values as a start instruction's variables (`local`: local to the new token)."""
    return tuple(StartVariable(name, infer(value)) for name, value in (variables or {}).items()) + (
        tuple(StartVariable(name, infer(value), True) for name, value in (local or {}).items())
    )


def to_spec(instruction: Instruction) -> dict[str, Any]:
    """`instruction` as JSON (Camunda's instruction fields; variables with their typed values),
    which `from_spec` reads back: how a modification is stored to run later (a batch)."""
    found = instruction.describe()
    if isinstance(instruction, START_TYPES) and instruction.variables:
        found["variables"] = [
            {"name": v.name, "type": v.value.type, "value": v.value.to_json(), "local": v.local}
            for v in instruction.variables
        ]
    return found


def from_spec(entry: dict[str, Any]) -> Instruction:
    """The instruction `to_spec` wrote (BadRequest for anything else)."""
    try:
        kind = entry["type"]
        if kind == "cancel":
            if "activityId" in entry:
                return CancelNode(str(entry["activityId"]))
            return CancelToken(UUID(str(entry["activityInstanceId"])))
        variables = tuple(
            StartVariable(v["name"], typed(v["type"], v["value"]), bool(v["local"]))
            for v in entry.get("variables", ())
        )
        ancestor = entry.get("ancestorActivityInstanceId")
        common: dict[str, Any] = {
            "variables": variables,
            "ancestor": UUID(ancestor) if ancestor else None,
        }
        if kind == "startTransition":
            return StartOnFlow(flow_id=str(entry["transitionId"]), **common)
        if kind == "startBeforeActivity":
            return StartBefore(node_id=str(entry["activityId"]), **common)
        if kind == "startAfterActivity":
            return StartAfter(node_id=str(entry["activityId"]), **common)
    except (KeyError, TypeError, ValueError) as exc:
        raise BadRequest(f"a stored modification instruction does not read: {exc!r}") from exc
    raise BadRequest(f"a stored modification instruction has the unknown type {kind!r}")


def _where(index: int, instruction: Instruction) -> str:
    return f"instruction {index + 1} ({instruction.describe()['type']})"


def node_id_of(activity_id: str) -> str:
    """The node a Camunda activity id names (a multi-instance body's id names its activity)."""
    return activity_id.removesuffix(f"#{MULTI_INSTANCE_BODY}")


def check(advance: Advance, instructions: Sequence[Instruction]) -> None:
    """Refuse, before anything changes, instructions the model cannot carry out: an unknown node
    or flow, a node no token can start at, a start after a node without one outgoing flow."""
    model = advance.model
    if not instructions:
        raise BadRequest("a modification needs at least one instruction", field="instructions")
    for index, instruction in enumerate(instructions):
        where = _where(index, instruction)
        if isinstance(instruction, StartOnFlow):
            if not model.has_flow(instruction.flow_id):
                raise BadRequest(
                    f"{where}: sequence flow '{instruction.flow_id}' is not in process "
                    f"'{model.key}'",
                    field="transitionId",
                    flow_id=instruction.flow_id,
                )
            continue
        if isinstance(instruction, CancelToken):
            continue
        node_id = node_id_of(instruction.node_id)
        if not model.has_node(node_id):
            raise BadRequest(
                f"{where}: activity '{instruction.node_id}' is not in process '{model.key}'",
                field="activityId",
                node_id=instruction.node_id,
            )
        problem = _start_problem(advance, instruction, model.node(node_id))
        if problem is not None:
            raise BadRequest(f"{where}: {problem}", field="activityId", node_id=node_id)


class StartRefusal(StrEnum):
    """Why a modification can never start a token before or after a node, whatever the
    instance's state: the rule `start_refusal` applies, worded for the engine's callers by
    `_start_problem` and for operators by the console."""

    COMPENSATION_HANDLER = "compensation handler"
    # Before a parallel join: a token would arrive by none of its incoming flows.
    PARALLEL_JOIN = "parallel join"
    EVENT_SUBPROCESS_WITHOUT_START = "event subprocess without start event"
    # After a node without exactly one outgoing flow.
    NOT_ONE_OUTGOING_FLOW = "not one outgoing flow"


def start_refusal(model: ProcessModel, node: Node, *, after: bool) -> StartRefusal | None:
    """Why no token can start before `node` (or, `after`, leave it), None when one can. The
    flows a refused start could take instead: a parallel join's incoming flows, the outgoing
    flows of a node with several."""
    if node.is_for_compensation:
        return StartRefusal.COMPENSATION_HANDLER
    if after:
        return StartRefusal.NOT_ONE_OUTGOING_FLOW if len(node.outgoing) != 1 else None
    if isinstance(node, ParallelGateway) and node.is_join:
        return StartRefusal.PARALLEL_JOIN
    if (
        isinstance(node, SubProcess)
        and node.triggered_by_event
        and _event_start(model, node) is None
    ):
        return StartRefusal.EVENT_SUBPROCESS_WITHOUT_START
    return None


def _start_problem(advance: Advance, instruction: Instruction, node: Node) -> str | None:
    """Why the instruction cannot start a token at or after `node` (None: it can)."""
    if not isinstance(instruction, StartBefore | StartAfter):
        return None
    refusal = start_refusal(advance.model, node, after=isinstance(instruction, StartAfter))
    if refusal is StartRefusal.COMPENSATION_HANDLER:
        return (
            f"activity '{node.id}' is a compensation handler; it runs only when "
            "its activity is compensated"
        )
    if refusal is StartRefusal.PARALLEL_JOIN:
        return (
            f"parallel gateway '{node.id}' joins {len(node.incoming)} flows; a "
            "token started before it would arrive by none of them: start on one of its "
            "incoming flows (startTransition) or after it"
        )
    if refusal is StartRefusal.EVENT_SUBPROCESS_WITHOUT_START:
        return f"event subprocess '{node.id}' has no start event"
    if refusal is StartRefusal.NOT_ONE_OUTGOING_FLOW:
        return (
            f"activity '{node.id}' has {len(node.outgoing)} outgoing sequence "
            "flows; starting after it needs exactly one (start on one of them with "
            "startTransition)"
        )
    return None


def _event_start(model: ProcessModel, sub: SubProcess) -> StartEvent | None:
    starts = [n for n in model.children(sub.id) if isinstance(n, StartEvent)]
    return starts[0] if starts else None


class Modification:
    """The instructions of one modification applied to one advance (see the module's text)."""

    def __init__(self, advance: Advance) -> None:
        self.advance = advance
        self.run = advance.run

    def apply(self, instructions: Sequence[Instruction]) -> None:
        check(self.advance, instructions)
        ended_by_cancel = False
        for index, instruction in enumerate(instructions):
            if self.run.instance.state.is_final:
                raise Conflict(
                    f"{_where(index, instruction)}: the process instance already ended "
                    f"({self.run.instance.state.value}) at an earlier instruction",
                    instance_id=str(self.run.instance.id),
                )
            if isinstance(instruction, CancelToken | CancelNode):
                for token in self._targets(index, instruction):
                    self.cancel(token)
                ended_by_cancel = not self.run.has_live_tokens()
                if not ended_by_cancel:
                    # An inclusive join may now have no upstream token left to wait for.
                    self.advance._drain()
            else:
                self.start(index, instruction)
                self.advance._drain()
                ended_by_cancel = False
        if ended_by_cancel:  # the last instruction cancelled the last live token
            self._end_cancelled()

    # --- cancelling ------------------------------------------------------------------------

    def _targets(self, index: int, instruction: CancelToken | CancelNode) -> list[Token]:
        where = _where(index, instruction)
        if isinstance(instruction, CancelToken):
            return [self.live_token(instruction.id, where)]
        node_id = node_id_of(instruction.node_id)
        found = [t for t in self.run.live_tokens() if t.node_id == node_id]
        # Of a multi-instance body and its iterations, or a scope and tokens inside it at the
        # same node, the outermost: cancelling it ends the others.
        ids = {t.id for t in found}
        outermost = [t for t in found if t.scope_id not in ids]
        if not outermost:
            raise BadRequest(
                f"{where}: activity '{instruction.node_id}' has no active instance to cancel",
                field="activityId",
                node_id=instruction.node_id,
            )
        return outermost

    def live_token(self, key: UUID, where: str) -> Token:
        """The live token `key` names: its id or its open visit's."""
        token = self.run.tokens.get(key)
        if token is None:
            token = next((t for t in self.run.live_tokens() if t.visit_id == key), None)
        if token is None or not token.is_live:
            raise BadRequest(
                f"{where}: activity instance {key} is not active in process instance "
                f"{self.run.instance.id}",
                field="activityInstanceId",
                activity_instance_id=str(key),
            )
        return token

    def cancel(self, token: Token) -> None:
        """End `token` early with its work; a scope it leaves empty is cancelled too, and so is
        a compensation throw event left waiting for no handler (as Camunda cancels an activity
        instance left without children: the handlers' is the throw event's)."""
        advance = self.advance
        if not token.is_live:
            return  # ended by an earlier cancellation of this modification
        host = advance._host_of(token)
        advance._kill(token)
        self._forget_arrival(token)
        if host is not None and host.is_live:
            self._leave_body(host)
        thrower = self._thrower_left_waiting(token)
        if thrower is not None:
            self.cancel(thrower)
        scope_id = token.scope_id
        if scope_id is None or self.run.has_live_in_scope(scope_id):
            return
        scope = self.run.tokens.get(scope_id)
        if scope is not None and scope.is_live:
            self.cancel(scope)

    def _thrower_left_waiting(self, handler: Token) -> Token | None:
        """The compensation throw event (or cancel end event) waiting for the handler `handler`,
        when no handler it started is live any more."""
        if handler.mode != TokenMode.COMPENSATION or handler.parent_id is None:
            return None
        thrower = self.run.tokens.get(handler.parent_id)
        if thrower is None or thrower.state is not TokenState.WAITING:
            return None
        node = self.advance.model.node(thrower.node_id)
        if not isinstance(node, IntermediateThrowEvent | EndEvent):
            return None
        # A compensation throw, or a cancel end event (it compensates its transaction first).
        if node.compensation is None and not (isinstance(node, EndEvent) and node.cancel):
            return None
        if any(t.parent_id == thrower.id and t.is_live for t in self.run.tokens.values()):
            return None
        return thrower

    def _leave_body(self, host: Token) -> None:
        """An iteration of the parallel multi-instance body `host` was cancelled: the body runs
        one iteration fewer (a sequential body's only active iteration ends it: see `cancel`)."""
        node = self.advance.model.node(host.node_id)
        loop = node.loop
        if not isinstance(loop, MultiInstance) or loop.sequential:
            return
        counters = self.run.local_values(host.id)
        for name in (INSTANCES, ACTIVE):
            self.run.set_local(host.id, name, infer(max(int(counters.get(name, 0)) - 1, 0)))

    def _forget_arrival(self, token: Token) -> None:
        """A cancelled token waiting at a join no longer counts as arrived there."""
        run = self.run
        for key in run.joins_in_scope(token.scope_key):
            join = run.joins[key]
            kept = [a for a in join.arrivals if a["token"] != str(token.id)]
            if len(kept) == len(join.arrivals):
                continue
            if kept:
                join.arrivals = kept
            else:
                self.advance._delete_join(key)

    def _end_cancelled(self) -> None:
        """The modification cancelled the last token: the instance is terminated, unless it was
        called, whose caller would wait for it for ever."""
        instance = self.run.instance
        if instance.super_instance_id is not None:
            raise Conflict(
                f"the modification would cancel every token of process instance {instance.id}, "
                f"which process instance {instance.super_instance_id} called: cancel the call "
                "activity's token there instead",
                instance_id=str(instance.id),
                super_instance_id=str(instance.super_instance_id),
            )
        self.advance.terminate_all(instance_state=InstanceState.TERMINATED)

    # --- starting --------------------------------------------------------------------------

    def start(self, index: int, instruction: StartBefore | StartAfter | StartOnFlow) -> None:
        advance, run, model = self.advance, self.run, self.advance.model
        where = _where(index, instruction)
        flow: SequenceFlow | None
        if isinstance(instruction, StartOnFlow):
            flow = model.flow(instruction.flow_id)
            node = model.node(flow.source)
        else:
            node = model.node(node_id_of(instruction.node_id))
            flow = model.flow(node.outgoing[0]) if isinstance(instruction, StartAfter) else None
        scope: Token | None
        if isinstance(node, SubProcess) and node.triggered_by_event:
            # A new run of the event subprocess (StartBefore: StartAfter needs a flow out).
            start = _event_start(advance.model, node)
            assert start is not None  # see `check`
            scope = self._open_scope(node, self._scope_for(node, instruction.ancestor, where))
            node = start
        else:
            scope = self._scope_for(node, instruction.ancestor, where)
        token = run.new_token(node.id, scope_id=scope.id if scope is not None else None)
        advance._activate(token)
        for variable in instruction.variables:
            if variable.local:
                run.set_local(token.id, variable.name, variable.value)
            else:
                run.set_visible(token, variable.name, variable.value)
        if flow is None:
            advance._queue.append((token, node.id, None, False))
            return
        if isinstance(instruction, StartAfter):
            self._complete_join(node, token)
        advance._follow(token, node, [flow])

    def _complete_join(self, gateway: Node, token: Token) -> None:
        """A token started after a converging gateway whose join waits in its scope completes
        the join: the tokens waiting there merge into it."""
        if not isinstance(gateway, ParallelGateway | InclusiveGateway):
            return
        key = (gateway.id, token.scope_key)
        join = self.run.joins.get(key)
        if join is None:
            return
        self.advance._delete_join(key)
        for arrival in join.arrivals:
            waiting = self.run.tokens.get(UUID(arrival["token"]))
            if waiting is None or not waiting.is_live:
                continue
            self.advance._close_visit(waiting, VisitState.COMPLETED)
            waiting.merged_into = token.id
            waiting.move_to(TokenState.COMPLETED, self.run.now)
            self.run.emit("token.merged", waiting)

    def _scope_for(self, node: Node, ancestor: UUID | None, where: str) -> Token | None:
        """The scope token a new token at `node` runs in (None: the process level): for each
        subprocess around `node`, outermost first, its one active scope inside the previous
        one, created when there is none."""
        model = self.advance.model
        chain: list[str] = []
        parent = node.parent
        while parent is not None:
            chain.insert(0, parent)
            parent = model.node(parent).parent
        current: Token | None = None
        rest = chain
        if ancestor is not None and ancestor != self.run.instance.id:
            current = self.live_token(ancestor, where)
            if current.node_id not in chain:
                raise BadRequest(
                    f"{where}: ancestor activity instance {ancestor} ({current.node_id}) does "
                    f"not contain '{node.id}'",
                    field="ancestorActivityInstanceId",
                    node_id=node.id,
                )
            rest = chain[chain.index(current.node_id) + 1 :]
            if self.advance._host_of(current) is None and model.node(current.node_id).loop:
                current = self._one(self._iterations(current), current.node_id, where)
        for sub_id in rest:
            sub = model.node(sub_id)
            assert isinstance(sub, SubProcess)
            found = self._scopes_of(sub, current)
            if len(found) > 1:
                raise BadRequest(
                    f"{where}: subprocess '{sub_id}' has {len(found)} active instances; say "
                    "which one with ancestorActivityInstanceId",
                    field="ancestorActivityInstanceId",
                    node_id=sub_id,
                )
            if found:
                current = found[0]
            elif sub.loop is not None:
                raise BadRequest(
                    f"{where}: multi-instance subprocess '{sub_id}' has no active iteration to "
                    f"start '{node.id}' in; start before '{sub_id}' instead",
                    field="activityId",
                    node_id=sub_id,
                )
            else:
                current = self._open_scope(sub, current)
        return current

    def _one(self, found: list[Token], node_id: str, where: str) -> Token:
        if len(found) != 1:
            raise BadRequest(
                f"{where}: multi-instance '{node_id}' has {len(found)} active iterations; name "
                "one as ancestorActivityInstanceId",
                field="ancestorActivityInstanceId",
                node_id=node_id,
            )
        return found[0]

    def _iterations(self, host: Token) -> list[Token]:
        return [
            t
            for t in self.run.live_in_scope(host.id)
            if t.node_id == host.node_id and t.state is TokenState.WAITING
        ]

    def _scopes_of(self, sub: SubProcess, within: Token | None) -> list[Token]:
        """The active scopes of `sub` directly inside `within` (None: the process): its waiting
        tokens, or for a multi-instance subprocess the running iterations of its bodies."""
        here = [
            t
            for t in self.run.live_in_scope(within.id if within is not None else None)
            if t.node_id == sub.id
        ]
        if sub.loop is None:
            return [t for t in here if t.state is TokenState.WAITING]
        return [it for host in here for it in self._iterations(host)]

    def _open_scope(self, sub: SubProcess, within: Token | None) -> Token:
        """A new scope of the embedded or event subprocess `sub` inside `within`, as a token
        entering it opens one, without the token its start event would send in."""
        advance, run = self.advance, self.run
        scope = run.new_token(sub.id, scope_id=within.id if within is not None else None)
        advance._activate(scope)
        advance._open_visit(scope, sub)
        map_inputs(run, scope, sub)
        advance.scripts.execution_event(scope, sub, "start")
        if not sub.triggered_by_event:
            advance._attach_boundary_events(scope, sub)
        advance._wait(scope)
        advance._open_scope_events(scope)
        conditions.open_scope(advance, scope)
        return scope


def positions(advance: Advance) -> dict[str, int]:
    """How many live tokens each node has (what the inspector's diagram counts)."""
    counted: dict[str, int] = {}
    for token in advance.run.live_tokens():
        counted[token.node_id] = counted.get(token.node_id, 0) + 1
    return dict(sorted(counted.items()))
