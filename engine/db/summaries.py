"""Summary rows: the counts the console shows, exact in every committed state, read without
scanning the big tables.

Statement-level triggers on process_instance, token, incident and history (engine/sql/
functions.sql) append each statement's net change to `summary_delta`, in the writing transaction
(one row per definition, its counts in arrays aligned with their keys; none for a statement
that changes no count):
nothing is locked, so concurrent commands never queue on a hot counter, and any write path (the
engine's one-statement persist, the history cleanup, a statement typed into psql) is counted. The
fold moves the deltas into the base rows (`instance_summary`, `node_summary`, `activity_bucket`)
in one statement, one folder at a time; a read sums base rows and unfolded deltas in one
statement, so it is exact whether the fold ran or not. `recount` computes every summary from the
big tables: the rebuild writes it, and the tests compare with it. The fold and the rebuild are
engine/store/summaries.py, the reads engine/queries/summaries.py; this module runs the folder.

What the rows count, per definition (the definition an instance has now; tokens, incidents and
visits count under their instance's):
- instance_summary: instances per state;
- node_summary: per node, live tokens (not Completed or Terminated; an ended instance has none),
  open incidents, visits (history rows), ended visits and the sum of their durations in seconds,
  and visits ended canceled (history rows in state Terminated, however they ended so: a
  cancellation, an interrupting boundary event, a terminate end event, a modification);
- activity_bucket: per five minutes, instances started (by started_at), instances that ended
  Completed (by ended_at), incidents created (by created_at). Deleted instances and incidents
  (the history cleanup) leave their buckets, so buckets go when their history goes.

A statement that changes an instance's definition must not write that instance's tokens,
incidents or visits too (see the trigger of process_instance); separate statements in one
transaction are counted right in any order. Rows of a summary whose counts all reach zero are
deleted by the fold.
"""

from __future__ import annotations

import logging
from typing import Protocol, TypeVar

from engine.commands.summaries import FoldSummaries
from engine.core.executor import Command, Idempotency, Result
from engine.db.outage import is_database_outage
from engine.loops.threads import Loops

T = TypeVar("T", bound=Result)

log = logging.getLogger("engine.summaries")  # the name operators' log settings know

# -- the folder: a background thread of the serve and jobs processes ------------------------------

# Seconds between folds. Reads are exact either way; folding keeps the deltas they add up few.
FOLD_INTERVAL_SECONDS = 1.0
_MAX_BACKOFF_SECONDS = 30.0


class FoldingEngine(Protocol):
    """What the folder needs of an engine (engine.api.Engine is one)."""

    def run(self, command: Command[T], idempotency_key: str | Idempotency | None = None) -> T: ...


class Folder:
    """Folds the deltas every `interval` seconds in a daemon thread, until stopped. Any number
    of processes may run one: a fold that finds another running leaves the deltas to it."""

    def __init__(self, engine: FoldingEngine, interval: float = FOLD_INTERVAL_SECONDS) -> None:
        self.engine = engine
        self.interval = interval
        self._loops = Loops("interlock-summaries", "summary folder")

    def start(self) -> None:
        self._loops.start(self._loop, 1)

    def request_stop(self) -> None:
        self._loops.request_stop()

    def stop(self, timeout: float = 5.0) -> bool:
        return self._loops.stop(timeout)

    @property
    def running(self) -> bool:
        return self._loops.running

    def _loop(self) -> None:
        failures = 0
        stopping = self._loops.stopping
        while not stopping.wait(self.interval if failures == 0 else self._backoff(failures)):
            try:
                self.engine.run(FoldSummaries())
                failures = 0
            except Exception as exc:
                failures += 1
                if is_database_outage(exc):
                    log.warning(
                        "summary fold: the database is away; again in %.1fs",
                        self._backoff(failures),
                    )
                else:
                    log.exception("summary fold failed; again in %.1fs", self._backoff(failures))

    def _backoff(self, failures: int) -> float:
        return float(min(_MAX_BACKOFF_SECONDS, self.interval * 2 ** min(failures, 10)))
