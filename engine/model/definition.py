"""A whole process: its sequence flows and the `ProcessModel` that holds nodes and flows,
with the lookups the runtime asks at every step."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.errors import ModelError
from engine.language.expressions import Expression
from engine.model.events import (
    BoundaryEvent,
    EndEvent,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    StartEvent,
)
from engine.model.gateways import EventBasedGateway, InclusiveGateway
from engine.model.node import Listener, Node, Properties, ScriptCondition
from engine.model.scopes import CallActivity, SubProcess
from engine.model.tasks import (
    BusinessRuleTask,
    NoneTask,
    ReceiveTask,
    ScriptTask,
    ServiceTask,
    UserTask,
)

ACTIVITY_TYPES = (
    NoneTask,
    ServiceTask,
    ScriptTask,
    BusinessRuleTask,
    UserTask,
    ReceiveTask,
    SubProcess,
    CallActivity,
)
# The events that may carry input/output parameters (besides every activity).
IO_EVENT_TYPES = (IntermediateCatchEvent, IntermediateThrowEvent, EndEvent)


@dataclass(frozen=True, kw_only=True)
class SequenceFlow:
    id: str
    source: str
    target: str
    name: str | None = None
    condition: Expression | ScriptCondition | None = None
    # camunda:executionListener on `take`.
    listeners: tuple[Listener, ...] = ()
    line: int | None = field(default=None, compare=False)
    documentation: str | None = field(default=None, compare=False)
    properties: Properties = field(default=(), compare=False)


@dataclass(frozen=True, kw_only=True)
class ProcessModel:
    """One executable process. `key` is the BPMN process id; versions are assigned at deployment."""

    key: str
    name: str | None = None
    nodes: tuple[Node, ...] = ()
    flows: tuple[SequenceFlow, ...] = ()
    version_tag: str | None = None
    # camunda:historyTimeToLive, in days (None: the default setting applies;
    # engine/db/retention.py).
    history_ttl_days: int | None = None
    # The process's camunda:jobPriority, for the jobs of nodes that name none (None: 0).
    job_priority: int | str | None = None
    # The process's camunda:executionListener on `start` and `end`.
    listeners: tuple[Listener, ...] = ()
    line: int | None = field(default=None, compare=False)
    documentation: str | None = field(default=None, compare=False)
    properties: Properties = field(default=(), compare=False)
    _nodes_by_id: dict[str, Node] = field(init=False, repr=False, compare=False)
    _flows_by_id: dict[str, SequenceFlow] = field(init=False, repr=False, compare=False)
    # Asked at every step of every token, so answered from a map instead of a scan of the nodes.
    _boundary_by_activity: dict[str, tuple[BoundaryEvent, ...]] = field(
        init=False, repr=False, compare=False
    )
    _children_by_scope: dict[str | None, tuple[Node, ...]] = field(
        init=False, repr=False, compare=False
    )
    _none_start_by_scope: dict[str | None, StartEvent] = field(
        init=False, repr=False, compare=False
    )
    _event_subprocesses_by_scope: dict[str | None, tuple[SubProcess, ...]] = field(
        init=False, repr=False, compare=False
    )
    # For each converging inclusive gateway, the nodes of its scope from which a token can still
    # reach it: computed once per model, asked whenever such a join may fire.
    _upstream_of_join: dict[str, frozenset[str]] = field(init=False, repr=False, compare=False)
    # The catch events an event-based gateway waits for on their behalf.
    _after_event_gateway: frozenset[str] = field(init=False, repr=False, compare=False)
    # Each link catch event by its scope and link name.
    _link_catches: dict[tuple[str | None, str], str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(sorted(self.nodes, key=lambda n: n.id)))
        object.__setattr__(self, "flows", tuple(sorted(self.flows, key=lambda f: f.id)))
        object.__setattr__(self, "_nodes_by_id", {n.id: n for n in self.nodes})
        object.__setattr__(self, "_flows_by_id", {f.id: f for f in self.flows})
        boundaries: dict[str, list[BoundaryEvent]] = {}
        children: dict[str | None, list[Node]] = {}
        none_starts: dict[str | None, StartEvent] = {}
        event_subprocesses: dict[str | None, list[SubProcess]] = {}
        for node in self.nodes:
            children.setdefault(node.parent, []).append(node)
            if isinstance(node, BoundaryEvent):
                boundaries.setdefault(node.attached_to, []).append(node)
            elif isinstance(node, StartEvent) and node.is_none_start:
                none_starts.setdefault(node.parent, node)
            elif isinstance(node, SubProcess) and node.triggered_by_event:
                event_subprocesses.setdefault(node.parent, []).append(node)
        object.__setattr__(
            self, "_boundary_by_activity", {k: tuple(v) for k, v in boundaries.items()}
        )
        object.__setattr__(self, "_children_by_scope", {k: tuple(v) for k, v in children.items()})
        object.__setattr__(self, "_none_start_by_scope", none_starts)
        object.__setattr__(
            self,
            "_event_subprocesses_by_scope",
            {k: tuple(v) for k, v in event_subprocesses.items()},
        )
        object.__setattr__(
            self,
            "_link_catches",
            {
                (n.parent, n.link_name): n.id
                for n in self.nodes
                if isinstance(n, IntermediateCatchEvent) and n.link_name is not None
            },
        )
        object.__setattr__(self, "_upstream_of_join", self._inclusive_upstreams())
        gateways = {n.id for n in self.nodes if isinstance(n, EventBasedGateway)}
        object.__setattr__(
            self,
            "_after_event_gateway",
            frozenset(f.target for f in self.flows if f.source in gateways),
        )

    def _inclusive_upstreams(self) -> dict[str, frozenset[str]]:
        """Walk back from each converging inclusive gateway along the flows into each node, from
        a link catch event to its throw events, and from a boundary event to the activity it is
        attached to (a token waiting in the activity
        may leave through it). Flows never leave a scope, so neither does the walk: a token in an
        embedded subprocess is represented here by the subprocess's own token."""
        joins = [n for n in self.nodes if isinstance(n, InclusiveGateway) and n.is_join]
        if not joins:
            return {}
        sources: dict[str, list[str]] = {}
        for flow in self.flows:
            sources.setdefault(flow.target, []).append(flow.source)
        for node in self.nodes:
            if isinstance(node, BoundaryEvent):
                sources.setdefault(node.id, []).append(node.attached_to)
            elif isinstance(node, IntermediateThrowEvent) and node.link_name is not None:
                target = self._link_catches.get((node.parent, node.link_name))
                if target is not None:  # a link leads from its throw event to its catch event
                    sources.setdefault(target, []).append(node.id)
        upstream: dict[str, frozenset[str]] = {}
        for join in joins:
            seen: set[str] = set()
            todo = list(sources.get(join.id, ()))
            while todo:
                node_id = todo.pop()
                if node_id in seen or node_id == join.id:
                    continue
                seen.add(node_id)
                todo.extend(sources.get(node_id, ()))
            upstream[join.id] = frozenset(seen)
        return upstream

    def __hash__(self) -> int:
        return hash((self.key, self.nodes, self.flows))

    def node(self, node_id: str) -> Node:
        return self._nodes_by_id[node_id]

    def flow(self, flow_id: str) -> SequenceFlow:
        return self._flows_by_id[flow_id]

    def has_node(self, node_id: str) -> bool:
        return node_id in self._nodes_by_id

    def has_flow(self, flow_id: str) -> bool:
        return flow_id in self._flows_by_id

    @property
    def has_inclusive_joins(self) -> bool:
        return bool(self._upstream_of_join)

    def upstream_of(self, join_id: str) -> frozenset[str]:
        """The nodes from which a token can still reach the converging inclusive gateway
        `join_id` (the gateway itself not included)."""
        return self._upstream_of_join.get(join_id, frozenset())

    def follows_event_gateway(self, node_id: str) -> bool:
        """Whether `node_id` is a catch event an event-based gateway waits for: a token arrives
        there only once its event has occurred."""
        return node_id in self._after_event_gateway

    def link_target(self, throw: IntermediateThrowEvent) -> str:
        """The link catch event a link throw event leads to (see validate)."""
        assert throw.link_name is not None
        return self._link_catches[(throw.parent, throw.link_name)]

    def boundary_events(self, activity_id: str) -> tuple[BoundaryEvent, ...]:
        return self._boundary_by_activity.get(activity_id, ())

    def children(self, scope_id: str | None) -> tuple[Node, ...]:
        """The nodes directly inside `scope_id` (None: the process level)."""
        return self._children_by_scope.get(scope_id, ())

    def none_start_of(self, scope_id: str | None) -> StartEvent:
        """The first none start event (by id) directly inside `scope_id`."""
        start = self._none_start_by_scope.get(scope_id)
        if start is None:
            raise ModelError("scope has no none start event", element_id=scope_id or self.key)
        return start

    def event_subprocesses(self, scope_id: str | None) -> tuple[SubProcess, ...]:
        return self._event_subprocesses_by_scope.get(scope_id, ())

    @property
    def none_start(self) -> StartEvent:
        """The process's none start event (ModelError when it has none)."""
        return self.none_start_of(None)

    @property
    def initial(self) -> StartEvent | None:
        """The start event a start by key or id enters through, chosen as Camunda 7 chooses its
        initial activity: the none start event, else the one timer start event, else the
        process's only start event whatever its trigger (a message start event, say); None when
        there are several start events and no none start event to choose."""
        none = self._none_start_by_scope.get(None)
        if none is not None:
            return none
        starts = [node for node in self.children(None) if isinstance(node, StartEvent)]
        timers = [start for start in starts if start.timer is not None]
        if len(timers) == 1:
            return timers[0]
        return starts[0] if len(starts) == 1 else None
