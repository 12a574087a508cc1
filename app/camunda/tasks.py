"""User tasks: query (GET, and POST with a body of filters), read, claim, unclaim, set the
assignee, delegate and resolve, change the details, complete, throw a BPMN error or an
escalation from one."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from starlette.responses import Response

from app import reads
from app.camunda import dto
from app.camunda.dto import Json
from app.camunda.errors import engine_error, invalid_request, rest_error, suspended_error
from app.camunda.http import (
    Call,
    Endpoint,
    found,
    json_response,
    listed,
    listing,
    no_content,
    only,
)
from app.camunda.query_body import posted_page, posted_query, query_variables
from app.camunda.variables import dto_map, to_typed_map
from app.params import NO_MATCH, as_uuid, parse_time
from engine.commands.standalone_tasks import CreateStandaloneTask
from engine.commands.task_changes import (
    DelegateUserTask,
    ResolveUserTask,
    TaskDetails,
    ThrowFromUserTask,
    UpdateUserTask,
)
from engine.commands.tasks import ChangeTaskIdentityLink, LinkType
from engine.errors import BadRequest, Conflict, InterlockError, NotFound, Suspended
from engine.model import UserTask
from engine.queries.camunda import tasks as task_reads
from engine.states import DelegationState


def _with_or_without(call: Call, name: str) -> bool | None:
    """`with<name>=true`: True; `without<name>=true`: False (both: False); `false`, as absent,
    filters nothing."""
    if call.flag(f"without{name}"):
        return False
    return True if call.flag(f"with{name}") else None


def task_query(
    call: Call, *, task_id: UUID | None = None, count: bool = False
) -> list[task_reads.TaskRow] | int:
    """The tasks the call's query parameters (and, for POST /task, the filters of its body, see
    `posted_query`) find; a filter of the console's "inbox" view adds `held_or_candidate` (see
    app/camunda/filters.py)."""
    page = posted_page(call, task_reads.TASK_SORT)
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
        page,
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
        description=call.text("description"),
        description_like=call.text("descriptionLike"),
        owner=call.text("owner"),
        delegation_state=call.one_of("delegationState", _DELEGATION_STATES),
        parent_task_id=call.uuid("parentTaskId"),
        due=call.date("dueDate"),
        due_before=call.date("dueBefore"),
        due_after=call.date("dueAfter"),
        without_due=call.flag("withoutDueDate"),
        follow_up=call.date("followUpDate"),
        follow_up_before=call.date("followUpBefore"),
        follow_up_after=call.date("followUpAfter"),
        follow_up_before_or_none=call.date("followUpBeforeOrNotExistent"),
        created_before=call.date("createdBefore"),
        created_after=call.date("createdAfter"),
        process_variables=query_variables(call, "processVariables"),
        task_variables=query_variables(call, "taskVariables"),
        held_or_candidate=call.extra.get("held_or_candidate"),
        count=count,
    )


_DELEGATION_STATES = tuple(DelegationState)


def shown_tasks(call: Call, rows: list[task_reads.TaskRow]) -> list[Json]:
    engine = call.engine
    shown = []
    for row in rows:
        node = None
        if row.definition_id is not None and row.definition_key is not None:
            model = reads.model(engine, row.definition_id, row.definition_key)
            node = model.node(row.node_id) if model.has_node(row.node_id) else None
        shown.append(dto.task(row, node.form_key if isinstance(node, UserTask) else None))
    return shown


def get_task(call: Call) -> Response:
    task_id = call.path["id"]
    row = found(
        only(call, task_query, task_id=as_uuid(task_id)), f"No matching task with id {task_id}"
    )
    return json_response(shown_tasks(call, [row])[0])


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
    except Suspended as exc:
        raise suspended_error(f"Cannot claim task {task_id}: {exc.message}") from exc
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
    except Suspended as exc:
        raise suspended_error(f"Cannot complete task {task_id}: {exc.message}") from exc
    except InterlockError as exc:
        message = f"Cannot complete task {task_id}: {exc.message}"
        raise rest_error(500, message, exc) from exc
    if with_variables and not result.instance_id:
        return json_response({})  # a standalone task keeps no variables
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
        only(call, task_query, task_id=as_uuid(task_id)), f"No matching task with id {task_id}"
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
            f"'type' {kind!r} is not supported: candidate or assignee (the owner is set by "
            "delegation or PUT /task/{id}, not as a link)"
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


# -- POST /task: the same query, its filters in the body ---------------------------------------


POSTED_VARIABLES = ("processVariables", "taskVariables")


def posted_tasks(call: Call) -> Call:
    """POST /task's call read as GET /task's."""
    return posted_query(call, POSTED_VARIABLES, task_reads.TASK_SORT)


def post_tasks(call: Call) -> Response:
    posted = posted_tasks(call)
    return json_response(shown_tasks(posted, listed(task_query(posted))))


def post_task_count(call: Call) -> Response:
    return json_response({"count": task_query(posted_tasks(call), count=True)})


# -- delegation, details, thrown events -----------------------------------------------------


def _run(call: Call, command: Any, verb: str) -> Response:
    """Run a command on the path's task; a task that is not open is Camunda's NullValueException
    (it finds no task), a suspended instance's task its SuspendedEntityInteractionException. A
    refusal stays Camunda's 403 however it is wrapped (app/camunda/errors.py `translate`)."""
    task_id = call.path["id"]
    try:
        call.engine.run(command)
    except NotFound as exc:
        raise _missing(task_id) from exc
    except Suspended as exc:
        raise suspended_error(f"Cannot {verb} task {task_id}: {exc.message}") from exc
    except BadRequest:
        raise
    except InterlockError as exc:
        raise rest_error(500, f"Cannot {verb} task {task_id}: {exc.message}", exc) from exc
    return no_content()


def delegate(call: Call) -> Response:
    return _run(
        call, DelegateUserTask(as_uuid(call.path["id"]), call.body_text("userId")), "delegate"
    )


def resolve(call: Call) -> Response:
    variables = to_typed_map(call.field("variables"))
    task_id = call.path["id"]
    try:
        return _run(call, ResolveUserTask(as_uuid(task_id), variables), "resolve")
    except BadRequest as exc:
        raise invalid_request(f"Cannot resolve task {task_id}: {exc.message}") from exc


def _body_date(call: Call, name: str) -> datetime | None:
    value = call.body_text(name)
    if value is None:
        return None
    try:
        return parse_time(value)
    except ValueError:
        raise invalid_request(
            f"Cannot set '{name}': {value!r} is not a date (2025-01-31T12:00:00.000+0100)"
        ) from None


def update_task(call: Call) -> Response:
    """Camunda's PUT /task/{id}: every detail at once (a field left out is cleared)."""
    task_id = call.path["id"]
    found(only(call, task_query, task_id=as_uuid(task_id)), f"No matching task with id {task_id}")
    state = call.body_text("delegationState")
    if state is not None and state not in _DELEGATION_STATES:
        raise invalid_request(
            "Valid values for property 'delegationState' are 'PENDING' or 'RESOLVED', "
            f"but was '{state}'"
        )
    parent = call.body_text("parentTaskId")
    parent_id = as_uuid(parent) if parent is not None else None
    if parent_id == NO_MATCH:
        raise invalid_request(f"'parentTaskId': no task has the id {parent!r}")
    details = TaskDetails(
        name=call.body_text("name"),
        description=call.body_text("description"),
        priority=call.body_int("priority", 0) or 0,
        assignee=call.body_text("assignee"),
        owner=call.body_text("owner"),
        delegation_state=DelegationState(state) if state is not None else None,
        due_at=_body_date(call, "due"),
        follow_up_at=_body_date(call, "followUp"),
        parent_task_id=parent_id,
    )
    try:
        call.engine.run(UpdateUserTask(as_uuid(task_id), details))
    except NotFound as exc:
        raise rest_error(404, f"No matching task with id {task_id}", exc) from exc
    return no_content()


def create_task(call: Call) -> Response:
    """Camunda's POST /task/create: a standalone task (no process instance) with TaskDto's
    fields; a given id must be new. 204 No Content."""
    task_id = call.body_text("id")
    new_id = None
    if task_id is not None:
        try:
            new_id = UUID(task_id)
        except ValueError:
            raise invalid_request(
                f"'id': Interlock's task ids are UUIDs, not {task_id!r}"
            ) from None
    state = call.body_text("delegationState")
    if state is not None and state not in _DELEGATION_STATES:
        raise invalid_request(
            "Valid values for property 'delegationState' are 'PENDING' or 'RESOLVED', "
            f"but was '{state}'"
        )
    parent = call.body_text("parentTaskId")
    parent_id = as_uuid(parent) if parent is not None else None
    if parent_id == NO_MATCH:
        raise invalid_request(f"'parentTaskId': no task has the id {parent!r}")
    if call.field("caseInstanceId") is not None:
        raise invalid_request("'caseInstanceId': Interlock runs no cases (CMMN)")
    command = CreateStandaloneTask(
        task_id=new_id,
        task_name=call.body_text("name"),
        description=call.body_text("description"),
        assignee=call.body_text("assignee"),
        owner=call.body_text("owner"),
        delegation_state=state,
        due_at=_body_date(call, "due"),
        follow_up_at=_body_date(call, "followUp"),
        priority=call.body_int("priority", 50) or 0,
        parent_task_id=parent_id,
        tenant_id=call.body_text("tenantId"),
    )
    call.engine.run(command)
    return no_content()


def _throw(call: Call, *, escalation: bool) -> Response:
    task_id = call.path["id"]
    code_field = "escalationCode" if escalation else "errorCode"
    code = call.body_text(code_field)
    message = call.body_text("errorMessage") or ""
    variables = to_typed_map(call.field("variables"))
    command = ThrowFromUserTask(
        as_uuid(task_id), code or "", message, escalation=escalation, variables=variables
    )
    try:
        call.engine.run(command)
    except NotFound as exc:
        message = f"Cannot find task with id {task_id}: task is null"
        raise rest_error(404, message, exc) from exc
    except Suspended as exc:
        raise suspended_error(f"Cannot throw from task {task_id}: {exc.message}") from exc
    except BadRequest as exc:
        raise rest_error(400, exc.message, exc) from exc
    except InterlockError as exc:
        message = f"Cannot throw from task {task_id}: {exc.message}"
        raise rest_error(500, message, exc) from exc
    return no_content()


def bpmn_error(call: Call) -> Response:
    return _throw(call, escalation=False)


def bpmn_escalation(call: Call) -> Response:
    return _throw(call, escalation=True)


endpoints = [
    *listing("/task", task_query, shown=shown_tasks),
    Endpoint("/task", "POST", post_tasks, body="json"),
    Endpoint("/task/count", "POST", post_task_count, body="json"),
    Endpoint("/task/create", "POST", create_task, body="json"),
    Endpoint("/task/{id}", "GET", get_task),
    Endpoint("/task/{id}", "PUT", update_task, body="json"),
    Endpoint("/task/{id}/delegate", "POST", delegate, body="json"),
    Endpoint("/task/{id}/resolve", "POST", resolve, body="json"),
    Endpoint("/task/{id}/bpmnError", "POST", bpmn_error, body="json"),
    Endpoint("/task/{id}/bpmnEscalation", "POST", bpmn_escalation, body="json"),
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
