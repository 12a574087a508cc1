"""The inspector shows a multi-instance body as its iterations completed of the total and those
active, on the diagram and in the tokens panel with its iterations, nested bodies added up per
node, and nothing once the body is done."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from engine.builder import ProcessBuilder
from tests.server import LiveServer, console_login

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def test_bodies_show_their_counts(server: LiveServer) -> None:
    engine = server.engine
    engine.deploy(DATA / "batch_approval.bpmn")
    engine.deploy(
        ProcessBuilder("ask-loop")
        .start_event("start")
        .user_task("ask", "Ask")
        .standard_loop("ask", condition="${true}", maximum=3)
        .end_event("end")
        .chain("start", "ask", "end")
        .build()
    )
    instance = engine.start_latest(
        "batch-approval", {"batches": ["ann", "bob"], "itemsPerBatch": 3}
    )
    looping = engine.start_latest("ask-loop")
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def shown(instance_id: object) -> tuple[str, dict[str, Any]]:
        panel = httpx.get(f"{server.url}/instances/{instance_id}/panel/tokens", cookies=cookies)
        state = httpx.get(f"{server.url}/instances/{instance_id}/diagram.json", cookies=cookies)
        assert panel.status_code == 200 and state.status_code == 200
        return " ".join(panel.text.split()), state.json()["loops"]

    text, loops = shown(instance.id)
    assert loops == {
        "SubProcess_Batch": {"completed": 0, "total": 2, "active": 2},
        "Task_Item": {"completed": 0, "total": 6, "active": 6},
    }
    assert text.count('<li class="loop"') == 3
    assert text.count('<li class="iteration"') == 2 + 6
    assert (
        'Multi-instance <strong>Approve batch</strong>: <span class="loop-count">0/2</span> '
        'iterations completed, <span class="loop-active">2</span> active'
    ) in text
    assert "loopCounter 2" in text

    ann = [t for t in instance.user_tasks() if t.assignee == "ann"]
    for task in ann[:2]:
        engine.complete_task(task.id)
    text, loops = shown(instance.id)
    assert loops["Task_Item"] == {"completed": 2, "total": 6, "active": 4}
    assert '<span class="loop-count">2/3</span>' in text
    engine.complete_task(ann[2].id)
    _, loops = shown(instance.id)
    assert loops == {
        "SubProcess_Batch": {"completed": 1, "total": 2, "active": 1},
        "Task_Item": {"completed": 0, "total": 3, "active": 3},
    }
    for task in instance.user_tasks():
        engine.complete_task(task.id)
    text, loops = shown(instance.id)
    assert loops == {}
    assert '<li class="loop"' not in text

    engine.complete_task(looping.user_tasks()[0].id)
    text, loops = shown(looping.id)
    assert loops == {"ask": {"completed": 1, "total": 3, "active": 1}}
    assert 'Loop <strong>Ask</strong>: <span class="loop-count">1/3</span>' in text
