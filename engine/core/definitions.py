"""The only execution cache: immutable parsed definitions keyed by definition id.

Evicting it changes latency, never behaviour: a miss re-parses the stored XML.
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

    def clear(self) -> None:
        with self._lock:
            self._models.clear()
