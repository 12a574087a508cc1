"""The in-memory picture of one locked instance during one command, with change tracking.

The store loads it from committed rows, the semantics advance it, the store writes back exactly
what changed. It lives for one command only: nothing here is cached between commands.
"""

from __future__ import annotations

import copy
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from uuid import UUID

from engine.core.effects import Effect
from engine.db.ids import new_id
from engine.language.variables import TypedValue, check_name
from engine.states import (
    IncidentState,
    InstanceState,
    SubscriptionKind,
    TaskState,
    TokenMode,
    TokenState,
    WorkLogState,
    check_instance_transition,
    check_token_transition,
)


@dataclass
class InstanceRow:
    id: UUID
    definition_id: str
    definition_key: str
    business_key: str | None
    state: InstanceState
    version: int
    started_at: datetime
    ended_at: datetime | None = None
    # A called instance's caller (instance, and its token at the call activity); every
    # instance's family root, itself when nobody called it.
    super_instance_id: UUID | None = None
    super_token_id: UUID | None = None
    root_instance_id: UUID | None = None
    # Its definition's tenant (null: none); its tasks, jobs and incidents carry it too.
    tenant_id: str | None = None
    # Terminated by its caller's own flow, not by a request (see engine/schema.py).
    internally_terminated: bool = False
    is_new: bool = False
    dirty: bool = False

    def __post_init__(self) -> None:
        if self.root_instance_id is None:
            self.root_instance_id = self.id

    def move_to(self, state: InstanceState, now: datetime) -> None:
        """The only way an instance changes state."""
        check_instance_transition(self.id, self.state, state)
        self.state = state
        if state.is_final:
            self.ended_at = now
        self.dirty = True


@dataclass
class Token:
    id: UUID
    instance_id: UUID
    node_id: str
    state: TokenState
    created_at: datetime
    updated_at: datetime
    mode: str = TokenMode.FORWARD
    scope_id: UUID | None = None
    parent_id: UUID | None = None
    parallel_group: str | None = None
    merged_into: UUID | None = None
    visit_id: UUID | None = None
    version: int = 0
    is_new: bool = False
    dirty: bool = False

    def move_to(self, state: TokenState, now: datetime) -> None:
        """The only way a token changes state (`record_claim` aside, which checks the same)."""
        check_token_transition(self.id, self.state, state)
        self.state = state
        self.updated_at = now
        self.dirty = True

    def record_claim(self, now: datetime) -> None:
        """Ready -> Executing, which the compare-and-swap claim (engine/store/runs.py) has
        already written: checked as `move_to` checks it, but not written again."""
        check_token_transition(self.id, self.state, TokenState.EXECUTING)
        self.state = TokenState.EXECUTING
        self.updated_at = now
        self.version += 1

    @property
    def is_live(self) -> bool:
        return not self.state.is_final

    @property
    def scope_key(self) -> str:
        return str(self.scope_id) if self.scope_id else ""


@dataclass
class Visit:
    """One history row: a token's visit to one node."""

    id: UUID
    token_id: UUID
    node_id: str
    state: str
    started_at: datetime
    node_name: str | None = None
    node_type: str = ""
    ended_at: datetime | None = None
    # The visiting token's mode, and the instance a call activity's visit called.
    mode: str = TokenMode.FORWARD
    called_instance_id: UUID | None = None
    # The sequence flow the visit was entered by (see `schema.History.flow_id`).
    flow_id: str | None = None
    is_new: bool = False


@dataclass
class Join:
    """Arrivals at one converging parallel gateway in one scope: [{"token": id, "flow": id}]."""

    gateway_id: str
    scope_key: str
    arrivals: list[dict[str, str]]
    version: int | None = None  # None: not yet in the database
    # The flows of `arrivals` read so far, the list they were read from and how many were read.
    _flows: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    _read_from: list[dict[str, str]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _read: int = field(default=0, init=False, repr=False, compare=False)

    @property
    def arrived_flows(self) -> set[str]:
        """The flows tokens arrived by. Asked at every arrival, so only the arrivals appended
        since the last question are read (a join of n branches reads n arrivals, not n * n);
        a list put in the place of `arrivals` is read afresh."""
        if self._read_from is not self.arrivals or self._read > len(self.arrivals):
            self._flows, self._read_from, self._read = set(), self.arrivals, 0
        self._flows.update(a["flow"] for a in self.arrivals[self._read :])
        self._read = len(self.arrivals)
        return self._flows


@dataclass
class UserTaskRow:
    id: UUID
    token_id: UUID
    node_id: str
    name: str | None
    state: str
    created_at: datetime
    assignee: str | None = None
    candidate_users: list[str] = field(default_factory=list)
    candidate_groups: list[str] = field(default_factory=list)
    due_at: datetime | None = None
    priority: int = 50
    ended_at: datetime | None = None
    description: str | None = None
    owner: str | None = None
    delegation_state: str | None = None
    follow_up_at: datetime | None = None
    parent_task_id: UUID | None = None
    is_new: bool = False
    dirty: bool = False


@dataclass
class ExternalTaskRow:
    id: UUID
    token_id: UUID
    node_id: str
    topic: str
    state: str
    priority: int
    created_at: datetime
    worker_id: str | None = None
    lock_expires_at: datetime | None = None
    retries: int | None = None
    error_message: str | None = None
    error_details: str | None = None
    ended_at: datetime | None = None
    # The worker as loaded: the write changes the task only if it still is (a fetch-and-lock
    # takes a task without the instance's lock, so the instance's version cannot tell).
    loaded_worker_id: str | None = None
    is_new: bool = False
    dirty: bool = False


@dataclass
class JobRow:
    """Durable future work: a timer, an asynchronous continuation, a retry after a failure."""

    id: UUID
    kind: str
    token_id: UUID | None
    node_id: str
    due_at: datetime
    retries: int
    created_at: datetime
    timer_text: str | None = None
    repetitions_left: int | None = None
    lock_owner: str | None = None
    lock_expires_at: datetime | None = None
    error_message: str | None = None
    # An asynchronous continuation before a node: the flow its token arrived by.
    flow_id: str | None = None
    # camunda:jobPriority as resolved when the job was made: higher is acquired first.
    priority: int = 0
    suspended: bool = False
    # The last failure's full text (a traceback), beside its message.
    error_details: str | None = None
    # A cycle timer moved without cascading: how far (ms) it stands from the cycle's schedule.
    due_shift_ms: int = 0
    is_new: bool = False
    dirty: bool = False
    deleted: bool = False


@dataclass
class Subscription:
    """A token waiting for a message or signal by name."""

    id: UUID
    kind: str
    name: str
    token_id: UUID | None
    node_id: str
    created_at: datetime
    is_new: bool = False
    deleted: bool = False


@dataclass
class IncidentRow:
    id: UUID
    type: str
    token_id: UUID | None
    node_id: str
    message: str
    state: str
    created_at: datetime
    job_id: UUID | None = None
    external_task_id: UUID | None = None
    details: str | None = None
    resolved_at: datetime | None = None
    annotation: str | None = None
    configuration: str | None = None
    is_new: bool = False
    dirty: bool = False


@dataclass
class Event:
    """An outbox event to write: an event type and identifiers only (one outbox row holds a
    command's events of one instance)."""

    event: str
    token_id: UUID | None = None
    node_id: str | None = None
    history_id: UUID | None = None


@dataclass(frozen=True)
class WorkEvent:
    """An attempt of a job or an external task the command logs (a run that succeeded, a
    failure), with the row as it stood then. Creations and removals are read off the rows
    themselves when the command's changes are written (engine/store/work_log.py)."""

    state: WorkLogState
    work: JobRow | ExternalTaskRow


@dataclass(frozen=True)
class VariableChange:
    """One variable written or deleted during a command: in the root scope (`owner_id` None) or
    among the locals of the token `owner_id`; `change` is "create", "update" or "delete"."""

    owner_id: UUID | None
    name: str
    change: str


@dataclass
class ConditionLog:
    """What the conditional events of a command go by (see engine/semantics/conditions.py): the
    variable changes in order, how many were evaluated, how many had happened when each
    conditional subscription of the command was made (it hears only the later ones), and the
    subscriptions whose condition held when they were made, still to trigger; and whether the
    instance has conditional waits at all (None: not looked yet; asked once per command, so an
    instance without any pays one look over its subscriptions)."""

    changes: list[VariableChange] = field(default_factory=list)
    evaluated: int = 0
    made_after: dict[UUID, int] = field(default_factory=dict)
    due: list[UUID] = field(default_factory=list)
    waiting: bool | None = None


V = TypeVar("V")


class _Grouped(Generic[V]):
    """The values of one of a run's maps grouped by `key` (the token a task belongs to, the scope
    a token runs in), for questions asked once per token: a scan of the map for each would cost
    tokens x items, a cancellation of n branches n * n. Values are added to the maps and not
    removed, so those added since the last question are the last ones, and each is grouped
    once; a map that shrank anyway is grouped again from the start."""

    def __init__(self, key: Callable[[V], Any]) -> None:
        self._key = key
        self._seen = 0
        self._groups: dict[Any, deque[V]] = {}

    def of(self, items: dict[Any, V], group: Any) -> deque[V]:
        if len(items) < self._seen:
            self._seen, self._groups = 0, {}
        if len(items) > self._seen:
            added = list(itertools.islice(reversed(items.values()), len(items) - self._seen))
            for item in reversed(added):
                self._groups.setdefault(self._key(item), deque()).append(item)
            self._seen = len(items)
        return self._groups.get(group, deque())


def _token_of(item: Any) -> Any:
    return item.token_id


def _scope_of(token: Token) -> UUID | None:
    return token.scope_id


def _all(token: Token) -> None:
    return None


def _first_live(tokens: deque[Token]) -> bool:
    """Whether `tokens` holds a live one; the final ones before it are dropped for good (a final
    state is final), so asking after every step costs each token one look over the command."""
    while tokens and not tokens[0].is_live:
        tokens.popleft()
    return bool(tokens)


def _grouped_by_token() -> _Grouped[Any]:
    return _Grouped(_token_of)


@dataclass
class InstanceRun:
    instance: InstanceRow
    now: datetime
    tokens: dict[UUID, Token] = field(default_factory=dict)
    joins: dict[tuple[str, str], Join] = field(default_factory=dict)
    # Joins that fired and are gone, with the version they were loaded at.
    deleted_joins: dict[tuple[str, str], int] = field(default_factory=dict)
    # The root scope's variables, and the locals of each owner token (an activity instance: a
    # token at a task, a subprocess's scope token, a multi-instance body or iteration).
    variables: dict[str, TypedValue] = field(default_factory=dict)
    changed_variables: set[str] = field(default_factory=set)
    locals: dict[UUID, dict[str, TypedValue]] = field(default_factory=dict)
    changed_locals: set[tuple[UUID, str]] = field(default_factory=set)
    # Variable rows to delete: (scope_key, name), a name of None deleting the whole scope's.
    deleted_variables: set[tuple[str, str | None]] = field(default_factory=set)
    visits: list[Visit] = field(default_factory=list)
    # Open work of the instance, loaded with it: what a token leaving early must retire.
    tasks: dict[UUID, UserTaskRow] = field(default_factory=dict)
    external_tasks: dict[UUID, ExternalTaskRow] = field(default_factory=dict)
    jobs: dict[UUID, JobRow] = field(default_factory=dict)
    subscriptions: dict[UUID, Subscription] = field(default_factory=dict)
    incidents: dict[UUID, IncidentRow] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    # Attempts of jobs and external tasks to log (see `log_attempt`).
    work_events: list[WorkEvent] = field(default_factory=list)
    # What the advance asks of other instances, applied in the same transaction (see
    # engine/core/effects.py).
    effects: list[Effect] = field(default_factory=list)
    # The user the command runs for, when its caller says (`authenticatedUserId` in expressions).
    authenticated_user_id: str | None = None
    # Variable changes and conditional waits of this command (see `ConditionLog`).
    conditions: ConditionLog = field(default_factory=ConditionLog)
    # An instance modification asked to skip input and output parameters (see mappings.py).
    skip_io_mappings: bool = False
    # Look-ups asked once per token, answered from indexes instead of scans (see `_Grouped`).
    _scopes: _Grouped[Token] = field(
        default_factory=lambda: _Grouped(_scope_of), init=False, repr=False, compare=False
    )
    _tokens_in_order: _Grouped[Token] = field(
        default_factory=lambda: _Grouped(_all), init=False, repr=False, compare=False
    )
    _work: dict[str, _Grouped[Any]] = field(
        default_factory=lambda: {
            name: _grouped_by_token()
            for name in ("tasks", "external_tasks", "jobs", "subscriptions", "incidents")
        },
        init=False,
        repr=False,
        compare=False,
    )
    _visits_by_id: dict[UUID, Visit] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _joins_by_scope: dict[str, dict[tuple[str, str], None]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _joins_indexed: int = field(default=0, init=False, repr=False, compare=False)

    def new_token(self, node_id: str, **fields: Any) -> Token:
        token = Token(
            id=new_id(),
            instance_id=self.instance.id,
            node_id=node_id,
            state=TokenState.CREATED,
            created_at=self.now,
            updated_at=self.now,
            is_new=True,
            **fields,
        )
        self.tokens[token.id] = token
        return token

    def retire_work(self, token: Token) -> None:
        """The token leaves early (interrupted, cancelled, terminated): its open user and external
        tasks retire, its jobs and subscriptions go, its incidents are resolved, all in this
        transaction, so a late report about them is rejected."""
        for task in self._work["tasks"].of(self.tasks, token.id):
            if task.state == TaskState.OPEN:
                task.state, task.ended_at, task.dirty = TaskState.RETIRED, self.now, True
        for external in self._work["external_tasks"].of(self.external_tasks, token.id):
            if external.state == TaskState.OPEN:
                external.state, external.ended_at = TaskState.RETIRED, self.now
                external.dirty = True
        for incident in self._work["incidents"].of(self.incidents, token.id):
            if incident.state == IncidentState.OPEN:
                incident.state, incident.resolved_at = IncidentState.RESOLVED, self.now
                incident.dirty = True
        self.drop_listeners(token)

    def drop_listeners(self, token: Token) -> None:
        """The token left its node: the jobs and subscriptions waiting on its behalf go (not the
        record that its activity can be compensated, which outlives it)."""
        for job in self._work["jobs"].of(self.jobs, token.id):
            job.deleted = True
        for subscription in self._work["subscriptions"].of(self.subscriptions, token.id):
            if subscription.kind != SubscriptionKind.COMPENSATE:
                subscription.deleted = True

    def live_in_scope(self, scope_id: UUID | None) -> list[Token]:
        """The live tokens whose scope is `scope_id`, in the order they were created."""
        members = self._scopes.of(self.tokens, scope_id)
        live = [token for token in members if token.is_live]
        if len(live) != len(members):  # a final state is final: they need not be asked again
            members.clear()
            members.extend(live)
        return live

    def has_live_in_scope(self, scope_id: UUID | None) -> bool:
        return _first_live(self._scopes.of(self.tokens, scope_id))

    def has_live_tokens(self) -> bool:
        return _first_live(self._tokens_in_order.of(self.tokens, None))

    def add_visit(self, visit: Visit) -> None:
        self.visits.append(visit)
        self._visits_by_id[visit.id] = visit

    def visit(self, visit_id: UUID) -> Visit | None:
        """The visit of this command with `visit_id`, if the command has it."""
        if len(self._visits_by_id) != len(self.visits):  # appended without `add_visit`
            self._visits_by_id = {visit.id: visit for visit in self.visits}
        return self._visits_by_id.get(visit_id)

    def put_join(self, join: Join) -> None:
        key = (join.gateway_id, join.scope_key)
        self._sync_joins()
        if key not in self.joins:
            self._joins_indexed += 1
        self.joins[key] = join
        self._joins_by_scope.setdefault(join.scope_key, {})[key] = None

    def pop_join(self, key: tuple[str, str]) -> Join:
        self._sync_joins()
        join = self.joins.pop(key)
        self._joins_indexed -= 1
        self._joins_by_scope.get(key[1], {}).pop(key, None)
        return join

    def joins_in_scope(self, scope_key: str) -> list[tuple[str, str]]:
        """The keys of the joins waiting in the scope `scope_key`."""
        self._sync_joins()
        return list(self._joins_by_scope.get(scope_key, ()))

    def _sync_joins(self) -> None:
        if self._joins_indexed != len(self.joins):  # changed without put_join and pop_join
            self._joins_by_scope = {}
            for key in self.joins:
                self._joins_by_scope.setdefault(key[1], {})[key] = None
            self._joins_indexed = len(self.joins)

    def add_job(self, job: JobRow) -> None:
        self.jobs[job.id] = job

    def add_subscription(self, subscription: Subscription) -> None:
        self.subscriptions[subscription.id] = subscription

    def open_incident(self, incident: IncidentRow) -> None:
        self.incidents[incident.id] = incident
        self.emit_incident("incident.created", incident)

    def restore_failed(
        self,
        token_id: UUID | None,
        *,
        job_id: UUID | None = None,
        external_task_id: UUID | None = None,
        state: TokenState,
    ) -> None:
        """A failed path may go on: the incidents of its job or external task resolve and its
        token goes back to `state` (Ready for a job that runs it, Waiting otherwise)."""
        for incident in self.incidents.values():
            linked = (job_id is not None and incident.job_id == job_id) or (
                external_task_id is not None and incident.external_task_id == external_task_id
            )
            if linked and incident.state == IncidentState.OPEN:
                incident.state, incident.resolved_at = IncidentState.RESOLVED, self.now
                incident.dirty = True
                self.emit_incident("incident.resolved", incident)
        token = self.tokens.get(token_id) if token_id else None
        if token is not None and token.state is TokenState.FAILED:
            token.move_to(state, self.now)

    def emit_incident(self, event: str, incident: IncidentRow) -> None:
        self.events.append(Event(event=event, token_id=incident.token_id, node_id=incident.node_id))

    def live_tokens(self) -> list[Token]:
        return [t for t in self.tokens.values() if t.is_live]

    def set_variable(self, name: str, value: TypedValue) -> None:
        check_name(name)  # whoever writes it: a caller, a handler, a worker's report
        change = "update" if name in self.variables else "create"
        self.conditions.changes.append(VariableChange(None, name, change))
        self.variables[name] = value
        self.changed_variables.add(name)
        self.deleted_variables.discard(("", name))

    def variable_values(self) -> dict[str, Any]:
        """The root scope's variables."""
        return {name: typed.value for name, typed in self.variables.items()}

    def set_local(self, owner_id: UUID, name: str, value: TypedValue) -> None:
        """A variable local to the activity instance of the token `owner_id`."""
        check_name(name)
        change = "update" if name in self.locals.get(owner_id, {}) else "create"
        self.conditions.changes.append(VariableChange(owner_id, name, change))
        self.locals.setdefault(owner_id, {})[name] = value
        self.changed_locals.add((owner_id, name))
        self.deleted_variables.discard((str(owner_id), name))

    def local_values(self, owner_id: UUID) -> dict[str, Any]:
        return {name: typed.value for name, typed in self.locals.get(owner_id, {}).items()}

    def drop_locals(self, owner_id: UUID) -> None:
        """The activity instance of `owner_id` ended: its local variables vanish with it."""
        found = self.locals.pop(owner_id, None)
        if found is None:
            return
        for name in found:
            self.changed_locals.discard((owner_id, name))
        self.deleted_variables.add((str(owner_id), None))

    def remove_variable(self, owner_id: UUID | None, name: str) -> None:
        """Delete one variable of the root scope (`owner_id` None) or of an owner's locals."""
        if name in (self.variables if owner_id is None else self.locals.get(owner_id, {})):
            self.conditions.changes.append(VariableChange(owner_id, name, "delete"))
        if owner_id is None:
            self.variables.pop(name, None)
            self.changed_variables.discard(name)
            self.deleted_variables.add(("", name))
            return
        self.locals.get(owner_id, {}).pop(name, None)
        self.changed_locals.discard((owner_id, name))
        self.deleted_variables.add((str(owner_id), name))

    def scope_chain(self, token: Token) -> list[UUID]:
        """The owners whose locals `token` sees, innermost first: the token itself, then its
        scope tokens outwards."""
        chain = [token.id]
        scope_id = token.scope_id
        while scope_id is not None:
            chain.append(scope_id)
            scope = self.tokens.get(scope_id)
            scope_id = scope.scope_id if scope is not None else None
        return chain

    def typed_for(self, token: Token | None) -> dict[str, TypedValue]:
        """Every variable visible from `token`: the root scope's, then the locals of each
        enclosing scope outermost first, then the token's own; inner names hide outer ones."""
        typed = dict(self.variables)
        if token is None or not self.locals:
            return typed
        for owner_id in reversed(self.scope_chain(token)):
            typed.update(self.locals.get(owner_id, {}))
        return typed

    def values_for(self, token: Token | None) -> dict[str, Any]:
        """The values of `typed_for`."""
        if token is None or not self.locals:
            return self.variable_values()
        return {name: typed.value for name, typed in self.typed_for(token).items()}

    def remove_visible(self, token: Token | None, name: str, *, local: bool = False) -> None:
        """Camunda's removeVariable: the nearest scope from `token` outwards that has `name`
        loses it (`local`: only the token's own activity instance)."""
        chain = self.scope_chain(token) if token is not None else []
        for owner_id in chain[:1] if local else chain:
            if name in self.locals.get(owner_id, ()):
                self.remove_variable(owner_id, name)
                return
        if not local and name in self.variables:
            self.remove_variable(None, name)

    def set_visible(self, token: Token | None, name: str, value: TypedValue) -> None:
        """Set a variable as Camunda's setVariable does: the nearest scope from `token`
        outwards that has `name` gets it; when none has it, the root scope does."""
        if token is not None and self.locals:
            for owner_id in self.scope_chain(token):
                if name in self.locals.get(owner_id, ()):
                    self.set_local(owner_id, name, value)
                    return
        self.set_variable(name, value)

    def log_attempt(self, state: WorkLogState, work: JobRow | ExternalTaskRow) -> None:
        """Log an attempt of the job or external task `work` as it stands now."""
        self.work_events.append(WorkEvent(state, copy.copy(work)))

    def emit(self, event: str, token: Token | None = None, visit: Visit | None = None) -> None:
        self.events.append(
            Event(
                event=event,
                token_id=token.id if token else None,
                node_id=token.node_id if token else None,
                history_id=visit.id if visit else None,
            )
        )
