"""Webhook delivery against a real receiver on 127.0.0.1: every committed event arrives at least
once, in order per instance, signed, through failures, an outage of the receiver and several
dispatchers at once; late commits are not missed; leases expire; dead letters park and replay."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest

from engine.api import Engine
from engine.commands.webhooks import (
    CreateSubscription,
    FanOut,
    LeaseDeliveries,
    PruneDelivered,
    ReplayDeadLetters,
)
from engine.db.outbox import OutboxTail
from engine.observe import metrics
from engine.queries import webhooks as reads
from engine.states import DeliveryState
from engine.webhooks import outbox_floor
from engine.webhooks.dispatcher import Dispatcher
from engine.webhooks.settings import WebhookSettings
from tests.waiting import wait_until
from tests.webhooks.conftest import FAST, SECRET, two_steps
from tests.webhooks.receiver import Receiver, verify

ROOT = Path(__file__).resolve().parents[2]


def subscribe(engine: Engine, url: str, **options: Any) -> UUID:
    made = engine.run(CreateSubscription("test hook", url, SECRET, **options))
    return UUID(made.subscription_id)


def outbox_after(engine: Engine, seq: int) -> list[tuple[int, UUID, str]]:
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT seq, instance_id, event FROM outbox_event WHERE seq > %s ORDER BY seq", (seq,)
        ).fetchall()
    return [(int(s), i, e) for s, i, e in rows]


def delivery_states(engine: Engine, subscription_id: UUID) -> dict[str, int]:
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT state, count(*) FROM webhook_delivery WHERE subscription_id = %s "
            "GROUP BY state",
            (subscription_id,),
        ).fetchall()
    return {state: int(n) for state, n in rows}


def cursor_of(engine: Engine, subscription_id: UUID) -> int:
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT fanned_out_seq FROM webhook_subscription WHERE id = %s", (subscription_id,)
        ).fetchone()
    assert row is not None
    return int(row[0])


def running(dispatcher: Dispatcher) -> bool:
    return dispatcher.running


def counted(outcome: str) -> float:
    value = metrics.REGISTRY.get_sample_value(
        "interlock_webhook_deliveries_total", {"outcome": outcome}
    )
    return value or 0.0


@contextmanager
def dispatcher_process(database_url: str, owner: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.webhooks.dispatcher_process", database_url, owner],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        yield process
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
        assert process.returncode == 0


def deliver_through_failures(
    database_url: str,
    engine: Engine,
    receiver: Receiver,
    *,
    settings: WebhookSettings,
    instances: int,
    down_seconds: float,
    timeout: float,
) -> None:
    """Instances run while three dispatchers (own engines, own connections) and one in another
    process deliver to a receiver that fails 30% of POSTs and goes down for `down_seconds`; then
    every event has arrived, in order per instance, signed, and no delivery was in flight twice
    at once."""
    receiver.failure_rate, receiver.hold_seconds = 0.3, 0.02
    engine.deploy(two_steps())
    subscription_id = subscribe(engine, receiver.url)
    start = cursor_of(engine, subscription_id)
    delivered_before, failed_before = counted("delivered"), counted("failed")

    engines = [Engine(database_url, migrate=False) for _ in range(2)]
    dispatchers = [
        Dispatcher(e, settings, owner=f"dispatcher-{n}") for n, e in enumerate([engine, *engines])
    ]
    try:
        with dispatcher_process(database_url, "dispatcher-process"):
            for dispatcher in dispatchers:
                dispatcher.start()

            def one(n: int) -> None:
                handle = engine.start_latest("two-steps", {"n": n})
                (task,) = handle.user_tasks()
                engine.complete_task(task.id)

            def go_down() -> None:
                time.sleep(0.5)
                receiver.stop()
                time.sleep(down_seconds)
                receiver.start()

            outage = threading.Thread(target=go_down)
            outage.start()
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(one, range(instances)))
            outage.join()

            expected = outbox_after(engine, start)
            assert len(expected) >= instances * 6
            wait_until(
                lambda: (
                    delivery_states(engine, subscription_id).get("delivered", 0) == len(expected)
                ),
                "every event to be delivered",
                timeout,
            )
    finally:
        for dispatcher in dispatchers:
            dispatcher.stop()
        for made in engines:
            made.close()

    assert delivery_states(engine, subscription_id) == {"delivered": len(expected)}
    firsts = receiver.first_acceptances()
    assert sorted(r.body["seq"] for r in firsts) == [seq for seq, _, _ in expected]
    assert {(r.body["seq"], r.body["instance_id"], r.event) for r in firsts} == {
        (seq, str(instance), event) for seq, instance, event in expected
    }
    by_instance: dict[str, list[int]] = defaultdict(list)
    for r in firsts:
        by_instance[r.body["instance_id"]].append(r.body["seq"])
    assert len(by_instance) == instances
    for seqs in by_instance.values():
        assert seqs == sorted(seqs), seqs
    assert all(verify(SECRET, r) for r in receiver.received)
    assert all(r.body["delivery_id"] == r.delivery_id for r in receiver.received)
    assert receiver.overlaps == []
    # Failures happened (30% of POSTs, and the outage) and were retried.
    assert any(r.status == 500 for r in receiver.received)
    assert counted("failed") > failed_before
    assert counted("delivered") > delivered_before


def test_every_event_arrives_in_order_through_failures_an_outage_and_several_dispatchers(
    database_url: str, engine: Engine, receiver: Receiver
) -> None:
    deliver_through_failures(
        database_url,
        engine,
        receiver,
        settings=FAST,
        instances=30,
        down_seconds=3.0,
        timeout=90,
    )


@pytest.mark.slow
def test_a_receiver_down_for_twenty_seconds_still_gets_every_event_in_order(
    database_url: str, engine: Engine, receiver: Receiver
) -> None:
    deliver_through_failures(
        database_url,
        engine,
        receiver,
        settings=replace(FAST, max_attempts=500),
        instances=150,
        down_seconds=20.0,
        timeout=240,
    )


def test_an_event_committed_after_a_later_one_is_not_missed(
    database_url: str, engine: Engine, receiver: Receiver
) -> None:
    subscription_id = subscribe(engine, receiver.url)
    dispatcher = Dispatcher(engine, FAST)
    early, late = uuid4(), uuid4()
    insert = (
        "INSERT INTO outbox (events, instance_id) "
        'VALUES (\'[{"event": "instance.started"}]\', %s) RETURNING seq * 1000'
    )
    with psycopg.connect(database_url) as first, psycopg.connect(database_url) as second:
        row = first.execute(insert, (early,)).fetchone()  # takes the lower seq, commits last
        assert row is not None
        low = int(row[0])
        row = second.execute(insert, (late,)).fetchone()
        assert row is not None
        high = int(row[0])
        assert low < high
        second.commit()
        for _ in range(3):
            dispatcher.run_once()
        # The later seq is committed but the earlier may still commit: the cursor waits.
        assert cursor_of(engine, subscription_id) < low
        assert [r.body["seq"] for r in receiver.accepted()] == []
        first.commit()
    wait_until(lambda: (dispatcher.run_once(), len(receiver.accepted()))[1] == 2, "both events", 10)
    assert sorted(r.body["seq"] for r in receiver.accepted()) == [low, high]
    assert cursor_of(engine, subscription_id) >= high
    dispatcher.stop()


def test_an_expired_lease_lets_another_dispatcher_take_the_delivery_over(
    engine: Engine, receiver: Receiver
) -> None:
    subscription_id = subscribe(engine, receiver.url)
    engine.deploy(two_steps())
    engine.start_latest("two-steps")
    with engine.connection() as conn:
        bound = OutboxTail(conn).observe()
    engine.run(FanOut(bound))
    # A dispatcher that leased the first deliveries and died before attempting them.
    leased = engine.run(LeaseDeliveries("died", 100, 60.0)).deliveries
    # One instance: only its first delivery can be leased, the rest wait behind it.
    assert len(leased) == 1
    first = leased[0]
    total = sum(delivery_states(engine, subscription_id).values())
    assert total > 1
    survivor = Dispatcher(engine, FAST)
    assert survivor.run_once() == 0
    assert receiver.received == []
    with engine.connection() as conn:
        conn.execute(
            "UPDATE webhook_delivery SET lease_expires_at = now() - interval '1 second' "
            "WHERE lease_owner = 'died'"
        )
    wait_until(
        lambda: (
            (survivor.run_once(), delivery_states(engine, subscription_id))[1]
            == {"delivered": total}
        ),
        "the survivor to deliver",
        10,
    )
    assert first.id in {r.delivery_id for r in receiver.accepted()}
    (row,) = [d for d in reads.deliveries(engine, subscription_id) if str(d.id) == first.id]
    assert (row.attempts, row.state) == (2, DeliveryState.DELIVERED)
    survivor.stop()


def test_a_failing_receiver_parks_dead_letters_that_hold_their_instance_until_replayed(
    engine: Engine, receiver: Receiver
) -> None:
    receiver.always_fail = True
    settings = replace(FAST, max_attempts=3, backoff_base_seconds=0.01, backoff_cap_seconds=0.02)
    subscription_id = subscribe(
        engine, receiver.url, event_types=("instance.started", "task.completed")
    )
    engine.deploy(two_steps())
    handle = engine.start_latest("two-steps")
    (task,) = handle.user_tasks()
    engine.complete_task(task.id)
    dispatcher = Dispatcher(engine, settings)
    wait_until(
        lambda: (
            (dispatcher.run_once(), delivery_states(engine, subscription_id))[1]
            == {"dead": 1, "pending": 1}
        ),
        "a dead letter",
        10,
    )
    # Three attempts of the first event; the second waits behind it, never attempted.
    assert [r.event for r in receiver.received] == ["instance.started"] * 3
    (dead,) = reads.deliveries(engine, subscription_id, DeliveryState.DEAD)
    assert (dead.event, dead.attempts, dead.last_status) == ("instance.started", 3, "HTTP 500")

    receiver.always_fail = False
    replayed = engine.run(ReplayDeadLetters(subscription_id))
    assert replayed.replayed == 1
    wait_until(
        lambda: (
            (dispatcher.run_once(), delivery_states(engine, subscription_id))[1] == {"delivered": 2}
        ),
        "the replay",
        10,
    )
    assert [r.event for r in receiver.accepted()] == ["instance.started", "task.completed"]
    dispatcher.stop()


def test_the_outbox_floor_is_the_lowest_cursor_of_an_enabled_subscription(
    engine: Engine, receiver: Receiver
) -> None:
    with engine.connection() as conn:
        assert outbox_floor(conn) is None
    first = subscribe(engine, receiver.url)
    engine.deploy(two_steps())
    engine.start_latest("two-steps")
    second = subscribe(engine, receiver.url)
    with engine.connection() as conn:
        assert outbox_floor(conn) == cursor_of(engine, first) < cursor_of(engine, second)
    dispatcher = Dispatcher(engine, FAST)
    dispatcher.run_once()
    dispatcher.stop()
    with engine.connection() as conn:
        assert outbox_floor(conn) == cursor_of(engine, first) == cursor_of(engine, second)


def test_the_server_delivers_webhooks_where_it_runs_jobs(
    database_url: str, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.server import live_server

    monkeypatch.setenv("INTERLOCK_WEBHOOK_POLL_SECONDS", "0.2")
    monkeypatch.setenv("INTERLOCK_WEBHOOK_THREADS", "1")
    with live_server(database_url) as server:
        subscribe(server.engine, receiver.url, event_types=("instance.started",))
        server.engine.deploy(two_steps())
        handle = server.engine.start_latest("two-steps")
        wait_until(lambda: len(receiver.accepted()) == 1, "the server's dispatcher", 20)
    (got,) = receiver.accepted()
    assert (got.event, got.body["instance_id"]) == ("instance.started", str(handle.id))
    assert verify(SECRET, got)


def test_a_dispatcher_whose_connections_keep_dying_backs_off_and_delivers_afterwards(
    database_url: str, engine: Engine, receiver: Receiver
) -> None:
    subscription_id = subscribe(engine, receiver.url)
    engine.deploy(two_steps())
    for _ in range(5):
        engine.start_latest("two-steps")
    expected = len(outbox_after(engine, cursor_of(engine, subscription_id)))
    doomed = database_url + ("&" if "?" in database_url else "?") + "application_name=doomed"
    with Engine(doomed, migrate=False) as other:
        dispatcher = Dispatcher(other, replace(FAST, threads=2))
        dispatcher.error_backoff_seconds = 0.05
        dispatcher.start()
        try:
            with psycopg.connect(database_url, autocommit=True) as killer:
                until = time.monotonic() + 2.0
                while time.monotonic() < until:
                    killer.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE application_name = 'doomed'"
                    )
                    time.sleep(0.02)
            assert running(dispatcher)
            wait_until(
                lambda: delivery_states(engine, subscription_id).get("delivered", 0) == expected,
                "delivery after the connections stopped dying",
                30,
            )
        finally:
            dispatcher.stop()
    assert not running(dispatcher)
    assert len({r.delivery_id for r in receiver.accepted()}) == expected


def test_delivered_deliveries_are_deleted_after_the_time_kept_and_dead_letters_stay(
    engine: Engine, receiver: Receiver
) -> None:
    subscription_id = subscribe(engine, receiver.url, event_types=("instance.started",))
    engine.deploy(two_steps())
    engine.start_latest("two-steps")
    dispatcher = Dispatcher(engine, FAST)
    wait_until(
        lambda: (
            (dispatcher.run_once(), delivery_states(engine, subscription_id))[1] == {"delivered": 1}
        ),
        "a delivery",
        10,
    )
    receiver.always_fail = True
    engine.start_latest("two-steps")
    dying = Dispatcher(engine, replace(FAST, max_attempts=1))
    wait_until(
        lambda: (
            (dying.run_once(), delivery_states(engine, subscription_id))[1]
            == {"delivered": 1, "dead": 1}
        ),
        "a dead letter",
        10,
    )
    dispatcher.stop()
    dying.stop()
    assert engine.run(PruneDelivered(keep_seconds=3600)).deleted == 0
    assert delivery_states(engine, subscription_id) == {"delivered": 1, "dead": 1}
    assert engine.run(PruneDelivered(keep_seconds=0)).deleted == 1
    assert delivery_states(engine, subscription_id) == {"dead": 1}
