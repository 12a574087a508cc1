"""GET /instances/{id}/live and /definitions/{key}/live: the parts of an open page that changed,
in one answer, each as an out-of-band swap of its element; the inspector's panels as
/panel/{name} renders them (node filter included), the definition's table as /stats does, and
the diagram's state as /diagram.json gives it."""

from __future__ import annotations

import json
import re
import uuid
from html import unescape

import httpx

from engine.builder import ProcessBuilder
from tests.server import LiveServer, console_login

OOB = re.compile(r'<div id="([a-z_-]+)" hx-swap-oob="(innerHTML|true)"')


def swapped(html: str) -> list[str]:
    return [found.group(1) for found in OOB.finditer(html)]


def inner(html: str, element_id: str) -> str:
    """The content of the out-of-band element `element_id`, white space collapsed."""
    start = html.index(f'<div id="{element_id}" hx-swap-oob="innerHTML">')
    body = html[html.index(">", start) + 1 :]
    ends = [m.start() for m in re.finditer(r'</div>\s*(?=<div id="[a-z_-]+" hx-swap-oob|$)', body)]
    return " ".join(body[: ends[0]].split())


def state_of(html: str) -> object:
    found = re.search(r"data-state='([^']*)'", html)
    assert found is not None
    return json.loads(unescape(found.group(1)))


def test_one_answer_carries_every_part_asked_for(server: LiveServer) -> None:
    engine = server.engine
    engine.deploy(
        ProcessBuilder("live-parts")
        .start_event("Start")
        .parallel_gateway("Split")
        .user_task("Pack", "Pack goods")
        .user_task("Invoice", "Write invoice")
        .parallel_gateway("Join")
        .end_event("End")
        .chain("Start", "Split")
        .chain("Split", "Pack", "Join")
        .chain("Split", "Invoice", "Join")
        .chain("Join", "End")
        .build()
    )
    instance = engine.start_latest("live-parts")
    [pack] = [t for t in instance.user_tasks() if t.node_id == "Pack"]
    engine.complete_task(pack.id)
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def get(path: str, **params: str) -> httpx.Response:
        return httpx.get(f"{server.url}{path}", params=params, cookies=cookies)

    base = f"/instances/{instance.id}"
    every = get(f"{base}/live")
    assert every.status_code == 200
    assert swapped(every.text) == [
        "inspector-header",
        "family-body",
        "incidents-body",
        "tokens-body",
        "user_tasks-body",
        "external_tasks-body",
        "jobs-body",
        "variables-body",
        "evaluations-body",
        "history-body",
        "diagram-state",
    ]

    some = get(f"{base}/live", parts="tokens,diagram", node="Invoice")
    assert some.status_code == 200
    assert swapped(some.text) == ["tokens-body", "diagram-state"]
    tokens = inner(some.text, "tokens-body")
    panel = get(f"{base}/panel/tokens", node="Invoice")
    assert tokens == " ".join(panel.text.split())
    assert 'data-node="Invoice"' in tokens and 'data-node="Pack"' not in tokens
    state = state_of(some.text)
    assert state == get(f"{base}/diagram.json").json()
    assert isinstance(state, dict) and state["joins"] == {
        "Join": {"arrived": 1, "expected": 2, "upstream": None}
    }

    header = get(f"{base}/live", parts="header")
    assert swapped(header.text) == ["inspector-header"]
    assert f"<code>{instance.id}</code>" in header.text

    unknown = get(f"{base}/live", parts="tokens,gossip")
    assert unknown.status_code == 400
    assert "parts" in unknown.text and "gossip" in unknown.text
    assert get(f"/instances/{uuid.uuid4()}/live").status_code == 404

    definition = get("/definitions/live-parts/live", version="1")
    assert definition.status_code == 200
    assert swapped(definition.text) == ["definition-stats", "diagram-state", "definition-alerts"]
    panel = get("/definitions/live-parts/alerts")
    assert inner(definition.text, "definition-alerts") == " ".join(panel.text.split())
    stats = get("/definitions/live-parts/stats", version="1")
    assert inner(definition.text, "definition-stats") == " ".join(stats.text.split())
    only = get("/definitions/live-parts/live", version="1", parts="diagram")
    assert swapped(only.text) == ["diagram-state"]
    assert state_of(only.text) == get("/definitions/live-parts/diagram.json", version="1").json()
    nodes = state_of(only.text)
    assert isinstance(nodes, dict) and nodes["nodes"]["Invoice"]["active_tokens"] == 1
    wrong = get("/definitions/live-parts/live", parts="tokens")
    assert wrong.status_code == 400 and "parts" in wrong.text
    assert get("/definitions/no-such-key/live").status_code == 404


def test_the_live_header_offers_an_admin_to_migrate_an_instance_of_an_older_version(
    server: LiveServer,
) -> None:
    engine = server.engine

    def version(name: str) -> None:
        engine.deploy(
            ProcessBuilder("live-migrate", name=name)
            .start_event("Start")
            .user_task("Work")
            .end_event("End")
            .chain("Start", "Work", "End")
            .build()
        )

    version("First")
    old = engine.start_latest("live-migrate")
    version("Second")
    login = console_login(server.url, "admin")
    cookies = {"interlock_session": login.cookies["interlock_session"]}
    answer = httpx.get(f"{server.url}/instances/{old.id}/live?parts=header", cookies=cookies)
    assert answer.status_code == 200, answer.text
    assert "Migrate this instance" in inner(answer.text, "inspector-header")
    new = engine.start_latest("live-migrate")
    latest = httpx.get(f"{server.url}/instances/{new.id}/live?parts=header", cookies=cookies)
    assert latest.status_code == 200
    assert "Migrate this instance" not in latest.text
