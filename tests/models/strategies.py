"""Hypothesis strategies over valid process models.

A model is drawn as a tree of blocks (`Block`), each of which has one way in and one way out, and
is then built through `ProcessBuilder`: a sequence, a task of some kind (with boundary events,
asynchronous continuations, multi-instance or a standard loop), an intermediate catch event, an
exclusive, inclusive or parallel split with its join (a parallel split may leave one branch to end
on its own: unbalanced), an event-based gateway, an embedded subprocess. No flow goes back, so
every instance ends once its waits are served; loops are bounded by their maximum. The trees
shrink towards a single none task.

Every wait is named by its node id, so a driver finds what to do from the rows alone:
user tasks, external tasks on `TOPIC`, handler tasks calling `HANDLER` (it fails while the
variable `flaky` is true), messages `msg_<node>` and signals `sig_<node>`, timers of one hour.
Conditions read the variable `pick` (an integer 0..3): an exclusive split takes the branch it
names (else its first, the default), an inclusive split every branch from the second up to it (its
first, the default, when none; of two branches, the first always).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Literal

from hypothesis import strategies as st

from engine.builder import ProcessBuilder
from engine.builder.base import NodeOptions
from engine.model import ProcessModel, TimerDefinition

TOPIC = "fuzz"
HANDLER = "fuzzHandler"
ERROR_CODE = "E1"
HOUR = TimerDefinition(kind="duration", text="PT1H")
PICKS = range(4)

TaskKind = Literal["user", "external", "handler", "script", "none", "receive"]
CatchKind = Literal["timer", "message", "signal"]
BoundaryKind = Literal["timer", "message", "signal", "error"]


@dataclass(frozen=True)
class Boundary:
    kind: BoundaryKind
    interrupting: bool


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
class Sub:
    body: Block
    boundaries: tuple[Boundary, ...] = ()
    # An event subprocess inside: started by its message, interrupting or not; a user task.
    event_sub: bool | None = None


Block = Task | Catch | Seq | Split | EventChoice | Sub | Link


@dataclass
class Spec:
    """A drawn model: its tree, and the model built from it (built outside the strategy, once
    asked for: building draws random ids)."""

    key: str
    root: Block
    built: ProcessModel | None = field(default=None, repr=False)

    @property
    def model(self) -> ProcessModel:
        if self.built is None:
            self.built = build(self.key, self.root)
        return self.built

    def describe(self) -> str:
        return f"{self.key}: {self.root!r}"


# -- strategies ------------------------------------------------------------------------------------

boundaries = st.lists(
    st.builds(
        Boundary,
        st.sampled_from(["timer", "message", "signal", "error"]),
        st.booleans(),
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


@st.composite
def tasks(draw: st.DrawFn) -> Task:
    kinds: list[TaskKind] = ["user", "external", "handler", "script", "none", "receive"]
    kind = draw(st.sampled_from(kinds))
    kept = tuple(draw(boundaries))
    if kind != "external":  # only an external task's worker throws a BPMN error here
        kept = tuple(b for b in kept if b.kind != "error")
    # one boundary of each kind at most: a message or signal names its node's event
    kept = tuple({b.kind: b for b in reversed(kept)}.values())
    return Task(
        kind=kind,
        boundaries=kept,
        async_before=draw(st.booleans()) if kind == "handler" else draw(st.integers(0, 5)) == 0,
        async_after=draw(st.integers(0, 5)) == 0,
        loop=draw(loops),
    )


leaves: st.SearchStrategy[Block] = st.one_of(
    tasks(),
    st.just(Link()),
    st.builds(Catch, st.sampled_from(["timer", "message", "signal"])),
    st.builds(
        EventChoice,
        st.lists(st.sampled_from(["timer", "message", "signal"]), min_size=2, max_size=3).map(
            tuple
        ),
    ),
)


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
        st.builds(
            Sub,
            children,
            st.lists(
                st.builds(Boundary, st.sampled_from(["timer", "message", "signal"]), st.booleans()),
                max_size=1,
            ).map(tuple),
            st.one_of(st.none(), st.booleans()),
        ),
    )


blocks: st.SearchStrategy[Block] = st.recursive(leaves, _extend, max_leaves=8)

_keys = itertools.count()


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    root = draw(blocks)
    key = f"fuzz{next(_keys)}"
    return Spec(key, root)


# -- building --------------------------------------------------------------------------------------


def _at(parent: str | None) -> NodeOptions:
    """The options that place a node inside `parent` (None: the process)."""
    return {} if parent is None else {"parent": parent}


class _Builder:
    def __init__(self, key: str) -> None:
        self.b = ProcessBuilder(key)
        self.ids = itertools.count(1)

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
            self.catch(node, block.kind, parent)
            return node, node
        if isinstance(block, EventChoice):
            gate, join = self.new("Eg"), self.new("Ej")
            b.event_based_gateway(gate, **where)
            b.exclusive_gateway(join, **where)
            for kind in block.kinds:
                node = self.new("C")
                self.catch(node, kind, parent)
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
        sub = self.new("S")
        b.sub_process(sub, **where)
        start, end = self.new("Ss"), self.new("Se")
        b.start_event(start, parent=sub)
        first, last = self.block(block.body, sub)
        b.end_event(end, parent=sub)
        b.flow(start, first).flow(last, end)
        if block.event_sub is not None:
            handler, handler_start = self.new("Es"), self.new("Ess")
            task, handler_end = self.new("T"), self.new("Ese")
            b.sub_process(handler, triggered_by_event=True, parent=sub)
            b.start_event(
                handler_start,
                parent=handler,
                message=f"msg_{handler_start}",
                interrupting=block.event_sub,
            )
            b.user_task(task, parent=handler)
            b.end_event(handler_end, parent=handler)
            b.chain(handler_start, task, handler_end)
        return sub, self.boundaries(sub, block.boundaries, parent)

    def catch(self, node: str, kind: CatchKind, parent: str | None) -> None:
        where = _at(parent)
        if kind == "timer":
            self.b.intermediate_catch_event(node, timer=HOUR, **where)
        elif kind == "message":
            self.b.intermediate_catch_event(node, message=f"msg_{node}", **where)
        else:
            self.b.intermediate_catch_event(node, signal=f"sig_{node}", **where)

    def task(self, task: Task, parent: str | None) -> tuple[str, str]:
        b = self.b
        node = self.new("T")
        options = _at(parent)
        options["async_before"] = task.async_before
        options["async_after"] = task.async_after
        if task.kind == "user":
            b.user_task(node, **options)
        elif task.kind == "external":
            b.service_task(node, topic=TOPIC, **options)
        elif task.kind == "handler":
            b.service_task(node, handler=HANDLER, **options)
        elif task.kind == "script":
            b.script_task(
                node,
                script="${pick + 1}",
                format="juel",
                result_variable=f"r_{node}",
                **options,
            )
        elif task.kind == "receive":
            b.receive_task(node, message=f"msg_{node}", **options)
        else:
            b.task(node, **options)
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
            event = f"B{boundary.kind[0]}{node}"
            interrupting = boundary.interrupting or boundary.kind == "error"
            if boundary.kind == "timer":
                trigger: dict[str, object] = {"timer": HOUR}
            elif boundary.kind == "message":
                trigger = {"message": f"msg_{event}"}
            elif boundary.kind == "signal":
                trigger = {"signal": f"sig_{event}"}
            else:
                trigger = {"error_code": ERROR_CODE}
            b.boundary_event(
                event,
                node,
                cancel_activity=interrupting,
                **trigger,  # type: ignore[arg-type]
            )
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


def build(key: str, root: Block) -> ProcessModel:
    made = _Builder(key)
    made.b.start_event("Start")
    first, last = made.block(root, None)
    made.b.end_event("End")
    made.b.flow("Start", first).flow(last, "End")
    return made.b.build()
