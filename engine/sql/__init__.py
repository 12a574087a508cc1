"""SQL of the engine that is not a statement of one concern: the one builder of read filters
(`filters.py`), and the current definition of the database's SQL functions and triggers
(`functions.sql`).

The migrations created the functions and triggers over several revisions; `functions.sql` states
what the newest revision leaves behind, and tests/integration/test_sql_functions.py checks that
the two agree. Where a revision's text is still the current definition, the file includes that
revision's frozen SQL (psql's `\\ir`) instead of holding a second copy.
"""

from __future__ import annotations

import re
from pathlib import Path

FUNCTIONS_FILE = "functions.sql"

# psql's include relative to the including file, on a line of its own.
_INCLUDE = re.compile(r"^\\ir (\S+)$", re.MULTILINE)


def functions_sql() -> str:
    """The text of `functions.sql`, its includes expanded: every function and trigger, with
    unqualified names."""
    path = Path(__file__).with_name(FUNCTIONS_FILE)
    return _INCLUDE.sub(
        lambda m: (path.parent / m.group(1)).read_text(encoding="utf-8"),
        path.read_text(encoding="utf-8"),
    )
