"""The rows a waiting token leaves behind: user tasks, external tasks, jobs, subscriptions.

Pure constructors: given the node, the token, the variables and the time, build the row. No SQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from engine.core.runtime import ExternalTaskRow, JobRow, Subscription, Token, UserTaskRow
from engine.db.ids import new_id
from engine.errors import ExpressionError
from engine.language import timers
from engine.language.composite import as_text, evaluate_text, has_expression
from engine.language.expression_context import ExpressionContext, TaskFacts
from engine.model import Implemented, TimerDefinition, UserTask
from engine.states import JobKind, SubscriptionKind, TaskState

DEFAULT_PRIORITY = 50
# Retries are an integer column: what a caller may set.
MAX_RETRIES = 2**31 - 1


def resolve(
    text: str | None, values: Mapping[str, Any], context: ExpressionContext | None = None
) -> Any:
    """A model attribute as written: a literal, one `${...}` evaluated over the variables (and
    the execution, the task, the clock... that `context` gives), or a composite of text and
    expressions evaluated to text."""
    if text is None:
        return None
    return evaluate_text(text, values, context)


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [part.strip() for part in str(value).split(",") if part.strip()]


def _moment(value: Any, now: datetime) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value
    text = str(value)
    try:
        return timers.parse_date(text)
    except ValueError:
        return timers.add_duration(now, timers.parse_duration(text))


def user_task(
    node: UserTask,
    token: Token,
    values: Mapping[str, Any],
    now: datetime,
    context: ExpressionContext | None = None,
) -> UserTaskRow:
    """The task's attributes are resolved in order (its name first: `Review ${loopCounter}`),
    with the task being created in reach as `task` (its id and name; its assignee once the
    assignee is resolved)."""
    task_id = new_id()
    context = context or ExpressionContext(now=now)
    name = None if node.name is None else as_text(resolve(node.name, values, context))
    facts = TaskFacts(id=str(task_id), task_definition_key=node.id, name=name, variables=values)
    context = replace(context, task=facts)
    resolved = resolve(node.assignee, values, context)
    assignee = str(resolved) if resolved not in (None, "") else None
    context = replace(context, task=replace(facts, assignee=assignee))
    priority = resolve(node.priority, values, context)
    try:
        due_at = _moment(resolve(node.due_date, values, context), now)
        follow_up_at = _moment(resolve(node.follow_up_date, values, context), now)
        priority_number = int(priority) if priority not in (None, "") else DEFAULT_PRIORITY
    except ValueError as exc:
        raise ExpressionError(f"user task '{node.id}': {exc}", node_id=node.id) from exc
    return UserTaskRow(
        id=task_id,
        name=name,
        assignee=assignee,
        candidate_users=_names(resolve(node.candidate_users, values, context)),
        candidate_groups=_names(resolve(node.candidate_groups, values, context)),
        due_at=due_at,
        follow_up_at=follow_up_at,
        priority=priority_number,
        **_opened(token, node.id, now),
    )


def resolve_priority(
    priority: int | str | None,
    node_id: str,
    attribute: str,
    values: Mapping[str, Any] | None,
    context: ExpressionContext | None,
    now: datetime,
) -> int:
    """A camunda:taskPriority or camunda:jobPriority: an expression is resolved over `values`
    and `context` now, and must give an integer (None: 0)."""
    if not isinstance(priority, str):
        return priority or 0
    resolved = resolve(priority, values or {}, context or ExpressionContext(now=now))
    if isinstance(resolved, str) and resolved.strip().lstrip("+-").isdigit():
        resolved = int(resolved)
    if not isinstance(resolved, int) or isinstance(resolved, bool) or abs(resolved) >= 2**63:
        raise ExpressionError(
            f"{attribute} of '{node_id}' gave {resolved!r}, not an integer", node_id=node_id
        )
    return resolved


def external_task(
    node: Implemented,
    token: Token,
    now: datetime,
    values: Mapping[str, Any] | None = None,
    context: ExpressionContext | None = None,
) -> ExternalTaskRow:
    """The external task of `node`; its camunda:topic and a camunda:taskPriority expression
    are resolved over `values` and `context` now (the priority must give an integer, the topic
    a non-empty text)."""
    assert node.topic is not None
    priority = resolve_priority(
        node.task_priority, node.id, "camunda:taskPriority", values, context, now
    )
    topic = node.topic
    if has_expression(topic):
        topic = as_text(resolve(topic, values or {}, context or ExpressionContext(now=now)))
        if not topic.strip():
            message = f"camunda:topic of '{node.id}' gave an empty topic"
            raise ExpressionError(message, node_id=node.id)
    return ExternalTaskRow(
        id=new_id(), topic=topic, priority=priority, **_opened(token, node.id, now)
    )


def _opened(token: Token, node_id: str, now: datetime) -> dict[str, Any]:
    """What a task row opened now for `token` at `node_id` holds besides its own fields."""
    return {
        "token_id": token.id,
        "node_id": node_id,
        "state": TaskState.OPEN,
        "created_at": now,
        "is_new": True,
    }


def retries_of(retry_cycle: str | None, default: int) -> int:
    if retry_cycle is None:
        return default
    repetitions = timers.parse_cycle(retry_cycle).repetitions
    return repetitions if repetitions is not None else default


def retry_delay(retry_cycle: str | None, attempt: int) -> timedelta:
    """How long a failed job waits before its next try: the cycle's interval when the model
    says, else exponential from one second (1 s, 2 s, 4 s, ...), capped at five minutes."""
    if retry_cycle is not None:
        cycle = timers.parse_cycle(retry_cycle)
        start = datetime(2000, 1, 1, tzinfo=UTC)
        return timers.add_duration(start, cycle.interval) - start
    return timedelta(seconds=min(300, 2 ** max(0, attempt - 1)))


def async_job(
    token: Token,
    node_id: str,
    retries: int,
    now: datetime,
    kind: JobKind = JobKind.ASYNC,
    flow_id: str | None = None,
    priority: int = 0,
) -> JobRow:
    """An asynchronous continuation: before the node (`ASYNC`, with the flow its token arrived
    by, which the visit it opens records) or after it (`ASYNC_AFTER`)."""
    return JobRow(
        id=new_id(),
        kind=kind,
        token_id=token.id,
        node_id=node_id,
        due_at=now,
        retries=retries,
        created_at=now,
        flow_id=flow_id,
        priority=priority,
        is_new=True,
    )


def timer_job(
    timer: TimerDefinition,
    token_id: Any,
    node_id: str,
    values: Mapping[str, Any],
    now: datetime,
    retries: int,
    kind: str = JobKind.TIMER,
    limits: timers.TimerLimits = timers.DEFAULT_LIMITS,
    context: ExpressionContext | None = None,
    priority: int = 0,
) -> JobRow:
    """A timer's job, due at its first firing. A cycle remembers its text and repetitions. An
    expression sees `context` (by default, the clock alone: a timer start event has no
    execution yet)."""
    text = resolve(timer.text, values, context or ExpressionContext(now=now))
    if isinstance(text, datetime):
        due = text
        text = text.isoformat()
    else:
        text = str(text).strip()
        try:
            # A literal text was held to the limits when it was deployed (perhaps under raised
            # ones); what an expression gives is held to them now.
            from_expression = has_expression(timer.text)
            checked = limits if from_expression else None
            due = timers.first_due(timer.kind, text, now, checked, limits.zone)
        except ValueError as exc:
            raise ExpressionError(f"timer of '{node_id}': {exc}", node_id=node_id) from exc
    repetitions = None
    if timer.kind == "cycle":
        repetitions = timers.cycle_repetitions(text)
    return JobRow(
        id=new_id(),
        kind=kind,
        token_id=token_id,
        node_id=node_id,
        due_at=due,
        retries=retries,
        created_at=now,
        timer_text=text if timer.kind == "cycle" else None,
        repetitions_left=repetitions,
        priority=priority,
        is_new=True,
    )


def subscription(
    kind: SubscriptionKind, name: str, token: Token | None, node_id: str, now: datetime
) -> Subscription:
    """A subscription of `token`; with None, of the instance itself (a process-level event
    subprocess's start event listens while the instance is active)."""
    return Subscription(
        id=new_id(),
        kind=kind,
        name=name,
        token_id=token.id if token is not None else None,
        node_id=node_id,
        created_at=now,
        is_new=True,
    )
