"""Every state vocabulary the rows use, and the token and instance state machines, enforced
here and nowhere else. The members are strings, so they compare with and bind as the column
values; engine/schema.py builds its CHECK constraints from them."""

from __future__ import annotations

from enum import StrEnum

from engine.errors import InvariantViolation, InvariantViolationKind


class TokenState(StrEnum):
    CREATED = "Created"
    READY = "Ready"
    EXECUTING = "Executing"
    WAITING = "Waiting"
    COMPLETED = "Completed"
    FAILED = "Failed"
    TERMINATED = "Terminated"

    @property
    def is_final(self) -> bool:
        return self in FINAL_TOKEN_STATES


FINAL_TOKEN_STATES = frozenset({TokenState.COMPLETED, TokenState.TERMINATED})

_T = TokenState
TOKEN_TRANSITIONS: dict[TokenState, frozenset[TokenState]] = {
    _T.CREATED: frozenset({_T.READY, _T.TERMINATED}),
    # Ready -> Failed: the job that was to run a parked token ran out of retries.
    _T.READY: frozenset({_T.EXECUTING, _T.FAILED, _T.TERMINATED}),
    # Executing -> Ready parks the token before an asynchronous continuation.
    _T.EXECUTING: frozenset({_T.WAITING, _T.READY, _T.COMPLETED, _T.FAILED, _T.TERMINATED}),
    _T.WAITING: frozenset({_T.EXECUTING, _T.READY, _T.COMPLETED, _T.FAILED, _T.TERMINATED}),
    # A failed path stops with an incident; a retry puts the token back where it waited.
    _T.FAILED: frozenset({_T.READY, _T.WAITING, _T.TERMINATED}),
    _T.COMPLETED: frozenset(),
    _T.TERMINATED: frozenset(),
}


def _invalid_move(
    kind: InvariantViolationKind,
    subject: str,
    id_field: str,
    subject_id: object,
    current: StrEnum,
    target: StrEnum,
) -> InvariantViolation:
    """The violation of moving `subject` `subject_id` from `current` to `target`, whose detail
    holds the id under `id_field`."""
    return InvariantViolation(
        kind,
        f"{subject} {subject_id} cannot move from {current.value} to {target.value}",
        **{id_field: str(subject_id)},
        state=current.value,
        target=target.value,
    )


def check_token_transition(token_id: object, current: TokenState, target: TokenState) -> None:
    """Raise the invariant violation that moving `current` -> `target` would be."""
    if target in TOKEN_TRANSITIONS[current]:
        return
    if current.is_final and target.is_final:
        raise InvariantViolation(
            InvariantViolationKind.TOKEN_FINALIZED_TWICE,
            f"token {token_id} is already {current.value} and cannot become {target.value}",
            token_id=str(token_id),
            state=current.value,
        )
    raise _invalid_move(
        InvariantViolationKind.TOKEN_INVALID_TRANSITION,
        "token",
        "token_id",
        token_id,
        current,
        target,
    )


class TokenMode(StrEnum):
    FORWARD = "Forward"
    COMPENSATION = "Compensation"


class InstanceState(StrEnum):
    """An open vocabulary: readers must tolerate values added later."""

    CREATED = "Created"
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    COMPLETED = "Completed"
    TERMINATING = "Terminating"
    TERMINATED = "Terminated"

    @property
    def is_final(self) -> bool:
        return self in (InstanceState.COMPLETED, InstanceState.TERMINATED)


_I = InstanceState
INSTANCE_TRANSITIONS: dict[InstanceState, frozenset[InstanceState]] = {
    # A new instance becomes Active as its first token enters; it is never written as Created.
    _I.CREATED: frozenset({_I.ACTIVE}),
    # Active -> Completed: the last token ended, or a terminate end event ended them all.
    _I.ACTIVE: frozenset({_I.SUSPENDED, _I.COMPLETED, _I.TERMINATING}),
    _I.SUSPENDED: frozenset({_I.ACTIVE, _I.TERMINATING}),
    # Cancellation passes through Terminating while it ends the tokens and retires their work.
    _I.TERMINATING: frozenset({_I.TERMINATED}),
    _I.COMPLETED: frozenset(),
    _I.TERMINATED: frozenset(),
}


def check_instance_transition(
    instance_id: object, current: InstanceState, target: InstanceState
) -> None:
    """Raise the invariant violation that moving `current` -> `target` would be."""
    if target in INSTANCE_TRANSITIONS[current]:
        return
    raise _invalid_move(
        InvariantViolationKind.INSTANCE_INVALID_TRANSITION,
        "process instance",
        "instance_id",
        instance_id,
        current,
        target,
    )


class DefinitionState(StrEnum):
    """A process definition: Active starts instances; Suspended starts none (by id or key, by
    its message, signal, timer or conditional start events, or by a call activity) until it
    is activated again. Its instances keep their own state."""

    ACTIVE = "Active"
    SUSPENDED = "Suspended"


class VisitState(StrEnum):
    """A history row: a token's visit to one node."""

    ACTIVE = "Active"
    COMPLETED = "Completed"
    TERMINATED = "Terminated"


class TaskState(StrEnum):
    """A user task or an external task."""

    OPEN = "Open"
    COMPLETED = "Completed"
    RETIRED = "Retired"


class DelegationState(StrEnum):
    """Camunda's delegation of a user task: PENDING while the delegate works on it (it cannot
    be completed, only resolved), RESOLVED once given back to its owner."""

    PENDING = "PENDING"
    RESOLVED = "RESOLVED"


class IncidentState(StrEnum):
    OPEN = "Open"
    RESOLVED = "Resolved"


class JobKind(StrEnum):
    ASYNC = "async"
    # camunda:asyncAfter: the node's work is done and committed; the job takes its outgoing flows.
    ASYNC_AFTER = "async-after"
    TIMER = "timer"
    TIMER_START = "timer-start"
    # The one history cleanup job (engine/commands/cleanup.py): no instance, no definition.
    HISTORY_CLEANUP = "history-cleanup"
    # A batch's job (engine/commands/batches.py): its id is the batch's; each run is one chunk.
    BATCH = "batch"
    # A suspension or activation scheduled for later (engine/commands/scheduled_suspension.py):
    # no instance; its configuration says what it changes.
    SUSPENSION = "suspension"


class WorkKind(StrEnum):
    """What a row of the work log (`work_log`) is about: a job or an external task."""

    JOB = "job"
    EXTERNAL_TASK = "external-task"


class WorkLogState(StrEnum):
    """One event in the life of a job or an external task, as Camunda's job log and external
    task log record them: made, an attempt failed, an attempt succeeded (the job ran, the task
    was completed or its worker threw a BPMN error), or removed without running (its token left,
    an operator deleted it)."""

    CREATED = "created"
    FAILED = "failed"
    SUCCESSFUL = "successful"
    DELETED = "deleted"


class CleanupState(StrEnum):
    """A history cleanup run: deleting batch after batch; finished with nothing left past its
    time to live; or stopped by the end of its window with some left for the next one."""

    RUNNING = "Running"
    FINISHED = "Finished"
    STOPPED = "Stopped"


class BatchState(StrEnum):
    """A batch: working through its items; suspended by an operator; every item done or failed;
    or cancelled with the rest left undone."""

    RUNNING = "Running"
    SUSPENDED = "Suspended"
    COMPLETED = "Completed"
    CANCELLED = "Cancelled"

    @property
    def is_final(self) -> bool:
        return self in (BatchState.COMPLETED, BatchState.CANCELLED)


class BatchItemState(StrEnum):
    """One item of a batch: not run yet, done, or failed with its error (retried by hand)."""

    PENDING = "Pending"
    DONE = "Done"
    FAILED = "Failed"


class BatchType(StrEnum):
    """What a batch does to each of its items (Camunda's batch `type` where it has one)."""

    RETRY_INCIDENTS = "retry-incidents"
    SET_JOB_RETRIES = "set-job-retries"
    SET_EXTERNAL_TASK_RETRIES = "set-external-task-retries"
    CANCEL_INSTANCES = "cancel-instances"
    SUSPEND_INSTANCES = "suspend-instances"
    RESUME_INSTANCES = "resume-instances"
    SET_VARIABLES = "set-variables"
    DELETE_HISTORY = "delete-history"
    MODIFY = "modify"
    MIGRATE = "migrate"


class JobOutcome(StrEnum):
    """What a job command did: the job ran, or its command raised and the failure was counted
    down, or why nothing ran; or its retries were set."""

    EXECUTED = "executed"
    FAILED = "failed"
    GONE = "gone"  # done or retired
    NOT_OWNER = "not-owner"  # another executor took it over
    INSTANCE_NOT_ACTIVE = "instance-not-active"
    UPDATED = "updated"  # SetJobRetries


class SubscriptionKind(StrEnum):
    MESSAGE = "message"
    SIGNAL = "signal"
    # A conditional event waits for a change of variables that makes its condition true.
    CONDITIONAL = "conditional"
    # A completed activity that a compensation handler can still undo (at most once).
    COMPENSATE = "compensate"


class TokenView(StrEnum):
    """How a token looks from outside: the projection `InstanceHandle.tokens()` reports."""

    ALIVE = "Alive"
    WAIT_FOR_EVENT = "WaitForEvent"
    CONSUMED = "Consumed"
    FAILED = "Failed"
    TERMINATED = "Terminated"


def view_of(state: TokenState) -> TokenView:
    if state in (TokenState.CREATED, TokenState.READY, TokenState.EXECUTING):
        return TokenView.ALIVE
    if state is TokenState.WAITING:
        return TokenView.WAIT_FOR_EVENT
    if state is TokenState.FAILED:
        return TokenView.FAILED
    if state is TokenState.TERMINATED:
        return TokenView.TERMINATED
    return TokenView.CONSUMED


class OutboxEvent(StrEnum):
    """Every event an outbox row carries (its `event` column): the vocabulary stream clients
    and webhook subscriptions choose from."""

    INSTANCE_STARTED = "instance.started"
    INSTANCE_COMPLETED = "instance.completed"
    INSTANCE_TERMINATED = "instance.terminated"
    INSTANCE_SUSPENDED = "instance.suspended"
    INSTANCE_RESUMED = "instance.resumed"
    VISIT_ACTIVE = "visit.active"
    VISIT_COMPLETED = "visit.completed"
    VISIT_TERMINATED = "visit.terminated"
    TOKEN_READY = "token.ready"
    TOKEN_FORKED = "token.forked"
    TOKEN_MERGED = "token.merged"
    TOKEN_TERMINATED = "token.terminated"
    ERROR_CAUGHT = "error.caught"
    ESCALATION_CAUGHT = "escalation.caught"
    COMPENSATION_THROWN = "compensation.thrown"
    VARIABLES_UPDATED = "variables.updated"
    INCIDENT_CREATED = "incident.created"
    INCIDENT_RESOLVED = "incident.resolved"
    TASK_COMPLETED = "task.completed"
    TASK_ASSIGNED = "task.assigned"
    # A task's details, comments or attachments changed (PUT /task/{id}, its notes).
    TASK_UPDATED = "task.updated"
    JOB_EXECUTED = "job.executed"
    JOB_FAILED = "job.failed"
    EXTERNAL_TASK_COMPLETED = "external_task.completed"
    EXTERNAL_TASK_FAILED = "external_task.failed"
    # A decision was evaluated (its decision_evaluation row is the history id; a direct
    # evaluation, outside any instance, names that row as its instance id too).
    DECISION_EVALUATED = "decision.evaluated"
    # A stuck-instance alert was raised: an open visit or incident crossed an alert threshold
    # (engine/commands/alerts.py; the alert_crossing row is the history id).
    ALERT_RAISED = "alert.raised"


class DeliveryState(StrEnum):
    """A webhook delivery: waiting for (another) attempt, delivered, or parked as a dead letter
    after its last attempt failed (an operator replays it)."""

    PENDING = "pending"
    DELIVERED = "delivered"
    DEAD = "dead"


class DeliveryOutcome(StrEnum):
    """What one delivery attempt came to (the label of the deliveries metric)."""

    DELIVERED = "delivered"
    FAILED = "failed"  # another attempt follows, after a backoff
    DEAD_LETTER = "dead_letter"  # that was the last attempt
    NOT_OWNER = "not-owner"  # the lease had passed to another dispatcher meanwhile


class Role(StrEnum):
    """A credential's role (its `role` column): each allows what the ones before it allow."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"

    def allows(self, needed: Role) -> bool:
        order = (Role.VIEWER, Role.OPERATOR, Role.ADMIN)
        return order.index(self) >= order.index(needed)


class ListPage(StrEnum):
    """The console's filtered lists: a saved view belongs to one of them, and each exports."""

    INSTANCES = "instances"
    INCIDENTS = "incidents"
    TASKS = "tasks"


class AuditChannel(StrEnum):
    """Where an operator's mutation came from: the console, `/api/v1`, `/engine-rest`, the
    command line, or a batch (whose items run as the operator who created it)."""

    CONSOLE = "console"
    API = "api"
    ENGINE_REST = "engine-rest"
    CLI = "cli"
    BATCH = "batch"


class AuditEntity(StrEnum):
    """What an audit entry changed (Camunda's user operation `entityType`)."""

    PROCESS_INSTANCE = "ProcessInstance"
    PROCESS_DEFINITION = "ProcessDefinition"
    DEPLOYMENT = "Deployment"
    VARIABLE = "Variable"
    TASK = "Task"
    JOB = "Job"
    EXTERNAL_TASK = "ExternalTask"
    INCIDENT = "Incident"
    BATCH = "Batch"
    USER = "User"
    API_TOKEN = "ApiToken"
    GROUP = "Group"
    GROUP_MEMBERSHIP = "Group membership"
    TENANT = "Tenant"
    TENANT_MEMBERSHIP = "TenantMembership"
    AUTHORIZATION = "Authorization"
    HISTORY = "ProcessInstanceHistory"
    CONFIGURATION = "Configuration"


class AuditOperation(StrEnum):
    """What an operator did (Camunda's user operation `operationType` where it has one)."""

    CREATE = "Create"  # a deployment, an account, an API token, a saved view, a webhook
    UPDATE = "Update"
    DELETE = "Delete"  # an instance cancelled, an account or token removed
    SUSPEND = "Suspend"
    ACTIVATE = "Activate"
    MODIFY_INSTANCE = "ModifyProcessInstance"
    MIGRATE = "Migrate"
    SET_VARIABLE = "SetVariable"
    MODIFY_VARIABLE = "ModifyVariable"
    REMOVE_VARIABLE = "RemoveVariable"
    SET_JOB_RETRIES = "SetJobRetries"
    SET_EXTERNAL_TASK_RETRIES = "SetExternalTaskRetries"
    EXECUTE_JOB = "Execute"
    UNLOCK = "Unlock"
    RETRY_INCIDENT = "Retry"
    RESOLVE_INCIDENT = "Resolve"
    RESOLVE_TASK = "Resolve"  # Camunda's word for a delegated task given back, as an incident's
    CLAIM = "Claim"
    ASSIGN = "Assign"
    DELEGATE = "Delegate"
    ADD_COMMENT = "AddComment"
    ADD_ATTACHMENT = "AddAttachment"
    DELETE_ATTACHMENT = "DeleteAttachment"
    COMPLETE = "Complete"
    CORRELATE_MESSAGE = "CorrelateMessage"
    START_INSTANCE = "StartProcessInstance"
    DELETE_HISTORY = "DeleteHistory"
    CREATE_BATCH = "CreateBatch"
    RETRY_BATCH = "RetryBatch"
    CLEANUP = "CleanupHistory"
    SET_ANNOTATION = "SetAnnotation"
    CLEAR_ANNOTATION = "ClearAnnotation"
    CREATE_INCIDENT = "CreateIncident"
    SIGNAL = "Signal"  # a waiting execution continued (Camunda's RuntimeService.signal)


class AlertKind(StrEnum):
    """What a stuck-instance alert threshold watches at a node (engine/commands/alerts.py): a
    token waiting there (its open visit) longer than the threshold, or an incident open there
    longer than it."""

    WAITING = "waiting"
    INCIDENT = "incident"


class AlertSource(StrEnum):
    """Where an alert threshold comes from: set by an operator, or declared in the model
    (`interlock.alert.*` camunda:properties) by the latest deployed version."""

    CONSOLE = "console"
    MODEL = "model"
