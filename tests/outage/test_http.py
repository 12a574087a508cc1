"""What every surface answers while the engine finds the database unreachable (its next look, a
connection attempt, is refused): 503 with Retry-After, at once, in the surface's own shape; and
/health degraded. When the database answers again, so does everything."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import psycopg
import pytest

from engine.api import Engine
from engine.observe import metrics
from tests.server import LiveServer, console_login, live_server
from tests.waiting import wait_until


@pytest.fixture
def server(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url) as running:
        yield running


def cut_off(engine: Engine) -> list[bool]:
    """From now on the engine's connection attempts are refused until `state[0] = False`."""
    availability = engine.availability
    probe = availability._probe
    state = [True]

    def looking() -> None:
        if state[0]:
            raise psycopg.OperationalError("connection refused")
        probe()

    def marked_up() -> None:
        # Work already under way when the test cut the database off may still succeed; only
        # a look after the cut ends the outage.
        if not state[0]:
            mark_up()

    mark_up = availability.mark_up
    availability._probe = looking
    availability.mark_up = marked_up  # type: ignore[method-assign]
    availability.mark_down("cut off by the test")
    return state


SURFACES: dict[str, tuple[str, str, dict[str, str]]] = {
    "api": ("GET", "/api/v1/instances", {}),
    "start": ("POST", "/api/v1/definitions/key/none/start", {}),
    "camunda": ("GET", "/engine-rest/process-instance", {}),
    "stream": ("GET", "/api/v1/stream", {}),
}


def test_every_surface_answers_503_at_once_while_the_database_is_unreachable(
    server: LiveServer,
) -> None:
    state = cut_off(server.engine)
    assert metrics.DATABASE_UP._value.get() == 0
    with httpx.Client(base_url=server.url, headers=server.bearer("admin"), timeout=5) as client:
        for surface, (method, path, headers) in SURFACES.items():
            started = time.monotonic()
            response = client.request(method, path, headers=headers)
            assert time.monotonic() - started < 1.0, surface
            assert response.status_code == 503, (surface, response.text)
            assert response.headers["retry-after"] == "2"
            body = response.json()
            if surface == "camunda":
                assert body == {
                    "type": "ProcessEngineException",
                    "message": "the database is unavailable; try again shortly",
                }
            else:
                assert body == {
                    "type": "DatabaseUnavailable",
                    "message": "the database is unavailable; try again shortly",
                    "detail": {},
                }
        health = client.get("/health")
        assert health.status_code == 503
        assert health.json() == {"status": "degraded", "reason": "database unavailable"}
        anonymous = httpx.get(server.url + "/health", timeout=5)
        assert anonymous.status_code == 503
        assert anonymous.json() == {"status": "degraded", "reason": "database unavailable"}

    state[0] = False
    with httpx.Client(base_url=server.url, headers=server.bearer("admin"), timeout=5) as client:
        # The next look at the database is due shortly; until then the answer stays 503.
        wait_until(lambda: client.get("/health").status_code == 200, "the database looked at again")
        health = client.get("/health")
        assert health.json()["status"] == "ok"
        assert client.get("/api/v1/instances").status_code == 200
    assert metrics.DATABASE_UP._value.get() == 1


def test_console_page_loads_and_fragments_answer_503(server: LiveServer) -> None:
    logged_in = console_login(server.url, "viewer")
    cookies = {"interlock_session": logged_in.cookies["interlock_session"]}
    cut_off(server.engine)
    with httpx.Client(base_url=server.url, timeout=5, cookies=cookies) as client:
        # The session cookie is read from the database: even that fails fast.
        response = client.get("/instances", headers={"Accept": "text/html"})
    assert response.status_code == 503
    assert response.headers["retry-after"] == "2"
    assert response.headers["content-type"].startswith("text/html")
    assert 'id="db-banner"' in response.text and "Database unavailable." in response.text
    assert "script" not in response.text  # the page reloads itself without one (strict CSP)
    with httpx.Client(base_url=server.url, timeout=5, cookies=cookies) as client:
        fragment = client.get("/instances", headers={"Accept": "text/html", "HX-Request": "true"})
    assert fragment.status_code == 503
    assert fragment.headers["retry-after"] == "2"
    assert fragment.json()["type"] == "DatabaseUnavailable"


def test_an_unknown_bearer_token_while_down_is_503_not_401(server: LiveServer) -> None:
    cut_off(server.engine)
    response = httpx.get(
        server.url + "/api/v1/instances", headers={"Authorization": "Bearer nope"}, timeout=5
    )
    assert response.status_code == 503
    assert response.json()["type"] == "DatabaseUnavailable"
