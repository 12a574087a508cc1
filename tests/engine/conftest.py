from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.api import Engine


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=12) as engine:
        yield engine


@pytest.fixture(scope="module")
def round_engine(module_database_url: str) -> Iterator[Engine]:
    """One engine and database for every round of a module's races: each round races over
    instances of its own, so a database and a pool per round would cost more than the round."""
    with Engine(module_database_url, migrate=False, pool_size=12) as engine:
        yield engine
