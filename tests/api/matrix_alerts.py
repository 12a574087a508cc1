"""The authorization matrix's rows for stuck-instance alert thresholds (tests/api/matrix_table.py
adds them to its table): setting or removing one on a definition key needs UPDATE on the
process definition, or UPDATE_INSTANCE on it (what operators hold); Camunda has no such
resource of its own. Each call has a fresh definition (and threshold) of its own."""

from __future__ import annotations

from typing import Any

from engine.api import Engine
from engine.commands.alerts import SetAlertThreshold
from tests.api import processes
from tests.api.matrix_routes import PROCESS_DEFINITION, Make, Row, Surface, Target, scalar, unique

C = Surface.CONSOLE
PD = PROCESS_DEFINITION


def _thresholds(key: str) -> Any:
    return lambda engine: scalar(
        engine,
        "SELECT json_agg(json_build_array(node_id, kind, duration) ORDER BY node_id, kind) "
        "FROM alert_threshold WHERE definition_key = %s",
        key,
    )


def _definition(engine: Engine) -> str:
    key = unique("matrix-alerting")
    engine.deploy(processes.straight(key))
    return key


def set_on_definition() -> Make:
    def make(engine: Engine) -> Target:
        key = _definition(engine)
        form = {"node_id": "end", "kind": "waiting", "duration": "PT2H"}
        return Target(f"/definitions/{key}/alerts", {"data": form}, key, _thresholds(key))

    return make


def remove_threshold() -> Make:
    def make(engine: Engine) -> Target:
        key = _definition(engine)
        made = engine.run(SetAlertThreshold(key, "end", "incident", "PT15M"))
        path = f"/alerts/thresholds/{made.threshold_id}/delete"
        return Target(path, {"data": {}}, key, _thresholds(key))

    return make


def _row(permission: str, route: str, make: Make) -> Row:
    return Row(PD, permission, C, "POST", route, make, 200)


ALERT_ROWS: list[Row] = [
    _row("UPDATE", "/definitions/{key}/alerts", set_on_definition()),
    _row("UPDATE_INSTANCE", "/definitions/{key}/alerts", set_on_definition()),
    _row("UPDATE", "/alerts/thresholds/{threshold_id:uuid}/delete", remove_threshold()),
    _row("UPDATE_INSTANCE", "/alerts/thresholds/{threshold_id:uuid}/delete", remove_threshold()),
]
