"""`interlock serve --no-auth` (loopback only) over a real server, attacked the way a browser
can be made to: a page of another site whose name is rebound to 127.0.0.1 (a foreign `Host`)
reaches nothing, and a mutation a page of another site sends (a foreign `Origin`, or
`Sec-Fetch-Site: cross-site`; multipart and text/plain bodies need no preflight) is refused
and writes nothing, on the console, /api/v1 and /engine-rest alike. Scripts and workers, which
send no `Origin`, and the console's own pages work as before."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.api import processes
from tests.server import LiveServer, live_server

EVIL = "http://evil.example"
PUBLIC = "http://bpm.internal.test"


@pytest.fixture(scope="module")
def open_server(module_database_url: str) -> Iterator[LiveServer]:
    with live_server(module_database_url, auth=False, run_jobs=False) as server:
        server.engine.deploy(processes.straight(), name="loopback tests")
        yield server


def port_of(server: LiveServer) -> int:
    port = urlsplit(server.url).port
    assert port is not None
    return port


def bpmn(key: str) -> dict[str, Any]:
    source = processes.xml(processes.straight(key)).encode()
    return {"files": (f"{key}.bpmn", source, "application/xml")}


def definitions(http: httpx.Client, key: str) -> list[Any]:
    answer = http.get("/api/v1/definitions", params={"key": key})
    assert answer.status_code == 200, answer.text
    items: list[Any] = answer.json()["items"]
    return items


def instance_count(http: httpx.Client) -> int:
    answer = http.get("/engine-rest/history/process-instance/count")
    assert answer.status_code == 200, answer.text
    count: int = answer.json()["count"]
    return count


def user_names(http: httpx.Client) -> set[str]:
    answer = http.get("/api/v1/users")
    assert answer.status_code == 200, answer.text
    return {user["name"] for user in answer.json()["items"]}


PLAIN = {"Content-Type": "text/plain"}


def mutations(http: httpx.Client, key: str, user: str, **headers: str) -> list[httpx.Response]:
    """The three writes a page of another site can send without a preflight: a multipart
    deployment, a text/plain start and a text/plain new admin."""
    new_admin = json.dumps({"name": user, "role": "admin", "password": "a-long-password-1"})
    return [
        http.post("/api/v1/deployments", files=bpmn(key), headers=headers),
        http.post(
            "/engine-rest/process-definition/key/straight/start",
            content="{}",
            headers={**PLAIN, **headers},
        ),
        http.post("/api/v1/users", content=new_admin, headers={**PLAIN, **headers}),
    ]


def test_a_foreign_host_reaches_nothing(open_server: LiveServer) -> None:
    port = port_of(open_server)
    with httpx.Client(base_url=open_server.url, timeout=30) as http:
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}"):
            for path in ("/api/v1/definitions", "/api/v1/users", "/health", "/metrics"):
                answer = http.get(path, headers={"Host": host})
                assert answer.status_code == 421, (host, path, answer.text)
                body = answer.json()
                assert body["type"] == "MisdirectedRequest"
                assert host in body["message"] and "host" in body["message"]
            camunda = http.get("/engine-rest/process-definition", headers={"Host": host})
            assert camunda.status_code == 421
            assert camunda.json()["type"] == "InvalidRequestException"
            assert host in camunda.json()["message"]
            for page in ("/", "/definitions", "/login", "/static/console.css"):
                answer = http.get(page, headers={"Host": host})
                assert answer.status_code == 421, (host, page)
                assert "straight" not in answer.text
            assert "evil.example" not in str(answer.headers.get("location", ""))
        # Nor does a write: refused before it is read.
        before = instance_count(http)
        started = http.post(
            "/engine-rest/process-definition/key/straight/start",
            json={},
            headers={"Host": f"evil.example:{port}"},
        )
        assert started.status_code == 421
        assert instance_count(http) == before


def test_a_request_without_host_is_refused(open_server: LiveServer) -> None:
    with socket.create_connection(("127.0.0.1", port_of(open_server)), timeout=10) as sock:
        sock.sendall(b"GET /api/v1/definitions HTTP/1.0\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == b"421", head
    assert json.loads(body)["type"] == "MisdirectedRequest"


def test_loopback_hosts_are_accepted(open_server: LiveServer) -> None:
    port = port_of(open_server)
    hosts = (
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        f"[::1]:{port}",
        f"LocalHost:{port}",
        f"localhost.:{port}",
        f"127.0.0.2:{port}",
        "localhost",
        "[::1]",
    )
    with httpx.Client(base_url=open_server.url, timeout=30) as http:
        for host in hosts:
            for path in ("/api/v1/definitions", "/engine-rest/process-definition", "/definitions"):
                answer = http.get(path, headers={"Host": host})
                assert answer.status_code == 200, (host, path, answer.text)
            assert "straight" in answer.text


def test_mutations_from_another_origin_are_refused_and_write_nothing(
    open_server: LiveServer,
) -> None:
    with httpx.Client(base_url=open_server.url, timeout=30) as http:
        count = instance_count(http)
        refusals = (
            {"Origin": EVIL},
            {"Origin": f"{EVIL}:{port_of(open_server)}"},
            {"Origin": "null"},
            {"Origin": open_server.url.replace("http://", "https://")},
            {"Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-site"},
            {"Origin": open_server.url, "Sec-Fetch-Site": "cross-site"},
        )
        for n, headers in enumerate(refusals):
            deployed, started, created = mutations(http, f"evil{n}", f"intruder{n}", **headers)
            for answer in (deployed, created):
                assert answer.status_code == 403, (headers, answer.text)
                assert answer.json()["type"] == "Forbidden"
                assert "cross-origin request refused" in answer.json()["message"]
            assert started.status_code == 403, (headers, started.text)
            assert started.json()["type"] == "AuthorizationException"
            assert "cross-origin request refused" in started.json()["message"]
            assert definitions(http, f"evil{n}") == []
            # The console's own mutations too (its CSRF token is not checked without auth).
            console = http.post(
                "/incidents/00000000-0000-0000-0000-000000000000/retry", headers=headers
            )
            assert console.status_code == 403, (headers, console.text)
        assert instance_count(http) == count
        assert not {name for name in user_names(http) if name.startswith("intruder")}


def test_scripts_and_the_servers_own_pages_still_write(open_server: LiveServer) -> None:
    """Workers, CLI clients and curl send no Origin; the console's pages send their own origin
    (and Sec-Fetch-Site: same-origin)."""
    own = {"Origin": open_server.url, "Sec-Fetch-Site": "same-origin"}
    with httpx.Client(base_url=open_server.url, timeout=30) as http:
        count = instance_count(http)
        for n, headers in enumerate(({}, own, {"Sec-Fetch-Site": "none"})):
            deployed, started, created = mutations(http, f"mine{n}", f"scripted{n}", **headers)
            assert deployed.status_code == 201, deployed.text
            assert started.status_code == 200, started.text
            assert created.status_code == 201, created.text
            assert [d["key"] for d in definitions(http, f"mine{n}")] == [f"mine{n}"]
        assert instance_count(http) == count + 3
        assert {f"scripted{n}" for n in range(3)} <= user_names(http)
        missing = "/incidents/00000000-0000-0000-0000-000000000000/retry"
        assert http.post(missing, headers=own).status_code == 404
        localhost = {"Host": f"localhost:{port_of(open_server)}"}
        same = {**localhost, "Origin": f"http://localhost:{port_of(open_server)}"}
        started = http.post(
            "/engine-rest/process-definition/key/straight/start", json={}, headers=same
        )
        assert started.status_code == 200, started.text


def test_the_public_urls_host_is_accepted(database_url: str) -> None:
    options = {"public_url": PUBLIC}
    with (
        live_server(database_url, auth=False, run_jobs=False, settings_options=options) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        server.engine.deploy(processes.straight())
        port = port_of(server)
        for host in ("bpm.internal.test", f"bpm.internal.test:{port}", f"127.0.0.1:{port}"):
            answer = http.get("/api/v1/definitions", headers={"Host": host})
            assert answer.status_code == 200, (host, answer.text)
        assert http.get("/", headers={"Host": "evil.example"}).status_code == 421
        public = {"Host": "bpm.internal.test", "Origin": PUBLIC}
        started = http.post(
            "/engine-rest/process-definition/key/straight/start", json={}, headers=public
        )
        assert started.status_code == 200, started.text
        # With a public URL, it is the only origin of this server's own pages.
        local = {"Origin": server.url}
        refused = http.post(
            "/engine-rest/process-definition/key/straight/start", json={}, headers=local
        )
        assert refused.status_code == 403, refused.text
