"""Camunda's executions as Interlock keeps them: a running instance is the execution of its root
scope (its id is the instance's), and each live token is an execution of its own (its id is the
token's), as the activity-instance tree, tasks, jobs and external tasks name them."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import psycopg

from engine.states import FINAL_TOKEN_STATES


def instance_of(conn: psycopg.Connection[Any], execution_id: UUID) -> UUID | None:
    """The instance of the execution `execution_id` (a live token or an instance), or None."""
    row = conn.execute(
        "SELECT instance_id FROM token WHERE id = %(id)s AND state <> ALL(%(final)s) "
        "UNION ALL SELECT id FROM process_instance WHERE id = %(id)s LIMIT 1",
        {"id": execution_id, "final": [s.value for s in FINAL_TOKEN_STATES]},
    ).fetchone()
    return None if row is None else UUID(str(row[0]))
