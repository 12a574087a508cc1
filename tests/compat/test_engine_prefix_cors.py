"""What every /engine-rest path shares: the named engine's prefix (`/engine-rest/engine/default/...`
answers as `/engine-rest/...`; another engine name is refused as Camunda refuses it), unknown
query parameters ignored and wrongly typed ones refused naming themselves, and CORS for
front-ends of the origins `INTERLOCK_CORS_ORIGINS` lists (a preflight answered, nothing allowed
to any other origin, nor on the console's paths). The CORS proof runs in Chromium: a page of a
listed origin reads the API, a page of another origin cannot."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser

from app.settings import CORS_ENV, Settings, cors_origins
from tests.compat import processes
from tests.compat.conftest import deploy, start
from tests.server import PASSWORD, LiveServer, live_server

PREFIX = "/engine-rest/engine/default"


@pytest.fixture
def named(server: LiveServer) -> Iterator[httpx.Client]:
    """An admin's client on the default engine's named prefix."""
    with httpx.Client(
        base_url=f"{server.url}{PREFIX}", auth=("admin", PASSWORD), timeout=30
    ) as client:
        yield client


def _json(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def test_the_named_engine_serves_the_same_answers(
    rest: httpx.Client, named: httpx.Client, server: LiveServer
) -> None:
    assert _json(rest.get("/engine")) == [{"name": "default"}]
    created = deploy(named, ("approval.bpmn", processes.approval()))
    assert created["links"][0]["href"] == f"{server.url}{PREFIX}/deployment/{created['id']}"
    instance = start(named, "approval")
    for path, params in (
        ("/deployment", {}),
        ("/deployment/count", {}),
        (f"/deployment/{created['id']}", {}),
        (f"/deployment/{created['id']}/resources", {}),
        ("/process-definition", {"latestVersion": "true"}),
        ("/task", {"processInstanceId": instance["id"]}),
        ("/history/process-instance/count", {}),
        ("/version", {}),
    ):
        plain, prefixed = rest.get(path, params=params), named.get(path, params=params)
        assert prefixed.status_code == plain.status_code == 200, (path, prefixed.text)
        assert prefixed.json() == plain.json(), path
    (resource,) = _json(named.get(f"/deployment/{created['id']}/resources"))
    data = named.get(f"/deployment/{created['id']}/resources/{resource['id']}/data")
    assert data.content == processes.approval().encode()

    missing = named.get("/no-such-resource")
    assert missing.status_code == 404
    assert missing.json() == {"type": "NotFoundException", "message": "HTTP 404 Not Found"}

    # Another engine name: Camunda's answer for an engine it does not have.
    other = rest.get("/engine/other/process-definition")
    assert other.status_code == 400
    assert other.json() == {
        "type": "InvalidRequestException",
        "message": "No process engine available",
    }
    # The prefix asks for credentials as the plain paths do.
    assert httpx.get(f"{server.url}{PREFIX}/process-definition").status_code == 401


def test_unknown_parameters_are_ignored_and_wrong_types_named(
    rest: httpx.Client, named: httpx.Client
) -> None:
    deploy(rest, ("approval.bpmn", processes.approval()))
    start(rest, "approval")
    for client in (rest, named):
        for path in ("/process-instance", "/task", "/deployment", "/process-definition"):
            plain = _json(client.get(path))
            assert _json(client.get(path, params={"noSuchFilter": "x", "alsoUnknown": ""})) == plain
        for path, name, value in (
            ("/process-instance", "maxResults", "ten"),
            ("/task", "firstResult", "1.5"),
            ("/deployment", "withoutTenantId", "yes"),
            ("/deployment/count", "before", "soon"),
            ("/process-instance/count", "suspended", "perhaps"),
        ):
            refused = client.get(path, params={name: value})
            assert refused.status_code == 400, (path, refused.text)
            body = refused.json()
            assert body["type"] == "InvalidRequestException"
            assert f"query parameter '{name}'" in body["message"], body


class _Page(BaseHTTPRequestHandler):
    """A front-end served from an origin of its own: one empty page."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>front-end</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _front_end() -> tuple[ThreadingHTTPServer, str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture
def fronts() -> Iterator[tuple[str, str]]:
    """Two front-ends on origins of their own: the first is listed, the second is not."""
    listed, listed_origin = _front_end()
    other, other_origin = _front_end()
    try:
        yield listed_origin, other_origin
    finally:
        for httpd in (listed, other):
            httpd.shutdown()
            httpd.server_close()


FETCH = """async ([url, auth]) => {
  try {
    const response = await fetch(url, {headers: {Authorization: auth}});
    return {status: response.status, body: await response.json()};
  } catch (error) {
    return {blocked: String(error)};
  }
}"""


def test_cors_lets_listed_origins_in_and_no_other(
    database_url: str, fronts: tuple[str, str], browser: Browser
) -> None:
    listed, other = fronts
    options = {"cors_origins": (listed,)}
    with live_server(database_url, run_jobs=False, settings_options=options) as server:
        api = f"{server.url}/engine-rest/deployment/count"
        preflight = {"Access-Control-Request-Method": "GET"}
        allowed = httpx.options(
            api,
            headers={
                "Origin": listed,
                **preflight,
                "Access-Control-Request-Headers": "authorization",
            },
        )
        assert allowed.status_code == 200, allowed.text
        assert allowed.headers["access-control-allow-origin"] == listed
        assert allowed.headers["access-control-allow-credentials"] == "true"
        assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
        refused = httpx.options(api, headers={"Origin": other, **preflight})
        assert refused.status_code == 400
        assert "access-control-allow-origin" not in refused.headers
        # The named prefix and /api/v1 too; the console's paths never.
        named = f"{server.url}{PREFIX}/deployment/count"
        assert httpx.options(named, headers={"Origin": listed, **preflight}).status_code == 200
        native = httpx.options(
            f"{server.url}/api/v1/instances", headers={"Origin": listed, **preflight}
        )
        assert native.headers.get("access-control-allow-origin") == listed
        login = httpx.get(f"{server.url}/login", headers={"Origin": listed})
        assert "access-control-allow-origin" not in login.headers
        assert "script-src 'self' 'nonce-" in login.headers["content-security-policy"]
        simple = httpx.get(api, headers={"Origin": other}, auth=("viewer", PASSWORD))
        assert simple.status_code == 200
        assert "access-control-allow-origin" not in simple.headers

        auth = "Basic " + base64.b64encode(f"viewer:{PASSWORD}".encode()).decode()
        results = [_fetch_from(browser, origin, api, auth) for origin in (listed, other)]
        assert results[0] == {"status": 200, "body": {"count": 0}}, results[0]
        assert "blocked" in results[1], results[1]

        # A listed origin's page may change things too (a Tasklist-style front-end completes
        # tasks); another origin's change is refused by the cross-origin guard, and the console's
        # paths stay closed to the listed origin.
        with httpx.Client(base_url=f"{server.url}/engine-rest", auth=("admin", PASSWORD)) as admin:
            deploy(admin, ("approval.bpmn", processes.approval()))
        start_url = f"{server.url}/engine-rest/process-definition/key/approval/start"
        cross_site = {"Sec-Fetch-Site": "cross-site"}
        started = httpx.post(
            start_url,
            json={},
            headers={"Origin": listed, **cross_site},
            auth=("operator", PASSWORD),
        )
        assert started.status_code == 200, started.text
        assert started.headers["access-control-allow-origin"] == listed
        forged = httpx.post(
            start_url, json={}, headers={"Origin": other, **cross_site}, auth=("operator", PASSWORD)
        )
        assert forged.status_code == 403
        assert "cross-origin request refused" in forged.text
        console_post = httpx.post(
            f"{server.url}/login",
            data={"username": "operator", "password": PASSWORD},
            headers={"Origin": listed, **cross_site},
        )
        assert console_post.status_code == 403


def _fetch_from(browser: Browser, origin: str, api: str, auth: str) -> Any:
    """What a page served from `origin` gets when it fetches `api` in Chromium."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(origin)
        return page.evaluate(FETCH, [api, auth])
    finally:
        context.close()


def test_cors_is_off_by_default(server: LiveServer) -> None:
    response = httpx.options(
        f"{server.url}/engine-rest/deployment/count",
        headers={"Origin": "http://127.0.0.1:1", "Access-Control-Request-Method": "GET"},
    )
    assert "access-control-allow-origin" not in response.headers


def test_cors_origins_are_exact_origins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CORS_ENV, " https://tasks.example.com, http://localhost:5173 ,")
    assert Settings.from_env().cors_origins == (
        "https://tasks.example.com",
        "http://localhost:5173",
    )
    for wrong in ("*", "https://*.example.com", "https://a.example/app", "tasks.example.com"):
        with pytest.raises(ValueError, match=CORS_ENV):
            cors_origins(wrong)
    monkeypatch.delenv(CORS_ENV)
    assert Settings.from_env().cors_origins == ()
