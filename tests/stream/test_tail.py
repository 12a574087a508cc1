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


# An event's number: its row's seq times 1000 plus its place in the row (from 0); a tail that
# has observed rows up to `row` is settled up to the last number that row could hold.
def number(row: int, place: int = 0) -> int:
    return row * 1000 + place


def bound(row: int) -> int:
    return row * 1000 + 999


def insert(conn: Conn, event: str = "test.event", events: int = 1) -> int:
    """Insert one outbox row of `events` events; the number of its first."""
    row = conn.execute(
        "INSERT INTO outbox (events, instance_id) SELECT jsonb_agg(jsonb_build_object("
        "'event', %s::text, 'node_id', 'n' || i) ORDER BY i), %s FROM generate_series(1, %s) i "
        "RETURNING seq * 1000",
        (event, uuid.uuid4(), events),
    ).fetchone()
    assert row is not None
    return int(row[0])


def seqs(tail: OutboxTail) -> list[int]:
    return [row.seq for row in tail.poll()]


def test_an_open_transaction_holds_back_later_commits(connect: Any) -> None:
    tail = OutboxTail(connect(autocommit=True), after=0)
    t1, t2 = connect(), connect()
    assert insert(t1) == number(1)
    assert insert(t2) == number(2)
    t2.commit()
    assert seqs(tail) == []
    assert (tail.cursor, tail.waiting) == (0, True)
    t1.commit()
    assert seqs(tail) == [number(1), number(2)]
    assert (tail.cursor, tail.waiting) == (bound(2), False)
    assert seqs(tail) == []


def test_an_older_transaction_id_does_not_make_a_later_seq_safe(connect: Any) -> None:
    """The writer's transaction id comes from its first write, not from its seq: the older
    transaction takes the larger seq and commits while the younger one, holding seq 1, runs."""
    observer = connect(autocommit=True)
    tail = OutboxTail(connect(autocommit=True), after=0)
    older, younger = connect(), connect()
    older.execute("SELECT pg_current_xact_id()")
    younger.execute("SELECT pg_current_xact_id()")
    assert insert(younger) == number(1)
    assert insert(older) == number(2)
    older.commit()
    # The rule "txid below the snapshot's xmin" would emit seq 2 now and never see seq 1 (once
    # no transaction older than `younger` runs anywhere on the server: the suite copies the
    # next test's database meanwhile).
    deadline = time.monotonic() + 10
    while True:
        naive = observer.execute(
            "SELECT seq FROM outbox_event WHERE seq > 0 "
            "AND txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint ORDER BY seq"
        ).fetchall()
        if naive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert naive == [(number(2),)]
    assert seqs(tail) == []
    younger.commit()
    assert seqs(tail) == [number(1), number(2)]


def test_rolled_back_numbers_are_not_waited_for(connect: Any) -> None:
    tail = OutboxTail(connect(autocommit=True), after=0)
    lost, kept = connect(), connect()
    assert insert(lost) == number(1)
    assert insert(kept) == number(2)
    kept.commit()
    assert seqs(tail) == []
    lost.rollback()
    assert seqs(tail) == [number(2)]
    assert not tail.waiting
    # A savepoint rolled back drops its rows and its lock; the transaction itself holds nothing.
    inner = connect()
    inner.execute("SAVEPOINT s")
    assert insert(inner) == number(3)
    inner.execute("ROLLBACK TO SAVEPOINT s")
    late = connect()
    assert insert(late) == number(4)
    late.commit()
    assert seqs(tail) == [number(4)]
    inner.commit()


def test_a_transaction_that_writes_no_outbox_row_holds_nothing_back(connect: Any) -> None:
    tail = OutboxTail(connect(autocommit=True), after=0)
    bystander = connect()
    bystander.execute("SELECT pg_current_xact_id()")
    bystander.execute("CREATE TEMP TABLE scratch (n int)")
    writer = connect()
    insert(writer)
    writer.commit()
    assert seqs(tail) == [number(1)]
    bystander.rollback()


def test_without_a_cursor_the_tail_starts_now(connect: Any) -> None:
    writer = connect()
    insert(writer)
    insert(writer)
    writer.commit()
    tail = OutboxTail(connect(autocommit=True))
    assert seqs(tail) == []
    assert tail.cursor == bound(2)
    insert(writer)
    writer.commit()
    assert seqs(tail) == [number(3)]


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
    assert tail.cursor == bound(2)


def test_large_commits_come_in_pages(connect: Any) -> None:
    tail = OutboxTail(connect(autocommit=True), after=0, page_size=500)
    writer = connect()
    writer.execute(
        "INSERT INTO outbox (events, instance_id) "
        'SELECT \'[{"event": "bulk"}]\', gen_random_uuid() FROM generate_series(1, 1200)'
    )
    writer.commit()
    pages = [seqs(tail), seqs(tail), seqs(tail)]
    assert [len(p) for p in pages] == [500, 500, 200]
    assert [s for p in pages for s in p] == [number(n) for n in range(1, 1201)]
    assert not tail.behind
    assert seqs(tail) == []


def test_the_tail_refuses_a_transactional_connection(connect: Any) -> None:
    with pytest.raises(ValueError):
        OutboxTail(connect())


def test_a_row_of_several_events_is_read_event_by_event_across_pages(connect: Any) -> None:
    tail = OutboxTail(connect(autocommit=True), after=0, page_size=4)
    writer = connect()
    assert insert(writer, events=6) == number(1)
    assert insert(writer, events=3) == number(2)
    writer.commit()
    first = tail.poll()
    # A page may end inside a row; the next starts after the last event it returned.
    assert [(row.seq, row.node_id) for row in first] == [
        (number(1, 0), "n1"),
        (number(1, 1), "n2"),
        (number(1, 2), "n3"),
        (number(1, 3), "n4"),
    ]
    assert tail.behind
    assert seqs(tail) == [number(1, 4), number(1, 5), number(2, 0), number(2, 1)]
    assert seqs(tail) == [number(2, 2)]
    assert (tail.cursor, tail.behind) == (bound(2), False)
