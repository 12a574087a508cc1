"""What the inspector's token modification offers and refuses before any preview: each node's
refusals in the operator's words and the flows offered instead (a parallel join's incoming
flows, a split's outgoing ones), the same refusals from the console's POSTs with nothing
written, and a token started on a flow (startTransition) from the console, audited."""

from __future__ import annotations

import json
from html import unescape

from app.console.modification import choices
from tests.api.test_sessions import Browser
from tests.engine.modification_support import forked, positions, rows
from tests.server import LiveServer

JOIN = (
    "A parallel join cannot be started directly; start on one of its incoming flows: "
    "from a; from b."
)
FORK = "fork has 2 outgoing flows, so “after” says not which; start on one of them: to a; to b."
END = "end has no outgoing flow: nothing can start after it."


def test_each_node_says_what_can_start_there() -> None:
    found = choices(forked("choices"))
    assert found["join"] == {
        "before": JOIN,
        "after": None,
        "flows": [["Flow_a_join", "from a"], ["Flow_b_join", "from b"]],
        "pickable": True,
    }
    assert found["fork"] == {
        "before": None,
        "after": FORK,
        "flows": [["Flow_fork_a", "to a"], ["Flow_fork_b", "to b"]],
        "pickable": True,
    }
    assert found["end"] == {"before": None, "after": END, "flows": [], "pickable": True}
    assert found["a"] == {"before": None, "after": None, "flows": [], "pickable": True}


def test_the_console_refuses_before_preview_and_starts_on_a_flow(server: LiveServer) -> None:
    engine = server.engine
    engine.deploy(forked("console-choices"))
    instance = engine.start_latest("console-choices")
    [at_b] = [t for t in engine.instance(instance.id).tokens() if t.node_id == "b"]
    operator = Browser(server.url, "operator")
    try:
        before = rows(engine, instance.id)
        for instruction, words in (
            ({"op": "before", "node": "join"}, JOIN),
            ({"op": "after", "node": "fork"}, FORK),
            ({"op": "after", "node": "end"}, END),
        ):
            for path in ("/modify/preview", "/modify"):
                refused = operator.post(
                    f"/instances/{instance.id}{path}",
                    data={"instructions": json.dumps([instruction])},
                )
                assert refused.status_code == 400, refused.text
                assert words in unescape(refused.text)
        for bad, words in (
            ({"op": "flow"}, "instruction 1: choose a flow to start on"),
            ({"op": "flow", "flow": "nowhere"}, "sequence flow 'nowhere' is not in process"),
        ):
            refused = operator.post(
                f"/instances/{instance.id}/modify", data={"instructions": json.dumps([bad])}
            )
            assert refused.status_code == 400, refused.text
            assert words in unescape(refused.text)
        assert rows(engine, instance.id) == before

        move = [
            {"op": "cancel", "token": str(at_b.token_id)},
            {"op": "flow", "flow": "Flow_b_join"},
        ]
        applied = operator.post(
            f"/instances/{instance.id}/modify", data={"instructions": json.dumps(move)}
        )
        assert applied.status_code == 200, applied.text
        assert "Modification applied (Active): tokens at a (1), join (1)." in applied.text
        assert positions(engine, instance.id) == {"a": 1, "join": 1}
        with engine.pool.connection() as conn:
            [(details,)] = conn.execute(
                "SELECT details FROM audit_entry WHERE instance_id = %s", (instance.id,)
            ).fetchall()
        assert {"type": "startTransition", "transitionId": "Flow_b_join"} in details["instructions"]
    finally:
        operator.close()
