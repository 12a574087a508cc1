"""Stuck-instance alert thresholds as words: their ISO 8601 durations and the camunda:properties
a model declares them with. Pure: no clock, no IO.

    <camunda:property name="interlock.alert.waiting" value="PT2H"/>    a token waits > 2 h
    <camunda:property name="interlock.alert.incident" value="PT15M"/>  an incident open > 15 min

A threshold is an exact length (days, hours, minutes, seconds; no months or years, whose length
depends on the calendar), at least one second and at most a year.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.language.timers import parse_duration
from engine.states import AlertKind

PROPERTY_PREFIX = "interlock.alert."
PROPERTY_NAMES = {f"{PROPERTY_PREFIX}{kind.value}": kind for kind in AlertKind}
MAX_SECONDS = 366 * 86400


def threshold_seconds(text: str) -> int:
    """The whole seconds of the ISO 8601 duration `text`; ValueError naming what is wrong."""
    duration = parse_duration(text)
    if not duration.is_exact:
        raise ValueError(f"'{text}' has months or years, whose length varies; use days (P30D)")
    seconds = int(duration.exact_length().total_seconds())
    if seconds < 1:
        raise ValueError(f"'{text}' is shorter than one second")
    if seconds > MAX_SECONDS:
        raise ValueError(f"'{text}' is longer than a year")
    return seconds


def declared_thresholds(
    properties: Iterable[tuple[str, str]],
) -> list[tuple[AlertKind, str, int]]:
    """The thresholds a node's camunda:properties declare: (kind, duration, seconds), the last
    of a repeated name winning; ValueError naming the property whose value is no duration, or an
    `interlock.alert.*` name that is no kind."""
    found: dict[AlertKind, tuple[str, int]] = {}
    for name, value in properties:
        if not name.startswith(PROPERTY_PREFIX):
            continue
        kind = PROPERTY_NAMES.get(name)
        if kind is None:
            known = ", ".join(PROPERTY_NAMES)
            raise ValueError(f"camunda:property '{name}' is no alert threshold; known: {known}")
        try:
            found[kind] = (value.strip(), threshold_seconds(value))
        except ValueError as exc:
            raise ValueError(f"camunda:property '{name}': {exc}") from None
    return [(kind, text, seconds) for kind, (text, seconds) in found.items()]


def spoken(seconds: int) -> str:
    """A length as an operator reads it: '2 h 5 min', '45 s', '3 d 4 h'."""
    if seconds < 60:
        return f"{seconds} s"
    parts: list[str] = []
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    for value, unit in ((days, "d"), (hours, "h"), (minutes, "min")):
        if value:
            parts.append(f"{value} {unit}")
    if secs and not days:
        parts.append(f"{secs} s")
    return " ".join(parts[:2])
