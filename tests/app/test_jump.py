"""The header's "jump to" box over HTTP: each kind of id or key leads to its page, several
instances with one business key to the filtered list, and anything else to a page that says so
(404), or names the parameter (400); never a 500."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx
from psycopg import sql as psycopg_sql

from engine.builder import ProcessBuilder
from engine.queries import definitions, lookup
from tests.browser.processes import parallel_approval, quick_charge
from tests.server import LiveServer, console_login


def viewer_jump(server: LiveServer) -> tuple[Callable[[str], httpx.Response], dict[str, str]]:
    """The jump box's answer to a text, for a signed-in viewer, without following it; and the
    viewer's session cookie."""
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def jump(text: str) -> httpx.Response:
        return httpx.get(
            f"{server.url}/jump", params={"q": text}, cookies=cookies, follow_redirects=False
        )

    return jump, cookies


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

    jump, cookies = viewer_jump(server)

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


def test_short_ids_keys_in_any_case_and_prefixes_find_their_instances(
    server: LiveServer,
) -> None:
    engine = server.engine
    engine.deploy(parallel_approval())
    engine.deploy(quick_charge())
    upper = engine.start_latest("parallel-approval", business_key="Order-ABC-1")
    mixed = [engine.start_latest("parallel-approval", business_key=k) for k in ("Mix", "mIX")]
    prefixed = [
        engine.start_latest("quick-charge", business_key=f"order-{n}") for n in (10, 11, 12)
    ]
    literal = engine.start_latest("parallel-approval", business_key="50%_off")
    engine.start_latest("parallel-approval", business_key="500 off")
    jump, _ = viewer_jump(server)

    leads = {
        # The short id every list shows: the id's last 8 characters, in either case.
        str(upper.id)[-8:]: f"/instances/{upper.id}",
        str(upper.id)[-8:].upper(): f"/instances/{upper.id}",
        # A business key typed in another case.
        "order-abc-1": f"/instances/{upper.id}",
        "ORDER-ABC-1": f"/instances/{upper.id}",
        # The start of one key only: that instance.
        "order-a": f"/instances/{upper.id}",
        # % and _ are characters of the key, not wildcards.
        "50%_": f"/instances/{literal.id}",
    }
    for text, url in leads.items():
        answer = jump(text)
        assert answer.status_code == 303, (text, answer.status_code, answer.text)
        assert answer.headers["location"] == url, text

    def listed(answer: httpx.Response) -> list[str]:
        return re.findall(r'<tr data-instance="([^"]+)"', answer.text)

    # Keys equal in any case: both listed, none preferred.
    both = jump("mix")
    assert both.status_code == 200
    assert sorted(listed(both)) == sorted(str(m.id) for m in mixed)
    # A prefix lists every match in key order (lower case), and the definitions it starts.
    started = jump("ORDER-")
    assert started.status_code == 200, started.text
    assert listed(started) == [str(p.id) for p in prefixed] + [str(upper.id)]
    assert "Matches for" in started.text
    # One definition key starts so: its page.
    assert jump("QUICK").headers["location"] == "/definitions/quick-charge?version=1"
    # Keys of instances and of definitions alike: both listed.
    engine.start_latest("parallel-approval", business_key="parallel-7")
    keys = jump("parallel")
    assert keys.status_code == 200
    assert 'href="/definitions/parallel-approval?version=1"' in keys.text
    assert len(listed(keys)) == 1
    assert jump("order-x").status_code == 404
    assert jump("00000000").status_code == 404


def test_jump_lookups_are_served_by_indexes(server: LiveServer) -> None:
    """Each lookup reads through a primary key or an index, never a scan of a whole table."""
    some_id = uuid.uuid4()
    cases: dict[str, tuple[psycopg_sql.Composable, dict[str, Any]]] = {
        "id": (psycopg_sql.SQL(lookup.BY_ID), {"id": some_id}),
        "business key": (
            psycopg_sql.SQL(lookup.BY_BUSINESS_KEY),
            {"key": "order-1", "limit": 2},
        ),
        "definition": (psycopg_sql.SQL(lookup.DEFINITION), {"text": "order"}),
        "folded key": lookup.folded_statement("Order-1", False, 51),
        "key prefix": lookup.folded_statement("Order-", True, 51),
        "short id": lookup.short_statement("0a1b2c3d", 51),
    }
    wanted = {
        "id": {
            "pk_process_instance",
            "pk_incident",
            "pk_user_task",
            "pk_external_task",
            "pk_job",
        },
        "business key": {"ix_process_instance_business_key_sort"},
        "definition": {"pk_process_definition", "uq_process_definition_key_tenant_id_version"},
        "folded key": {"ix_process_instance_business_key_folded"},
        "key prefix": {"ix_process_instance_business_key_folded"},
        "short id": {"ix_process_instance_short_id"},
    }
    with server.engine.connection() as conn:
        conn.execute("SET enable_seqscan = off")
        for name, (sql, params) in cases.items():
            explain = psycopg_sql.SQL("EXPLAIN (FORMAT JSON) ") + sql
            row = conn.execute(explain, params).fetchone()
            assert row is not None
            plan = json.dumps(row[0])
            assert "Seq Scan" not in plan, (name, plan)
            used = set(re.findall(r'"Index Name": "([^"]+)"', plan))
            assert used == wanted[name], (name, plan)
            # The prefix is read in the index's order: no sort of every match (only of the
            # instances with equal keys, by id).
            assert name != "key prefix" or '"Node Type": "Sort"' not in plan, plan
