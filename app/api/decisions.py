"""Decisions: list the deployed decision definitions, read one, evaluate one directly, and page
through the decision evaluations (direct ones and business rule tasks'), newest first.

An evaluation answers as the history keeps it: its inputs, the outputs of the rules that matched
and its result, every value as JSON holds it (dates as ISO text)."""

from __future__ import annotations

from functools import partial
from typing import Any
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response

from app.api import schemas, views
from app.api.body import Body
from app.api.http import Op, Param, Reply, call, engine_of, path_text, reply, run
from app.api.paging import PAGE_PARAMS, listed
from app.api.schemas import INTEGER, STRING, VARIABLES_IN, ref, request
from app.params import Query
from engine.commands.decisions import DecisionEvaluated, EvaluateDecision
from engine.errors import NotFound
from engine.queries import decision_history as dh
from engine.queries import decisions as decision_reads

EVALUATE_BODY = request({"variables": VARIABLES_IN, "version": INTEGER, "version_tag": STRING})


def evaluation(row: dh.EvaluationRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "root_id": views.ident(row.root_id),
        "definition_id": row.definition_id,
        "key": row.decision_key,
        "name": row.definition_name,
        "version": row.definition_version,
        "evaluated_at": views.iso(row.evaluated_at),
        "instance_id": views.ident(row.instance_id),
        "process_definition_id": row.process_definition_id,
        "node_id": row.node_id,
        "user_id": row.user_id,
        "inputs": row.inputs,
        "outputs": row.outputs,
        "result": row.result,
        "collect_value": row.collect_value,
    }


async def list_decisions(request: Request) -> Response:
    query = Query(request.query_params)
    rows = await call(decision_reads.list_all, engine_of(request), query.text("key"))
    return reply(views.items([views.definition(row) for row in rows]))


async def get_decision(request: Request) -> Response:
    definition_id = path_text(request, "id")
    row = await call(decision_reads.by_id, engine_of(request), definition_id)
    if row is None:
        raise NotFound(f"decision definition {definition_id} does not exist")
    return reply(views.definition(row))


async def evaluate(request: Request) -> Response:
    body = await Body.read(request, EVALUATE_BODY)
    variables = {name: value.value for name, value in body.variables().items()}
    command = EvaluateDecision(
        variables,
        key=path_text(request, "key"),
        # Versions count from 1: absent reads as 0, the latest.
        version=body.integer("version", 0, minimum=1) or None,
        version_tag=body.text("version_tag"),
    )
    result: DecisionEvaluated = await run(request, command)
    # The command's own evaluation, whatever the caller may read of the history.
    row = await call(dh.evaluated, engine_of(request), UUID(result.evaluation_id))
    if row is None:
        raise NotFound(f"decision evaluation {result.evaluation_id} does not exist")
    return reply(evaluation(row))


async def list_evaluations(request: Request) -> Response:
    query = Query(request.query_params)
    found = dh.EvaluationFilter(
        key=query.text("key"),
        definition_id=query.text("definition_id"),
        instance_id=query.uuid("instance_id"),
    )
    fetch = partial(dh.evaluations_after, engine_of(request), found)
    return await listed(query, fetch, lambda row: (row.evaluated_at, row.id), evaluation)


operations = [
    Op(
        "GET",
        "/decisions",
        list_decisions,
        "List decision definitions, every version, ordered by key and version",
        query=(Param("key", STRING, "only this decision key"),),
        replies={200: Reply("The decision definitions", ref("DecisionList"))},
    ),
    Op(
        "GET",
        "/decisions/{id}",
        get_decision,
        "One decision definition",
        replies={200: Reply("The decision definition", ref("Decision"))},
    ),
    Op(
        "POST",
        "/decisions/{key}/evaluate",
        evaluate,
        "Evaluate the latest version of a decision (or `version`, or the latest with "
        "`version_tag`) over the variables; the evaluation is kept in the history",
        body=EVALUATE_BODY,
        replies={200: Reply("The evaluation and its result", ref("DecisionEvaluation"))},
    ),
    Op(
        "GET",
        "/decision-evaluations",
        list_evaluations,
        "Page through decision evaluations, newest first",
        query=(
            Param("key", STRING, "only evaluations of this decision key"),
            Param("definition_id", STRING, "only evaluations of this decision definition"),
            Param("instance_id", schemas.UUID, "only evaluations by this process instance"),
            *PAGE_PARAMS,
        ),
        replies={200: Reply("A page of evaluations", ref("DecisionEvaluationPage"))},
    ),
]
