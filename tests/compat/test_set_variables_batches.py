"""Setting variables on many instances as a batch, over /engine-rest's
`POST /process-instance/variables-async` (Camunda's SetVariablesAsyncDto; its answer a BatchDto of
type `process-set-variables`) and /api/v1's `POST /batches` with a filter: the values are checked
before anything is created (a 400 naming the variable), a caller without the batch permission is
refused 403, and each instance is changed once, audited with its values before and after. The
server runs no job executor: the test runs the chunks itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import httpx
import pytest

from engine.builder import ProcessBuilder
from tests.compat.test_batch_rest import BATCH
from tests.engine.batches import batch_row, run_to_end
from tests.server import PASSWORD, LiveServer, live_server

KEY = "bulk-vars"


@pytest.fixture
def idle(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url, run_jobs=False) as running:
        running.engine.deploy(
            ProcessBuilder(KEY)
            .start_event("start")
            .user_task("review")
            .end_event("end")
            .chain("start", "review", "end")
            .build()
        )
        yield running


def _rest(server: LiveServer, role: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/engine-rest", auth=(role, PASSWORD), timeout=30)


def _api(server: LiveServer, role: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/api/v1", auth=(role, PASSWORD), timeout=30)


def _refused(response: httpx.Response, status: int, type_: str, message: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == type_, body
    assert message in body["message"], body


def _batches(server: LiveServer) -> int:
    with server.engine.connection() as conn:
        row = conn.execute("SELECT count(*) FROM batch").fetchone()
    assert row is not None
    return int(row[0])


def _variable_entries(server: LiveServer, batch_id: str) -> list[tuple[Any, ...]]:
    """(instance id, operation, property, before, after) of the batch's variable entries."""
    with server.engine.connection() as conn:
        rows = conn.execute(
            "SELECT instance_id, operation, property, before, after FROM audit_entry "
            "WHERE batch_id = %s AND entity = 'Variable' ORDER BY instance_id",
            (UUID(batch_id),),
        ).fetchall()
    return [tuple(row) for row in rows]


def test_variables_async_sets_typed_values_on_every_selected_instance(idle: LiveServer) -> None:
    engine = idle.engine
    named = engine.start_latest(KEY, {"amount": 5})
    queried = engine.start_latest(KEY, {"amount": 7}, business_key="by-query")
    ended = engine.start_latest(KEY, business_key="ended")
    ended.cancel()
    body: dict[str, Any] = {
        "processInstanceIds": [str(named.id)],
        "processInstanceQuery": {"businessKey": "by-query"},
        "variables": {
            "amount": {"value": 10, "type": "Long"},
            "note": {"value": "checked", "type": "String"},
            "due": {"value": "2026-12-24T10:00:00.000+0000", "type": "Date"},
        },
    }
    before = _batches(idle)
    with _rest(idle, "viewer") as viewer:
        _refused(
            viewer.post("/process-instance/variables-async", json=body),
            403,
            "AuthorizationException",
            "viewer",
        )
    with _rest(idle, "operator") as rest:
        bad = {**body, "variables": {"amount": {"value": "ten", "type": "Integer"}}}
        refused = rest.post("/process-instance/variables-async", json=bad)
        _refused(refused, 400, "InvalidRequestException", "amount")
        _refused(
            rest.post(
                "/process-instance/variables-async",
                json={**body, "variables": {"x": {"value": 1, "type": "Lengthy"}}},
            ),
            400,
            "InvalidRequestException",
            "Unsupported value type 'Lengthy' of variable 'x'",
        )
        _refused(
            rest.post("/process-instance/variables-async", json={**body, "variables": {}}),
            400,
            "InvalidRequestException",
            "variables is empty",
        )
        _refused(
            rest.post(
                "/process-instance/variables-async",
                json={"variables": body["variables"]},
            ),
            400,
            "InvalidRequestException",
            "processInstanceIds, processInstanceQuery or historicProcessInstanceQuery",
        )
        transient = {"t": {"value": 1, "type": "Integer", "valueInfo": {"transient": True}}}
        _refused(
            rest.post("/process-instance/variables-async", json={**body, "variables": transient}),
            400,
            "InvalidRequestException",
            "transient",
        )
        assert _batches(idle) == before  # nothing refused made a batch

        created = rest.post("/process-instance/variables-async", json=body)
        assert created.status_code == 200, created.text
        batch = created.json()
        assert set(batch) == BATCH
        assert batch["type"] == "process-set-variables"
        assert batch["totalJobs"] == 2 and batch["jobsCreated"] == 0
        assert batch["suspended"] is False and batch["createUserId"] == "operator"

        run_to_end(engine, batch["id"])
        assert batch_row(engine, batch["id"])[:4] == ("Completed", 2, 2, 0)
        for handle in (named, queried):
            values = rest.get(f"/process-instance/{handle.id}/variables").json()
            assert values["amount"] == {"value": 10, "type": "Long", "valueInfo": {}}
            assert values["note"]["value"] == "checked"
            assert values["due"]["type"] == "Date"

        entries = _variable_entries(idle, batch["id"])
        assert {row[0] for row in entries} == {named.id, queried.id}
        assert len(entries) == 2  # one entry per instance, with the values before and after
        by_instance = {row[0]: row for row in entries}
        assert by_instance[named.id][1] == "ModifyVariable"
        assert by_instance[named.id][3] == {"amount": 5}
        assert by_instance[named.id][4]["amount"] == 10
        assert by_instance[queried.id][3] == {"amount": 7}

        # Camunda's historicProcessInstanceQuery selects too.
        historic = {
            "historicProcessInstanceQuery": {"processInstanceBusinessKey": "by-query"},
            "variables": {"flag": {"value": True, "type": "Boolean"}},
        }
        again = rest.post("/process-instance/variables-async", json=historic)
        assert again.status_code == 200, again.text
        assert again.json()["totalJobs"] == 1


def test_api_batches_set_and_remove_variables_on_what_a_filter_matches(
    idle: LiveServer,
) -> None:
    engine = idle.engine
    gold = [engine.start_latest(KEY, {"tier": "gold", "old": 1}) for _ in range(3)]
    other = engine.start_latest(KEY, {"tier": "silver", "old": 1})
    ended = engine.start_latest(KEY, {"tier": "gold"})
    ended.cancel()
    body: dict[str, Any] = {
        "type": "set-variables",
        "filter": {"definition_key": KEY, "var": ['tier:"gold"']},
        "payload": {
            "variables": {"limit": {"value": "2500.5", "type": "double"}},
            "remove": ["old"],
        },
    }
    before = _batches(idle)
    with _api(idle, "viewer") as viewer:
        denied = viewer.post("/batches", json=body)
        assert denied.status_code == 403, denied.text
    with _api(idle, "operator") as api:
        for payload, field, words in [
            ({"variables": {"limit": {"value": "lots", "type": "double"}}}, "variables", "limit"),
            ({"variables": {"limit": {"value": 1, "type": "money"}}}, "variables", "money"),
            ({"remove": "old"}, "remove", "list"),
            ({"variables": {}}, "variables", "non-empty"),
            ({"variables": {"old": {"value": 1}}, "remove": ["old"]}, "remove", "both"),
        ]:
            refused = api.post("/batches", json={**body, "payload": payload})
            assert refused.status_code == 400, refused.text
            assert refused.json()["detail"]["field"] == field, refused.json()
            assert words in refused.json()["message"]
        unknown = api.post("/batches", json={**body, "filter": {"colour": "red"}})
        assert unknown.status_code == 400
        assert unknown.json()["detail"]["field"] == "filter.colour"
        assert _batches(idle) == before

        created = api.post("/batches", json=body)
        assert created.status_code == 201, created.text
        batch = created.json()
        assert (batch["type"], batch["total"], batch["state"]) == ("set-variables", 3, "Running")
        assert batch["payload"] == {
            "variables": {"limit": {"value": "2500.5", "type": "double"}},
            "remove": ["old"],
        }
        run_to_end(engine, batch["id"])
        assert batch_row(engine, batch["id"])[:4] == ("Completed", 3, 3, 0)
    for handle in gold:
        values = engine.instance(handle.id).variables()
        assert values["limit"] == 2500.5 and "old" not in values
    assert engine.instance(other.id).variables() == {"tier": "silver", "old": 1}
    entries = _variable_entries(idle, batch["id"])
    assert sorted(row[0] for row in entries) == sorted(h.id for h in gold)
    assert all(row[3] == {"old": 1} and row[4] == {"limit": 2500.5} for row in entries)
