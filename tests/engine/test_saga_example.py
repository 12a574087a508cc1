"""`python -m examples.saga` runs the trip saga against a real database and prints the
compensation order: the flight is cancelled before the hotel (reverse order of booking)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg

ROOT = Path(__file__).parent.parent.parent


def test_the_saga_example_cancels_the_flight_then_the_hotel(database_url: str) -> None:
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "examples.saga"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "compensation order: cancelFlight -> cancelHotel" in lines
    assert "trip_saga Completed at EndEvent_Cancelled" in lines
    steps = [line.strip() for line in lines if line.startswith("  > ")]
    assert steps == [
        "> bookHotel",
        "> bookFlight",
        "> chargeCard: the card is declined",
        "> cancelFlight",
        "> cancelHotel",
    ]
    with psycopg.connect(database_url) as conn:
        visits = conn.execute(
            "SELECT h.node_id, h.mode, h.state FROM history h "
            "JOIN process_instance p ON p.id = h.instance_id "
            "WHERE p.definition_key = 'trip_saga' AND h.mode = 'Compensation' "
            "ORDER BY h.started_at, h.id"
        ).fetchall()
        left = conn.execute(
            "SELECT count(*) FROM event_subscription WHERE kind = 'compensate'"
        ).fetchone()
    assert visits == [
        ("Task_CancelFlight", "Compensation", "Completed"),
        ("Task_CancelHotel", "Compensation", "Completed"),
    ]
    assert left == (0,)
