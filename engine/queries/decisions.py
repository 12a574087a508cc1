"""Reads of deployed decision definitions: by id, by key (latest, one version or with a tag),
every version, the DMN file as deployed, and that file parsed and compiled (cached per
definition)."""

from __future__ import annotations

from engine.core import decision_cache
from engine.queries import query
from engine.store import decisions as store
from engine.store.decisions import DecisionRow

__all__ = ["DecisionRow", "by_id", "deployed", "find", "latest", "list_all", "source_xml"]

by_id = query(store.by_id)
deployed = query(decision_cache.deployed)
find = query(store.find)
latest = query(store.latest)
list_all = query(store.list_all)
source_xml = query(store.source_xml)
