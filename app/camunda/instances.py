"""Process instances: query, read, cancel, variables, the activity instance tree, and history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast
from uuid import UUID

from starlette.responses import Response

from app import reads
from app.camunda import dto
from app.camunda.dto import Json
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, json_response, listed, listing, no_content
from app.camunda.query_body import posted_page, posted_query, query_variables
from app.camunda.variables import dto_map, stored_to_dto, to_typed, to_typed_map, wants_serialized
from app.params import as_uuid
from engine.api import Engine
from engine.commands.instances import CancelInstance, SetVariables
from engine.errors import BadRequest, Conflict, ExpressionError, InstanceEnded, NotFound
from engine.language.variables import TypedValue
from engine.model import (
    MULTI_INSTANCE_BODY,
    ProcessModel,
    StandardLoop,
)
from engine.queries import instances as queries
from engine.queries import summaries as summary_reads
from engine.queries import work
from engine.queries.camunda import activities as activity_reads
from engine.queries.camunda import instances as instance_reads
from engine.queries.camunda.common import RUNNING_STATES, CamundaPage
from engine.states import InstanceState, TokenState


def _instance_query(call: Call, *, count: bool) -> list[instance_reads.InstanceRow] | int:
    suspended = call.flag_unless("suspended", "active")
    ids = call.csv("processInstanceIds")
    return instance_reads.process_instances(
        call.engine,
        posted_page(call, instance_reads.INSTANCE_SORT),
        ids=[as_uuid(i) for i in ids] if ids is not None else None,
        business_key=call.text("businessKey"),
        business_key_like=call.text("businessKeyLike"),
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        definition_keys=call.csv("processDefinitionKeyIn"),
        suspended=suspended,
        with_incident=call.flag("withIncident"),
        tenant_ids=call.csv("tenantIdIn"),
        without_tenant=call.flag("withoutTenantId"),
        variables=query_variables(call, "variables"),
        family=instance_reads.FamilyFilter(
            super_instance=call.uuid("superProcessInstance"),
            sub_instance=call.uuid("subProcessInstance"),
            root_instance=call.uuid("rootProcessInstanceId"),
            roots_only=call.flag("rootProcessInstances") or None,
            leaves_only=call.flag("leafProcessInstances"),
        ),
        count=count,
    )


def _posted_instances(call: Call) -> Call:
    """POST /process-instance's call read as GET /process-instance's."""
    return posted_query(call, ("variables",), instance_reads.INSTANCE_SORT)


def post_instances(call: Call) -> Response:
    posted = _posted_instances(call)
    rows = cast(list[instance_reads.InstanceRow], _instance_query(posted, count=False))
    return json_response(_instances_shown(posted, listed(rows)))


def post_instance_count(call: Call) -> Response:
    return json_response({"count": _instance_query(_posted_instances(call), count=True)})


def _instances_shown(call: Call, rows: list[instance_reads.InstanceRow]) -> list[Json]:
    return [dto.instance_from_row(call.base, row) for row in rows]


# The filters a count of running instances is served with from the summary rows (any other
# filter: the query over the instances).
SUMMARY_INSTANCE_FILTERS = frozenset(
    {"processDefinitionId", "processDefinitionKey", "processDefinitionKeyIn", "suspended", "active"}
)


def _count_instances(call: Call) -> int:
    if set(call.query.keys()) <= SUMMARY_INSTANCE_FILTERS:
        suspended = call.flag_unless("suspended", "active")
        states = [
            state
            for state in RUNNING_STATES
            if suspended is None or (state == InstanceState.SUSPENDED) == suspended
        ]
        return _summary_count(call, states)
    return cast(int, _instance_query(call, count=True))


def _summary_count(call: Call, states: list[str]) -> int:
    """Instances in `states` of the definitions the call's definition filters name, from the
    summary rows."""
    return summary_reads.instance_count(
        call.engine,
        states,
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        definition_keys=call.csv("processDefinitionKeyIn"),
    )


def _running(call: Call) -> queries.InstanceInfo:
    """The instance of the path, while it runs (Camunda's runtime forgets ended instances)."""
    instance_id = call.path["id"]
    info = queries.instance(call.engine, as_uuid(instance_id))
    if info is None or info.state in (InstanceState.COMPLETED, InstanceState.TERMINATED):
        raise invalid_request(f"Process instance with id {instance_id} does not exist", 404)
    return info


def known_instance(call: Call) -> queries.InstanceInfo:
    instance_id = call.path["id"]
    info = queries.instance(call.engine, as_uuid(instance_id))
    if info is None:
        raise invalid_request(f"Process instance with id {instance_id} does not exist", 404)
    return info


def get_instance(call: Call) -> Response:
    return json_response(dto.instance_from_info(call.base, _running(call)))


def delete_instance(call: Call) -> Response:
    """Cancel a running instance. One the caller may not read is not refused as missing: the
    command decides (Camunda's AuthorizationException unless they may delete it)."""
    instance_id = as_uuid(call.path["id"])
    info = queries.instance(call.engine, instance_id)
    if info is not None and info.state in (InstanceState.COMPLETED, InstanceState.TERMINATED):
        raise invalid_request(f"Process instance with id {instance_id} does not exist", 404)
    try:
        call.engine.run(CancelInstance(instance_id))
    except (NotFound, Conflict) as exc:
        message = f"Process instance with id {instance_id} does not exist"
        raise invalid_request(message, 404) from exc
    return no_content()


def instance_variables(call: Call) -> Response:
    info = known_instance(call)
    values = reads.typed_variables(call.engine, info.id)
    return json_response(dto_map(values, serialized=wants_serialized(call)))


def instance_variable(call: Call) -> Response:
    info = known_instance(call)
    name = call.path["name"]
    rows = queries.variables(call.engine, info.id)
    for found, type_name, value in rows:
        if found == name:
            return json_response(stored_to_dto(type_name, value, serialized=wants_serialized(call)))
    raise invalid_request(f"process instance variable with name {name} does not exist", 404)


def set_instance_variables(
    call: Call, modifications: dict[str, TypedValue], deletions: list[str]
) -> Response:
    """Set, then delete, root-scope variables of a running instance in one command, which
    loads the instance; the conditional events the changes reach are evaluated in it. An
    instance that has ended is one Camunda's runtime does not know."""
    path_id = call.path["id"]
    instance_id = as_uuid(path_id)
    try:
        call.engine.run(SetVariables(instance_id, modifications, tuple(deletions)))
    except (NotFound, InstanceEnded) as exc:
        raise invalid_request(f"Process instance with id {path_id} does not exist", 404) from exc
    except (BadRequest, Conflict, ExpressionError) as exc:
        message = f"Cannot modify variables for process instance {instance_id}: {exc.message}"
        raise invalid_request(message) from exc
    return no_content()


def modify_instance_variables(call: Call) -> Response:
    modifications = to_typed_map(call.field("modifications"), "modifications")
    deletions = call.field("deletions") or []
    if not isinstance(deletions, list) or not all(isinstance(d, str) for d in deletions):
        raise invalid_request("'deletions' must be an array of variable names")
    return set_instance_variables(call, dict(modifications), deletions)


def put_instance_variable(call: Call) -> Response:
    name = call.path["name"]
    return set_instance_variables(call, {name: to_typed(name, call.body)}, [])


def delete_instance_variable(call: Call) -> Response:
    return set_instance_variables(call, {}, [call.path["name"]])


# -- activity instances ---------------------------------------------------------------------------


def activity_tree(call: Call) -> Response:
    info = _running(call)
    engine = call.engine
    tokens = activity_reads.live_tokens(engine, info.id)
    model = reads.model(engine, info.definition_id, info.definition_key)
    incidents: dict[UUID, list[str]] = {}
    for incident in work.incidents(engine, instance_id=info.id):
        if incident.token_id is not None:
            incidents.setdefault(incident.token_id, []).append(str(incident.id))
    root_id = str(info.id)
    root: Json = {
        "id": root_id,
        "parentActivityInstanceId": None,
        "activityId": info.definition_id,
        "activityType": "processDefinition",
        "processInstanceId": root_id,
        "processDefinitionId": info.definition_id,
        "childActivityInstances": [],
        "childTransitionInstances": [],
        "executionIds": [root_id],
        "activityName": model.name or model.key,
        "incidentIds": [],
        "incidents": [],
        "name": model.name or model.key,
    }
    nodes: dict[UUID, Json] = {}
    pending: list[tuple[activity_reads.LiveToken, Json]] = []
    by_id = {token.id: token for token in tokens}
    # A standard loop's host stands for no activity instance: its iterations take its place.
    hidden: dict[UUID, UUID | None] = {}
    # A token waiting at a join is an activity instance of the gateway in its scope (an
    # iteration's, for a join inside a multi-instance body), as Camunda shows an execution there.
    for token in tokens:
        node = _node(model, token.node_id)
        scope = by_id.get(token.scope_id) if token.scope_id is not None else None
        host = node is not None and node.loop is not None
        host = host and (scope is None or scope.node_id != token.node_id)
        if host and isinstance(node.loop, StandardLoop):
            hidden[token.id] = token.scope_id
            continue
        entry = _activity_entry(token, model, info, incidents.get(token.id, []))
        if host:
            entry["activityId"] = dto.body_id(token.node_id)
            entry["activityType"] = MULTI_INSTANCE_BODY
        if "childActivityInstances" in entry:
            nodes[token.id] = entry
        pending.append((token, entry))
    for token, entry in pending:
        scope_id = token.scope_id
        while scope_id in hidden:
            scope_id = hidden[scope_id]
        parent = nodes.get(scope_id) if scope_id is not None else None
        target = parent if parent is not None else root
        entry["parentActivityInstanceId"] = target["id"]
        for incident in entry["incidents"]:
            incident["parentActivityInstanceId"] = entry["id"]
        key = (
            "childActivityInstances"
            if "childActivityInstances" in entry
            else ("childTransitionInstances")
        )
        target[key].append(entry)
    return json_response(root)


def _node(model: ProcessModel, node_id: str) -> Any:
    return model.node(node_id) if model.has_node(node_id) else None


def _activity_name(token: activity_reads.LiveToken, node: Any) -> str | None:
    """The name the token's open visit shows (a `${...}` name as evaluated), else the node's."""
    if token.visit_id is not None and token.visit_name is not None:
        return token.visit_name
    return node.name if node is not None else None


def _activity_entry(
    token: activity_reads.LiveToken,
    model: ProcessModel,
    info: queries.InstanceInfo,
    incident_ids: list[str],
) -> Json:
    node = _node(model, token.node_id)
    common: Json = {
        "id": str(token.visit_id or token.id),
        "parentActivityInstanceId": None,
        "activityId": token.node_id,
        "activityType": dto.activity_type(node) if node is not None else token.node_id,
        "processInstanceId": str(info.id),
        "processDefinitionId": info.definition_id,
        "activityName": _activity_name(token, node),
        "incidentIds": incident_ids,
        "incidents": [{"id": i, "parentActivityInstanceId": None} for i in incident_ids],
    }
    if token.state == TokenState.READY:
        return {**common, "executionId": str(token.id), "targetActivityId": token.node_id}
    return {
        **common,
        "childActivityInstances": [],
        "childTransitionInstances": [],
        "executionIds": [str(token.id)],
        "name": common["activityName"],
    }


# -- history --------------------------------------------------------------------------------------


def historic_instance(call: Call) -> Response:
    instance_id = call.path["id"]
    row = instance_reads.historic_instance(call.engine, as_uuid(instance_id))
    if row is None:
        raise invalid_request(
            f"Historic process instance with id {instance_id} does not exist", 404
        )
    return json_response(dto.historic_process_instance(row))


def _historic_query(call: Call, *, count: bool) -> list[instance_reads.HistoricInstanceRow] | int:
    ids = call.uuids("processInstanceIds")
    states = _historic_states(call)
    return instance_reads.historic_instances(
        call.engine,
        call.page(instance_reads.HISTORIC_INSTANCE_SORT),
        instance_id=call.uuid("processInstanceId"),
        ids=ids,
        business_key=call.text("processInstanceBusinessKey"),
        business_key_like=call.text("processInstanceBusinessKeyLike"),
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        definition_keys=call.csv("processDefinitionKeyIn"),
        finished=call.flag_unless("finished", "unfinished"),
        tenant_ids=call.csv("tenantIdIn"),
        without_tenant=call.flag("withoutTenantId"),
        states=states or None,
        terminated_internally=_terminated_internally(call),
        with_incidents=call.flag("withIncidents"),
        started_before=call.date("startedBefore"),
        started_after=call.date("startedAfter"),
        finished_before=call.date("finishedBefore"),
        finished_after=call.date("finishedAfter"),
        family=instance_reads.FamilyFilter(
            super_instance=call.uuid("superProcessInstanceId"),
            sub_instance=call.uuid("subProcessInstanceId"),
            root_instance=call.uuid("rootProcessInstanceId"),
            roots_only=call.flag("rootProcessInstances") or None,
        ),
        count=count,
    )


# The filters of a historic instance count that the summary rows answer: definitions, and
# states (an instance has ended exactly when its state is final).
SUMMARY_HISTORIC_FILTERS = frozenset(
    {
        "processDefinitionId",
        "processDefinitionKey",
        "processDefinitionKeyIn",
        "finished",
        "unfinished",
        # The summary rows count Terminated instances together, however they were terminated.
        *(
            flag
            for flag in instance_reads.HISTORIC_STATE_FILTERS
            if flag not in ("externallyTerminated", "internallyTerminated")
        ),
    }
)


def _count_historic_instances(call: Call) -> int:
    if set(call.query.keys()) <= SUMMARY_HISTORIC_FILTERS:
        finished = call.flag_unless("finished", "unfinished")
        wanted = _historic_states(call)
        states: list[str] = [
            state
            for state in InstanceState
            if (finished is None or state.is_final == finished) and (not wanted or state in wanted)
        ]
        return _summary_count(call, states)
    return cast(int, _historic_query(call, count=True))


def _terminated_internally(call: Call) -> bool | None:
    """Which Terminated instances the flags externallyTerminated and internallyTerminated ask
    for: those terminated internally (True), by a request (False), or both (None)."""
    externally, internally = call.flag("externallyTerminated"), call.flag("internallyTerminated")
    if bool(externally) == bool(internally):
        return None
    return bool(internally)


def _historic_states(call: Call) -> list[str]:
    """The states the call's state flags (active, suspended, completed, externallyTerminated,
    internallyTerminated) ask for together; none: any state."""
    return [
        state
        for flag, rows in instance_reads.HISTORIC_STATE_FILTERS.items()
        if call.flag(flag)
        for state in rows
    ]


# Visits read at a time when a page filters on what the model tells (activityType, completeScope).
ACTIVITY_BATCH = 1000


# Whether a historic activity instance of an activity type, completing its scope or not, is
# one a query asks for: its filters that only the model can tell.
ModelCheck = Callable[[str, bool], bool]


def _activity_reader(call: Call) -> tuple[CamundaPage, Callable[..., Any], list[ModelCheck]]:
    """The page a historic activity query asks for, a reader of its SQL filters (a page of
    rows; their count with `count=True`; their counts per node with `per_node=True`), and the
    checks only the model can tell."""
    engine = call.engine
    page = call.page(activity_reads.ACTIVITY_SORT)
    wanted_type = call.text("activityType")
    node_types = None
    if wanted_type is not None:
        node_types = [dto.NODE_KINDS_OF_TYPE.get(wanted_type, "")]
    activity_id = call.text("activityId")
    if activity_id is not None and activity_id.endswith(f"#{MULTI_INSTANCE_BODY}"):
        activity_id = activity_id.removesuffix(f"#{MULTI_INSTANCE_BODY}")
        node_types = [MULTI_INSTANCE_BODY]
    finished = call.flag_unless("finished", "unfinished")
    complete_scope = call.flag("completeScope")
    activity_instance_id = call.uuid("activityInstanceId")
    instance_id = call.uuid("processInstanceId")
    definition_id = call.text("processDefinitionId")
    execution_id = call.uuid("executionId")
    activity_name = call.text("activityName")
    activity_name_like = call.text("activityNameLike")
    tenant_ids, without_tenant = call.csv("tenantIdIn"), call.flag("withoutTenantId")
    assignee = call.text("taskAssignee")
    canceled = call.flag("canceled")
    started_before, started_after = call.date("startedBefore"), call.date("startedAfter")
    finished_before, finished_after = call.date("finishedBefore"), call.date("finishedAfter")

    def fetch(page: CamundaPage, count: bool = False, per_node: bool = False) -> Any:
        return activity_reads.activity_instances(
            engine,
            page,
            count=count,
            per_node=per_node,
            activity_instance_id=activity_instance_id,
            instance_id=instance_id,
            definition_id=definition_id,
            execution_id=execution_id,
            activity_id=activity_id,
            activity_name=activity_name,
            activity_name_like=activity_name_like,
            node_types=node_types,
            assignee=assignee,
            finished=finished,
            canceled=canceled,
            started_before=started_before,
            started_after=started_after,
            finished_before=finished_before,
            finished_after=finished_after,
            tenant_ids=tenant_ids,
            without_tenant=without_tenant,
        )

    checks: list[ModelCheck] = []
    if wanted_type is not None:
        checks.append(lambda kind, _: kind == wanted_type)
    if complete_scope is not None:
        checks.append(lambda _, completes: completes == complete_scope)
    return page, fetch, checks


def _kept(checks: list[ModelCheck], kind: str, completes: bool) -> bool:
    return all(check(kind, completes) for check in checks)


def _activity_query(call: Call) -> list[Json]:
    engine = call.engine
    page, fetch, checks = _activity_reader(call)
    if not checks:
        return _activities(engine, fetch(page))
    # activityType and completeScope are told from the model, not from a column: read the rows
    # in batches in the page's order and stop once the page is full, so a page costs what it
    # shows rather than every visit the SQL filters let through.
    end = None if page.max is None else page.first + page.max
    shown: list[Json] = []
    first = 0
    while end is None or len(shown) < end:
        batch = fetch(CamundaPage(first=first, max=ACTIVITY_BATCH, sort=page.sort))
        assert isinstance(batch, list)
        shown.extend(
            e
            for e in _activities(engine, batch)
            if _kept(checks, e["activityType"], e["completeScope"])
        )
        if len(batch) < ACTIVITY_BATCH:
            break
        first += ACTIVITY_BATCH
    return shown[page.first : end]


def _activities(engine: Engine, rows: list[activity_reads.ActivityRow]) -> list[Json]:
    """Camunda's historic activity instances of `rows`."""
    keys = {row.definition_id: row.definition_key for row in rows}
    models = {found: reads.model(engine, found, key) for found, key in keys.items()}
    scopes = activity_reads.visits_of_tokens(
        engine, list({row.scope_token_id for row in rows if row.scope_token_id is not None})
    )
    parent_of = _parent_finder(models, scopes)
    return [
        dto.historic_activity_instance(row, models.get(row.definition_id), parent_of(row))
        for row in rows
    ]


def _parent_finder(
    models: dict[str, ProcessModel], scopes: list[activity_reads.ScopeVisit]
) -> Callable[[activity_reads.ActivityRow], str]:
    by_token: dict[UUID, list[activity_reads.ScopeVisit]] = {}
    for visit in scopes:
        by_token.setdefault(visit.token_id, []).append(visit)

    def parent(row: activity_reads.ActivityRow) -> str:
        model = models.get(row.definition_id)
        if row.scope_token_id is None or model is None or not model.has_node(row.node_id):
            return str(row.instance_id)
        scope_node = model.node(row.node_id).parent
        candidates = [
            v
            for v in by_token.get(row.scope_token_id, [])
            # An iteration's parent is its host's visit to the same node: the body.
            if v.node_id in (scope_node, row.node_id) and v.started_at <= row.started_at
        ]
        return str(candidates[-1].id) if candidates else str(row.instance_id)

    return parent


def historic_activities(call: Call) -> Response:
    return json_response(_activity_query(call))


# The filters a count of activity instances is served with from the summary rows.
SUMMARY_ACTIVITY_FILTERS = frozenset({"activityId", "processDefinitionId"})


def count_historic_activities(call: Call) -> Response:
    activity_id = call.text("activityId")
    if set(call.query.keys()) <= SUMMARY_ACTIVITY_FILTERS and not (activity_id or "").endswith(
        f"#{MULTI_INSTANCE_BODY}"
    ):
        counted = summary_reads.visit_count(
            call.engine, activity_id, call.text("processDefinitionId")
        )
        return json_response({"count": counted})
    page, fetch, checks = _activity_reader(call)
    if not checks:
        return json_response({"count": fetch(page, count=True)})
    # The activity type a node shows and whether it completes its scope come from the model:
    # the visits are counted per node, and the nodes told from their models.
    counted = 0
    models: dict[str, ProcessModel] = {}
    for group in fetch(page, per_node=True):
        model = models.get(group.definition_id)
        if model is None:
            model = reads.model(call.engine, group.definition_id, group.definition_key)
            models[group.definition_id] = model
        kind = dto.node_activity_type(model, group.node_id, group.node_type)
        if _kept(checks, kind, dto.complete_scope(kind, group.state)):
            counted += group.visits
    return json_response({"count": counted})


endpoints = [
    *listing("/process-instance", _instance_query, shown=_instances_shown, count=_count_instances),
    Endpoint("/process-instance", "POST", post_instances, body="json"),
    Endpoint("/process-instance/count", "POST", post_instance_count, body="json"),
    Endpoint("/process-instance/{id}", "GET", get_instance),
    Endpoint("/process-instance/{id}", "DELETE", delete_instance),
    Endpoint("/process-instance/{id}/variables", "GET", instance_variables),
    Endpoint(
        "/process-instance/{id}/variables",
        "POST",
        modify_instance_variables,
        body="json",
    ),
    Endpoint("/process-instance/{id}/variables/{name}", "GET", instance_variable),
    Endpoint(
        "/process-instance/{id}/variables/{name}",
        "PUT",
        put_instance_variable,
        body="json",
    ),
    Endpoint(
        "/process-instance/{id}/variables/{name}",
        "DELETE",
        delete_instance_variable,
    ),
    Endpoint("/process-instance/{id}/activity-instances", "GET", activity_tree),
    *listing(
        "/history/process-instance",
        _historic_query,
        dto.historic_process_instance,
        count=_count_historic_instances,
    ),
    Endpoint("/history/process-instance/{id}", "GET", historic_instance),
    Endpoint("/history/activity-instance", "GET", historic_activities),
    Endpoint("/history/activity-instance/count", "GET", count_historic_activities),
]
