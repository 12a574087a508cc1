"""The engine's read API: every read the web layer makes, callable with the engine.

A function here is written against a connection and decorated with `@query`. Called with the
engine (anything with a `connection()` context manager), it borrows one of the engine's pooled
read connections (autocommit: each statement sees the latest commits) for the call; called with a
connection, as the engine does inside a transaction, it runs on that one.
`engine/identity/accounts.py`
exposes its reads and writes of credentials and sessions the same way.

A read of every row matching a filter (an export) is `@batched` instead: a generator of batches
that borrows the connection for one batch at a time (see `Batched`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar

import psycopg

from engine.store.columns import fetch_all, fetch_dicts, fetch_one

__all__ = [
    "BATCH_SIZE",
    "Batched",
    "Connection",
    "Query",
    "Reader",
    "batched",
    "fetch_all",
    "fetch_dicts",
    "fetch_one",
    "query",
]

P = ParamSpec("P")
R = TypeVar("R")

Connection = psycopg.Connection[Any]


class Reader(Protocol):
    """What a query needs of the engine: a pooled read connection for the length of a call."""

    def connection(self) -> AbstractContextManager[Connection]: ...


class Query(Generic[P, R]):
    """A function of a connection, callable with the engine or with a connection."""

    def __init__(self, fn: Callable[Concatenate[Connection, P], R]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, source: Reader | Connection, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if isinstance(source, psycopg.Connection):
            return self.fn(source, *args, **kwargs)
        with source.connection() as conn:
            return self.fn(conn, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<query {self.fn.__module__}.{self.fn.__qualname__}>"


def query(fn: Callable[Concatenate[Connection, P], R]) -> Query[P, R]:
    """Make `fn(conn, ...)` callable as `fn(engine, ...)` too (see the module docstring)."""
    return Query(fn)


T = TypeVar("T")

# How many rows a streamed read fetches per statement.
BATCH_SIZE = 1000


class Batched(Generic[P, T]):
    """A read of every row matching a filter, in batches: `fn(conn, after, limit, ...)` returns
    at most `limit` rows that come after the row `after` (None: from the first) in the read's
    order, continuing by key (keyset), so each batch is one bounded, indexed statement.

    Calling it yields the batches, in order, until one comes back short. Called with the engine,
    it borrows a pooled read connection for each batch only and gives it back before the batch is
    yielded: a consumer that stops early (a client that disconnects mid-download), or reads
    slowly, holds no connection and no transaction, and nothing needs closing. The batches are
    not one snapshot: like paging through a list, a row never repeats and a row that matched all
    along is never skipped (the order's key does not change), while a row that changed meanwhile
    is read as it was when its batch was read. Called with a connection, every batch runs on
    that one."""

    def __init__(self, fn: Callable[Concatenate[Connection, T | None, int, P], list[T]]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(
        self, source: Reader | Connection, /, *args: P.args, **kwargs: P.kwargs
    ) -> Iterator[list[T]]:
        return self.batches(source, BATCH_SIZE, *args, **kwargs)

    def batches(
        self, source: Reader | Connection, size: int, /, *args: P.args, **kwargs: P.kwargs
    ) -> Iterator[list[T]]:
        """The batches of at most `size` rows."""
        after: T | None = None
        while True:
            if isinstance(source, psycopg.Connection):
                rows = self.fn(source, after, size, *args, **kwargs)
            else:
                with source.connection() as conn:
                    rows = self.fn(conn, after, size, *args, **kwargs)
            if rows:
                yield rows
                after = rows[-1]
            if len(rows) < size:
                return

    def __repr__(self) -> str:
        return f"<batched query {self.fn.__module__}.{self.fn.__qualname__}>"


def batched(
    fn: Callable[Concatenate[Connection, T | None, int, P], list[T]],
) -> Batched[P, T]:
    """Make `fn(conn, after, limit, ...)` a streamed read (see `Batched`)."""
    return Batched(fn)
