"""What each type of batch does to one item: a registry from `BatchType` to the operation.

An operation runs one item inside the transaction of the chunk that holds it (under a savepoint:
raising fails the item alone, with its message as the item's error), as the operator who created
the batch. It checks the batch's payload once, when the batch is created, so that items never
fail over a parameter. The built-in operations are engine/batch/operations.py, imported here; a
module that adds a type registers it in engine/batch/registry.py, on import (`register`).

Who may create a batch of a type and act on one afterwards (suspend, resume, cancel it, retry its
failed items) is decided by authorizations: CREATE, UPDATE or DELETE on batches, and for the
types that need more (history deletion, migration) the permission their items need on every
definition (app/gates.py `BATCH_TYPE_GATES`). Otherwise a user could re-run the items of an
administrator's history deletion by retrying them.
"""

from __future__ import annotations

from engine.batch import operations  # noqa: F401  (registers the built-in types)
from engine.batch.registry import (
    BatchOperation,
    ItemRun,
    PayloadCheck,
    PayloadValidation,
    operation,
    register,
    registered,
)

__all__ = [
    "BatchOperation",
    "ItemRun",
    "PayloadCheck",
    "PayloadValidation",
    "operation",
    "register",
    "registered",
]
