"""The inspector shows a waiting parallel join as arrived/expected and a waiting inclusive join as
the tokens arrived and the live tokens that can still reach it, in the tokens panel and in the
diagram's state."""

from __future__ import annotations

import httpx

from engine.builder import ProcessBuilder
from tests.server import LiveServer, console_login


def test_waiting_joins_show_what_they_wait_for(server: LiveServer) -> None:
    engine = server.engine
    builder = (
        ProcessBuilder("inspect-joins")
        .start_event("start")
        .parallel_gateway("fork")
        .parallel_gateway("pjoin")
        .inclusive_gateway("isplit")
        .inclusive_gateway("ijoin")
        .end_event("end")
        .chain("start", "fork")
        .chain("pjoin", "isplit")
        .chain("ijoin", "end")
    )
    for name in ("p1", "p2"):
        builder.user_task(name, name).chain("fork", name, "pjoin")
    for name in ("i1", "i2", "i3"):
        builder.user_task(name, name).chain("isplit", name, "ijoin")
    engine.deploy(builder.build())
    instance = engine.start_latest("inspect-joins")
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def complete(node_id: str) -> None:
        [task] = [t for t in instance.user_tasks() if t.node_id == node_id]
        engine.complete_task(task.id)

    def joins() -> tuple[str, dict[str, object]]:
        panel = httpx.get(f"{server.url}/instances/{instance.id}/panel/tokens", cookies=cookies)
        state = httpx.get(f"{server.url}/instances/{instance.id}/diagram.json", cookies=cookies)
        assert panel.status_code == 200 and state.status_code == 200
        return " ".join(panel.text.split()), state.json()["joins"]

    complete("p1")
    text, state = joins()
    assert '<span class="join-count">1/2</span> branches arrived' in text
    assert state == {"pjoin": {"arrived": 1, "expected": 2, "upstream": None}}

    complete("p2")
    complete("i2")
    text, state = joins()
    assert (
        '<span class="join-count">1</span> arrived, waiting for '
        '<span class="join-upstream">2</span> live upstream tokens'
    ) in text
    assert state == {"ijoin": {"arrived": 1, "expected": None, "upstream": 2}}

    complete("i3")
    text, state = joins()
    assert '<span class="join-upstream">1</span> live upstream token ' in text
    assert state == {"ijoin": {"arrived": 2, "expected": None, "upstream": 1}}
