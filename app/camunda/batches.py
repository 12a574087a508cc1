"""Batches (engine/commands/batches.py) as Camunda's /batch resource, and the asynchronous
operations that create them: delete process instances, set job or external task retries.

Camunda's runtime batches are the unfinished ones: a batch leaves /batch when its last item is
done (or it is cancelled), as Camunda's does. The items of a batch created from a query are the
query's answer at creation: the set is fixed then. Suspending and cancelling a batch need what its
type needs besides the batch permits (app/api/batches.py's `require_batch_type`): for a history
deletion or a migration, what its items need on every definition."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from starlette.datastructures import QueryParams
from starlette.responses import Response

from app import gates
from app.api.batches import require_batch_type
from app.camunda import dto
from app.camunda import external_tasks as external_task_rest
from app.camunda import instances as instance_rest
from app.camunda import jobs as job_rest
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, json_response, listed, no_content
from app.params import as_uuid
from engine.commands.batches import CHUNK_SIZE, CancelBatch, CreateBatch, SuspendBatch
from engine.core import actors
from engine.errors import Conflict
from engine.queries import batches as bq
from engine.queries.camunda import external_tasks as external_task_reads
from engine.queries.camunda import jobs as job_reads
from engine.queries.camunda.common import CamundaPage
from engine.states import BatchState, BatchType

# Camunda's batch types, where it has one for ours.
CAMUNDA_TYPES: dict[str, str] = {
    BatchType.CANCEL_INSTANCES: "instance-deletion",
    BatchType.SET_JOB_RETRIES: "set-job-retries",
    BatchType.SET_EXTERNAL_TASK_RETRIES: "set-external-task-retries",
    BatchType.SUSPEND_INSTANCES: "instance-update-suspension-state",
    BatchType.RESUME_INSTANCES: "instance-update-suspension-state",
    BatchType.SET_VARIABLES: "process-set-variables",
    BatchType.DELETE_HISTORY: "historic-process-instance-deletion",
    BatchType.MODIFY: "instance-modification",
    BatchType.MIGRATE: "instance-migration",
}

Json = dict[str, Any]


def _batch_fields(row: bq.BatchRow) -> Json:
    """What Camunda's BatchDto and HistoricBatchDto share: a batch's items are its jobs, each
    an invocation of the operation."""
    return {
        "id": str(row.id),
        "type": CAMUNDA_TYPES.get(row.type, row.type),
        "totalJobs": row.total,
        "batchJobsPerSeed": CHUNK_SIZE,
        "invocationsPerBatchJob": 1,
        "seedJobDefinitionId": None,
        "monitorJobDefinitionId": None,
        "batchJobDefinitionId": None,
        "tenantId": row.tenant_id,
        "createUserId": row.created_by,
        "startTime": dto.format_date(row.created_at),
        "executionStartTime": dto.format_date(row.created_at),
    }


def batch_dto(row: bq.BatchRow) -> Json:
    """Camunda's BatchDto."""
    return {
        **_batch_fields(row),
        "jobsCreated": row.done + row.failed,
        "suspended": row.suspended,
    }


def statistics_dto(row: bq.BatchRow) -> Json:
    return {
        **batch_dto(row),
        "remainingJobs": row.remaining,
        "completedJobs": row.done,
        "failedJobs": row.failed,
    }


def _types(call: Call) -> list[str] | None:
    given = call.text("type")
    if given is None:
        return None
    ours = [t.value for t in BatchType if t.value == given or CAMUNDA_TYPES.get(t) == given]
    return ours or [given]


def _filters(call: Call) -> dict[str, Any]:
    suspended = call.flag("suspended")
    states: list[str] = list(bq.UNFINISHED)
    if suspended is not None:
        states = [BatchState.SUSPENDED if suspended else BatchState.RUNNING]
    return {"batch_id": call.uuid("batchId"), "types": _types(call), "states": states}


def _rows(call: Call) -> list[bq.BatchRow]:
    page = call.page({})
    return bq.batches(call.engine, **_filters(call), first=page.first, limit=page.max)


def list_batches(call: Call) -> Response:
    return json_response([batch_dto(row) for row in _rows(call)])


def count_batches(call: Call) -> Response:
    return json_response({"count": bq.count(call.engine, **_filters(call))})


def statistics(call: Call) -> Response:
    return json_response([statistics_dto(row) for row in _rows(call)])


def _runtime(call: Call) -> bq.BatchRow:
    batch_id = as_uuid(call.path["id"])
    row = bq.batch(call.engine, batch_id)
    if row is None or row.state not in bq.UNFINISHED:
        raise invalid_request(f"Batch for id '{call.path['id']}' cannot be found", 404)
    return row


def get_batch(call: Call) -> Response:
    return json_response(batch_dto(_runtime(call)))


# -- history: every batch kept, running or ended (Completed or Cancelled) ------------------------


def historic_batch_dto(row: bq.BatchRow) -> Json:
    """Camunda's HistoricBatchDto."""
    return {**_batch_fields(row), "endTime": dto.format_date(row.ended_at), "removalTime": None}


def _historic_filters(call: Call) -> dict[str, Any]:
    """`completed`: true, only ended batches; false, only unfinished ones."""
    completed = call.flag("completed")
    states: list[str] | None = None
    if completed is not None:
        ended: list[str] = [s for s in BatchState if s not in bq.UNFINISHED]
        states = ended if completed else list(bq.UNFINISHED)
    return {"batch_id": call.uuid("batchId"), "types": _types(call), "states": states}


def list_historic_batches(call: Call) -> Response:
    page = call.page({})
    found = bq.batches(call.engine, **_historic_filters(call), first=page.first, limit=page.max)
    return json_response([historic_batch_dto(row) for row in found])


def count_historic_batches(call: Call) -> Response:
    return json_response({"count": bq.count(call.engine, **_historic_filters(call))})


def get_historic_batch(call: Call) -> Response:
    row = bq.batch(call.engine, as_uuid(call.path["id"]))
    if row is None:
        raise invalid_request(f"Historic batch for id '{call.path['id']}' cannot be found", 404)
    return json_response(historic_batch_dto(row))


def suspend(call: Call) -> Response:
    row = _runtime(call)
    require_batch_type(call.request, row)
    if not isinstance(call.field("suspended"), bool):
        raise invalid_request("'suspended' must be a boolean")
    try:
        call.engine.run(SuspendBatch(row.id, call.body_flag("suspended")))
    except Conflict as exc:  # finished meanwhile
        raise invalid_request(exc.message, 404) from exc
    return no_content()


def cancel(call: Call) -> Response:
    row = _runtime(call)
    require_batch_type(call.request, row)
    try:
        call.engine.run(CancelBatch(row.id))
    except Conflict as exc:  # finished meanwhile
        raise invalid_request(exc.message, 404) from exc
    return no_content()


# -- creating batches -----------------------------------------------------------------------------


def _as_params(name: str, given: Any) -> QueryParams:
    """A query object of a body as the query parameters of the matching GET: a list is a
    comma-separated value; sorting is irrelevant to a batch and set aside."""
    if not isinstance(given, Mapping):
        raise invalid_request(f"'{name}' must be an object")
    items: list[tuple[str, str]] = []
    for key, value in given.items():
        if key == "sorting" or value is None:
            continue
        if isinstance(value, bool):
            items.append((key, "true" if value else "false"))
        elif isinstance(value, str | int | float):
            items.append((key, str(value)))
        elif isinstance(value, list) and all(isinstance(v, str | int) for v in value):
            items.append((key, ",".join(str(v) for v in value)))
        else:
            raise invalid_request(f"'{name}.{key}' is not supported in a batch's query")
    return QueryParams(items)


def _queried(call: Call, name: str) -> Call | None:
    """A call whose query parameters are the body's query object `name`, unpaged."""
    given = call.field(name)
    if given is None:
        return None
    return dataclasses.replace(call, query=_as_params(name, given), body=None)


def _ids(call: Call, name: str) -> list[str]:
    given = call.field(name, [])
    if not isinstance(given, list) or not all(isinstance(v, str) for v in given):
        raise invalid_request(f"'{name}' must be an array of ids")
    for value in given:
        as_uuid(value)
    return list(given)


def _instance_ids(call: Call) -> list[str]:
    """processInstanceIds, then the instances processInstanceQuery finds."""
    ids = _ids(call, "processInstanceIds")
    queried = _queried(call, "processInstanceQuery")
    if queried is not None:
        rows = listed(instance_rest._instance_query(queried, count=False))
        ids += [str(row.id) for row in rows]
    return ids


def _create(call: Call, kind: BatchType, items: list[str], payload: Json, empty: str) -> Response:
    # What the batch's type asks besides the batch permits (history deletion, migration).
    gates.demand_batch_type(actors.current(), kind.value)
    if not items:
        raise invalid_request(empty)
    result = call.engine.run(CreateBatch(kind, tuple(items), payload))
    row = bq.batch(call.engine, UUID(result.batch_id))
    assert row is not None
    return json_response(batch_dto(row))


def delete_instances(call: Call) -> Response:
    """Camunda's asynchronous deletion: the instances are cancelled, one item each.
    `deleteReason`, `skipCustomListeners`, `skipSubprocesses` and `skipIoMappings` are accepted;
    Interlock has no listeners or I/O mappings to skip on cancellation."""
    reason = call.body_text("deleteReason")
    for flag in ("skipCustomListeners", "skipSubprocesses", "skipIoMappings", "failIfNotExists"):
        call.body_flag(flag)
    items = _instance_ids(call)
    payload = {"deleteReason": reason} if reason else {}
    return _create(
        call,
        BatchType.CANCEL_INSTANCES,
        items,
        payload,
        "processInstanceIds is empty",
    )


def delete_history(call: Call) -> Response:
    """Camunda's asynchronous deletion of historic instances (administrators): each ended root
    named in `historicProcessInstanceIds` is deleted with everything it called, as the history
    cleanup deletes a family past its time to live. `historicProcessInstanceQuery` is not
    supported: name the instances."""
    if call.field("historicProcessInstanceQuery") is not None:
        raise invalid_request(
            "'historicProcessInstanceQuery' is not supported: name the instances in "
            "historicProcessInstanceIds"
        )
    reason = call.body_text("deleteReason")
    call.body_flag("failIfNotExists")
    items = _ids(call, "historicProcessInstanceIds")
    payload = {"deleteReason": reason} if reason else {}
    return _create(
        call, BatchType.DELETE_HISTORY, items, payload, "historicProcessInstanceIds is empty"
    )


def _retries(call: Call) -> int:
    retries = call.body_int("retries")
    if retries is None or retries < 0:
        raise invalid_request("The number of retries cannot be negative or null.")
    return retries


def _retries_batch(
    call: Call,
    type_: BatchType,
    ids: str,
    query: str,
    answer: Callable[[Any], Any],
    of_instances: Callable[..., Any],
    empty: str,
) -> Response:
    """A batch setting retries of the rows named in `ids`, those `query` finds (`answer` runs
    it), and those of the instances named or found (`of_instances` reads them)."""
    retries = _retries(call)
    items = _ids(call, ids)
    queried = _queried(call, query)
    if queried is not None:
        items += [str(row.id) for row in listed(answer(queried))]
    instances = _instance_ids(call)
    if instances:
        rows = of_instances(
            call.engine,
            CamundaPage(),
            call.engine.clock(),
            instance_ids=[UUID(i) for i in instances],
        )
        items += [str(row.id) for row in listed(rows)]
    return _create(call, type_, items, {"retries": retries}, empty)


def job_retries(call: Call) -> Response:
    """Camunda's POST /job/retries: the jobs named, those `jobQuery` finds, and those of the
    instances named or found by `processInstanceQuery`."""
    return _retries_batch(
        call,
        BatchType.SET_JOB_RETRIES,
        "jobIds",
        "jobQuery",
        job_rest._query,
        job_reads.jobs,
        "job ids are empty",
    )


def external_task_retries(call: Call) -> Response:
    """Camunda's POST /external-task/retries-async: the tasks named, those
    `externalTaskQuery` finds, and those of the instances named or found."""
    return _retries_batch(
        call,
        BatchType.SET_EXTERNAL_TASK_RETRIES,
        "externalTaskIds",
        "externalTaskQuery",
        external_task_rest._query,
        external_task_reads.external_tasks,
        "externalTaskIds is empty",
    )


endpoints = [
    Endpoint("/batch", "GET", list_batches),
    Endpoint("/batch/count", "GET", count_batches),
    Endpoint("/batch/statistics", "GET", statistics),
    Endpoint("/batch/statistics/count", "GET", count_batches),
    Endpoint("/batch/{id}", "GET", get_batch),
    Endpoint("/batch/{id}/suspended", "PUT", suspend, body="json"),
    Endpoint("/batch/{id}", "DELETE", cancel),
    Endpoint("/history/batch", "GET", list_historic_batches),
    Endpoint("/history/batch/count", "GET", count_historic_batches),
    Endpoint("/history/batch/{id}", "GET", get_historic_batch),
    Endpoint("/process-instance/delete", "POST", delete_instances, body="json"),
    Endpoint("/history/process-instance/delete", "POST", delete_history, body="json"),
    Endpoint("/job/retries", "POST", job_retries, body="json"),
    Endpoint(
        "/external-task/retries-async",
        "POST",
        external_task_retries,
        body="json",
    ),
]
