"""User tasks: query, read, claim, unclaim, set the assignee, complete."""

from __future__ import annotations

from uuid import UUID

from starlette.responses import Response

from app import reads
from app.camunda import dto
from app.camunda.dto import Json
from app.camunda.errors import engine_error, invalid_request, rest_error
from app.camunda.http import Call, Endpoint, found, json_response, listing, no_content, only
from app.camunda.variables import dto_map, to_typed_map
from app.params import as_uuid
from engine.commands.tasks import ChangeTaskIdentityLink, LinkType
from engine.errors import BadRequest, Conflict, InterlockError, NotFound
from engine.model import UserTask
from engine.queries.camunda import tasks as task_reads


def _with_or_without(call: Call, name: str) -> bool | None:
    """`with<name>=true`: True; `without<name>=true`: False (both: False); `false`, as absent,
    filters nothing."""
    if call.flag(f"without{name}"):
        return False
    return True if call.flag(f"with{name}") else None


def _task_query(
    call: Call, *, task_id: UUID | None = None, count: bool = False
) -> list[task_reads.TaskRow] | int:
    suspended = call.flag_unless("suspended", "active")
    assigned = call.flag_unless("assigned", "unassigned")
    candidate_user = call.text("candidateUser")
    candidate_group = call.text("candidateGroup")
    candidate_groups = call.csv("candidateGroups")
    with_groups = _with_or_without(call, "CandidateGroups")
    with_users = _with_or_without(call, "CandidateUsers")
    # Camunda's candidate queries: by a candidate, or for tasks that have candidates.
    candidate_query = (
        any(v is not None for v in (candidate_user, candidate_group, candidate_groups))
        or with_groups is True
        or with_users is True
    )
    return task_reads.user_tasks(
        call.engine,
        call.page(task_reads.TASK_SORT),
        task_id=task_id or call.uuid("taskId"),
        instance_id=call.uuid("processInstanceId"),
        instance_ids=call.uuids("processInstanceIdIn"),
        business_key=call.text("processInstanceBusinessKey"),
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        definition_keys=call.csv("processDefinitionKeyIn"),
        node_id=call.text("taskDefinitionKey"),
        node_ids=call.csv("taskDefinitionKeyIn"),
        name=call.text("name"),
        name_like=call.text("nameLike"),
        assignee=call.text("assignee"),
        assignee_like=call.text("assigneeLike"),
        assigned=assigned,
        candidate_user=candidate_user,
        candidate_group=candidate_group,
        candidate_groups=candidate_groups,
        with_candidate_groups=with_groups,
        with_candidate_users=with_users,
        involved_user=call.text("involvedUser"),
        candidates_unassigned=candidate_query and not call.flag("includeAssignedTasks"),
        suspended=suspended,
        priority=call.integer("priority"),
        min_priority=call.integer("minPriority"),
        max_priority=call.integer("maxPriority"),
        execution_id=call.uuid("executionId"),
        tenant_ids=call.csv("tenantIdIn"),
        without_tenant=call.flag("withoutTenantId"),
        count=count,
    )


def _shown(call: Call, rows: list[task_reads.TaskRow]) -> list[Json]:
    engine = call.engine
    shown = []
    for row in rows:
        model = reads.model(engine, row.definition_id, row.definition_key)
        node = model.node(row.node_id) if model.has_node(row.node_id) else None
        shown.append(dto.task(row, node.form_key if isinstance(node, UserTask) else None))
    return shown


def get_task(call: Call) -> Response:
    task_id = call.path["id"]
    row = found(
        only(call, _task_query, task_id=as_uuid(task_id)), f"No matching task with id {task_id}"
    )
    return json_response(_shown(call, [row])[0])


def _missing(task_id: str) -> Exception:
    return engine_error(f"Cannot find task with id {task_id}: task is null", "NullValueException")


def _assign(call: Call, user_id: str | None, *, force: bool) -> Response:
    task_id = call.path["id"]
    engine = call.engine
    try:
        if user_id is None:
            engine.unclaim_task(task_id)
        elif force:
            engine.set_assignee(task_id, user_id)
        else:
            engine.claim_task(task_id, user_id)
    except NotFound as exc:
        raise _missing(task_id) from exc
    except Conflict as exc:
        if "assignee" in exc.detail:
            raise engine_error(
                f"Task '{task_id}' is already claimed by someone else.",
                "TaskAlreadyClaimedException",
            ) from exc
        raise _missing(task_id) from exc
    return no_content()


def claim(call: Call) -> Response:
    return _assign(call, call.body_text("userId"), force=False)


def unclaim(call: Call) -> Response:
    return _assign(call, None, force=True)


def set_assignee(call: Call) -> Response:
    return _assign(call, call.body_text("userId"), force=True)


def complete(call: Call) -> Response:
    task_id = call.path["id"]
    variables = to_typed_map(call.field("variables"))
    # Read before the task completes: a refusal must leave nothing written.
    with_variables = call.body_flag("withVariablesInReturn")
    engine = call.engine
    try:
        result = engine.complete_task(task_id, variables)
    except BadRequest as exc:
        raise invalid_request(f"Cannot complete task {task_id}: {exc.message}") from exc
    except NotFound as exc:
        message = (
            f"Cannot complete task {task_id}: Cannot find task with id {task_id}: task is null"
        )
        raise rest_error(500, message, exc) from exc
    except InterlockError as exc:
        message = f"Cannot complete task {task_id}: {exc.message}"
        raise rest_error(500, message, exc) from exc
    if with_variables:
        values = reads.typed_variables(engine, UUID(result.instance_id))
        return json_response(dto_map(values))
    return no_content()


def _links(row: task_reads.TaskRow) -> list[Json]:
    links: list[Json] = []
    if row.assignee is not None:
        links.append({"userId": row.assignee, "groupId": None, "type": LinkType.ASSIGNEE.value})
    for user in row.candidate_users:
        links.append({"userId": user, "groupId": None, "type": LinkType.CANDIDATE.value})
    for group in row.candidate_groups:
        links.append({"userId": None, "groupId": group, "type": LinkType.CANDIDATE.value})
    return links


def identity_links(call: Call) -> Response:
    """The task's identity links (`type`: only those of that type)."""
    task_id = call.path["id"]
    row = found(
        only(call, _task_query, task_id=as_uuid(task_id)), f"No matching task with id {task_id}"
    )
    kind = call.text("type")
    return json_response([link for link in _links(row) if kind in (None, link["type"])])


def _change_link(call: Call, *, remove: bool) -> Response:
    task_id = call.path["id"]
    kind = call.body_text("type")
    if kind is None:
        raise invalid_request("'type' is required: candidate or assignee")
    try:
        link_type = LinkType(kind)
    except ValueError:
        raise invalid_request(
            f"'type' {kind!r} is not supported: candidate or assignee (no owner is kept)"
        ) from None
    user_id, group_id = call.body_text("userId"), call.body_text("groupId")
    if (user_id is None) == (group_id is None):
        raise invalid_request("Give exactly one of 'userId' and 'groupId'")
    command = ChangeTaskIdentityLink(
        as_uuid(task_id), link_type, user_id=user_id, group_id=group_id, remove=remove
    )
    try:
        call.engine.run(command)
    except NotFound as exc:
        raise rest_error(404, f"No matching task with id {task_id}", exc) from exc
    return no_content()


def add_identity_link(call: Call) -> Response:
    return _change_link(call, remove=False)


def delete_identity_link(call: Call) -> Response:
    return _change_link(call, remove=True)


endpoints = [
    *listing("/task", _task_query, shown=_shown),
    Endpoint("/task/{id}", "GET", get_task),
    Endpoint("/task/{id}/claim", "POST", claim, body="json"),
    Endpoint("/task/{id}/unclaim", "POST", unclaim, body="json"),
    Endpoint("/task/{id}/assignee", "POST", set_assignee, body="json"),
    Endpoint("/task/{id}/complete", "POST", complete, body="json"),
    Endpoint("/task/{id}/identity-links", "GET", identity_links),
    Endpoint("/task/{id}/identity-links", "POST", add_identity_link, body="json"),
    Endpoint(
        "/task/{id}/identity-links/delete",
        "POST",
        delete_identity_link,
        body="json",
    ),
]
