"""Reads of one instance as the console and the REST surfaces show it: its row, tokens, visits
and variables, plus the filter and page size of instance lists."""

from __future__ import annotations

from engine.queries import query
from engine.store import instance_reads as store
from engine.store.instance_reads import InstanceInfo, TokenRow, VariableRow, VisitRow
from engine.store.instances import MAX_LIMIT, InstanceFilter

__all__ = [
    "MAX_LIMIT",
    "InstanceFilter",
    "InstanceInfo",
    "TokenRow",
    "VariableRow",
    "VisitRow",
    "instance",
    "tokens",
    "variables",
    "variables_in_scopes",
    "visits",
]

instance = query(store.instance)
tokens = query(store.tokens)
visits = query(store.visits)
variables = query(store.variables)
variables_in_scopes = query(store.variables_in_scopes)
