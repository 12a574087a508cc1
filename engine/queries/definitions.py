"""Reads of deployed process definitions: by id, by key (latest or one version), every version,
the XML as deployed, and the XML a diagram is drawn from."""

from __future__ import annotations

from engine.queries import query
from engine.store import definitions as store
from engine.store.definitions import DefinitionRow

__all__ = [
    "DefinitionRow",
    "by_id",
    "by_version",
    "diagram_xml",
    "latest",
    "list_all",
    "source_xml",
]

by_id = query(store.by_id)
by_version = query(store.by_version)
latest = query(store.latest)
list_all = query(store.list_all)
source_xml = query(store.source_xml)
diagram_xml = query(store.diagram_xml)
