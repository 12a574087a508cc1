"""The announcer: NOTIFY after commit, at once when alone, folded when commits come fast."""

from __future__ import annotations

import time

import psycopg

from engine.loops.announcer import Announcer

CHANNEL = "interlock_test_announcer"


def received(listener: psycopg.Connection[object], quiet: float = 0.5) -> list[float]:
    """Arrival times of the notifications until none came for `quiet` seconds."""
    times = []
    for _ in listener.notifies(timeout=quiet):
        times.append(time.monotonic())
    return times


def test_a_lone_announcement_goes_out(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as listener:
        listener.execute(f"LISTEN {CHANNEL}")
        announcer = Announcer(database_url)
        try:
            announcer.announce(CHANNEL)
            arrivals = list(listener.notifies(timeout=5, stop_after=1))
        finally:
            announcer.close()
    assert [n.channel for n in arrivals] == [CHANNEL]


def test_fast_announcements_fold_and_the_last_is_not_lost(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as listener:
        listener.execute(f"LISTEN {CHANNEL}")
        announcer = Announcer(database_url, min_interval=0.02)
        try:
            for _ in range(200):
                announcer.announce(CHANNEL)
                time.sleep(0.0005)
            last_announced = time.monotonic()
            arrivals = received(listener)
        finally:
            announcer.close()
    # 200 announcements over at least 100 ms, at most one NOTIFY every 20 ms.
    assert 1 <= len(arrivals) < 40
    assert arrivals[-1] >= last_announced
