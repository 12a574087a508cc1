"""Decisions over /api/v1: DMN files deployed through /deployments, the decision definitions
listed and read, a decision evaluated directly (by the latest version, a version or a version
tag; 404 for an unknown key, 400 for a value its typeRef refuses), and the evaluations paged
newest first by keyset with their filters. Every answer matches its documented schema. A table of
3,000 rules deploys and evaluates; one over the rule limit is a 400 naming its file, line and
the first rule over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.dmn_deploy_bench import TIERS, rules_table
from engine.model import DEFAULT_LIMITS
from tests.api import processes
from tests.api.test_list_paging import follow
from tests.api.test_openapi import validate

DMN = Path(__file__).resolve().parents[1] / "data" / "dmn"
DISH = (DMN / "dish_first.dmn").read_bytes()
# The same decision, a second version with another version tag and another answer for winter.
DISH_V2 = DISH.replace(b'camunda:versionTag="v3"', b'camunda:versionTag="v4"').replace(
    b'"Roastbeef"', b'"Goulash"'
)


@pytest.fixture(scope="module")
def doc(viewer: httpx.Client) -> dict[str, Any]:
    body: dict[str, Any] = viewer.get("/openapi.json").json()
    return body


@pytest.fixture(scope="module")
def deployed(admin: httpx.Client, doc: dict[str, Any]) -> dict[str, Any]:
    """dish (two versions: v3, then v4), beverages and season_dish, and a process beside."""
    bpmn = processes.xml(processes.straight("with-decisions")).encode()
    first = admin.post(
        "/deployments",
        files=[
            ("files", ("dish_first.dmn", DISH)),
            ("files", ("beverages_drd.dmn", (DMN / "beverages_drd.dmn").read_bytes())),
            ("files", ("p.bpmn", bpmn)),
        ],
    )
    assert first.status_code == 201, first.text
    validate(doc, "post", "/deployments", first)
    second = admin.post("/deployments", files={"files": ("dish_first.dmn", DISH_V2)})
    assert second.status_code == 201, second.text
    body: dict[str, Any] = first.json()
    return body


def test_a_deployment_answers_its_decisions(admin: httpx.Client, deployed: dict[str, Any]) -> None:
    assert [d["key"] for d in deployed["definitions"]] == ["with-decisions"]
    assert [
        (d["key"], d["version"], d["resource_name"], d["created"]) for d in deployed["decisions"]
    ] == [
        ("beverages", 1, "beverages_drd.dmn", True),
        ("dish", 1, "dish_first.dmn", True),
        ("season_dish", 1, "beverages_drd.dmn", True),
    ]
    again = admin.post("/deployments", files={"files": ("dish_first.dmn", DISH_V2)})
    assert again.status_code == 200, again.text
    assert again.json()["deployment_id"] is None
    assert [(d["key"], d["version"], d["created"]) for d in again.json()["decisions"]] == [
        ("dish", 2, False)
    ]


def test_decisions_are_listed_and_read(
    viewer: httpx.Client, deployed: dict[str, Any], doc: dict[str, Any]
) -> None:
    every = viewer.get("/decisions")
    validate(doc, "get", "/decisions", every)
    assert [(d["key"], d["version"]) for d in every.json()["items"]] == [
        ("beverages", 1),
        ("dish", 1),
        ("dish", 2),
        ("season_dish", 1),
    ]
    dishes = viewer.get("/decisions", params={"key": "dish"}).json()["items"]
    assert [(d["version"], d["version_tag"], d["history_ttl_days"]) for d in dishes] == [
        (1, "v3", 30),
        (2, "v4", 30),
    ]
    one = viewer.get(f"/decisions/{dishes[0]['id']}")
    validate(doc, "get", "/decisions/{id}", one)
    assert one.json() == dishes[0]
    assert one.json()["deployment_id"] == deployed["deployment_id"]
    missing = viewer.get("/decisions/dish:9:nothing")
    assert missing.status_code == 404
    assert missing.json()["type"] == "NotFound"
    assert viewer.get("/decisions", params={"colour": "red"}).status_code == 400


def test_evaluate_picks_the_version(
    operator: httpx.Client, deployed: dict[str, Any], doc: dict[str, Any]
) -> None:
    winter = {"season": "Winter", "guestCount": 4}
    latest = operator.post("/decisions/dish/evaluate", json={"variables": winter})
    assert latest.status_code == 200, latest.text
    validate(doc, "post", "/decisions/{key}/evaluate", latest)
    body = latest.json()
    assert (body["key"], body["version"], body["result"]) == ("dish", 2, [{"dish": "Goulash"}])
    assert body["user_id"] == "operator-token"
    assert body["root_id"] is None and body["instance_id"] is None
    assert [(i["id"], i["type"], i["value"]) for i in body["inputs"]] == [
        ("Input_Season", "string", "Winter"),
        ("Input_Guests", "integer", 4),
    ]
    assert [(o["name"], o["rule_id"], o["value"]) for o in body["outputs"]] == [
        ("dish", "Rule_Winter", "Goulash")
    ]
    first = operator.post("/decisions/dish/evaluate", json={"variables": winter, "version": 1})
    assert (first.json()["version"], first.json()["result"]) == (1, [{"dish": "Roastbeef"}])
    tagged = operator.post(
        "/decisions/dish/evaluate", json={"variables": winter, "version_tag": "v3"}
    )
    assert tagged.json()["version"] == 1
    typed = operator.post(
        "/decisions/dish/evaluate",
        json={"variables": {"season": "Winter", "guestCount": {"type": "long", "value": 4}}},
    )
    assert typed.json()["result"] == [{"dish": "Goulash"}]


def test_evaluate_refusals(
    operator: httpx.Client, viewer: httpx.Client, deployed: dict[str, Any], doc: dict[str, Any]
) -> None:
    before = len(viewer.get("/decision-evaluations", params={"limit": 1000}).json()["items"])
    unknown = operator.post("/decisions/nothing/evaluate", json={"variables": {}})
    validate(doc, "post", "/decisions/{key}/evaluate", unknown)
    assert unknown.status_code == 404
    assert "nothing" in unknown.json()["message"]
    no_version = operator.post("/decisions/dish/evaluate", json={"version": 7})
    assert no_version.status_code == 404
    bad = operator.post(
        "/decisions/dish/evaluate", json={"variables": {"season": "Fall", "guestCount": "many"}}
    )
    assert bad.status_code == 400, bad.text
    assert bad.json()["type"] == "DmnEvaluationError"
    assert "integer" in bad.json()["message"]
    misspelt = operator.post("/decisions/dish/evaluate", json={"variable": {}})
    assert misspelt.status_code == 400
    assert misspelt.json()["detail"]["field"] == "variable"
    zero = operator.post("/decisions/dish/evaluate", json={"version": 0})
    assert zero.status_code == 400
    assert zero.json()["detail"]["field"] == "version"
    assert viewer.post("/decisions/dish/evaluate", json={}).status_code == 403
    after = len(viewer.get("/decision-evaluations", params={"limit": 1000}).json()["items"])
    assert after == before


def test_evaluations_page_newest_first_with_filters(
    operator: httpx.Client, viewer: httpx.Client, deployed: dict[str, Any], doc: dict[str, Any]
) -> None:
    made = []
    for season in ("Winter", "Fall", "Winter"):
        response = operator.post(
            "/decisions/dish/evaluate", json={"variables": {"season": season, "guestCount": 2}}
        )
        made.append(response.json()["id"])
    drd = operator.post(
        "/decisions/beverages/evaluate",
        json={"variables": {"season": "Summer", "guestsWithChildren": True}},
    ).json()
    page = viewer.get("/decision-evaluations", params={"limit": 2})
    validate(doc, "get", "/decision-evaluations", page)
    # Newest first: the DRD's asked decision and the decision it required, written together.
    assert {e["key"] for e in page.json()["items"]} == {"beverages", "season_dish"}
    required = next(e for e in page.json()["items"] if e["key"] == "season_dish")
    assert required["root_id"] == drd["id"]
    pages = follow(viewer, "/decision-evaluations", key="dish", limit=2)
    ids = [e["id"] for items in pages for e in items]
    assert len(ids) == len(set(ids))
    assert ids[:3] == made[::-1]
    times = [e["evaluated_at"] for items in pages for e in items]
    assert times == sorted(times, reverse=True)
    definition_id = viewer.get("/decisions", params={"key": "season_dish"}).json()["items"][0]["id"]
    (only,) = viewer.get("/decision-evaluations", params={"definition_id": definition_id}).json()[
        "items"
    ]
    assert only["id"] == required["id"]
    by_instance = viewer.get(
        "/decision-evaluations", params={"instance_id": "00000000-0000-0000-0000-000000000001"}
    )
    assert by_instance.json() == {"items": [], "next": None}
    assert viewer.get("/decision-evaluations", params={"instance_id": "x"}).status_code == 400
    bad_cursor = viewer.get("/decision-evaluations", params={"after": "not-a-cursor"})
    assert bad_cursor.status_code == 400
    assert bad_cursor.json()["detail"]["field"] == "after"


def test_a_table_of_3000_rules_deploys_and_its_last_rule_matches(
    admin: httpx.Client, operator: httpx.Client
) -> None:
    deployed = admin.post(
        "/deployments", files={"files": ("large.dmn", rules_table(3_000, "large-table"))}
    )
    assert deployed.status_code == 201, deployed.text
    assert [(d["key"], d["version"]) for d in deployed.json()["decisions"]] == [("large-table", 1)]
    # Rule i matches tier i % 5 and the amounts of band i // 5; its rate is amount * (i % 7 + 1).
    last = {"tier": TIERS[2_999 % 5], "amount": 599 * 100 + 50, "age": 30}
    answer = operator.post("/decisions/large-table/evaluate", json={"variables": last})
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"] == [{"offer": "offer 2999", "rate": 59_950 * 4 / 100}]
    assert answer.json()["outputs"][0]["rule_id"] == "Rule_2999"


def test_a_table_over_the_rule_limit_is_400_naming_the_first_rule_over(
    admin: httpx.Client,
) -> None:
    over = DEFAULT_LIMITS.max_rules
    response = admin.post(
        "/deployments", files={"files": ("huge.dmn", rules_table(over + 1, "huge-table"))}
    )
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["type"] == "ModelError"
    assert (body["detail"]["file"], body["detail"]["element_id"]) == ("huge.dmn", f"Rule_{over}")
    assert body["detail"]["line"] == over + 9  # the header's 8 lines, then one line a rule
    assert "max_decision_rules" in body["message"]
    assert admin.get("/decisions", params={"key": "huge-table"}).json()["items"] == []
