"""The in-memory picture of one locked instance during one command, with change tracking.

The store loads it from committed rows, the semantics advance it, the store writes back exactly
what changed. It lives for one command only: nothing here is cached between commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from engine.ids import new_id
from engine.states import InstanceState, TokenState, check_token_transition
from engine.variables import TypedValue


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
    is_new: bool = False
    dirty: bool = False

    def move_to(self, state: InstanceState, now: datetime) -> None:
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
    mode: str = "Forward"
    scope_id: UUID | None = None
    parent_id: UUID | None = None
    parallel_group: str | None = None
    merged_into: UUID | None = None
    visit_id: UUID | None = None
    version: int = 0
    is_new: bool = False
    dirty: bool = False

    def move_to(self, state: TokenState, now: datetime) -> None:
        """The only way a token changes state."""
        check_token_transition(self.id, self.state, state)
        self.state = state
        self.updated_at = now
        self.dirty = True

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
    is_new: bool = False


@dataclass
class Join:
    """Arrivals at one converging parallel gateway in one scope: [{"token": id, "flow": id}]."""

    gateway_id: str
    scope_key: str
    arrivals: list[dict[str, str]]
    version: int | None = None  # None: not yet in the database

    @property
    def arrived_flows(self) -> set[str]:
        return {a["flow"] for a in self.arrivals}


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
    is_new: bool = False
    dirty: bool = False


@dataclass
class Event:
    """An outbox row to write: an event type and identifiers only."""

    event: str
    token_id: UUID | None = None
    node_id: str | None = None
    history_id: UUID | None = None


@dataclass
class InstanceRun:
    instance: InstanceRow
    now: datetime
    tokens: dict[UUID, Token] = field(default_factory=dict)
    joins: dict[tuple[str, str], Join] = field(default_factory=dict)
    # Joins that fired and are gone, with the version they were loaded at.
    deleted_joins: dict[tuple[str, str], int] = field(default_factory=dict)
    variables: dict[str, TypedValue] = field(default_factory=dict)
    changed_variables: set[str] = field(default_factory=set)
    visits: list[Visit] = field(default_factory=list)
    # Open work of the instance, loaded with it: what a token leaving early must retire.
    tasks: dict[UUID, UserTaskRow] = field(default_factory=dict)
    external_tasks: dict[UUID, ExternalTaskRow] = field(default_factory=dict)
    jobs: dict[UUID, JobRow] = field(default_factory=dict)
    subscriptions: dict[UUID, Subscription] = field(default_factory=dict)
    incidents: dict[UUID, IncidentRow] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)

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
        for task in self.tasks.values():
            if task.token_id == token.id and task.state == "Open":
                task.state, task.ended_at, task.dirty = "Retired", self.now, True
        for external in self.external_tasks.values():
            if external.token_id == token.id and external.state == "Open":
                external.state, external.ended_at, external.dirty = "Retired", self.now, True
        for incident in self.incidents.values():
            if incident.token_id == token.id and incident.state == "Open":
                incident.state, incident.resolved_at, incident.dirty = "Resolved", self.now, True
        self.drop_listeners(token)

    def drop_listeners(self, token: Token) -> None:
        """The token left its node: the jobs and subscriptions waiting on its behalf go."""
        for job in self.jobs.values():
            if job.token_id == token.id:
                job.deleted = True
        for subscription in self.subscriptions.values():
            if subscription.token_id == token.id:
                subscription.deleted = True

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
            if linked and incident.state == "Open":
                incident.state, incident.resolved_at, incident.dirty = "Resolved", self.now, True
                self.emit_incident("incident.resolved", incident)
        token = self.tokens.get(token_id) if token_id else None
        if token is not None and token.state is TokenState.FAILED:
            token.move_to(state, self.now)

    def emit_incident(self, event: str, incident: IncidentRow) -> None:
        self.events.append(Event(event=event, token_id=incident.token_id, node_id=incident.node_id))

    def live_tokens(self) -> list[Token]:
        return [t for t in self.tokens.values() if t.is_live]

    def set_variable(self, name: str, value: TypedValue) -> None:
        self.variables[name] = value
        self.changed_variables.add(name)

    def variable_values(self) -> dict[str, Any]:
        return {name: typed.value for name, typed in self.variables.items()}

    def emit(self, event: str, token: Token | None = None, visit: Visit | None = None) -> None:
        self.events.append(
            Event(
                event=event,
                token_id=token.id if token else None,
                node_id=token.node_id if token else None,
                history_id=visit.id if visit else None,
            )
        )
