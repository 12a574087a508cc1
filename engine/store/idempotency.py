"""Writes and reads of the idempotency entries (engine/core/executor.py): the result of a command
run with an idempotency key, kept for a repeated request to replay."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb


def locked_entry(
    conn: psycopg.Connection[Any], lock: int, principal: str, key: str
) -> tuple[str, str, dict[str, Any]] | None:
    """Take the transaction's advisory lock `lock` (requests repeating one key queue on it), then
    read the entry of (`principal`, `key`): its command, fingerprint and result, or None."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
    row = conn.execute(
        "SELECT command, fingerprint, result FROM idempotency WHERE principal = %s AND key = %s",
        (principal, key),
    ).fetchone()
    return None if row is None else (row[0], row[1], row[2])


def insert(
    conn: psycopg.Connection[Any],
    principal: str,
    key: str,
    command: str,
    fingerprint: str,
    result: Any,
) -> None:
    """Keep the JSON `result` of `command` under (`principal`, `key`)."""
    conn.execute(
        "INSERT INTO idempotency (principal, key, command, fingerprint, result) "
        "VALUES (%s, %s, %s, %s, %s)",
        (principal, key, command, fingerprint, Jsonb(result)),
    )
