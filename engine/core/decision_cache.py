"""The compiled DMN files of deployed decision definitions, by definition id: each file is read
(engine/store/decisions.py), parsed and compiled once per process. Deployed definitions never
change, so evicting an entry changes latency, never behaviour."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import psycopg

from engine.dmn.evaluate import CompiledDefinitions, compile_definitions
from engine.dmn.parser import parse_dmn
from engine.store import decisions as store


@dataclass(frozen=True)
class Deployed:
    """A decision definition's DMN file, every expression compiled, and the definition ids of
    the decisions deployed with it, by key (the decisions it requires)."""

    file: CompiledDefinitions
    deployed_with: dict[str, str]


_DEPLOYED: dict[str, Deployed] = {}
_LOCK = threading.Lock()


def deployed(conn: psycopg.Connection[Any], definition_id: str) -> Deployed | None:
    """The decision definition's file as deployed, compiled (None: no such definition)."""
    found = _DEPLOYED.get(definition_id)
    if found is not None:
        return found
    source = store.deployed_source(conn, definition_id)
    if source is None:
        return None
    name, text, keys = source
    found = Deployed(compile_definitions(parse_dmn(text, name, None), name), keys)
    with _LOCK:
        _DEPLOYED[definition_id] = found
    return found
