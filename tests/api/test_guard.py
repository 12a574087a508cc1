"""The guard in front of every route, over a real server: security headers and request ids on
every response, bodies refused at their limit before they are read, undecodable headers and NUL
characters refused, errors that never carry internal text, links that never come from the Host
header, and a /health that tells strangers only that it is up."""

from __future__ import annotations

import base64
import logging
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.camunda.errors import translate
from app.guard import REQUEST_ID as REQUEST_ID_VAR
from app.main import create_app
from app.settings import Settings
from engine.api import Engine
from tests.api import processes
from tests.server import PASSWORD, LiveServer, free_port

LIMIT = 1024 * 1024  # the default of Settings.max_body_bytes
REQUEST_ID = re.compile(r"[0-9a-f]{32}")


def raw_request(server: LiveServer, head: str, body_parts: tuple[bytes, ...] = ()) -> bytes:
    """Send a request head and then `body_parts` over a plain socket, never finishing a chunked
    body, and read the answer: a server that waits for the rest times out here."""
    parts = urlsplit(server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
        for part in body_parts:
            sock.sendall(part)
        received = b""
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                received += data
                if b"\r\n\r\n" in received:
                    header, _, rest = received.partition(b"\r\n\r\n")
                    length = re.search(rb"(?i)content-length: *(\d+)", header)
                    if length and len(rest) >= int(length.group(1)):
                        break
        except TimeoutError:
            pytest.fail(f"no answer within 10 s; received {received[:200]!r}")
    return received


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def basic(role: str) -> str:
    return "Basic " + base64.b64encode(f"{role}:{PASSWORD}".encode()).decode()


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


# -- headers ------------------------------------------------------------------------------------


def test_every_response_has_security_headers_and_its_own_request_id(api: LiveServer) -> None:
    with httpx.Client(base_url=api.url, timeout=30) as http:
        answers = [
            http.get("/api/v1/definitions", headers=api.bearer("viewer")),
            http.get("/api/v1/definitions"),  # 401 from authentication
            http.get("/engine-rest/process-definition", headers={"Authorization": basic("viewer")}),
            http.get("/login"),
            http.get("/static/console.js"),
            http.get("/"),  # the redirect to /login
            http.get("/health"),
        ]
        ids = set()
        for answer in answers:
            headers = answer.headers
            assert headers["x-content-type-options"] == "nosniff", answer.url
            assert headers["x-frame-options"] == "DENY", answer.url
            assert headers["referrer-policy"] == "same-origin", answer.url
            assert "frame-ancestors 'none'" in headers["content-security-policy"], answer.url
            assert REQUEST_ID.fullmatch(headers["x-request-id"]), answer.url
            ids.add(headers["x-request-id"])
        assert len(ids) == len(answers)
        assert answers[1].status_code == 401
        assert answers[0].headers["content-security-policy"] == (
            "default-src 'none'; frame-ancestors 'none'"
        )

        forged = http.get("/health", headers={"X-Request-Id": "chosen-by-the-caller"})
        assert forged.headers["x-request-id"] != "chosen-by-the-caller"


def test_a_callers_uuid_request_id_is_kept_and_anything_else_replaced(api: LiveServer) -> None:
    hyphenated = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    bare = "0123456789abcdef0123456789abcdef"
    with httpx.Client(base_url=api.url, timeout=30) as http:
        kept = [http.get("/health", headers={"X-Request-Id": sent}) for sent in (hyphenated, bare)]
        assert [answer.headers["x-request-id"] for answer in kept] == [hyphenated.lower(), bare]
        for sent in ("0123456789abcdef0123456789abcdeg", bare + "0", "x" * 32, "", "-" * 36):
            replaced = http.get("/health", headers={"X-Request-Id": sent})
            assert REQUEST_ID.fullmatch(replaced.headers["x-request-id"]), sent
            assert replaced.headers["x-request-id"] != sent.lower()


def test_pages_get_the_strict_policy_with_a_fresh_nonce(api: LiveServer) -> None:
    with httpx.Client(base_url=api.url, timeout=30) as http:
        first, second = http.get("/login"), http.get("/login")
    policies = [a.headers["content-security-policy"] for a in (first, second)]
    nonces = []
    for policy in policies:
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["default-src"] == "'self'"
        nonce = re.fullmatch(r"'self' 'nonce-([A-Za-z0-9_-]{24})'", directives["script-src"])
        assert nonce, directives["script-src"]
        nonces.append(nonce.group(1))
        assert directives["style-src"] == "'self' 'unsafe-inline'"
        assert directives["img-src"] == "'self' data:"
        assert directives["connect-src"] == "'self'"
        assert directives["object-src"] == "'none'"
        assert directives["base-uri"] == "'none'"
        assert directives["form-action"] == "'self'"
        assert directives["frame-ancestors"] == "'none'"
    assert nonces[0] != nonces[1]


def test_deployed_xml_is_never_served_as_a_document(api: LiveServer) -> None:
    [row] = api.engine.definitions("straight")[:1]
    with httpx.Client(base_url=api.url, timeout=30, headers=api.bearer("viewer")) as http:
        xml = http.get(f"/api/v1/definitions/{row.id}/xml")
    assert xml.status_code == 200
    assert xml.headers["content-disposition"].startswith("attachment;")
    assert xml.headers["content-security-policy"] == "sandbox; default-src 'none'"
    assert xml.headers["x-content-type-options"] == "nosniff"
    assert "<" in xml.text


# -- bodies -------------------------------------------------------------------------------------


def test_a_declared_length_over_the_limit_is_refused_before_reading(api: LiveServer) -> None:
    for path in ("/engine-rest/process-definition/key/straight/start", "/api/v1/deployments"):
        answer = raw_request(
            api,
            f"POST {path} HTTP/1.1\nHost: 127.0.0.1\nAuthorization: {basic('admin')}\n"
            "Content-Type: application/json\nContent-Length: 100000000\n",
        )
        assert status_of(answer) == 413, answer[:300]
        assert b'"message"' in answer and b"larger than" in answer


def test_a_chunked_body_is_cut_off_at_the_limit(api: LiveServer) -> None:
    before = api.engine.instance_counts()
    piece = b" " * 65536
    body = tuple([chunk(b'{"variables": {}' + piece[16:])] + [chunk(piece)] * (LIMIT // 65536))
    for path, auth in (
        ("/engine-rest/process-definition/key/straight/start", basic("operator")),
        ("/api/v1/definitions/key/straight/start", f"Bearer {api.tokens['operator']}"),
    ):
        started = time.monotonic()
        answer = raw_request(
            api,
            f"POST {path} HTTP/1.1\nHost: 127.0.0.1\nAuthorization: {auth}\n"
            "Content-Type: application/json\nTransfer-Encoding: chunked\n",
            body,
        )
        assert status_of(answer) == 413, answer[:300]
        assert time.monotonic() - started < 5
    assert api.engine.instance_counts() == before


def test_deployments_may_be_larger_than_other_bodies(admin: httpx.Client) -> None:
    padding = "<!-- " + "x" * (2 * LIMIT) + " -->"
    source = processes.xml(processes.straight("large-upload"))
    end = source.rindex("</")
    source = source[:end] + padding + source[end:]
    answer = admin.post(
        "/deployments", files={"files": ("large.bpmn", source.encode(), "application/xml")}
    )
    assert answer.status_code == 201, answer.text[:300]


# -- what no route should see -------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/health", "/login", "/api/v1/definitions", "/definitions"])
def test_a_header_that_is_not_utf8_is_a_400(api: LiveServer, path: str) -> None:
    with httpx.Client(base_url=api.url, timeout=30) as http:
        bearer = api.bearer("viewer")["Authorization"].encode()
        answer = http.get(path, headers={b"Authorization": bearer, b"X-Foo": b"\xff"})
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["type"] == "BadRequest" and "x-foo" in body["message"]


def test_a_nul_in_the_path_or_query_is_a_400_naming_it(api: LiveServer) -> None:
    with httpx.Client(base_url=api.url, timeout=30, headers=api.bearer("viewer")) as http:
        query = http.get("/api/v1/instances?business_key=%00")
        assert query.status_code == 400, query.text
        assert "'business_key'" in query.json()["message"]
        rest = http.get("/engine-rest/process-instance?businessKey=a%00b")
        assert rest.status_code == 400, rest.text
        assert rest.json()["type"] == "InvalidRequestException"
        assert "'businessKey'" in rest.json()["message"]
        for path in ("/definitions/%00", "/api/v1/definitions/%00/xml"):
            answer = http.get(path)
            assert answer.status_code == 400, (path, answer.text)
            assert "path" in answer.json()["message"]


def test_camunda_errors_do_not_carry_internal_text(api: LiveServer) -> None:
    nested = '{"variables": {"a": {"value": ' + "[" * 50_000 + "]" * 50_000 + "}}}"
    with httpx.Client(
        base_url=f"{api.url}/engine-rest", timeout=30, headers={"Authorization": basic("operator")}
    ) as http:
        answers = [
            http.post("/process-definition/key/straight/start", json={"businessKey": "a\x00b"}),
            http.post(
                "/process-definition/key/straight/start",
                content=nested,
                headers={"Content-Type": "application/json"},
            ),
        ]
    for answer in answers:
        assert answer.status_code in (400, 500), answer.text
        for leak in ("DataError", "RecursionError", "psycopg", "0x00", "recursion"):
            assert leak not in answer.text, answer.text
        if answer.status_code == 500:
            assert answer.headers["x-request-id"] in answer.json()["message"]


# -- a server of this module's own: an unhandled fault, a public URL ------------------------------


@contextmanager
def serve(database_url: str, **settings: Any) -> Iterator[tuple[str, Engine]]:
    """The real application with one more route that fails the way a bug would."""

    async def broken(request: Request) -> Response:
        raise RuntimeError("secret internal detail 0xDEADBEEF")

    engine = Engine(database_url, migrate=False)
    app = create_app(Settings(database_url=database_url, auth=False, **settings), engine)
    app.router.routes.insert(0, Route("/api/v1/broken", broken))
    app.router.routes.insert(0, Route("/broken", broken))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", engine
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        engine.close()


def test_an_unhandled_fault_is_a_generic_500_logged_with_its_request_id(
    database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="interlock")
    with serve(database_url) as (url, _), httpx.Client(base_url=url, timeout=30) as http:
        for path in ("/api/v1/broken", "/broken"):
            answer = http.get(path)
            assert answer.status_code == 500
            request_id = answer.headers["x-request-id"]
            assert answer.json() == {
                "type": "InternalError",
                "message": f"internal error; request id {request_id}",
                "detail": {"request_id": request_id},
            }
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert "DEADBEEF" not in answer.text
            logged = [r for r in caplog.records if request_id in r.getMessage()]
            assert logged and logged[0].exc_info is not None
            assert "0xDEADBEEF" in str(logged[0].exc_info[1])


def test_links_come_from_the_public_url_when_set(database_url: str) -> None:
    with serve(database_url, public_url="https://bpm.example.com/") as (url, engine):
        engine.deploy(processes.straight())
        # Without authentication only loopback names reach the server (test_loopback_mode.py).
        with httpx.Client(base_url=url, timeout=30, headers={"Host": "localhost.:1"}) as http:
            started = http.post("/engine-rest/process-definition/key/straight/start", json={})
            page = http.get("/definitions")
    assert started.status_code == 200, started.text
    href = started.json()["links"][0]["href"]
    assert href.startswith("https://bpm.example.com/engine-rest/process-instance/"), href
    assert started.headers["strict-transport-security"].startswith("max-age=")
    assert page.status_code == 200 and "localhost" not in page.text


# -- Host header, /health -----------------------------------------------------------------------


def test_the_host_header_is_never_reflected(api: LiveServer) -> None:
    with httpx.Client(base_url=api.url, timeout=30, headers={"Host": "evil.example"}) as http:
        started = http.post(
            "/engine-rest/process-definition/key/straight/start",
            json={},
            headers={"Authorization": basic("operator")},
        )
        login = http.get("/login")
    assert started.status_code == 200, started.text
    href = started.json()["links"][0]["href"]
    assert href.startswith(f"{api.url}/engine-rest/process-instance/"), href
    assert login.status_code == 200
    assert "evil.example" not in login.text
    assert 'href="/static/console.css"' in login.text


def test_with_authentication_mutations_from_another_origin_are_refused(api: LiveServer) -> None:
    """With authentication on, `Host` is not checked (test above: a rebinding page has no
    credentials, and proxies and probes send all kinds of Host), but a mutation from another
    site's page is refused even when the browser holds credentials (HTTP Basic it cached)."""
    evil = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
    start = "/engine-rest/process-definition/key/straight/start"
    with httpx.Client(base_url=api.url, timeout=30) as http:
        count = http.get("/engine-rest/history/process-instance/count", headers=api.bearer())
        for auth in (basic("operator"), f"Bearer {api.tokens['operator']}"):
            refused = http.post(start, content="{}", headers={**evil, "Authorization": auth})
            assert refused.status_code == 403, refused.text
            assert refused.json()["type"] == "AuthorizationException"
            created = http.post(
                "/api/v1/users",
                content='{"name": "intruder", "role": "admin"}',
                headers={**evil, "Authorization": basic("admin")},
            )
            assert created.status_code == 403 and created.json()["type"] == "Forbidden"
        again = http.get("/engine-rest/history/process-instance/count", headers=api.bearer())
        assert again.json() == count.json()
        users = http.get("/api/v1/users", headers=api.bearer()).json()["items"]
        assert "intruder" not in {user["name"] for user in users}
        started = http.post(start, json={}, headers={"Authorization": basic("operator")})
        assert started.status_code == 200, started.text


def test_health_shows_counts_only_to_known_callers(api: LiveServer) -> None:
    with httpx.Client(base_url=api.url, timeout=30) as http:
        assert http.get("/health").json() == {"status": "ok"}
        wrong = http.get("/health", headers={"Authorization": "Bearer not-a-token"})
        assert wrong.status_code == 200 and wrong.json() == {"status": "ok"}
        for auth in (f"Bearer {api.tokens['viewer']}", basic("viewer")):
            known = http.get("/health", headers={"Authorization": auth}).json()
            assert known["status"] == "ok" and "instances" in known, auth


def test_an_untranslated_camunda_error_names_only_the_request_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = REQUEST_ID_VAR.set("0123456789abcdef0123456789abcdef")
    try:
        with caplog.at_level(logging.ERROR, logger="interlock.camunda"):
            error = translate(RecursionError("maximum recursion depth exceeded in secret()"))
    finally:
        REQUEST_ID_VAR.reset(token)
    assert error.status == 500 and error.type == "ProcessEngineException"
    assert error.message == "internal error; request id 0123456789abcdef0123456789abcdef"
    [logged] = [r for r in caplog.records if "0123456789abcdef" in r.getMessage()]
    assert "RecursionError" in logged.getMessage() and "secret()" in logged.getMessage()
