"""What expressions and scripts that act ask for: changes recorded in order, applied by the command.

`${execution.setVariable('approved', true)}` in a listener or a mapping, like
`execution.setVariable(...)` in a JavaScript script, does not write anything itself: the call is
recorded as a `Change`, and the command that evaluated it applies the changes in order, inside
its own transaction (engine/semantics/changes.py), with the history rows of any variable or task
change. Where nothing may act (a condition, a name, a timer...), an expression gets no
`ChangeLog` and an acting call fails.
"""

from __future__ import annotations

from typing import Any, Literal

# One recorded call: ("set", name, value, local), ("remove", name, None, local), and the task's
# ("assignee" | "name" | "description" | "priority" | "due" | "follow_up", None, value, False).
ChangeKind = Literal[
    "set", "remove", "assignee", "priority", "name", "description", "due", "follow_up"
]
Change = tuple[ChangeKind, str | None, Any, bool]
CHANGE_KINDS: frozenset[str] = frozenset(ChangeKind.__args__)  # type: ignore[attr-defined]

_REMOVED = object()


class ChangeLog:
    """The changes one evaluation asked for, in order; what it set or removed reads back."""

    def __init__(self) -> None:
        self._changes: list[Change] = []
        self._written: dict[str, Any] = {}

    def record(self, kind: ChangeKind, name: str | None, value: Any, local: bool = False) -> None:
        self._changes.append((kind, name, value, local))
        if name is not None:
            self._written[name] = _REMOVED if kind == "remove" else value

    def read(self, name: str) -> tuple[bool, Any]:
        """(written, value): a variable this evaluation set (or removed: None)."""
        if name not in self._written:
            return False, None
        value = self._written[name]
        return True, None if value is _REMOVED else value

    def has(self, name: str) -> bool | None:
        """Whether this evaluation set (True) or removed (False) `name`; None: neither."""
        if name not in self._written:
            return None
        return self._written[name] is not _REMOVED

    @property
    def changes(self) -> tuple[Change, ...]:
        return tuple(self._changes)
