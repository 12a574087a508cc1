"""The authorization matrix's rows for /engine-rest's task filters (tests/api/matrix_table.py
adds them to its table), from Camunda 7's rules: CREATE on filters to create one; UPDATE or
DELETE on the filter to change or delete it. (Reading and running one asks READ on it: a read,
tests/compat/test_filters_rest.py.)

Each call has a fresh target: a filter saved for it alone, owned by nobody (so no owner's grant
gives anyone a permission the row asks)."""

from __future__ import annotations

from typing import Any

from engine.api import Engine
from engine.commands.filters import CreateFilter
from tests.api.matrix_routes import Make, Resource, Row, Surface, Target, scalar, unique

FILTER = Resource(5, "Filter")


def _filter_of(name: str) -> Any:
    """The filter named `name`: its name, query and properties, or nothing."""
    return lambda engine: scalar(
        engine,
        "SELECT (SELECT json_agg(json_build_array(name, task_query, properties))"
        " FROM saved_view WHERE name = %s OR name = %s)",
        name,
        f"{name}-changed",
    )


def creating() -> Make:
    def make(engine: Engine) -> Target:
        name = unique("matrix-filter")
        body = {"resourceType": "Task", "name": name, "query": {"unassigned": True}}
        return Target("/filter/create", {"json": body}, "*", _filter_of(name))

    return make


def on_filter(method: str) -> Make:
    """A fresh filter, changed (PUT) or deleted; the grant names its id."""

    def make(engine: Engine) -> Target:
        name = unique("matrix-filter")
        made = engine.run(CreateFilter(None, name, {"assignee": "nobody"}))
        request: dict[str, Any] = {}
        if method == "PUT":
            request = {"json": {"name": f"{name}-changed", "query": {}, "properties": {"a": 1}}}
        return Target(f"/filter/{made.view_id}", request, made.view_id, _filter_of(name))

    return make


FILTER_ROWS: list[Row] = [
    Row(FILTER, "CREATE", Surface.REST, "POST", "/filter/create", creating(), 200, on_any=True),
    Row(FILTER, "UPDATE", Surface.REST, "PUT", "/filter/{id}", on_filter("PUT"), 204),
    Row(FILTER, "DELETE", Surface.REST, "DELETE", "/filter/{id}", on_filter("DELETE"), 204),
]
