"""The history cleanup: start it (Camunda's POST /history/cleanup), find its job, read its window.
The cleanup itself is engine/commands/cleanup.py."""

from __future__ import annotations

from starlette.responses import Response

from app.camunda import dto
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, json_response
from app.gates import Gate
from engine.commands.cleanup import CLEANUP_JOB_ID, StartHistoryCleanup
from engine.queries.camunda import jobs as job_reads
from engine.queries.camunda.common import CamundaPage


def _job(call: Call) -> job_reads.JobRow | None:
    rows = job_reads.jobs(call.engine, CamundaPage(), call.engine.clock(), job_id=CLEANUP_JOB_ID)
    assert isinstance(rows, list)
    return rows[0] if rows else None


def start(call: Call) -> Response:
    """`immediatelyDue` (default true): due now, and the run goes on until nothing is left past
    its time; false: due at the next start of the daily window."""
    immediately = call.flag("immediatelyDue")
    call.engine.run(StartHistoryCleanup(immediately_due=immediately is not False))
    row = _job(call)
    if row is None:  # finished and gone in the meantime (no window is set)
        raise invalid_request("The history cleanup already finished", 404)
    return json_response(dto.job(row))


def find_job(call: Call) -> Response:
    row = _job(call)
    if row is None:
        raise invalid_request("History cleanup job does not exist", 404)
    return json_response(dto.job(row))


def find_jobs(call: Call) -> Response:
    row = _job(call)
    return json_response([dto.job(row)] if row else [])


def configuration(call: Call) -> Response:
    """The current or next window (UTC), and whether the cleanup runs by itself at all."""
    window = call.engine.executor.settings.retention.window
    if window is None:
        return json_response(
            {"batchWindowStartTime": None, "batchWindowEndTime": None, "enabled": False}
        )
    begins, ends = window.span(call.engine.clock())
    return json_response(
        {
            "batchWindowStartTime": dto.format_date(begins),
            "batchWindowEndTime": dto.format_date(ends),
            "enabled": True,
        }
    )


endpoints = [
    Endpoint("/history/cleanup", "POST", start),
    Endpoint("/history/cleanup/job", "GET", find_job, gate=Gate.APPLICATION),
    Endpoint("/history/cleanup/jobs", "GET", find_jobs, gate=Gate.APPLICATION),
    Endpoint("/history/cleanup/configuration", "GET", configuration, gate=Gate.APPLICATION),
]
