"""Quartz cron expressions, the cron syntax of Camunda 7's `timeCycle`. Pure: no clock, no IO.

    parse_cron("0 0/5 14 * * ?")            every five minutes from 14:00 to 14:55, every day
    next_fire(expression, after, zone)      the first fire time after `after`, or None

An expression has six or seven fields separated by blanks: seconds (0-59), minutes (0-59), hours
(0-23), day-of-month (1-31), month (1-12 or JAN-DEC), day-of-week (1-7 or SUN-SAT, Sunday is 1)
and an optional year (1970-2199). A field is `*`, a value, a range `a-b` (wrapping past the end
when b < a, as `FRI-MON`), a step `a/n`, `*/n` or `a-b/n`, or a list of those separated by
commas. Day-of-month and day-of-week name the days together, so exactly one of them is `?` ("no
specific value"). Day-of-month also takes `L` (the last day of the month), `L-n` (n days before
it), `LW` (the last weekday, Monday to Friday) and `nW` (the weekday nearest to day n, never in
another month: `1W` on a Saturday is Monday the 3rd); day-of-week takes `L` (Saturday), `nL`
(the last day n of the month: `6L` is the last Friday) and `n#k` (the k-th day n: `6#3` is the
third Friday; no fire in a month without one). These take the whole field: no lists with them.
Names and letters are case-insensitive. Any other text raises ValueError naming the field.

Fire times are wall-clock times in a time zone, which Quartz reads the same way: a time of day
that does not exist (the hour skipped when clocks go forward) is skipped, not moved; a time of day
that happens twice (the hour repeated when clocks go back) fires once, at its first occurrence,
so an expression firing every few minutes pauses for the repeated hour. A day `nW` names that
does not exist in a month (`31W` in April) gives no fire in that month.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Final

FIELDS: Final = (
    "seconds",
    "minutes",
    "hours",
    "day-of-month",
    "month",
    "day-of-week",
    "year",
)
_BOUNDS: Final = {
    "seconds": (0, 59),
    "minutes": (0, 59),
    "hours": (0, 23),
    "day-of-month": (1, 31),
    "month": (1, 12),
    "day-of-week": (1, 7),
    "year": (1970, 2199),
}
_NAMES: Final = {
    "month": {
        name: number
        for number, name in enumerate(
            ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"),
            start=1,
        )
    },
    "day-of-week": {
        name: number
        for number, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"), start=1)
    },
}
_FORM = "six or seven fields: seconds minutes hours day-of-month month day-of-week [year]"
_LAST_OFFSET = re.compile(r"L-(\d{1,2})", re.ASCII)
_NEAREST = re.compile(r"(\d{1,2})W", re.ASCII)
_LAST_OF = re.compile(r"(\w{1,3})L", re.ASCII)
_NTH = re.compile(r"(\w{1,3})#(\d{1,2})", re.ASCII)
_ITEM = re.compile(r"(?P<start>\*|\w{1,4})(?:-(?P<end>\w{1,4}))?(?:/(?P<step>\d{1,4}))?", re.ASCII)


@dataclass(frozen=True)
class MonthDays:
    """The day-of-month field: `days` (None: `?`), or one of its letters: `last` (`L`, `L-n`:
    the offset before the last day), `last_weekday` (`LW`), `nearest` (`nW`: the day)."""

    days: frozenset[int] | None = None
    last: int | None = None
    last_weekday: bool = False
    nearest: int | None = None

    @property
    def unspecified(self) -> bool:
        return (
            self.days is None
            and self.last is None
            and not self.last_weekday
            and self.nearest is None
        )


@dataclass(frozen=True)
class WeekDays:
    """The day-of-week field, Sunday 1 to Saturday 7: `days` (None: `?`), or `last_of` (`nL`), or
    `nth` (`n#k`: the day and k)."""

    days: frozenset[int] | None = None
    last_of: int | None = None
    nth: tuple[int, int] | None = None

    @property
    def unspecified(self) -> bool:
        return self.days is None and self.last_of is None and self.nth is None


@dataclass(frozen=True)
class CronExpression:
    """A parsed expression: the values each field allows (`years` None: any year)."""

    text: str
    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    month_days: MonthDays
    months: tuple[int, ...]
    week_days: WeekDays
    years: tuple[int, ...] | None


def looks_like_cron(text: str) -> bool:
    """True when `text` is written as cron (blank-separated fields), not as an ISO 8601 cycle."""
    return len(text.split()) > 1


def _error(text: str, field: str, reason: str) -> ValueError:
    return ValueError(f"'{text}' is not a valid cron expression: {field}: {reason}")


def _value(text: str, field: str, word: str) -> int:
    low, high = _BOUNDS[field]
    names = _NAMES.get(field, {})
    if word in names:
        return names[word]
    if not word.isdigit():
        words = list(names)
        known = f" or a name {words[0]}-{words[-1]}" if words else ""
        raise _error(text, field, f"'{word}' is not a number {low}-{high}{known}")
    number = int(word)
    if not low <= number <= high:
        raise _error(text, field, f"{number} is out of range {low}-{high}")
    return number


def _values(text: str, field: str, spec: str) -> frozenset[int]:
    """The values of a field written as `*`, values, ranges, steps and lists."""
    low, high = _BOUNDS[field]
    found: set[int] = set()
    for item in spec.split(","):
        match = _ITEM.fullmatch(item)
        if match is None:
            raise _error(text, field, f"'{item}' is not a value, range, step or list")
        start_word, end_word, step_word = match.group("start", "end", "step")
        step = 1
        if step_word is not None:
            step = int(step_word)
            if not 1 <= step <= high - low + 1:
                raise _error(text, field, f"the step {step} is out of range 1-{high - low + 1}")
        if start_word == "*":
            if end_word is not None:
                raise _error(text, field, f"'{item}': '*' cannot start a range")
            start, end = low, high
        else:
            start = _value(text, field, start_word)
            if end_word is not None:
                end = _value(text, field, end_word)
            else:
                end = high if step_word is not None else start
        span = end - start if end >= start else end + (high - low + 1) - start
        for offset in range(0, span + 1, step):
            value = start + offset
            found.add(value if value <= high else value - (high - low + 1))
    return frozenset(found)


def _month_days(text: str, spec: str) -> MonthDays:
    field = "day-of-month"
    if spec == "?":
        return MonthDays()
    if spec == "L":
        return MonthDays(last=0)
    if spec == "LW":
        return MonthDays(last_weekday=True)
    if (match := _LAST_OFFSET.fullmatch(spec)) is not None:
        offset = int(match.group(1))
        if offset > 30:
            raise _error(text, field, f"the offset of '{spec}' is out of range 0-30")
        return MonthDays(last=offset)
    if (match := _NEAREST.fullmatch(spec)) is not None:
        return MonthDays(nearest=_value(text, field, match.group(1)))
    if "L" in spec or "W" in spec:
        raise _error(text, field, f"'{spec}': L and W take the whole field (L, L-3, LW, 15W)")
    return MonthDays(days=_values(text, field, spec))


def _week_days(text: str, spec: str) -> WeekDays:
    field = "day-of-week"
    if spec == "?":
        return WeekDays()
    if spec == "L":
        return WeekDays(days=frozenset({7}))
    if (match := _LAST_OF.fullmatch(spec)) is not None:
        return WeekDays(last_of=_value(text, field, match.group(1)))
    if (match := _NTH.fullmatch(spec)) is not None:
        day = _value(text, field, match.group(1))
        nth = int(match.group(2))
        if not 1 <= nth <= 5:
            raise _error(text, field, f"the week of '{spec}' is out of range 1-5")
        return WeekDays(nth=(day, nth))
    if "L" in spec or "#" in spec:
        raise _error(text, field, f"'{spec}': L and # take the whole field (L, 6L, 6#3)")
    return WeekDays(days=_values(text, field, spec))


def parse_cron(text: str) -> CronExpression:
    """The expression `text`; ValueError naming the field and what is wrong with it."""
    parts = text.strip().upper().split()
    if len(parts) not in (6, 7):
        raise ValueError(f"'{text}' is not a valid cron expression: it needs {_FORM}")
    for field, part in zip(FIELDS, parts, strict=False):
        if "?" in part and (part != "?" or field not in ("day-of-month", "day-of-week")):
            raise _error(text, field, "'?' stands alone, in day-of-month or day-of-week only")
    month_days = _month_days(text, parts[3])
    week_days = _week_days(text, parts[5])
    if month_days.unspecified and week_days.unspecified:
        raise ValueError(
            f"'{text}' is not a valid cron expression: day-of-month and day-of-week cannot "
            "both be '?': give one of them"
        )
    if not month_days.unspecified and not week_days.unspecified:
        raise ValueError(
            f"'{text}' is not a valid cron expression: day-of-month and day-of-week cannot "
            "both be specified: one of them must be '?'"
        )
    years = None
    if len(parts) == 7 and parts[6] != "*":
        years = tuple(sorted(_values(text, "year", parts[6])))
    return CronExpression(
        text=text.strip(),
        seconds=tuple(sorted(_values(text, "seconds", parts[0]))),
        minutes=tuple(sorted(_values(text, "minutes", parts[1]))),
        hours=tuple(sorted(_values(text, "hours", parts[2]))),
        month_days=month_days,
        months=tuple(sorted(_values(text, "month", parts[4]))),
        week_days=week_days,
        years=years,
    )


def _quartz_weekday(day: date) -> int:
    """Sunday 1 to Saturday 7."""
    return (day.weekday() + 1) % 7 + 1


def _days(expression: CronExpression, year: int, month: int) -> list[int]:
    """The days of the month `year`-`month` the expression fires on, in order."""
    last = calendar.monthrange(year, month)[1]
    every = range(1, last + 1)
    spec = expression.month_days
    if not spec.unspecified:
        if spec.days is not None:
            return [day for day in every if day in spec.days]
        if spec.last is not None:
            return [last - spec.last] if last - spec.last >= 1 else []
        target = last if spec.last_weekday else spec.nearest
        assert target is not None
        if target > last:
            return []
        weekday = _quartz_weekday(date(year, month, target))
        if weekday == 7:  # Saturday: Friday before, or Monday after when that is in another month
            target = target - 1 if target > 1 else target + 2
        elif weekday == 1:  # Sunday: Monday after, or Friday before when that is the last day
            target = target + 1 if target < last else target - 2
        return [target]
    weeks = expression.week_days
    weekdays = {day: _quartz_weekday(date(year, month, day)) for day in every}
    if weeks.days is not None:
        return [day for day in every if weekdays[day] in weeks.days]
    if weeks.last_of is not None:
        return [day for day in every if weekdays[day] == weeks.last_of][-1:]
    assert weeks.nth is not None
    weekday, nth = weeks.nth
    return [day for day in every if weekdays[day] == weekday][nth - 1 : nth]


def _wall_times(expression: CronExpression, start: datetime) -> Iterator[datetime]:
    """Every wall-clock time the expression names at or after `start` (naive), in order."""
    low, high = _BOUNDS["year"]
    years = expression.years or range(low, high + 1)
    first_day = start.date()
    for year in years:
        if year < start.year:
            continue
        for month in expression.months:
            if (year, month) < (start.year, start.month):
                continue
            for day in _days(expression, year, month):
                moment = date(year, month, day)
                if moment < first_day:
                    continue
                today = moment == first_day
                for hour in expression.hours:
                    if today and hour < start.hour:
                        continue
                    this_hour = today and hour == start.hour
                    for minute in expression.minutes:
                        if this_hour and minute < start.minute:
                            continue
                        this_minute = this_hour and minute == start.minute
                        for second in expression.seconds:
                            if this_minute and second < start.second:
                                continue
                            yield datetime(year, month, day, hour, minute, second)


def next_fire(expression: CronExpression, after: datetime, zone: tzinfo) -> datetime | None:
    """The first fire time strictly after `after` (aware) on the wall clock of `zone`, in UTC;
    None when the expression never fires again (its years are over)."""
    if after.tzinfo is None:
        after = after.replace(tzinfo=UTC)
    wall = after.astimezone(zone).replace(tzinfo=None, microsecond=0) + timedelta(seconds=1)
    for candidate in _wall_times(expression, wall):
        moment = candidate.replace(tzinfo=zone)  # fold 0: the first of a repeated hour's times
        if moment.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != candidate:
            continue  # in the hour skipped when clocks go forward: this time does not exist
        if moment > after:
            return moment.astimezone(UTC)
    return None


def shortest_gap(expression: CronExpression, fires: int = 200) -> timedelta | None:
    """The shortest time between the first `fires` fire times from 2000-01-01 UTC, which is the
    expression's shortest gap for every expression whose pattern repeats within them (firing
    more than once a day), and a generous bound otherwise; None when it fires at most once."""
    moment = next_fire(expression, datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC), UTC)
    gap: timedelta | None = None
    for _ in range(fires - 1):
        if moment is None:
            break
        following = next_fire(expression, moment, UTC)
        if following is None:
            break
        gap = following - moment if gap is None else min(gap, following - moment)
        moment = following
    return gap
