"""Hypothesis strategies over valid process models.

A model is drawn as a tree of blocks (`Block`), each of which has one way in and one way out, and
is then built through `ProcessBuilder`: a sequence, a task of some kind (with boundary events,
asynchronous continuations, multi-instance or a standard loop), an intermediate catch event, an
exclusive, inclusive or parallel split with its join (a parallel split may leave one branch to end
on its own: unbalanced), an event-based gateway, an embedded subprocess (with an event
subprocess started by a message, a timer or a signal, and a path beside its body that throws an
escalation or an error its boundary event catches), a call activity whose callee is a generated
body deployed as its own process (with such a path too), a compensable task compensated by a
later throw in its scope, a transaction cancelled on a branch `pick` chooses. The process itself
may have an event subprocess too. No flow goes back, so every instance ends once its
waits are served; loops are bounded by their maximum. The trees shrink towards a single none
task.

Every wait is named by its node id, so a driver finds what to do from the rows alone:
user tasks, external tasks on `TOPIC`, handler tasks calling `HANDLER` (it fails while the
variable `flaky` is true), messages `msg_<node>` and signals `sig_<node>`, timers of one hour.
Conditions read the variable `pick` (an integer 0..3): an exclusive split takes the branch it
names (else its first, the default), an inclusive split every branch from the second up to it (its
first, the default, when none; of two branches, the first always); a conditional event waits for
`${pick >= k}` (a change of `pick` fires it). A called process is `<key>_c<n>`; its node ids are
unique across the whole family, and its call activity maps `pick` and `flaky` in and out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from hypothesis import strategies as st

from engine.builder import ProcessBuilder
from engine.builder.base import NodeOptions
from engine.model import CallMapping, ProcessModel, TimerDefinition

if TYPE_CHECKING:
    from engine.api import Engine
    from engine.commands.deployments import DeploymentResult

TOPIC = "fuzz"
HANDLER = "fuzzHandler"
ERROR_CODE = "E1"
ESCALATION_CODE = "X1"
HOUR = TimerDefinition(kind="duration", text="PT1H")
PICKS = range(4)
EVENT_START = "Ess"  # the id prefix of an event subprocess's start event
# What a call activity passes to its callee and takes back.
CALL_MAPPINGS = tuple(CallMapping(source=name, target=name) for name in ("pick", "flaky"))

TaskKind = Literal["user", "external", "handler", "script", "javascript", "none", "receive"]
CatchKind = Literal["timer", "message", "signal", "conditional"]
BoundaryKind = Literal["timer", "message", "signal", "error", "conditional", "escalation"]
BOUNDARY_LETTERS: dict[BoundaryKind, str] = {
    "timer": "t",
    "message": "m",
    "signal": "s",
    "error": "e",
    "conditional": "c",
    "escalation": "x",
}
ThrowKind = Literal["escalation", "escalation_end", "error_end"]
EventSubKind = Literal["message", "timer", "signal"]
HandlerKind = Literal["none", "user", "external", "handler"]


@dataclass(frozen=True)
class Boundary:
    kind: BoundaryKind
    interrupting: bool
    # a conditional event's k in `${pick >= k}`
    level: int = 1


@dataclass(frozen=True)
class Task:
    kind: TaskKind
    boundaries: tuple[Boundary, ...] = ()
    async_before: bool = False
    async_after: bool = False
    # None, ("parallel" | "sequential", cardinality, completed-of-needed or None), ("loop", max)
    loop: tuple[str, int, int | None] | None = None


@dataclass(frozen=True)
class Catch:
    kind: CatchKind
    level: int = 1  # conditional: k in `${pick >= k}`


@dataclass(frozen=True)
class Seq:
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Split:
    kind: Literal["exclusive", "inclusive", "parallel"]
    branches: tuple[Block, ...]
    # parallel only: the last branch ends on its own end event instead of reaching the join
    escape: bool = False


@dataclass(frozen=True)
class EventChoice:
    kinds: tuple[CatchKind, ...]


@dataclass(frozen=True)
class Link:
    """A link throw event and the catch event it leads to."""


@dataclass(frozen=True)
class Throw:
    """A path beside a scope's body (its own branch of a parallel fork) that throws when
    `${pick >= level}`: an escalation on the way to its end (`escalation`), an escalation end
    event or an error end event; else it ends at a none end event."""

    kind: ThrowKind
    level: int = 0


@dataclass(frozen=True)
class EventSub:
    """An event subprocess started by its message, timer (one hour) or signal, interrupting
    its scope or not; a user task."""

    kind: EventSubKind
    interrupting: bool


@dataclass(frozen=True)
class Sub:
    body: Block
    boundaries: tuple[Boundary, ...] = ()
    event_sub: EventSub | None = None
    throw: Throw | None = None


@dataclass(frozen=True)
class Call:
    """A call activity (binding 'latest', `pick` and `flaky` mapped in and out) calling a
    process whose body is `body` (and the path of `throw` beside it)."""

    body: Block
    boundaries: tuple[Boundary, ...] = ()
    throw: Throw | None = None


@dataclass(frozen=True)
class Compensate:
    """A task with a compensation boundary event and its handler task, then `body`, then an
    intermediate compensation throw event in the same scope (it waits for the handlers)."""

    task: TaskKind
    handler: HandlerKind
    body: Block


@dataclass(frozen=True)
class Txn:
    """A transaction subprocess: a compensable task (its handler `handler`), `body`, then a
    cancel end event when `${pick >= level}` (else a none end); its cancel boundary event's path
    joins the transaction's own way out."""

    body: Block
    handler: HandlerKind
    level: int = 0


Block = Task | Catch | Seq | Split | EventChoice | Sub | Link | Call | Compensate | Txn


@dataclass
class Spec:
    """A drawn model: its tree, and the model built from it (built outside the strategy, once
    asked for: building draws random ids), with the processes its call activities call."""

    key: str
    root: Block
    built: ProcessModel | None = field(default=None, repr=False)
    # an event subprocess of the process itself
    event_sub: EventSub | None = None
    built_callees: tuple[ProcessModel, ...] | None = field(default=None, repr=False)

    @property
    def model(self) -> ProcessModel:
        if self.built is None:
            self.built, self.built_callees = build(self.key, self.root, self.event_sub)
        return self.built

    @property
    def callees(self) -> tuple[ProcessModel, ...]:
        """The called processes, each before the processes that call it (none known for a
        model given as built)."""
        return self.built_callees if self.model is not None and self.built_callees else ()

    def deploy(self, engine: Engine) -> DeploymentResult:
        """Deploy the callees (each in a deployment of its own), then the model; the model's
        deployment."""
        for callee in self.callees:
            engine.deploy(callee)
        return engine.deploy(self.model)

    def describe(self) -> str:
        return f"{self.key}: {self.root!r}" + (
            f" with {self.event_sub!r}" if self.event_sub is not None else ""
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How Hypothesis prints a failing example: the tree, not the models built."""
        printer.text(self.describe())


# -- strategies ------------------------------------------------------------------------------------

levels = st.integers(0, 3)

boundaries = st.lists(
    st.builds(
        Boundary,
        st.sampled_from(["timer", "message", "signal", "error", "conditional"]),
        st.booleans(),
        levels,
    ),
    max_size=2,
)

loops = st.one_of(
    st.none(),
    st.tuples(
        st.sampled_from(["parallel", "sequential"]),
        st.integers(1, 3),
        st.one_of(st.none(), st.integers(1, 2)),
    ),
    st.tuples(st.just("loop"), st.integers(1, 3), st.none()),
)

TASK_KINDS: list[TaskKind] = [
    "user",
    "external",
    "handler",
    "script",
    "none",
    "receive",
    "javascript",
]


def _one_of_each(kept: tuple[Boundary, ...]) -> tuple[Boundary, ...]:
    """One boundary of each kind at most: a message or signal names its node's event."""
    return tuple({b.kind: b for b in reversed(kept)}.values())


@st.composite
def tasks(draw: st.DrawFn) -> Task:
    kind = draw(st.sampled_from(TASK_KINDS))
    kept = tuple(draw(boundaries))
    if kind != "external":  # only an external task's worker throws a BPMN error here
        kept = tuple(b for b in kept if b.kind != "error")
    return Task(
        kind=kind,
        boundaries=_one_of_each(kept),
        async_before=draw(st.booleans()) if kind == "handler" else draw(st.integers(0, 5)) == 0,
        async_after=draw(st.integers(0, 5)) == 0,
        loop=draw(loops),
    )


catch_kinds = st.sampled_from(["timer", "message", "signal", "conditional"])

leaves: st.SearchStrategy[Block] = st.one_of(
    tasks(),
    st.just(Link()),
    st.builds(Catch, catch_kinds, levels),
    st.builds(EventChoice, st.lists(catch_kinds, min_size=2, max_size=3).map(tuple)),
)

event_subs = st.builds(EventSub, st.sampled_from(["message", "timer", "signal"]), st.booleans())
handler_kinds = st.sampled_from(["none", "user", "external", "handler"])


@st.composite
def _scoped(
    draw: st.DrawFn, children: st.SearchStrategy[Block], errors: bool
) -> tuple[Block, tuple[Boundary, ...], Throw | None]:
    """A scope's body, its boundary events and the throw beside its body, with the boundary
    event that catches the throw (`errors`: an error end may be thrown)."""
    body = draw(children)
    kept = draw(
        st.lists(
            st.builds(
                Boundary,
                st.sampled_from(["timer", "message", "signal", "conditional"]),
                st.booleans(),
                levels,
            ),
            max_size=1,
        )
    )
    kinds: list[ThrowKind] = ["escalation", "escalation_end"]
    if errors:
        kinds.append("error_end")
    throw = draw(st.one_of(st.none(), st.builds(Throw, st.sampled_from(kinds), levels)))
    if throw is not None:
        catching: BoundaryKind = "error" if throw.kind == "error_end" else "escalation"
        kept.append(Boundary(catching, draw(st.booleans())))
    return body, _one_of_each(tuple(kept)), throw


def _sub(children: st.SearchStrategy[Block]) -> st.SearchStrategy[Block]:
    return st.tuples(_scoped(children, errors=True), st.one_of(st.none(), event_subs)).map(
        lambda made: Sub(made[0][0], made[0][1], made[1], made[0][2])
    )


def _call(children: st.SearchStrategy[Block]) -> st.SearchStrategy[Block]:
    return _scoped(children, errors=True).map(lambda made: Call(*made))


def _extend(children: st.SearchStrategy[Block]) -> st.SearchStrategy[Block]:
    branches = st.lists(children, min_size=2, max_size=3).map(tuple)
    return st.one_of(
        st.lists(children, min_size=2, max_size=3).map(lambda b: Seq(tuple(b))),
        st.builds(Split, st.sampled_from(["exclusive", "inclusive", "parallel"]), branches),
        st.builds(
            Split,
            st.just("parallel"),
            st.lists(children, min_size=3, max_size=3).map(tuple),
            st.just(True),
        ),
        _sub(children),
        _call(children),
        st.builds(
            Compensate,
            st.sampled_from(["none", "user", "external", "script"]),
            handler_kinds,
            children,
        ),
        st.builds(Txn, children, handler_kinds, levels),
    )


blocks: st.SearchStrategy[Block] = st.recursive(leaves, _extend, max_leaves=8)

_keys = itertools.count()


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    root = draw(blocks)
    event_sub = draw(st.one_of(st.none(), event_subs))
    key = f"fuzz{next(_keys)}"
    return Spec(key, root, event_sub=event_sub)


# -- building --------------------------------------------------------------------------------------


def _at(parent: str | None) -> NodeOptions:
    """The options that place a node inside `parent` (None: the process)."""
    return {} if parent is None else {"parent": parent}


class _Builder:
    def __init__(
        self,
        key: str,
        ids: itertools.count[int] | None = None,
        callees: list[ProcessModel] | None = None,
    ) -> None:
        self.key = key
        self.b = ProcessBuilder(key)
        # shared with the builders of the callees: node ids unique across the family
        self.ids = itertools.count(1) if ids is None else ids
        self.callees: list[ProcessModel] = [] if callees is None else callees

    def new(self, prefix: str) -> str:
        return f"{prefix}{next(self.ids)}"

    def block(self, block: Block, parent: str | None) -> tuple[str, str]:
        """Add `block` inside `parent`; its first and last node."""
        where = _at(parent)
        b = self.b
        if isinstance(block, Seq):
            ends = [self.block(child, parent) for child in block.blocks]
            for (_, last), (first, _) in itertools.pairwise(ends):
                b.flow(last, first)
            return ends[0][0], ends[-1][1]
        if isinstance(block, Task):
            return self.task(block, parent)
        if isinstance(block, Catch):
            node = self.new("C")
            self.catch(node, block.kind, parent, block.level)
            return node, node
        if isinstance(block, EventChoice):
            gate, join = self.new("Eg"), self.new("Ej")
            b.event_based_gateway(gate, **where)
            b.exclusive_gateway(join, **where)
            for kind in block.kinds:
                node = self.new("C")
                self.catch(node, kind, parent, 1)
                b.flow(gate, node).flow(node, join)
            return gate, join
        if isinstance(block, Split):
            return self.split(block, parent)
        if isinstance(block, Link):
            throw, catch = self.new("Lt"), self.new("Lc")
            name = f"link_{throw}"
            b.intermediate_throw_event(throw, link=name, **where)
            b.intermediate_catch_event(catch, link=name, **where)
            return throw, catch
        if isinstance(block, Call):
            return self.call(block, parent)
        if isinstance(block, Compensate):
            return self.compensate(block, parent)
        if isinstance(block, Txn):
            return self.transaction(block, parent)
        sub = self.new("S")
        b.sub_process(sub, **where)
        self.scope_body(block.body, block.throw, sub)
        if block.event_sub is not None:
            self.event_sub(block.event_sub, sub)
        return sub, self.boundaries(sub, block.boundaries, parent)

    def scope_body(self, body: Block, throw: Throw | None, parent: str | None) -> None:
        """A start event, `body` and an end event in the scope `parent` (None: the process);
        with `throw`, a parallel fork after the start leads to the body and to the throw's path."""
        b = self.b
        where = _at(parent)
        start, end = self.new("Ss"), self.new("Se")
        b.start_event(start, **where)
        first, last = self.block(body, parent)
        b.end_event(end, **where)
        b.flow(last, end)
        if throw is None:
            b.flow(start, first)
            return
        fork = self.new("Gt")
        b.parallel_gateway(fork, **where)
        b.flow(start, fork).flow(fork, first)
        gate, quiet = self.new("Xg"), self.new("Xq")
        b.exclusive_gateway(gate, default=f"Flow_{gate}_quiet", **where)
        b.end_event(quiet, **where)
        b.flow(fork, gate).flow(gate, quiet, id=f"Flow_{gate}_quiet")
        thrower = self.new("X")
        if throw.kind == "escalation":
            after = self.new("Xe")
            b.intermediate_throw_event(thrower, escalation_code=ESCALATION_CODE, **where)
            b.end_event(after, **where)
            b.flow(thrower, after)
        elif throw.kind == "escalation_end":
            b.end_event(thrower, escalation_code=ESCALATION_CODE, **where)
        else:
            b.end_event(thrower, error_code=ERROR_CODE, **where)
        b.flow(gate, thrower, condition=f"${{pick >= {throw.level}}}")

    def event_sub(self, made: EventSub, parent: str | None) -> None:
        """An event subprocess in `parent` (None: the process) started by its trigger; a user
        task."""
        b = self.b
        handler, handler_start = self.new("Es"), self.new(EVENT_START)
        task, handler_end = self.new("T"), self.new("Ese")
        b.sub_process(handler, triggered_by_event=True, **_at(parent))
        if made.kind == "message":
            trigger: dict[str, object] = {"message": f"msg_{handler_start}"}
        elif made.kind == "signal":
            trigger = {"signal": f"sig_{handler_start}"}
        else:
            trigger = {"timer": HOUR}
        b.start_event(
            handler_start,
            parent=handler,
            interrupting=made.interrupting,
            **trigger,  # type: ignore[arg-type]
        )
        b.user_task(task, parent=handler)
        b.end_event(handler_end, parent=handler)
        b.chain(handler_start, task, handler_end)

    def call(self, block: Call, parent: str | None) -> tuple[str, str]:
        """The callee is built first (its own callees before it), then the call activity."""
        callee = _Builder(f"{self.key}_c{next(self.ids)}", self.ids, self.callees)
        callee.scope_body(block.body, block.throw, None)
        self.callees.append(callee.b.build())
        node = self.new("A")
        self.b.call_activity(
            node,
            called_element=callee.key,
            binding="latest",
            inputs=CALL_MAPPINGS,
            outputs=CALL_MAPPINGS,
            **_at(parent),
        )
        return node, self.boundaries(node, block.boundaries, parent)

    def compensable(self, kind: TaskKind, handler: HandlerKind, parent: str | None) -> str:
        """A task of `kind` with a compensation boundary event and its handler task."""
        node, undo = self.new("K"), self.new("H")
        self.plain_task(node, kind, _at(parent))
        self.plain_task(undo, handler, _at(parent))
        self.b.compensation_boundary(f"Bk{node}", node, undo)
        return node

    def compensate(self, block: Compensate, parent: str | None) -> tuple[str, str]:
        node = self.compensable(block.task, block.handler, parent)
        first, last = self.block(block.body, parent)
        throw = self.new("Ct")
        self.b.compensation_throw(throw, parent=parent)
        self.b.flow(node, first).flow(last, throw)
        return node, throw

    def transaction(self, block: Txn, parent: str | None) -> tuple[str, str]:
        b = self.b
        tx = self.new("Y")
        b.transaction(tx, **_at(parent))
        start, gate = self.new("Ss"), self.new("Xg")
        done, cancel = self.new("Se"), self.new("Xc")
        b.start_event(start, parent=tx)
        node = self.compensable("none", block.handler, tx)
        first, last = self.block(block.body, tx)
        b.exclusive_gateway(gate, default=f"Flow_{gate}_done", parent=tx)
        b.end_event(done, parent=tx)
        b.end_event(cancel, cancel=True, parent=tx)
        b.chain(start, node, first)
        b.flow(last, gate)
        b.flow(gate, done, id=f"Flow_{gate}_done")
        b.flow(gate, cancel, condition=f"${{pick >= {block.level}}}")
        out = self.new("Bm")
        b.exclusive_gateway(out, **_at(parent))
        b.cancel_boundary(f"Bx{tx}", tx)
        b.flow(tx, out).flow(f"Bx{tx}", out)
        return tx, out

    def catch(self, node: str, kind: CatchKind, parent: str | None, level: int) -> None:
        where = _at(parent)
        if kind == "timer":
            self.b.intermediate_catch_event(node, timer=HOUR, **where)
        elif kind == "message":
            self.b.intermediate_catch_event(node, message=f"msg_{node}", **where)
        elif kind == "signal":
            self.b.intermediate_catch_event(node, signal=f"sig_{node}", **where)
        else:
            self.b.intermediate_catch_event(node, **where)
            self.b.conditional(node, f"${{pick >= {level}}}")

    def plain_task(self, node: str, kind: TaskKind, options: NodeOptions) -> None:
        b = self.b
        if kind == "user":
            b.user_task(node, **options)
        elif kind == "external":
            b.service_task(node, topic=TOPIC, **options)
        elif kind == "handler":
            b.service_task(node, handler=HANDLER, **options)
        elif kind == "script":
            b.script_task(
                node,
                script="${pick + 1}",
                format="juel",
                result_variable=f"r_{node}",
                **options,
            )
        elif kind == "javascript":
            b.script_task(
                node,
                script="pick + 1",
                format="javascript",
                result_variable=f"r_{node}",
                **options,
            )
        elif kind == "receive":
            b.receive_task(node, message=f"msg_{node}", **options)
        else:
            b.task(node, **options)

    def task(self, task: Task, parent: str | None) -> tuple[str, str]:
        b = self.b
        node = self.new("T")
        options = _at(parent)
        options["async_before"] = task.async_before
        options["async_after"] = task.async_after
        self.plain_task(node, task.kind, options)
        if task.loop is not None:
            how, count, needed = task.loop
            if how == "loop":
                b.standard_loop(node, maximum=count)
            else:
                b.multi_instance(
                    node,
                    sequential=how == "sequential",
                    cardinality=count,
                    completion_condition=None
                    if needed is None
                    else f"${{nrOfCompletedInstances >= {needed}}}",
                )
        return node, self.boundaries(node, task.boundaries, parent)

    def boundaries(self, node: str, kept: tuple[Boundary, ...], parent: str | None) -> str:
        """Add the boundary events of `node`; the node its way out leaves from. An interrupting
        event's path joins the activity's own at an exclusive gateway (so a parallel join after
        it still gets its arrival); a non-interrupting one ends on its own end event."""
        b = self.b
        where = _at(parent)
        out = node
        if any(b.interrupting or b.kind == "error" for b in kept):
            out = self.new("Bm")
            b.exclusive_gateway(out, **where)
            b.flow(node, out)
        for boundary in kept:
            event = f"B{BOUNDARY_LETTERS[boundary.kind]}{node}"
            interrupting = boundary.interrupting or boundary.kind == "error"
            if boundary.kind == "timer":
                trigger: dict[str, object] = {"timer": HOUR}
            elif boundary.kind == "message":
                trigger = {"message": f"msg_{event}"}
            elif boundary.kind == "signal":
                trigger = {"signal": f"sig_{event}"}
            elif boundary.kind == "escalation":
                trigger = {"escalation_code": ESCALATION_CODE}
            elif boundary.kind == "conditional":
                trigger = {}
            else:
                trigger = {"error_code": ERROR_CODE}
            b.boundary_event(
                event,
                node,
                cancel_activity=interrupting,
                **trigger,  # type: ignore[arg-type]
            )
            if boundary.kind == "conditional":
                b.conditional(event, f"${{pick >= {boundary.level}}}")
            if interrupting:
                b.flow(event, out)
            else:
                end = self.new("Be")
                b.end_event(end, **where)
                b.flow(event, end)
        return out

    def split(self, block: Split, parent: str | None) -> tuple[str, str]:
        b = self.b
        where = _at(parent)
        fork, join = self.new("Gs"), self.new("Gj")
        ends = [self.block(branch, parent) for branch in block.branches]
        default = f"Flow_{fork}_0"
        for node in (fork, join):
            if block.kind == "parallel":
                b.parallel_gateway(node, **where)
            elif block.kind == "exclusive":
                b.exclusive_gateway(node, default=default if node == fork else None, **where)
            else:
                # Two branches: the first is always taken (no default), so that both can be.
                chosen = default if node == fork and len(ends) > 2 else None
                b.inclusive_gateway(node, default=chosen, **where)
        for index, (first, last) in enumerate(ends):
            condition = None
            if block.kind == "exclusive" and index > 0:
                condition = f"${{pick == {index}}}"
            elif block.kind == "inclusive" and index > 0:
                condition = f"${{pick >= {index}}}"
            b.flow(fork, first, id=f"Flow_{fork}_{index}", condition=condition)
            if block.escape and index == len(ends) - 1:
                end = self.new("Ee")
                b.end_event(end, **where)
                b.flow(last, end)
            else:
                b.flow(last, join)
        return fork, join


def build(
    key: str, root: Block, event_sub: EventSub | None = None
) -> tuple[ProcessModel, tuple[ProcessModel, ...]]:
    """The model of `root` (and the process's event subprocess), and the processes it calls,
    each before its callers."""
    made = _Builder(key)
    made.b.start_event("Start")
    first, last = made.block(root, None)
    made.b.end_event("End")
    made.b.flow("Start", first).flow(last, "End")
    if event_sub is not None:
        made.event_sub(event_sub, None)
    return made.b.build(), tuple(made.callees)
