"""The ordered, gap-safe outbox tail: committed rows in `seq` order, each exactly once.

`seq` is taken at insert but transactions commit in any order, so "everything after the last seq
seen" skips a row that commits later with a smaller number. Comparing the row's `txid` with the
snapshot's xmin does not fix that: a transaction id is assigned at the first write (commands lock
their instance row first), not when the seq is taken. An older transaction can take seq 6 and
commit while a younger one, at or above xmin and still open, holds seq 5: "txid < xmin" would
emit 6 and never see 5. So the tail reasons about who can still hold a seq:

1. Read B, the sequence's last value (committed or not); then, in a later statement, W, the
   transactions holding a lock on `outbox` stronger than a read (pg_locks).
2. An INSERT locks its table before it evaluates the seq default and keeps that lock until its
   top-level transaction ends (a rolled-back savepoint releases it along with its rows). So every
   transaction that can commit a row with seq <= B had ended when W was read, or is in W.
3. Once a later read of pg_locks shows no member of W, all of them have ended, and an ended
   transaction is visible to every later snapshot (PostgreSQL leaves the proc array before it
   releases locks). A read started after that sees every committed row with seq <= B, and no
   other can appear: new inserts take larger numbers. The tail emits them in order; cursor = B.

Numbers that never commit (rollbacks, a sequence jump after a crash) are never waited for; only
transactions in W are. A transaction holding the outbox lock holds back the rows after its own
(order demands it); one that writes no outbox row holds back nothing. Assumptions: `seq` comes
only from its identity default with CACHE 1 (checked) and never restarts; reads are autocommit,
one snapshot per statement. The tail only reads; `txid` stays for diagnostics.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from engine.store import outbox as store

MAX_BARRIERS = 256


@dataclass(frozen=True)
class OutboxRow:
    """One committed outbox event, with the definition of its instance and the root of the
    instance's family and its tenant (None for an outbox row whose instance does not exist). The
    root and the tenant are for filtering only: the JSON of the row does not carry them."""

    seq: int
    event: str
    instance_id: UUID
    token_id: UUID | None
    node_id: str | None
    history_id: UUID | None
    created_at: datetime
    definition_key: str | None
    definition_id: str | None
    root_instance_id: UUID | None = None
    # The instance's tenant, for filtering only, as the root.
    tenant_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "event": self.event,
            "instance_id": str(self.instance_id),
            "token_id": str(self.token_id) if self.token_id else None,
            "node_id": self.node_id,
            "history_id": str(self.history_id) if self.history_id else None,
            "created_at": self.created_at.isoformat(),
            "definition_key": self.definition_key,
            "definition_id": self.definition_id,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))


@dataclass
class _Barrier:
    """Every seq <= `bound` is settled once all of `holders` have ended."""

    bound: int
    holders: frozenset[str]


def read_rows(
    conn: psycopg.Connection[Any],
    after: int,
    upto: int,
    limit: int,
    only: Mapping[str, Any] | None = None,
) -> list[OutboxRow]:
    """Committed rows with `after < seq <= upto`, in order (`only`: see engine/store/outbox.py).
    Complete only when `upto` is at most a settled cursor (`OutboxTail.cursor`); replays of what
    a client missed read this way."""
    found = store.rows(conn, after, upto, limit, only)
    return [OutboxRow(**row) for row in found]


def last_seq(conn: psycopg.Connection[Any]) -> int:
    """The highest seq the outbox has handed out (committed or not); 0 before the first."""
    return store.last_seq(conn, store.table(conn))


class OutboxTail:
    """Reads settled outbox rows after a cursor, over a connection of its own in autocommit mode.

    With `after=None` the tail starts at the first settled point it observes and emits only what
    commits afterwards; with a number it emits every committed row above it. Call `poll()` again
    while `behind` (a page was full) and when the database says the outbox changed; while
    `waiting`, some transaction can still commit rows the tail must not pass, so poll again soon.
    """

    def __init__(
        self, conn: psycopg.Connection[Any], after: int | None = None, page_size: int = 500
    ) -> None:
        if not conn.autocommit:
            raise ValueError("the outbox tail needs an autocommit connection")
        self._conn = conn
        self._table = store.table(conn)
        self._page_size = page_size
        self._cursor = after
        self._settled = after if after is not None else -1
        self._barriers: list[_Barrier] = []

    @property
    def cursor(self) -> int | None:
        """Every committed row with seq <= cursor has been returned; None before the first
        observation of a tail started without a cursor."""
        return self._cursor

    @property
    def settled(self) -> int:
        return self._settled

    @property
    def behind(self) -> bool:
        return self._cursor is not None and self._cursor < self._settled

    @property
    def waiting(self) -> bool:
        return bool(self._barriers)

    def observe(self) -> int:
        """Look once and return the settled bound without reading rows: every committed row
        with seq <= it is visible to any read started afterwards, and no other row at or below
        it can commit any more (-1 while nothing is settled yet)."""
        self._observe()
        return self._settled

    def reconnect(self, conn: psycopg.Connection[Any]) -> None:
        """Continue on a new connection (barriers stay valid: they name transactions)."""
        if not conn.autocommit:
            raise ValueError("the outbox tail needs an autocommit connection")
        self._conn = conn

    def poll(self) -> list[OutboxRow]:
        """The next settled rows after the cursor (at most a page), in seq order."""
        if not self.behind:
            self._observe()
        if self._cursor is None:
            self._cursor = self._settled if self._settled >= 0 else None
            return []
        if self._cursor >= self._settled:
            return []
        rows = read_rows(self._conn, self._cursor, self._settled, self._page_size)
        self._cursor = rows[-1].seq if len(rows) == self._page_size else self._settled
        return rows

    def _observe(self) -> None:
        # Two statements, in this order: B before W (see the module docstring).
        bound = store.last_seq(self._conn, self._table)
        writers = store.writers(self._conn, self._table)
        for barrier in self._barriers:
            barrier.holders &= writers
        self._barriers = [b for b in self._barriers if b.holders != writers]
        self._barriers.append(_Barrier(bound, writers))
        cleared = [b.bound for b in self._barriers if not b.holders]
        if cleared:
            self._settled = max(self._settled, *cleared)
        self._barriers = [b for b in self._barriers if b.holders and b.bound > self._settled]
        if len(self._barriers) > MAX_BARRIERS:
            # Dropping a barrier only postpones rows to a later one.
            del self._barriers[0]
