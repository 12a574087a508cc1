"""A script's time limit covers all of its work, promise jobs included, and what a script writes
is checked as request input is: through the real HTTP surface, with every script of the test run
in one script process, as scripts of unrelated instances may."""

from __future__ import annotations

import httpx

from engine.builder import ProcessBuilder
from engine.scripting import hosts
from tests.server import LiveServer

RUNAWAY = "(async function () { await 0; while (true) {} })(); 'ok'"


def deploy(api: LiveServer, key: str, script: str) -> None:
    builder = ProcessBuilder(key).start_event("start")
    builder.script_task("run", script=script, result_variable="result")
    builder.user_task("wait").end_event("end").chain("start", "run", "wait", "end")
    api.engine.deploy(builder.build())


def start(api: LiveServer, key: str, variables: dict[str, object] | None = None) -> httpx.Response:
    return httpx.post(
        f"{api.url}/engine-rest/process-definition/key/{key}/start",
        json={"variables": variables or {}},
        headers=api.bearer("operator"),
        timeout=60,
    )


def test_promise_jobs_a_script_leaves_run_within_its_time_limit(
    api: LiveServer, one_script_process: hosts.HostPool
) -> None:
    deploy(api, "Runaway", RUNAWAY)
    deploy(api, "Quick", "execution.setVariable('n', 1); 1 + 1")
    refused = start(api, "Runaway")
    assert refused.status_code == 500, refused.text
    assert refused.json()["message"].endswith(": script task 'run': the script ran longer than 1 s")
    count = httpx.get(
        f"{api.url}/engine-rest/process-instance/count",
        params={"processDefinitionKey": "Runaway"},
        headers=api.bearer("viewer"),
        timeout=30,
    )
    assert count.json()["count"] == 0  # the command that ran it was rolled back
    # The next, unrelated script runs at once in a new process: nothing of the runaway is left.
    for _ in range(3):
        answer = start(api, "Quick")
        assert answer.status_code == 200, answer.text
        variables = httpx.get(
            f"{api.url}/engine-rest/process-instance/{answer.json()['id']}/variables",
            headers=api.bearer("viewer"),
            timeout=30,
        ).json()
        assert (variables["result"]["value"], variables["n"]["value"]) == (2, 1)
    assert one_script_process.started == 2


def test_a_long_variable_name_from_a_script_or_a_request_is_refused(
    api: LiveServer, one_script_process: hosts.HostPool
) -> None:
    deploy(api, "LongName", "var n = 'v'.repeat(100000);\nexecution.setVariable(n, 1); 0")
    refused = start(api, "LongName")
    assert refused.status_code == 500, refused.text
    assert refused.json()["message"].endswith(
        ": script task 'run': RangeError: a variable name has at most 255 characters, "
        "not 100000 (line 2)"
    )
    deploy(api, "Plain", "0")
    long_name = start(api, "Plain", {"v" * 100_000: {"value": 1, "type": "Integer"}})
    assert long_name.status_code == 400, long_name.text
    assert "at most 255" in long_name.json()["message"]
    assert len(long_name.text) < 2000  # the name is quoted cut short, not echoed whole
    nested: list[object] = []
    for _ in range(100):
        nested = [nested]
    deep = start(api, "Plain", {"deep": {"value": nested}})
    assert deep.status_code == 400, deep.text
    assert "nested deeper than 64" in deep.json()["message"]
