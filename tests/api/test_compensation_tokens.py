"""/api/v1 shows each live token's and each track's mode: the throw event's token Forward, the
handler's token Compensation."""

from __future__ import annotations

from pathlib import Path

import httpx

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def test_tokens_show_their_mode(admin: httpx.Client, operator: httpx.Client) -> None:
    source = (DATA / "refund_compensation.bpmn").read_bytes()
    deployed = admin.post("/deployments", files={"files": ("refund.bpmn", source)})
    assert deployed.status_code == 201, deployed.text
    started = operator.post("/definitions/key/refund_compensation/start", json={})
    assert started.status_code == 201, started.text
    tokens = operator.get(f"/instances/{started.json()['id']}/tokens").json()["items"]
    assert sorted((t["node_id"], t["state"], t["mode"]) for t in tokens) == [
        ("Event_Undo", "WaitForEvent", "Forward"),
        ("Task_Refund", "WaitForEvent", "Compensation"),
    ]
    tracks = operator.get(f"/instances/{started.json()['id']}/history").json()["items"]
    assert sorted((t["mode"], [s["node_id"] for s in t["steps"]]) for t in tracks) == [
        ("Compensation", ["Task_Refund"]),
        ("Forward", ["StartEvent_Order", "Task_Pay", "Event_Undo"]),
    ]
