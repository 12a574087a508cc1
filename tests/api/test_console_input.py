"""Console forms refuse what no column can hold with a 400 in place of the button, and write
nothing: JSON nested too deep or holding NaN, and retries beyond the integer column."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engine.errors import BadRequest
from tests.api import processes
from tests.api.test_sessions import Browser
from tests.server import LiveServer


@pytest.fixture
def operator_browser(api: LiveServer) -> Iterator[Browser]:
    browser = Browser(api.url, "operator")
    yield browser
    browser.close()


@pytest.mark.parametrize(
    "value",
    ["[" * 2000 + "]" * 2000, '{"a": NaN}', "1e999", '"\\u0000"', '"\\ud800"'],
)
def test_a_json_variable_no_column_can_hold_is_a_400(
    api: LiveServer, operator_browser: Browser, value: str
) -> None:
    handle = api.engine.start_latest("review")
    before = handle.variables()
    answer = operator_browser.post(
        f"/instances/{handle.id}/variables", data={"name": "doc", "type": "json", "value": value}
    )
    assert answer.status_code == 400, answer.text
    assert "BadRequest" in answer.text
    assert handle.variables() == before


def test_completing_a_task_with_deep_json_is_a_400(
    api: LiveServer, operator_browser: Browser
) -> None:
    handle = api.engine.start_latest("review")
    (task,) = handle.user_tasks()
    deep = '{"x": ' + "[" * 2000 + "]" * 2000 + "}"
    answer = operator_browser.post(f"/tasks/{task.id}/complete", data={"variables": deep})
    assert answer.status_code == 400, answer.text
    assert [t.id for t in handle.user_tasks()] == [task.id]


def test_retries_beyond_the_integer_column_are_a_400(
    api: LiveServer, operator_browser: Browser
) -> None:
    handle = api.engine.start_latest("timer")
    (job,) = api.engine.jobs(handle.id)
    answer = operator_browser.post(f"/jobs/{job.id}/retries", data={"retries": str(2**40)})
    assert answer.status_code == 400, answer.text
    assert api.engine.job(job.id).retries == job.retries
    with pytest.raises(BadRequest):
        api.engine.set_job_retries(job.id, 2**31)
    task = _external(api)
    with pytest.raises(BadRequest):
        api.engine.set_external_task_retries(task, 2**31)


def _external(api: LiveServer) -> Any:
    api.engine.deploy(processes.external(key="retries-bound", topic="retries-bound"))
    api.engine.start_latest("retries-bound")
    (task,) = api.engine.fetch_and_lock("w", {"retries-bound": 60_000})
    return task["id"]
