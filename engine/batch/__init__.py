"""What each type of batch does to one item: a registry from `BatchType` to the operation.

An operation runs one item inside the transaction of the chunk that holds it (under a savepoint:
raising fails the item alone, with its message as the item's error), as the operator who created
the batch. It checks the batch's payload once, when the batch is created, so that items never
fail over a parameter. The built-in operations are engine/batch/operations.py, imported here; a
module that adds a type registers it in engine/batch/registry.py, on import (`register`).

Each type names the role its batches need (`BatchOperation.role`, read by `role_of`): the role
that creates one, and the role that acts on one afterwards (suspends, resumes, cancels it,
retries its failed items), on every surface. Otherwise an operator could re-run the items of an
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
    role_of,
)

__all__ = [
    "BatchOperation",
    "ItemRun",
    "PayloadCheck",
    "PayloadValidation",
    "operation",
    "register",
    "registered",
    "role_of",
]
