"""The chaos soak (bench/chaos.py) in the suite: Interlock processes SIGKILLed at random under
load, on a private embedded database; afterwards nothing is stuck, doubled or out of order.

The default suite runs a short version (a few kills in a few seconds, no postmaster kill); the
`slow` one runs 60 s with one SIGKILL of the PostgreSQL postmaster as well.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bench.chaos import Figures, Options, run


def soak(options: Options) -> Figures:
    figures = run(options)
    print(f"\nchaos soak, seed {options.seed}:")
    for line in figures.lines():
        print(f"  {line}")
    return figures


def assert_sound(figures: Figures) -> None:
    report = "\n".join(figures.lines())
    assert figures.stuck == 0, report
    assert figures.doubled_total == 0, report
    assert figures.out_of_order == 0, report
    assert figures.failed_starts == 0, report
    assert figures.refused_starts == [], report
    assert figures.instances == figures.completed == figures.started > 0, report
    assert set(figures.exit_codes.values()) == {0}, report
    assert figures.sound, report


@pytest.mark.slow
def test_a_short_soak_loses_and_doubles_nothing(tmp_path: Path) -> None:
    figures = soak(
        Options(
            seconds=5.0,
            rate=4.0,
            kill_every=1.0,
            postmaster_kill=False,
            settle_seconds=60.0,
            seed=random.randrange(1 << 30),
            home=tmp_path / "chaos",
            verbose=False,
        )
    )
    assert sum(figures.kills.values()) >= 2, figures.lines()
    assert_sound(figures)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_minute_of_kills_and_a_postmaster_kill(tmp_path: Path) -> None:
    figures = soak(
        Options(
            seconds=60.0,
            postmaster_kill=True,
            seed=random.randrange(1 << 30),
            home=tmp_path / "chaos",
        )
    )
    assert figures.kills["postmaster"] == 1, figures.lines()
    assert sum(figures.kills.values()) >= 10, figures.lines()
    assert figures.database_back_seconds is not None, figures.lines()
    assert figures.recovery_seconds is not None, figures.lines()
    assert_sound(figures)
