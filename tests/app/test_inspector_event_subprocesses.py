"""The inspector's tokens panel shows what each scope's event subprocesses listen for (the
process's and a subprocess's) and marks the token of an event subprocess's run."""

from __future__ import annotations

from pathlib import Path

import httpx

from app.console.common import when
from tests.server import LiveServer, console_login

MODEL = Path(__file__).parent.parent / "data" / "bpmn" / "order_watch.bpmn"


def test_listening_scopes_and_runs_show_in_the_tokens_panel(server: LiveServer) -> None:
    engine = server.engine
    engine.deploy(MODEL)
    instance = engine.start_latest("order_watch", {"packTimeout": "P1D"}, business_key="O-1")
    [job] = engine.jobs(instance.id)
    [fulfil] = [t for t in instance.tokens() if t.node_id == "Activity_Fulfil"]
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def read(node: str | None = None) -> str:
        params = {"node": node} if node else {}
        panel = httpx.get(
            f"{server.url}/instances/{instance.id}/panel/tokens", params=params, cookies=cookies
        )
        assert panel.status_code == 200
        return " ".join(panel.text.split())

    text = read()
    assert (
        '<li class="scope-listener" data-node="StartEvent_AddressChanged">The process listening: '
        '<span class="listening-event">message &#39;AddressChanged&#39;</span> starts event '
        "subprocess <strong>Address changed</strong> (non-interrupting)</li>"
    ) in text
    assert (
        '<li class="scope-listener" data-node="StartEvent_Cancelled">The process listening: '
        '<span class="listening-event">signal &#39;OrdersCancelled&#39;</span> starts event '
        "subprocess <strong>Order cancelled</strong> (interrupting)</li>"
    ) in text
    assert (
        f'<li class="scope-listener" data-node="StartEvent_PackLate" '
        f'data-token="{fulfil.token_id}">Subprocess <strong>Fulfil order</strong> (token '
        f"<code>{str(fulfil.token_id)[-8:]}</code>) listening: "
        f'<span class="listening-event">timer due {when(job.due_at)}</span> starts event '
        "subprocess <strong>Packing late</strong> (interrupting)</li>"
    ) in text
    assert "event-subprocess-run" not in text
    assert text.count('class="scope-listener"') == 3
    assert read("Activity_Cancelled").count('class="scope-listener"') == 1

    engine.correlate_message("AddressChanged", business_key="O-1")
    text = read()
    assert (
        "<td>Address changed "
        '<span class="muted event-subprocess-run">(event subprocess run)</span></td>'
    ) in text
    engine.complete_task(next(t.id for t in instance.user_tasks() if t.node_id == "Task_Pack"))
    text = read()
    assert text.count('class="scope-listener"') == 2 and "StartEvent_PackLate" not in text
    engine.signal("OrdersCancelled")
    assert "scope-listener" not in read()
