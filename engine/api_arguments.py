"""The Python API's argument helpers: what `Engine`'s methods make of their callers' values."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

from engine.bpmn.writer import write_bpmn
from engine.commands.deployments import Resource
from engine.errors import NotFound
from engine.model import ProcessModel

R = TypeVar("R")

Source = str | bytes | Path | ProcessModel | Resource


def resource(source: Source, index: int) -> Resource:
    if isinstance(source, Resource):
        return source
    if isinstance(source, ProcessModel):
        return Resource(f"{source.key}.bpmn", write_bpmn([source]).encode("utf-8"))
    if isinstance(source, Path):
        return Resource(source.name, source.read_bytes())
    content = source if isinstance(source, bytes) else source.encode("utf-8")
    # Text names no file: a document in a DMN namespace is a DMN file, anything else BPMN.
    suffix = ".dmn" if b"omg.org/spec/DMN/" in content[:4096] else ".bpmn"
    return Resource(f"resource-{index + 1}{suffix}", content)


def as_uuid(value: UUID | str) -> UUID:
    if isinstance(value, UUID):
        return value
    try:
        return UUID(value)
    except ValueError as exc:
        raise NotFound(f"'{value}' is not a valid id") from exc


def optional_uuid(value: UUID | str | None) -> UUID | None:
    return as_uuid(value) if value else None


def own_dict(values: Mapping[str, Any] | None) -> dict[str, Any]:
    """A caller's optional mapping as a dict of its own."""
    return dict(values or {})


def found(value: R | None, missing: str) -> R:
    """What a read found; NotFound saying `missing` when it found nothing."""
    if value is None:
        raise NotFound(missing)
    return value
