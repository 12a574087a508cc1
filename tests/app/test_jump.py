"""The header's "jump to" box over HTTP: each kind of id or key leads to its page, several
instances with one business key to the filtered list, and anything else to a page that says so
(404), or names the parameter (400); never a 500."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from urllib.parse import quote

import httpx

from engine.builder import ProcessBuilder
from engine.queries import definitions, lookup
from tests.browser.processes import parallel_approval, quick_charge
from tests.server import LiveServer, console_login


def test_jump_leads_to_the_page_of_what_the_text_names(server: LiveServer) -> None:
    engine = server.engine
    engine.deploy(parallel_approval())
    engine.deploy(quick_charge())
    # A second version of quick-charge: the key leads to the latest one.
    engine.deploy(
        ProcessBuilder("quick-charge", name="Quick charge, again")
        .start_event("Start", "Start")
        .service_task("Charge", "Charge card", topic="charge")
        .end_event("End", "Charged")
        .chain("Start", "Charge", "End")
        .build()
    )
    first = definitions.by_version(engine, "quick-charge", 1)
    assert first is not None
    order = engine.start_latest("parallel-approval", business_key="order-7")
    twins = [engine.start_latest("parallel-approval", business_key="twin") for _ in range(2)]
    uuid_key = str(uuid.uuid4())
    keyed_by_uuid = engine.start_latest("parallel-approval", business_key=uuid_key)
    failing = engine.start_latest("quick-charge", business_key="order-8")
    [locked] = engine.fetch_and_lock("jump-worker", {"charge": 10_000})
    engine.fail_external_task(locked["id"], "jump-worker", "card declined")
    [incident] = engine.incidents(instance_id=failing.id)
    task = engine.user_tasks(order.id)[0]

    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def jump(text: str) -> httpx.Response:
        return httpx.get(
            f"{server.url}/jump", params={"q": text}, cookies=cookies, follow_redirects=False
        )

    leads = {
        str(order.id): f"/instances/{order.id}",
        f"  {order.id}  ": f"/instances/{order.id}",
        str(order.id).upper(): f"/instances/{order.id}",
        order.id.hex: f"/instances/{order.id}",
        str(incident.id): f"/instances/{failing.id}",
        str(task.id): f"/instances/{order.id}",
        str(locked["id"]): f"/instances/{failing.id}",
        "order-7": f"/instances/{order.id}",
        uuid_key: f"/instances/{keyed_by_uuid.id}",
        "twin": "/instances?business_key=twin",
        "quick-charge": "/definitions/quick-charge?version=2",
        first.id: "/definitions/quick-charge?version=1",
        "parallel-approval": "/definitions/parallel-approval?version=1",
    }
    for text, url in leads.items():
        answer = jump(text)
        assert answer.status_code == 303, (text, answer.status_code, answer.text)
        assert answer.headers["location"] == url, text
    listed = httpx.get(f"{server.url}/instances?business_key=twin", cookies=cookies)
    assert listed.text.count('<tr data-instance="') == 2
    assert all(f'data-instance="{twin.id}"' in listed.text for twin in twins)

    for text in (str(uuid.uuid4()), "no-such-key", "<b>markup</b>"):
        missing = jump(text)
        assert missing.status_code == 404, text
        assert "Nothing found for" in missing.text
        assert "<b>markup</b>" not in missing.text
    assert "&lt;b&gt;markup&lt;/b&gt;" in jump("<b>markup</b>").text

    for text, words in (
        ("", "query parameter &#39;q&#39; is missing"),
        ("   ", "query parameter &#39;q&#39; is missing"),
        ("x" * 201, "query parameter &#39;q&#39; must be at most 200 characters"),
    ):
        refused = httpx.get(f"{server.url}/jump?q={quote(text)}", cookies=cookies)
        assert refused.status_code == 400, (text, refused.status_code)
        assert words in refused.text, text
    nul = httpx.get(f"{server.url}/jump?q=a%00b", cookies=cookies)
    assert nul.status_code == 400
    # Bytes that are no UTF-8 read as replacement characters: a text that names nothing.
    broken = httpx.get(f"{server.url}/jump?q=%ED%A0%80", cookies=cookies)
    assert broken.status_code == 404 and "Nothing found for" in broken.text


def test_jump_lookups_are_served_by_indexes(server: LiveServer) -> None:
    """Each lookup reads through a primary key or an index, never a scan of a whole table."""
    some_id = uuid.uuid4()
    cases: dict[str, tuple[str, dict[str, Any]]] = {
        "id": (lookup.BY_ID, {"id": some_id}),
        "business key": (lookup.BY_BUSINESS_KEY, {"key": "order-1", "limit": 2}),
        "definition": (lookup.DEFINITION, {"text": "order"}),
    }
    wanted = {
        "id": {
            "pk_process_instance",
            "pk_incident",
            "pk_user_task",
            "pk_external_task",
            "pk_job",
        },
        "business key": {"ix_process_instance_business_key"},
        "definition": {"pk_process_definition", "uq_process_definition_key_tenant_id_version"},
    }
    with server.engine.connection() as conn:
        conn.execute("SET enable_seqscan = off")
        for name, (sql, params) in cases.items():
            row = conn.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()
            assert row is not None
            plan = json.dumps(row[0])
            assert "Seq Scan" not in plan, (name, plan)
            used = set(re.findall(r'"Index Name": "([^"]+)"', plan))
            assert used == wanted[name], (name, plan)
