from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.stream.harness import StreamServer, stream_server


@pytest.fixture
def stream_srv(database_url: str) -> Iterator[StreamServer]:
    """A real server on 127.0.0.1 with the event stream (pings every 0.5 s)."""
    with stream_server(database_url, ping_seconds=0.5) as running:
        yield running
