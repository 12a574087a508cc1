"""The query forms Camunda's list endpoints share: variable filters (`name_op_value` in a query
parameter, `{name, operator, value}` objects in a body) and a POSTed query body read as its GET's
query parameters (POST /task, POST /process-instance)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import QueryParams

from app.camunda.errors import invalid_request
from app.camunda.http import Call
from app.params import ParameterError
from engine.queries.camunda.common import CamundaPage
from engine.queries.camunda.instances import VariableFilter

VARIABLE_OPERATORS = ("eq", "neq", "gteq", "gt", "lteq", "lt", "like")
VARIABLE_EXPRESSION = re.compile(r"^(.+?)_(" + "|".join(VARIABLE_OPERATORS) + r")_(.*)$", re.DOTALL)


def variable_filters(call: Call, name: str = "variables") -> list[VariableFilter]:
    """Camunda's `variables=name_op_value,...` query parameter."""
    raw = call.text(name)
    if raw is None:
        return []
    found = []
    for expression in raw.split(","):
        match = VARIABLE_EXPRESSION.match(expression)
        if match is None:
            problem = "must have the form KEY_OPERATOR_VALUE (amount_gt_5)"
            raise ParameterError(name, expression, problem)
        variable, op, text = match.groups()
        found.append(variable_filter(variable, op, text))
    return found


def variable_filter(name: str, op: str, text: str) -> VariableFilter:
    values: list[Any] = [text]
    number: float | None = None
    with contextlib.suppress(ValueError):
        number = float(text)
    if number is not None and not math.isfinite(number):
        number = None  # NaN, Infinity, 1e999: no variable holds them; the text may still match
    if number is not None:
        values.append(int(number) if number.is_integer() else number)
    if text.lower() in ("true", "false"):
        values.append(text.lower() == "true")
    if text.lower() == "null":
        values.append(None)
    return VariableFilter(name, op, text, number, tuple(values))


@dataclass(frozen=True)
class PostedFilters:
    """What a POSTed query body holds besides plain filters: the variable filters by parameter
    name, and `sorting` as (sort key, descending) pairs."""

    variables: dict[str, Sequence[VariableFilter]] = field(default_factory=dict)
    sorting: tuple[tuple[str, bool], ...] = ()


def _posted_variables(name: str, value: object) -> list[VariableFilter]:
    if not isinstance(value, list):
        raise invalid_request(f"'{name}' must be a list of {{name, operator, value}}")
    found = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise invalid_request(f"'{name}': each entry needs a 'name' (a string)")
        operator = item.get("operator")
        if operator not in VARIABLE_OPERATORS:
            raise invalid_request(
                f"'{name}': operator {operator!r} of '{item['name']}' is not one of "
                + ", ".join(VARIABLE_OPERATORS)
            )
        raw = item.get("value")
        if isinstance(raw, dict | list):
            raise invalid_request(f"'{name}': the value of '{item['name']}' must be a scalar")
        text = json.dumps(raw) if isinstance(raw, bool) or raw is None else str(raw)
        found.append(variable_filter(item["name"], operator, text))
    return found


def _posted_sorting(value: object, sortable: Mapping[str, str]) -> tuple[tuple[str, bool], ...]:
    if not isinstance(value, list):
        raise invalid_request("'sorting' must be a list of {sortBy, sortOrder}")
    sort = []
    for item in value:
        if not isinstance(item, dict):
            raise invalid_request("'sorting' must be a list of {sortBy, sortOrder}")
        by, order = item.get("sortBy"), item.get("sortOrder")
        if by not in sortable:
            raise invalid_request(f"'sorting': sortBy {by!r} is not one of " + ", ".join(sortable))
        if order not in ("asc", "desc"):
            raise invalid_request(f"'sorting': sortOrder {order!r} must be asc or desc")
        sort.append((str(by), order == "desc"))
    return tuple(sort)


def _as_parameter(name: str, value: object) -> str:
    """A body field as the text its query parameter would have."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        if not all(isinstance(v, str | int) and not isinstance(v, bool) for v in value):
            raise invalid_request(f"'{name}' must be a list of strings")
        return ",".join(str(v) for v in value)
    if isinstance(value, str | int | float):
        return str(value)
    raise invalid_request(f"'{name}' must be a string, a number, a boolean or a list")


def posted_query(call: Call, variable_fields: Sequence[str], sortable: Mapping[str, str]) -> Call:
    """A POSTed query (POST /task, POST /process-instance) read as its GET's: each plain field
    of the body as the query parameter of its name (paging stays in the query), the variable
    filters (the fields `variable_fields`) and `sorting` (keys of `sortable`) aside (see
    PostedFilters; `posted_page` and `query_variables` read them)."""
    body = call.body if isinstance(call.body, dict) else {}
    params = [(k, v) for k, v in call.query.multi_items() if k in ("firstResult", "maxResults")]
    posted = PostedFilters()
    for name, value in body.items():
        if value is None:
            continue
        if name in variable_fields:
            posted.variables[name] = _posted_variables(name, value)
        elif name == "sorting":
            posted = dataclasses.replace(posted, sorting=_posted_sorting(value, sortable))
        elif name in ("orQueries", "variableNamesIgnoreCase", "variableValuesIgnoreCase"):
            if value not in ([], False):
                raise invalid_request(f"'{name}' is not supported")
        else:
            params.append((name, _as_parameter(name, value)))
    return dataclasses.replace(
        call, query=QueryParams(params), extra={**call.extra, "posted": posted}
    )


def query_variables(call: Call, name: str) -> list[VariableFilter]:
    """The variable filters of parameter `name`: `name_op_value,...` in a query, a list of
    `{name, operator, value}` in a POSTed body (see `posted_query`)."""
    posted: PostedFilters | None = call.extra.get("posted")
    if posted is not None:
        return list(posted.variables.get(name, ()))
    return variable_filters(call, name)


def posted_page(call: Call, sortable: dict[str, str]) -> CamundaPage:
    """The call's page, sorted as a POSTed body's `sorting` says when it says so."""
    page = call.page(sortable)
    posted: PostedFilters | None = call.extra.get("posted")
    if posted is not None and posted.sorting:
        page = dataclasses.replace(page, sort=posted.sorting)
    return page
