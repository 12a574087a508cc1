"""Tasks by candidate on /engine-rest, as Camunda 7 answers them: `candidateUser` (directly or
through a group the user is a member of), `candidateGroup(s)`, `with(out)CandidateGroups`,
`with(out)CandidateUsers`, `involvedUser`, `includeAssignedTasks`; a task's identity links
listed, added and deleted; claiming as a candidate, and refused to a non-candidate without
TASK_ASSIGN."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import httpx
import pytest

from engine.commands.identity import AddGroupMember, CreateGroup, CreateUserProfile
from engine.commands.tasks import ChangeTaskIdentityLink, LinkType
from engine.core.actors import Actor, acting
from engine.errors import AuthorizationDenied
from engine.identity.evaluate import Rule
from engine.identity.grants import grants_of
from engine.identity.permissions import AuthorizationType, ResourceType, permission_bits
from engine.states import AuditChannel
from tests.compat.conftest import deploy, start
from tests.compat.identity_support import audit_entries
from tests.compat.processes import candidate_review
from tests.server import LiveServer


def _string(value: str) -> dict[str, Any]:
    return {"value": value, "type": "String"}


def _task_of(rest: httpx.Client, instance_id: str) -> str:
    found = rest.get("/task", params={"processInstanceId": instance_id}).json()
    assert len(found) == 1, found
    task_id: str = found[0]["id"]
    return task_id


@pytest.fixture
def tasks(server: LiveServer, rest: httpx.Client) -> dict[str, str]:
    """Users ann, bob (in sales), carol (in support), dave, erin and zed; five open tasks:
    t1 for ann and the groups sales and support; t2 for dave and sales, t3 for erin and hr, t5
    for ann and support (each from expressions), assigned to zed; t4 without candidates."""
    for user in ("ann", "bob", "carol", "dave", "erin", "zed"):
        server.engine.run(CreateUserProfile(user))
    for group in ("sales", "support", "hr"):
        server.engine.run(CreateGroup(group))
    server.engine.run(AddGroupMember("sales", "bob"))
    server.engine.run(AddGroupMember("support", "carol"))
    deploy(
        rest,
        ("static.bpmn", candidate_review("static", "ann", "sales, support")),
        ("dynamic.bpmn", candidate_review("dynamic", "${approver}", "${team}")),
        ("plain.bpmn", candidate_review("plain")),
    )
    found = {"t1": _task_of(rest, start(rest, "static")["id"])}
    for name, approver, team in (("t2", "dave", "sales"), ("t3", "erin", "hr")):
        started = start(rest, "dynamic", {"approver": _string(approver), "team": _string(team)})
        found[name] = _task_of(rest, started["id"])
    found["t4"] = _task_of(rest, start(rest, "plain")["id"])
    started = start(rest, "dynamic", {"approver": _string("ann"), "team": _string("support")})
    found["t5"] = _task_of(rest, started["id"])
    response = rest.post(f"/task/{found['t5']}/assignee", json={"userId": "zed"})
    assert response.status_code == 204, response.text
    return found


def _names(rest: httpx.Client, tasks: dict[str, str], **params: str) -> set[str]:
    response = rest.get("/task", params=params)
    assert response.status_code == 200, response.text
    by_id = {task_id: name for name, task_id in tasks.items()}
    names = {by_id[row["id"]] for row in response.json()}
    counted = rest.get("/task/count", params=params)
    assert counted.status_code == 200, counted.text
    assert counted.json() == {"count": len(names)}
    return names


FILTERS: list[tuple[dict[str, str], set[str]]] = [
    # Direct candidate; the assigned t5 only with includeAssignedTasks.
    ({"candidateUser": "ann"}, {"t1"}),
    ({"candidateUser": "ann", "includeAssignedTasks": "true"}, {"t1", "t5"}),
    # Through a group: bob is in sales.
    ({"candidateUser": "bob"}, {"t1", "t2"}),
    ({"candidateUser": "carol"}, {"t1"}),
    ({"candidateUser": "carol", "includeAssignedTasks": "true"}, {"t1", "t5"}),
    # From an expression.
    ({"candidateUser": "dave"}, {"t2"}),
    ({"candidateUser": "zed"}, set()),
    ({"candidateUser": "nobody"}, set()),
    ({"candidateGroup": "sales"}, {"t1", "t2"}),
    ({"candidateGroup": "hr"}, {"t3"}),
    ({"candidateGroup": "support", "includeAssignedTasks": "true"}, {"t1", "t5"}),
    ({"candidateGroups": "hr,support"}, {"t1", "t3"}),
    ({"candidateGroups": "hr,support", "includeAssignedTasks": "true"}, {"t1", "t3", "t5"}),
    ({"withCandidateGroups": "true"}, {"t1", "t2", "t3"}),
    ({"withCandidateGroups": "true", "includeAssignedTasks": "true"}, {"t1", "t2", "t3", "t5"}),
    ({"withoutCandidateGroups": "true"}, {"t4"}),
    ({"withCandidateUsers": "true"}, {"t1", "t2", "t3"}),
    ({"withoutCandidateUsers": "true"}, {"t4"}),
    # `false` filters nothing.
    ({"withCandidateGroups": "false"}, {"t1", "t2", "t3", "t4", "t5"}),
    # The assignee or a candidate user; a group's member is not involved.
    ({"involvedUser": "zed"}, {"t5"}),
    ({"involvedUser": "ann"}, {"t1", "t5"}),
    ({"involvedUser": "bob"}, set()),
    ({"unassigned": "true"}, {"t1", "t2", "t3", "t4"}),
    ({"assigned": "true"}, {"t5"}),
    ({"candidateUser": "bob", "processDefinitionKey": "dynamic"}, {"t2"}),
]


def test_each_candidate_filter_answers_its_tasks(
    server: LiveServer, rest: httpx.Client, tasks: dict[str, str]
) -> None:
    for params, expected in FILTERS:
        assert _names(rest, tasks, **params) == expected, params


def test_a_bad_flag_names_its_parameter(rest: httpx.Client, tasks: dict[str, str]) -> None:
    response = rest.get("/task", params={"withCandidateGroups": "maybe"})
    assert response.status_code == 400
    assert "withCandidateGroups" in response.json()["message"]


def _links(rest: httpx.Client, task_id: str, **params: str) -> list[dict[str, Any]]:
    response = rest.get(f"/task/{task_id}/identity-links", params=params)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


def test_identity_links_are_listed_added_and_deleted(
    server: LiveServer, rest: httpx.Client, tasks: dict[str, str]
) -> None:
    t4, t5 = tasks["t4"], tasks["t5"]
    assert _links(rest, t5) == [
        {"userId": "zed", "groupId": None, "type": "assignee"},
        {"userId": "ann", "groupId": None, "type": "candidate"},
        {"userId": None, "groupId": "support", "type": "candidate"},
    ]
    assert _links(rest, t5, type="assignee") == [
        {"userId": "zed", "groupId": None, "type": "assignee"}
    ]
    assert _links(rest, t4) == []

    def post(path: str, body: dict[str, Any]) -> httpx.Response:
        return rest.post(f"/task/{t4}/identity-links{path}", json=body)

    assert post("", {"groupId": "hr", "type": "candidate"}).status_code == 204
    assert post("", {"userId": "bob", "type": "candidate"}).status_code == 204
    # Adding one it has changes nothing.
    assert post("", {"userId": "bob", "type": "candidate"}).status_code == 204
    assert _links(rest, t4, type="candidate") == [
        {"userId": "bob", "groupId": None, "type": "candidate"},
        {"userId": None, "groupId": "hr", "type": "candidate"},
    ]
    assert _names(rest, tasks, candidateGroup="hr") == {"t3", "t4"}
    assert _names(rest, tasks, candidateUser="bob") == {"t1", "t2", "t4"}
    assert post("/delete", {"groupId": "hr", "type": "candidate"}).status_code == 204
    assert _names(rest, tasks, candidateGroup="hr") == {"t3"}

    assert post("", {"userId": "dave", "type": "assignee"}).status_code == 204
    assert rest.get(f"/task/{t4}").json()["assignee"] == "dave"
    assert _names(rest, tasks, candidateUser="bob") == {"t1", "t2"}
    # Deleting somebody else's assignee link leaves the assignee.
    assert post("/delete", {"userId": "erin", "type": "assignee"}).status_code == 204
    assert rest.get(f"/task/{t4}").json()["assignee"] == "dave"
    assert post("/delete", {"userId": "dave", "type": "assignee"}).status_code == 204
    assert rest.get(f"/task/{t4}").json()["assignee"] is None
    assert _links(rest, t4) == [{"userId": "bob", "groupId": None, "type": "candidate"}]

    entries = [e for e in audit_entries(server, "Task") if e["entityId"] == t4]
    assert [(e["operation"], e["property"], e["before"], e["after"]) for e in entries] == [
        ("Update", "candidateGroups", "", "hr"),
        ("Update", "candidateUsers", "", "bob"),
        ("Update", "candidateUsers", "bob", "bob"),
        ("Update", "candidateGroups", "hr", ""),
        ("Assign", "assignee", None, "dave"),
        ("Assign", "assignee", "dave", "dave"),
        ("Assign", "assignee", "dave", None),
    ]
    assert {e["userId"] for e in entries} == {"admin"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"userId": "bob"}, "type"),
        ({"userId": "bob", "type": "owner"}, "type"),
        ({"userId": "bob", "type": 3}, "type"),
        ({"type": "candidate"}, "userId"),
        ({"userId": "bob", "groupId": "hr", "type": "candidate"}, "userId"),
        ({"groupId": "hr", "type": "assignee"}, "userId"),
    ],
)
def test_a_bad_identity_link_is_refused_naming_its_field(
    rest: httpx.Client, tasks: dict[str, str], body: dict[str, Any], field: str
) -> None:
    for path in ("", "/delete"):
        response = rest.post(f"/task/{tasks['t4']}/identity-links{path}", json=body)
        assert response.status_code == 400, response.text
        assert field in response.json()["message"]
    assert _links(rest, tasks["t4"]) == []


def test_identity_links_of_a_missing_task_are_404(rest: httpx.Client) -> None:
    missing = "00000000-0000-0000-0000-000000000001"
    assert rest.get(f"/task/{missing}/identity-links").status_code == 404
    response = rest.post(
        f"/task/{missing}/identity-links", json={"userId": "bob", "type": "candidate"}
    )
    assert response.status_code == 404, response.text


def _as(user: str, groups: list[str], *task_permissions: str) -> Any:
    rules = [
        Rule(
            AuthorizationType.GRANT,
            user,
            None,
            int(ResourceType.TASK),
            "*",
            permission_bits(ResourceType.TASK, [permission]),
        )
        for permission in task_permissions
    ]
    return acting(Actor(user, AuditChannel.API, grants=grants_of(user, groups, rules)))


def test_a_candidate_may_claim_and_others_need_task_assign(
    server: LiveServer, rest: httpx.Client, tasks: dict[str, str]
) -> None:
    engine = server.engine
    # bob is a candidate of t2 through sales.
    with _as("bob", ["sales"]):
        engine.claim_task(tasks["t2"], "bob")
    assert rest.get(f"/task/{tasks['t2']}").json()["assignee"] == "bob"
    # carol (support) is no candidate of t3 (hr) and holds nothing on tasks.
    with _as("carol", ["support"]), pytest.raises(AuthorizationDenied) as refused:
        engine.claim_task(tasks["t3"], "carol")
    assert {m.permission for m in refused.value.missing} >= {"TASK_ASSIGN", "TASK_WORK"}
    # Changing identity links needs TASK_ASSIGN (or UPDATE): a candidate is not enough.
    link = ChangeTaskIdentityLink(UUID(tasks["t1"]), LinkType.CANDIDATE, group_id="hr")
    with _as("bob", ["sales"]), pytest.raises(AuthorizationDenied) as refused:
        engine.run(link)
    assert [m.permission for m in refused.value.missing][:1] == ["TASK_ASSIGN"]
    assert _links(rest, tasks["t3"], type="assignee") == []
    assert all(link["groupId"] != "hr" for link in _links(rest, tasks["t1"]))
    with _as("carol", ["support"], "TASK_ASSIGN"):
        engine.claim_task(tasks["t3"], "carol")
        engine.run(link)
    assert rest.get(f"/task/{tasks['t3']}").json()["assignee"] == "carol"
    # t3 is carol's now: only t1 (hr added to it) is open to hr.
    assert _names(rest, tasks, candidateGroup="hr") == {"t1"}
