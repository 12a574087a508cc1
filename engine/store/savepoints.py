"""Savepoints in a command's transaction: a part of it whose writes can be undone alone (a
batch's item that failed, a preview of a modification)."""

from __future__ import annotations

from typing import Any, LiteralString

import psycopg


def begin(conn: psycopg.Connection[Any], name: LiteralString) -> None:
    conn.execute("SAVEPOINT " + name)


def roll_back(conn: psycopg.Connection[Any], name: LiteralString) -> None:
    """Undo what the transaction wrote since the savepoint `name` began (which stays)."""
    conn.execute("ROLLBACK TO SAVEPOINT " + name)


def release(conn: psycopg.Connection[Any], name: LiteralString) -> None:
    """Keep what the transaction wrote since the savepoint `name` began, and end it."""
    conn.execute("RELEASE SAVEPOINT " + name)
