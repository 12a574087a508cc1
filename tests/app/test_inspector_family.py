"""The inspector shows an instance's family of called instances: the call activity links to the
instance it called, a called instance links back to its caller and the call activity, the family
panel is the tree from the root down with each instance's definition, state and incidents, and a
called instance's incident shows on its caller's call activity. The instance list filters roots
only and the instances one instance called, through the partial indexes of the family."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.queries.console import family_members
from engine.store.instances import InstanceFilter, list_page
from tests.server import LiveServer, console_login

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def three_levels(engine: Engine) -> tuple[InstanceHandle, InstanceHandle, InstanceHandle]:
    """A case whose call activity "Open claim" runs a claim, whose call activity runs an
    assessment waiting at its external task: (case, claim, assessment)."""
    engine.deploy(DATA / "claim_parent.bpmn", DATA / "claim_assess.bpmn")
    engine.deploy(
        ProcessBuilder("case")
        .start_event("Start")
        .call_activity("OpenClaim", "Open claim", called_element="claim")
        .end_event("End")
        .chain("Start", "OpenClaim", "End")
        .build()
    )
    case = engine.start_latest("case", {"amount": 120})
    [claim] = case.children()
    [assessment] = claim.children()
    return case, claim, assessment


def fail_scoring(engine: Engine, assessment: InstanceHandle) -> None:
    [task] = engine.fetch_and_lock("scorer", {"score-risk": 60_000}, max_tasks=1)
    assert task["instance_id"] == str(assessment.id)
    engine.fail_external_task(task["id"], "scorer", "risk model unavailable", retries=0)


def short(instance: InstanceHandle) -> str:
    """An id as the console shows it in short."""
    return str(instance.id)[-8:]


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_family_is_linked_both_ways_with_states_and_incidents(server: LiveServer) -> None:
    engine = server.engine
    case, claim, assessment = three_levels(engine)
    lone = engine.start_latest("claim_assess")
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def get(path: str, **params: str) -> httpx.Response:
        response = httpx.get(f"{server.url}{path}", params=params, cookies=cookies)
        assert response.status_code == 200, response.text
        return response

    def state(instance: InstanceHandle) -> dict[str, Any]:
        found: dict[str, Any] = get(f"/instances/{instance.id}/diagram.json").json()
        return found

    assert state(case)["calls"] == {
        "OpenClaim": {
            "instances": [{"id": str(claim.id), "state": "Active", "incidents": 0}],
            "incidents": 0,
        }
    }
    assert state(claim)["calls"] == {
        "Activity_Assess": {
            "instances": [{"id": str(assessment.id), "state": "Active", "incidents": 0}],
            "incidents": 0,
        }
    }
    assert state(assessment)["calls"] == {}

    fail_scoring(engine, assessment)
    assert state(assessment)["incidents"] == {"Activity_Score": 1}
    assert state(claim)["calls"]["Activity_Assess"]["incidents"] == 1
    assert state(claim)["incidents"] == {}
    # Cockpit's view: the incident shows on every call activity above it.
    assert state(case)["calls"] == {
        "OpenClaim": {
            "instances": [{"id": str(claim.id), "state": "Active", "incidents": 1}],
            "incidents": 1,
        }
    }

    page = get(f"/instances/{claim.id}").text
    assert f'sse-connect="/stream?family={case.id}"' in page
    assert f'data-page-instance="{claim.id}"' in page
    called_by = page[page.index('id="called-by"') :]
    called_by = called_by[: called_by.index("</dd>")]
    assert f'<a href="/instances/{case.id}">' in called_by
    assert text_of(called_by).endswith(f"{short(case)} case at Open claim")
    tokens = get(f"/instances/{claim.id}/panel/tokens").text
    assert f'<a class="called-link" href="/instances/{assessment.id}"' in tokens
    assert "1 incident" in text_of(tokens)
    header = get(f"/instances/{assessment.id}/header").text
    assert f'<a href="/instances/{claim.id}">' in header
    assert "claim at Assess claim" in text_of(header)
    assert 'id="called-by"' not in get(f"/instances/{case.id}/header").text

    family = get(f"/instances/{assessment.id}/panel/family").text
    members = re.findall(r'<li class="family-member( current)?" data-instance="([^"]+)"', family)
    assert members == [("", str(case.id)), ("", str(claim.id)), (" current", str(assessment.id))]
    shown = text_of(family)
    assert f"{short(case)} case v1 Active 1 below" in shown
    assert f"{short(claim)} claim v1 Active 1 below called at Open claim" in shown
    assert f"{short(assessment)} claim_assess v1 Active 1 incident called at Assess claim" in shown
    # Nested: the assessment's list is inside the claim's, which is inside the case's.
    assert family.count("<ul>") == 2
    assert f'<a href="/instances/{case.id}">' in family
    assert f'<a href="/instances/{assessment.id}">' not in family
    # However large the family, the instance shown and its caller are among those read.
    assert [m.id for m in family_members(engine, assessment.id, 2)] == [claim.id, assessment.id]
    assert [m.id for m in family_members(engine, case.id, 1)] == [case.id]
    lonely = get(f"/instances/{lone.id}/panel/family").text
    assert "This instance called no other and was not called." in lonely

    case.cancel()
    assert [m.state for m in family_members(engine, claim.id)] == ["Terminated"] * 3
    family = text_of(get(f"/instances/{case.id}/panel/family").text)
    assert f"{short(case)} case v1 Terminated" in family
    assert "claim_assess v1 Terminated" in family


def rows_of(html: str) -> list[str]:
    return re.findall(r'<tr data-instance="([^"]+)"', html)


def test_the_list_filters_roots_and_called_instances(server: LiveServer) -> None:
    engine = server.engine
    case, claim, assessment = three_levels(engine)
    lone = engine.start_latest("claim_assess")
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def get(**params: str) -> httpx.Response:
        return httpx.get(f"{server.url}/instances", params=params, cookies=cookies)

    everything = rows_of(get().text)
    assert sorted(everything) == sorted(str(i.id) for i in (case, claim, assessment, lone))
    page = get(root="true")
    assert rows_of(page.text) == [str(lone.id), str(case.id)]
    assert 'name="root" value="true" checked' in page.text
    assert rows_of(get(root="false").text) == everything
    called = get(called_by=str(case.id)).text
    assert rows_of(called) == [str(claim.id)]
    assert f'called by <a href="/instances/{case.id}">' in called
    assert rows_of(get(called_by=str(claim.id), fragment="rows").text) == [str(assessment.id)]
    assert rows_of(get(called_by=str(lone.id)).text) == []
    assert rows_of(get(called_by=str(case.id), root="true").text) == []
    assert rows_of(get(definition="claim_assess", called_by=str(claim.id)).text) == [
        str(assessment.id)
    ]

    refused = get(called_by="case-1", fragment="rows")
    assert refused.status_code == 400
    assert "query parameter &#39;called_by&#39; must be an id (a UUID)" in refused.text
    page = get(root="maybe")
    assert page.status_code == 200
    assert "query parameter &#39;root&#39; must be true or false" in page.text

    # Keyset pages of roots: none repeated, none skipped.
    for n in range(5):
        engine.start_latest("claim_assess", business_key=f"more-{n}")
    with engine.connection() as conn:
        roots = list_page(conn, InstanceFilter(root_only=True), limit=3)
        second = list_page(conn, InstanceFilter(root_only=True), limit=3, after=roots.next)
    paged = [i.id for i in roots.items + second.items]
    assert len(paged) == len(set(paged)) == 6
    assert claim.id not in paged and assessment.id not in paged


def test_root_and_called_filters_use_their_indexes(server: LiveServer) -> None:
    engine = server.engine
    case, claim, _ = three_levels(engine)
    with engine.connection() as conn:
        conn.execute("SET enable_seqscan = off")
        plans = {}
        for name, where in (
            ("roots", "p.super_instance_id IS NULL"),
            ("called", "p.super_instance_id = %(caller)s"),
        ):
            plan = conn.execute(
                "EXPLAIN (FORMAT JSON) SELECT p.id FROM process_instance p WHERE "
                + where
                + " ORDER BY p.started_at DESC, p.id DESC LIMIT 51",
                {"caller": case.id},
            ).fetchone()
            assert plan is not None
            plans[name] = str(plan[0])
    assert "ix_process_instance_started" in plans["roots"]
    assert "ix_process_instance_super_instance_id" in plans["called"]


def test_a_multi_instance_call_activity_shows_each_called_instance(server: LiveServer) -> None:
    engine = server.engine
    engine.deploy(DATA / "claim_assess.bpmn")
    engine.deploy(
        ProcessBuilder("batch")
        .start_event("Start")
        .call_activity("Assess", "Assess each", called_element="claim_assess")
        .multi_instance("Assess", collection="claims", element_variable="claim")
        .end_event("End")
        .chain("Start", "Assess", "End")
        .build()
    )
    batch = engine.start_latest("batch", {"claims": ["a", "b", "c"]})
    children = batch.children()
    assert len(children) == 3
    login = console_login(server.url, "viewer")
    cookies = {"interlock_session": login.cookies["interlock_session"]}

    def get(path: str, **params: str) -> str:
        response = httpx.get(f"{server.url}{path}", params=params, cookies=cookies)
        assert response.status_code == 200, response.text
        return response.text

    [task] = engine.fetch_and_lock("scorer", {"score-risk": 60_000}, max_tasks=1)
    failing = next(c for c in children if str(c.id) == task["instance_id"])
    engine.fail_external_task(task["id"], "scorer", "risk model unavailable", retries=0)

    state = httpx.get(f"{server.url}/instances/{batch.id}/diagram.json", cookies=cookies).json()
    call = state["calls"]["Assess"]
    assert sorted(i["id"] for i in call["instances"]) == sorted(str(c.id) for c in children)
    assert {i["id"]: i["incidents"] for i in call["instances"]} == {
        str(c.id): int(c.id == failing.id) for c in children
    }
    assert call["incidents"] == 1
    assert state["loops"]["Assess"]["total"] == 3

    tokens = get(f"/instances/{batch.id}/panel/tokens")
    links = re.findall(r'<a class="called-link" href="/instances/([^"]+)"', tokens)
    assert sorted(links) == sorted(str(c.id) for c in children)
    family = get(f"/instances/{batch.id}/panel/family")
    assert family.count('class="family-member') == 4
    assert text_of(family).count("called at Assess each") == 3
    assert sorted(rows_of(get("/instances", called_by=str(batch.id)))) == sorted(
        str(c.id) for c in children
    )
