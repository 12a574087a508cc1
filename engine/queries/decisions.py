"""Reads of deployed decision definitions: by id, by key (latest, one version or with a tag),
every version, the DMN file as deployed, and that file parsed and compiled (cached per
definition)."""

from __future__ import annotations

from engine.core import decision_cache
from engine.queries import Connection, query
from engine.store import decisions as store
from engine.store import definitions
from engine.store.decisions import DecisionRow
from engine.store.definitions import DECISIONS

__all__ = ["DecisionRow", "by_id", "deployed", "find", "latest", "list_all", "source_xml"]

deployed = query(decision_cache.deployed)
find = query(store.find)
list_all = query(store.list_all)
source_xml = query(store.source_xml)


# Reads of one decision definition: None when there is none the request's principal may read.
@query
def by_id(conn: Connection, definition_id: str) -> DecisionRow | None:
    return definitions.readable(conn, definition_id=definition_id, table=DECISIONS)


@query
def latest(conn: Connection, key: str) -> DecisionRow | None:
    return definitions.readable(conn, key=key, table=DECISIONS)
