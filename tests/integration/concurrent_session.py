"""The test that tests/integration/test_concurrent_sessions.py runs in pytest sessions of its
own, side by side (the name does not start with `test_`: the suite does not collect it).

It writes where its session keeps its files, says it is ready, waits for the word to go on, and
then uses its database again: by then the other session has been running beside it all along.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import psycopg
import pytest


def test_the_database_outlives_the_sessions_beside_it(
    database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    handshake = Path(os.environ["INTERLOCK_TEST_HANDSHAKE"])
    name = os.environ["INTERLOCK_TEST_SESSION"]
    basetemp = tmp_path_factory.getbasetemp()
    (handshake / f"{name}.basetemp").write_text(str(basetemp))
    (handshake / f"{name}.ready").touch()
    deadline = time.monotonic() + 120
    while not (handshake / "go").exists():
        assert time.monotonic() < deadline, "no word to go on"
        time.sleep(0.05)

    assert basetemp.is_dir()
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE note (body text)")
        conn.execute("INSERT INTO note VALUES (%s)", (name,))
        conn.execute("CHECKPOINT")  # every changed page goes to the server's files
        assert conn.execute("SELECT body FROM note").fetchall() == [(name,)]
