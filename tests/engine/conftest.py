from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.api import Engine


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=12) as engine:
        yield engine
