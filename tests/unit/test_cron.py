"""Quartz cron expressions: the examples of Quartz's CronTrigger tutorial, each with its next three
fire times after a fixed instant, written out by hand from a calendar; the letters (L, W, #), time
zones and daylight saving; and the refusals, each naming the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from engine.language.cron import next_fire, parse_cron, shortest_gap
from engine.language.timers import (
    TimerLimits,
    cycle_repetitions,
    first_due,
    next_cycle_due,
    validate_timer,
)

# Wednesday 15 June 2005, 10:00:00 UTC.
AFTER = datetime(2005, 6, 15, 10, 0, 0, tzinfo=UTC)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, us: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, us, tzinfo=UTC)


def fires(text: str, after: datetime, count: int = 3, zone: str = "UTC") -> list[datetime | None]:
    expression = parse_cron(text)
    found: list[datetime | None] = []
    moment: datetime | None = after
    for _ in range(count):
        moment = None if moment is None else next_fire(expression, moment, ZoneInfo(zone))
        found.append(moment)
    return found


# The table of Quartz's CronTrigger tutorial, in its order.
QUARTZ_EXAMPLES = [
    # Fire at 12pm (noon) every day.
    ("0 0 12 * * ?", [utc(2005, 6, 15, 12, 0), utc(2005, 6, 16, 12, 0), utc(2005, 6, 17, 12, 0)]),
    # Fire at 10:15am every day.
    (
        "0 15 10 ? * *",
        [utc(2005, 6, 15, 10, 15), utc(2005, 6, 16, 10, 15), utc(2005, 6, 17, 10, 15)],
    ),
    # Fire at 10:15am every day during the year 2005.
    (
        "0 15 10 * * ? 2005",
        [utc(2005, 6, 15, 10, 15), utc(2005, 6, 16, 10, 15), utc(2005, 6, 17, 10, 15)],
    ),
    # Fire every minute starting at 2pm and ending at 2:59pm, every day.
    ("0 * 14 * * ?", [utc(2005, 6, 15, 14, 0), utc(2005, 6, 15, 14, 1), utc(2005, 6, 15, 14, 2)]),
    # Fire every 5 minutes starting at 2pm and ending at 2:55pm, every day.
    (
        "0 0/5 14 * * ?",
        [utc(2005, 6, 15, 14, 0), utc(2005, 6, 15, 14, 5), utc(2005, 6, 15, 14, 10)],
    ),
    # ... and every 5 minutes from 6pm to 6:55pm.
    (
        "0 0/5 14,18 * * ?",
        [utc(2005, 6, 15, 14, 0), utc(2005, 6, 15, 14, 5), utc(2005, 6, 15, 14, 10)],
    ),
    # Fire every minute starting at 2pm and ending at 2:05pm, every day.
    ("0 0-5 14 * * ?", [utc(2005, 6, 15, 14, 0), utc(2005, 6, 15, 14, 1), utc(2005, 6, 15, 14, 2)]),
    # Fire at 2:10pm and at 2:44pm every Wednesday in the month of March (1 March 2006 is one).
    (
        "0 10,44 14 ? 3 WED",
        [utc(2006, 3, 1, 14, 10), utc(2006, 3, 1, 14, 44), utc(2006, 3, 8, 14, 10)],
    ),
    # Fire at 10:15am every Monday, Tuesday, Wednesday, Thursday and Friday.
    (
        "0 15 10 ? * MON-FRI",
        [utc(2005, 6, 15, 10, 15), utc(2005, 6, 16, 10, 15), utc(2005, 6, 17, 10, 15)],
    ),
    # Fire at 10:15am on the 15th day of every month.
    (
        "0 15 10 15 * ?",
        [utc(2005, 6, 15, 10, 15), utc(2005, 7, 15, 10, 15), utc(2005, 8, 15, 10, 15)],
    ),
    # Fire at 10:15am on the last day of every month.
    (
        "0 15 10 L * ?",
        [utc(2005, 6, 30, 10, 15), utc(2005, 7, 31, 10, 15), utc(2005, 8, 31, 10, 15)],
    ),
    # Fire at 10:15am on the 2nd-to-last day of every month (the last day minus two).
    (
        "0 15 10 L-2 * ?",
        [utc(2005, 6, 28, 10, 15), utc(2005, 7, 29, 10, 15), utc(2005, 8, 29, 10, 15)],
    ),
    # Fire at 10:15am on the last Friday of every month.
    (
        "0 15 10 ? * 6L",
        [utc(2005, 6, 24, 10, 15), utc(2005, 7, 29, 10, 15), utc(2005, 8, 26, 10, 15)],
    ),
    # ... during the years 2002 to 2005.
    (
        "0 15 10 ? * 6L 2002-2005",
        [utc(2005, 6, 24, 10, 15), utc(2005, 7, 29, 10, 15), utc(2005, 8, 26, 10, 15)],
    ),
    # Fire at 10:15am on the third Friday of every month.
    (
        "0 15 10 ? * 6#3",
        [utc(2005, 6, 17, 10, 15), utc(2005, 7, 15, 10, 15), utc(2005, 8, 19, 10, 15)],
    ),
    # Fire at 12pm (noon) every 5 days every month, starting on the first day of the month.
    ("0 0 12 1/5 * ?", [utc(2005, 6, 16, 12, 0), utc(2005, 6, 21, 12, 0), utc(2005, 6, 26, 12, 0)]),
    # Fire every November 11th at 11:11am.
    (
        "0 11 11 11 11 ?",
        [utc(2005, 11, 11, 11, 11), utc(2006, 11, 11, 11, 11), utc(2007, 11, 11, 11, 11)],
    ),
]


@pytest.mark.parametrize(("text", "expected"), QUARTZ_EXAMPLES, ids=[t for t, _ in QUARTZ_EXAMPLES])
def test_quartz_examples_fire_when_quartz_says(text: str, expected: list[datetime]) -> None:
    assert fires(text, AFTER) == expected


# Where the same examples cross an edge: past the last hour or day they allow, past their years.
EDGES = [
    (
        "0 0/5 14,18 * * ?",
        utc(2005, 6, 15, 14, 52),
        [utc(2005, 6, 15, 14, 55), utc(2005, 6, 15, 18, 0), utc(2005, 6, 15, 18, 5)],
    ),
    (
        "0 0-5 14 * * ?",
        utc(2005, 6, 15, 14, 4, 30),
        [utc(2005, 6, 15, 14, 5), utc(2005, 6, 16, 14, 0), utc(2005, 6, 16, 14, 1)],
    ),
    (
        "0 15 10 ? * MON-FRI",
        utc(2005, 6, 17, 10, 15),  # Friday, the moment it fired: the next is Monday
        [utc(2005, 6, 20, 10, 15), utc(2005, 6, 21, 10, 15), utc(2005, 6, 22, 10, 15)],
    ),
    ("0 15 10 * * ? 2005", utc(2005, 12, 30, 12, 0), [utc(2005, 12, 31, 10, 15), None, None]),
    ("0 15 10 ? * 6L 2002-2005", utc(2005, 11, 26), [utc(2005, 12, 30, 10, 15), None, None]),
    ("0 15 10 * * ? 2005", utc(2026, 1, 1), [None, None, None]),
    # Every second: the seconds field counts.
    (
        "* * * * * ?",
        utc(2005, 6, 15, 23, 59, 58, 500000),
        [
            utc(2005, 6, 15, 23, 59, 59),
            utc(2005, 6, 16, 0, 0, 0),
            utc(2005, 6, 16, 0, 0, 1),
        ],
    ),
    (
        "15/20 * * * * ?",
        utc(2005, 6, 15, 10, 0, 30),
        [
            utc(2005, 6, 15, 10, 0, 35),
            utc(2005, 6, 15, 10, 0, 55),
            utc(2005, 6, 15, 10, 1, 15),
        ],
    ),
]


@pytest.mark.parametrize(("text", "after", "expected"), EDGES)
def test_edges_of_the_examples(text: str, after: datetime, expected: list[datetime | None]) -> None:
    assert fires(text, after) == expected


LETTERS = [
    # W: the weekday nearest the day, in the same month. 1 Oct 2005 is a Saturday: Monday the
    # 3rd (Friday the 30th is in another month); 1 Nov a Tuesday, 1 Dec a Thursday.
    (
        "0 0 12 1W * ?",
        utc(2005, 9, 15),
        [utc(2005, 10, 3, 12), utc(2005, 11, 1, 12), utc(2005, 12, 1, 12)],
    ),
    # 15 Oct 2005 is a Saturday: Friday the 14th.
    (
        "0 0 12 15W * ?",
        utc(2005, 10, 1),
        [utc(2005, 10, 14, 12), utc(2005, 11, 15, 12), utc(2005, 12, 15, 12)],
    ),
    # 30 Apr 2006 is a Sunday and the last day: Friday the 28th.
    (
        "0 0 12 30W * ?",
        utc(2006, 4, 1),
        [utc(2006, 4, 28, 12), utc(2006, 5, 30, 12), utc(2006, 6, 30, 12)],
    ),
    # LW: the last weekday. 31 Dec 2005 is a Saturday.
    (
        "0 0 12 LW * ?",
        utc(2005, 12, 1),
        [utc(2005, 12, 30, 12), utc(2006, 1, 31, 12), utc(2006, 2, 28, 12)],
    ),
    # The fifth Friday: only in months that have one.
    (
        "0 0 12 ? * 6#5",
        utc(2005, 6, 1),
        [utc(2005, 7, 29, 12), utc(2005, 9, 30, 12), utc(2005, 12, 30, 12)],
    ),
    # L alone in day-of-week is Saturday (7).
    ("0 0 12 ? * L", AFTER, [utc(2005, 6, 18, 12), utc(2005, 6, 25, 12), utc(2005, 7, 2, 12)]),
    # The last day of February, in a leap year too.
    ("0 0 0 L 2 ?", AFTER, [utc(2006, 2, 28), utc(2007, 2, 28), utc(2008, 2, 29)]),
    # Sunday is 1; names and numbers mean the same; lowercase is fine.
    ("0 0 12 ? * 1", AFTER, [utc(2005, 6, 19, 12), utc(2005, 6, 26, 12), utc(2005, 7, 3, 12)]),
    (
        "0 0 12 ? jun,jul sun",
        AFTER,
        [utc(2005, 6, 19, 12), utc(2005, 6, 26, 12), utc(2005, 7, 3, 12)],
    ),
    # A range across the end of the week: Friday to Monday.
    (
        "0 0 12 ? * FRI-MON",
        AFTER,
        [utc(2005, 6, 17, 12), utc(2005, 6, 18, 12), utc(2005, 6, 19, 12)],
    ),
    # Hours across midnight, with a step.
    ("0 0 22-2/2 * * ?", AFTER, [utc(2005, 6, 15, 22), utc(2005, 6, 16, 0), utc(2005, 6, 16, 2)]),
]


@pytest.mark.parametrize(("text", "after", "expected"), LETTERS)
def test_letters(text: str, after: datetime, expected: list[datetime]) -> None:
    assert fires(text, after) == expected


def test_fire_times_are_wall_clock_times_of_the_zone() -> None:
    # 09:00 in Berlin is 08:00 UTC in winter (CET) and 07:00 UTC in summer (CEST).
    assert fires("0 0 9 * * ?", utc(2026, 1, 10, 12), 2, "Europe/Berlin") == [
        utc(2026, 1, 11, 8),
        utc(2026, 1, 12, 8),
    ]
    assert fires("0 0 9 * * ?", utc(2026, 7, 10, 12), 2, "Europe/Berlin") == [
        utc(2026, 7, 11, 7),
        utc(2026, 7, 12, 7),
    ]
    # Across the change on 29 March 2026, 02:00 CET -> 03:00 CEST: still 09:00 on the wall.
    assert fires("0 0 9 * * ?", utc(2026, 3, 28, 12), 2, "Europe/Berlin") == [
        utc(2026, 3, 29, 7),
        utc(2026, 3, 30, 7),
    ]


def test_a_time_skipped_when_clocks_go_forward_is_skipped() -> None:
    # 02:30 does not exist in Berlin on 29 March 2026: no fire that day.
    assert fires("0 30 2 * * ?", utc(2026, 3, 28, 12), 2, "Europe/Berlin") == [
        utc(2026, 3, 30, 0, 30),  # 02:30 CEST
        utc(2026, 3, 31, 0, 30),
    ]


def test_a_time_repeated_when_clocks_go_back_fires_once() -> None:
    # 25 October 2026, 03:00 CEST -> 02:00 CET: 02:00 and 02:30 happen twice and fire at their
    # first occurrence only (CEST, UTC+2); the next fire is the next day's 02:00 CET.
    assert fires("0 0/30 2 * * ?", utc(2026, 10, 24, 23), 3, "Europe/Berlin") == [
        utc(2026, 10, 25, 0, 0),
        utc(2026, 10, 25, 0, 30),
        utc(2026, 10, 26, 1, 0),
    ]
    # Asked from inside the repeated hour: what is left of it has already fired.
    assert fires("0 0/30 * * * ?", utc(2026, 10, 25, 1, 10), 2, "Europe/Berlin") == [
        utc(2026, 10, 25, 2, 0),  # 03:00 CET
        utc(2026, 10, 25, 2, 30),
    ]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("0 0 12 * * MON", "day-of-month and day-of-week cannot both be specified"),
        ("0 0 12 15 * 2", "day-of-month and day-of-week cannot both be specified"),
        ("0 0 12 ? * ?", "cannot both be '?'"),
        ("0 0 12 * *", "six or seven fields"),
        ("0 0 12 * * ? 2005 x", "six or seven fields"),
        ("60 0 12 * * ?", "seconds: 60 is out of range 0-59"),
        ("0 60 12 * * ?", "minutes: 60 is out of range 0-59"),
        ("0 0 24 * * ?", "hours: 24 is out of range 0-23"),
        ("0 0 12 32 * ?", "day-of-month: 32 is out of range 1-31"),
        ("0 0 12 0 * ?", "day-of-month: 0 is out of range 1-31"),
        ("0 0 12 ? 13 *", "month: 13 is out of range 1-12"),
        ("0 0 12 ? * 8", "day-of-week: 8 is out of range 1-7"),
        ("0 0 12 ? * 0", "day-of-week: 0 is out of range 1-7"),
        ("0 0 12 * * ? 1969", "year: 1969 is out of range 1970-2199"),
        ("0 0 12 ? FOO *", "month: 'FOO' is not a number 1-12 or a name JAN-DEC"),
        ("0 0 12 ? * MOND", "day-of-week: 'MOND' is not a number 1-7 or a name SUN-SAT"),
        ("0 0 ? * * ?", "hours: '?' stands alone"),
        ("0 0 12 1,? * ?", "day-of-month: '?' stands alone"),
        ("0 0/0 12 * * ?", "minutes: the step 0 is out of range"),
        ("0 0 12 L,15 * ?", "day-of-month: 'L,15': L and W take the whole field"),
        ("0 0 12 1-5W * ?", "day-of-month: '1-5W': L and W take the whole field"),
        ("0 0 12 ? * 6#6", "day-of-week: the week of '6#6' is out of range 1-5"),
        ("0 0 12 ? * 6#3,2", "day-of-week: '6#3,2': L and # take the whole field"),
        ("0 0 12 ? * 9L", "day-of-week: 9 is out of range 1-7"),
        ("0 0 12 L-31 * ?", "day-of-month: the offset of 'L-31' is out of range 0-30"),
        ("0 0 12 * * ? */X", "year: '*/X' is not a value, range, step or list"),
        ("0 0 12 *-3 * ?", "day-of-month: '*-3': '*' cannot start a range"),
    ],
)
def test_bad_expressions_name_the_field(text: str, fragment: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_cron(text)
    assert fragment in str(caught.value)
    assert f"'{text}'" in str(caught.value)


def test_shortest_gap() -> None:
    assert shortest_gap(parse_cron("* * * * * ?")) == timedelta(seconds=1)
    assert shortest_gap(parse_cron("0 0/5 14,18 * * ?")) == timedelta(minutes=5)
    assert shortest_gap(parse_cron("0 0 12 * * ?")) == timedelta(days=1)
    assert shortest_gap(parse_cron("0 0 12 1 1 ? 2150")) is None


# --- cron cycles as timers ---------------------------------------------------------------------


def test_a_cron_cycle_is_a_timer_cycle() -> None:
    validate_timer("cycle", "0 0/5 * * * ?")
    assert cycle_repetitions("0 0/5 * * * ?") is None
    assert cycle_repetitions("R3/PT1M") == 3
    now = utc(2030, 1, 1, 9, 2, 30)
    assert first_due("cycle", "0 0/5 * * * ?", now) == utc(2030, 1, 1, 9, 5)
    assert first_due("cycle", "0 0 9 * * ?", now, zone="Europe/Berlin") == utc(2030, 1, 2, 8)
    with pytest.raises(ValueError, match="has no fire time after"):
        first_due("cycle", "0 15 10 * * ? 2005", now)


def test_a_cron_cycle_goes_on_from_when_it_fired() -> None:
    # On time: the next fire time after the scheduled one.
    scheduled = utc(2030, 1, 1, 9, 5)
    assert next_cycle_due("0 0/5 * * * ?", scheduled, scheduled, "UTC") == utc(2030, 1, 1, 9, 10)
    # Late (no executor ran for an hour): the fire times missed are not caught up one by one.
    late = utc(2030, 1, 1, 10, 7)
    assert next_cycle_due("0 0/5 * * * ?", scheduled, late, "UTC") == utc(2030, 1, 1, 10, 10)
    # Its years over: no next fire time.
    assert next_cycle_due("0 15 10 * * ? 2005", utc(2005, 12, 31, 10, 15), late, "UTC") is None
    # An ISO 8601 cycle still steps from the scheduled time.
    assert next_cycle_due("R/PT5M", scheduled, late, "UTC") == utc(2030, 1, 1, 9, 10)


def test_a_cron_cycle_is_held_to_the_shortest_interval() -> None:
    limits = TimerLimits(min_cycle_interval=timedelta(minutes=1))
    validate_timer("cycle", "0 * * * * ?", limits)
    with pytest.raises(ValueError, match="at most once every PT1M, this one fires PT1S apart"):
        validate_timer("cycle", "* * * * * ?", limits)
    with pytest.raises(ValueError, match="day-of-month and day-of-week cannot both be specified"):
        validate_timer("cycle", "0 0 9 * * MON")
    with pytest.raises(ValueError, match="or a cron expression such as 0 0/5"):
        validate_timer("cycle", "daily")
    with pytest.raises(ValueError, match="it needs six or seven fields: seconds minutes"):
        validate_timer("cycle", "every day")
