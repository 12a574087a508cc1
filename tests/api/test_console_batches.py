"""The console's batches over HTTP: a batch created from a list's filter, its page with progress,
failed items and the operator's buttons; a viewer sees no button and a forged POST is refused.
The server runs no job executor: the test runs the chunks itself."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from engine.builder import ProcessBuilder
from engine.states import InstanceState
from tests.api.test_sessions import Browser
from tests.engine.batches import batch_row, run_to_end
from tests.server import LiveServer, live_server


@pytest.fixture
def idle(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url, run_jobs=False) as server:
        for key in ("console-a", "console-b"):
            server.engine.deploy(
                ProcessBuilder(key)
                .start_event("start")
                .service_task("charge", topic=key)
                .end_event("end")
                .chain("start", "charge", "end")
                .build()
            )
        yield server


def _incidents(server: LiveServer, key: str, count: int) -> list[str]:
    for _ in range(count):
        server.engine.start_latest(key)
    for task in server.engine.fetch_and_lock("w", {key: 60_000}, max_tasks=count):
        server.engine.fail_external_task(task["id"], "w", "declined", retries=0)
    return [str(i.id) for i in server.engine.incidents(definition_key=key)]


def _browser(server: LiveServer, role: str) -> Browser:
    return Browser(server.url, role)


def test_a_retry_batch_from_the_incident_filter_with_its_buttons(idle: LiveServer) -> None:
    wanted = _incidents(idle, "console-a", 2)
    _incidents(idle, "console-b", 1)
    operator, viewer = _browser(idle, "operator"), _browser(idle, "viewer")
    try:
        assert 'hx-get="/incidents/batch-preview?' in operator.get("/incidents").text
        assert "batch-preview" not in viewer.get("/incidents").text
        refused = viewer.get("/incidents/batch-preview?definition=console-a")
        assert refused.status_code == 403 and "Not allowed" in refused.text
        assert "data-count" not in refused.text
        preview = operator.get("/incidents/batch-preview?definition=console-a").text
        assert 'data-count="2"' in preview and "Retry 2 incidents" in preview
        assert all(f'data-incident="{i}"' in preview for i in wanted)
        assert 'name="confirmed" value="2"' in preview
        created = operator.post(
            "/incidents/batch", data={"definition": "console-a", "confirmed": "2"}
        )
        assert created.status_code == 200, created.text
        found = re.fullmatch(r"/batches/([0-9a-f-]{36})", created.headers["HX-Redirect"])
        assert found
        batch_id = found.group(1)
        assert batch_row(idle.engine, batch_id)[:5] == ("Running", 2, 0, 0, "operator")

        listed = viewer.get("/batches")
        assert f'data-batch="{batch_id}" data-state="Running"' in listed.text
        assert 'hx-trigger="every 1s"' in listed.text  # polled while it runs
        page = viewer.get(f"/batches/{batch_id}")
        assert page.status_code == 200 and "0 done of 2" in page.text
        assert 'hx-post="/batches/' not in page.text
        assert viewer.post(f"/batches/{batch_id}/cancel").status_code == 403
        forged = operator.post(f"/batches/{batch_id}/cancel", headers={"X-CSRF-Token": "forged"})
        assert forged.status_code == 403
        assert batch_row(idle.engine, batch_id)[0] == "Running"

        assert (
            'hx-post="/batches/' + batch_id + '/suspend"'
            in operator.get(f"/batches/{batch_id}").text
        )
        assert operator.post(f"/batches/{batch_id}/suspend").status_code == 200
        assert batch_row(idle.engine, batch_id)[0] == "Suspended"
        assert f'/batches/{batch_id}/resume"' in operator.get(f"/batches/{batch_id}").text
        assert operator.post(f"/batches/{batch_id}/resume").status_code == 200

        idle.engine.resolve_incident(wanted[0])  # resolved meanwhile: that item fails
        run_to_end(idle.engine, batch_id)
        done = operator.get(f"/batches/{batch_id}?fragment=1").text
        assert "1 done, " in done and "1 failed</span> of 2" in done
        assert f"incident {wanted[0]} is already resolved" in done
        assert "every 1s" not in done  # ended: no more polling
        retried = operator.post(f"/batches/{batch_id}/retry")
        assert "1 failed items will run again." in retried.text
        assert batch_row(idle.engine, batch_id)[:4] == ("Running", 2, 1, 0)
        assert idle.engine.incidents(definition_key="console-b")  # not in the filter: untouched
    finally:
        operator.close()
        viewer.close()


def test_cancel_every_running_instance_a_filter_matches(idle: LiveServer) -> None:
    running = [str(idle.engine.start_latest("console-b").id) for _ in range(2)]
    ended = idle.engine.start_latest("console-b")
    ended.cancel()
    other = idle.engine.start_latest("console-a")
    operator, viewer = _browser(idle, "operator"), _browser(idle, "viewer")
    try:
        assert (
            viewer.post("/instances/batch-cancel", data={"definition": "console-b"}).status_code
            == 403
        )
        created = operator.post("/instances/batch-cancel", data={"definition": "console-b"})
        batch_id = created.headers["HX-Redirect"].rsplit("/", 1)[1]
        assert batch_row(idle.engine, batch_id)[:2] == ("Running", 2)  # the ended one is left out
        run_to_end(idle.engine, batch_id)
        assert {idle.engine.instance(i).state for i in running} == {InstanceState.TERMINATED}
        assert other.state is InstanceState.ACTIVE
        empty = operator.post("/instances/batch-cancel", data={"definition": "console-b"})
        assert empty.status_code == 400
        assert "no instance matches the filter" in empty.text
        assert "HX-Redirect" not in empty.headers
    finally:
        operator.close()
        viewer.close()


def test_the_cancel_preview_counts_what_the_filter_matches_and_says_all_without_one(
    idle: LiveServer,
) -> None:
    b = [idle.engine.start_latest("console-b", business_key=f"b-{n}") for n in range(12)]
    idle.engine.start_latest("console-a")
    b[0].cancel()  # ended: not counted
    operator = _browser(idle, "operator")
    try:
        page = operator.get("/instances?definition=console-b").text
        assert 'hx-get="/instances/batch-preview?definition=console-b&amp;action=cancel"' in page
        narrowed = operator.get("/instances/batch-preview?definition=console-b&action=cancel")
        assert narrowed.status_code == 200
        text = narrowed.text
        assert 'data-count="11"' in text and "The filter matches <strong>11</strong>" in text
        assert "Cancel 11 instances" in text and 'name="confirmed" value="11"' in text
        # A sample of ten, newest first, each linked to its inspector.
        shown = re.findall(r'data-instance="([0-9a-f-]{36})"', text)
        assert shown == [str(h.id) for h in reversed(b[2:])]
        assert f'href="/instances/{b[-1].id}"' in text and "b-11" in text
        everything = operator.get("/instances/batch-preview?action=cancel").text
        assert "No filter is set: this is <strong>all 12</strong> running root instances" in (
            everything
        )
        assert "Cancel 12 instances" in everything
        nothing = operator.get("/instances/batch-preview?business_key=none&action=cancel").text
        assert 'data-count="0"' in nothing and "Nothing matches" in nothing
        assert 'type="submit"' not in nothing

        created = operator.post(
            "/instances/batch-cancel", data={"definition": "console-b", "confirmed": "11"}
        )
        batch_id = created.headers["HX-Redirect"].rsplit("/", 1)[1]
        with idle.engine.connection() as conn:
            row = conn.execute(
                "SELECT details FROM audit_entry WHERE entity_id = %s AND operation = %s",
                (batch_id, "CreateBatch"),
            ).fetchone()
        assert row is not None and row[0]["confirmed"] == 11 and row[0]["total"] == 11
        page = operator.get(f"/batches/{batch_id}").text
        assert 'data-confirmed="11"' in page and "11 when the operator confirmed" in page
        plain = operator.post("/instances/batch-cancel", data={"definition": "console-a"})
        plain_id = plain.headers["HX-Redirect"].rsplit("/", 1)[1]
        assert "data-confirmed" not in operator.get(f"/batches/{plain_id}").text
    finally:
        operator.close()


def test_set_variables_from_the_instance_filter(idle: LiveServer) -> None:
    handles = [idle.engine.start_latest("console-a", {"tier": "gold"}) for _ in range(3)]
    other = idle.engine.start_latest("console-b", {"tier": "gold"})
    operator, viewer = _browser(idle, "operator"), _browser(idle, "viewer")
    try:
        assert "Set variables…" in operator.get("/instances").text
        assert "Set variables…" not in viewer.get("/instances").text
        preview = operator.get("/instances/batch-preview?definition=console-a&action=set-variables")
        assert "Set variables on 3 instances" in preview.text
        assert 'name="set_type_0"' in preview.text
        form = {
            "definition": "console-a",
            "confirmed": "3",
            "set_name_0": "limit",
            "set_type_0": "integer",
            "set_value_0": "many",
        }
        refused = operator.post("/instances/batch-set-variables", data=form)
        assert refused.status_code == 400
        assert "variable &#39;limit&#39;" in refused.text and "HX-Redirect" not in refused.headers
        nothing = operator.post("/instances/batch-set-variables", data={"definition": "console-a"})
        assert nothing.status_code == 400 and "name a variable" in nothing.text
        denied = viewer.post("/instances/batch-set-variables", data={**form, "set_value_0": "4"})
        assert denied.status_code == 403
        form.update(set_value_0="4000", set_name_1="seen", set_type_1="boolean")
        form.update(set_value_1="true", remove="tier")
        created = operator.post("/instances/batch-set-variables", data=form)
        assert created.status_code == 200, created.text
        batch_id = created.headers["HX-Redirect"].rsplit("/", 1)[1]
        assert batch_row(idle.engine, batch_id)[:2] == ("Running", 3)
        run_to_end(idle.engine, batch_id)
        assert batch_row(idle.engine, batch_id)[:4] == ("Completed", 3, 3, 0)
        for handle in handles:
            assert idle.engine.instance(handle.id).variables() == {"limit": 4000, "seen": True}
        assert idle.engine.instance(other.id).variables() == {"tier": "gold"}
    finally:
        operator.close()
        viewer.close()


def test_suspend_and_resume_count_only_the_instances_in_the_state_they_change(
    idle: LiveServer,
) -> None:
    active = [idle.engine.start_latest("console-b") for _ in range(3)]
    paused = [idle.engine.start_latest("console-b") for _ in range(2)]
    for handle in paused:
        handle.suspend()
    operator = _browser(idle, "operator")
    try:
        page = operator.get("/instances").text
        assert "Suspend all matching…" in page and "Resume all matching…" in page
        suspend = operator.get("/instances/batch-preview?definition=console-b&action=suspend")
        assert 'data-count="3"' in suspend.text and "Suspend 3 instances" in suspend.text
        assert "3</strong> active instances now" in suspend.text
        resume = operator.get("/instances/batch-preview?definition=console-b&action=resume")
        assert 'data-count="2"' in resume.text and "Resume 2 instances" in resume.text
        clash = operator.get("/instances/batch-preview?state=Completed&action=suspend")
        assert clash.status_code == 400
        assert "the filter selects Completed instances" in clash.text
        created = operator.post(
            "/instances/batch-suspend", data={"definition": "console-b", "confirmed": "3"}
        )
        batch_id = created.headers["HX-Redirect"].rsplit("/", 1)[1]
        assert batch_row(idle.engine, batch_id)[:2] == ("Running", 3)
        run_to_end(idle.engine, batch_id)
        assert {idle.engine.instance(h.id).state for h in active} == {InstanceState.SUSPENDED}
        created = operator.post("/instances/batch-resume", data={"definition": "console-b"})
        batch_id = created.headers["HX-Redirect"].rsplit("/", 1)[1]
        assert batch_row(idle.engine, batch_id)[:2] == ("Running", 5)
        run_to_end(idle.engine, batch_id)
        states = {idle.engine.instance(h.id).state for h in (*active, *paused)}
        assert states == {InstanceState.ACTIVE}
    finally:
        operator.close()
