"""The Python API: `Engine`, a facade that builds and runs commands and reads through
`engine/queries/`; `InstanceHandle` (engine/handle.py), a window on one instance."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import psycopg
from psycopg_pool import ConnectionPool

from engine.api_arguments import Source, as_uuid, found, optional_uuid, own_dict, resource
from engine.commands.conditions import ConditionResult, EvaluateStartConditions
from engine.commands.decisions import DecisionEvaluated, EvaluateDecision
from engine.commands.deployments import Deploy, DeploymentResult, DuplicateFiltering
from engine.commands.executions import TriggerExecutionSignal
from engine.commands.external_tasks import (
    CompleteExternalTask,
    ExtendLock,
    ExternalTaskBpmnError,
    ExternalTaskResult,
    FailExternalTask,
    FetchAndLock,
    SetExternalTaskRetries,
    TopicRequest,
    UnlockExternalTask,
)
from engine.commands.incidents import IncidentResult, ResolveIncident, RetryIncident
from engine.commands.instances import InstanceResult, StartInstance
from engine.commands.job_retries import JobResult, SetJobRetries
from engine.commands.jobs import run_job
from engine.commands.messages import BroadcastSignal, CorrelateMessage, DeliveryResult
from engine.commands.migration import MigrateInstance, MigrationInvalid, MigrationResult
from engine.commands.modification import (
    ModificationResult,
    ModifyInstance,
    PreviewModification,
)
from engine.commands.tasks import (
    AssignUserTask,
    CompleteUserTask,
    ModifyTaskVariables,
    TaskResult,
)
from engine.commands.tokens import ExecuteToken, TokenResult
from engine.core.definitions import DefinitionCache
from engine.core.executor import (
    PLAN_CACHE_MODE,
    Clock,
    Command,
    Executor,
    Idempotency,
    Result,
    system_clock,
)
from engine.core.handlers import Handler, HandlerRegistry
from engine.core.settings import EngineSettings
from engine.db.connections import connect_kwargs
from engine.db.database import Database
from engine.db.outage import Availability, PoolCheck
from engine.db.paging import Page
from engine.errors import BadRequest, NotFound
from engine.handle import InstanceHandle
from engine.language.forms import Form
from engine.language.variables import infer
from engine.loops import fetching
from engine.loops.announcer import QUIET_TRIGGERS, Announcer
from engine.loops.notifier import Notifier
from engine.model import ProcessModel
from engine.queries import definitions as definition_reads
from engine.queries import forms as form_reads
from engine.queries import instances as instance_reads
from engine.queries import migration as migration_reads
from engine.queries import work
from engine.queries.definitions import DefinitionRow
from engine.queries.instances import InstanceFilter, InstanceInfo
from engine.queries.tokens import TokenPath, TokenPosition
from engine.semantics.migration import MigrationPlan, ValidationReport
from engine.semantics.modification import Instruction
from engine.states import IncidentState, TaskState

__all__ = [
    "Engine",
    "ExternalTaskView",
    "IncidentView",
    "InstanceHandle",
    "JobView",
    "Source",
    "TokenPath",
    "TokenPosition",
    "UserTaskView",
]

T = TypeVar("T", bound=Result)
R = TypeVar("R")


UserTaskView = work.TaskRow
IncidentView = work.IncidentInfo
JobView = work.JobInfo
ExternalTaskView = work.ExternalTaskInfo


def _quiet_triggers(conn: psycopg.Connection[Any]) -> None:
    conn.execute(QUIET_TRIGGERS)


class Engine:
    """An engine over one PostgreSQL database: embedded (no URL) or the server at `database_url`.

    Any number of engines in any number of processes may share one database. `pool_size` bounds
    each of the engine's two connection pools: one for reads, one for commands."""

    def __init__(
        self,
        database_url: str | None = None,
        *,
        home: Path | None = None,
        clock: Clock = system_clock,
        settings: EngineSettings | None = None,
        pool_size: int = 8,
        migrate: bool = True,
    ) -> None:
        self.database = Database.open(database_url, home=home)
        if migrate:
            from engine.db.migrate import upgrade  # Alembic is slow to import; only when needed

            upgrade(self.database.url)
        settings = settings or EngineSettings()
        self.settings = settings
        # Every session the engine opens: connect timeout, keepalives, the session limits.
        self.connect_kwargs = connect_kwargs(settings)
        self.availability = Availability(self._probe, settings.pool_timeout_ms / 1000)
        # Reads run on `pool`; commands on `command_pool`, whose sessions plan every statement
        # generically (see GENERIC_PLANS in engine/core/executor.py). Both discard connections the
        # server dropped (PoolCheck), wait `pool_timeout_ms` at most for a connection, and give
        # a failed reconnection up quickly: the next request starts a fresh one, so the pools
        # fill again as soon as the database is back.
        self.pool = self._pool(pool_size, self.connect_kwargs)
        self.command_pool = self._pool(pool_size, connect_kwargs(settings, PLAN_CACHE_MODE))
        self.handlers = HandlerRegistry()
        self.definition_cache = DefinitionCache()
        self.clock = clock
        self.notifier = Notifier(self.database.url, self.connect_kwargs)
        self.announcer = Announcer(self.database.url, connect_kwargs=self.connect_kwargs)
        self.executor = Executor(
            self.command_pool,
            self.definition_cache,
            self.handlers,
            clock,
            settings,
            announcer=self.announcer,
            availability=self.availability,
        )

    def _pool(self, size: int, kwargs: dict[str, Any]) -> ConnectionPool[psycopg.Connection[Any]]:
        check = PoolCheck(self.availability, self._probe)
        pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            self.database.url,
            min_size=1,
            max_size=size,
            kwargs={"autocommit": True, **kwargs},
            configure=_quiet_triggers,
            check=check,
            timeout=self.settings.pool_timeout_ms / 1000,
            reconnect_timeout=1.0,
            reconnect_failed=lambda _: self.availability.mark_down("the pool cannot reconnect"),
            open=True,
        )
        check.pool = pool
        return pool

    def _probe(self) -> None:
        """Connect once, outside the pools: raises psycopg.Error when the database is down."""
        with psycopg.connect(self.database.url, **self.connect_kwargs) as conn:
            conn.execute("SELECT 1")

    def close(self) -> None:
        self.announcer.close()
        self.notifier.close()
        self.command_pool.close()
        self.pool.close()
        self.database.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- commands ---------------------------------------------------------------------------------

    def run(self, command: Command[T], idempotency_key: str | Idempotency | None = None) -> T:
        """Run any command through the one executor. A bare key is scoped to this program and
        bound to the command's fields: the same key with another command is refused."""
        return self.executor.run(command, idempotency_key)

    def handler(self, name: str) -> Callable[[Handler], Handler]:
        """Decorator: register a service-task handler under `name`."""

        def register(fn: Handler) -> Handler:
            self.handlers.register(name, fn)
            return fn

        return register

    def register_handler(self, name: str, fn: Handler) -> None:
        self.handlers.register(name, fn)

    def deploy(
        self,
        *sources: Source,
        name: str | None = None,
        duplicate_filtering: bool = True,
        idempotency_key: str | None = None,
        tenant_id: str | None = None,
    ) -> DeploymentResult:
        """Deploy BPMN and DMN files, XML text, named resources or built models in one
        deployment, for tenant `tenant_id` (None: for no tenant)."""
        resources = tuple(resource(source, index) for index, source in enumerate(sources))
        filtering = DuplicateFiltering.KEYS if duplicate_filtering else DuplicateFiltering.NONE
        command = Deploy(resources, name, "python", filtering, tenant_id=tenant_id)
        return self.run(command, idempotency_key)

    def start_latest(
        self,
        key: str,
        variables: Mapping[str, Any] | None = None,
        *,
        business_key: str | None = None,
        idempotency_key: str | None = None,
        form: Mapping[str, Any] | None = None,
        started_by: str | None = None,
        tenant_id: str | None = None,
        without_tenant: bool = False,
    ) -> InstanceHandle:
        """Start the latest version of `key`; `form` holds the submitted values of its start
        form (typed and checked by engine/language/forms.py; FormInvalid names each field at fault);
        `started_by` is the authenticated user who starts it (see `camunda:initiator`). The key
        is resolved within `tenant_id`, or with `without_tenant` among definitions of no tenant;
        with neither, it must be deployed for one tenant (or none) only."""
        return self._start(
            idempotency_key,
            variables,
            key=key,
            business_key=business_key,
            form=form,
            started_by=started_by,
            tenant_id=tenant_id,
            without_tenant=without_tenant,
        )

    def start_version(
        self,
        key: str,
        version: int,
        variables: Mapping[str, Any] | None = None,
        *,
        business_key: str | None = None,
        idempotency_key: str | None = None,
        started_by: str | None = None,
    ) -> InstanceHandle:
        return self._start(
            idempotency_key,
            variables,
            key=key,
            version=version,
            business_key=business_key,
            started_by=started_by,
        )

    def start_definition(
        self,
        definition_id: str,
        variables: Mapping[str, Any] | None = None,
        *,
        business_key: str | None = None,
        idempotency_key: str | None = None,
        form: Mapping[str, Any] | None = None,
        started_by: str | None = None,
    ) -> InstanceHandle:
        return self._start(
            idempotency_key,
            variables,
            definition_id=definition_id,
            business_key=business_key,
            form=form,
            started_by=started_by,
        )

    def _start(
        self, idempotency_key: str | None, variables: Mapping[str, Any] | None, **fields: Any
    ) -> InstanceHandle:
        """Run StartInstance with `fields` (which definition, how it starts) over `variables`."""
        command = StartInstance(variables=own_dict(variables), **fields)
        result: InstanceResult = self.run(command, idempotency_key)
        return InstanceHandle(self, UUID(result.instance_id))

    def complete_task(
        self,
        task_id: UUID | str,
        variables: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        form: Mapping[str, Any] | None = None,
    ) -> TaskResult:
        """Complete the task with `variables`; `form` holds the submitted values of its generated
        form, typed and checked in the same transaction (FormInvalid names each field at fault,
        and nothing is written)."""
        command = CompleteUserTask(as_uuid(task_id), own_dict(variables), form)
        return self.run(command, idempotency_key)

    def execute_token(
        self, token_id: UUID | str, expected_version: int | None = None
    ) -> TokenResult:
        """Run a token parked Ready before an asynchronous continuation. The claim is a
        compare-and-swap: with `expected_version`, against the version the caller read."""
        return self.run(ExecuteToken(as_uuid(token_id), expected_version))

    def modify_task_variables(
        self,
        task_id: UUID | str,
        modifications: Mapping[str, Any] | None = None,
        deletions: Sequence[str] = (),
        *,
        local: bool = True,
    ) -> TaskResult:
        """Set and delete variables of an open user task, in one transaction: its own
        activity instance's (`local`), or where Camunda's setVariable from the task puts them."""
        values = {name: infer(value) for name, value in (modifications or {}).items()}
        command = ModifyTaskVariables(as_uuid(task_id), values, tuple(deletions), local)
        return self.run(command)

    def claim_task(self, task_id: UUID | str, user_id: str) -> TaskResult:
        return self.run(AssignUserTask(as_uuid(task_id), user_id))

    def unclaim_task(self, task_id: UUID | str) -> TaskResult:
        return self.run(AssignUserTask(as_uuid(task_id), None, force=True))

    def set_assignee(self, task_id: UUID | str, user_id: str | None) -> TaskResult:
        return self.run(AssignUserTask(as_uuid(task_id), user_id, force=True))

    # -- external tasks ---------------------------------------------------------------------------

    def fetch_and_lock(
        self,
        worker_id: str,
        topics: Mapping[str, int] | list[TopicRequest],
        *,
        max_tasks: int = 1,
        use_priority: bool = True,
        timeout: float = 0.0,
        idempotency_key: str | None = None,
    ) -> list[dict[str, Any]]:
        """Lock up to `max_tasks` tasks of the topics (topic -> lock duration in ms). With a
        `timeout` (seconds) wait for work that long, woken by the database as work appears."""
        requests = (
            [TopicRequest(t, ms) for t, ms in topics.items()]
            if isinstance(topics, Mapping)
            else list(topics)
        )
        command = FetchAndLock(
            worker_id,
            max_tasks,
            tuple(requests),
            use_priority,
            roll_back_if_empty=idempotency_key is not None,
        )
        return fetching.fetch_and_lock(self, command, timeout, idempotency_key=idempotency_key)

    def complete_external_task(
        self,
        task_id: UUID | str,
        worker_id: str,
        variables: Mapping[str, Any] | None = None,
        local_variables: Mapping[str, Any] | None = None,
    ) -> ExternalTaskResult:
        """`variables` are set as Camunda's setVariable does from the task; `local_variables`
        become locals of the task's activity instance."""
        command = CompleteExternalTask(
            as_uuid(task_id), worker_id, own_dict(variables), own_dict(local_variables)
        )
        return self.run(command)

    def fail_external_task(
        self,
        task_id: UUID | str,
        worker_id: str,
        message: str,
        *,
        details: str | None = None,
        retries: int = 0,
        retry_timeout_ms: int = 0,
    ) -> ExternalTaskResult:
        command = FailExternalTask(
            as_uuid(task_id), worker_id, message, details, retries, retry_timeout_ms
        )
        return self.run(command)

    def external_task_bpmn_error(
        self,
        task_id: UUID | str,
        worker_id: str,
        error_code: str,
        error_message: str = "",
        variables: Mapping[str, Any] | None = None,
    ) -> ExternalTaskResult:
        command = ExternalTaskBpmnError(
            as_uuid(task_id), worker_id, error_code, error_message, own_dict(variables)
        )
        return self.run(command)

    def extend_lock(
        self, task_id: UUID | str, worker_id: str, new_duration_ms: int
    ) -> ExternalTaskResult:
        return self.run(ExtendLock(as_uuid(task_id), worker_id, new_duration_ms))

    def unlock_external_task(self, task_id: UUID | str) -> ExternalTaskResult:
        return self.run(UnlockExternalTask(as_uuid(task_id)))

    def set_external_task_retries(self, task_id: UUID | str, retries: int) -> ExternalTaskResult:
        return self.run(SetExternalTaskRetries(as_uuid(task_id), retries))

    def external_tasks(
        self,
        *,
        topic: str | None = None,
        instance_id: UUID | str | None = None,
        worker_id: str | None = None,
        locked: bool | None = None,
        limit: int = 1000,
        after: tuple[datetime, UUID] | None = None,
    ) -> list[ExternalTaskView]:
        """Open external tasks, oldest first; `after` (created_at, id): only those after it."""
        return work.external_tasks(
            self,
            topic=topic,
            instance_id=optional_uuid(instance_id),
            worker_id=worker_id,
            locked=locked,
            now=self.clock(),
            limit=limit,
            after=after,
        )

    # -- messages, signals, incidents, jobs -------------------------------------------------------

    def correlate_message(
        self,
        message_name: str,
        *,
        business_key: str | None = None,
        instance_id: UUID | str | None = None,
        correlation_keys: Mapping[str, Any] | None = None,
        variables: Mapping[str, Any] | None = None,
        all: bool = False,
        idempotency_key: str | None = None,
        local_variables: Mapping[str, Any] | None = None,
        tenant_id: str | None = None,
        without_tenant: bool = False,
        local_correlation_keys: Mapping[str, Any] | None = None,
    ) -> DeliveryResult:
        """`local_variables` (Camunda's processVariablesLocal) become locals of the token that
        receives the message; `tenant_id` (or `without_tenant`) narrows it to that tenant's
        instances and start events (or to those of none); `local_correlation_keys` must equal
        the waiting execution's variables (its token's own, else its token's scope's)."""
        command = CorrelateMessage(
            message_name,
            business_key,
            optional_uuid(instance_id),
            own_dict(correlation_keys),
            own_dict(variables),
            all,
            own_dict(local_variables),
            tenant_id,
            without_tenant,
            own_dict(local_correlation_keys),
        )
        return self.run(command, idempotency_key)

    def signal(
        self,
        signal_name: str,
        variables: Mapping[str, Any] | None = None,
        *,
        tenant_id: str | None = None,
        without_tenant: bool = False,
        execution_id: UUID | str | None = None,
        idempotency_key: str | None = None,
    ) -> DeliveryResult:
        """To every subscription waiting for the signal and every signal start event; with
        `execution_id` (Camunda's signalEventReceived), to that execution's own subscription."""
        if execution_id is None:
            command = BroadcastSignal(signal_name, own_dict(variables), tenant_id, without_tenant)
            return self.run(command, idempotency_key)
        if tenant_id is not None or without_tenant:
            raise BadRequest("a signal to one execution takes no tenant", field="tenantId")
        one = TriggerExecutionSignal(as_uuid(execution_id), signal_name, own_dict(variables))
        result = self.run(one, idempotency_key)
        return DeliveryResult([{"kind": "instance", "instance_id": result.instance_id}])

    def evaluate_conditions(
        self,
        variables: Mapping[str, Any] | None = None,
        *,
        business_key: str | None = None,
        definition_id: str | None = None,
    ) -> ConditionResult:
        """Start an instance of every latest definition (or of `definition_id`) whose
        conditional start event holds over `variables` (Camunda's evaluateStartConditions)."""
        values = {name: infer(value) for name, value in (variables or {}).items()}
        return self.run(EvaluateStartConditions(values, business_key, definition_id))

    def evaluate_decision(
        self,
        key: str | None = None,
        variables: Mapping[str, Any] | None = None,
        *,
        version: int | None = None,
        version_tag: str | None = None,
        definition_id: str | None = None,
    ) -> DecisionEvaluated:
        """Evaluate the latest version of the decision `key` (or `version`, or the latest with
        `version_tag`, or the definition `definition_id`) over `variables`, in one transaction
        that writes its evaluations' history rows; `.result` is its list of result entries."""
        command = EvaluateDecision(own_dict(variables), key, definition_id, version, version_tag)
        return self.run(command)

    def modify(
        self,
        instance_id: UUID | str,
        *instructions: Instruction,
        skip_custom_listeners: bool = False,
        skip_io_mappings: bool = False,
        annotation: str | None = None,
    ) -> ModificationResult:
        """Modify the instance's tokens: the instructions (engine/semantics/modification.py)
        apply in order in one transaction, or none does."""
        return self.run(
            ModifyInstance(
                as_uuid(instance_id),
                instructions,
                skip_custom_listeners,
                skip_io_mappings,
                annotation,
            )
        )

    def preview_modification(
        self,
        instance_id: UUID | str,
        *instructions: Instruction,
        skip_custom_listeners: bool = False,
        skip_io_mappings: bool = False,
    ) -> ModificationResult:
        """Where `modify` would leave the tokens, with nothing written."""
        return self.run(
            PreviewModification(
                as_uuid(instance_id), instructions, skip_custom_listeners, skip_io_mappings
            )
        )

    def retry_incident(self, incident_id: UUID | str) -> IncidentResult:
        return self.run(RetryIncident(as_uuid(incident_id)))

    def resolve_incident(self, incident_id: UUID | str) -> IncidentResult:
        return self.run(ResolveIncident(as_uuid(incident_id)))

    def incidents(
        self,
        *,
        instance_id: UUID | str | None = None,
        definition_key: str | None = None,
        definition_id: str | None = None,
        incident_type: str | None = None,
        node_id: str | None = None,
        state: str | None = IncidentState.OPEN,
        limit: int = 1000,
        after: tuple[datetime, UUID] | None = None,
    ) -> list[IncidentView]:
        """Incidents, oldest first; `after` (created_at, id): only those after it."""
        return work.incidents(
            self,
            instance_id=optional_uuid(instance_id),
            definition_key=definition_key,
            definition_id=definition_id,
            incident_type=incident_type,
            node_id=node_id,
            state=state,
            limit=limit,
            after=after,
        )

    def jobs(
        self,
        instance_id: UUID | str | None = None,
        with_retries_left: bool | None = None,
        *,
        limit: int = 1000,
        after: tuple[datetime, UUID] | None = None,
    ) -> list[JobView]:
        """Jobs, earliest due first; `after` (due_at, id): only those after it."""
        return work.jobs(
            self,
            instance_id=optional_uuid(instance_id),
            with_retries_left=with_retries_left,
            limit=limit,
            after=after,
        )

    def set_job_retries(self, job_id: UUID | str, retries: int) -> None:
        self.run(SetJobRetries(as_uuid(job_id), retries))

    def execute_job(self, job_id: UUID | str) -> str:
        """Run one job now, whether due or not, as an executor would (failures count down); the
        outcome, as `run_job`'s."""
        return self.run_job(job_id).outcome

    def run_job(
        self, job_id: UUID | str, *, idempotency_key: str | Idempotency | None = None
    ) -> JobResult:
        """Run one job now, whether due or not, the way the job executor runs it: a failure of
        the job counts its retries down, and the outcome is "failed". A repeated idempotency key
        replays the first outcome, a failure included."""
        return run_job(self.run, as_uuid(job_id), None, idempotency_key)

    # -- version migration -----------------------------------------------------------------------

    def migration_plan(
        self, source_id: str, target_id: str, update_event_triggers: bool = False
    ) -> MigrationPlan:
        """The plan Camunda's generator makes: the nodes of the same id and type in both."""
        cache = self.definition_cache
        return migration_reads.plan(self, cache, source_id, target_id, update_event_triggers)

    def validate_migration(
        self, plan: MigrationPlan, instance_ids: Sequence[UUID | str] = ()
    ) -> ValidationReport:
        """The plan's instruction failures and what of each instance cannot follow it; nothing
        is written."""
        ids = [as_uuid(i) for i in instance_ids]
        return migration_reads.validation(self, self.definition_cache, plan, ids, self.clock())

    def migrate(
        self, plan: MigrationPlan, instance_ids: Sequence[UUID | str]
    ) -> list[MigrationResult]:
        """Migrate every instance, one transaction each, once all of them validated (otherwise
        MigrationInvalid and none is migrated). An instance that changed in between and no
        longer validates is refused in its own transaction, the ones before it stay migrated."""
        report = self.validate_migration(plan, instance_ids)
        if not report.valid:
            raise MigrationInvalid(
                "the migration is invalid: "
                + "; ".join(
                    [f for r in report.instructions for f in r.failures]
                    + [f"{r.instance_id}: {f}" for r in report.instances for f in r.failures]
                ),
                instructions=[r.to_json() for r in report.instructions],
                instances=[r.to_json() for r in report.instances if r.failures],
            )
        return [self.run(MigrateInstance(as_uuid(i), plan)) for i in instance_ids]

    # -- reads ------------------------------------------------------------------------------------

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for reads (autocommit: each read sees the latest commits)."""
        with self.availability.connection(self.pool) as conn:
            yield conn

    def ping(self) -> None:
        """Raise DatabaseUnavailable unless the database answers (at once while it is known
        down; see engine/db/outage.py)."""
        with self.connection() as conn:
            conn.execute("SELECT 1")

    def instance(self, instance_id: UUID | str) -> InstanceHandle:
        """A handle to run commands on the instance (NotFound: there is none). Its reads show
        what the bound actor may read; its commands check what the actor may do."""
        handle = InstanceHandle(self, as_uuid(instance_id))
        if not instance_reads.exists(self, handle.id):
            raise NotFound(f"process instance {handle.id} does not exist")
        return handle

    def definitions(self, key: str | None = None) -> list[DefinitionRow]:
        return definition_reads.list_all(self, key)

    def user_tasks(
        self,
        instance_id: UUID | str | None = None,
        state: str | None = TaskState.OPEN,
        *,
        definition_key: str | None = None,
        assignee: str | None = None,
        candidate_user: str | None = None,
        candidate_group: str | None = None,
        limit: int = 1000,
        after: tuple[datetime, UUID] | None = None,
    ) -> list[UserTaskView]:
        """User tasks, oldest first; `after` (created_at, id): only those after it."""
        return work.user_tasks(
            self,
            instance_id=optional_uuid(instance_id),
            state=state,
            definition_key=definition_key,
            assignee=assignee,
            candidate_user=candidate_user,
            candidate_group=candidate_group,
            limit=limit,
            after=after,
        )

    def instance_counts(self) -> dict[str, int]:
        return instance_reads.counts(self)

    def list_instances(
        self, where: InstanceFilter | None = None, *, limit: int = 50, after: str | None = None
    ) -> Page[InstanceInfo]:
        """A page of instances matching `where`, newest first. Pass the page's `next` as `after`
        for the following page."""
        return instance_reads.page(self, where or InstanceFilter(), limit=limit, after=after)

    def definition(self, definition_id: str) -> DefinitionRow:
        row = definition_reads.by_id(self, definition_id)
        return found(row, f"process definition '{definition_id}' does not exist")

    def latest_definition(self, key: str) -> DefinitionRow:
        return found(definition_reads.latest(self, key), f"process '{key}' is not deployed")

    def model(self, definition_id: str, key: str) -> ProcessModel:
        """The parsed process `key` of a deployed definition (cached once parsed)."""
        return definition_reads.model(self, self.definition_cache, definition_id, key)

    def definition_xml(self, definition_id: str) -> tuple[str, str]:
        """(resource name, BPMN XML) of a definition as it was deployed."""
        source = definition_reads.source_xml(self, definition_id)
        return found(source, f"process definition '{definition_id}' does not exist")

    def user_task(self, task_id: UUID | str) -> UserTaskView:
        return self._by_id(work.user_task, task_id, "user task")

    def task_form(self, task_id: UUID | str) -> tuple[UserTaskView, Form]:
        """An open user task with its generated form (no fields: the task has none)."""
        task = self.user_task(task_id)
        if task.state != TaskState.OPEN:
            raise NotFound(f"user task {task_id} is not open")
        return task, form_reads.task_form(self, self.definition_cache, task)

    def start_form(self, definition_id: str) -> Form:
        """The generated form of a definition's none start event (no fields: it has none)."""
        definition = self.definition(definition_id)
        return form_reads.start_form(self, self.definition_cache, definition)

    def external_task(self, task_id: UUID | str) -> ExternalTaskView:
        return self._by_id(work.external_task, task_id, "external task")

    def incident(self, incident_id: UUID | str) -> IncidentView:
        return self._by_id(work.incident, incident_id, "incident")

    def job(self, job_id: UUID | str) -> JobView:
        return self._by_id(work.job, job_id, "job")

    def _by_id(self, read: Callable[[Engine, UUID], R | None], row_id: UUID | str, what: str) -> R:
        """The row `read` finds by its id; NotFound naming `what` when there is none."""
        return found(read(self, as_uuid(row_id)), f"{what} {row_id} does not exist")
