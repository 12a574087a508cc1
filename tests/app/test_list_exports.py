"""CSV and JSON exports of the console's filtered lists: the rows the list shows, in its order,
with the page's filters read the page's way; streamed in batches; quoted, and defended against
formula injection; for every logged-in role, and nobody else."""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import httpx
import pytest

from engine.api import Engine
from engine.queries import Connection, lists
from engine.queries.instances import InstanceFilter
from tests.app.list_data import KEY, TRICKY_KEYS, fill
from tests.server import LiveServer, console_login

COMPLETED, ACTIVE = 2_300, 200
INSTANCE_HEADER = [
    "id",
    "definition_key",
    "version",
    "business_key",
    "state",
    "open_incidents",
    "started_at",
    "ended_at",
    "super_instance_id",
    "root_instance_id",
]


@pytest.fixture
def filled(server: LiveServer) -> LiveServer:
    fill(server.engine, COMPLETED, ACTIVE)
    return server


def client_as(server: LiveServer, role: str) -> httpx.Client:
    login = console_login(server.url, role)
    cookies = {"interlock_session": login.cookies["interlock_session"]}
    return httpx.Client(base_url=server.url, cookies=cookies, timeout=30)


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def listed_ids(server: LiveServer, where: InstanceFilter) -> list[str]:
    """Every id the instance list shows for `where`, page after page."""
    ids: list[str] = []
    after = None
    while True:
        page = server.engine.list_instances(where, limit=500, after=after)
        ids += [str(i.id) for i in page.items]
        if page.next is None:
            return ids
        after = page.next


def test_instance_export_holds_the_filtered_list_in_its_order(filled: LiveServer) -> None:
    check_csv_cells_are_quoted_and_formulas_defused(filled)
    with client_as(filled, "viewer") as client:
        response = client.get("/instances/export.csv", params={"state": "Completed"})
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "text/csv; charset=utf-8"
        disposition = response.headers["content-disposition"]
        assert disposition.startswith('attachment; filename="instances-')
        assert disposition.endswith('.csv"')
        # Streamed: sent in chunks as the batches are read, with no length known up front.
        assert "content-length" not in response.headers
        assert response.headers["transfer-encoding"] == "chunked"
        rows = csv_rows(response.text)
        assert rows[0] == INSTANCE_HEADER
        body = rows[1:]
        expected = listed_ids(filled, InstanceFilter(state="Completed"))
        assert len(expected) == COMPLETED
        assert [r[0] for r in body] == expected
        assert {r[4] for r in body} == {"Completed"}
        assert {r[1] for r in body} == {KEY}
        # ISO 8601 times, newest first; an open incident counted where there is one.
        started = [datetime.fromisoformat(r[6]) for r in body]
        assert all(s.tzinfo is not None for s in started)
        assert started == sorted(started, reverse=True)
        by_key = {r[3]: r for r in body}
        assert by_key["order-50"][5] == "1" and by_key["order-51"][5] == "0"
        assert by_key["order-51"][2] == "1"  # the definition's version
        assert by_key["order-51"][8] == "" and by_key["order-51"][9] == by_key["order-51"][0]

        as_json = client.get("/instances/export.json", params={"state": "Completed"})
        assert as_json.headers["content-type"] == "application/json"
        assert as_json.headers["content-disposition"].endswith('.json"')
        records = json.loads(as_json.text)
        assert [r["id"] for r in records] == expected
        assert list(records[0]) == INSTANCE_HEADER
        # The oldest, n = 2300, has an incident; the one before it none.
        assert records[-1]["open_incidents"] == 1 and records[-2]["open_incidents"] == 0
        assert records[-1]["version"] == 1
        assert datetime.fromisoformat(records[0]["started_at"]) == started[0]

        narrower = {"state": "Completed", "business_key": "order-51", "incident": "no"}
        one = csv_rows(client.get("/instances/export.csv", params=narrower).text)
        assert [r[3] for r in one[1:]] == ["order-51"]
        nothing = client.get("/instances/export.json", params={"business_key": "nobody"})
        assert json.loads(nothing.text) == []
        assert csv_rows(client.get("/instances/export.csv", params={"business_key": "x"}).text) == [
            INSTANCE_HEADER
        ]


def test_instance_export_takes_variables_as_columns(filled: LiveServer) -> None:
    """Instance variables named in `variables` are more columns, read batch by batch: the
    export crosses batches (2,500 rows), so every batch reads its own instances' values."""
    with filled.engine.connection() as conn, conn.transaction():
        # amount on every third instance (a number), customer on every seventh (a JSON object),
        # a formula-like text on order-6; a task-local amount that the export must not take.
        conn.execute(
            "INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at) "
            "SELECT id, '', 'amount', 'integer', to_jsonb(substr(business_key, 7)::int * 10), "
            "now() FROM process_instance WHERE business_key LIKE 'order-%' "
            "AND substr(business_key, 7)::int % 3 = 0"
        )
        conn.execute(
            "INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at) "
            "SELECT id, '', 'customer', 'json', "
            "jsonb_build_object('name', 'c' || business_key, 'tags', jsonb_build_array(1, 2)), "
            "now() FROM process_instance WHERE business_key LIKE 'order-%' "
            "AND substr(business_key, 7)::int % 7 = 0"
        )
        conn.execute(
            "INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at) "
            "SELECT id, '', 'note', 'string', to_jsonb('=cmd()'::text), now() "
            "FROM process_instance WHERE business_key = 'order-6'"
        )
        conn.execute(
            "INSERT INTO variable (instance_id, scope_key, name, type, value, updated_at) "
            "SELECT id, gen_random_uuid()::text, 'amount', 'integer', '1', now() "
            "FROM process_instance WHERE business_key = 'order-10'"
        )
    wanted = {"variables": "amount, customer,note,amount,missing"}
    with client_as(filled, "viewer") as client:
        response = client.get("/instances/export.csv", params=wanted)
        assert response.status_code == 200, response.text
        rows = csv_rows(response.text)
        extra = ["variables.amount", "variables.customer", "variables.note", "variables.missing"]
        assert rows[0] == INSTANCE_HEADER + extra
        assert len(rows) == 1 + COMPLETED + ACTIVE
        by_key = {r[3]: dict(zip(rows[0], r, strict=True)) for r in rows[1:]}
        assert by_key["order-21"]["variables.amount"] == "210"
        assert json.loads(by_key["order-21"]["variables.customer"]) == {
            "name": "corder-21",
            "tags": [1, 2],
        }
        assert by_key["order-10"]["variables.amount"] == ""  # only a task-local one
        assert by_key["order-2499"]["variables.amount"] == "24990"  # the last batch
        assert by_key["order-6"]["variables.note"] == "'=cmd()"  # defused as any text
        assert {r["variables.missing"] for r in by_key.values()} == {""}

        records = json.loads(client.get("/instances/export.json", params=wanted).text)
        assert list(records[0]) == INSTANCE_HEADER + ["variables"]
        by_json_key = {r["business_key"]: r for r in records}
        assert by_json_key["order-21"]["variables"] == {
            "amount": 210,
            "customer": {"name": "corder-21", "tags": [1, 2]},
        }
        assert by_json_key["order-6"]["variables"] == {"amount": 60, "note": "=cmd()"}
        assert by_json_key["order-11"]["variables"] == {}

        too_many = ",".join(f"v{n}" for n in range(51))
        refused = client.get("/instances/export.csv", params={"variables": too_many})
        assert refused.status_code == 400
        assert refused.json()["detail"]["field"] == "variables"
        assert "variables" in refused.json()["message"]


def check_csv_cells_are_quoted_and_formulas_defused(filled: LiveServer) -> None:
    with client_as(filled, "viewer") as client:
        text = client.get("/instances/export.csv", params={"state": "Completed"}).text
        rows = csv_rows(text)
        keys = [r[3] for r in rows[1:6]]
        # The newest five are the tricky ones, in order: each formula start gets a leading '.
        assert keys == ["'=1+2", "'+SUM(A1:A9)", "'-3", "'@cmd", 'says "hi", then\nleaves']
        assert '"says ""hi"", then\nleaves"' in text
        records = json.loads(
            client.get("/instances/export.json", params={"state": "Completed"}).text
        )
        assert [r["business_key"] for r in records[:5]] == list(TRICKY_KEYS)

        incidents = csv_rows(client.get("/incidents/export.csv").text)
        messages = {r[2] for r in incidents[1:]}
        assert '\'=HYPERLINK("http://x")' in messages and "boom order-100" in messages


def test_incident_and_task_exports_follow_their_pages_filters(filled: LiveServer) -> None:
    check_the_list_pages_render_the_filters_their_url_names(filled)
    with client_as(filled, "viewer") as client:
        incidents = csv_rows(client.get("/incidents/export.csv").text)
        assert incidents[0][:3] == ["id", "type", "message"]
        batches = lists.incidents(filled.engine, lists.IncidentFilter())
        listed = [str(i.id) for batch in batches for i in batch]
        total = (COMPLETED + ACTIVE) // 50
        assert [r[0] for r in incidents[1:]] == listed and len(listed) == total
        created = [datetime.fromisoformat(r[11]) for r in incidents[1:]]
        assert created == sorted(created)  # oldest first, as the page lists them
        page = client.get("/incidents", params={"text": "order-1050"}).text
        only = json.loads(client.get("/incidents/export.json", params={"text": "ORDER-1050"}).text)
        assert [r["message"] for r in only] == ["boom order-1050"]
        assert only[0]["instance_id"][-8:] in page

        everything = csv_rows(client.get("/tasks/export.csv").text)
        assert len(everything) - 1 == (COMPLETED + ACTIVE) // 40
        mine = json.loads(client.get("/tasks/export.json", params={"show": "mine"}).text)
        assert {t["assignee"] for t in mine} == {"viewer"}
        assert len(mine) == (COMPLETED + ACTIVE) // 80
        free = csv_rows(client.get("/tasks/export.csv", params={"show": "unassigned"}).text)
        assert {r[6] for r in free[1:]} == {""}
        assert len(free) - 1 + len(mine) == len(everything) - 1
        inbox = client.get("/tasks", params={"show": "mine"}).text
        assert inbox.count("data-task=") == len(mine)


def check_bad_filters_are_refused_naming_the_field(filled: LiveServer) -> None:
    with client_as(filled, "viewer") as client:
        for path, params, field in (
            ("/instances/export.csv", {"version": "two", "definition": KEY}, "version"),
            ("/instances/export.json", {"started_from": "yesterday"}, "started_from"),
            ("/instances/export.xml", {}, "format"),
            ("/tasks/export.csv", {"show": "everything"}, "show"),
        ):
            response = client.get(path, params=params)
            assert response.status_code == 400, (path, response.text)
            error: dict[str, Any] = response.json()
            assert error["detail"]["field"] == field, error
            assert field in error["message"]


def test_every_role_exports_and_nobody_else(filled: LiveServer) -> None:
    check_bad_filters_are_refused_naming_the_field(filled)
    for role in ("viewer", "operator", "admin"):
        with client_as(filled, role) as client:
            assert client.get("/incidents/export.csv").status_code == 200
    anonymous = httpx.get(f"{filled.url}/instances/export.csv")
    assert anonymous.status_code == 303
    assert anonymous.headers["location"] == "/login?next=/instances/export.csv"
    fetched = httpx.get(f"{filled.url}/instances/export.json", headers={"HX-Request": "true"})
    assert fetched.status_code == 401
    with_token = httpx.get(f"{filled.url}/tasks/export.csv", headers=filled.bearer("admin"))
    assert with_token.status_code == 303  # console pages take console sessions, not tokens


def test_a_client_that_leaves_mid_download_holds_no_connection(filled: LiveServer) -> None:
    pool = filled.engine.pool
    with client_as(filled, "viewer") as client:
        with client.stream("GET", "/instances/export.csv") as response:
            first = next(response.iter_bytes())
            assert first.startswith(b"id,definition_key")
        # The download was dropped after its first bytes: every connection is back in the pool.
        deadline = time.monotonic() + 10
        while True:
            stats = pool.get_stats()
            if stats["pool_available"] == stats["pool_size"] or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert stats["pool_available"] == stats["pool_size"], stats
        assert client.get("/instances/export.csv", params={"business_key": "-3"}).status_code == 200


class Counting:
    """The engine as a reader, counting the connections borrowed and those still held."""

    def __init__(self, engine: Engine) -> None:
        self.engine, self.held, self.borrowed = engine, 0, 0

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        self.held += 1
        self.borrowed += 1
        try:
            with self.engine.connection() as conn:
                yield conn
        finally:
            self.held -= 1


def test_batches_borrow_a_connection_for_one_batch_at_a_time(filled: LiveServer) -> None:
    reader = Counting(filled.engine)
    sizes = []
    for batch in lists.instances.batches(reader, 1000, InstanceFilter(state="Completed")):
        sizes.append(len(batch))
        assert reader.held == 0  # between batches the stream holds nothing
    assert sizes == [1000, 1000, 300] and reader.borrowed == 3
    ids = [str(r.info.id) for b in lists.instances(filled.engine, InstanceFilter()) for r in b]
    assert ids == listed_ids(filled, InstanceFilter())
    assert len(ids) == len(set(ids)) == COMPLETED + ACTIVE


def check_the_list_pages_render_the_filters_their_url_names(filled: LiveServer) -> None:
    with client_as(filled, "viewer") as client:
        incidents = client.get("/incidents?type=failedJob&node=t&text=order-1050").text
        assert incidents.count("data-incident=") == 1 and "boom order-1050" in incidents
        assert "<option selected>failedJob</option>" in incidents
        assert 'name="node" size="12" value="t"' in incidents
        assert 'name="text" value="order-1050"' in incidents
        # The live refresh asks for the rows of the same filters.
        assert (
            'hx-get="/incidents?type=failedJob&amp;node=t&amp;text=order-1050&amp;fragment=rows"'
            in incidents
        )

        tasks = client.get(f"/tasks?show=mine&definition={KEY}").text
        assert tasks.count("data-task=") == (COMPLETED + ACTIVE) // 80
        assert '<option value="mine" selected>' in tasks
        assert f"<option selected>{KEY}</option>" in tasks
        assert f'hx-get="/tasks?show=mine&amp;definition={KEY}&amp;fragment=rows"' in tasks

        refused = client.get("/tasks?show=everything")
        assert refused.status_code == 200
        assert "query parameter &#39;show&#39; must be one of all, mine, unassigned" in refused.text
        assert client.get("/tasks?show=everything&fragment=rows").status_code == 400
