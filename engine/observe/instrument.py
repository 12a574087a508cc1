"""What every command leaves behind besides its effects: its count by outcome and its duration
(engine/observe/metrics.py), and one log line at debug level with the command's name, its instance
and its duration. While it runs, the command's name and instance are bound to the logging context,
so whatever it logs carries them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from engine.errors import (
    BadRequest,
    Conflict,
    ExpressionError,
    IdempotencyKeyReused,
    InvariantViolation,
    ModelError,
    NoMatchingFlow,
    NotFound,
)
from engine.observe import metrics
from engine.observe.logs import enter_command, leave_command

log = logging.getLogger("interlock.commands")
T = TypeVar("T")

_OUTCOMES: tuple[tuple[tuple[type[Exception], ...], str], ...] = (
    ((NotFound,), "not_found"),
    ((BadRequest, ModelError, ExpressionError, NoMatchingFlow), "bad_request"),
    ((Conflict, IdempotencyKeyReused, InvariantViolation), "conflict"),
)


def outcome_of(exc: BaseException) -> str:
    """The outcome label of a command that raised `exc`. An exception class may name its own
    with a `command_outcome` attribute (a fetch that locked nothing: "empty")."""
    own = getattr(exc, "command_outcome", None)
    if isinstance(own, str):
        return own
    for kinds, outcome in _OUTCOMES:
        if isinstance(exc, kinds):
            return outcome
    return "error"


def observed(command: Any, run: Callable[[], T]) -> T:
    """`run()`, the whole run of `command` (its retries included), counted, timed and logged."""
    name: str = command.name
    instance_id = getattr(command, "instance_id", None)
    started = time.perf_counter()
    outcome = "error"
    result: T | None = None
    token = enter_command(name, instance_id)
    try:
        result = run()
        outcome = "ok"
        return result
    except BaseException as exc:
        outcome = outcome_of(exc)
        raise
    finally:
        seconds = time.perf_counter() - started
        _counter(name, outcome).inc()
        _histogram(name).observe(seconds)
        if log.isEnabledFor(logging.DEBUG):
            instance = getattr(result, "instance_id", None) or instance_id
            log.debug(
                "%s %s in %.1f ms",
                name,
                outcome,
                seconds * 1000,
                extra={
                    "outcome": outcome,
                    "duration_ms": round(seconds * 1000, 3),
                    **({"instance_id": str(instance)} if instance else {}),
                },
            )
        leave_command(token)


# The labelled series by label values: looking one up in its metric on every command would
# cost more than counting.
_COUNTERS: dict[tuple[str, str], Any] = {}
_HISTOGRAMS: dict[str, Any] = {}


def _counter(name: str, outcome: str) -> Any:
    found = _COUNTERS.get((name, outcome))
    if found is None:
        found = _COUNTERS[(name, outcome)] = metrics.COMMANDS.labels(name, outcome)
    return found


def _histogram(name: str) -> Any:
    found = _HISTOGRAMS.get(name)
    if found is None:
        found = _HISTOGRAMS[name] = metrics.COMMAND_SECONDS.labels(name)
    return found
