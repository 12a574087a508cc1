"""The settings of shutdown and job locks: defaults, values, and a clear error naming the variable
for a bad one."""

from __future__ import annotations

import pytest

from app.cli import _grace_seconds
from app.settings import Settings
from engine.errors import InterlockError
from engine.loops.jobs import JobExecutor, default_lock_seconds


def test_the_grace_period_defaults_to_15_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INTERLOCK_SHUTDOWN_GRACE_SECONDS", raising=False)
    assert Settings.from_env().shutdown_grace_seconds == 15.0
    assert _grace_seconds() == 15.0


def test_the_grace_period_comes_from_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERLOCK_SHUTDOWN_GRACE_SECONDS", "7.5")
    assert Settings.from_env().shutdown_grace_seconds == 7.5
    assert _grace_seconds() == 7.5
    monkeypatch.setenv("INTERLOCK_SHUTDOWN_GRACE_SECONDS", "0")
    assert _grace_seconds() == 0.0


@pytest.mark.parametrize("bad", ["soon", "-1", "3601", "nan", "inf"])
def test_a_bad_grace_period_names_its_variable(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("INTERLOCK_SHUTDOWN_GRACE_SECONDS", bad)
    with pytest.raises(ValueError, match="INTERLOCK_SHUTDOWN_GRACE_SECONDS must be"):
        Settings.from_env()
    with pytest.raises(InterlockError, match="INTERLOCK_SHUTDOWN_GRACE_SECONDS must be"):
        _grace_seconds()


def test_job_locks_last_300_seconds_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INTERLOCK_JOB_LOCK_SECONDS", raising=False)
    assert default_lock_seconds() == 300.0
    monkeypatch.setenv("INTERLOCK_JOB_LOCK_SECONDS", "3")
    assert default_lock_seconds() == 3.0
    # An explicit argument wins over the variable.
    assert JobExecutor(engine=None, lock_seconds=12).lock_seconds == 12  # type: ignore[arg-type]
    assert JobExecutor(engine=None).lock_seconds == 3.0  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["later", "0", "-5", "nan"])
def test_a_bad_job_lock_names_its_variable(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("INTERLOCK_JOB_LOCK_SECONDS", bad)
    with pytest.raises(ValueError, match="INTERLOCK_JOB_LOCK_SECONDS must be"):
        default_lock_seconds()
