"""Camunda's statistics: per process definition, per activity of one, the history per activity,
and the definitions a definition's call activities name statically."""

from __future__ import annotations

from starlette.responses import Response

from app import reads
from app.camunda import dto
from app.camunda.dto import Json
from app.camunda.errors import invalid_request, rest_error
from app.camunda.http import Call, Endpoint, json_response
from engine.errors import NotFound
from engine.model import CallActivity, EndEvent
from engine.queries import definitions as definition_reads
from engine.queries.camunda import statistics as statistics_reads
from engine.queries.camunda.statistics import Counts, Incidents
from engine.queries.definitions import DefinitionRow

_DTO = "org.camunda.bpm.engine.rest.dto.repository."

# Historic statistics' filters that select instances: the summary rows count every instance.
_INSTANCE_FILTERS = (
    "startedBefore",
    "startedAfter",
    "finishedBefore",
    "finishedAfter",
    "processInstanceIdIn",
)


def _definition(call: Call) -> DefinitionRow:
    definition_id = call.path["id"]
    try:
        return reads.definition(call.engine, definition_id)
    except NotFound:
        raise rest_error(404, f"No matching definition with id {definition_id}") from None


# Camunda's names of the statistics' query parameters, as its refusals name them.
_JAVA_NAMES = {
    "incidents": "includeIncidents",
    "rootIncidents": "includeRootIncidents",
    "incidentsForType": "includeIncidentsForType",
}
# The pairs that may not be given together (whatever their values), in Camunda's order.
_EXCLUSIVE = (
    ("incidents", "incidentsForType"),
    ("incidents", "rootIncidents"),
    ("rootIncidents", "incidentsForType"),
)


def _incidents(call: Call, *, roots: bool) -> Incidents:
    """Which incidents to count: `incidents=true`, `rootIncidents=true` (every incident is its
    own root cause here: none is raised on a caller for its called instance's) or
    `incidentsForType`; any two given together are refused as Camunda refuses them."""
    for first, second in _EXCLUSIVE if roots else _EXCLUSIVE[:1]:
        if call.text(first) is not None and call.text(second) is not None:
            raise invalid_request(
                f"Only one of the query parameter {_JAVA_NAMES[first]} or "
                f"{_JAVA_NAMES[second]} can be set."
            )
    included = bool(call.flag("incidents"))
    if roots:
        included = bool(call.flag("rootIncidents")) or included
    incident_type = call.text("incidentsForType")
    if incident_type is not None:
        return Incidents(True, incident_type)
    return Incidents(included)


def _counts(kind: str, identifier: str, counts: Counts) -> Json:
    return {
        "@class": _DTO + kind,
        "id": identifier,
        "instances": counts.instances,
        "failedJobs": counts.failed_jobs,
        "incidents": [
            {"incidentType": kind, "incidentCount": count}
            for kind, count in sorted(counts.incidents.items())
        ],
    }


def definition_statistics(call: Call) -> Response:
    which = _incidents(call, roots=True)
    failed_jobs = bool(call.flag("failedJobs"))
    counted = statistics_reads.definitions(call.engine, failed_jobs, which)
    # Every definition the principal may read, as Camunda lists those with no instances too.
    results = []
    for row in definition_reads.list_all(call.engine):
        found = counted.get(row.id, Counts())
        entry = _counts("ProcessDefinitionStatisticsResultDto", row.id, found)
        entry["definition"] = dto.process_definition(row)
        results.append(entry)
    return json_response(results)


def activity_statistics(call: Call) -> Response:
    which = _incidents(call, roots=False)
    failed_jobs = bool(call.flag("failedJobs"))
    row = _definition(call)
    counted = statistics_reads.activities(call.engine, row.id, failed_jobs, which)
    return json_response(
        [_counts("ActivityStatisticsResultDto", node, c) for node, c in counted.items()]
    )


def historic_activity_statistics(call: Call) -> Response:
    for name in _INSTANCE_FILTERS:
        if call.text(name) is not None:
            raise invalid_request(
                f"Parameter '{name}' is not supported: the statistics count every instance"
            )
    canceled = bool(call.flag("canceled"))
    finished = bool(call.flag("finished"))
    complete_scope = bool(call.flag("completeScope"))
    incidents = bool(call.flag("incidents"))
    page = call.page({"activityId": "activityId"})
    row = _definition(call)
    model = reads.model(call.engine, row.id, row.key)
    end_events = frozenset(n.id for n in model.nodes if isinstance(n, EndEvent))
    counted = statistics_reads.history(
        call.engine, row.id, end_events=end_events, canceled=canceled, incidents=incidents
    )
    results: list[Json] = []
    for node, c in counted.items():
        entry = {
            "id": node,
            "instances": c.instances,
            "canceled": c.canceled if canceled else 0,
            "finished": c.finished if finished else 0,
            "completeScope": c.complete_scope if complete_scope else 0,
            "openIncidents": c.open_incidents if incidents else 0,
            "resolvedIncidents": c.resolved_incidents if incidents else 0,
            "deletedIncidents": 0,
        }
        # As Camunda's: an activity is listed when a counted value of it is not zero.
        if any(entry[k] for k in entry if k != "id"):
            results.append(entry)
    if page.sort and page.sort[0][1]:
        results.reverse()
    return json_response(results)


def static_called_definitions(call: Call) -> Response:
    row = _definition(call)
    model = reads.model(call.engine, row.id, row.key)
    calls = [node for node in model.nodes if isinstance(node, CallActivity)]
    results = []
    for found, activity_ids in statistics_reads.called_definitions(call.engine, row, calls):
        entry = dto.process_definition(found)
        entry["calledFromActivityIds"] = activity_ids
        entry["callingProcessDefinitionId"] = row.id
        results.append(entry)
    return json_response(results)


endpoints = [
    Endpoint("/process-definition/statistics", "GET", definition_statistics),
    Endpoint("/process-definition/{id}/statistics", "GET", activity_statistics),
    Endpoint(
        "/process-definition/{id}/static-called-process-definitions",
        "GET",
        static_called_definitions,
    ),
    Endpoint(
        "/history/process-definition/{id}/statistics",
        "GET",
        historic_activity_statistics,
    ),
]
