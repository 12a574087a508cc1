"""A model's history time to live (`camunda:historyTimeToLive`, a builder's `history_ttl_days`):
the text read into a number of days, and the bounds it must keep. Pure: the BPMN and DMN parsers
and the builder read it here; engine/db/retention.py applies it."""

from __future__ import annotations

import re

# The largest time to live a model may ask for: a thousand years, in days.
MAX_TTL_DAYS = 365_000

_DAYS = re.compile(r"\d+")
_ISO_DAYS = re.compile(r"P(\d+)D")


def parse_history_ttl(text: str) -> int | None:
    """The days `camunda:historyTimeToLive` says: a whole number of days (`5`) or an ISO-8601
    duration in days (`P5D`), as Camunda accepts; None when blank. An expression, any other unit
    or a negative number raises ValueError."""
    value = text.strip()
    if not value:
        return None
    if "${" in value or "#{" in value:
        raise ValueError("historyTimeToLive cannot be an expression")
    found = _DAYS.fullmatch(value) or _ISO_DAYS.fullmatch(value.upper())
    if found is None:
        raise ValueError(
            f"historyTimeToLive must be a number of days or a duration in days like P5D, "
            f"not {text!r}"
        )
    return check_history_ttl(int(found.group(0) if found.re is _DAYS else found.group(1)))


def check_history_ttl(days: int) -> int:
    if not 0 <= days <= MAX_TTL_DAYS:
        raise ValueError(f"historyTimeToLive must be between 0 and {MAX_TTL_DAYS} days")
    return days
