"""Camunda's deployment resource over a real server: the list, its count, filters and sorting;
one deployment; its files and their bytes; deletion with and without cascade; redeployment; and
duplicate filtering (`enable-duplicate-filtering`, `deploy-changed-only`). The answers' shapes
are those of Camunda 7.24's REST reference (DeploymentDto, DeploymentResourceDto)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import httpx

from tests.compat import processes
from tests.compat.conftest import start
from tests.server import PASSWORD, LiveServer

# Camunda's DeploymentDto and DeploymentResourceDto, field for field.
DEPLOYMENT = {"links", "id", "name", "source", "deploymentTime", "tenantId"}
RESOURCE = {"id", "name", "deploymentId"}
CAMUNDA_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00"


def _deploy(rest: httpx.Client, files: list[tuple[str, bytes]], **fields: str) -> dict[str, Any]:
    response = rest.post(
        "/deployment/create",
        data=fields,
        files=[(f"data{i}", (name, content)) for i, (name, content) in enumerate(files)],
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    return response.json()


def _error(response: httpx.Response, status: int, type_: str, text: str = "") -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) >= {"type", "message"} and body["type"] == type_, body
    assert text in body["message"], body


def _later(camunda_date: str) -> str:
    """A Camunda date one millisecond later."""
    moment = datetime.strptime(camunda_date, "%Y-%m-%dT%H:%M:%S.%f%z") + timedelta(milliseconds=1)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+0000"


def _names(rest: httpx.Client, **params: Any) -> list[str | None]:
    rows = _ok(rest.get("/deployment", params=params))
    count = _ok(rest.get("/deployment/count", params=params))["count"]
    if not {"firstResult", "maxResults"} & set(params):
        assert count == len(rows), (params, rows)
    return [row["name"] for row in rows]


def test_list_count_filters_and_sorting(rest: httpx.Client) -> None:
    alpha = _deploy(
        rest,
        [("a.bpmn", processes.approval("a").encode())],
        **{"deployment-name": "alpha", "deployment-source": "ci"},
    )
    beta = _deploy(
        rest, [("b.bpmn", processes.approval("b").encode())], **{"deployment-name": "beta"}
    )
    gamma = _deploy(
        rest,
        [("c.bpmn", processes.approval("c").encode())],
        **{"deployment-name": "alphabet", "tenant-id": "acme"},
    )

    rows = _ok(rest.get("/deployment", params={"sortBy": "name", "sortOrder": "asc"}))
    assert [row["name"] for row in rows] == ["alpha", "alphabet", "beta"]
    for row in rows:
        assert set(row) == DEPLOYMENT
        assert row["links"] == []
        assert CAMUNDA_DATE.fullmatch(row["deploymentTime"])
    first = rows[0]
    assert first == {
        "links": [],
        "id": alpha["id"],
        "name": "alpha",
        "source": "ci",
        "deploymentTime": alpha["deploymentTime"],
        "tenantId": None,
    }
    assert rows[1]["tenantId"] == "acme" and rows[1]["source"] is None

    assert _names(rest, sortBy="name", sortOrder="desc") == ["beta", "alphabet", "alpha"]
    assert _names(rest, sortBy="name", sortOrder="asc", firstResult=1, maxResults=1) == ["alphabet"]
    assert _names(rest, sortBy="deploymentTime", sortOrder="asc") == ["alpha", "beta", "alphabet"]
    assert _names(rest, sortBy="tenantId", sortOrder="desc")[0] in ("alphabet", "alpha", "beta")
    assert _names(rest, id=beta["id"]) == ["beta"]
    assert _names(rest, id="not-an-id") == []
    assert _names(rest, name="alpha") == ["alpha"]
    assert _names(rest, nameLike="alpha%", sortBy="name", sortOrder="asc") == [
        "alpha",
        "alphabet",
    ]
    assert _names(rest, source="ci") == ["alpha"]
    assert _names(rest, withoutSource="true", sortBy="name", sortOrder="asc") == [
        "alphabet",
        "beta",
    ]
    assert _names(rest, tenantIdIn="acme") == ["alphabet"]
    assert _names(
        rest,
        tenantIdIn="acme,other",
        includeDeploymentsWithoutTenantId="true",
        sortBy="name",
        sortOrder="asc",
    ) == [
        "alpha",
        "alphabet",
        "beta",
    ]
    assert _names(rest, withoutTenantId="true", sortBy="name", sortOrder="asc") == ["alpha", "beta"]
    # Camunda's dates count milliseconds; the stored times finer ones.
    assert _names(rest, after=_later(beta["deploymentTime"])) == ["alphabet"]
    assert _names(rest, before=beta["deploymentTime"]) == ["alpha"]
    # A parameter Camunda does not know is ignored, as Camunda ignores it.
    assert _names(rest, sortBy="name", sortOrder="asc", nonsense="1") == [
        "alpha",
        "alphabet",
        "beta",
    ]

    _error(
        rest.get("/deployment", params={"withoutSource": "maybe"}),
        400,
        "InvalidRequestException",
        "withoutSource",
    )
    _error(
        rest.get("/deployment/count", params={"after": "yesterday"}),
        400,
        "InvalidRequestException",
        "after",
    )
    _error(
        rest.get("/deployment", params={"firstResult": "x"}),
        400,
        "InvalidRequestException",
        "firstResult",
    )
    _error(
        rest.get("/deployment", params={"sortBy": "version", "sortOrder": "asc"}),
        400,
        "InvalidRequestException",
        "sortBy",
    )
    _error(
        rest.get("/deployment", params={"source": "ci", "withoutSource": "true"}),
        400,
        "InvalidRequestException",
        'The query parameters "withoutSource" and "source" cannot be used in combination.',
    )

    one = _ok(rest.get(f"/deployment/{gamma['id']}"))
    assert one == {
        "links": [],
        "id": gamma["id"],
        "name": "alphabet",
        "source": None,
        "deploymentTime": gamma["deploymentTime"],
        "tenantId": "acme",
    }
    _error(
        rest.get("/deployment/nope"),
        404,
        "InvalidRequestException",
        "Deployment with id 'nope' does not exist",
    )


def test_resources_and_their_bytes(rest: httpx.Client) -> None:
    bpmn = processes.approval("files").encode()
    form = b'{"components": [], "id": "review"}'
    created = _deploy(
        rest,
        [
            ("diagram.bpmn", bpmn),
            ("forms/review.form", form),
            ("logo.png", PNG),
            ("blob.bin", b"\0\1\2"),
        ],
        **{"deployment-name": "files"},
    )
    deployment_id = created["id"]
    listed = _ok(rest.get(f"/deployment/{deployment_id}/resources"))
    assert [r["name"] for r in listed] == [
        "blob.bin",
        "diagram.bpmn",
        "forms/review.form",
        "logo.png",
    ]
    for row in listed:
        assert set(row) == RESOURCE and row["deploymentId"] == deployment_id
    by_name = {row["name"]: row for row in listed}
    for name, content, media_type in (
        ("diagram.bpmn", bpmn, "application/xml"),
        ("forms/review.form", form, "application/octet-stream"),
        ("logo.png", PNG, "image/png"),
        ("blob.bin", b"\0\1\2", "application/octet-stream"),
    ):
        rid = by_name[name]["id"]
        assert _ok(rest.get(f"/deployment/{deployment_id}/resources/{rid}")) == by_name[name]
        data = rest.get(f"/deployment/{deployment_id}/resources/{rid}/data")
        assert data.status_code == 200
        assert data.content == content
        assert data.headers["content-type"].split(";")[0] == media_type
        filename = name.rsplit("/", 1)[-1]
        assert data.headers["content-disposition"] == f'attachment; filename="{filename}"'

    missing = "00000000-0000-0000-0000-000000000001"
    _error(
        rest.get(f"/deployment/{deployment_id}/resources/{missing}"),
        404,
        "InvalidRequestException",
        f"Deployment resource with resource id '{missing}' for deployment id",
    )
    _error(
        rest.get(f"/deployment/{deployment_id}/resources/{missing}/data"),
        404,
        "InvalidRequestException",
        f"Deployment resource '{missing}' for deployment id '{deployment_id}' does not exist.",
    )
    _error(
        rest.get("/deployment/nope/resources"),
        404,
        "InvalidRequestException",
        "Deployment resources for deployment id 'nope' do not exist.",
    )
    # The definition names the file it came from, which is among the deployment's.
    (definition,) = created["deployedProcessDefinitions"].values()
    assert definition["resource"] == "diagram.bpmn"


def test_delete_refused_while_an_instance_runs_and_cascade(rest: httpx.Client) -> None:
    created = _deploy(
        rest, [("doomed.bpmn", processes.approval("doomed").encode())], **{"deployment-name": "d"}
    )
    deployment_id = created["id"]
    instance = start(rest, "doomed")
    assert _ok(rest.get("/task/count", params={"processInstanceId": instance["id"]}))["count"] == 1

    _error(
        rest.delete(f"/deployment/{deployment_id}"),
        500,
        "ProcessEngineException",
        "Deletion of process definition without cascading failed.",
    )
    _error(
        rest.delete(f"/deployment/{deployment_id}", params={"cascade": "sometimes"}),
        400,
        "InvalidRequestException",
        "cascade",
    )
    # Refused: nothing changed.
    assert _ok(rest.get(f"/deployment/{deployment_id}"))["id"] == deployment_id
    assert _ok(rest.get(f"/process-instance/{instance['id']}"))["id"] == instance["id"]

    response = rest.delete(
        f"/deployment/{deployment_id}",
        params={"cascade": "true", "skipCustomListeners": "true", "skipIoMappings": "false"},
    )
    assert response.status_code == 204, response.text
    _error(rest.get(f"/deployment/{deployment_id}"), 404, "InvalidRequestException")
    assert rest.get(f"/process-instance/{instance['id']}").status_code == 404
    assert _ok(rest.get("/process-definition/count", params={"key": "doomed"}))["count"] == 0
    assert _ok(rest.get("/task/count"))["count"] == 0
    history = rest.get("/history/process-instance/count", params={"processDefinitionKey": "doomed"})
    assert _ok(history)["count"] == 0
    _error(
        rest.delete(f"/deployment/{deployment_id}"),
        404,
        "InvalidRequestException",
        f"Deployment with id '{deployment_id}' do not exist",
    )

    # A deployment without instances goes without cascade.
    quiet = _deploy(rest, [("q.bpmn", processes.approval("quiet").encode())])
    assert rest.delete(f"/deployment/{quiet['id']}").status_code == 204
    assert _ok(rest.get("/deployment/count"))["count"] == 0


def test_deleting_the_latest_version_gives_the_start_back_to_the_previous(
    rest: httpx.Client,
) -> None:
    first = _deploy(rest, [("m.bpmn", processes.message_start("m", "Go").encode())])
    second = _deploy(rest, [("m.bpmn", processes.message_start("m", "Go").encode())])
    assert rest.delete(f"/deployment/{second['id']}").status_code == 204
    (definition,) = first["deployedProcessDefinitions"].values()
    response = rest.post("/message", json={"messageName": "Go", "resultEnabled": True})
    results = _ok(response)
    assert [r["processInstance"]["definitionId"] for r in results] == [definition["id"]]


def test_redeploy_creates_new_versions(rest: httpx.Client) -> None:
    created = _deploy(
        rest,
        [
            ("one.bpmn", processes.approval("one").encode()),
            ("two.bpmn", processes.approval("two").encode()),
        ],
        **{"deployment-name": "pair", "deployment-source": "ci"},
    )
    resources = _ok(rest.get(f"/deployment/{created['id']}/resources"))
    again = _ok(rest.post(f"/deployment/{created['id']}/redeploy", json={}))
    assert again["id"] != created["id"]
    assert again["name"] == "pair" and again["source"] is None
    assert sorted(
        (d["key"], d["version"]) for d in again["deployedProcessDefinitions"].values()
    ) == [
        ("one", 2),
        ("two", 2),
    ]
    assert again["links"] == [{"method": "GET", "href": again["links"][0]["href"], "rel": "self"}]
    assert again["links"][0]["href"].endswith(f"/engine-rest/deployment/{again['id']}")

    by_name = _ok(
        rest.post(
            f"/deployment/{created['id']}/redeploy",
            json={"resourceNames": ["two.bpmn"], "source": "redeployed"},
        )
    )
    assert [(d["key"], d["version"]) for d in by_name["deployedProcessDefinitions"].values()] == [
        ("two", 3)
    ]
    assert by_name["source"] == "redeployed"
    names = [r["name"] for r in _ok(rest.get(f"/deployment/{by_name['id']}/resources"))]
    assert names == ["two.bpmn"]

    one_id = next(r["id"] for r in resources if r["name"] == "one.bpmn")
    by_id = _ok(rest.post(f"/deployment/{created['id']}/redeploy", json={"resourceIds": [one_id]}))
    assert [(d["key"], d["version"]) for d in by_id["deployedProcessDefinitions"].values()] == [
        ("one", 3)
    ]
    # Without a body, every file again.
    bare = _ok(rest.post(f"/deployment/{created['id']}/redeploy"))
    assert len(bare["deployedProcessDefinitions"]) == 2

    _error(
        rest.post(f"/deployment/{created['id']}/redeploy", json={"resourceNames": ["nope.bpmn"]}),
        404,
        "InvalidRequestException",
        f"Cannot redeploy deployment '{created['id']}': The deployment with id "
        f"'{created['id']}' does not contain the following resources with name: nope.bpmn",
    )
    _error(
        rest.post("/deployment/nope/redeploy", json={}),
        404,
        "InvalidRequestException",
        "Deployment with id 'nope' does not exist",
    )
    _error(
        rest.post(f"/deployment/{created['id']}/redeploy", json={"resourceIds": "x"}),
        400,
        "InvalidRequestException",
        "resourceIds",
    )


def test_duplicate_filtering_deploys_only_what_changed(rest: httpx.Client) -> None:
    a, b = processes.approval("a").encode(), processes.approval("b").encode()
    named = {"deployment-name": "dup"}
    first = _deploy(rest, [("a.bpmn", a), ("b.bpmn", b)], **named)

    # Unchanged: no deployment, no version; the answer is the deployment of the name.
    same = _deploy(
        rest, [("a.bpmn", a), ("b.bpmn", b)], **named, **{"enable-duplicate-filtering": "true"}
    )
    assert same["id"] == first["id"]
    assert same["deployedProcessDefinitions"] is None
    assert _ok(rest.get("/deployment/count"))["count"] == 1
    assert _ok(rest.get("/process-definition/count"))["count"] == 2

    # Another deployment name is compared with nothing: deployed again.
    other = _deploy(
        rest,
        [("a.bpmn", a)],
        **{"deployment-name": "elsewhere", "enable-duplicate-filtering": "true"},
    )
    assert [d["version"] for d in other["deployedProcessDefinitions"].values()] == [2]

    # One file changed, deploy-changed-only: a deployment of that file alone, one new version.
    changed_b = processes.approval("b").replace("Approve order", "Approve the order").encode()
    assert changed_b != b
    only = _deploy(
        rest,
        [("a.bpmn", a), ("b.bpmn", changed_b)],
        **named,
        **{"enable-duplicate-filtering": "true", "deploy-changed-only": "true"},
    )
    assert only["id"] != first["id"]
    assert [(d["key"], d["version"]) for d in only["deployedProcessDefinitions"].values()] == [
        ("b", 2)
    ]
    assert [r["name"] for r in _ok(rest.get(f"/deployment/{only['id']}/resources"))] == ["b.bpmn"]

    # The changed file is now the latest of its name: unchanged again.
    again = _deploy(
        rest,
        [("a.bpmn", a), ("b.bpmn", changed_b)],
        **named,
        **{"deploy-changed-only": "true"},
    )
    assert again["id"] == only["id"] and again["deployedProcessDefinitions"] is None

    # enable-duplicate-filtering alone: one changed file deploys every file again.
    whole = _deploy(
        rest, [("a.bpmn", a), ("b.bpmn", b)], **named, **{"enable-duplicate-filtering": "true"}
    )
    versions = sorted(
        (d["key"], d["version"]) for d in whole["deployedProcessDefinitions"].values()
    )
    assert versions == [("a", 3), ("b", 3)]

    # Without filtering every deployment is new, every process a new version.
    plain = _deploy(rest, [("a.bpmn", a)], **named)
    assert [d["version"] for d in plain["deployedProcessDefinitions"].values()] == [4]


def test_reads_show_only_deployments_the_caller_may_read(
    rest: httpx.Client, server: LiveServer
) -> None:
    hidden = _deploy(
        rest, [("h.bpmn", processes.approval("h").encode())], **{"deployment-name": "h"}
    )
    shown = _deploy(
        rest, [("s.bpmn", processes.approval("s").encode())], **{"deployment-name": "s"}
    )
    # Viewers read every deployment; a revoke of READ on one, for the user, hides it.
    revoke = {
        "type": 2,
        "permissions": ["READ"],
        "userId": "viewer",
        "groupId": None,
        "resourceType": 9,
        "resourceId": hidden["id"],
    }
    assert rest.post("/authorization/create", json=revoke).status_code == 200
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD), timeout=30
    ) as viewer:
        assert [row["id"] for row in _ok(viewer.get("/deployment"))] == [shown["id"]]
        assert _ok(viewer.get("/deployment/count")) == {"count": 1}
        assert viewer.get(f"/deployment/{hidden['id']}").status_code == 404
        assert viewer.get(f"/deployment/{hidden['id']}/resources").status_code == 404
        (resource,) = _ok(rest.get(f"/deployment/{hidden['id']}/resources"))
        data = viewer.get(f"/deployment/{hidden['id']}/resources/{resource['id']}/data")
        assert data.status_code == 404
        assert len(_ok(viewer.get(f"/deployment/{shown['id']}/resources"))) == 1
        # Viewers may not delete nor redeploy.
        assert viewer.delete(f"/deployment/{shown['id']}").status_code == 403
        assert viewer.post(f"/deployment/{shown['id']}/redeploy", json={}).status_code == 403
    assert len(_ok(rest.get("/deployment"))) == 2
