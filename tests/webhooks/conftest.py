"""Fixtures for webhook tests: an engine over a fresh database, a receiver on 127.0.0.1, and
delivery settings short enough for a test that allow loopback destinations."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from engine.webhooks.settings import WebhookSettings, parse_networks
from tests.webhooks.receiver import Receiver

SECRET = "a-secret-of-the-receiver"
# The receivers listen on 127.0.0.1; without this, deliveries to them are refused.
LOOPBACK = parse_networks("127.0.0.0/8,::1/128")

FAST = WebhookSettings(
    max_attempts=60,
    backoff_base_seconds=0.05,
    backoff_cap_seconds=0.5,
    timeout_seconds=2.0,
    lease_seconds=10.0,
    batch_size=10,
    poll_seconds=0.2,
    threads=1,
    allowed_networks=LOOPBACK,
)


def two_steps() -> ProcessModel:
    """start -> first (user task) -> end: starting it commits several events, completing its
    task several more, in another transaction."""
    return (
        ProcessBuilder("two-steps")
        .start_event("start")
        .user_task("first")
        .end_event("end")
        .chain("start", "first", "end")
        .build()
    )


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False) as opened:
        yield opened


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver().start()
    yield running
    running.stop()
