"""How long a failed console log-in takes for an existing user and for an unknown one.

A real server (uvicorn in a thread, the application as `interlock serve` builds it) over the
embedded PostgreSQL in a temporary folder, or over `--database-url`. Each round submits the
log-in form (GET /login for its token, then POST) with a wrong password, alternating between an
existing user name and unknown ones, one request at a time. Reports the median of each and their
ratio: near 1.0 means the answer's timing does not tell whether a user name exists. The throttle
is set high enough not to interfere.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import uvicorn

from app.main import create_app
from app.settings import Settings
from bench.serving import free_port, login_token
from engine.api import Engine
from engine.commands.accounts import CreateUser
from engine.db.database import Database
from engine.identity.accounts import Role


def failed_login(client: httpx.Client, name: str) -> float:
    token = login_token(client.get("/login").text)
    began = time.perf_counter()
    response = client.post(
        "/login", data={"name": name, "password": "not-the-password", "login_token": token}
    )
    elapsed = time.perf_counter() - began
    if response.status_code != 401:
        raise RuntimeError(f"expected 401, got {response.status_code}")
    return elapsed


def run(url: str | None, rounds: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="interlock-bench-") as home:
        database = Database.open(url, home=Path(home))
        try:
            engine = Engine(database.url)
            name = f"bench-{uuid.uuid4().hex[:8]}"
            engine.run(CreateUser(name, Role.VIEWER, "a-long-password"))
            settings = Settings(
                database_url=database.url,
                run_jobs=False,
                login_failures_per_user=10 * rounds,
                login_failures_per_user_all_addresses=10 * rounds,
                login_failures_per_address=10 * rounds,
            )
            port = free_port()
            server = uvicorn.Server(
                uvicorn.Config(
                    create_app(settings, engine), host="127.0.0.1", port=port, log_level="warning"
                )
            )
            thread = threading.Thread(target=server.run, daemon=True)
            thread.start()
            while not server.started:
                time.sleep(0.02)
            try:
                with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                    failed_login(client, name)  # warm-up: connections, the dummy hash
                    failed_login(client, "nobody")
                    existing, unknown = [], []
                    for n in range(rounds):
                        existing.append(failed_login(client, name))
                        unknown.append(failed_login(client, f"nobody-{n}"))
            finally:
                server.should_exit = True
                thread.join(timeout=20)
                engine.close()
        finally:
            database.close()
    return statistics.median(existing), statistics.median(unknown)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    existing, unknown = run(args.database_url, args.rounds)
    print(
        f"failed POST /login, {args.rounds} rounds: existing user {existing * 1000:.1f} ms, "
        f"unknown user {unknown * 1000:.1f} ms (median); ratio {existing / unknown:.2f}"
    )


if __name__ == "__main__":
    main()
