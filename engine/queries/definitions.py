"""Reads of deployed process definitions: by id, by key (latest or one version), every version,
the XML as deployed, the XML a diagram is drawn from, and a definition's process parsed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.queries import Connection, query
from engine.store import definitions as store
from engine.store.definitions import DefinitionRow

if TYPE_CHECKING:
    from engine.core.definitions import DefinitionCache
    from engine.model import ProcessModel

__all__ = [
    "DefinitionRow",
    "by_id",
    "by_version",
    "diagram_xml",
    "latest",
    "latest_for_tenant",
    "list_all",
    "model",
    "source_xml",
]

by_version = query(store.by_version)
latest_for_tenant = query(store.latest_for_tenant)
list_all = query(store.list_all)
source_xml = query(store.source_xml)
diagram_xml = query(store.diagram_xml)


# Reads of one definition: None when there is none the request's principal may read.
@query
def by_id(conn: Connection, definition_id: str) -> DefinitionRow | None:
    return store.readable(conn, definition_id=definition_id)


@query
def latest(conn: Connection, key: str) -> DefinitionRow | None:
    return store.readable(conn, key=key)


@query
def model(conn: Connection, cache: DefinitionCache, definition_id: str, key: str) -> ProcessModel:
    """The process `key` of a deployed definition, parsed once and then taken from `cache`."""
    return cache.get(conn, definition_id, key)
