"""The state vocabularies and the token and instance state machines, in one place.

Every allowed move is written out here, not read from the tables under test: a move added to or
dropped from engine/states.py fails these tests until they are changed with it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar
from uuid import UUID

import psycopg
import pytest
import sqlalchemy as sa

from app.console.common import EVENT_TYPES
from engine import schema
from engine.api import Engine
from engine.commands.loading import load
from engine.core.executor import Result, Tx
from engine.core.runtime import InstanceRow
from engine.db.ids import new_id
from engine.errors import InvariantViolation, InvariantViolationKind
from engine.states import (
    AlertKind,
    AlertSource,
    BatchItemState,
    BatchState,
    BatchType,
    CleanupState,
    DeliveryState,
    IncidentState,
    InstanceState,
    JobKind,
    JobOutcome,
    ListPage,
    OutboxEvent,
    SubscriptionKind,
    TaskState,
    TokenMode,
    TokenState,
    VisitState,
    WorkKind,
    WorkLogState,
    check_instance_transition,
    check_token_transition,
)
from engine.store import runs
from tests.engine.processes import async_work

TOKEN_MOVES = {
    ("Created", "Ready"),
    ("Created", "Terminated"),
    ("Ready", "Executing"),
    ("Ready", "Failed"),
    ("Ready", "Terminated"),
    ("Executing", "Waiting"),
    ("Executing", "Ready"),
    ("Executing", "Completed"),
    ("Executing", "Failed"),
    ("Executing", "Terminated"),
    ("Waiting", "Executing"),
    ("Waiting", "Ready"),
    ("Waiting", "Completed"),
    ("Waiting", "Failed"),
    ("Waiting", "Terminated"),
    ("Failed", "Ready"),
    ("Failed", "Waiting"),
    ("Failed", "Terminated"),
}

INSTANCE_MOVES = {
    ("Created", "Active"),
    ("Active", "Suspended"),
    ("Active", "Completed"),
    ("Active", "Terminating"),
    ("Suspended", "Active"),
    ("Suspended", "Terminating"),
    ("Terminating", "Terminated"),
}

TOKEN_PAIRS = sorted(itertools.product(TokenState, TokenState))
INSTANCE_PAIRS = sorted(itertools.product(InstanceState, InstanceState))


@pytest.mark.parametrize("current,target", TOKEN_PAIRS)
def test_every_token_move_is_allowed_or_rejected_with_its_kind(
    current: TokenState, target: TokenState
) -> None:
    if (current.value, target.value) in TOKEN_MOVES:
        check_token_transition("t", current, target)
        return
    with pytest.raises(InvariantViolation) as caught:
        check_token_transition("t", current, target)
    final = {"Completed", "Terminated"}
    expected = (
        InvariantViolationKind.TOKEN_FINALIZED_TWICE
        if current.value in final and target.value in final
        else InvariantViolationKind.TOKEN_INVALID_TRANSITION
    )
    assert caught.value.kind is expected


@pytest.mark.parametrize("current,target", INSTANCE_PAIRS)
def test_every_instance_move_is_allowed_or_rejected_with_its_kind(
    current: InstanceState, target: InstanceState
) -> None:
    if (current.value, target.value) in INSTANCE_MOVES:
        check_instance_transition("i", current, target)
        return
    with pytest.raises(InvariantViolation) as caught:
        check_instance_transition("i", current, target)
    assert caught.value.kind is InvariantViolationKind.INSTANCE_INVALID_TRANSITION
    assert caught.value.detail == {
        "kind": "InstanceInvalidTransition",
        "instance_id": "i",
        "state": current.value,
        "target": target.value,
    }


def test_the_literal_moves_name_only_real_states() -> None:
    tokens = {s.value for s in TokenState}
    instances = {s.value for s in InstanceState}
    assert {s for move in TOKEN_MOVES for s in move} <= tokens
    assert {s for move in INSTANCE_MOVES for s in move} <= instances
    assert len(TOKEN_PAIRS) == 49 and len(INSTANCE_PAIRS) == 36


def test_completed_to_executing_is_an_invalid_transition() -> None:
    with pytest.raises(InvariantViolation) as caught:
        check_token_transition("t", TokenState.COMPLETED, TokenState.EXECUTING)
    assert caught.value.kind is InvariantViolationKind.TOKEN_INVALID_TRANSITION
    assert "Completed" in caught.value.message


def _instance(state: InstanceState) -> InstanceRow:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return InstanceRow(new_id(), "p:1:x", "p", None, state, 3, now)


def test_an_instance_row_refuses_a_forbidden_move_and_stays_as_it_was() -> None:
    row = _instance(InstanceState.COMPLETED)
    with pytest.raises(InvariantViolation) as caught:
        row.move_to(InstanceState.ACTIVE, datetime(2026, 1, 2, tzinfo=UTC))
    assert caught.value.kind is InvariantViolationKind.INSTANCE_INVALID_TRANSITION
    assert "Completed" in caught.value.message and "Active" in caught.value.message
    assert row.state is InstanceState.COMPLETED
    assert row.ended_at is None and not row.dirty


def test_an_instance_row_makes_an_allowed_move() -> None:
    row = _instance(InstanceState.TERMINATING)
    ended = datetime(2026, 1, 2, tzinfo=UTC)
    row.move_to(InstanceState.TERMINATED, ended)
    assert row.state is InstanceState.TERMINATED
    assert row.ended_at == ended and row.dirty


def test_suspended_cannot_complete_nor_terminate_without_terminating() -> None:
    for target in (InstanceState.COMPLETED, InstanceState.TERMINATED):
        with pytest.raises(InvariantViolation):
            _instance(InstanceState.SUSPENDED).move_to(target, datetime.now(UTC))


def test_every_vocabulary_in_the_order_of_its_check_constraint() -> None:
    assert [s.value for s in TokenState] == [
        "Created",
        "Ready",
        "Executing",
        "Waiting",
        "Completed",
        "Failed",
        "Terminated",
    ]
    assert [s.value for s in InstanceState] == [
        "Created",
        "Active",
        "Suspended",
        "Completed",
        "Terminating",
        "Terminated",
    ]
    assert [s.value for s in TokenMode] == ["Forward", "Compensation"]
    assert [s.value for s in VisitState] == ["Active", "Completed", "Terminated"]
    assert [s.value for s in TaskState] == ["Open", "Completed", "Retired"]
    assert [s.value for s in IncidentState] == ["Open", "Resolved"]
    assert [s.value for s in JobKind] == [
        "async",
        "async-after",
        "timer",
        "timer-start",
        "history-cleanup",
        "batch",
        "suspension",
    ]
    assert [s.value for s in CleanupState] == ["Running", "Finished", "Stopped"]
    assert [s.value for s in WorkKind] == ["job", "external-task"]
    assert [s.value for s in WorkLogState] == ["created", "failed", "successful", "deleted"]
    assert [s.value for s in SubscriptionKind] == ["message", "signal", "conditional", "compensate"]
    assert [s.value for s in JobOutcome] == [
        "executed",
        "failed",
        "gone",
        "not-owner",
        "instance-not-active",
        "updated",
    ]
    assert [s.value for s in DeliveryState] == ["pending", "delivered", "dead"]
    assert [s.value for s in ListPage] == ["instances", "incidents", "tasks"]
    assert [s.value for s in BatchState] == ["Running", "Suspended", "Completed", "Cancelled"]
    assert [s.value for s in BatchItemState] == ["Pending", "Done", "Failed"]
    assert [s.value for s in BatchType] == [
        "retry-incidents",
        "set-job-retries",
        "set-external-task-retries",
        "cancel-instances",
        "suspend-instances",
        "resume-instances",
        "set-variables",
        "delete-history",
        "modify",
        "migrate",
    ]
    assert [s.value for s in AlertKind] == ["waiting", "incident"]
    assert [s.value for s in AlertSource] == ["console", "model"]


def test_the_outbox_events_that_pages_and_webhooks_choose_from() -> None:
    pinned = [
        "instance.started",
        "instance.completed",
        "instance.terminated",
        "instance.suspended",
        "instance.resumed",
        "visit.active",
        "visit.completed",
        "visit.terminated",
        "token.ready",
        "token.forked",
        "token.merged",
        "token.terminated",
        "error.caught",
        "escalation.caught",
        "compensation.thrown",
        "variables.updated",
        "incident.created",
        "incident.resolved",
        "task.completed",
        "task.assigned",
        "task.updated",
        "job.executed",
        "job.failed",
        "external_task.completed",
        "external_task.failed",
        "decision.evaluated",
        "alert.raised",
    ]
    assert [s.value for s in OutboxEvent] == pinned
    # The console's pages listen on their stream for every one of them.
    assert list(EVENT_TYPES) == pinned


def test_the_check_constraints_read_as_they_always_have() -> None:
    checks = {
        str(check.name): str(check.sqltext)
        for table in schema.metadata.tables.values()
        for check in table.constraints
        if isinstance(check, sa.CheckConstraint) and str(check.name).endswith("_allowed")
    }
    assert checks == {
        "ck_process_instance_state_allowed": (
            "state IN ('Created', 'Active', 'Suspended', 'Completed', 'Terminating', 'Terminated')"
        ),
        "ck_process_definition_state_allowed": "state IN ('Active', 'Suspended')",
        "ck_token_state_allowed": (
            "state IN ('Created', 'Ready', 'Executing', 'Waiting', 'Completed', 'Failed', "
            "'Terminated')"
        ),
        "ck_token_mode_allowed": "mode IN ('Forward', 'Compensation')",
        "ck_user_task_state_allowed": "state IN ('Open', 'Completed', 'Retired')",
        "ck_user_task_delegation_state_allowed": "delegation_state IN ('PENDING', 'RESOLVED')",
        "ck_external_task_state_allowed": "state IN ('Open', 'Completed', 'Retired')",
        "ck_job_kind_allowed": (
            "kind IN ('async', 'async-after', 'timer', 'timer-start', 'history-cleanup', 'batch', "
            "'suspension')"
        ),
        "ck_job_definition_job_kind_allowed": (
            "job_kind IN ('async', 'async-after', 'timer', 'timer-start', 'history-cleanup', "
            "'batch', 'suspension')"
        ),
        "ck_event_subscription_kind_allowed": (
            "kind IN ('message', 'signal', 'conditional', 'compensate')"
        ),
        "ck_incident_state_allowed": "state IN ('Open', 'Resolved')",
        "ck_work_log_kind_allowed": "kind IN ('job', 'external-task')",
        "ck_work_log_state_allowed": "state IN ('created', 'failed', 'successful', 'deleted')",
        "ck_history_state_allowed": "state IN ('Active', 'Completed', 'Terminated')",
        "ck_history_mode_allowed": "mode IN ('Forward', 'Compensation')",
        "ck_credential_kind_allowed": "kind IN ('password', 'token')",
        "ck_authorization_rule_type_allowed": "type IN (0, 1, 2)",
        "ck_history_cleanup_run_state_allowed": "state IN ('Running', 'Finished', 'Stopped')",
        "ck_webhook_delivery_state_allowed": "state IN ('pending', 'delivered', 'dead')",
        "ck_saved_view_page_allowed": "page IN ('instances', 'incidents', 'tasks')",
        "ck_audit_entry_channel_allowed": (
            "channel IN ('console', 'api', 'engine-rest', 'cli', 'batch')"
        ),
        "ck_audit_entry_entity_allowed": (
            "entity IN ('ProcessInstance', 'ProcessDefinition', 'Deployment', 'Variable', "
            "'Task', 'Job', 'ExternalTask', 'Incident', 'Batch', 'User', 'ApiToken', 'Group', "
            "'Group membership', 'Tenant', 'TenantMembership', 'Authorization', "
            "'ProcessInstanceHistory', 'Configuration')"
        ),
        "ck_audit_entry_operation_allowed": (
            "operation IN ('Create', 'Update', 'Delete', 'Suspend', 'Activate', "
            "'ModifyProcessInstance', 'Migrate', 'SetVariable', 'ModifyVariable', "
            "'RemoveVariable', 'SetJobRetries', 'SetExternalTaskRetries', 'Execute', "
            "'Unlock', 'Retry', 'Resolve', 'Claim', 'Assign', 'Delegate', 'AddComment', "
            "'AddAttachment', 'DeleteAttachment', 'Complete', 'CorrelateMessage', "
            "'StartProcessInstance', 'DeleteHistory', 'CreateBatch', 'RetryBatch', "
            "'CleanupHistory', 'SetAnnotation', 'ClearAnnotation', 'CreateIncident', 'Signal')"
        ),
        "ck_batch_type_allowed": (
            "type IN ('retry-incidents', 'set-job-retries', 'set-external-task-retries', "
            "'cancel-instances', 'suspend-instances', 'resume-instances', 'set-variables', "
            "'delete-history', 'modify', 'migrate')"
        ),
        "ck_batch_state_allowed": "state IN ('Running', 'Suspended', 'Completed', 'Cancelled')",
        "ck_batch_item_state_allowed": "state IN ('Pending', 'Done', 'Failed')",
        "ck_alert_threshold_kind_allowed": "kind IN ('waiting', 'incident')",
        "ck_alert_threshold_source_allowed": "source IN ('console', 'model')",
        "ck_alert_crossing_kind_allowed": "kind IN ('waiting', 'incident')",
    }


@dataclass(frozen=True)
class _ClaimAfterTerminating:
    """Loads an instance, ends its ready token in memory, then claims the token in the store:
    the compare-and-swap finds the row still Ready, but the token it claims is Terminated."""

    name: ClassVar[str] = "ClaimAfterTerminating"
    result_type: ClassVar[type[Result]] = Result

    instance_id: UUID

    def execute(self, tx: Tx) -> Result:
        run = load(tx, self.instance_id)
        [token] = run.tokens.values()
        token.move_to(TokenState.TERMINATED, tx.now)
        runs.claim_token(tx.conn, token, tx.now)
        return Result()


def test_the_store_claim_cannot_skip_the_token_state_machine(
    engine: Engine, database_url: str
) -> None:
    engine.register_handler("work", lambda ctx: None)
    engine.deploy(async_work())
    instance = engine.start_latest("async-work")
    query = "SELECT state, version FROM token WHERE instance_id = %s"
    with psycopg.connect(database_url) as conn:
        before = conn.execute(query, (instance.id,)).fetchall()
    assert [state for state, _ in before] == ["Ready"]
    with pytest.raises(InvariantViolation) as caught:
        engine.run(_ClaimAfterTerminating(instance.id))
    assert caught.value.kind is InvariantViolationKind.TOKEN_INVALID_TRANSITION
    assert caught.value.detail["state"] == "Terminated"
    assert caught.value.detail["target"] == "Executing"
    with psycopg.connect(database_url) as conn:
        assert conn.execute(query, (instance.id,)).fetchall() == before
    [token] = instance.tokens()
    engine.execute_token(token.token_id)
    assert instance.state is InstanceState.COMPLETED
