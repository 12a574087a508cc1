"""The `interlock` command line against a real database, run as subprocesses. Commands that do
not depend on each other run side by side: each one pays for a Python start-up."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from engine.api import Engine
from engine.queries import accounts
from tests.api import processes

ROOT = Path(__file__).resolve().parents[2]


def interlock(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=120,
    )


def together(database_url: str, *commands: tuple[str, ...]) -> list[str]:
    """Run the commands at once; each must succeed. Their outputs, in order."""
    with ThreadPoolExecutor(len(commands)) as pool:
        done = list(pool.map(lambda args: interlock(database_url, *args), commands))
    for result in done:
        assert result.returncode == 0, result.args + [result.stdout, result.stderr]
    return [result.stdout for result in done]


def test_the_command_line(database_url: str, tmp_path: Path) -> None:
    model = tmp_path / "flow.bpmn"
    model.write_text(processes.xml(processes.external("cli-flow", topic="cli")))
    dish = Path(__file__).parent.parent / "data" / "dmn" / "dish_first.dmn"
    deployed, made_user, made_token = together(
        database_url,
        ("deploy", str(model), str(dish)),
        ("user", "add", "erin", "--role", "operator"),
        ("token", "add", "robot", "--role", "viewer"),
    )
    assert "deployed: cli-flow version 1" in deployed
    assert "deployed: decision dish version 1" in deployed
    password = made_user.strip().rsplit(" ", 1)[-1]
    token = made_token.strip().rsplit(" ", 1)[-1]
    assert token.startswith("il_")

    (started,) = together(
        database_url,
        ("start", "cli-flow", "--var", "amount=12", "--var", "rush=true", "--var", "who=ann")
        + ("--business-key", "cli-1"),
    )
    assert started.startswith("started ") and started.strip().endswith("Active")
    instance_id = started.split()[1].rstrip(":")

    with Engine(database_url, migrate=False) as engine:
        assert engine.instance(instance_id).variables() == {
            "amount": 12,
            "rush": True,
            "who": "ann",
        }
        (task,) = engine.fetch_and_lock("cli-worker", {"cli": 60_000})
        engine.fail_external_task(task["id"], "cli-worker", "the printer is on fire")
        (incident,) = engine.incidents()
        with engine.connection() as conn:
            assert accounts.verify_password(conn, "erin", password) is not None
            principal = accounts.verify_token(conn, token)
            assert principal is not None and principal.role.value == "viewer"

    listed, incidents = together(
        database_url,
        ("instances", "--key", "cli-flow", "--with-incidents", "--state", "Active"),
        ("incidents",),
    )
    header, row = listed.splitlines()
    assert header.split()[:3] == ["ID", "PROCESS", "STATE"]
    assert row.split()[:4] == [instance_id, "cli-flow", "Active", "cli-1"]
    header, row = incidents.splitlines()
    assert row.split()[:4] == [str(incident.id), "failedExternalTask", "work", instance_id]
    assert row.endswith("the printer is on fire")

    (retried,) = together(database_url, ("retry", str(incident.id), "--all"))
    assert retried == f"retried {incident.id}: incident Resolved\n"
    with Engine(database_url, migrate=False) as engine:
        assert engine.incidents() == []
        with engine.connection() as conn:
            audited = conn.execute(
                "SELECT user_id, channel, operation, entity, entity_id FROM audit_entry "
                "ORDER BY operation, entity"
            ).fetchall()
    # The command line acts as the operating-system user who runs it; a start is not audited.
    user = getpass.getuser()
    assert audited == [
        (user, "cli", "Create", "ApiToken", "robot"),
        (user, "cli", "Create", "Deployment", audited[1][4]),
        (user, "cli", "Create", "User", "erin"),
        (user, "cli", "Retry", "Incident", str(incident.id)),
    ]
