"""The inspector shows a token waiting at an event-based gateway with what it waits for, in the
tokens panel and in the diagram's state, and nothing once an event has won."""

from __future__ import annotations

from pathlib import Path

import httpx

from app.console.common import when
from tests.server import LiveServer, console_login

MODEL = Path(__file__).parent.parent / "data" / "bpmn" / "payment_wait.bpmn"


def test_a_waiting_event_based_gateway_shows_its_events(server: LiveServer) -> None:
    engine = server.engine
    engine.deploy(MODEL)
    instance = engine.start_latest("payment-wait", {"timeout": "PT1H"}, business_key="B-1")
    [job] = engine.jobs(instance.id)
    [token] = instance.tokens()
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def read() -> tuple[str, dict[str, list[str]]]:
        panel = httpx.get(f"{server.url}/instances/{instance.id}/panel/tokens", cookies=cookies)
        state = httpx.get(f"{server.url}/instances/{instance.id}/diagram.json", cookies=cookies)
        assert panel.status_code == 200 and state.status_code == 200
        waits: dict[str, list[str]] = state.json()["gateway_waits"]
        return " ".join(panel.text.split()), waits

    text, waits = read()
    expected = [
        "message 'payment'",
        f"timer due {when(job.due_at)}",
        "signal 'cancel'",
    ]
    assert waits == {"Gateway_Wait": expected}
    assert (
        f'<li class="gateway-wait" data-gateway="Gateway_Wait" data-token="{token.token_id}">'
        "Gateway <strong>What happens first?</strong>"
    ) in text
    assert (
        'waiting for: <span class="gateway-events">'
        f"message &#39;payment&#39;, timer due {when(job.due_at)}, signal &#39;cancel&#39;</span>"
    ) in text

    engine.signal("cancel")
    text, waits = read()
    assert waits == {}
    assert "gateway-wait" not in text
