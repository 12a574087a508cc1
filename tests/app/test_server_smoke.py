"""The server starts, authenticates, and refuses what it should."""

from __future__ import annotations

import httpx

from tests.server import LiveServer, console_login


def test_health_and_authentication(server: LiveServer) -> None:
    assert httpx.get(f"{server.url}/health").json()["status"] == "ok"
    login = console_login(server.url, "viewer")
    assert login.status_code == 303 and "interlock_session" in login.headers["set-cookie"]
    wrong = console_login(server.url, "viewer", "nope")
    assert wrong.status_code == 401
    page = httpx.get(f"{server.url}/", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].startswith("/login")
    cookies = {"interlock_session": login.cookies["interlock_session"]}
    assert httpx.get(f"{server.url}/", cookies=cookies).status_code == 200
    forged = httpx.post(f"{server.url}/logout", cookies=cookies)
    assert forged.status_code == 403 and forged.json()["type"] == "Forbidden"
