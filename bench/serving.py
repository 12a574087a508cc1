"""The console's server for benchmarks: the real app under uvicorn in a subprocess on 127.0.0.1,
authentication on and no job executor, started, awaited and logged in to the one way; and the
Chromium that browser benchmarks and tests drive.

The program runs with `-c`, so `start` can serve another checkout (`tree`) as it is, whatever
benchmark support that checkout has."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]

SERVE = (
    "import sys, uvicorn\n"
    "from app.main import create_app\n"
    "from app.settings import Settings\n"
    "settings = Settings(database_url=sys.argv[1], auth=True, run_jobs=False, secret='bench')\n"
    "uvicorn.run(create_app(settings), host='127.0.0.1', port=int(sys.argv[2]),"
    " log_level='warning')\n"
)


# Chromium for Playwright: Debian's, or the one CHROMIUM_PATH names; headless, without the
# background traffic that would disturb a measurement.
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def login_token(page: str) -> str:
    """The log-in form's pre-session token, from the HTML of GET /login."""
    found = re.search(r'name="login_token" value="([^"]+)"', page)
    if found is None:
        raise RuntimeError("the log-in page has no login token")
    return found.group(1)


def console_login(client: httpx.Client, name: str, password: str) -> httpx.Response:
    """POST /login as a browser does: GET the form first (its cookie and token), then submit;
    the client keeps the session cookie."""
    form = client.get("/login")
    fields = {"name": name, "password": password, "next": "/"}
    return client.post("/login", data={**fields, "login_token": login_token(form.text)})


def wait_healthy(proc: subprocess.Popen[bytes], url: str, timeout: float = 60.0) -> None:
    """Until `url`/health answers 200; the process is killed if it ends or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("the bench server did not start")
        time.sleep(0.1)


def start(database_url: str, tree: Path = ROOT) -> tuple[subprocess.Popen[bytes], str]:
    """The console of the checkout at `tree` over `database_url`, running; its base URL."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(tree)}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, database_url, str(port)], env=env, cwd=tree
    )
    url = f"http://127.0.0.1:{port}"
    wait_healthy(proc, url)
    return proc, url


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT, as an operator would stop it; killed after 30 s."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def serving(database_url: str) -> Iterator[str]:
    """`start`, then `stop` on leaving; the base URL."""
    proc, url = start(database_url)
    try:
        yield url
    finally:
        stop(proc)
