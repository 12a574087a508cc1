"""Migrate a process instance to another definition along a plan (engine/semantics/migration.py).

One instance, one transaction, under the instance's lock: the plan and the instance are validated
first and nothing is written when either fails. Then the instance runs the target definition, and
every token, its open visit, its user or external task, its jobs and subscriptions, its incidents
and the joins it waits at move to their mapped nodes, keeping their ids. A batch migrates many
instances by running `MigrateInstance(instance_id, MigrationPlan.from_json(plan))` once per
instance, its plan kept as the JSON of `MigrationPlan.to_json` (Camunda's MigrationPlanDto).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar
from uuid import UUID

from engine.commands.common import persist_audited
from engine.commands.loading import load
from engine.core.executor import Result, Tx
from engine.core.permits import MIGRATE_INSTANCE, Permit, check
from engine.core.runtime import Event, InstanceRun, JobRow, Join, Token
from engine.errors import BadRequest
from engine.language.timers import TimerLimits
from engine.model import BoundaryEvent, IntermediateCatchEvent, ProcessModel, StartEvent
from engine.semantics import waits
from engine.semantics.migration import (
    Failure,
    InstructionReport,
    MigrationPlan,
    Models,
    arrival_flow,
    instance_failures,
    new_listeners,
    validate_plan,
)
from engine.states import (
    AuditEntity,
    AuditOperation,
    JobKind,
    OutboxEvent,
    SubscriptionKind,
    TokenState,
)
from engine.store import migration as store
from engine.store.migration import models_of


class MigrationInvalid(BadRequest):
    """The plan, or an instance against it, cannot be migrated; nothing was written. `detail`
    holds the instruction reports and the instance's failures."""

    code = "MigrationInvalid"


def _describe(reports: list[InstructionReport], failures: list[Failure]) -> str:
    parts = [f"{'; '.join(r.failures)}" for r in reports]
    parts.extend(str(f) for f in failures)
    return "; ".join(parts)


def check_plan(plan: MigrationPlan, models: Models) -> None:
    reports = validate_plan(plan, models.source, models.target)
    if reports:
        raise MigrationInvalid(
            f"the migration plan is invalid: {_describe(reports, [])}",
            instructions=[r.to_json() for r in reports],
        )


@dataclass(frozen=True)
class MigrationResult(Result):
    instance_id: str
    source_definition_id: str
    target_definition_id: str
    tokens: int


@dataclass(frozen=True)
class MigrateInstance:
    """Move one instance to the plan's target definition (Camunda's migration of one instance)."""

    name: ClassVar[str] = "MigrateInstance"
    result_type: ClassVar[type[Result]] = MigrationResult
    permits: ClassVar[tuple[Permit, ...]] = (MIGRATE_INSTANCE,)

    instance_id: UUID
    plan: MigrationPlan

    def execute(self, tx: Tx) -> MigrationResult:
        models = models_of(tx.conn, tx.definitions, self.plan)
        check_plan(self.plan, models)
        run = load(tx, self.instance_id)
        check(
            tx, MIGRATE_INSTANCE, definition=run.instance.definition_key, target=models.target_key
        )
        failures = instance_failures(run, self.plan, models)
        if failures:
            raise MigrationInvalid(
                f"process instance {self.instance_id} cannot be migrated: "
                f"{_describe([], failures)}",
                instance_id=str(self.instance_id),
                failures=[f.to_json() for f in failures],
            )
        source_key = run.instance.definition_key
        moves = _moves(
            run, self.plan, models, tx.settings.timer_limits, tx.settings.default_retries
        )
        store.move_definition(
            tx.conn, run.instance.id, self.plan.target_definition_id, models.target_key
        )
        store.apply(tx.conn, run.instance.id, self.plan.target_definition_id, moves)
        for gateway_id, scope_key, new_id, arrivals in moves.joins:
            # The write-back below rewrites every loaded join: it must see the moved one.
            version = run.pop_join((gateway_id, scope_key)).version
            assert version is not None
            run.put_join(Join(new_id, scope_key, arrivals, version + 1))
        run.instance.definition_id = self.plan.target_definition_id
        run.instance.definition_key = models.target_key
        run.instance.dirty = True  # its version goes up: a report loaded before cannot write
        persist_audited(  # the run's definition is the target's by now
            tx,
            run,
            AuditOperation.MIGRATE,
            AuditEntity.PROCESS_INSTANCE,
            entity_id=str(run.instance.id),
            details={
                "source": self.plan.source_definition_id,
                "target": self.plan.target_definition_id,
                "sourceKey": source_key,
                "instructions": [i.to_json() for i in self.plan.instructions],
            },
        )
        return MigrationResult(
            str(run.instance.id),
            self.plan.source_definition_id,
            self.plan.target_definition_id,
            len(moves.tokens),
        )


def _moves(
    run: InstanceRun, plan: MigrationPlan, models: Models, limits: TimerLimits, retries: int
) -> store.MigrationMoves:
    """What the migration writes, and in `run` the listeners that go or start (persisted with
    the command's events)."""
    source, target = models.source, models.target
    instructions = plan.mapping()
    mapping = {k: v.target[0] for k, v in instructions.items()}
    moves = store.MigrationMoves()
    for token in run.live_tokens():
        node_id = mapping[token.node_id]
        node = target.node(node_id)
        moves.tokens.append((token.id, node_id))
        if token.visit_id is not None:
            moves.visits.append((token.visit_id, node_id, node.name, node.kind.value))
            run.events.append(Event(OutboxEvent.VISIT_ACTIVE, token.id, node_id, token.visit_id))
    for task in run.tasks.values():
        moves.tasks.append((task.id, mapping.get(task.node_id, task.node_id)))
    for external in run.external_tasks.values():
        moves.external_tasks.append((external.id, mapping.get(external.node_id, external.node_id)))
    for incident in run.incidents.values():
        moves.incidents.append((incident.id, mapping.get(incident.node_id, incident.node_id)))
    for job in run.jobs.values():
        if job.node_id not in mapping:
            job.deleted = True  # a boundary event's or an event subprocess's: gone in the target
            continue
        node_id = mapping[job.node_id]
        due, text, left = job.due_at, job.timer_text, job.repetitions_left
        if job.kind == JobKind.TIMER and instructions[job.node_id].update_event_trigger:
            due, text, left = _timer_again(run, job, target, node_id, limits, retries)
        moves.jobs.append((job.id, node_id, due, text, left))
    for sub in run.subscriptions.values():
        if sub.node_id not in mapping:
            sub.deleted = True
            continue
        node_id = mapping[sub.node_id]
        name = sub.name
        if instructions[sub.node_id].update_event_trigger:
            name = _event_name(target, node_id, sub.kind) or name
        moves.subscriptions.append((sub.id, node_id, name))
    for (gateway_id, scope_key), join in run.joins.items():
        new_id = mapping[gateway_id]
        arrivals = [
            {**a, "flow": arrival_flow(a["flow"], new_id, source, target, mapping) or a["flow"]}
            for a in join.arrivals
        ]
        moves.joins.append((gateway_id, scope_key, new_id, arrivals))
    _listen_new(run, target, mapping, limits, retries)
    return moves


def _timer_again(
    run: InstanceRun,
    job: JobRow,
    target: ProcessModel,
    node_id: str,
    limits: TimerLimits,
    retries: int,
) -> tuple[datetime, str | None, int | None]:
    """A timer computed again from the target's timer definition (`updateEventTrigger`)."""
    event = target.node(node_id)
    timer = getattr(event, "timer", None)
    if timer is None:
        return job.due_at, job.timer_text, job.repetitions_left
    token = run.tokens.get(job.token_id) if job.token_id is not None else None
    fresh = waits.timer_job(
        timer, job.token_id, node_id, run.values_for(token), run.now, retries, limits=limits
    )
    return fresh.due_at, fresh.timer_text, fresh.repetitions_left


def _event_name(target: ProcessModel, node_id: str, kind: str) -> str | None:
    event = target.node(node_id)
    if not isinstance(event, StartEvent | IntermediateCatchEvent | BoundaryEvent):
        return getattr(event, "message_name", None) if kind == SubscriptionKind.MESSAGE else None
    if kind == SubscriptionKind.MESSAGE:
        return event.message_name
    if kind == SubscriptionKind.SIGNAL:
        return event.signal_name
    return None


def _listen_new(
    run: InstanceRun,
    target: ProcessModel,
    mapping: dict[str, str],
    limits: TimerLimits,
    retries: int,
) -> None:
    """The target's events that no migrated listener maps to start listening for a waiting
    token (boundary events of its activity, the catch events after its event-based gateway), as
    they would have when the token entered the node."""
    kept: dict[UUID | None, list[str]] = {}
    for job in run.jobs.values():
        if not job.deleted:
            kept.setdefault(job.token_id, []).append(mapping[job.node_id])
    for sub in run.subscriptions.values():
        if not sub.deleted:
            kept.setdefault(sub.token_id, []).append(mapping[sub.node_id])
    for token in run.live_tokens():
        if token.state is not TokenState.WAITING:
            continue  # not in its activity yet (a job runs it) or stopped by an incident
        for event in new_listeners(target, mapping[token.node_id], kept.get(token.id, ())):
            _listen(run, token, event, limits, retries)


def _listen(
    run: InstanceRun,
    token: Token,
    event: BoundaryEvent | IntermediateCatchEvent,
    limits: TimerLimits,
    retries: int,
) -> None:
    if event.timer is not None:
        count = waits.retries_of(event.retry_cycle, retries)
        values = run.values_for(token)
        run.add_job(
            waits.timer_job(event.timer, token.id, event.id, values, run.now, count, limits=limits)
        )
    elif event.message_name is not None:
        sub = waits.subscription(
            SubscriptionKind.MESSAGE, event.message_name, token, event.id, run.now
        )
        run.add_subscription(sub)
    elif event.signal_name is not None:
        sub = waits.subscription(
            SubscriptionKind.SIGNAL, event.signal_name, token, event.id, run.now
        )
        run.add_subscription(sub)
