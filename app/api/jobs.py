"""Jobs: timers, asynchronous continuations and retries waiting to run."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from app.api import views
from app.api.body import Body
from app.api.http import (
    Op,
    Param,
    Reply,
    call,
    engine_of,
    idempotency,
    path_id,
    reply,
    run,
    same_target,
)
from app.api.paging import PAGE_PARAMS, page
from app.api.schemas import BOOLEAN, INTEGER, STRING, ref, request
from app.params import Query
from engine.commands.job_retries import JobResult, SetJobRetries
from engine.commands.jobs import ExecuteJob
from engine.errors import Conflict, NotFound
from engine.identity.accounts import Role
from engine.states import JobOutcome

NO_BODY = request({})
RETRIES_BODY = request({"retries": INTEGER}, required=("retries",))


async def list_jobs(request: Request) -> Response:
    query = Query(request.query_params)
    engine = engine_of(request)
    instance_id = query.uuid("instance_id")
    with_retries_left = query.flag("with_retries_left", digits=True)
    found = await page(
        query,
        lambda limit, after: engine.jobs(instance_id, with_retries_left, limit=limit, after=after),
        lambda j: (j.due_at, j.id),
    )
    return reply(views.items([views.job(j) for j in found.items], found.next))


async def get_job(request: Request) -> Response:
    return reply(views.job(await call(engine_of(request).job, path_id(request))))


def _result(request: Request, result: JobResult) -> Response:
    same_target(request, str(path_id(request)), result.job_id)
    return reply(
        {"job_id": result.job_id, "outcome": result.outcome, "instance_id": result.instance_id}
    )


async def execute(request: Request) -> Response:
    """Run the job now, due or not, as an executor would: a failure counts down its retries."""
    await Body.read(request, NO_BODY)
    job_id = path_id(request)
    key = await idempotency(request, ExecuteJob(job_id))
    result = await call(engine_of(request).run_job, job_id, idempotency_key=key)
    if result.outcome == JobOutcome.GONE:
        raise NotFound(f"job {job_id} does not exist", job_id=str(job_id))
    if result.outcome == JobOutcome.INSTANCE_NOT_ACTIVE:
        raise Conflict(
            f"job {job_id} belongs to an instance that is not active (suspended?)",
            job_id=str(job_id),
        )
    return _result(request, result)


async def set_retries(request: Request) -> Response:
    body = await Body.read(request, RETRIES_BODY)
    command = SetJobRetries(path_id(request), body.integer("retries", 0, minimum=0))
    return _result(request, await run(request, command))


_RESULT = {200: Reply("What happened to the job", ref("JobResult"))}

operations = [
    Op(
        "GET",
        "/jobs",
        list_jobs,
        "Query jobs, earliest due first, with keyset pagination",
        Role.VIEWER,
        query=(
            Param("instance_id", STRING),
            Param("with_retries_left", BOOLEAN, "false: the jobs that stopped with an incident"),
            *PAGE_PARAMS,
        ),
        replies={200: Reply("A page of jobs, earliest due first", ref("JobPage"))},
    ),
    Op(
        "GET",
        "/jobs/{id}",
        get_job,
        "One job",
        Role.VIEWER,
        replies={200: Reply("The job", ref("Job"))},
    ),
    Op(
        "POST",
        "/jobs/{id}/execute",
        execute,
        "Execute the job now; `outcome` is executed or failed (its retries count down)",
        Role.OPERATOR,
        body=NO_BODY,
        replies=_RESULT,
    ),
    Op(
        "POST",
        "/jobs/{id}/retries",
        set_retries,
        "Set the job's retries; above zero a failed job runs again and its incident resolves",
        Role.OPERATOR,
        body=RETRIES_BODY,
        body_required=True,
        replies=_RESULT,
    ),
]
