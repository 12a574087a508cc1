"""The console's task inbox shows each task's comments and attachments over HTTP on a real
server: a file attachment is a download link whose answer carries the raw-file headers (never
shown inline, never sniffed); a link attachment is shown as text; a task without notes shows
none."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID

import pytest

from engine.commands.accounts import CreateUser
from engine.commands.task_notes import AddTaskAttachment, AddTaskComment
from engine.identity.accounts import Role
from tests.api.test_sessions import Browser
from tests.compat.processes import candidate_review
from tests.server import PASSWORD, LiveServer

PAYLOAD = b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>"


@pytest.fixture
def noted(server: LiveServer) -> dict[str, str]:
    """Two open tasks: `with` has a comment, a file and a link; `without` has none."""
    engine = server.engine
    engine.run(CreateUser("sam", Role.OPERATOR, PASSWORD))
    engine.deploy(candidate_review("noted"))
    ids = {}
    for name in ("with", "without"):
        instance = engine.start_latest("noted")
        (task,) = engine.user_tasks(instance.id)
        ids[name] = str(task.id)
    task_id = UUID(ids["with"])
    engine.run(AddTaskComment(task_id, "Checked <b>twice</b>"))
    file = engine.run(
        AddTaskAttachment(task_id, "plan.svg", "the floor plan", "image/svg+xml", None, PAYLOAD)
    )
    engine.run(AddTaskAttachment(task_id, "order", None, None, "https://shop.example/o/7"))
    ids["file"] = file.id
    return ids


@pytest.fixture
def sam(server: LiveServer, noted: dict[str, str]) -> Iterator[Browser]:
    browser = Browser(server.url, "sam")
    yield browser
    browser.close()


def _row(page: str, task_id: str) -> str:
    start = page.index(f'<tr data-task="{task_id}"')
    return page[start : page.index("</tr>", start)]


def test_the_inbox_shows_comments_and_attachments(sam: Browser, noted: dict[str, str]) -> None:
    page = sam.get("/tasks?show=all")
    assert page.status_code == 200, page.text
    row = _row(page.text, noted["with"])
    assert "1 comment, 2 attachments" in row
    # Escaped, as every text the console shows.
    assert "Checked &lt;b&gt;twice&lt;/b&gt;" in row
    href = f"/tasks/{noted['with']}/attachments/{noted['file']}"
    assert f'<a href="{href}" download>plan.svg</a>' in row
    assert "https://shop.example/o/7" in row
    assert "task-notes" not in _row(page.text, noted["without"])
    download = sam.get(href)
    assert download.status_code == 200
    assert download.content == PAYLOAD
    assert download.headers["content-type"] == "application/octet-stream"
    assert download.headers["content-disposition"] == 'attachment; filename="plan.svg"'
    assert download.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in download.headers["content-security-policy"]
    # Another task's attachment id is not this task's.
    assert sam.get(f"/tasks/{noted['without']}/attachments/{noted['file']}").status_code == 404
