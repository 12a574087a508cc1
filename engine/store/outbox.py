"""Outbox reads for the ordered tail (`engine.db.outbox`): the sequence's high-water mark, the
transactions that may still be writing outbox rows, and committed events in a range of their
numbers (`seq`, see `engine.schema.OUTBOX_EVENTS_PER_ROW`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, LiteralString

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from engine.errors import InterlockError
from engine.schema import OUTBOX_EVENTS_PER_ROW
from engine.sql import covers
from engine.sql.filters import Where


@dataclass(frozen=True)
class OutboxTable:
    """Catalog ids the tail needs: the outbox table, its `seq` sequence, this database."""

    table_oid: int
    sequence_oid: int
    database_oid: int


def table(conn: psycopg.Connection[Any]) -> OutboxTable:
    row = conn.execute(
        "SELECT 'outbox'::regclass::oid, s.seqrelid::oid, s.seqcache, "
        "(SELECT oid FROM pg_database WHERE datname = current_database()) "
        "FROM pg_sequence s "
        "WHERE s.seqrelid = pg_get_serial_sequence('outbox', 'seq')::regclass"
    ).fetchone()
    if row is None:
        raise InterlockError("the outbox table has no sequence on its seq column")
    table_oid, sequence_oid, cache, database_oid = row
    if cache != 1:
        # A session-cached range would hand out numbers below the observed high-water mark
        # after it was read, which the tail's argument excludes.
        raise InterlockError(f"the outbox sequence must have CACHE 1, it has CACHE {cache}")
    return OutboxTable(int(table_oid), int(sequence_oid), int(database_oid))


def last_seq(conn: psycopg.Connection[Any], outbox: OutboxTable) -> int:
    """The highest event number a row handed out so far can hold, committed or not (0 before
    the first row): the last row's seq times OUTBOX_EVENTS_PER_ROW plus the room of a row."""
    row = conn.execute(
        "SELECT coalesce(pg_sequence_last_value(%s::oid::regclass), 0)", (outbox.sequence_oid,)
    ).fetchone()
    last = int(row[0]) if row else 0
    return last * OUTBOX_EVENTS_PER_ROW + OUTBOX_EVENTS_PER_ROW - 1 if last else 0


def row_of(seq: int) -> int:
    """The seq of the outbox row that holds the event numbered `seq`."""
    return seq // OUTBOX_EVENTS_PER_ROW


def writers(conn: psycopg.Connection[Any], outbox: OutboxTable) -> frozenset[str]:
    """Virtual transaction ids of every other transaction holding (or awaiting) a lock on the
    outbox table stronger than a plain read: whoever can still commit an outbox row. Prepared
    transactions are included (they have no pid)."""
    rows = conn.execute(
        "SELECT DISTINCT virtualtransaction FROM pg_locks "
        "WHERE locktype = 'relation' AND database = %s AND relation = %s "
        "AND mode <> 'AccessShareLock' AND pid IS DISTINCT FROM pg_backend_pid()",
        (outbox.database_oid, outbox.table_oid),
    ).fetchall()
    return frozenset(str(row[0]) for row in rows)


def numbered(where: Where, after: int, upto: int) -> None:
    """Keep `where` (over outbox_event as `o`) to the events numbered `after < seq <= upto`:
    the rows that hold them, by the outbox's primary key, then the events themselves."""
    where.at_least("o.row_seq", row_of(after))
    where.at_most("o.row_seq", row_of(upto))
    where.above("o.seq", after)
    where.at_most("o.seq", upto)


_ROWS = sql.SQL(
    "SELECT o.seq, o.event, o.instance_id, o.token_id, o.node_id, o.history_id, o.created_at, "
    "i.definition_key, i.definition_id, i.root_instance_id, i.tenant_id "
    "FROM outbox_event o LEFT JOIN process_instance i ON i.id = o.instance_id"
)

# What `rows` may keep to: the column each name of `only` compares.
_ONLY: dict[str, LiteralString] = {
    "instance_id": "o.instance_id",
    "root_instance_id": "i.root_instance_id",
    "definition_key": "i.definition_key",
    "definition_id": "i.definition_id",
}


def rows(
    conn: psycopg.Connection[Any],
    after: int,
    upto: int,
    limit: int,
    only: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Rows with `after < seq <= upto` in `seq` order, at most `limit`, each by its columns'
    names; with `only`, those of one instance, one family of called instances (by its root) or
    one definition (by key or by id): each name of `_ONLY` given a value other than None."""
    where = Where()
    numbered(where, after, upto)
    for name, value in (only or {}).items():
        where.equals(_ONLY[name], value)
    # A replay to a client: only the rows of instances its principal may read.
    where.authorized(covers.instance("i.definition_key", "o.instance_id", tenant="i.tenant_id"))
    statement = _ROWS + where.sql() + sql.SQL(" ORDER BY o.seq") + where.limit(limit)
    return conn.cursor(row_factory=dict_row).execute(statement, where.params()).fetchall()
