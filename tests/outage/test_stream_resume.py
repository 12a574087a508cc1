"""The event stream when the hub's own database connection dies: the tail reconnects and goes
on after the last row it handed over, and a client connected throughout receives every outbox
row once, in order (and is told the database went away and came back)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from engine.builder import ProcessBuilder
from tests.outage.harness import StreamReader
from tests.stream.harness import StreamServer, stream_server


@pytest.fixture
def srv(database_url: str) -> Iterator[StreamServer]:
    with stream_server(database_url, ping_seconds=0.5) as running:
        yield running


def test_the_hub_survives_its_connection_dying_and_loses_nothing(srv: StreamServer) -> None:
    srv.engine.deploy(
        ProcessBuilder("ticks")
        .start_event("start")
        .user_task("wait")
        .end_event("end")
        .chain("start", "wait", "end")
        .build()
    )
    reader = StreamReader(srv.url, {"Authorization": f"Bearer {srv.tokens['viewer']}"})
    reader.start()
    stop = threading.Event()

    def write() -> None:
        while not stop.is_set():
            srv.engine.start_latest("ticks")
            time.sleep(0.01)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        for _ in range(3):
            time.sleep(0.5)
            with psycopg.connect(srv.database_url, autocommit=True) as admin:
                ended = admin.execute(
                    "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
                    " WHERE application_name = 'interlock-stream'"
                    " AND datname = current_database()"
                ).fetchall()
            assert ended == [(True,)]
        time.sleep(0.5)
    finally:
        stop.set()
        writer.join(10)
    with srv.engine.connection() as conn:
        expected = [
            row[0]
            for row in conn.execute(
                "SELECT seq FROM outbox_event WHERE seq > %s ORDER BY seq", (reader.first_ready,)
            ).fetchall()
        ]
    deadline = time.monotonic() + 10
    while len(reader.seqs) < len(expected) and time.monotonic() < deadline:
        time.sleep(0.05)
    reader.stop()
    assert len(expected) > 50
    assert reader.seqs == expected
    assert reader.controls.count("database") >= 2  # down, then up, at least once
    assert reader.connects == 1  # the client's stream never broke
