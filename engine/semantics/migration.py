"""Version migration plans: which node of a source definition becomes which of a target.

Pure logic over two parsed models and a loaded instance: generate a plan by matching node ids,
validate it (each instruction's failures), and validate one instance against it (which of its
tokens, waits and joins cannot follow, and why), and the report of a plan and of instances
against it. `engine/commands/migration.py` applies a plan that validated,
`engine/queries/migration.py` reports on one; nothing here reads or writes the database.

As in Camunda 7, a plan is a list of instructions `source node -> target node`, each with
`updateEventTrigger`: a mapped event's timer is then computed again from the target's timer
definition, and a message or signal subscription takes the target's name; without it a timer
keeps its due date and a subscription its name. Nodes keep their activity instances: a token,
its visit, its user or external task, its jobs and subscriptions keep their ids and change only
the node they are at.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from engine.core.runtime import InstanceRun
from engine.errors import BadRequest
from engine.model import (
    BoundaryEvent,
    EndEvent,
    EventBasedGateway,
    ExclusiveGateway,
    InclusiveGateway,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    Node,
    ParallelGateway,
    ProcessModel,
    SendTask,
    ServiceTask,
    StartEvent,
    SubProcess,
    triggers,
)
from engine.states import JobKind, SubscriptionKind


@dataclass(frozen=True)
class Instruction:
    """Map the nodes `source` (one, as Camunda allows) to `target` (one)."""

    source: tuple[str, ...]
    target: tuple[str, ...]
    update_event_trigger: bool = False

    def to_json(self) -> dict[str, Any]:
        """Camunda's MigrationInstructionDto."""
        return {
            "sourceActivityIds": list(self.source),
            "targetActivityIds": list(self.target),
            "updateEventTrigger": self.update_event_trigger,
        }


@dataclass(frozen=True)
class MigrationPlan:
    source_definition_id: str
    target_definition_id: str
    instructions: tuple[Instruction, ...] = ()

    def mapping(self) -> dict[str, Instruction]:
        """Each source node's instruction (the first, when a node is mapped twice)."""
        found: dict[str, Instruction] = {}
        for instruction in self.instructions:
            for node_id in instruction.source:
                found.setdefault(node_id, instruction)
        return found

    def to_json(self) -> dict[str, Any]:
        """Camunda's MigrationPlanDto."""
        return {
            "sourceProcessDefinitionId": self.source_definition_id,
            "targetProcessDefinitionId": self.target_definition_id,
            "instructions": [i.to_json() for i in self.instructions],
            "variables": None,
        }

    @classmethod
    def from_json(cls, body: Any, where: str = "migrationPlan") -> MigrationPlan:
        """A plan from Camunda's MigrationPlanDto; BadRequest naming the field otherwise."""
        if not isinstance(body, Mapping):
            raise BadRequest(f"{where} must be an object", field=where)
        source = body.get("sourceProcessDefinitionId")
        target = body.get("targetProcessDefinitionId")
        for name, value in (
            ("sourceProcessDefinitionId", source),
            ("targetProcessDefinitionId", target),
        ):
            if not isinstance(value, str) or not value:
                raise BadRequest(f"{where}.{name} must be a definition id", field=name)
        raw = body.get("instructions")
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            raise BadRequest(f"{where}.instructions must be a list", field="instructions")
        instructions = tuple(
            _instruction(item, f"{where}.instructions[{n}]") for n, item in enumerate(raw)
        )
        assert isinstance(source, str) and isinstance(target, str)
        return cls(source, target, instructions)


def _instruction(item: Any, where: str) -> Instruction:
    if not isinstance(item, Mapping):
        raise BadRequest(f"{where} must be an object", field=where)
    ids: dict[str, tuple[str, ...]] = {}
    for name in ("sourceActivityIds", "targetActivityIds"):
        value = item.get(name)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise BadRequest(f"{where}.{name} must be a list of activity ids", field=name)
        ids[name] = tuple(value)
    update = item.get("updateEventTrigger", False)
    if update is None:
        update = False
    if not isinstance(update, bool):
        raise BadRequest(
            f"{where}.updateEventTrigger must be a boolean", field="updateEventTrigger"
        )
    return Instruction(ids["sourceActivityIds"], ids["targetActivityIds"], update)


# -- generating ----------------------------------------------------------------------------------


def wait_kind(node: Node) -> str:
    """What a token waits for at `node`, beyond its kind: a service or send task is done by an
    external worker (a topic) or by a handler in the engine; an event by its triggers."""
    kind = str(node.kind)
    if isinstance(node, ServiceTask | SendTask):
        return f"{kind}:{'external' if node.topic is not None else 'handler'}"
    found = triggers(node)
    if found:
        kind = f"{kind}:{'+'.join(found)}"
    if isinstance(node, SubProcess) and node.triggered_by_event:
        kind = f"{kind}:event"
    if isinstance(node, BoundaryEvent) and not node.cancel_activity:
        kind = f"{kind}:non-interrupting"
    if isinstance(node, StartEvent) and not node.interrupting:
        kind = f"{kind}:non-interrupting"
    if node.loop is not None:
        kind = f"{kind}:{type(node.loop).__name__}"
    return kind


def has_event_trigger(node: Node) -> bool:
    """Whether `node` waits for a timer, a message or a signal (what `updateEventTrigger` is
    about)."""
    return any(t in ("timer", "message", "signal") for t in triggers(node))


def generate_plan(
    source: ProcessModel,
    target: ProcessModel,
    source_definition_id: str,
    target_definition_id: str,
    update_event_triggers: bool = False,
) -> MigrationPlan:
    """Camunda's generator: every node that can hold an activity instance (`holds_instances`)
    with the same id in both models, of the same kind and wait kind, whose parent scope maps too
    (a subprocess's nodes map when the subprocess does), and a boundary event whose activity
    maps. `update_event_triggers` sets `updateEventTrigger`
    on every instruction of an event with a timer, message or signal."""
    matched: dict[str, str] = {}
    # Parents before children: a node's parent scope is decided before the node is.
    for node in sorted(source.nodes, key=lambda n: _depth(source, n)):
        if not target.has_node(node.id) or not holds_instances(source, node):
            continue
        other = target.node(node.id)
        if wait_kind(node) != wait_kind(other) or not _same_scope(node, other, matched):
            continue
        if isinstance(node, BoundaryEvent):
            assert isinstance(other, BoundaryEvent)
            if matched.get(node.attached_to) != other.attached_to:
                continue
        matched[node.id] = other.id
    instructions = tuple(
        Instruction(
            (node_id,),
            (target_id,),
            update_event_triggers and has_event_trigger(source.node(node_id)),
        )
        for node_id, target_id in sorted(matched.items())
    )
    return MigrationPlan(source_definition_id, target_definition_id, instructions)


def holds_instances(model: ProcessModel, node: Node) -> bool:
    """Whether a token can rest at `node`, so a plan has something to map there (Camunda's
    generator leaves the others out): not a start event (but an event subprocess's, whose
    subscription migrates), an end event, a throw event or an exclusive gateway, which a token
    passes through at once, unless it is asynchronous."""
    if node.async_before or node.async_after:
        return True
    if isinstance(node, StartEvent):
        return node.parent is not None and _in_event_subprocess(model, node)
    return not isinstance(node, EndEvent | IntermediateThrowEvent | ExclusiveGateway)


def _in_event_subprocess(model: ProcessModel, node: Node) -> bool:
    assert node.parent is not None
    parent = model.node(node.parent)
    return isinstance(parent, SubProcess) and parent.triggered_by_event


def _depth(model: ProcessModel, node: Node) -> tuple[int, str]:
    depth, parent = 0, node.parent
    while parent is not None:
        depth += 1
        parent = model.node(parent).parent
    return depth, node.id


def _same_scope(node: Node, other: Node, matched: Mapping[str, str]) -> bool:
    if node.parent is None or other.parent is None:
        return node.parent is None and other.parent is None
    return matched.get(node.parent) == other.parent


# -- validating a plan ---------------------------------------------------------------------------


@dataclass
class InstructionReport:
    """One instruction and why it cannot be applied (no failures: it can)."""

    instruction: Instruction
    failures: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Camunda's MigrationInstructionValidationReportDto."""
        return {"instruction": self.instruction.to_json(), "failures": list(self.failures)}


def validate_plan(
    plan: MigrationPlan, source: ProcessModel, target: ProcessModel
) -> list[InstructionReport]:
    """Each instruction with its failures (Camunda's instruction reports, failures only)."""
    mapping = plan.mapping()
    reports: list[InstructionReport] = []
    seen: set[str] = set()
    for instruction in plan.instructions:
        failures = _instruction_failures(instruction, source, target, mapping, seen)
        seen.update(instruction.source)
        if failures:
            reports.append(InstructionReport(instruction, failures))
    return reports


def _instruction_failures(
    instruction: Instruction,
    source: ProcessModel,
    target: ProcessModel,
    mapping: Mapping[str, Instruction],
    seen: set[str],
) -> list[str]:
    if len(instruction.source) != 1 or len(instruction.target) != 1:
        return ["an instruction maps exactly one source activity to exactly one target activity"]
    [source_id], [target_id] = instruction.source, instruction.target
    failures: list[str] = []
    if source_id in seen:
        failures.append(f"source activity '{source_id}' is mapped more than once")
    if not source.has_node(source_id):
        failures.append(f"source activity '{source_id}' does not exist in the source definition")
    if not target.has_node(target_id):
        failures.append(f"target activity '{target_id}' does not exist in the target definition")
    if failures:
        return failures
    node, other = source.node(source_id), target.node(target_id)
    if wait_kind(node) != wait_kind(other):
        failures.append(
            f"activity '{source_id}' ({wait_kind(node)}) cannot become '{target_id}' "
            f"({wait_kind(other)}): the type changes"
        )
    if instruction.update_event_trigger and not has_event_trigger(node):
        failures.append(
            f"updateEventTrigger is set but '{source_id}' has no timer, message or signal"
        )
    mapped = {k: v.target[0] for k, v in mapping.items() if len(v.target) == 1}
    if not _same_scope(node, other, mapped):
        failures.append(
            f"the parent of '{source_id}' ({node.parent or 'the process'}) is not mapped to the "
            f"parent of '{target_id}' ({other.parent or 'the process'})"
        )
    if (
        isinstance(node, BoundaryEvent)
        and isinstance(other, BoundaryEvent)
        and mapped.get(node.attached_to) != other.attached_to
    ):
        failures.append(
            f"boundary event '{source_id}' is attached to '{node.attached_to}', which is not "
            f"mapped to '{other.attached_to}'"
        )
    if _is_join(node) and len(node.incoming) != len(other.incoming):
        failures.append(
            f"join '{source_id}' has {len(node.incoming)} incoming flows, "
            f"'{target_id}' has {len(other.incoming)}: its branches change"
        )
    return failures


def _is_join(node: Node) -> bool:
    return isinstance(node, ParallelGateway | InclusiveGateway) and node.is_join


# -- validating an instance ----------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """Why something of an instance cannot follow the plan: at `node_id`, what (`kind`: token,
    join, job, subscription), which row (`item`), and the reason."""

    node_id: str
    kind: str
    item: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {
            "activityId": self.node_id,
            "kind": self.kind,
            "id": self.item,
            "reason": self.reason,
        }

    def __str__(self) -> str:
        return f"{self.kind} at '{self.node_id}': {self.reason}"


def _unmapped_reason(node_id: str, source: ProcessModel, target: ProcessModel) -> str:
    if not target.has_node(node_id):
        return f"'{node_id}' is not mapped: the target definition has no such activity"
    if source.has_node(node_id) and wait_kind(source.node(node_id)) != wait_kind(
        target.node(node_id)
    ):
        return (
            f"'{node_id}' is not mapped: its type changed from "
            f"{wait_kind(source.node(node_id))} to {wait_kind(target.node(node_id))}"
        )
    return f"'{node_id}' is not mapped by the plan"


def is_dropped_listener(model: ProcessModel, node_id: str) -> bool:
    """A listener that may go when its event is not mapped: a boundary event's, an event
    subprocess start's, or that of a catch event after an event-based gateway (the event is no
    longer there for the token), as in Camunda."""
    if not model.has_node(node_id):
        return False
    node = model.node(node_id)
    if isinstance(node, IntermediateCatchEvent):
        return model.follows_event_gateway(node_id)
    return isinstance(node, BoundaryEvent | StartEvent)


def arrival_flow(
    flow_id: str,
    join_target: str,
    source: ProcessModel,
    target: ProcessModel,
    mapped: Mapping[str, str],
) -> str | None:
    """The target flow into the join `join_target` an arrival by the source flow `flow_id`
    counts as: the flow of the same id, else the flow from the mapped source node; None when
    there is none."""
    incoming = target.node(join_target).incoming
    if flow_id in incoming:
        return flow_id
    if not source.has_flow(flow_id):
        return None
    from_node = mapped.get(source.flow(flow_id).source)
    for candidate in incoming:
        if target.flow(candidate).source == from_node:
            return candidate
    return None


def validate_instance(
    run: InstanceRun, plan: MigrationPlan, source: ProcessModel, target: ProcessModel
) -> list[Failure]:
    """What of the loaded instance cannot follow `plan`: tokens at unmapped nodes, joins whose
    gateway or arrived branches have no counterpart, waits (jobs, subscriptions) of unmapped
    events that cannot simply go."""
    mapping = {k: v.target[0] for k, v in plan.mapping().items() if len(v.target) == 1}
    failures: list[Failure] = []
    for token in run.live_tokens():
        if token.node_id not in mapping:
            reason = _unmapped_reason(token.node_id, source, target)
            failures.append(Failure(token.node_id, "token", str(token.id), reason))
    for (gateway_id, _), join in run.joins.items():
        target_id = mapping.get(gateway_id)
        if target_id is None:
            reason = _unmapped_reason(gateway_id, source, target) + " (a branch has arrived)"
            failures.append(Failure(gateway_id, "join", gateway_id, reason))
            continue
        for arrival in join.arrivals:
            if arrival_flow(arrival["flow"], target_id, source, target, mapping) is None:
                reason = (
                    f"a branch arrived by flow '{arrival['flow']}', which does not lead into "
                    f"'{target_id}' in the target definition"
                )
                failures.append(Failure(gateway_id, "join", arrival["token"], reason))
    for job in run.jobs.values():
        if job.node_id not in mapping and not is_dropped_listener(source, job.node_id):
            reason = _unmapped_reason(job.node_id, source, target)
            if job.kind == JobKind.TIMER:
                reason = f"the timer must be re-created: {reason}"
            failures.append(Failure(job.node_id, "job", str(job.id), f"{job.kind} job: {reason}"))
    for sub in run.subscriptions.values():
        if sub.node_id in mapping:
            continue
        if sub.kind == SubscriptionKind.COMPENSATE:
            reason = (
                f"completed activity '{sub.node_id}' can still be compensated and is not mapped"
            )
        elif is_dropped_listener(source, sub.node_id):
            continue
        else:
            reason = _unmapped_reason(sub.node_id, source, target)
        failures.append(Failure(sub.node_id, "subscription", str(sub.id), f"{sub.kind}: {reason}"))
    return failures


def new_listeners(
    target: ProcessModel, node_id: str, kept: Iterable[str]
) -> list[BoundaryEvent | IntermediateCatchEvent]:
    """The target's events that listen for a token at `node_id` (its boundary events; the catch
    events after it, when it is an event-based gateway) with a timer, message or signal that
    none of the token's migrated listeners maps to (`kept`): they start listening, as they would
    have when the token entered the node."""
    taken = set(kept)
    events: list[BoundaryEvent | IntermediateCatchEvent] = list(target.boundary_events(node_id))
    if isinstance(target.node(node_id), EventBasedGateway):
        for flow_id in target.node(node_id).outgoing:
            event = target.node(target.flow(flow_id).target)
            if isinstance(event, IntermediateCatchEvent):
                events.append(event)
    return [e for e in events if e.id not in taken and has_event_trigger(e)]


# -- the report of a plan and of instances against it ---------------------------------------------


@dataclass(frozen=True)
class Models:
    """The plan's two definitions, parsed, and the target's key."""

    source: ProcessModel
    target: ProcessModel
    target_key: str


def instance_failures(run: InstanceRun, plan: MigrationPlan, models: Models) -> list[Failure]:
    """`validate_instance`, and first whether the instance runs the plan's source at all."""
    instance = run.instance
    if instance.definition_id != plan.source_definition_id:
        reason = (
            f"the instance runs '{instance.definition_id}', not the plan's source "
            f"'{plan.source_definition_id}'"
        )
        return [Failure("", "instance", str(instance.id), reason)]
    if instance.state.is_final:
        reason = f"the instance is already {instance.state.value}"
        return [Failure("", "instance", str(instance.id), reason)]
    return validate_instance(run, plan, models.source, models.target)


@dataclass(frozen=True)
class InstanceReport:
    instance_id: str
    failures: list[Failure]

    def to_json(self) -> dict[str, Any]:
        return {
            "processInstanceId": self.instance_id,
            "failures": [f.to_json() for f in self.failures],
        }


@dataclass(frozen=True)
class ValidationReport:
    """A plan's instruction failures and, per instance asked about, what cannot follow it."""

    instructions: list[InstructionReport]
    instances: list[InstanceReport]

    @property
    def valid(self) -> bool:
        return not self.instructions and not any(r.failures for r in self.instances)


def validation_report(
    plan: MigrationPlan, models: Models, runs: Iterable[tuple[UUID, InstanceRun | None]]
) -> ValidationReport:
    """`plan` validated, and each instance of `runs` against it ((id, its run), None: it does
    not exist); an instance is judged only once the plan is valid."""
    reports = validate_plan(plan, models.source, models.target)
    instances = []
    for instance_id, run in runs:
        if run is None:
            failure = Failure("", "instance", str(instance_id), "the instance does not exist")
            instances.append(InstanceReport(str(instance_id), [failure]))
            continue
        failures = [] if reports else instance_failures(run, plan, models)
        instances.append(InstanceReport(str(instance_id), failures))
    return ValidationReport(reports, instances)
