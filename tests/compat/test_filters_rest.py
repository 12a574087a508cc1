"""Camunda's filter resource (saved task queries) on /engine-rest, against a real server: the
answers' shapes as Camunda 7.24's REST reference gives them (FilterDto: id, resourceType, name,
owner, query, properties, and itemCount only when asked; ResourceOptionsDto's links); create,
list, count, get, update and delete; running a filter (list, count, singleResult) with a posted
query that extends it and sorting; `${currentUser()}` and `${currentUserGroups()}` resolved for
the caller; FILTER authorizations (the owner's grant, READ to see and run one); and a filter made
over REST listing the same tasks as the console's saved view of the inbox with the same
criteria, and a view saved in the console listed as a filter."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from starlette.datastructures import QueryParams

from app.console.tasks import filter_of
from app.params import Query
from engine.commands.identity import AddGroupMember, CreateGroup
from engine.commands.views import SaveView
from engine.queries import lists
from tests.compat.conftest import deploy, start
from tests.compat.processes import candidate_review
from tests.server import PASSWORD, LiveServer

FILTER_KEYS = {"id", "resourceType", "name", "owner", "query", "properties"}
# A few of the reference's TaskDto fields, which a filter's list answers with.
TASK_KEYS = {"id", "name", "assignee", "created", "processInstanceId", "taskDefinitionKey"}


@pytest.fixture
def viewer(server: LiveServer) -> Iterator[httpx.Client]:
    """A user without any FILTER authorization."""
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD), timeout=30
    ) as client:
        yield client


def _task_of(rest: httpx.Client, instance_id: str) -> str:
    found = rest.get("/task", params={"processInstanceId": instance_id}).json()
    assert len(found) == 1, found
    task_id: str = found[0]["id"]
    return task_id


@pytest.fixture
def tasks(server: LiveServer, rest: httpx.Client) -> dict[str, str]:
    """Open tasks: a1, a2 (process `fx`, assigned to admin, priorities 10 and 70), o1 (`fx`,
    assigned to operator), g1 (`fx`, unassigned, candidate group `clerks`, which viewer is in),
    x1 (process `other`, assigned to admin)."""
    server.engine.run(CreateGroup("clerks"))
    server.engine.run(AddGroupMember("clerks", "viewer"))
    deploy(
        rest,
        ("fx.bpmn", candidate_review("fx", None, "clerks")),
        ("other.bpmn", candidate_review("other")),
    )
    found: dict[str, str] = {}
    for name, key, assignee, priority in (
        ("a1", "fx", "admin", 10),
        ("a2", "fx", "admin", 70),
        ("o1", "fx", "operator", 50),
        ("g1", "fx", None, 50),
        ("x1", "other", "admin", 50),
    ):
        task_id = _task_of(rest, start(rest, key)["id"])
        if assignee is not None:
            response = rest.post(f"/task/{task_id}/assignee", json={"userId": assignee})
            assert response.status_code == 204, response.text
        detail = rest.get(f"/task/{task_id}").json()
        changed = rest.put(f"/task/{task_id}", json={**detail, "priority": priority})
        assert changed.status_code == 204, changed.text
        found[name] = task_id
    return found


def _create(rest: httpx.Client, **body: Any) -> dict[str, Any]:
    response = rest.post("/filter/create", json={"resourceType": "Task", **body})
    assert response.status_code == 200, response.text
    created: dict[str, Any] = response.json()
    return created


def _names(tasks: dict[str, str], rows: list[dict[str, Any]]) -> list[str]:
    by_id = {task_id: name for name, task_id in tasks.items()}
    return [by_id[row["id"]] for row in rows]


def test_create_get_list_count_update_delete(
    server: LiveServer, rest: httpx.Client, tasks: dict[str, str]
) -> None:
    query = {"processDefinitionKey": "fx", "assigneeExpression": "${currentUser()}"}
    properties = {"color": "#3e4d2f", "priority": 5, "variables": [{"name": "amount"}]}
    created = _create(rest, name="My fx tasks", owner="admin", query=query, properties=properties)
    filter_id = created["id"]
    # Camunda's FilterDto: itemCount only when asked for.
    assert created == {
        "id": filter_id,
        "resourceType": "Task",
        "name": "My fx tasks",
        "owner": "admin",
        "query": query,
        "properties": properties,
    }
    assert rest.get(f"/filter/{filter_id}").json() == created
    counted = rest.get(f"/filter/{filter_id}", params={"itemCount": "true"}).json()
    assert counted == {**created, "itemCount": 2}

    other = _create(rest, name="Other", owner="operator", query={"processDefinitionKey": "other"})
    listed = rest.get("/filter", params={"sortBy": "name", "sortOrder": "asc"})
    assert listed.status_code == 200, listed.text
    assert [f["name"] for f in listed.json()] == ["My fx tasks", "Other"]
    assert all(set(f) == FILTER_KEYS for f in listed.json())
    with_counts = rest.get("/filter", params={"itemCount": "true", "sortBy": "owner",
                                              "sortOrder": "desc"}).json()  # fmt: skip
    assert [(f["name"], f["itemCount"]) for f in with_counts] == [("Other", 1), ("My fx tasks", 2)]
    assert rest.get("/filter/count").json() == {"count": 2}
    for params, names in (
        ({"owner": "operator"}, ["Other"]),
        ({"name": "My fx tasks"}, ["My fx tasks"]),
        ({"nameLike": "My%"}, ["My fx tasks"]),
        ({"filterId": other["id"]}, ["Other"]),
        ({"resourceType": "Task", "sortBy": "filterId", "sortOrder": "asc"}, None),
        ({"resourceType": "Case"}, []),
    ):
        found = rest.get("/filter", params=params).json()
        if names is not None:
            assert [f["name"] for f in found] == names, params
            assert rest.get("/filter/count", params=params).json() == {"count": len(names)}
        else:
            assert sorted(f["id"] for f in found) == [f["id"] for f in found]
    paged = rest.get("/filter", params={"sortBy": "name", "sortOrder": "asc", "firstResult": 1,
                                         "maxResults": 1}).json()  # fmt: skip
    assert [f["name"] for f in paged] == ["Other"]

    # PUT changes everything at once: 204; the query now finds the other process's task.
    changed = {"name": "Renamed", "owner": "admin", "query": {"processDefinitionKey": "other"},
               "properties": {"color": "red"}}  # fmt: skip
    response = rest.put(f"/filter/{filter_id}", json=changed)
    assert response.status_code == 204, response.text
    assert rest.get(f"/filter/{filter_id}").json() == {
        "id": filter_id, "resourceType": "Task", **changed}  # fmt: skip
    assert _names(tasks, rest.get(f"/filter/{filter_id}/list").json()) == ["x1"]

    assert rest.delete(f"/filter/{filter_id}").status_code == 204
    missing = rest.get(f"/filter/{filter_id}")
    assert missing.status_code == 404
    assert missing.json() == {
        "type": "InvalidRequestException",
        "message": f"Filter with id '{filter_id}' does not exist.",
    }
    assert rest.delete(f"/filter/{filter_id}").status_code == 404
    assert rest.put(f"/filter/{filter_id}", json=changed).status_code == 404
    assert rest.get(f"/filter/{filter_id}/list").status_code == 404
    assert rest.get("/filter/not-an-id/count").status_code == 404
    # Its owner's grant went with it.
    with server.engine.connection() as conn:
        left = conn.execute(
            "SELECT count(*) FROM authorization_rule WHERE resource_type = 5 AND resource_id = %s",
            (filter_id,),
        ).fetchone()
    assert left is not None and left[0] == 0


def test_refusals_name_what_is_wrong(rest: httpx.Client, tasks: dict[str, str]) -> None:
    case = rest.post("/filter/create", json={"resourceType": "Case", "name": "c", "query": {}})
    assert case.status_code == 400
    assert case.json() == {
        "type": "InvalidRequestException",
        "message": "Unable to create filter with invalid resource type 'Case'",
    }
    for body, field in (
        ({"name": "n", "query": {"priority": "high"}}, "priority"),
        ({"name": "n", "query": {"sorting": [{"sortBy": "nope", "sortOrder": "asc"}]}}, "sorting"),
        ({"name": "n", "query": {"assigneeExpression": "${execution.getVariable('x')}"}},
         "assigneeExpression"),
        ({"name": "n", "query": {"dueDateExpression": "${now()}"}}, "dueDateExpression"),
        ({"name": "n", "query": []}, "query"),
        ({"name": "n", "query": {}, "properties": [1]}, "properties"),
        ({"name": "", "query": {}}, "name"),
    ):  # fmt: skip
        refused = rest.post("/filter/create", json={"resourceType": "Task", **body})
        assert refused.status_code == 400, (body, refused.text)
        assert field in refused.json()["message"], (body, refused.json())
        assert refused.json()["type"] == "InvalidRequestException"
    made = _create(rest, name="n", owner="admin", query={})
    update = rest.put(f"/filter/{made['id']}", json={"resourceType": "Case", "name": "n",
                                                      "query": {}})  # fmt: skip
    assert update.status_code == 400
    assert update.json()["message"] == "Unable to update filter from resource type 'Task' to 'Case'"
    extended = rest.post(f"/filter/{made['id']}/list", json={"priority": "high"})
    assert extended.status_code == 400
    assert extended.json()["message"].startswith("Filter cannot be extended by an invalid query")
    assert "priority" in extended.json()["message"]


def test_running_a_filter_extends_its_query(
    server: LiveServer, rest: httpx.Client, tasks: dict[str, str]
) -> None:
    saved = {
        "processDefinitionKey": "fx",
        "sorting": [{"sortBy": "priority", "sortOrder": "desc"}],
    }
    filter_id = _create(rest, name="fx", owner="admin", query=saved)["id"]
    listed = rest.get(f"/filter/{filter_id}/list")
    assert listed.status_code == 200, listed.text
    rows = listed.json()
    assert all(set(row) >= TASK_KEYS for row in rows)
    # The saved sorting: priority descending, then the order that breaks ties (created, id).
    assert _names(tasks, rows) == ["a2", "o1", "g1", "a1"]
    assert rest.get(f"/filter/{filter_id}/count").json() == {"count": 4}
    page = rest.get(f"/filter/{filter_id}/list", params={"firstResult": 1, "maxResults": 2})
    assert _names(tasks, page.json()) == ["o1", "g1"]

    # A posted query extends the saved one: its fields added, its sorting after the saved.
    extension = {"assignee": "admin"}
    assert _names(tasks, rest.post(f"/filter/{filter_id}/list", json=extension).json()) == [
        "a2",
        "a1",
    ]
    assert rest.post(f"/filter/{filter_id}/count", json=extension).json() == {"count": 2}
    # A field the extension gives replaces the saved one.
    other = rest.post(f"/filter/{filter_id}/list", json={"processDefinitionKey": "other"})
    assert _names(tasks, other.json()) == ["x1"]
    # Its sorting comes after the saved one's: ties of priority 50 by assignee then, descending
    # (no assignee first, as PostgreSQL orders nulls in a descending order).
    sorted_by = {"sorting": [{"sortBy": "assignee", "sortOrder": "desc"}]}
    assert _names(tasks, rest.post(f"/filter/{filter_id}/list", json=sorted_by).json()) == [
        "a2",
        "g1",
        "o1",
        "a1",
    ]
    asc = {"sortBy": "priority", "sortOrder": "asc"}
    plain = _create(rest, name="plain", owner="admin", query={"processDefinitionKey": "fx"})["id"]
    by_priority = rest.post(f"/filter/{plain}/list", json={"sorting": [asc]}).json()
    assert _names(tasks, by_priority)[0] == "a1"
    # Variables in the posted query; an empty body is no extension.
    assert rest.post(f"/filter/{filter_id}/list", json={}).json() == rows
    assert rest.post(
        f"/filter/{filter_id}/count",
        json={"processVariables": [{"name": "missing", "operator": "eq", "value": 1}]},
    ).json() == {"count": 0}

    # singleResult: the one task, 204 for none, 400 for several.
    single = rest.post(f"/filter/{filter_id}/singleResult", json={"assignee": "operator"})
    assert single.status_code == 200, single.text
    assert single.json()["id"] == tasks["o1"]
    none = rest.post(f"/filter/{filter_id}/singleResult", json={"assignee": "nobody"})
    assert none.status_code == 204
    several = rest.get(f"/filter/{filter_id}/singleResult")
    assert several.status_code == 400
    assert several.json() == {
        "type": "InvalidRequestException",
        "message": "Filter does not returns a valid single result",
    }


def test_current_user_is_the_caller(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client, viewer: httpx.Client,
    tasks: dict[str, str],
) -> None:  # fmt: skip
    mine = _create(
        rest, name="Mine", owner="admin", query={"assigneeExpression": "${currentUser()}"}
    )["id"]
    groups = _create(
        rest,
        name="My groups",
        owner="admin",
        query={"candidateGroupsExpression": "${ currentUserGroups() }"},
    )["id"]
    for filter_id in (mine, groups):
        for user in ("operator", "viewer"):
            grant = {"type": 1, "permissions": ["READ"], "userId": user, "resourceType": 5,
                     "resourceId": filter_id}  # fmt: skip
            assert rest.post("/authorization/create", json=grant).status_code == 200
    assert sorted(_names(tasks, rest.get(f"/filter/{mine}/list").json())) == ["a1", "a2", "x1"]
    assert _names(tasks, operator.get(f"/filter/{mine}/list").json()) == ["o1"]
    assert viewer.get(f"/filter/{mine}/count").json() == {"count": 0}
    # viewer is in clerks, the candidate group of g1; operator is in no such group.
    assert _names(tasks, viewer.get(f"/filter/{groups}/list").json()) == ["g1"]
    assert operator.get(f"/filter/{groups}/list").json() == []
    # The saved query keeps the expression as given.
    assert operator.get(f"/filter/{mine}").json()["query"] == {
        "assigneeExpression": "${currentUser()}"
    }


def test_read_on_a_filter_decides_who_sees_and_runs_it(
    server: LiveServer, rest: httpx.Client, viewer: httpx.Client, tasks: dict[str, str]
) -> None:
    filter_id = _create(rest, name="Admin's", owner="admin", query={})["id"]
    # The owner was granted every permission on it, as Camunda grants a filter's owner.
    rules = rest.get("/authorization", params={"resourceType": 5, "resourceId": filter_id})
    assert [(r["userId"], r["permissions"]) for r in rules.json()] == [("admin", ["ALL"])]

    assert viewer.get("/filter").json() == []
    assert viewer.get("/filter/count").json() == {"count": 0}
    for method, path in (
        ("GET", f"/filter/{filter_id}"),
        ("GET", f"/filter/{filter_id}/list"),
        ("POST", f"/filter/{filter_id}/list"),
        ("GET", f"/filter/{filter_id}/count"),
        ("GET", f"/filter/{filter_id}/singleResult"),
    ):
        refused = viewer.request(method, path, json={} if method == "POST" else None)
        assert refused.status_code == 403, (path, refused.text)
        assert refused.json()["type"] == "AuthorizationException"
    assert viewer.delete(f"/filter/{filter_id}").status_code == 403
    assert viewer.put(f"/filter/{filter_id}", json={"name": "x", "query": {}}).status_code == 403
    assert viewer.post("/filter/create", json={"resourceType": "Task", "name": "v",
                                               "query": {}}).status_code == 403  # fmt: skip
    # OPTIONS: the links the caller may use.
    base = f"{server.url}/engine-rest/filter"
    assert viewer.options("/filter").json() == {
        "links": [
            {"method": "GET", "href": base, "rel": "list"},
            {"method": "GET", "href": f"{base}/count", "rel": "count"},
        ]
    }
    assert rest.options("/filter").json()["links"][-1] == {
        "method": "POST", "href": f"{base}/create", "rel": "create"}  # fmt: skip
    assert viewer.options(f"/filter/{filter_id}").json() == {"links": []}
    admin_links = rest.options(f"/filter/{filter_id}").json()["links"]
    assert [(link["method"], link["rel"]) for link in admin_links] == [
        ("GET", "self"),
        ("GET", "singleResult"),
        ("POST", "singleResult"),
        ("GET", "list"),
        ("POST", "list"),
        ("GET", "count"),
        ("POST", "count"),
        ("DELETE", "delete"),
        ("PUT", "update"),
    ]
    assert admin_links[0]["href"] == f"{base}/{filter_id}"

    grant = {"type": 1, "permissions": ["READ"], "userId": "viewer", "resourceType": 5,
             "resourceId": filter_id}  # fmt: skip
    assert rest.post("/authorization/create", json=grant).status_code == 200
    assert [f["id"] for f in viewer.get("/filter").json()] == [filter_id]
    assert viewer.get(f"/filter/{filter_id}/count").json() == {"count": 5}
    rels = [link["rel"] for link in viewer.options(f"/filter/{filter_id}").json()["links"]]
    assert "delete" not in rels and "self" in rels
    assert viewer.delete(f"/filter/{filter_id}").status_code == 403


def _console_task_ids(server: LiveServer, query: str, me: str) -> list[str]:
    """The task ids the console's inbox lists for `me` with the view's query string: the inbox's
    own filter (app/console/tasks.py) and list query."""
    where = filter_of(Query(QueryParams(query)), me)
    page = lists.task_page(server.engine, where, None)
    return [str(task.id) for task in page.items]


def test_a_rest_filter_lists_what_the_console_view_lists(
    server: LiveServer, rest: httpx.Client, tasks: dict[str, str]
) -> None:
    """The issue's proof: a filter made over REST lists the same tasks as the console's saved
    view with the same criteria, and a view saved in the console is a filter too."""
    console_query = urlencode({"show": "mine", "definition": "fx"})
    server.engine.run(SaveView("admin", "tasks", "Console fx", console_query))
    made = _create(
        rest,
        name="REST fx",
        owner="admin",
        query={"processDefinitionKey": "fx", "assigneeExpression": "${currentUser()}"},
    )
    console_ids = _console_task_ids(server, console_query, "admin")
    assert sorted(console_ids) == sorted([tasks["a1"], tasks["a2"]])
    by_rest = [row["id"] for row in rest.get(f"/filter/{made['id']}/list").json()]
    assert by_rest == console_ids

    # The console's view is listed as a filter, its query mapped to Camunda's fields, and runs
    # to the same tasks.
    listed = {f["name"]: f for f in rest.get("/filter").json()}
    view = listed["Console fx"]
    assert set(view) == FILTER_KEYS
    assert view["owner"] == "admin"
    assert view["query"] == {"processDefinitionKey": "fx", "assigneeExpression": "${currentUser()}"}
    assert [row["id"] for row in rest.get(f"/filter/{view['id']}/list").json()] == console_ids

    # Each inbox view the console offers lists the console's tasks when run as a filter (the
    # "inbox" view, which no Camunda field says, included).
    for show in ("all", "unassigned", "groups", "inbox"):
        for user, client_auth in (("admin", ("admin", PASSWORD)), ("viewer", ("viewer", PASSWORD))):
            query = urlencode({"show": show, "definition": "fx"})
            name = f"{user} {show}"
            server.engine.run(SaveView(user, "tasks", name, query))
            with httpx.Client(base_url=f"{server.url}/engine-rest", auth=client_auth) as client:
                found = {f["name"]: f["id"] for f in client.get("/filter").json()}
                rows = client.get(f"/filter/{found[name]}/list").json()
            expected = _console_task_ids(server, query, user)
            assert sorted(row["id"] for row in rows) == sorted(expected), (show, user)

    # The REST filter opens in the console: its query is one the inbox's filters say exactly.
    with server.engine.connection() as conn:
        row = conn.execute("SELECT query FROM saved_view WHERE id = %s", (made["id"],)).fetchone()
    assert row is not None and row[0] == console_query
