"""/engine-rest's probes over HTTP: GET /engine lists the one engine, GET /version names the
Camunda 7 version the API follows; any authenticated caller (everyone, with authentication off)
may ask."""

from __future__ import annotations

import httpx

from tests.server import PASSWORD, LiveServer, live_server


def test_engine_and_version_probes(server: LiveServer) -> None:
    base = f"{server.url}/engine-rest"
    for auth in (("viewer", PASSWORD), ("admin", PASSWORD)):
        with httpx.Client(base_url=base, auth=auth, timeout=10) as client:
            engines = client.get("/engine")
            assert engines.status_code == 200
            assert engines.headers["content-type"] == "application/json"
            assert engines.json() == [{"name": "default"}]
            version = client.get("/version")
            assert version.status_code == 200
            assert version.json() == {"version": "7.24.0"}
            assert client.post("/version").status_code == 404
    with httpx.Client(base_url=base, headers=server.bearer("viewer"), timeout=10) as client:
        assert client.get("/version").json() == {"version": "7.24.0"}
    with httpx.Client(base_url=base, timeout=10) as anonymous:
        for path in ("/engine", "/version"):
            response = anonymous.get(path)
            assert response.status_code == 401
            assert "www-authenticate" in response.headers


def test_probes_answer_everyone_when_authentication_is_off(database_url: str) -> None:
    with (
        live_server(database_url, auth=False, run_jobs=False) as open_server,
        httpx.Client(base_url=f"{open_server.url}/engine-rest", timeout=10) as client,
    ):
        assert client.get("/engine").json() == [{"name": "default"}]
        assert client.get("/version").json() == {"version": "7.24.0"}
