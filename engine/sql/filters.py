"""The one way to build a read's WHERE clause: `Where`, conditions whose values are bound
parameters, composed with psycopg's `sql` module.

Every filtered read of the engine composes its conditions here, so that what every read must
check (who may see which rows: `Where.authorized`) is added in one place. A condition is SQL
text with a `{}` per value; each value becomes a named placeholder (`%(p0)s`, `%(p1)s`, ...)
in `params()`, never text in the statement. The conditions of a filter left as None are not added.

State values are bound like any other value (`InstanceState.SUSPENDED` binds as "Suspended").
One exception, `state_literal`: a condition that a partial index's predicate must match (open
tasks, open incidents) writes the state as a literal, because a bound value cannot prove the
predicate in a generic plan (which the command connections always use, see engine/core/executor.py).
`engine/schema.py` writes those index predicates with the same function.

A read with many optional filters declares them once, each beside its type, as a `Filter` in
`Annotated` (the fields of a TypedDict of keyword arguments, or of a frozen dataclass):
`task_id: Annotated[UUID | None, Filter.equals("t.id")]`. `filters_of` reads that table off the
class, and `Where.apply` adds the condition of every filter given a value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, LiteralString, get_type_hints
from uuid import UUID

import psycopg
from psycopg import sql

from engine.core import actors
from engine.identity.permissions import ResourceType

__all__ = [
    "LIKE_ESCAPE",
    "Cover",
    "Covers",
    "Filter",
    "Where",
    "count",
    "filters_of",
    "like_matches",
    "like_pattern",
    "order_by",
    "state_literal",
]

# The escape clause of every LIKE a `Where` writes (see `like_pattern`).
LIKE_ESCAPE: LiteralString = "ESCAPE '\\'"


def state_literal(value: StrEnum) -> LiteralString:
    """`value` as an SQL string literal (`'Open'`): for the predicates of partial indexes and
    the conditions that must match them (see the module docstring)."""
    return "'" + value.value.replace("'", "''") + "'"


def like_pattern(text: str) -> str:
    r"""Camunda's `*Like` value as a LIKE pattern with backslash as its escape character (see
    LIKE_ESCAPE). `%` and `_` are wildcards, as in Camunda; `\%`, `\_` and `\\` stand for the
    character itself; any other backslash (a trailing one, which PostgreSQL refuses) is a literal
    backslash."""
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        following = next(chars, None)
        if following in ("%", "_", "\\"):
            out.append("\\" + following)
        else:
            out.append("\\\\")
            if following is not None:
                out.append(following)
    return "".join(out)


def like_matches(value: str, text: str) -> bool:
    """Whether `value` matches Camunda's `*Like` value `text`, as `like_pattern` matches in SQL:
    for filters applied to rows already in memory."""
    out: list[str] = []
    chars = iter(like_pattern(text))
    for char in chars:
        if char == "\\":
            out.append(re.escape(next(chars)))
        else:
            out.append({"%": ".*", "_": "."}.get(char) or re.escape(char))
    return re.fullmatch("".join(out), value, re.DOTALL) is not None


@dataclass(frozen=True)
class Cover:
    """A way a principal may see a row: `permission` on `resource`, whose id is the row's
    `column` (a text column, or a uuid one with `uuid` set: ids that are not UUIDs then cover
    nothing)."""

    permission: int
    resource: ResourceType
    column: LiteralString
    uuid: bool = False
    # SQL a row must hold for this cover to reach it at all (None: every row): a grant on every
    # resource of the type then covers the rows where it holds, not every row.
    only_where: LiteralString | None = None

    def values(self, ids: frozenset[str]) -> list[Any]:
        if not self.uuid:
            return sorted(ids)
        found: list[Any] = []
        for text in sorted(ids):
            try:
                found.append(UUID(text))
            except ValueError:
                continue
        return found


@dataclass(frozen=True)
class Covers:
    """What lets a principal see a row of one kind (engine/sql/covers.py declares them): any of
    `covers`, and the row's tenant, `tenant` (SQL naming its tenant id: a column or an
    expression over indexed columns), of no tenant or one of the principal's. Every read of
    such rows narrows by both at once (`Where.authorized`)."""

    covers: tuple[Cover, ...]
    # None: rows that belong to no tenant (users, groups, tenants, authorizations).
    tenant: LiteralString | None


class Where:
    """A WHERE clause: conditions joined by AND; every value is a bound parameter."""

    def __init__(self) -> None:
        self._conditions: list[sql.Composable] = []
        self._params: dict[str, Any] = {}

    # -- values -----------------------------------------------------------------------------

    def bind(self, value: Any) -> sql.Placeholder:
        """A placeholder bound to `value` (for a condition or any other part of the statement:
        a limit, a value in the select list)."""
        name = f"p{len(self._params)}"
        self._params[name] = value
        return sql.Placeholder(name)

    # -- conditions -------------------------------------------------------------------------

    def add(self, condition: LiteralString, *values: Any) -> None:
        """`condition` with a `{}` for each value, in order."""
        self._conditions.append(sql.SQL(condition).format(*(self.bind(v) for v in values)))

    def compose(self, condition: sql.Composable) -> None:
        """A condition composed by the caller (its values bound through `bind`)."""
        self._conditions.append(condition)

    def fixed(self, condition: LiteralString) -> None:
        """A condition without values."""
        self._conditions.append(sql.SQL(condition))

    def when(self, value: Any, condition: LiteralString) -> None:
        """`condition` unless `value` is None; every `{}` in it is `value`."""
        if value is not None:
            self.add(condition, *([value] * condition.count("{}")))

    def equals(self, column: LiteralString, value: Any) -> None:
        """`column = value`, unless `value` is None."""
        self.when(value, column + " = {}")

    def any_of(self, column: LiteralString, values: Sequence[Any] | None) -> None:
        """`column = ANY(values)`, unless `values` is None (an empty list matches nothing)."""
        if values is not None:
            self.add(column + " = ANY({})", list(values))

    def like(self, column: LiteralString, text: str | None) -> None:
        """`column LIKE` Camunda's `*Like` value `text` (see `like_pattern`), unless None."""
        if text is not None:
            self.add(column + " LIKE {} " + LIKE_ESCAPE, like_pattern(text))

    def starts_with(self, column: LiteralString, prefix: str | None) -> None:
        """`column` starts with `prefix` taken literally (no wildcards), unless None: a LIKE
        a btree index with `text_pattern_ops` on `column` serves."""
        if prefix is not None:
            literal = "".join("\\" + c if c in "%_\\" else c for c in prefix)
            self.add(column + " LIKE {} " + LIKE_ESCAPE, literal + "%")

    def at_least(self, column: LiteralString, value: Any) -> None:
        """`column >= value`, unless `value` is None."""
        self.when(value, column + " >= {}")

    def at_most(self, column: LiteralString, value: Any) -> None:
        """`column <= value`, unless `value` is None."""
        self.when(value, column + " <= {}")

    def above(self, column: LiteralString, value: Any) -> None:
        """`column > value`, unless `value` is None."""
        self.when(value, column + " > {}")

    def below(self, column: LiteralString, value: Any) -> None:
        """`column < value`, unless `value` is None."""
        self.when(value, column + " < {}")

    def is_null(self, column: LiteralString, null: bool | None) -> None:
        """`column IS NULL` (`null` True) or `IS NOT NULL` (False); None: no condition."""
        if null is not None:
            self.fixed(column + (" IS NULL" if null else " IS NOT NULL"))

    def exists(self, subquery: LiteralString, *values: Any, negated: bool = False) -> None:
        """`EXISTS (subquery)` (`NOT EXISTS` when `negated`), the subquery with a `{}` per
        value."""
        test: LiteralString = "NOT EXISTS (" if negated else "EXISTS ("
        self.add(test + subquery + ")", *values)

    def state(self, column: LiteralString, value: StrEnum) -> None:
        """`column = value` with the state written as a literal: only where a partial index's
        predicate must match (see the module docstring)."""
        self.fixed(column + " = " + state_literal(value))

    def tenant(
        self, column: LiteralString, tenant_id: str | None, without: bool, *, or_none: bool = False
    ) -> None:
        """Only the rows of tenant `tenant_id` (and with `or_none` those of no tenant too), or
        with `without` those of no tenant; neither: every row."""
        if tenant_id is not None:
            self.add(
                "(" + column + " = {} OR " + column + " IS NULL)" if or_none else column + " = {}",
                tenant_id,
            )
        elif without:
            self.fixed(column + " IS NULL")

    def keyset(
        self, columns: LiteralString, key: Sequence[Any] | None, *, descending: bool
    ) -> None:
        """Only the rows after `key` (values of `columns`, a row constructor such as
        `(created_at, id)`) in that order, ascending or `descending`; None: from the first."""
        if key is not None:
            placeholders = ", ".join("{}" for _ in key)
            comparison: LiteralString = " < (" if descending else " > ("
            self.add(columns + comparison + placeholders + ")", *key)

    def authorized(self, readable: Covers) -> None:
        """Only the rows the request's principal may see: those of no tenant or of one of the
        principal's tenants (`tenants`, over `readable.tenant`) that any of `readable`'s covers
        (a scope of the principal's and the column naming the resource it is about, see
        engine/identity/grants.py) covers. Nothing is added for a request with no principal
        (the engine's own work, the command line); no grant condition when a cover reaches
        every row, no tenant condition when the principal sees every tenant."""
        if readable.tenant is not None:
            self.tenants(readable.tenant)
        parts: list[sql.Composable] = []
        for cover in readable.covers:
            scope = actors.scope(cover.permission, cover.resource)
            if scope.unrestricted and cover.only_where is not None:
                parts.append(sql.SQL(cover.only_where))
                continue
            if scope.unrestricted:
                return
            if scope.everything:
                parts.append(
                    sql.SQL("NOT (" + cover.column + " = ANY({}))").format(
                        self.bind(cover.values(scope.except_ids))
                    )
                )
            elif scope.ids:
                parts.append(
                    sql.SQL(cover.column + " = ANY({})").format(self.bind(cover.values(scope.ids)))
                )
        if not parts:
            self.fixed("FALSE")
        else:
            self.compose(sql.SQL("(") + sql.SQL(" OR ").join(parts) + sql.SQL(")"))

    def tenants(self, column: LiteralString) -> None:
        """Only the rows the request's principal sees by tenant: those of no tenant and those of
        the principal's tenants (engine/core/actors.py). Nothing is added when no actor, or one
        whose tenants are not narrowed, is bound. A read of rows a principal may or may not see
        narrows by `authorized`, which adds this; alone it serves the reads that only resolve by
        tenant (a start by key)."""
        seen = actors.tenant_ids()
        if seen is not None:
            self.add("(" + column + " IS NULL OR " + column + " = ANY({}))", sorted(seen))

    def apply(self, filters: Mapping[str, Filter], values: Mapping[str, Any]) -> None:
        """The condition of each of `filters` (see `filters_of`) whose name `values` gives a
        value, in the table's order."""
        for name, found in filters.items():
            found.add(self, values.get(name))

    # -- outputs ----------------------------------------------------------------------------

    def conditions(self) -> sql.Composable:
        """The conditions joined by AND (TRUE when there are none)."""
        if not self._conditions:
            return sql.SQL("TRUE")
        return sql.SQL(" AND ").join(self._conditions)

    def params(self) -> dict[str, Any]:
        """The bound values by their placeholders' names."""
        return self._params

    def offset_limit(self, first: int, limit: int | None) -> sql.Composed:
        """` OFFSET first` (at least 0) and ` LIMIT limit` (at least 0; None: no limit)."""
        text = sql.SQL(" OFFSET {}").format(self.bind(max(first, 0)))
        if limit is not None:
            text += sql.SQL(" LIMIT {}").format(self.bind(max(limit, 0)))
        return text

    def limit(self, limit: int) -> sql.Composed:
        """` LIMIT limit`."""
        return sql.SQL(" LIMIT {}").format(self.bind(limit))

    # Last: below it, `sql` in this class names this method.
    def sql(self) -> psycopg.sql.Composable:
        """` WHERE` and the conditions, or nothing when there are none."""
        if not self._conditions:
            return sql.SQL("")
        return sql.SQL(" WHERE ") + sql.SQL(" AND ").join(self._conditions)


def _on(
    condition: Callable[[Where, LiteralString, Any], None],
) -> Callable[[LiteralString], Filter]:
    """The filter of a column that adds `condition` (a method of `Where` such as `Where.equals`)
    of the column and the value."""

    def of(column: LiteralString) -> Filter:
        return Filter(lambda where, value: condition(where, column, value))

    return of


@dataclass(frozen=True)
class Filter:
    """How one named filter of a read narrows it: `add(where, value)` adds its condition for
    `value`, nothing for None (see the module docstring). A column's comparisons are `Where`'s
    own: `Filter.equals("t.id")` adds `where.equals("t.id", value)`."""

    add: Callable[[Where, Any], None]

    equals = staticmethod(_on(Where.equals))
    any_of = staticmethod(_on(Where.any_of))  # an empty list matches nothing
    like = staticmethod(_on(Where.like))
    at_least = staticmethod(_on(Where.at_least))
    at_most = staticmethod(_on(Where.at_most))
    above = staticmethod(_on(Where.above))
    below = staticmethod(_on(Where.below))

    @staticmethod
    def any_given(column: LiteralString) -> Filter:
        """`column = ANY(values)`; an empty list filters nothing, as None."""
        return Filter(lambda where, values: where.any_of(column, values or None))

    @staticmethod
    def overlaps(column: LiteralString) -> Filter:
        """`column && values` (the array `column` holds one of them); an empty list filters
        nothing, as None."""
        return Filter(
            lambda where, values: where.when(list(values) if values else None, column + " && {}")
        )

    @staticmethod
    def present(column: LiteralString) -> Filter:
        """True: `column IS NOT NULL`; False: `column IS NULL`."""
        return Filter(lambda where, flag: where.is_null(column, None if flag is None else not flag))

    @staticmethod
    def condition(condition: LiteralString) -> Filter:
        """`condition`, every `{}` in it the value."""
        return Filter(lambda where, value: where.when(value, condition))

    @staticmethod
    def holds(condition: LiteralString, *values: Any) -> Filter:
        """`(condition) = flag`: True keeps the rows where `condition` (a `{}` per value of
        `values`) holds, False the others."""
        return Filter(
            lambda where, flag: (
                None if flag is None else where.add("(" + condition + ") = {}", *values, flag)
            )
        )

    @staticmethod
    def if_true(condition: LiteralString, *values: Any) -> Filter:
        """`condition` (a `{}` per value of `values`) when the flag is true; False, as None,
        filters nothing."""
        return Filter(lambda where, flag: where.add(condition, *values) if flag else None)


def filters_of(cls: type[Any]) -> dict[str, Filter]:
    """The `Filter` each field of `cls` declares in its `Annotated` type, by the field's name, in
    the fields' order (fields without one are left out)."""
    return {
        name: found
        for name, hint in get_type_hints(cls, include_extras=True).items()
        for found in getattr(hint, "__metadata__", ())
        if isinstance(found, Filter)
    }


def order_by(
    sort: Sequence[tuple[str, bool]], columns: Mapping[str, LiteralString], default: LiteralString
) -> sql.Composed:
    """` ORDER BY` the (name, descending) pairs of `sort`, each name's expression in `columns`,
    then `default` (the unique order that breaks ties)."""
    parts = [
        sql.SQL("{} DESC" if desc else "{} ASC").format(sql.SQL(columns[key])) for key, desc in sort
    ]
    return sql.SQL(" ORDER BY ") + sql.SQL(", ").join([*parts, sql.SQL(default)])


def count(conn: psycopg.Connection[Any], source: sql.Composable, where: Where) -> int:
    """How many rows of `source` (a FROM clause) `where` matches."""
    row = conn.execute(
        sql.SQL("SELECT count(*) ") + source + where.sql(), where.params()
    ).fetchone()
    return int(row[0]) if row else 0
