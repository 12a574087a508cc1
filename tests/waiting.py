"""Waiting for an event in a test: poll a condition until it holds, with a generous bound that
only guards against a wait that would never end."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(
    condition: Callable[[], object],
    what: str = "the condition",
    timeout: float = 30.0,
    interval: float = 0.05,
) -> None:
    """Return once `condition()` holds, checked every `interval` seconds; fail naming `what`
    after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)
