"""The tail against racing transactions on separate connections."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from engine.db.outbox import OutboxTail

Conn = psycopg.Connection[Any]


@pytest.fixture
def connect(database_url: str) -> Iterator[Any]:
    opened: list[Conn] = []

    def open_connection(autocommit: bool = False) -> Conn:
        conn = psycopg.connect(database_url, autocommit=autocommit)
        opened.append(conn)
        return conn

    yield open_connection
    for conn in opened:
        conn.close()


def insert(conn: Conn, event: str = "test.event") -> int:
    row = conn.execute(
        "INSERT INTO outbox (event, instance_id) VALUES (%s, %s) RETURNING seq",
        (event, uuid.uuid4()),
    ).fetchone()
    assert row is not None
    return int(row[0])


def seqs(tail: OutboxTail) -> list[int]:
    return [row.seq for row in tail.poll()]


def test_an_open_transaction_holds_back_later_commits(connect: Any) -> None:
    tail = OutboxTail(connect(autocommit=True), after=0)
    t1, t2 = connect(), connect()
    assert insert(t1) == 1
    assert insert(t2) == 2
    t2.commit()
    assert seqs(tail) == []
    assert (tail.cursor, tail.waiting) == (0, True)
    t1.commit()
    assert seqs(tail) == [1, 2]
    assert (tail.cursor, tail.waiting) == (2, False)
    assert seqs(tail) == []


def test_an_older_transaction_id_does_not_make_a_later_seq_safe(connect: Any) -> None:
    """The writer's transaction id comes from its first write, not from its seq: the older
    transaction takes the larger seq and commits while the younger one, holding seq 1, runs."""
    observer = connect(autocommit=True)
    tail = OutboxTail(connect(autocommit=True), after=0)
    older, younger = connect(), connect()
    older.execute("SELECT pg_current_xact_id()")
    younger.execute("SELECT pg_current_xact_id()")
    assert insert(younger) == 1
    assert insert(older) == 2
    older.commit()
    # The rule "txid below the snapshot's xmin" would emit seq 2 now and never see seq 1 (once
    # no transaction older than `younger` runs anywhere on the server: the suite copies the
    # next test's database meanwhile).
    deadline = time.monotonic() + 10
    while True:
        naive = observer.execute(
            "SELECT seq FROM outbox WHERE seq > 0 "
            "AND txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint ORDER BY seq"
        ).fetchall()
        if naive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert naive == [(2,)]
    assert seqs(tail) == []
    younger.commit()
    assert seqs(tail) == [1, 2]


def test_rolled_back_numbers_are_not_waited_for(connect: Any) -> None:
    tail = OutboxTail(connect(autocommit=True), after=0)
    lost, kept = connect(), connect()
    assert insert(lost) == 1
    assert insert(kept) == 2
    kept.commit()
    assert seqs(tail) == []
    lost.rollback()
    assert seqs(tail) == [2]
    assert not tail.waiting
    # A savepoint rolled back drops its rows and its lock; the transaction itself holds nothing.
    inner = connect()
    inner.execute("SAVEPOINT s")
    assert insert(inner) == 3
    inner.execute("ROLLBACK TO SAVEPOINT s")
    late = connect()
    assert insert(late) == 4
    late.commit()
    assert seqs(tail) == [4]
    inner.commit()


def test_a_transaction_that_writes_no_outbox_row_holds_nothing_back(connect: Any) -> None:
    tail = OutboxTail(connect(autocommit=True), after=0)
    bystander = connect()
    bystander.execute("SELECT pg_current_xact_id()")
    bystander.execute("CREATE TEMP TABLE scratch (n int)")
    writer = connect()
    insert(writer)
    writer.commit()
    assert seqs(tail) == [1]
    bystander.rollback()


def test_without_a_cursor_the_tail_starts_now(connect: Any) -> None:
    writer = connect()
    insert(writer)
    insert(writer)
    writer.commit()
    tail = OutboxTail(connect(autocommit=True))
    assert seqs(tail) == []
    assert tail.cursor == 2
    insert(writer)
    writer.commit()
    assert seqs(tail) == [3]


def test_a_tail_started_during_a_write_waits_for_it(connect: Any) -> None:
    open_writer = connect()
    insert(open_writer)
    tail = OutboxTail(connect(autocommit=True))
    assert seqs(tail) == [] and tail.cursor is None
    later = connect()
    insert(later)
    later.commit()
    assert seqs(tail) == [] and tail.cursor is None
    open_writer.commit()
    # Both rows were handed out before the tail's first observation: it starts after them.
    assert seqs(tail) == []
    assert tail.cursor == 2


def test_large_commits_come_in_pages(connect: Any) -> None:
    tail = OutboxTail(connect(autocommit=True), after=0, page_size=500)
    writer = connect()
    writer.execute(
        "INSERT INTO outbox (event, instance_id) "
        "SELECT 'bulk', gen_random_uuid() FROM generate_series(1, 1200)"
    )
    writer.commit()
    pages = [seqs(tail), seqs(tail), seqs(tail)]
    assert [len(p) for p in pages] == [500, 500, 200]
    assert [s for p in pages for s in p] == list(range(1, 1201))
    assert not tail.behind
    assert seqs(tail) == []


def test_the_tail_refuses_a_transactional_connection(connect: Any) -> None:
    with pytest.raises(ValueError):
        OutboxTail(connect())
