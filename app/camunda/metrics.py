"""Camunda's metrics sum and telemetry data, read only: the counts Operaton's and Camunda's
web apps show on their start pages, answered from the summary rows
(engine/queries/camunda/metrics.py). Camunda's interval query (`GET /metrics`) is not served;
the console's Prometheus `/metrics` is another path, outside /engine-rest."""

from __future__ import annotations

import platform

from starlette.responses import Response

from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, json_response
from app.camunda.probes import CAMUNDA_VERSION
from app.gates import Gate
from engine.queries.camunda import metrics as metric_reads

PRODUCT_NAME = "Interlock"


def metric_sum(call: Call) -> Response:
    name = call.path["name"]
    if name not in metric_reads.METRICS:
        raise invalid_request(
            f"Metric with name '{name}' is not supported; supported names: "
            + ", ".join(metric_reads.METRICS)
        )
    start, end = call.date("startDate"), call.date("endDate")
    return json_response({"result": metric_reads.metric_sum(call.engine, name, start, end)})


def telemetry(call: Call) -> Response:
    """Camunda's TelemetryDataDto: what Interlock runs on. Nothing is ever sent anywhere. It
    names the database's version: an administrator's, as Camunda asks camunda-admin."""
    database = metric_reads.database_info(call.engine)
    counted = {
        name: {"count": metric_reads.metric_sum(call.engine, name)}
        for name in ("process-instances", "flow-node-instances")
    }
    return json_response(
        {
            "installation": database.installation,
            "product": {
                "name": PRODUCT_NAME,
                "version": CAMUNDA_VERSION,
                "edition": "community",
                "internals": {
                    "database": {"vendor": database.vendor, "version": database.version},
                    "application-server": None,
                    "license-key": None,
                    "commands": {},
                    "metrics": counted,
                    "data-collection-start-date": None,
                    "camunda-integration": [],
                    "webapps": [],
                    "jdk": {
                        "version": platform.python_version(),
                        "vendor": platform.python_implementation(),
                    },
                },
            },
        }
    )


endpoints = [
    Endpoint("/metrics/{name}/sum", "GET", metric_sum),
    Endpoint("/telemetry/data", "GET", telemetry, gate=Gate.ADMINISTER),
]
