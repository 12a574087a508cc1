"""The SSE routes over a real server: replay, filters, slow clients, cleanup, one listener."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import psycopg

from engine.db.database import database_name
from tests.engine.processes import straight_through
from tests.stream.harness import SilentClient, SSEClient, StreamServer


def outbox_seqs(server: StreamServer, where: str = "true", params: Any = ()) -> list[int]:
    with psycopg.connect(server.database_url) as conn:
        rows = conn.execute(
            "SELECT o.seq FROM outbox_event o LEFT JOIN process_instance i ON i.id = o.instance_id "
            f"WHERE {where} ORDER BY o.seq",
            params,
        ).fetchall()
    return [int(row[0]) for row in rows]


def insert_rows(server: StreamServer, count: int, per_transaction: int = 1) -> list[int]:
    """Insert `count` outbox rows of one event each; their events' numbers (row seq x 1000)."""
    numbers: list[int] = []
    with psycopg.connect(server.database_url) as conn:
        for _ in range(0, count, per_transaction):
            cur = conn.execute(
                "INSERT INTO outbox (events, instance_id) "
                'SELECT \'[{"event": "test.event"}]\', gen_random_uuid() '
                "FROM generate_series(1, %s) RETURNING seq * 1000",
                (per_transaction,),
            )
            numbers.extend(int(row[0]) for row in cur.fetchall())
            conn.commit()
    return sorted(numbers)


def deploy(server: StreamServer, *keys: str) -> None:
    for name in ("one", "two", "three"):
        server.engine.register_handler(name, lambda ctx: None)
    for key in keys:
        server.engine.deploy(straight_through(key))


def test_reconnect_with_last_event_id_gets_exactly_what_was_missed(
    stream_srv: StreamServer,
) -> None:
    cookies = stream_srv.login()
    first = SSEClient(f"{stream_srv.url}/stream", cookies=cookies)
    start = first.ready_cursor()
    inserted = insert_rows(stream_srv, 30)
    assert inserted[0] > start
    first.wait_seq(inserted[-1])
    first.close()
    seen = first.seqs()
    assert seen == inserted
    stream_srv.wait_subscribers(0)

    insert_rows(stream_srv, 25, per_transaction=5)
    again = SSEClient(
        f"{stream_srv.url}/stream", cookies=cookies, headers={"Last-Event-ID": str(seen[-1])}
    )
    missed = outbox_seqs(stream_srv, "o.seq > %s", (seen[-1],))
    assert len(missed) == 25
    again.wait_seq(missed[-1])
    insert_rows(stream_srv, 10)
    everything = outbox_seqs(stream_srv)
    again.wait_seq(everything[-1])
    again.close()
    assert again.seqs() == missed + everything[-10:]
    ready = [e for e in again.events if e.event == "ready"]
    assert len(ready) == 1 and ready[0].id is not None and ready[0].id >= missed[-1]

    # ?after= does the same for a first connection; Last-Event-ID wins over it.
    by_query = SSEClient(f"{stream_srv.url}/stream?after={everything[4]}", cookies=cookies)
    by_query.wait_seq(everything[-1])
    by_query.close()
    assert by_query.seqs() == everything[5:]
    both = SSEClient(
        f"{stream_srv.url}/stream?after=0",
        cookies=cookies,
        headers={"Last-Event-ID": str(everything[-3])},
    )
    both.ready_cursor()
    both.close()
    assert both.seqs() == everything[-2:]

    # An id this database never handed out: told to resync, then live from now.
    stranger = SSEClient(
        f"{stream_srv.url}/stream", cookies=cookies, headers={"Last-Event-ID": "99999999"}
    )
    now = stranger.ready_cursor()
    added = insert_rows(stream_srv, 2)
    assert added[0] > now
    stranger.wait_seq(added[-1])
    stranger.close()
    assert [e.event for e in stranger.events][:2] == ["resync", "ready"]
    assert stranger.events[0].data == {"after": now, "reason": "unknown-id"}
    assert stranger.seqs() == added


def test_streams_per_instance_and_per_definition(stream_srv: StreamServer) -> None:
    deploy(stream_srv, "alpha", "beta")
    cookies = stream_srv.login()
    first = stream_srv.engine.start_latest("alpha")
    everything = SSEClient(f"{stream_srv.url}/stream", cookies=cookies)
    alpha = SSEClient(f"{stream_srv.url}/stream?definition=alpha", cookies=cookies)
    one = SSEClient(f"{stream_srv.url}/stream?instance={first.id}&after=0", cookies=cookies)
    start = everything.ready_cursor()
    alpha_start = alpha.ready_cursor()  # each stream sends what comes after its own cursor
    one.ready_cursor()
    for n in range(6):
        stream_srv.engine.start_latest("alpha" if n % 2 else "beta")
    with psycopg.connect(stream_srv.database_url) as conn:
        conn.execute(
            "INSERT INTO outbox (events, instance_id) "
            'VALUES (\'[{"event": "test.event", "node_id": "n"}]\', %s)',
            (first.id,),
        )
        conn.commit()
    last = outbox_seqs(stream_srv)[-1]
    everything.wait_seq(last)
    one.wait_seq(last)
    alpha_seqs = outbox_seqs(
        stream_srv, "o.seq > %s AND i.definition_key = 'alpha'", (alpha_start,)
    )
    alpha.wait_seq(alpha_seqs[-1])
    for client in (everything, alpha, one):
        client.close()

    assert everything.seqs() == outbox_seqs(stream_srv, "o.seq > %s", (start,))
    assert alpha.seqs() == alpha_seqs
    assert len(alpha_seqs) > 0
    assert {e.data["definition_key"] for e in alpha.events if e.event != "ready"} == {"alpha"}
    assert one.seqs() == outbox_seqs(stream_srv, "o.instance_id = %s", (first.id,))
    assert one.events[-1].event == "test.event" and one.events[-1].data["node_id"] == "n"
    started = next(e for e in one.events if e.event == "instance.started")
    assert started.data["instance_id"] == str(first.id)
    assert started.data["definition_id"].startswith("alpha:")
    assert set(started.data) == {
        "seq",
        "event",
        "instance_id",
        "token_id",
        "node_id",
        "history_id",
        "created_at",
        "definition_key",
        "definition_id",
    }


def test_a_client_that_stops_reading_is_dropped_and_told_to_resync(
    stream_srv: StreamServer,
) -> None:
    stream_srv.hub.queue_size = 1000
    cookies = stream_srv.login()
    reader = SSEClient(f"{stream_srv.url}/stream", cookies=cookies)
    reader.ready_cursor()
    silent = SilentClient(stream_srv.url, "/stream", cookies)
    stream_srv.wait_subscribers(2)
    total = 0
    while stream_srv.hub.dropped == 0:
        insert_rows(stream_srv, 2000, per_transaction=200)
        total += 2000
        assert total <= 200_000, "the silent client was never dropped"
    stream_srv.wait_subscribers(1)
    last = outbox_seqs(stream_srv)[-1]
    reader.wait_seq(last, timeout=60)
    reader.close()
    # The reader kept up: everything, no resync.
    assert len(reader.seqs()) == total
    assert all(e.event != "resync" for e in reader.events)

    body = silent.read_all().decode()
    silent.close()
    ids = [int(n) for n in re.findall(r"^id: (\d+)$", body, flags=re.MULTILINE)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert 0 < len(ids) - 1 < total
    assert body.rstrip().endswith("0")  # the server ended the response
    resync = re.search(r"event: resync\ndata: (\{.*\})\n", body)
    assert resync is not None
    assert f'"after":{ids[-1]}' in resync.group(1)
    assert stream_srv.subscriber_count() == 0


def test_disconnected_clients_are_cleaned_up(stream_srv: StreamServer) -> None:
    cookies = stream_srv.login()
    clients = [
        SSEClient(f"{stream_srv.url}/stream", cookies=cookies),
        SSEClient(f"{stream_srv.url}/stream?definition=alpha", cookies=cookies),
        SSEClient(f"{stream_srv.url}/stream?instance={uuid.uuid4()}", cookies=cookies),
    ]
    for client in clients:
        client.ready_cursor()
    assert stream_srv.subscriber_count() == 3
    clients[0].close()
    stream_srv.wait_subscribers(2)
    for client in clients[1:]:
        client.close()
    stream_srv.wait_subscribers(0)
    assert stream_srv.hub._by_key == {} and stream_srv.hub._by_instance == {}


def test_one_database_listener_for_any_number_of_browsers(stream_srv: StreamServer) -> None:
    cookies = stream_srv.login()
    database = database_name(stream_srv.database_url)

    def backends() -> tuple[int, int, int]:
        with psycopg.connect(stream_srv.database_url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FILTER (WHERE application_name = 'interlock-stream'), "
                "count(*) FILTER (WHERE query LIKE 'LISTEN %%'), count(*) "
                "FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (database,),
            ).fetchone()
        assert row is not None
        # Not counting the read pool's connections: it grows to serve the session look-ups of
        # requests that arrive together, whatever they are, and shrinks again.
        pooled = int(stream_srv.engine.pool.get_stats()["pool_size"])
        return int(row[0]), int(row[1]), int(row[2]) - pooled

    first = SSEClient(f"{stream_srv.url}/stream", cookies=cookies)
    first.ready_cursor()
    tails, listeners, total = backends()
    assert (tails, listeners) == (1, 1)
    clients = [SSEClient(f"{stream_srv.url}/stream", cookies=cookies) for _ in range(20)]
    for client in clients:
        client.ready_cursor()
    insert_rows(stream_srv, 5)
    last = outbox_seqs(stream_srv)[-1]
    for client in clients:
        client.wait_seq(last)
    tails_after, listeners_after, total_after = backends()
    assert (tails_after, listeners_after) == (1, 1)
    assert total_after - total <= 1
    for client in [first, *clients]:
        client.close()


def test_heartbeats_session_and_parameters(stream_srv: StreamServer) -> None:
    cookies = stream_srv.login()
    client = SSEClient(f"{stream_srv.url}/stream", cookies=cookies)
    client.wait_for(lambda c: c.comments >= 2, timeout=5)
    client.close()

    anonymous = httpx.get(f"{stream_srv.url}/stream", follow_redirects=False)
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/login")
    for query in ("instance=nope", "after=-1", "after=x", "instance=1&definition=a"):
        bad = httpx.get(f"{stream_srv.url}/stream?{query}", cookies=cookies)
        assert bad.status_code == 400, query
        assert bad.json()["type"] == "BadRequest"
    for query, name in (("instance=nope", "instance"), ("after=-1", "after"), ("after=x", "after")):
        named = httpx.get(f"{stream_srv.url}/stream?{query}", cookies=cookies)
        assert named.json()["detail"] == {"field": name}, query


def test_api_clients_stream_with_a_token(stream_srv: StreamServer) -> None:
    no_token = httpx.get(f"{stream_srv.url}/api/v1/stream")
    assert no_token.status_code == 401
    api = SSEClient(
        f"{stream_srv.url}/api/v1/stream?after=0",
        headers={"Authorization": f"Bearer {stream_srv.tokens['viewer']}"},
    )
    inserted = insert_rows(stream_srv, 3)
    assert inserted == [1000, 2000, 3000]
    api.wait_seq(inserted[-1])
    api.close()
    assert api.status == 200
    assert api.seqs() == inserted
