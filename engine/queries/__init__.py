"""The engine's read API: every read the web layer makes, callable with the engine.

A function here is written against a connection and decorated with `@query`. Called with the
engine (anything with a `connection()` context manager), it borrows one of the engine's pooled
read connections (autocommit: each statement sees the latest commits) for the call; called with a
connection, as the engine does inside a transaction, it runs on that one. `engine/accounts.py`
exposes its reads and writes of credentials and sessions the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar

import psycopg

from engine.store.columns import fetch_all, fetch_dicts, fetch_one

__all__ = ["Connection", "Query", "Reader", "fetch_all", "fetch_dicts", "fetch_one", "query"]

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
