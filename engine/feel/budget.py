"""The step budget of one FEEL evaluation, so no text of bounded length runs for long.

The parser bounds a text's length and nesting, so evaluating each node once is cheap; work beyond
that comes from loops over values. So the steps counted are those: a filter costs its condition's
size (in nodes) per item, and comparing, converting, printing or walking a list or context costs
one step per element. Filters nested in filters, or lists that list the same list many times
over, multiply work far beyond a text's length; an evaluation that needs more than MAX_STEPS
fails with a FeelError. The budget belongs to the evaluation running in the current context
(thread or task).
"""

from __future__ import annotations

from contextvars import ContextVar, Token

from engine.feel.errors import FeelError

MAX_STEPS = 300_000


class Budget:
    __slots__ = ("left",)

    def __init__(self, steps: int) -> None:
        self.left = steps


_CURRENT: ContextVar[Budget | None] = ContextVar("feel_budget", default=None)


def start() -> Token[Budget | None]:
    """Give the evaluation starting in this context a full budget; `stop` with the token."""
    return _CURRENT.set(Budget(MAX_STEPS))


def stop(token: Token[Budget | None]) -> None:
    _CURRENT.reset(token)


def spend(steps: int = 1) -> None:
    """Spend `steps` of the running evaluation's budget (outside an evaluation: nothing)."""
    budget = _CURRENT.get()
    if budget is not None:
        budget.left -= steps
        if budget.left < 0:
            raise FeelError(f"evaluation takes more than {MAX_STEPS} steps")
