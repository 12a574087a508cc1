"""The only execution cache: immutable parsed definitions keyed by definition id, and the latest
definition of each key as last looked up.

Evicting it changes latency, never behaviour: a miss re-parses the stored XML or looks the key up
again. A start by key that takes a remembered latest definition does not look it up: its write
statement checks that the definition is still the key's latest, active and of the key's only
tenant (engine/store/persist.py), and fails as a stale write otherwise; the executor then forgets
it and runs the command again, which looks the key up.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg

from engine.bpmn.parser import parse_bpmn
from engine.errors import ModelError, NotFound
from engine.model import ProcessModel
from engine.store import definitions as store


class DefinitionCache:
    def __init__(self) -> None:
        self._models: dict[str, ProcessModel] = {}
        self._latest: dict[str, store.DefinitionRow] = {}
        self._lock = threading.Lock()

    def get(self, conn: psycopg.Connection[Any], definition_id: str, key: str) -> ProcessModel:
        model = self._models.get(definition_id)
        if model is not None:
            return model
        found = store.source_xml(conn, definition_id)
        if found is None:
            raise NotFound(f"process definition {definition_id} does not exist")
        resource_name, xml = found
        # Deployed under the limits of its day: whatever they were, it is read in full.
        parsed = parse_bpmn(xml, resource_name, limits=None)
        model = next((m for m in parsed if m.key == key), None)
        if model is None:
            raise ModelError(f"resource no longer contains process '{key}'", file=resource_name)
        with self._lock:
            self._models[definition_id] = model
        return model

    def put(self, definition_id: str, model: ProcessModel) -> None:
        with self._lock:
            self._models[definition_id] = model

    def latest(self, key: str) -> store.DefinitionRow | None:
        """The latest definition of `key` as last looked up, if remembered."""
        return self._latest.get(key)

    def remember_latest(self, row: store.DefinitionRow) -> None:
        with self._lock:
            self._latest[row.key] = row

    def forget_latest(self, key: str) -> None:
        with self._lock:
            self._latest.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._models.clear()
            self._latest.clear()
