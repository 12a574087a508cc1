"""The current definition of the database's SQL functions and triggers (`functions.sql`).

The migrations created them over several revisions; the file states what the newest revision
leaves behind, and tests/integration/test_sql_functions.py checks that the two agree.
"""

from __future__ import annotations

from importlib.resources import files

FUNCTIONS_FILE = "functions.sql"


def functions_sql() -> str:
    """The text of `functions.sql`: every function and trigger, with unqualified names."""
    return files(__name__).joinpath(FUNCTIONS_FILE).read_text(encoding="utf-8")
