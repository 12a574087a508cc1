"""ISO 8601 timer arithmetic: dates, durations and repeating cycles. Pure: no clock, no IO.

    parse_duration("P1M")                       Duration(months=1)
    parse_date("2026-01-31T10:00:00")           2026-01-31 10:00 UTC (naive means UTC)
    parse_cycle("R3/PT10M")                     Cycle(repetitions=3, interval=PT10M, start=None)
    parse_cycle("R/2026-01-01T09:00:00Z/P1D")   every day at 09:00 UTC from New Year, unbounded

Years and months are calendar months: adding P1M to January 31 gives February 28 (29 in a leap
year), the last day of the shorter month. Days are calendar days on the moment's own clock; hours,
minutes and seconds are elapsed time. Every datetime this module returns is timezone-aware; naive
input is taken as UTC. Bad text raises ValueError with a message that quotes it.

A cycle's occurrences are start, start + interval, (start + interval) + interval, ... — each step
adds the interval to the previous occurrence, as Camunda does, so a monthly cycle from January 31
runs Feb 28, Mar 28, Apr 28. `first_due` skips occurrences already in the past; the repetitions
count the firings from the first due one on.

A cycle may also be a Quartz cron expression (`0 0/5 * * * ?`, engine/language/cron.py), as in
Camunda 7: it repeats without end, and its fire times are wall-clock times in the engine's time
zone (`TimerLimits.zone`, INTERLOCK_TIMEZONE, UTC by default). A cron cycle goes on from the
later of its scheduled time and the time it fired, as Camunda's does, so fire times missed while
no executor ran are not caught up one by one.

Timers that start (`validate_timer` at deployment, `first_due` when a timer is created, also for
a text an expression gave at run time) are held to `TimerLimits`: a cycle fires at most once a
second, and no duration or cycle interval is longer than 100 years. Cycles already running keep
their text (`parse_cycle` and `next_due` do not apply the limits).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Final, Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from engine.language import cron

# How a timer's text is read (its BPMN element: timeDate, timeDuration, timeCycle); declared
# here only (engine/model/ imports it).
TimerKind = Literal["date", "duration", "cycle"]
TIMER_KINDS: Final[tuple[TimerKind, ...]] = get_args(TimerKind)

# Up to nine digits a component: enough for any timer, and no pathological integers.
_DURATION = re.compile(
    r"P(?:(?P<years>\d{1,9})Y)?(?:(?P<months>\d{1,9})M)?(?:(?P<weeks>\d{1,9})W)?"
    r"(?:(?P<days>\d{1,9})D)?"
    r"(?:T(?:(?P<hours>\d{1,9})H)?(?:(?P<minutes>\d{1,9})M)?(?:(?P<seconds>\d{1,9}(?:[.,]\d{1,9})?)S)?)?",
    re.ASCII,
)
_REPEAT = re.compile(r"R(?P<count>\d{0,9})", re.ASCII)
_MAX_MONTHS = 9999 * 12
_MICROSECOND = Decimal("0.000001")
_DURATION_HELP = "an ISO 8601 duration such as PT15M, P1DT12H or P1M"
_DATE_HELP = "an ISO 8601 date-time such as 2026-12-24T18:00:00Z"
_CYCLE_HELP = (
    "an ISO 8601 repeating interval such as R3/PT10M, R/P1D or R5/2026-01-01T10:00:00Z/P1D"
)
_TIMER_CYCLE_HELP = f"{_CYCLE_HELP}, or a cron expression such as 0 0/5 * * * ?"


@dataclass(frozen=True)
class TimerLimits:
    """The shortest interval of a cycle and the longest duration (or cycle interval) a timer may
    start with. Lengths are measured from 2000-01-01 UTC: P1M is 31 days, P100Y is 100 years.
    `zone`: the IANA time zone whose wall clock cron cycles fire on."""

    min_cycle_interval: timedelta = timedelta(seconds=1)
    max_duration_years: int = 100
    zone: str = "UTC"


DEFAULT_LIMITS: Final = TimerLimits()
_REFERENCE = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Duration:
    """A calendar-aware duration. `years` and `months` move the calendar month (clamping the day
    to the month's end), `days` the calendar day; `time` (hours, minutes, seconds) is elapsed.
    Weeks are stored as seven days each."""

    years: int = 0
    months: int = 0
    days: int = 0
    time: timedelta = timedelta(0)

    @property
    def is_zero(self) -> bool:
        return not (self.years or self.months or self.days or self.time)

    @property
    def is_exact(self) -> bool:
        """True when the duration is the same length wherever it is added (no months or years)."""
        return not (self.years or self.months)

    def exact_length(self) -> timedelta:
        """The length of a duration without years or months."""
        if not self.is_exact:
            raise ValueError("a duration with years or months has no fixed length")
        return timedelta(days=self.days) + self.time

    def __str__(self) -> str:
        date = "".join(
            f"{value}{unit}"
            for value, unit in ((self.years, "Y"), (self.months, "M"), (self.days, "D"))
            if value
        )
        total = (
            Decimal(self.time.days * 86400 + self.time.seconds)
            + Decimal(self.time.microseconds) * _MICROSECOND
        )
        hours, rest = divmod(total, 3600)
        minutes, seconds = divmod(rest, 60)
        time = "".join(
            f"{value.normalize():f}{unit}"
            for value, unit in ((hours, "H"), (minutes, "M"), (seconds, "S"))
            if value
        )
        if not date and not time:
            return "PT0S"
        return f"P{date}" + (f"T{time}" if time else "")


@dataclass(frozen=True)
class Cycle:
    """`repetitions` firings (None: unbounded) every `interval`, from `start` when given."""

    repetitions: int | None
    interval: Duration
    start: datetime | None = None


def time_zone(name: str) -> tzinfo:
    """The IANA time zone `name` (`Europe/Berlin`, `UTC`); ValueError when there is none."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        message = f"'{name}' is not an IANA time zone such as UTC or Europe/Berlin"
        raise ValueError(message) from None


def parse_duration(text: str) -> Duration:
    """PnYnMnWnDTnHnMnS; any component may be left out but not all, and only seconds may have a
    fraction (`PT0.5S`, `PT1,25S`). Negative durations are not timers."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or text.strip() in ("P", "") or text.strip().endswith("T"):
        raise ValueError(f"'{text}' is not {_DURATION_HELP}")
    parts = match.groupdict()

    def number(name: str) -> int:
        return int(parts[name] or 0)

    seconds = Decimal((parts["seconds"] or "0").replace(",", "."))
    microseconds = int(seconds.quantize(_MICROSECOND, rounding=ROUND_HALF_EVEN) / _MICROSECOND)
    years, months = number("years"), number("months")
    if years * 12 + months > _MAX_MONTHS:
        raise ValueError(f"'{text}' is too long: durations are limited to 9999 years")
    try:
        time = timedelta(hours=number("hours"), minutes=number("minutes"))
        time += timedelta(microseconds=microseconds)
        days = number("weeks") * 7 + number("days")
        _ = timedelta(days=days) + time  # raises OverflowError when out of range
    except OverflowError:
        raise ValueError(f"'{text}' is too long to be a timer") from None
    return Duration(years=years, months=months, days=days, time=time)


def parse_date(text: str) -> datetime:
    """An ISO 8601 date-time (or a date, meaning its midnight). Without an offset it is UTC."""
    stripped = text.strip()
    # fromisoformat also reads "2026-01-01 10:00" and other near-ISO forms; those are fine. It must
    # not read what the other parsers accept, so that a value can be tried as a date first.
    if not stripped or not stripped[0].isdigit() or not stripped.isascii():
        raise ValueError(f"'{text}' is not {_DATE_HELP}")
    try:
        moment = datetime.fromisoformat(stripped)
    except ValueError:
        raise ValueError(f"'{text}' is not {_DATE_HELP}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def parse_cycle(text: str) -> Cycle:
    """`Rn/<duration>` or `Rn/<start>/<duration>`; `R/...` repeats without end. A bare duration,
    an end date and cron expressions are not cycles here."""
    stripped = text.strip()
    if " " in stripped:
        raise ValueError(f"'{text}' looks like a cron expression; write {_CYCLE_HELP}")
    parts = stripped.split("/")
    repeat = _REPEAT.fullmatch(parts[0])
    if repeat is None or len(parts) not in (2, 3):
        if parts[0].startswith("R-"):
            raise ValueError(f"'{text}': the number of repetitions cannot be negative")
        if len(parts) == 1 and parts[0].startswith("P"):
            message = f"'{text}' is a duration, not a cycle; write R/{parts[0]} or R3/{parts[0]}"
            raise ValueError(message)
        raise ValueError(f"'{text}' is not {_CYCLE_HELP}")
    count = repeat.group("count")
    repetitions = int(count) if count else None
    if repetitions == 0:
        raise ValueError(f"'{text}': a cycle must repeat at least once (R1 or more)")
    start: datetime | None = None
    if len(parts) == 3:
        if parts[1].startswith("P"):
            raise ValueError(f"'{text}': a cycle ending at a date is not supported; write a start")
        try:
            start = parse_date(parts[1])
        except ValueError:
            raise ValueError(f"'{text}': '{parts[1]}' is not {_DATE_HELP}") from None
    try:
        interval = parse_duration(parts[-1])
    except ValueError:
        raise ValueError(f"'{text}': '{parts[-1]}' is not {_DURATION_HELP}") from None
    if interval.is_zero:
        raise ValueError(f"'{text}': the interval of a cycle cannot be zero")
    return Cycle(repetitions=repetitions, interval=interval, start=start)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _add_months(moment: datetime, months: int) -> datetime:
    if not months:
        return moment
    index = moment.year * 12 + (moment.month - 1) + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise OverflowError
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def add_duration(moment: datetime, duration: Duration) -> datetime:
    """`moment` moved by the calendar months and days, then by the elapsed time; in moment's zone
    (naive moments are UTC). Raises ValueError when the result is past year 9999."""
    moment = _aware(moment)
    zone: tzinfo | None = moment.tzinfo
    try:
        wall = _add_months(moment, duration.years * 12 + duration.months)
        wall = wall + timedelta(days=duration.days)  # aware + timedelta: wall-clock arithmetic
        if not duration.time:
            return wall
        return (wall.astimezone(UTC) + duration.time).astimezone(zone)
    except OverflowError:
        raise ValueError(f"{moment.isoformat()} + {duration} is past the year 9999") from None


def next_due(cycle: Cycle, previous_due: datetime) -> datetime:
    """The occurrence after `previous_due`: one interval later, on the clock of the cycle's start
    (so a due date stored in UTC gives the same answer). In UTC."""
    previous = _aware(previous_due)
    if cycle.start is not None:
        previous = previous.astimezone(cycle.start.tzinfo)
    return add_duration(previous, cycle.interval).astimezone(UTC)


def _first_occurrence(cycle: Cycle, now: datetime) -> datetime:
    start = cycle.start
    if start is None:
        return add_duration(now, cycle.interval)
    if start >= now:
        return start
    if cycle.interval.is_exact:
        # Fixed offsets only (parse_date never gives a zone with daylight saving): exact steps.
        step = cycle.interval.exact_length()
        steps = -((start - now) // step)  # ceil((now - start) / step), exactly
        try:
            return start + steps * step
        except OverflowError:
            raise ValueError(
                f"the cycle has no occurrence before the year 9999 after {now}"
            ) from None
    # Calendar months: step one interval at a time (at most 9999 * 12 steps).
    occurrence = start
    while occurrence < now:
        occurrence = add_duration(occurrence, cycle.interval)
    return occurrence


def first_due(
    kind: TimerKind,
    text: str,
    now: datetime,
    limits: TimerLimits | None = DEFAULT_LIMITS,
    zone: str = "UTC",
) -> datetime:
    """When a timer of this kind and (already resolved) text first fires, in UTC.

    A date may lie in the past (the timer is overdue). A duration counts from `now`. A cycle
    without a start fires one interval after `now`; with a start, at the first occurrence at or
    after `now` (occurrences in the past are skipped, not caught up); a cron cycle at its first
    fire time after `now` on the wall clock of `zone`. A duration or cycle outside `limits`, or a
    cron cycle that never fires again, raises ValueError (`limits` None: a text deployment
    already held to its limits)."""
    now = _aware(now)
    if kind == "date":
        return parse_date(text).astimezone(UTC)
    if kind == "duration":
        duration = parse_duration(text)
        due = add_duration(now, duration)
        if limits is not None:
            check_duration(duration, text, limits)
    elif kind == "cycle" and cron.looks_like_cron(text):
        expression = cron.parse_cron(text)
        if limits is not None:
            check_cron(expression, limits)
        fire = cron.next_fire(expression, now, time_zone(zone))
        if fire is None:
            raise ValueError(f"'{text}' has no fire time after {now.isoformat()}")
        due = fire
    elif kind == "cycle":
        cycle = parse_cycle(text)
        due = _first_occurrence(cycle, now)
        if limits is not None:
            check_cycle(cycle, text, limits)
    else:
        raise ValueError(f"'{kind}' is not a timer kind (date, duration or cycle)")
    return due.astimezone(UTC)


def validate_timer(kind: str, text: str, limits: TimerLimits | None = DEFAULT_LIMITS) -> None:
    """Raise ValueError with a clear message unless `text` is a valid timer of this kind, within
    `limits` (None: any length; for definitions deployed under limits of their own)."""
    if kind == "date":
        parse_date(text)
    elif kind == "duration":
        duration = parse_duration(text)
        if limits is not None:
            check_duration(duration, text, limits)
    elif kind == "cycle" and cron.looks_like_cron(text):
        expression = cron.parse_cron(text)
        if limits is not None:
            check_cron(expression, limits)
    elif kind == "cycle":
        try:
            cycle = parse_cycle(text)
        except ValueError as error:
            raise ValueError(str(error).replace(_CYCLE_HELP, _TIMER_CYCLE_HELP)) from None
        if limits is not None:
            check_cycle(cycle, text, limits)
    else:
        raise ValueError(f"'{kind}' is not a timer kind (date, duration or cycle)")


def cycle_repetitions(text: str) -> int | None:
    """How many times a timer cycle fires from its first due time on; None: without end (a cron
    cycle, or `R/...`)."""
    if cron.looks_like_cron(text):
        return None
    return parse_cycle(text).repetitions


def next_cycle_due(text: str, scheduled: datetime, now: datetime, zone: str) -> datetime | None:
    """When a timer cycle that was due at `scheduled` and fired at `now` is due next, in UTC: an
    ISO 8601 cycle one interval after `scheduled` (see `next_due`), a cron cycle at its first
    fire time after the later of the two on the wall clock of `zone` (None: it never fires
    again)."""
    if cron.looks_like_cron(text):
        after = max(_aware(scheduled), _aware(now))
        return cron.next_fire(cron.parse_cron(text), after, time_zone(zone))
    return next_due(parse_cycle(text), scheduled)


def check_cron(expression: cron.CronExpression, limits: TimerLimits = DEFAULT_LIMITS) -> None:
    """Raise ValueError when the cron cycle fires more often than `limits` allow."""
    gap = cron.shortest_gap(expression)
    if gap is not None and gap < limits.min_cycle_interval:
        shortest = Duration(time=limits.min_cycle_interval)
        raise ValueError(
            f"'{expression.text}': a cycle may fire at most once every {shortest}, "
            f"this one fires {Duration(time=gap)} apart"
        )


def check_duration(duration: Duration, text: str, limits: TimerLimits = DEFAULT_LIMITS) -> None:
    """Raise ValueError when `duration` is longer than `limits` allow."""
    longest = _add_months(_REFERENCE, limits.max_duration_years * 12)
    try:
        too_long = add_duration(_REFERENCE, duration) > longest
    except ValueError:
        too_long = True
    if too_long:
        raise ValueError(
            f"'{text}' is too long: timers are limited to {limits.max_duration_years} years"
        )


def check_cycle(cycle: Cycle, text: str, limits: TimerLimits = DEFAULT_LIMITS) -> None:
    """Raise ValueError when the cycle's interval is shorter or longer than `limits` allow."""
    check_duration(cycle.interval, text, limits)
    if add_duration(_REFERENCE, cycle.interval) - _REFERENCE < limits.min_cycle_interval:
        shortest = Duration(time=limits.min_cycle_interval)
        raise ValueError(f"'{text}': the interval of a cycle must be at least {shortest}")
