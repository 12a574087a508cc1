"""Each endpoint's happy path over a real server."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.api import processes
from tests.api.helpers import fetch, open_task, start
from tests.server import LiveServer


def test_deploy_and_read_definitions(admin: httpx.Client) -> None:
    source = processes.xml(processes.straight("uploaded"))
    files = {"files": ("uploaded.bpmn", source.encode(), "application/xml")}
    deployed = admin.post("/deployments", files=files, data={"name": "first"})
    assert deployed.status_code == 201, deployed.text
    body = deployed.json()
    assert body["deployment_id"]
    (definition,) = body["definitions"]
    assert definition["key"] == "uploaded" and definition["version"] == 1
    assert definition["created"] is True and definition["resource_name"] == "uploaded.bpmn"

    again = admin.post("/deployments", files=files)
    assert again.status_code == 200 and again.json()["deployment_id"] is None

    listed = admin.get("/definitions", params={"key": "uploaded"}).json()["items"]
    assert [d["id"] for d in listed] == [definition["id"]]
    one = admin.get(f"/definitions/{definition['id']}").json()
    assert one["key"] == "uploaded" and one["deployment_id"] == body["deployment_id"]
    assert one["created_at"].endswith("Z")
    assert admin.get("/definitions/key/uploaded").json()["id"] == definition["id"]
    xml = admin.get(f"/definitions/{definition['id']}/xml")
    assert xml.headers["content-type"].startswith("application/xml")
    assert 'id="uploaded"' in xml.text


def test_start_by_key_version_and_id(operator: httpx.Client) -> None:
    by_key = start(
        operator,
        "review",
        variables={"amount": 5, "when": {"type": "date", "value": "2025-01-31T12:00:00Z"}},
        business_key="order-1",
    )
    assert by_key["state"] == "Active" and by_key["business_key"] == "order-1"
    assert by_key["definition_key"] == "review" and by_key["started_at"].endswith("Z")
    variables = operator.get(f"/instances/{by_key['id']}/variables").json()
    assert variables == {
        "amount": {"type": "integer", "value": 5},
        "when": {"type": "date", "value": "2025-01-31T12:00:00+00:00"},
    }

    versioned = operator.post("/definitions/key/review/versions/1/start", json={})
    assert versioned.status_code == 201
    definition_id = versioned.json()["definition_id"]
    by_id = operator.post(f"/definitions/{definition_id}/start")
    assert by_id.status_code == 201 and by_id.json()["definition_id"] == definition_id

    done = start(operator, "straight")
    assert done["state"] == "Completed"


def test_instance_reads_and_commands(operator: httpx.Client) -> None:
    instance = start(operator, "waiting", variables={"order": "A-1"})
    iid = instance["id"]
    got = operator.get(f"/instances/{iid}").json()
    assert got["state"] == "Active" and got["ended_at"] is None
    tokens = operator.get(f"/instances/{iid}/tokens").json()["items"]
    assert sorted(t["node_id"] for t in tokens) == ["go", "paid"]
    assert {t["state"] for t in tokens} == {"WaitForEvent"}

    set_vars = operator.post(
        f"/instances/{iid}/variables",
        json={"variables": {"note": "hi", "count": {"type": "long", "value": 7}}},
    )
    assert set_vars.status_code == 200 and set_vars.json()["id"] == iid
    variables = operator.get(f"/instances/{iid}/variables").json()
    assert variables["note"] == {"type": "string", "value": "hi"}
    assert variables["count"] == {"type": "long", "value": 7}

    assert operator.post(f"/instances/{iid}/suspend").json()["state"] == "Suspended"
    assert operator.post(f"/instances/{iid}/resume").json()["state"] == "Active"

    history = operator.get(f"/instances/{iid}/history").json()["items"]
    root = next(track for track in history if track["parent_id"] is None)
    assert root["steps"][0]["node_id"] == "start"
    branches = [track for track in history if track["parent_id"] == root["id"]]
    assert len(branches) == 2

    cancelled = operator.post(f"/instances/{iid}/cancel")
    assert cancelled.json() == {
        "id": iid,
        "definition_id": instance["definition_id"],
        "state": "Terminated",
    }
    assert operator.get(f"/instances/{iid}").json()["ended_at"] is not None


def test_user_tasks(operator: httpx.Client) -> None:
    instance = start(operator, "review")
    task = open_task(operator, instance["id"])
    assert task["node_id"] == "review" and task["candidate_groups"] == ["reviewers"]
    by_group = operator.get("/user-tasks", params={"candidate_group": "reviewers"}).json()
    assert task["id"] in [t["id"] for t in by_group["items"]]
    assert operator.get(f"/user-tasks/{task['id']}").json()["name"] == "Review it"

    claimed = operator.post(f"/user-tasks/{task['id']}/claim", json={})
    assert claimed.status_code == 200
    assert operator.get(f"/user-tasks/{task['id']}").json()["assignee"] == "operator-token"
    operator.post(f"/user-tasks/{task['id']}/unclaim")
    assert operator.get(f"/user-tasks/{task['id']}").json()["assignee"] is None
    operator.post(f"/user-tasks/{task['id']}/assignee", json={"user_id": "mary"})
    mine = operator.get("/user-tasks", params={"assignee": "mary"}).json()["items"]
    assert [t["id"] for t in mine] == [task["id"]]

    done = operator.post(f"/user-tasks/{task['id']}/complete", json={"variables": {"ok": True}})
    assert done.json() == {
        "task_id": task["id"],
        "instance_id": instance["id"],
        "instance_state": "Completed",
    }
    completed = operator.get(
        "/user-tasks", params={"instance_id": instance["id"], "state": "Completed"}
    ).json()["items"]
    assert completed[0]["ended_at"] is not None


def test_external_tasks(operator: httpx.Client, api: LiveServer) -> None:
    instance = start(operator, "external", variables={"n": 1}, business_key="ext-1")
    (task,) = fetch(operator, "w1", max_tasks=5)
    assert task["instance_id"] == instance["id"] and task["business_key"] == "ext-1"
    assert task["variables"] == {"n": {"type": "integer", "value": 1}}
    assert task["lock_expires_at"].endswith("Z")
    listed = operator.get("/external-tasks", params={"worker_id": "w1"}).json()["items"]
    assert [t["id"] for t in listed] == [task["id"]]
    assert operator.get(f"/external-tasks/{task['id']}").json()["topic"] == "work"

    tid = task["id"]
    extended = operator.post(
        f"/external-tasks/{tid}/extend-lock", json={"worker_id": "w1", "new_duration_ms": 120_000}
    )
    assert extended.status_code == 200
    assert operator.post(f"/external-tasks/{tid}/unlock").status_code == 200
    assert operator.get("/external-tasks", params={"locked": "false"}).json()["items"]
    (again,) = fetch(operator, "w2")
    assert again["id"] == tid
    failed = operator.post(
        f"/external-tasks/{tid}/failure",
        json={"worker_id": "w2", "error_message": "flaky", "retries": 2, "retry_timeout_ms": 0},
    )
    assert failed.status_code == 200
    (third,) = fetch(operator, "w3")
    assert third["retries"] == 2 and third["error_message"] == "flaky"
    done = operator.post(
        f"/external-tasks/{tid}/complete", json={"worker_id": "w3", "variables": {"out": "x"}}
    )
    assert done.json()["instance_state"] == "Completed"

    second = start(operator, "external")
    (task,) = fetch(operator, "w4")
    thrown = operator.post(
        f"/external-tasks/{task['id']}/bpmn-error",
        json={"worker_id": "w4", "error_code": "NOPE", "error_message": "no"},
    )
    assert thrown.status_code == 200 and thrown.json()["instance_id"] == second["id"]


def test_long_poll_wakes_when_work_appears(operator: httpx.Client, api: LiveServer) -> None:
    def later() -> None:
        time.sleep(0.3)
        api.engine.start_latest("external", business_key="late", variables={})

    threading.Thread(target=later).start()
    began = time.monotonic()
    found = fetch(operator, "poller", timeout_ms=60_000)
    waited = time.monotonic() - began
    assert [t["business_key"] for t in found] == ["late"]
    assert 0.25 < waited < 30  # woken by the start, long before its 60 s ran out
    began = time.monotonic()
    assert fetch(operator, "poller", topic="nothing-here", timeout_ms=300) == []
    assert 0.25 < time.monotonic() - began < 30
    operator.post(f"/external-tasks/{found[0]['id']}/complete", json={"worker_id": "poller"})


def test_waiting_fetches_hold_no_threads(operator: httpx.Client, api: LiveServer) -> None:
    """More long polls than the server has worker threads: reads are still answered while they
    wait, and as work appears each task goes to exactly one of them."""
    polls = 45
    api.engine.deploy(processes.external("idle-work", topic="idle"))
    body = {
        "worker_id": "idle",
        "timeout_ms": 30_000,
        "topics": [{"topic": "idle", "lock_duration_ms": 60_000}],
    }

    def poll(_: int) -> list[str]:
        with httpx.Client(headers=api.bearer("operator"), timeout=60) as client:
            response = client.post(f"{api.url}/api/v1/external-tasks/fetch-and-lock", json=body)
            assert response.status_code == 200, response.text
            return [task["id"] for task in response.json()["items"]]

    with ThreadPoolExecutor(polls) as pool:
        waiting = [pool.submit(poll, n) for n in range(polls)]
        time.sleep(0.5)
        assert operator.get("/definitions").status_code == 200
        assert not any(f.done() for f in waiting), "a read waited for the long polls to end"
        for _ in range(polls):
            api.engine.start_latest("idle-work")
        locked = [f.result() for f in waiting]
    assert all(len(ids) == 1 for ids in locked)
    assert len({ids[0] for ids in locked}) == polls


def test_messages_and_signals(operator: httpx.Client) -> None:
    instance = start(operator, "waiting", business_key="order-77")
    delivered = operator.post(
        "/messages",
        json={"message_name": "order-paid", "business_key": "order-77", "variables": {"p": 1}},
    )
    assert delivered.status_code == 200, delivered.text
    assert delivered.json() == {"deliveries": [{"kind": "instance", "instance_id": instance["id"]}]}
    signalled = operator.post("/signals", json={"signal_name": "go"})
    assert {"kind": "instance", "instance_id": instance["id"]} in signalled.json()["deliveries"]
    assert operator.get(f"/instances/{instance['id']}").json()["state"] == "Completed"


def test_incidents(operator: httpx.Client) -> None:
    instance = start(operator, "external", business_key="incident")
    (task,) = fetch(operator, "wi")
    operator.post(
        f"/external-tasks/{task['id']}/failure",
        json={"worker_id": "wi", "error_message": "broken", "error_details": "trace"},
    )
    found = operator.get("/incidents", params={"instance_id": instance["id"]}).json()["items"]
    assert len(found) == 1 and found[0]["type"] == "failedExternalTask"
    incident = found[0]
    assert incident["external_task_id"] == task["id"] and incident["details"] == "trace"
    assert operator.get(f"/incidents/{incident['id']}").json()["message"] == "broken"

    retried = operator.post(f"/incidents/{incident['id']}/retry")
    assert retried.json()["state"] == "Resolved"
    (task,) = fetch(operator, "wi")
    operator.post(
        f"/external-tasks/{task['id']}/failure", json={"worker_id": "wi", "error_message": "2"}
    )
    (second,) = operator.get("/incidents", params={"instance_id": instance["id"]}).json()["items"]
    set_retries = operator.post(f"/incidents/{second['id']}/retries", json={"retries": 3})
    assert set_retries.json()["external_task_id"] == task["id"]
    assert operator.get(f"/incidents/{second['id']}").json()["state"] == "Resolved"

    (task,) = fetch(operator, "wi")
    operator.post(
        f"/external-tasks/{task['id']}/failure", json={"worker_id": "wi", "error_message": "3"}
    )
    (third,) = operator.get("/incidents", params={"instance_id": instance["id"]}).json()["items"]
    resolved = operator.post(f"/incidents/{third['id']}/resolve")
    assert resolved.json() == {
        "incident_id": third["id"],
        "instance_id": instance["id"],
        "state": "Resolved",
    }
    every = operator.get(
        "/incidents", params={"instance_id": instance["id"], "state": "any"}
    ).json()["items"]
    assert len(every) == 3


def test_jobs(operator: httpx.Client) -> None:
    instance = start(operator, "timer")
    (job,) = operator.get("/jobs", params={"instance_id": instance["id"]}).json()["items"]
    assert job["kind"] == "timer" and job["node_id"] == "later"
    assert operator.get(f"/jobs/{job['id']}").json()["due_at"].endswith("Z")
    assert operator.post(f"/jobs/{job['id']}/retries", json={"retries": 5}).json() == {
        "job_id": job["id"],
        "outcome": "updated",
        "instance_id": instance["id"],
    }
    assert operator.get(f"/jobs/{job['id']}").json()["retries"] == 5
    executed = operator.post(f"/jobs/{job['id']}/execute")
    assert executed.json()["outcome"] == "executed"
    assert operator.get(f"/instances/{instance['id']}").json()["state"] == "Completed"


def test_users_and_tokens(admin: httpx.Client, api: LiveServer) -> None:
    made = admin.post("/users", json={"name": "carol", "role": "operator"})
    assert made.status_code == 201
    password = made.json()["password"]
    assert len(password) >= 12
    as_carol = httpx.get(f"{api.url}/api/v1/definitions", auth=("carol", password))
    assert as_carol.status_code == 200
    given = admin.post("/users", json={"name": "dave", "role": "viewer", "password": "x" * 10})
    assert given.json() == {"name": "dave", "role": "viewer", "password": None}
    users = admin.get("/users").json()["items"]
    assert {"name": "carol", "role": "operator"} in users

    token = admin.post("/tokens", json={"name": "ci", "role": "viewer"}).json()["token"]
    with_token = httpx.get(
        f"{api.url}/api/v1/instances", headers={"Authorization": f"Bearer {token}"}
    )
    assert with_token.status_code == 200
    assert {"name": "ci", "role": "viewer"} in admin.get("/tokens").json()["items"]
    assert admin.delete("/tokens/ci").status_code == 204
    revoked = httpx.get(f"{api.url}/api/v1/instances", headers={"Authorization": f"Bearer {token}"})
    assert revoked.status_code == 401
    assert admin.delete("/users/dave").status_code == 204
    assert admin.delete("/users/dave").status_code == 404


def test_suspend_and_activate_a_definition(
    api: LiveServer, admin: httpx.Client, operator: httpx.Client
) -> None:
    api.engine.deploy(processes.straight("pausable"))
    api.engine.deploy(processes.review("pausable-wait"))
    waiting = api.engine.start_latest("pausable-wait")
    definition = admin.get("/definitions/key/pausable").json()
    assert definition["suspended"] is False
    # Suspending a definition is an administrator's.
    assert operator.post(f"/definitions/{definition['id']}/suspend").status_code == 403
    suspended = admin.post(f"/definitions/{definition['id']}/suspend")
    assert suspended.status_code == 200, suspended.text
    assert suspended.json() == {"definition_ids": [definition["id"]], "instance_ids": []}
    assert admin.get(f"/definitions/{definition['id']}").json()["suspended"] is True
    refused = operator.post("/definitions/key/pausable/start", json={})
    assert refused.status_code == 409, refused.text
    assert refused.json()["type"] == "Suspended" and "is suspended" in refused.json()["message"]
    activated = admin.post("/definitions/key/pausable/activate", json={})
    assert activated.json()["definition_ids"] == [definition["id"]]
    assert operator.post("/definitions/key/pausable/start", json={}).status_code == 201

    with_instances = admin.post(
        "/definitions/key/pausable-wait/suspend", json={"include_instances": True}
    )
    assert with_instances.json()["instance_ids"] == [str(waiting.id)]
    assert operator.get(f"/instances/{waiting.id}").json()["state"] == "Suspended"
    bad = admin.post("/definitions/key/pausable-wait/activate", json={"include_instances": 1})
    assert bad.status_code == 400 and "include_instances" in bad.text
    admin.post("/definitions/key/pausable-wait/activate", json={"include_instances": True})
    assert operator.get(f"/instances/{waiting.id}").json()["state"] == "Active"
