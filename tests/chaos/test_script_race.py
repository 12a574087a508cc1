"""Scripts from many threads at once never take the server down: `interlock serve` runs as a real
process, HTTP starts run synchronous scripts on its request threads while its job executor runs
asynchronous ones and a modification batch's chunks run them again; afterwards every instance
holds what its scripts computed and the server still answers. A script process killed in the
middle of a script fails that one script cleanly and is replaced."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.scripting import Isolate, ScriptError, ScriptLimits, Subject, hosts
from tests.server import free_port
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]

MODEL = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="x">
  <bpmn:process id="Scripted" isExecutable="true">
    <bpmn:startEvent id="Start"/>
    <bpmn:scriptTask id="Sync" scriptFormat="javascript" camunda:resultVariable="x">
      <bpmn:script>var x = 1 + 1; x</bpmn:script>
    </bpmn:scriptTask>
    <bpmn:scriptTask id="Async" scriptFormat="javascript" camunda:asyncBefore="true"
        camunda:resultVariable="y">
      <bpmn:script>var doubled = x * 2; doubled</bpmn:script>
    </bpmn:scriptTask>
    <bpmn:userTask id="Wait"/>
    <bpmn:endEvent id="End"/>
    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Sync"/>
    <bpmn:sequenceFlow id="f2" sourceRef="Sync" targetRef="Async"/>
    <bpmn:sequenceFlow id="f3" sourceRef="Async" targetRef="Wait"/>
    <bpmn:sequenceFlow id="f4" sourceRef="Wait" targetRef="End"/>
  </bpmn:process>
</bpmn:definitions>
"""
SUBJECT = Subject(execution_id="e", instance_id="i", activity_id="Task")


@contextmanager
def server_process(database_url: str, log: Path, **env: str) -> Iterator[tuple[Any, str]]:
    """`interlock serve --no-auth` as a process of its own; its output goes to `log`."""
    port = free_port()
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "INTERLOCK_HOME")}
    with log.open("w") as output:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--no-auth", "--port", str(port)],
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**base, "PYTHONPATH": str(ROOT), "DATABASE_URL": database_url, **env},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while not answers(url):
                assert proc.poll() is None, f"serve exited {proc.returncode}: {log.read_text()}"
                assert time.monotonic() < deadline, "serve did not answer /health"
                time.sleep(0.1)
            yield proc, url
        finally:
            proc.kill()
            proc.wait()


def answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def race(database_url: str, log: Path, seconds: float, threads: int = 8) -> None:
    with server_process(database_url, log, INTERLOCK_SCRIPT_PROCESSES="2") as (proc, url):
        rest = f"{url}/engine-rest"
        deployed = httpx.post(
            f"{rest}/deployment/create",
            files={"data": ("scripted.bpmn", MODEL.encode(), "application/xml")},
            data={"deployment-name": "scripted"},
            timeout=30,
        )
        assert deployed.status_code == 200, deployed.text
        (definition_id,) = deployed.json()["deployedProcessDefinitions"]
        started: list[str] = []
        failures: list[str] = []
        go = threading.Barrier(threads)
        until = time.monotonic() + seconds

        def starter() -> None:
            with httpx.Client(timeout=60) as client:
                go.wait()
                count = 0
                while count < 12 or time.monotonic() < until:
                    answer = client.post(f"{rest}/process-definition/key/Scripted/start", json={})
                    if answer.status_code != 200:
                        failures.append(f"{answer.status_code} {answer.text}")
                        return
                    started.append(answer.json()["id"])
                    count += 1

        workers = [threading.Thread(target=starter) for _ in range(threads)]
        for worker in workers:
            worker.start()
        # While the starts go on, a modification batch runs the synchronous script again in
        # every instance started so far, in the job executor beside the asynchronous scripts.
        wait_until(lambda: len(started) >= threads * 4 or failures, "the first starts", 120)
        targets = list(started)
        batch = httpx.post(
            f"{rest}/modification/executeAsync",
            json={
                "processDefinitionId": definition_id,
                "processInstanceIds": targets,
                "instructions": [{"type": "startBeforeActivity", "activityId": "Sync"}],
            },
            timeout=60,
        )
        for worker in workers:
            worker.join()
        assert not failures, failures[:3]
        assert batch.status_code == 200, batch.text

        def jobs_left() -> int:
            return int(httpx.get(f"{rest}/job/count", timeout=30).json()["count"])

        wait_until(lambda: jobs_left() == 0, "every asynchronous script and batch chunk", 300)
        for instance in started[:: max(1, len(started) // 10)]:
            variables = httpx.get(f"{rest}/process-instance/{instance}/variables", timeout=30)
            assert variables.json()["x"]["value"] == 2, variables.text
            assert variables.json()["y"]["value"] == 4, variables.text
        for instance in targets[:: max(1, len(targets) // 5)]:
            tasks = httpx.get(f"{rest}/task", params={"processInstanceId": instance}, timeout=30)
            assert len(tasks.json()) == 2, tasks.text  # the batch ran both scripts once more
        assert httpx.get(f"{rest}/incident/count", timeout=30).json()["count"] == 0
        assert proc.poll() is None, log.read_text()[-3000:]
        assert answers(url)
        assert "Check failed" not in log.read_text()


def test_scripts_racing_on_request_and_executor_threads_leave_the_server_up(
    database_url: str, tmp_path: Path
) -> None:
    race(database_url, tmp_path / "serve.log", seconds=0)


@pytest.mark.slow
def test_a_minute_of_racing_scripts_leaves_the_server_up(database_url: str, tmp_path: Path) -> None:
    race(database_url, tmp_path / "serve.log", seconds=60)


def test_a_script_process_that_dies_fails_its_script_and_is_replaced(
    one_script_process: hosts.HostPool,
) -> None:
    isolate = Isolate(ScriptLimits(timeout_seconds=30))
    assert isolate.run("1", {}, SUBJECT, where="warm-up").value == 1
    (first,) = one_script_process.pids()
    caught: list[ScriptError] = []

    def spin() -> None:
        try:
            isolate.run("while (true) {}", {}, SUBJECT, where="script task 'Spin'")
        except ScriptError as error:
            caught.append(error)

    spinner = threading.Thread(target=spin)
    spinner.start()
    wait_until(lambda: not one_script_process.idle_pids(), "the script to be running", 30)
    os.kill(first, signal.SIGKILL)  # what a fault of V8 does to its process
    spinner.join(timeout=60)
    assert [error.message for error in caught] == [
        "script task 'Spin': the script's process stopped unexpectedly; it was replaced"
    ]
    assert caught[0].detail["reason"] == "crashed"
    assert isolate.run("6 * 7", {}, SUBJECT, where="next").value == 42
    assert one_script_process.pids() != [first]
    assert one_script_process.started == 2
