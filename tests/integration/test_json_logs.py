"""`interlock serve` with INTERLOCK_LOG_FORMAT=json, as a process: every line it writes to stderr
is one JSON object; a request's id (the caller's, when it sends a UUID) is on its access line
and on the lines of the commands it ran, which carry the command, its instance and its duration;
and the password of the database URL it was given appears in none of its output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.accounts import CreateToken
from engine.identity import accounts
from engine.identity.accounts import Role
from tests.server import free_port

ROOT = Path(__file__).resolve().parents[2]


def with_password(url: str) -> tuple[str, str]:
    """`url` with a password, and the password. The test server's own password when its URL has
    one; else a made-up one, which the embedded server ignores on its socket (trust)."""
    parts = urlsplit(url)
    if parts.password:
        return url, parts.password
    secret = f"pw-{uuid.uuid4().hex}"
    user = parts.username or "postgres"
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:{secret}@{host}")), secret


def test_json_logs_carry_request_ids_commands_and_no_password(
    database_url: str, tmp_path: Path
) -> None:
    url, secret = with_password(database_url)
    with Engine(database_url, migrate=False) as engine:
        engine.deploy(
            ProcessBuilder("logged")
            .start_event("start")
            .user_task("review")
            .end_event("end")
            .chain("start", "review", "end")
            .build()
        )
        token = accounts.new_token()
        engine.run(CreateToken("log-reader", Role.OPERATOR, token))
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **os.environ,
            "DATABASE_URL": url,
            "INTERLOCK_HOME": str(tmp_path),
            "INTERLOCK_LOG_FORMAT": "json",
            "INTERLOCK_LOG_LEVEL": "debug",
            "PYTHONPATH": str(ROOT),
        },
    )
    ours = uuid.uuid4().hex
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_until_up(server, base)
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, headers=auth, timeout=30) as http:
            started = http.post(
                "/api/v1/definitions/key/logged/start",
                json={},
                headers={"X-Request-Id": ours},
            )
            assert started.status_code == 201, started.text
            assert started.headers["x-request-id"] == ours
            instance_id = started.json()["id"]
            tasks = http.get("/api/v1/user-tasks", params={"instance_id": instance_id})
            task_id = tasks.json()["items"][0]["id"]
            completed = http.post(f"/api/v1/user-tasks/{task_id}/complete", json={})
            assert completed.status_code == 200, completed.text
            forged = http.get("/api/v1/definitions", headers={"X-Request-Id": "forged; line"})
            assert forged.headers["x-request-id"] != "forged; line"
            assert http.get("/metrics").status_code == 200
            bodies = started.text + tasks.text + completed.text + http.get("/health").text
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            stdout, stderr = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            stdout, stderr = server.communicate()
    assert secret not in stdout + stderr + bodies
    lines = [_json(line) for line in stderr.splitlines() if line.strip()]
    for line in lines:
        assert {"timestamp", "level", "logger", "message"} <= line.keys(), line
    assert any(line["logger"].startswith("uvicorn") for line in lines)
    assert any(
        line["logger"] == "interlock"
        and line["message"].startswith("database postgresql://")
        and ":***@" in line["message"]
        for line in lines
    )

    access = [line for line in lines if line["logger"] == "interlock.access"]
    start_access = [line for line in access if line.get("request_id") == ours]
    assert len(start_access) == 1, access
    assert start_access[0]["method"] == "POST"
    assert start_access[0]["path"] == "/api/v1/definitions/key/logged/start"
    assert start_access[0]["status"] == 201
    assert start_access[0]["user"] == "log-reader"
    assert start_access[0]["duration_ms"] > 0
    # Paths without their query strings.
    assert "/api/v1/user-tasks" in {line["path"] for line in access}
    assert not any("?" in line["path"] or "instance_id" in line["path"] for line in access)
    # Every request has its line, each with an id of its own.
    assert len({line["request_id"] for line in access}) == len(access) >= 5

    commands = [line for line in lines if line["logger"] == "interlock.commands"]
    start = [line for line in commands if line["command"] == "StartInstance"]
    assert len(start) == 1, commands
    assert start[0]["request_id"] == ours
    assert start[0]["user"] == "log-reader"
    assert start[0]["instance_id"] == instance_id
    assert start[0]["outcome"] == "ok"
    assert start[0]["duration_ms"] > 0
    complete = [line for line in commands if line["command"] == "CompleteUserTask"]
    assert len(complete) == 1, commands
    assert complete[0]["instance_id"] == instance_id
    assert complete[0]["request_id"] not in (ours, None)
    assert complete[0]["duration_ms"] > 0


def _json(line: str) -> dict[str, Any]:
    try:
        parsed: dict[str, Any] = json.loads(line)
    except ValueError:
        raise AssertionError(f"not a JSON line: {line!r}") from None
    return parsed


def _wait_until_up(server: subprocess.Popen[str], base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"the server exited: {server.communicate()}")
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the server did not start")
