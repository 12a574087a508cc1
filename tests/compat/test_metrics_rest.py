"""Camunda 7.24's `GET /metrics/{metrics-name}/sum` and `GET /telemetry/data` against the real
server. Shapes pinned from Camunda's REST reference: the sum is `{"result": <number>}`, the
telemetry data `{installation, product: {name, version, edition, internals: {database: {vendor,
version}, application-server, license-key, commands, metrics, data-collection-start-date,
camunda-integration, webapps, jdk: {version, vendor}}}}`. An unknown metric name is Camunda's
InvalidRequestException (400)."""

from __future__ import annotations

import platform
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from tests.compat.conftest import camunda_date
from tests.server import PASSWORD, LiveServer

TELEMETRY = {"installation", "product"}
PRODUCT = {"name", "version", "edition", "internals"}
INTERNALS = {
    "database", "application-server", "license-key", "commands", "metrics",
    "data-collection-start-date", "camunda-integration", "webapps", "jdk",
}  # fmt: skip


def _review() -> ProcessModel:
    """start -> review (a user task) -> end."""
    return (
        ProcessBuilder("counted")
        .start_event("start")
        .user_task("review", "Review")
        .end_event("end")
        .chain("start", "review", "end")
        .build()
    )


def _sum(rest: httpx.Client, name: str, **dates: str) -> Any:
    response = rest.get(f"/metrics/{name}/sum", params=dates)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"result"}, body
    return body["result"]


def test_sums_count_started_instances_and_visits_by_period(
    server: LiveServer, rest: httpx.Client
) -> None:
    server.engine.deploy(_review())
    assert _sum(rest, "root-process-instance-start") == 0
    for _ in range(3):
        started = rest.post("/process-definition/key/counted/start", json={})
        assert started.status_code == 200, started.text
    task = rest.get("/task").json()[0]
    assert rest.post(f"/task/{task['id']}/complete", json={}).status_code == 204

    assert _sum(rest, "root-process-instance-start") == 3
    assert _sum(rest, "process-instances") == 3
    # One instance went start -> review -> end, two wait in review: 3 + 2 + 2 visits, of which
    # 3 + 1 + 1 ended.
    assert _sum(rest, "activity-instance-start") == 7
    assert _sum(rest, "flow-node-instances") == 7
    assert _sum(rest, "activity-instance-end") == 5

    now = datetime.now(UTC)
    day_ago, tomorrow = camunda_date(now - timedelta(days=1)), camunda_date(now + timedelta(days=1))
    assert _sum(rest, "root-process-instance-start", startDate=day_ago) == 3
    assert _sum(rest, "root-process-instance-start", startDate=day_ago, endDate=tomorrow) == 3
    assert _sum(rest, "root-process-instance-start", startDate=tomorrow) == 0
    assert _sum(rest, "root-process-instance-start", endDate=day_ago) == 0
    # A known metric that Interlock keeps no rows of.
    assert _sum(rest, "job-acquisition-attempt") == 0


def test_an_unknown_metric_or_a_bad_date_is_refused(rest: httpx.Client) -> None:
    response = rest.get("/metrics/no-such-metric/sum")
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["type"] == "InvalidRequestException"
    assert "no-such-metric" in body["message"]

    response = rest.get("/metrics/activity-instance-start/sum", params={"startDate": "soon"})
    assert response.status_code == 400, response.text
    assert "startDate" in response.json()["message"]


def test_the_metrics_interval_query_is_not_served_and_prometheus_stays(
    server: LiveServer, rest: httpx.Client
) -> None:
    assert rest.get("/metrics").status_code == 404
    scraped = httpx.get(f"{server.url}/metrics", auth=("admin", PASSWORD), timeout=30)
    assert scraped.status_code == 200, scraped.text
    names = {family.name for family in text_string_to_metric_families(scraped.text)}
    assert "interlock_commands" in names


def test_telemetry_data_has_camundas_shape(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    server.engine.deploy(_review())
    assert rest.post("/process-definition/key/counted/start", json={}).status_code == 200
    response = rest.get("/telemetry/data")
    assert response.status_code == 200, response.text
    data = response.json()
    assert set(data) == TELEMETRY
    assert isinstance(data["installation"], str) and data["installation"]
    # The same installation id on every request (it names the database).
    assert rest.get("/telemetry/data").json()["installation"] == data["installation"]
    product = data["product"]
    assert set(product) == PRODUCT
    assert product["edition"] == "community"
    assert product["version"].startswith("7.")
    internals = product["internals"]
    assert set(internals) == INTERNALS
    assert internals["database"]["vendor"] == "PostgreSQL"
    assert internals["database"]["version"][:2].isdigit()
    assert internals["jdk"] == {
        "version": platform.python_version(),
        "vendor": platform.python_implementation(),
    }
    assert internals["metrics"]["process-instances"] == {"count": 1}
    assert internals["metrics"]["flow-node-instances"] == {"count": 2}
    assert isinstance(internals["commands"], dict)

    refused = operator.get("/telemetry/data")
    assert refused.status_code == 403, refused.text
    assert refused.json()["type"] == "AuthorizationException"
    # Read only: nothing else is served under /telemetry.
    assert rest.post("/telemetry/data", json={}).status_code in (404, 405)
