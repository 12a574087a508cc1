"""2,000 commits from 4 writers racing on separate connections, with transactions that take a
seq early and commit late, and ones that get their transaction id long before their seq: every
SSE consumer receives every outbox id exactly once, in ascending order."""

from __future__ import annotations

import random
import threading
import time
import uuid
from typing import Any

import psycopg

from tests.engine.processes import straight_through
from tests.stream.harness import SSEClient, StreamServer

WRITERS = 4
COMMITS_PER_WRITER = 500


class Writer(threading.Thread):
    def __init__(self, server: StreamServer, number: int, progress: list[int]) -> None:
        super().__init__(daemon=True)
        self.server = server
        self.random = random.Random(number)
        self.progress = progress
        self.number = number
        self.overtaken = 0  # long transactions that saw a larger seq commit before them
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with psycopg.connect(self.server.database_url) as conn:
                for _ in range(COMMITS_PER_WRITER):
                    self.commit_one(conn)
                    self.progress[self.number] += 1
        except BaseException as exc:
            self.error = exc

    def insert(self, conn: psycopg.Connection[Any], count: int = 1) -> int:
        row = conn.execute(
            "INSERT INTO outbox (events, instance_id) "
            'SELECT \'[{"event": "test.event"}]\', %s FROM generate_series(1, %s) '
            "RETURNING seq * 1000",
            (uuid.uuid4(), count),
        ).fetchone()
        assert row is not None
        return int(row[0])

    def commit_one(self, conn: psycopg.Connection[Any]) -> None:
        kind = self.random.random()
        if kind < 0.35:
            self.server.engine.start_latest("race")
            return
        if kind < 0.42:
            self.insert(conn)
            conn.rollback()  # a gap in the sequence; not counted as a commit
        if kind < 0.50:
            # The transaction id first, the seq much later.
            conn.execute("SELECT pg_current_xact_id()")
            time.sleep(self.random.uniform(0.002, 0.02))
            self.insert(conn)
        elif kind < 0.56:
            # A long transaction: takes a seq, others commit past it, it commits later.
            first = self.insert(conn)
            time.sleep(self.random.uniform(0.02, 0.1))
            self.insert(conn, self.random.randint(1, 3))
            row = conn.execute("SELECT max(seq) FROM outbox_event").fetchone()
            assert row is not None
            if row[0] > first:
                self.overtaken += 1
        else:
            self.insert(conn, self.random.randint(1, 3))
        conn.commit()


def test_two_thousand_commits_from_four_writers(stream_srv: StreamServer) -> None:
    for name in ("one", "two", "three"):
        stream_srv.engine.register_handler(name, lambda ctx: None)
    stream_srv.engine.deploy(straight_through("race"))
    cookies = stream_srv.login()
    url = f"{stream_srv.url}/stream"
    live = SSEClient(url, cookies=cookies)
    by_definition = SSEClient(f"{url}?definition=race", cookies=cookies)
    reconnecting = SSEClient(url, cookies=cookies)
    start = live.ready_cursor()
    by_definition.ready_cursor()
    assert reconnecting.ready_cursor() == start
    with psycopg.connect(stream_srv.database_url) as conn:
        # The stream starts after every number the last row could hold (1000 a row).
        row = conn.execute("SELECT coalesce(max(seq) * 1000 + 999, 0) FROM outbox").fetchone()
    assert row is not None and row[0] == start

    progress = [0] * WRITERS
    writers = [Writer(stream_srv, n, progress) for n in range(WRITERS)]
    for writer in writers:
        writer.start()

    def wait_progress(fraction: float) -> None:
        while sum(progress) < fraction * WRITERS * COMMITS_PER_WRITER:
            time.sleep(0.01)

    wait_progress(1 / 3)
    late = SSEClient(f"{url}?after={start}", cookies=cookies)  # replay, then live, under load
    wait_progress(1 / 2)
    reconnecting.close()
    before_break = reconnecting.seqs()
    assert before_break
    time.sleep(0.2)
    resumed = SSEClient(url, cookies=cookies, headers={"Last-Event-ID": str(before_break[-1])})
    for writer in writers:
        writer.join(timeout=120)
        assert not writer.is_alive()
        assert writer.error is None, writer.error
    assert sum(progress) == WRITERS * COMMITS_PER_WRITER

    with psycopg.connect(stream_srv.database_url) as conn:
        expected = [int(r[0]) for r in conn.execute("SELECT seq FROM outbox_event ORDER BY seq")]
        race = [
            int(r[0])
            for r in conn.execute(
                "SELECT o.seq FROM outbox_event o JOIN process_instance i ON i.id = o.instance_id "
                "WHERE i.definition_key = 'race' ORDER BY o.seq"
            )
        ]
        inversions = conn.execute(
            "SELECT count(*) FROM (SELECT txid, lag(txid) OVER (ORDER BY seq) AS previous "
            "FROM outbox_event) t WHERE previous > txid"
        ).fetchone()
        gaps = conn.execute("SELECT max(seq) - count(*) FROM outbox").fetchone()
    clients = (live, late, resumed, by_definition)
    for client in (live, late, resumed):
        client.wait_seq(expected[-1], timeout=60)
    by_definition.wait_seq(race[-1], timeout=60)
    for client in clients:
        client.close()

    # The race did what it is meant to: some writers committed past open ones, transaction
    # ids and seqs disagree in order, and rolled-back numbers left gaps.
    assert sum(writer.overtaken for writer in writers) > 0
    assert inversions is not None and inversions[0] > 0
    assert gaps is not None and gaps[0] > 0
    assert len(expected) > 2 * WRITERS * COMMITS_PER_WRITER

    assert live.seqs() == expected
    assert late.seqs() == expected
    assert before_break + resumed.seqs() == expected
    assert by_definition.seqs() == race
    for client in clients:
        assert all(e.event != "resync" for e in client.events)
