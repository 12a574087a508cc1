"""Escalation, link and signal throw events through /engine-rest and the console: the history
names every visit by Camunda's activity type (a link throw event, which Camunda records no
activity for, as an "intermediateLinkThrowEvent"), the activityType filter finds them, and the
inspector's history panel shows the same types."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.compat.conftest import deploy, start
from tests.server import LiveServer, console_login

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def test_escalation_visits_in_the_history(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("purchase_escalation.bpmn", (DATA / "purchase_escalation.bpmn").read_text()))
    instance = start(operator, "purchase_escalation", {"amount": {"value": 5000, "type": "Long"}})
    activities = rest.get(
        "/history/activity-instance", params={"processInstanceId": instance["id"]}
    ).json()
    assert sorted((a["activityId"], a["activityType"]) for a in activities) == [
        ("Boundary_FinanceReview", "boundaryEscalation"),
        ("Event_AskFinance", "intermediateEscalationThrowEvent"),
        ("Gateway_Amount", "exclusiveGateway"),
        ("Gateway_Merge", "exclusiveGateway"),
        ("StartEvent_Approval", "startEvent"),
        ("StartEvent_Request", "startEvent"),
        ("SubProcess_Approval", "subProcess"),
        ("Task_Approve", "userTask"),
        ("Task_FinanceReview", "userTask"),
    ]
    thrown = rest.get(
        "/history/activity-instance",
        params={
            "processInstanceId": instance["id"],
            "activityType": "intermediateEscalationThrowEvent",
        },
    ).json()
    assert [(a["activityId"], a["activityName"]) for a in thrown] == [
        ("Event_AskFinance", "Ask finance")
    ]
    variables = rest.get(f"/process-instance/{instance['id']}/variables").json()
    assert variables["escalated"] == {
        "type": "String",
        "value": "FINANCE_REVIEW",
        "valueInfo": {},
    }


def test_link_and_signal_visits_in_the_history_and_the_inspector(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("claim_intake.bpmn", (DATA / "claim_intake.bpmn").read_text()))
    instance = start(operator, "claim_intake", {"urgent": {"value": True, "type": "Boolean"}})
    [task] = operator.get("/task", params={"processInstanceId": instance["id"]}).json()
    done = operator.post(f"/task/{task['id']}/complete", json={})
    assert done.status_code == 204, done.text
    activities = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "sortBy": "startTime", "sortOrder": "asc"},
    ).json()
    expected = [
        ("StartEvent_Claim", "startEvent"),
        ("Task_Register", "task"),
        ("Gateway_Kind", "exclusiveGateway"),
        ("Event_AnnounceUrgent", "intermediateSignalThrow"),
        ("LinkThrow_Urgent", "intermediateLinkThrowEvent"),
        ("LinkCatch_Assess", "intermediateLinkCatch"),
        ("Task_Assess", "userTask"),
        ("EndEvent_Closed", "signalEndEvent"),
    ]
    assert sorted((a["activityId"], a["activityType"]) for a in activities) == sorted(expected)
    caught = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "activityType": "intermediateLinkCatch"},
    ).json()
    assert [a["activityId"] for a in caught] == ["LinkCatch_Assess"]

    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}
    panel = httpx.get(f"{server.url}/instances/{instance['id']}/panel/history", cookies=cookies)
    assert panel.status_code == 200
    text = " ".join(panel.text.split())
    for node_id, kind in expected:
        assert f'data-node="{node_id}"' in text
        assert f"{kind} · token" in text
