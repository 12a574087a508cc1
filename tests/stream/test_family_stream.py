"""A stream of one family of called instances (`?family=<root id>`): every event of the root and
of each instance called below it, live and replayed, and nothing of other instances."""

from __future__ import annotations

from pathlib import Path

import httpx
import psycopg

from engine.api import InstanceHandle
from tests.stream.harness import SSEClient, StreamServer
from tests.stream.test_stream import outbox_seqs

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def test_a_family_stream_carries_every_member_and_nothing_else(stream_srv: StreamServer) -> None:
    engine = stream_srv.engine
    engine.deploy(DATA / "claim_parent.bpmn", DATA / "claim_assess.bpmn")
    cookies = stream_srv.login()
    before = engine.start_latest("claim")
    family = SSEClient(f"{stream_srv.url}/stream?family={before.id}&after=0", cookies=cookies)
    family.ready_cursor()
    replayed = outbox_seqs(
        stream_srv, "o.instance_id = ANY(%s)", ([before.id, *[c.id for c in before.children()]],)
    )
    family.wait_seq(replayed[-1])
    assert family.seqs() == replayed

    other = engine.start_latest("claim")
    lone = engine.start_latest("claim_assess")
    [child] = before.children()
    [task] = [
        t
        for t in engine.fetch_and_lock("scorer", {"score-risk": 60_000}, max_tasks=5)
        if t["instance_id"] == str(child.id)
    ]
    engine.fail_external_task(task["id"], "scorer", "risk model unavailable", retries=0)
    members: list[InstanceHandle] = [before, child]
    wanted = outbox_seqs(stream_srv, "o.instance_id = ANY(%s)", ([m.id for m in members],))
    family.wait_seq(wanted[-1])
    family.close()
    assert family.seqs() == wanted
    incident = [e for e in family.events if e.event == "incident.created"]
    assert [e.data["instance_id"] for e in incident] == [str(child.id)]
    strangers = {str(other.id), str(lone.id), *[str(c.id) for c in other.children()]}
    assert not strangers & {e.data.get("instance_id") for e in family.events}
    with psycopg.connect(stream_srv.database_url) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM outbox_event WHERE instance_id = ANY(%s)",
            ([other.id, lone.id],),
        ).fetchone() or (0,)
    assert count > 0

    refused = httpx.get(
        f"{stream_srv.url}/stream?family={before.id}&instance={child.id}", cookies=cookies
    )
    assert refused.status_code == 400
    assert "at most one of instance, family" in refused.text
    refused = httpx.get(f"{stream_srv.url}/stream?family=nope", cookies=cookies)
    assert refused.status_code == 400
    assert "family" in refused.text
