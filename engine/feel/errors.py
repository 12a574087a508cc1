"""The FEEL evaluator's one error type."""

from __future__ import annotations


class FeelError(Exception):
    """A FEEL text that does not compile or an evaluation that fails, with its position."""

    def __init__(self, message: str, position: int | None = None) -> None:
        self.message = message
        self.position = position
        super().__init__(message if position is None else f"{message} (at position {position})")
