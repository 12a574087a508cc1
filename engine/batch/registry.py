"""The registry of batch types: `BatchOperation`, `register`, and the lookups by type. The built-in
operations (engine/batch/operations.py) register on import, which engine/batch/__init__.py does
before anyone can look a type up: every import of this module goes through the package."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import BadRequest
from engine.states import BatchType

if TYPE_CHECKING:
    from engine.core.executor import Tx

# Run one item (its id, the batch's payload) in the caller's transaction; raise to fail it.
ItemRun = Callable[["Tx", str, Mapping[str, Any]], None]
# The payload as the batch keeps it, or BadRequest naming the field.
PayloadCheck = Callable[[Mapping[str, Any]], dict[str, Any]]
# The kept payload checked against the database, in the creating transaction (BadRequest).
PayloadValidation = Callable[["Tx", Mapping[str, Any]], None]


def no_payload(payload: Mapping[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class BatchOperation:
    type: BatchType
    # What is done to each item, and what an item is, as the console says it.
    label: str
    item: str
    run: ItemRun
    check: PayloadCheck = no_payload
    # What the payload must also satisfy in the database (a migration plan's definitions).
    validate: PayloadValidation | None = None


_OPERATIONS: dict[BatchType, BatchOperation] = {}


def register(operation: BatchOperation) -> BatchOperation:
    _OPERATIONS[operation.type] = operation
    return operation


def registered() -> dict[BatchType, BatchOperation]:
    """Every type a batch can be created with now (the built-in ones registered by the package on
    import)."""
    return dict(_OPERATIONS)


def operation(batch_type: str) -> BatchOperation:
    """The operation of `batch_type`; BadRequest naming `type` when there is none."""
    known = registered()
    try:
        return known[BatchType(batch_type)]
    except (ValueError, KeyError):
        names = ", ".join(sorted(t.value for t in known))
        raise BadRequest(
            f"unknown batch type '{batch_type}'; known: {names}", field="type"
        ) from None
