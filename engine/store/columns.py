"""Column lists and types of the hot statements, read off the tables in `engine.schema`, and
rows read by name.

Loading an instance and writing it back name every column they carry; these helpers derive
those names, the record types that unpack JSON rows and the conversions of JSON values from the
table declarations, so that the statements follow the tables. Read models are built from a row's
column names, never from column positions (`fetch_one`, `fetch_all`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, LiteralString, TypeVar
from uuid import UUID

import psycopg
import sqlalchemy as sa
from psycopg import sql
from psycopg.abc import Params, QueryNoTemplate
from psycopg.rows import class_row, dict_row
from sqlalchemy.dialects.postgresql import JSONB

from engine import schema
from engine.core.runtime import (
    ExternalTaskRow,
    IncidentRow,
    InstanceRow,
    JobRow,
    Join,
    Subscription,
    Token,
    UserTaskRow,
    Visit,
)
from engine.sql.filters import Where

TABLES: Mapping[str, sa.Table] = schema.metadata.tables

# The runtime row (engine/core/runtime.py) each table of an instance is loaded into
# (engine/store/runs.py) and written from (engine/store/persist.py).
HELD_BY: Mapping[str, type[Any]] = {
    "process_instance": InstanceRow,
    "token": Token,
    "join_state": Join,
    "user_task": UserTaskRow,
    "external_task": ExternalTaskRow,
    "job": JobRow,
    "event_subscription": Subscription,
    "incident": IncidentRow,
    "history": Visit,
}

T = TypeVar("T")


def names(table: sa.Table) -> tuple[str, ...]:
    """The table's columns, in declaration order."""
    return tuple(column.name for column in table.columns)


def field_names(cls: type[Any]) -> frozenset[str]:
    return frozenset(field.name for field in dataclasses.fields(cls))


def shared(table: sa.Table, cls: type[Any]) -> tuple[str, ...]:
    """The table's columns that the runtime row `cls` holds, in declaration order."""
    held = field_names(cls)
    return tuple(name for name in names(table) if name in held)


def select_list(
    cls: type[Any],
    sources: Sequence[tuple[str, str]],
    computed: Mapping[str, str] | None = None,
) -> str:
    """The select list that reads a row of the dataclass `cls` by name (see `fetch_all`), one
    expression per field, in the fields' order: the field's expression in `computed` (aliased
    as the field), else the column of its name of the first of `sources` ((alias, table name)
    pairs; an empty alias: the bare column) whose table has one."""
    computed = computed or {}
    tables = [(alias, TABLES[table]) for alias, table in sources]
    items = []
    for field in dataclasses.fields(cls):
        if field.name in computed:
            items.append(f"{computed[field.name]} AS {field.name}")
            continue
        alias = next((a for a, table in tables if field.name in table.columns), None)
        if alias is None:
            raise TypeError(f"no column for {cls.__name__}.{field.name} in {sources}")
        items.append(f"{alias}.{field.name}" if alias else field.name)
    return ", ".join(items)


def mutable(table: sa.Table) -> tuple[str, ...]:
    """The columns a command may change after the row was written (see `schema.MUTABLE`)."""
    return tuple(column.name for column in table.columns if schema.is_mutable(column))


def generated(column: sa.Column[Any]) -> bool:
    """Whether the database fills the column when an insert leaves it out."""
    return column.server_default is not None or column.identity is not None


# Each column type's record type, in the order they are tested (BigInteger before the Integer
# it subclasses).
_RECORD_TYPES: tuple[tuple[type[Any] | tuple[type[Any], ...], str], ...] = (
    (sa.Uuid, "uuid"),
    (sa.DateTime, "timestamptz"),
    (sa.BigInteger, "bigint"),
    (sa.Integer, "int"),
    ((JSONB, sa.ARRAY), "jsonb"),
    (sa.String, "text"),
    (sa.Boolean, "boolean"),
)


def record_type(column: sa.Column[Any]) -> str:
    """The type of the column in a record unpacked from JSON (`jsonb_to_record`). An array
    travels as a JSON array (see `record_value`)."""
    kind = column.type
    for types, name in _RECORD_TYPES:
        if isinstance(kind, types):
            return name
    raise TypeError(f"no record type for {column.table.name}.{column.name} ({kind!r})")


def record_value(column: sa.Column[Any], alias: str = "r") -> str:
    """The column's value read from the record `alias`: a JSON array becomes a text array."""
    if isinstance(column.type, sa.ARRAY):
        return f"ARRAY(SELECT jsonb_array_elements_text({alias}.{column.name}))"
    return f"{alias}.{column.name}"


def _uuid(value: str) -> UUID:
    return UUID(value)


def _timestamp(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _from_json(column: sa.Column[Any]) -> Callable[[Any], Any] | None:
    """How a value of the column that JSON carries as a string becomes the row's value."""
    if isinstance(column.type, sa.Uuid):
        return _uuid
    if isinstance(column.type, sa.DateTime):
        return _timestamp
    return None


def json_reader(table: sa.Table, columns: tuple[str, ...]) -> Callable[[list[Any]], dict[str, Any]]:
    """Reads one JSON list of `columns` (as `json_build_array` aggregates them) into a dict of
    row values: ids and timestamps, which JSON carries as strings, are converted."""
    conversions = [
        (name, convert)
        for name in columns
        if (convert := _from_json(table.columns[name])) is not None
    ]

    def read(values: list[Any]) -> dict[str, Any]:
        row = dict(zip(columns, values, strict=True))
        for name, convert in conversions:
            value = row[name]
            if value is not None:
                row[name] = convert(value)
        return row

    return read


def fetch_one(
    conn: psycopg.Connection[Any],
    cls: type[T],
    query: QueryNoTemplate,
    params: Params | None = None,
) -> T | None:
    """The first row of `query` as a `cls`, built by name: each column (or its alias) names a
    field."""
    return conn.cursor(row_factory=class_row(cls)).execute(query, params).fetchone()


def fetch_all(
    conn: psycopg.Connection[Any],
    cls: type[T],
    query: QueryNoTemplate,
    params: Params | None = None,
) -> list[T]:
    """The rows of `query` as `cls`es, built by name (see `fetch_one`)."""
    return conn.cursor(row_factory=class_row(cls)).execute(query, params).fetchall()


def fetch_where(
    conn: psycopg.Connection[Any],
    cls: type[T],
    select: str,
    where: Where,
    order: str,
    limit: int,
) -> list[T]:
    """The rows of `select` (`SELECT ... FROM ...`) that `where` keeps, ordered by `order`, at
    most `limit`, as `cls`es (see `fetch_one`)."""
    statement = sql.SQL(select) + where.sql() + sql.SQL(" ORDER BY " + order) + where.limit(limit)
    return fetch_all(conn, cls, statement, where.params())


def where_state(
    where: Where, column: LiteralString, state: str | None, open_state: StrEnum
) -> None:
    """`column = state` unless `state` is None; `open_state` written as a literal, as the
    partial indexes of open rows name it (see engine/sql/filters.py)."""
    if state == open_state:
        where.state(column, open_state)
    else:
        where.equals(column, state)


def fetch_dicts(
    conn: psycopg.Connection[Any], query: QueryNoTemplate, params: Params | None = None
) -> list[dict[str, Any]]:
    """The rows of `query` as dicts of their named columns."""
    return conn.cursor(row_factory=dict_row).execute(query, params).fetchall()
