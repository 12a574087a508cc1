"""Camunda's JavaScript worker (`camunda-external-task-client-js`, unchanged) completes external
tasks on a real Interlock server over HTTP Basic. Needs Node: skipped only when `node` is absent
outside CI; under CI=true a missing Node fails the test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.compat import processes
from tests.compat.conftest import deploy, start
from tests.server import PASSWORD, LiveServer

JS_DIR = Path(__file__).parent / "js"
CLIENT = JS_DIR / "node_modules" / "camunda-external-task-client-js"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node is required under CI to run the JavaScript client test")
        pytest.skip("node is not installed")
    return node


def _install_client() -> None:
    """npm install from the committed package-lock.json, once per checkout."""
    if CLIENT.exists():
        return
    npm = shutil.which("npm")
    assert npm is not None, "npm is needed to install camunda-external-task-client-js"
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund"],
        cwd=JS_DIR,
        check=True,
        capture_output=True,
        timeout=300,
    )


def test_js_worker_completes_tasks(server: LiveServer, rest: httpx.Client) -> None:
    node = _node()
    _install_client()
    deploy(rest, ("js.bpmn", processes.external_then_review("js-charge", "js-topic")))
    started = []
    for n in (1, 2, 3):
        variables = {
            "amount": {"value": n * 100},
            "doc": {"value": {"sku": f"A-{n}"}},
            "when": {"value": "2026-01-31T10:00:00.000+0000", "type": "Date"},
        }
        started.append(start(rest, "js-charge", variables, businessKey=f"js-{n}")["id"])

    worker = subprocess.run(
        [node, "worker.mjs", f"{server.url}/engine-rest", "operator", PASSWORD, "js-topic", "3"],
        cwd=JS_DIR,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert worker.returncode == 0, worker.stderr
    handled = [json.loads(line) for line in worker.stdout.splitlines() if line.startswith("{")]
    assert sorted(h["amount"] for h in handled) == [100, 200, 300]
    assert {h["amountType"] for h in handled} == {"integer"}
    assert sorted(h["doc"]["sku"] for h in handled) == ["A-1", "A-2", "A-3"]
    assert {h["when"] for h in handled} == {"2026-01-31T10:00:00.000Z"}
    assert sorted(h["businessKey"] for h in handled) == ["js-1", "js-2", "js-3"]

    for instance_id in started:
        [task] = rest.get("/task", params={"processInstanceId": instance_id}).json()
        assert task["taskDefinitionKey"] == "Review"
        values = rest.get(f"/process-instance/{instance_id}/variables").json()
        assert values["jsDone"] == {"type": "Boolean", "value": True, "valueInfo": {}}
        assert values["items"]["type"] == "Json" and json.loads(values["items"]["value"]) == [
            1,
            2,
            3,
        ]
        assert values["handledAt"]["value"] == "2026-01-31T10:00:00.000+0000"
        assert values["doubled"]["type"] == "Integer"
