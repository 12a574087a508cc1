"""Camunda's process instance modification over /engine-rest: bodies, 204, 400s naming the
field, 403 for a viewer."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.compat.conftest import start
from tests.engine.modification_support import forked
from tests.server import PASSWORD, LiveServer

KEY = "rest-fork"


def _activities(client: httpx.Client, instance_id: str) -> dict[str, str]:
    """activityId -> activity instance id of the instance's tree (one level)."""
    tree = client.get(f"/process-instance/{instance_id}/activity-instances").json()
    return {child["activityId"]: child["id"] for child in tree["childActivityInstances"]}


def _error(response: httpx.Response, status: int, type_: str, message: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == type_
    assert message in body["message"], body


@pytest.fixture
def deployed(server: LiveServer) -> LiveServer:
    server.engine.deploy(forked(KEY))
    return server


def test_modify_an_instance(deployed: LiveServer, operator: httpx.Client) -> None:
    instance_id = start(operator, KEY)["id"]
    a = _activities(operator, instance_id)["a"]
    body = {
        "instructions": [
            {"type": "cancel", "activityInstanceId": a},
            {
                "type": "startBeforeActivity",
                "activityId": "after",
                "variables": {
                    "note": {"value": "moved", "type": "String", "local": False},
                    "mine": {"value": 1, "type": "Integer", "local": True},
                },
            },
        ],
        "skipCustomListeners": True,
        "skipIoMappings": False,
        "annotation": "moved by rest",
    }
    response = operator.post(f"/process-instance/{instance_id}/modification", json=body)
    assert response.status_code == 204 and response.content == b""
    assert set(_activities(operator, instance_id)) == {"after", "b"}
    assert set(operator.get(f"/process-instance/{instance_id}/variables").json()) == {"note"}
    with deployed.engine.pool.connection() as conn:
        entries = conn.execute(
            "SELECT user_id, channel, operation, annotation FROM audit_entry "
            "WHERE instance_id = %s",
            (instance_id,),
        ).fetchall()
    assert entries == [("operator", "engine-rest", "ModifyProcessInstance", "moved by rest")]

    cancel_all = {
        "instructions": [
            {"type": "cancel", "activityId": "b"},
            {"type": "cancel", "activityId": "after"},
        ]
    }
    response = operator.post(f"/process-instance/{instance_id}/modification", json=cancel_all)
    assert response.status_code == 204
    history = operator.get(f"/history/process-instance/{instance_id}").json()
    assert history["state"] == "EXTERNALLY_TERMINATED"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"instructions": []}, "'instructions' must be a non-empty list"),
        ({"instructions": [{"type": "jump"}]}, "instructions[0].type must be one of"),
        (
            {"instructions": [{"type": "cancel"}]},
            "instructions[0]: for instruction type 'cancel': exactly one",
        ),
        (
            {
                "instructions": [
                    {"type": "cancel", "activityId": "a"},
                    {"type": "startBeforeActivity"},
                ]
            },
            "instructions[1]: for instruction type 'startBeforeActivity': 'activityId' is required",
        ),
        ({"instructions": [{"type": "startTransition"}]}, "'transitionId' is required"),
        (
            {"instructions": [{"type": "cancel", "activityInstanceId": "x1"}]},
            "instructions[0].activityInstanceId: 'x1' is no activity instance id",
        ),
        (
            {"instructions": [{"type": "startTransition", "transitionId": "nope"}]},
            "instruction 1 (startTransition): sequence flow 'nope' is not in process",
        ),
        (
            {"instructions": [{"type": "startAfterActivity", "activityId": "fork"}]},
            "activity 'fork' has 2 outgoing sequence flows",
        ),
        (
            {
                "instructions": [
                    {
                        "type": "startBeforeActivity",
                        "activityId": "after",
                        "variables": {"n": {"value": "y", "type": "Integer"}},
                    }
                ]
            },
            "instructions[0].variables:",
        ),
        (
            {"instructions": [{"type": "cancel", "activityId": "a"}], "skipIoMappings": "yes"},
            "'skipIoMappings' must be a boolean",
        ),
    ],
)
def test_invalid_modifications_answer_400_naming_the_field(
    deployed: LiveServer, operator: httpx.Client, body: dict[str, Any], message: str
) -> None:
    instance_id = start(operator, KEY)["id"]
    before = _activities(operator, instance_id)
    response = operator.post(f"/process-instance/{instance_id}/modification", json=body)
    _error(response, 400, "InvalidRequestException", message)
    assert _activities(operator, instance_id) == before


def test_unknown_instances_and_viewers_are_refused(
    deployed: LiveServer, operator: httpx.Client
) -> None:
    body = {"instructions": [{"type": "cancel", "activityId": "a"}]}
    unknown = "00000000-0000-0000-0000-000000000001"
    _error(
        operator.post(f"/process-instance/{unknown}/modification", json=body),
        404,
        "InvalidRequestException",
        "does not exist",
    )
    instance_id = start(operator, KEY)["id"]
    base = f"{deployed.url}/engine-rest"
    many = {
        **body,
        "processDefinitionId": deployed.engine.latest_definition(KEY).id,
        "processInstanceIds": [instance_id],
    }
    for path, sent in (
        (f"/process-instance/{instance_id}/modification", body),
        ("/modification/execute", many),
    ):
        viewer = httpx.post(f"{base}{path}", json=sent, auth=("viewer", PASSWORD))
        _error(viewer, 403, "AuthorizationException", "viewer")
    assert set(_activities(operator, instance_id)) == {"a", "b"}


def test_a_suspended_instance_is_not_modified(deployed: LiveServer, operator: httpx.Client) -> None:
    instance_id = start(operator, KEY)["id"]
    deployed.engine.instance(instance_id).suspend()
    body = {"instructions": [{"type": "cancel", "activityId": "a"}]}
    _error(
        operator.post(f"/process-instance/{instance_id}/modification", json=body),
        400,
        "InvalidRequestException",
        f"process instance {instance_id} is suspended",
    )
    assert set(_activities(operator, instance_id)) == {"a", "b"}


def test_execute_a_modification_over_ids_and_a_query(
    deployed: LiveServer, operator: httpx.Client
) -> None:
    one = start(operator, KEY)
    two = start(operator, KEY, businessKey="second")
    body: dict[str, Any] = {
        "processDefinitionId": one["definitionId"],
        "instructions": [
            {"type": "cancel", "activityId": "a"},
            {"type": "startBeforeActivity", "activityId": "after"},
        ],
        "processInstanceIds": [one["id"]],
        "processInstanceQuery": {"businessKey": "second"},
        "skipCustomListeners": False,
        "annotation": "both",
    }
    response = operator.post("/modification/execute", json=body)
    assert response.status_code == 204, response.text
    for instance in (one, two):
        assert set(_activities(operator, instance["id"])) == {"after", "b"}
    _error(
        operator.post("/modification/execute", json={**body, "processDefinitionId": None}),
        400,
        "InvalidRequestException",
        "'processDefinitionId' is required",
    )
    _error(
        operator.post("/modification/execute", json={**body, "processDefinitionId": "other:1"}),
        400,
        "InvalidRequestException",
        "not of the modification's process definition other:1",
    )
    empty = {**body, "processInstanceIds": [], "processInstanceQuery": None}
    _error(
        operator.post("/modification/execute", json=empty),
        400,
        "InvalidRequestException",
        "Process instance ids is empty",
    )
    # One moved already has no a left: refused whole, the other still has its a.
    three = start(operator, KEY)
    again = {**body, "processInstanceIds": [three["id"], one["id"]], "processInstanceQuery": None}
    _error(
        operator.post("/modification/execute", json=again),
        400,
        "InvalidRequestException",
        f"process instance {one['id']}: instruction 1 (cancel): activity 'a' has no active",
    )
    assert set(_activities(operator, three["id"])) == {"a", "b"}
