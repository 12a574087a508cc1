"""Reads of one instance as the console, the REST surfaces and the Python API show it: its row,
state, called instances, tokens, visits and variables; the counts by state and a page of a
filtered instance list in a sort, plus the filter, sorts and page size of instance lists."""

from __future__ import annotations

from engine.queries import query
from engine.store import instance_reads as store
from engine.store import instances as list_store
from engine.store.instance_reads import InstanceInfo, TokenRow, VariableRow, VisitRow
from engine.store.instances import MAX_LIMIT, InstanceFilter, InstanceSort, Sort

__all__ = [
    "MAX_LIMIT",
    "InstanceFilter",
    "InstanceInfo",
    "InstanceSort",
    "Sort",
    "TokenRow",
    "VariableRow",
    "VisitRow",
    "called_instances",
    "counts",
    "exists",
    "instance",
    "page",
    "state",
    "tokens",
    "variables",
    "variables_in_scopes",
    "visits",
]

instance = query(store.instance)
state = query(store.instance_state)
exists = query(store.exists)
called_instances = query(store.called_instances)
counts = query(store.instance_counts)
page = query(list_store.list_page)
tokens = query(store.tokens)
visits = query(store.visits)
variables = query(store.variables)
variables_in_scopes = query(store.variables_in_scopes)
