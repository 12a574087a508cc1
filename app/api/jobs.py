"""Jobs: timers, asynchronous continuations and retries waiting to run."""

from __future__ import annotations

from functools import partial

from starlette.requests import Request
from starlette.responses import Response

from app import reads
from app.api import views
from app.api.body import Body
from app.api.http import (
    Answer,
    Op,
    Param,
    Reply,
    call,
    engine_of,
    get_one,
    idempotency,
    on_one,
    path_id,
)
from app.api.paging import PAGE_PARAMS, listed
from app.api.schemas import BOOLEAN, NO_BODY, RETRIES_BODY, STRING, ref
from app.params import Query
from engine.commands.job_retries import JobResult, SetJobRetries
from engine.commands.jobs import ExecuteJob
from engine.errors import Conflict, NotFound
from engine.queries import work
from engine.states import JobOutcome


async def list_jobs(request: Request) -> Response:
    query = Query(request.query_params)
    fetch = partial(
        work.jobs,
        engine_of(request),
        instance_id=query.uuid("instance_id"),
        with_retries_left=query.flag("with_retries_left", digits=True),
    )
    return await listed(query, fetch, lambda j: (j.due_at, j.id), views.job)


RESULT = Answer[JobResult](
    {"job_id": "job_id", "outcome": "outcome", "instance_id": "instance_id"},
    "JobResult",
    "What happened to the job",
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
    return RESULT.respond(request, result)


operations = [
    Op(
        "GET",
        "/jobs",
        list_jobs,
        "Query jobs, earliest due first, with keyset pagination",
        query=(
            Param("instance_id", STRING),
            Param("with_retries_left", BOOLEAN, "false: the jobs that stopped with an incident"),
            *PAGE_PARAMS,
        ),
        replies={200: Reply("A page of jobs, earliest due first", ref("JobPage"))},
    ),
    get_one(__name__, "get_job", "/jobs/{id}", "One job", reads.job, views.job, "Job", "The job"),
    Op(
        "POST",
        "/jobs/{id}/execute",
        execute,
        "Execute the job now; `outcome` is executed or failed (its retries count down)",
        body=NO_BODY,
        replies=RESULT.replies,
    ),
    on_one(
        __name__,
        "set_retries",
        "/jobs/{id}/retries",
        "Set the job's retries; above zero a failed job runs again and its incident resolves",
        RETRIES_BODY,
        lambda request, body: SetJobRetries(
            path_id(request), body.integer("retries", 0, minimum=0)
        ),
        RESULT,
        body_required=True,
    ),
]
