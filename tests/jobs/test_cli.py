"""`interlock jobs` and `interlock worker` as processes: they do the work, and stop gracefully
on SIGTERM (jobs) and SIGINT (worker)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import TimerDefinition
from engine.states import InstanceState

ROOT = Path(__file__).resolve().parents[2]


def interlock(database_url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # With the fault handler on, a process that does not stop dumps its threads on SIGABRT.
        env={
            **os.environ,
            "DATABASE_URL": database_url,
            "PYTHONPATH": str(ROOT),
            "PYTHONFAULTHANDLER": "1",
        },
    )


def stop(proc: subprocess.Popen[str], signum: int) -> tuple[int, str]:
    proc.send_signal(signum)
    try:
        _, stderr = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # its stderr then tells where each thread waits
        try:
            _, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
    return proc.returncode, stderr


def test_interlock_jobs_runs_timers_and_async_work(real_engine: Engine, database_url: str) -> None:
    model = (
        ProcessBuilder("cli-jobs")
        .start_event("start")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="duration", text="PT0.2S"))
        .service_task("work", handler="work", async_before=True)
        .end_event("end")
        .chain("start", "wait", "work", "end")
        .build()
    )
    real_engine.deploy(model)
    proc = interlock(
        database_url,
        "jobs",
        "--threads",
        "2",
        "--batch-size",
        "3",
        "--handlers",
        "tests.jobs.cli_handlers",
    )
    try:
        instances = [real_engine.start_latest("cli-jobs") for _ in range(10)]
        states = [instance.wait_completion(20) for instance in instances]
    finally:
        code, stderr = stop(proc, signal.SIGTERM)
    assert states == [InstanceState.COMPLETED] * 10, stderr
    assert {i.variables()["worked_by"] for i in instances} == {"interlock jobs"}
    assert code == 0, stderr
    assert "stopped" in stderr


def test_interlock_worker_runs_the_modules_worker(real_engine: Engine, database_url: str) -> None:
    model = (
        ProcessBuilder("cli-worker")
        .start_event("start")
        .service_task("charge", topic="charge")
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )
    real_engine.deploy(model)
    proc = interlock(
        database_url, "worker", "tests.jobs.cli_worker", "--max-tasks", "2", "--lock-ms", "7000"
    )
    try:
        instances = [real_engine.start_latest("cli-worker") for _ in range(5)]
        states = [instance.wait_completion(20) for instance in instances]
    finally:
        code, stderr = stop(proc, signal.SIGINT)
    assert states == [InstanceState.COMPLETED] * 5, stderr
    assert instances[0].variables() == {"charged_by": "interlock worker", "lock_ms": "7000"}
    assert code == 0, stderr


def test_interlock_worker_refuses_a_module_without_a_worker(database_url: str) -> None:
    proc = interlock(database_url, "worker", "tests.jobs.cli_handlers")
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "defines no Worker named `worker`" in stderr
