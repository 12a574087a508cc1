"""The database a benchmark runs on: the one it is given, else a new embedded server of its own."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.api import Engine


@contextmanager
def scratch_engine(url: str | None, *, pool_size: int = 8) -> Iterator[Engine]:
    """An engine on `url` (or DATABASE_URL); given neither, on a new embedded server in a
    temporary directory, removed afterwards. Every run then starts from empty tables, and the
    development database (.interlock) neither fills with benchmark instances nor makes the
    figures drift as it grows."""
    with (
        tempfile.TemporaryDirectory(prefix="interlock-bench-") as home,
        Engine(url, home=Path(home), pool_size=pool_size) as engine,
    ):
        yield engine
