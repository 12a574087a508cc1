"""Transaction subprocesses through /engine-rest as Camunda shows them: a Camunda Modeler file
with a transaction deployed over REST and run; GET /process-instance/{id}/activity-instances
with the transaction as a scope of type `transaction` (and, while a compensation handler waits,
the cancel end event and the handler inside it); GET /history/activity-instance with the
transaction cancelled, the `cancelEndEvent`, each compensation handler once and the
`cancelBoundaryCatch`, and filtered by those activity types."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from tests.compat.conftest import deploy, start
from tests.server import LiveServer

TRIP = Path(__file__).parent.parent / "data" / "bpmn" / "trip_transaction.bpmn"


def history(rest: httpx.Client, instance_id: str, **params: str) -> list[dict[str, Any]]:
    response = rest.get(
        "/history/activity-instance", params={"processInstanceId": instance_id, **params}
    )
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


def complete(client: httpx.Client, instance_id: str, key: str, confirmed: bool | None) -> None:
    [task] = client.get(
        "/task", params={"processInstanceId": instance_id, "taskDefinitionKey": key}
    ).json()
    variables = {} if confirmed is None else {"confirmed": {"value": confirmed, "type": "Boolean"}}
    done = client.post(f"/task/{task['id']}/complete", json={"variables": variables})
    assert done.status_code == 204, done.text


def test_a_cancelled_transaction_in_the_tree_and_the_history(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deployed = deploy(rest, ("trip_transaction.bpmn", TRIP.read_text()))
    assert list(deployed["deployedProcessDefinitions"].values())[0]["key"] == "trip_transaction"
    instance = start(operator, "trip_transaction")
    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    assert tree["activityType"] == "processDefinition"
    [tx] = tree["childActivityInstances"]
    assert (tx["activityId"], tx["activityType"], tx["activityName"]) == (
        "Tx_Book",
        "transaction",
        "Book the trip",
    )
    assert tx["parentActivityInstanceId"] == tree["id"]
    [confirm] = tx["childActivityInstances"]
    assert (confirm["activityId"], confirm["activityType"]) == ("Task_Confirm", "userTask")
    assert confirm["parentActivityInstanceId"] == tx["id"]

    complete(operator, instance["id"], "Task_Confirm", confirmed=False)

    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    assert [(a["activityId"], a["activityType"]) for a in tree["childActivityInstances"]] == [
        ("Task_Notify", "userTask")
    ]
    seen = history(rest, instance["id"])
    kinds = sorted((a["activityId"], a["activityType"]) for a in seen)
    assert kinds == [
        ("EndEvent_TxCancelled", "cancelEndEvent"),
        ("Event_TxCancelled", "cancelBoundaryCatch"),
        ("Gateway_Confirmed", "exclusiveGateway"),
        ("StartEvent_Trip", "startEvent"),
        ("StartEvent_Tx", "startEvent"),
        ("Task_BookFlight", "task"),
        ("Task_BookHotel", "task"),
        ("Task_CancelFlight", "task"),  # each compensation handler once
        ("Task_CancelHotel", "task"),
        ("Task_Confirm", "userTask"),
        ("Task_Notify", "userTask"),
        ("Tx_Book", "transaction"),
    ]
    by_id = {a["activityId"]: a for a in seen}
    assert by_id["Tx_Book"]["canceled"] is True
    assert by_id["Tx_Book"]["endTime"] is not None
    assert by_id["EndEvent_TxCancelled"]["canceled"] is False
    assert by_id["EndEvent_TxCancelled"]["parentActivityInstanceId"] == by_id["Tx_Book"]["id"]
    assert by_id["Task_CancelHotel"]["parentActivityInstanceId"] == by_id["Tx_Book"]["id"]
    assert by_id["Event_TxCancelled"]["endTime"] is not None
    for activity_type, activity_id in (
        ("transaction", "Tx_Book"),
        ("cancelEndEvent", "EndEvent_TxCancelled"),
        ("cancelBoundaryCatch", "Event_TxCancelled"),
    ):
        filtered = history(rest, instance["id"], activityType=activity_type)
        assert [a["activityId"] for a in filtered] == [activity_id], activity_type

    complete(operator, instance["id"], "Task_Notify", confirmed=None)
    finished = rest.get(f"/history/process-instance/{instance['id']}").json()
    assert finished["state"] == "COMPLETED"


def test_a_confirmed_transaction_completes_without_compensation(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("trip_transaction.bpmn", TRIP.read_text()))
    instance = start(operator, "trip_transaction")
    complete(operator, instance["id"], "Task_Confirm", confirmed=True)
    assert rest.get(f"/history/process-instance/{instance['id']}").json()["state"] == "COMPLETED"
    seen = {a["activityId"]: a for a in history(rest, instance["id"])}
    assert seen["Tx_Book"]["activityType"] == "transaction"
    assert seen["Tx_Book"]["canceled"] is False
    assert "Task_CancelHotel" not in seen and "Task_CancelFlight" not in seen
    assert "Event_TxCancelled" not in seen
    assert history(rest, instance["id"], activityType="cancelEndEvent") == []


def waiting_handler() -> ProcessModel:
    """tx[ book (undo: the user task unbook) -> cancel end ]; cancel boundary -> end."""
    b = ProcessBuilder("tx-waits")
    b.start_event("start")
    b.transaction("tx", "Trip")
    b.start_event("tx_start", parent="tx")
    b.task("book", "Book", parent="tx")
    b.user_task("unbook", "Unbook", parent="tx")
    b.compensation_boundary("booked", "book", "unbook")
    b.end_event("cancel", "Cancel", cancel=True, parent="tx")
    b.chain("tx_start", "book", "cancel")
    b.cancel_boundary("cancelled", "tx", "Cancelled")
    b.end_event("end")
    b.chain("start", "tx")
    b.chain("cancelled", "end")
    return b.build()


def test_while_a_handler_waits_the_transaction_holds_the_cancel_end_event_and_the_handler(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("waits.bpmn", write_bpmn([waiting_handler()])))
    instance = start(operator, "tx-waits")
    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    [tx] = tree["childActivityInstances"]
    assert (tx["activityId"], tx["activityType"]) == ("tx", "transaction")
    inside = sorted((a["activityId"], a["activityType"]) for a in tx["childActivityInstances"])
    assert inside == [("cancel", "cancelEndEvent"), ("unbook", "userTask")]
    assert history(rest, instance["id"], activityType="cancelBoundaryCatch") == []

    [task] = operator.get("/task", params={"processInstanceId": instance["id"]}).json()
    assert task["taskDefinitionKey"] == "unbook"
    done = operator.post(f"/task/{task['id']}/complete", json={})
    assert done.status_code == 204, done.text
    assert rest.get(f"/history/process-instance/{instance['id']}").json()["state"] == "COMPLETED"
    [boundary] = history(rest, instance["id"], activityType="cancelBoundaryCatch")
    assert (boundary["activityId"], boundary["activityName"]) == ("cancelled", "Cancelled")
    [tx_visit] = history(rest, instance["id"], activityType="transaction")
    assert tx_visit["canceled"] is True
