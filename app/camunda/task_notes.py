"""A task's comments (`/task/{id}/comment...`) and attachments (`/task/{id}/attachment...`), as
Camunda's REST reference gives them. An attachment's bytes are served as a raw file: downloaded,
never sniffed nor run."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.responses import Response

from app.camunda.dto import Json, format_date, link, text
from app.camunda.errors import CamundaError, invalid_request
from app.camunda.http import Call, Endpoint, json_response, no_content
from app.guard import raw_file_headers
from app.params import NO_MATCH, as_uuid
from engine.commands.task_notes import (
    AddTaskAttachment,
    AddTaskComment,
    DeleteTaskAttachment,
    NoteResult,
)
from engine.errors import BadRequest, NotFound
from engine.queries import work
from engine.queries.camunda import task_notes as note_reads

# The largest attachment kept (the form reader refuses larger parts first).
MAX_ATTACHMENT_BYTES = 16 * 1024 * 1024


def _not_found(message: str, status: int = 404) -> CamundaError:
    return invalid_request(message, status)


def _task_id(call: Call, status: int = 404) -> UUID:
    """The path's task, which the principal may read (open or not), else Camunda's answer."""
    task_id = call.path["id"]
    found = as_uuid(task_id)
    if found == NO_MATCH or work.user_task(call.engine, found) is None:
        raise _not_found(f"No task found for task id {task_id}", status)
    return found


def _note_id(call: Call, name: str) -> UUID:
    return as_uuid(call.path[name])


def comment_dto(row: note_reads.CommentRow) -> Json:
    return {
        "id": str(row.id),
        "userId": row.user_id,
        "time": format_date(row.at),
        "taskId": str(row.task_id),
        "processInstanceId": text(row.instance_id),
        "message": row.message,
        "removalTime": None,
        "rootProcessInstanceId": None,
        "links": [],
    }


def attachment_dto(row: note_reads.AttachmentRow) -> Json:
    return {
        "id": str(row.id),
        "name": row.name,
        "description": row.description,
        "taskId": str(row.task_id),
        "type": row.type,
        "url": row.url,
        "createTime": format_date(row.created_at),
        "removalTime": None,
        "rootProcessInstanceId": None,
        "links": [],
    }


# -- comments -------------------------------------------------------------------------------------


def list_comments(call: Call) -> Response:
    task_id = _task_id(call)
    return json_response([comment_dto(row) for row in note_reads.comments(call.engine, task_id)])


def get_comment(call: Call) -> Response:
    task_id = _task_id(call)
    comment_id = call.path["commentId"]
    rows = note_reads.comments(call.engine, task_id, _note_id(call, "commentId"))
    if not rows:
        raise _not_found(f"Task comment with id {comment_id} does not exist for task id {task_id}.")
    return json_response(comment_dto(rows[0]))


def create_comment(call: Call) -> Response:
    task_id = _task_id(call, status=400)
    message = call.body_text("message")
    if message is None:
        raise invalid_request("'message' is required: the comment's text")
    result = _run(call, AddTaskComment(task_id, message))
    [row] = note_reads.comments(call.engine, task_id, UUID(result.id))
    shown = comment_dto(row)
    shown["links"] = [link(call.base, f"/task/{task_id}/comment/{row.id}")]
    return json_response(shown)


# -- attachments ----------------------------------------------------------------------------------


def list_attachments(call: Call) -> Response:
    task_id = _task_id(call)
    rows = note_reads.attachments(call.engine, task_id)
    return json_response([attachment_dto(row) for row in rows])


def _attachment(call: Call, task_id: UUID) -> note_reads.AttachmentRow:
    attachment_id = call.path["attachmentId"]
    rows = note_reads.attachments(call.engine, task_id, _note_id(call, "attachmentId"))
    if not rows:
        raise _not_found(
            f"Task attachment with id {attachment_id} does not exist for task id {task_id}."
        )
    return rows[0]


def get_attachment(call: Call) -> Response:
    return json_response(attachment_dto(_attachment(call, _task_id(call))))


def attachment_data(call: Call) -> Response:
    task_id = _task_id(call)
    attachment_id = call.path["attachmentId"]
    found = note_reads.attachment_content(call.engine, task_id, _note_id(call, "attachmentId"))
    if found is None or found.content is None:
        raise _not_found(
            f"Attachment content for attachment with id '{attachment_id}' does not exist for "
            f"task id '{task_id}'."
        )
    # As uploaded, so never sniffed nor run here: always a download.
    headers = raw_file_headers(found.name or f"attachment-{attachment_id}")
    return Response(found.content, media_type="application/octet-stream", headers=headers)


def _form_text(call: Call, name: str) -> str | None:
    assert call.form is not None
    value = call.form.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid_request(f"'{name}' must be a text field, not a file")
    return value or None


async def create_attachment(call: Call) -> Response:
    """Multipart: `attachment-name`, `attachment-description`, `attachment-type`, `url`, and
    the file in `content`."""
    task_id = await run_in_threadpool(_task_id, call, 400)
    form = call.form
    if form is None:
        raise invalid_request("The request body must be multipart/form-data")
    content: bytes | None = None
    upload = form.get("content")
    if isinstance(upload, UploadFile):
        content = await upload.read(MAX_ATTACHMENT_BYTES + 1)
        if len(content) > MAX_ATTACHMENT_BYTES:
            raise invalid_request(f"'content' is larger than {MAX_ATTACHMENT_BYTES} bytes")
    elif isinstance(upload, str) and upload:
        content = upload.encode()
    command = AddTaskAttachment(
        task_id,
        attachment_name=_form_text(call, "attachment-name"),
        description=_form_text(call, "attachment-description"),
        type=_form_text(call, "attachment-type"),
        url=_form_text(call, "url"),
        content=content,
    )
    result = await run_in_threadpool(_run, call, command)

    def shown() -> Json:
        [row] = note_reads.attachments(call.engine, task_id, UUID(result.id))
        dto = attachment_dto(row)
        dto["links"] = [link(call.base, f"/task/{task_id}/attachment/{row.id}")]
        return dto

    return json_response(await run_in_threadpool(shown))


def delete_attachment(call: Call) -> Response:
    task_id = _task_id(call)
    attachment_id = call.path["attachmentId"]
    try:
        call.engine.run(DeleteTaskAttachment(task_id, _note_id(call, "attachmentId")))
    except NotFound as exc:
        raise _not_found(
            "Deletion is not possible. No attachment exists for task id "
            f"'{task_id}' and attachment id '{attachment_id}'."
        ) from exc
    return no_content()


def _run(call: Call, command: Any) -> NoteResult:
    """Run a note command; a task no longer open is a 400, a refused field names it."""
    try:
        result: NoteResult = call.engine.run(command)
    except NotFound as exc:
        raise invalid_request(f"Task {call.path['id']} is not open: {exc.message}") from exc
    except BadRequest as exc:
        raise invalid_request(exc.message) from exc
    return result


endpoints = [
    Endpoint("/task/{id}/comment", "GET", list_comments),
    Endpoint("/task/{id}/comment/create", "POST", create_comment, body="json"),
    Endpoint("/task/{id}/comment/{commentId}", "GET", get_comment),
    Endpoint("/task/{id}/attachment", "GET", list_attachments),
    Endpoint("/task/{id}/attachment/create", "POST", create_attachment, body="form"),
    Endpoint("/task/{id}/attachment/{attachmentId}", "GET", get_attachment),
    Endpoint("/task/{id}/attachment/{attachmentId}/data", "GET", attachment_data),
    Endpoint("/task/{id}/attachment/{attachmentId}", "DELETE", delete_attachment),
]
