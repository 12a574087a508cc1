"""Summary rows (engine/db/summaries.py): fold the deltas into the base rows, or rebuild every
summary from the big tables (the statements are engine/store/summaries.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.core.executor import Result, Tx
from engine.core.permits import ADMINISTER, ENGINE_WORK, Permit
from engine.store import summaries


@dataclass(frozen=True)
class FoldResult(Result):
    # Deltas folded; None when another fold held the lock.
    folded: int | None


@dataclass(frozen=True)
class FoldSummaries:
    """Move every committed delta into the base rows (one folder at a time)."""

    name: ClassVar[str] = "FoldSummaries"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = FoldResult

    def execute(self, tx: Tx) -> FoldResult:
        return FoldResult(summaries.fold(tx.conn))


@dataclass(frozen=True)
class RebuildResult(Result):
    instance_rows: int
    node_rows: int
    bucket_rows: int


@dataclass(frozen=True)
class RebuildSummaries:
    """Replace every summary row with a recount of the big tables, in one REPEATABLE READ
    transaction (a full scan of each: an administrator's repair, not a routine)."""

    name: ClassVar[str] = "RebuildSummaries"
    permits: ClassVar[tuple[Permit, ...]] = (ADMINISTER,)
    result_type: ClassVar[type[Result]] = RebuildResult

    def execute(self, tx: Tx) -> RebuildResult:
        # The transaction's first statement: the snapshot is not taken yet.
        return RebuildResult(*summaries.rebuild(tx.conn))
