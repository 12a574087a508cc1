"""What the API answers: engine read models and command results as JSON. snake_case fields, ids
as strings, times as ISO 8601 in UTC, variables as `{name: {"type": ..., "value": ...}}`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from engine.language.variables import TypedValue
from engine.queries.definitions import DefinitionRow
from engine.queries.instances import InstanceInfo
from engine.queries.tokens import TokenPath, TokenPosition
from engine.queries.work import ExternalTaskInfo, IncidentInfo, JobInfo, TaskRow


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def iso_text(text: str | None) -> str | None:
    """A stored ISO time (any offset) in UTC."""
    return iso(datetime.fromisoformat(text)) if text else None


def ident(value: UUID | str | None) -> str | None:
    return None if value is None else str(value)


def variables(values: Mapping[str, TypedValue]) -> dict[str, Any]:
    return {name: {"type": v.type, "value": v.to_json()} for name, v in values.items()}


def definition(row: DefinitionRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "key": row.key,
        "version": row.version,
        "name": row.name,
        "version_tag": row.version_tag,
        "deployment_id": str(row.deployment_id),
        "resource_name": row.resource_name,
        "history_ttl_days": row.history_ttl_days,
        "created_at": iso(row.created_at),
        "suspended": row.suspended,
    }


def instance(info: InstanceInfo) -> dict[str, Any]:
    return {
        "id": str(info.id),
        "definition_id": info.definition_id,
        "definition_key": info.definition_key,
        "business_key": info.business_key,
        "state": info.state,
        "started_at": iso(info.started_at),
        "ended_at": iso(info.ended_at),
    }


def token(position: TokenPosition) -> dict[str, Any]:
    return {
        "id": str(position.token_id),
        "node_id": position.node_id,
        "node_name": position.node_name,
        "state": position.state.value,
        "version": position.version,
        "mode": position.mode.value,
    }


def track(path: TokenPath) -> dict[str, Any]:
    return {
        "id": str(path.track_id),
        "parent_id": ident(path.parent_id),
        "merged_into": ident(path.merged_into),
        "state": path.terminal.value,
        "mode": path.mode.value,
        "steps": [
            {
                "node_id": step.node_id,
                "node_name": step.node_name,
                "node_type": step.node_type,
                "state": step.state,
                "started_at": iso(step.started_at),
                "ended_at": iso(step.ended_at),
            }
            for step in path.steps
        ],
    }


def user_task(task: TaskRow) -> dict[str, Any]:
    return {
        "id": str(task.id),
        "instance_id": str(task.instance_id),
        "node_id": task.node_id,
        "name": task.name,
        "state": task.state,
        "assignee": task.assignee,
        "candidate_users": list(task.candidate_users),
        "candidate_groups": list(task.candidate_groups),
        "priority": task.priority,
        "due_at": iso(task.due_at),
        "created_at": iso(task.created_at),
        "ended_at": iso(task.ended_at),
        "definition_id": task.definition_id,
        "definition_key": task.definition_key,
        "business_key": task.business_key,
    }


def external_task(task: ExternalTaskInfo) -> dict[str, Any]:
    return {
        "id": str(task.id),
        "instance_id": str(task.instance_id),
        "node_id": task.node_id,
        "topic": task.topic,
        "state": task.state,
        "priority": task.priority,
        "worker_id": task.worker_id,
        "lock_expires_at": iso(task.lock_expires_at),
        "retries": task.retries,
        "error_message": task.error_message,
        "error_details": task.error_details,
        "created_at": iso(task.created_at),
        "definition_id": task.definition_id,
        "definition_key": task.definition_key,
        "business_key": task.business_key,
        "tenant_id": task.tenant_id,
    }


def locked_task(fetched: Mapping[str, Any]) -> dict[str, Any]:
    """One task of a fetch-and-lock result (already JSON) with its times in UTC."""
    return {
        **fetched,
        "lock_expires_at": iso_text(fetched.get("lock_expires_at")),
        "created_at": iso_text(fetched.get("created_at")),
    }


def incident(info: IncidentInfo) -> dict[str, Any]:
    return {
        "id": str(info.id),
        "type": info.type,
        "instance_id": str(info.instance_id),
        "definition_id": info.definition_id,
        "token_id": ident(info.token_id),
        "node_id": info.node_id,
        "job_id": ident(info.job_id),
        "external_task_id": ident(info.external_task_id),
        "message": info.message,
        "details": info.details,
        "state": info.state,
        "created_at": iso(info.created_at),
        "resolved_at": iso(info.resolved_at),
    }


def job(info: JobInfo) -> dict[str, Any]:
    return {
        "id": str(info.id),
        "kind": info.kind,
        "instance_id": ident(info.instance_id),
        "token_id": ident(info.token_id),
        "node_id": info.node_id,
        "definition_id": info.definition_id,
        "due_at": iso(info.due_at),
        "lock_owner": info.lock_owner,
        "lock_expires_at": iso(info.lock_expires_at),
        "retries": info.retries,
        "timer_text": info.timer_text,
        "repetitions_left": info.repetitions_left,
        "error_message": info.error_message,
        "created_at": iso(info.created_at),
    }


def items(values: list[dict[str, Any]], next_cursor: str | None = None) -> dict[str, Any]:
    return {"items": values, "next": next_cursor}
