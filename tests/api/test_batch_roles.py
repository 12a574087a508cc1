"""A batch keeps what its type needs, on every surface, and the audit names who acted.

An administrator's history deletion stops on an instance that has not ended; the instance is
then cancelled, so retrying the failed item would delete its history. An operator may not delete
history directly, so an operator may not retry it either (nor suspend, resume or cancel the
batch): /api/v1, /engine-rest and the console answer 403 naming the permission it needs
(DELETE_HISTORY on every process definition, which the built-in operators group is not granted),
and nothing changes (the batch, its items, the instance's history, the audit log). An
administrator other than the batch's creator may: the audit entry of the retry names that
administrator, and the items run again in the batch (audited as the batch's, its creator's).

The server runs no job executor: the tests run the batch's chunks themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import httpx
import pytest

from engine.builder import ProcessBuilder
from tests.api.test_sessions import Browser
from tests.engine.batches import batch_entries, batch_row, item_states, run_to_end
from tests.server import PASSWORD, LiveServer, live_server

KEY = "role-waiting"


@pytest.fixture(scope="module")
def idle(module_database_url: str) -> Iterator[LiveServer]:
    with live_server(module_database_url, run_jobs=False) as server:
        server.engine.deploy(
            ProcessBuilder(KEY)
            .start_event("start")
            .user_task("wait")
            .end_event("end")
            .chain("start", "wait", "end")
            .build()
        )
        yield server


def _api(server: LiveServer, who: str) -> httpx.Client:
    """A client on /api/v1: a role's API token (`<role>-token`), or `basic:<user>`."""
    if who.startswith("basic:"):
        return httpx.Client(base_url=f"{server.url}/api/v1", auth=(who[6:], PASSWORD), timeout=30.0)
    return httpx.Client(base_url=f"{server.url}/api/v1", headers=server.bearer(who), timeout=30.0)


def _history_batch(server: LiveServer, creator: httpx.Client, *, run: bool = True) -> str:
    """An administrator's delete-history batch over an ended instance and a running one. Run,
    the ended one's history is deleted and the running one fails; that one is then cancelled,
    so that a retry would delete its history too. The batch's id."""
    ended = server.engine.start_latest(KEY)
    ended.cancel()
    running = server.engine.start_latest(KEY)
    created = creator.post(
        "/batches", json={"type": "delete-history", "items": [str(ended.id), str(running.id)]}
    )
    assert created.status_code == 201, created.text
    batch_id: str = created.json()["id"]
    if run:
        run_to_end(server.engine, batch_id)
        assert batch_row(server.engine, batch_id)[:4] == ("Completed", 2, 1, 1)
        assert item_states(server.engine, batch_id)[str(running.id)] == (
            "Failed",
            f"process instance {running.id} has not ended (Active)",
        )
        running.cancel()
    return batch_id


def _snapshot(server: LiveServer, batch_id: str) -> tuple[Any, ...]:
    """The batch, its items, the history of its items' instances and the audit entries about
    the batch or done in it."""
    items = item_states(server.engine, batch_id)
    with server.engine.connection() as conn:
        instances = conn.execute(
            "SELECT id, state FROM process_instance WHERE id = ANY(%s) ORDER BY id",
            ([UUID(item) for item in items],),
        ).fetchall()
        audited = conn.execute(
            "SELECT count(*) FROM audit_entry WHERE entity_id = %s", (batch_id,)
        ).fetchone()
    return (
        batch_row(server.engine, batch_id),
        items,
        instances,
        audited,
        batch_entries(server.engine, batch_id),
    )


def _audit(server: LiveServer, batch_id: str, operation: str) -> list[tuple[str, str]]:
    """(user, channel) of the audit entries of `operation` on the batch, read over /api/v1."""
    with _api(server, "admin") as admin:
        found = admin.get("/audit", params={"operation": operation, "entity": "Batch"})
    assert found.status_code == 200, found.text
    return [(e["user"], e["channel"]) for e in found.json()["items"] if e["entity_id"] == batch_id]


def _instances(server: LiveServer, batch_id: str) -> int:
    with server.engine.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM process_instance WHERE id::text IN "
            "(SELECT item_id FROM batch_item WHERE batch_id = %s)",
            (UUID(batch_id),),
        ).fetchone()
    assert row is not None
    return int(row[0])


def _refused(response: httpx.Response, batch_id: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["type"] == "Forbidden"
    assert body["detail"] == {
        "user_id": "operator-token",
        "missing": [
            {
                "permission": "DELETE_HISTORY",
                "resource_type": "ProcessDefinition",
                "resource_id": "*",
            }
        ],
    }
    assert "'DELETE_HISTORY' permission" in body["message"]


def test_an_operator_cannot_act_on_a_history_deletion_over_the_api(idle: LiveServer) -> None:
    with (
        _api(idle, "basic:admin") as creator,
        _api(idle, "operator") as operator,
        _api(idle, "admin") as admin,
    ):
        batch_id = _history_batch(idle, creator)
        before = _snapshot(idle, batch_id)
        assert _instances(idle, batch_id) == 1  # the cancelled instance's history is left
        for action in ("retry", "suspend", "resume", "cancel"):
            _refused(operator.post(f"/batches/{batch_id}/{action}"), batch_id)
        assert _snapshot(idle, batch_id) == before

        retried = admin.post(f"/batches/{batch_id}/retry")
        assert retried.status_code == 200, retried.text
        assert (retried.json()["state"], retried.json()["failed"]) == ("Running", 0)
        assert _audit(idle, batch_id, "RetryBatch") == [("admin-token", "api")]
        assert _audit(idle, batch_id, "CreateBatch") == [("admin", "api")]
        run_to_end(idle.engine, batch_id)
        assert batch_row(idle.engine, batch_id)[:4] == ("Completed", 2, 2, 0)
        assert _instances(idle, batch_id) == 0
        # Each item's deletion is the batch's work, done for the batch's creator.
        assert {entry[1:] for entry in batch_entries(idle.engine, batch_id)} == {
            ("admin", "batch", "DeleteHistory")
        }


def test_an_operator_still_acts_on_an_operators_batch(idle: LiveServer) -> None:
    with _api(idle, "operator") as operator:
        instance = idle.engine.start_latest(KEY)
        created = operator.post(
            "/batches", json={"type": "suspend-instances", "items": [str(instance.id)]}
        )
        assert created.status_code == 201, created.text
        batch_id = created.json()["id"]
        suspended = operator.post(f"/batches/{batch_id}/suspend")
        assert (suspended.status_code, suspended.json()["state"]) == (200, "Suspended")
        cancelled = operator.post(f"/batches/{batch_id}/cancel")
        assert (cancelled.status_code, cancelled.json()["state"]) == (200, "Cancelled")
        assert _audit(idle, batch_id, "Suspend") == [("operator-token", "api")]


def test_an_operator_cannot_suspend_or_cancel_a_history_deletion_over_engine_rest(
    idle: LiveServer,
) -> None:
    rest = f"{idle.url}/engine-rest"
    with _api(idle, "admin") as creator:
        batch_id = _history_batch(idle, creator, run=False)
    before = _snapshot(idle, batch_id)
    operator, admin = idle.bearer("operator"), idle.bearer("admin")
    suspend = {"suspended": True}
    refused = [
        httpx.put(f"{rest}/batch/{batch_id}/suspended", json=suspend, headers=operator),
        httpx.delete(f"{rest}/batch/{batch_id}", headers=operator),
    ]
    for response in refused:
        assert response.status_code == 403, response.text
        assert response.json()["type"] == "AuthorizationException"
        assert "'DELETE_HISTORY' permission" in response.json()["message"]
    assert _snapshot(idle, batch_id) == before

    done = httpx.put(f"{rest}/batch/{batch_id}/suspended", json=suspend, headers=admin)
    assert done.status_code == 204, done.text
    assert batch_row(idle.engine, batch_id)[0] == "Suspended"
    assert _audit(idle, batch_id, "Suspend") == [("admin-token", "engine-rest")]
    assert httpx.delete(f"{rest}/batch/{batch_id}", headers=admin).status_code == 204
    assert batch_row(idle.engine, batch_id)[0] == "Cancelled"
    assert _instances(idle, batch_id) == 2  # no item ran


def test_an_operator_cannot_act_on_a_history_deletion_in_the_console(idle: LiveServer) -> None:
    with _api(idle, "admin") as creator:
        batch_id = _history_batch(idle, creator)
    before = _snapshot(idle, batch_id)
    operator, admin = Browser(idle.url, "operator"), Browser(idle.url, "admin")
    try:
        retry_button = f'hx-post="/batches/{batch_id}/retry"'
        assert retry_button not in operator.get(f"/batches/{batch_id}").text
        assert retry_button in admin.get(f"/batches/{batch_id}").text
        for action in ("retry", "suspend", "resume", "cancel"):
            response = operator.post(f"/batches/{batch_id}/{action}")
            assert response.status_code == 403, response.text
            assert "DELETE_HISTORY" in response.text
        assert _snapshot(idle, batch_id) == before

        retried = admin.post(f"/batches/{batch_id}/retry")
        assert retried.status_code == 200, retried.text
        assert "1 failed items will run again." in retried.text
        assert _audit(idle, batch_id, "RetryBatch") == [("admin", "console")]
        run_to_end(idle.engine, batch_id)
        assert _instances(idle, batch_id) == 0
    finally:
        operator.close()
        admin.close()
