from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bpmn.parser import parse_bpmn
from engine.errors import ModelError
from engine.language.timers import (
    Cycle,
    Duration,
    TimerKind,
    TimerLimits,
    add_duration,
    first_due,
    next_due,
    parse_cycle,
    parse_date,
    parse_duration,
    validate_timer,
)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def hours(count: float) -> timedelta:
    return timedelta(hours=count)


# --- durations ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT15M", Duration(time=timedelta(minutes=15))),
        ("PT1H", Duration(time=hours(1))),
        ("PT36H", Duration(time=hours(36))),
        ("PT90M", Duration(time=timedelta(minutes=90))),
        ("PT0S", Duration()),
        ("PT0.5S", Duration(time=timedelta(milliseconds=500))),
        ("PT1,25S", Duration(time=timedelta(seconds=1.25))),
        ("PT0.0000005S", Duration()),  # rounds half to even at the microsecond
        ("PT0.0000015S", Duration(time=timedelta(microseconds=2))),
        ("PT1.123456789S", Duration(time=timedelta(seconds=1, microseconds=123457))),
        ("P1D", Duration(days=1)),
        ("P2W", Duration(days=14)),
        ("P1W2D", Duration(days=9)),
        ("P1M", Duration(months=1)),
        ("P1Y", Duration(years=1)),
        ("P18M", Duration(months=18)),
        (
            "P1Y2M3W4DT5H6M7.8S",
            Duration(
                years=1,
                months=2,
                days=25,
                time=timedelta(hours=5, minutes=6, seconds=7.8),
            ),
        ),
        ("P1DT12H", Duration(days=1, time=hours(12))),
        ("  PT5M\n", Duration(time=timedelta(minutes=5))),
        ("P9999Y", Duration(years=9999)),
    ],
)
def test_parse_duration(text: str, expected: Duration) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "P",
        "PT",
        "P1DT",
        "1H",
        "PT1H ",  # fine after stripping? no: see below
        "pt1h",
        "P1H",
        "PT1D",
        "PT1.5M",
        "P1.5D",
        "PT.5S",
        "PT1S2M",
        "P1D1Y",
        "-P1D",
        "P-1D",
        "PT1H30",
        "P1Y2Y",
        "P1234567890D",
        "P10000Y",
        "P9999Y1M",
        "P999999999DT999999999H",
        "garbage",
        "P１D",  # a full-width digit
        "R3/PT1M",
        "2026-01-01T00:00:00Z",
    ],
)
def test_bad_durations_name_the_text(text: str) -> None:
    if text == "PT1H ":
        assert parse_duration(text) == Duration(time=hours(1))
        return
    with pytest.raises(ValueError) as caught:
        parse_duration(text)
    assert f"'{text}'" in str(caught.value)


def test_huge_but_representable_durations() -> None:
    assert parse_duration("PT999999999S").time == timedelta(seconds=999_999_999)
    assert parse_duration("P999999999D").days == 999_999_999
    with pytest.raises(ValueError, match="past the year 9999"):
        add_duration(utc(2026, 1, 1), parse_duration("P999999999D"))
    with pytest.raises(ValueError, match="past the year 9999"):
        add_duration(utc(2026, 1, 1), parse_duration("P8000Y"))


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("PT15M", "PT15M"),
        ("P2W", "P14D"),
        ("PT90M", "PT1H30M"),
        ("PT0S", "PT0S"),
        ("P1Y2M3DT4H5M6.5S", "P1Y2M3DT4H5M6.5S"),
        ("PT0.000001S", "PT0.000001S"),
        ("P1M", "P1M"),
    ],
)
def test_duration_str_is_iso_and_parses_back(text: str, rendered: str) -> None:
    duration = parse_duration(text)
    assert str(duration) == rendered
    assert parse_duration(str(duration)) == duration


def test_exact_length() -> None:
    assert parse_duration("P1DT1H").exact_length() == hours(25)
    assert parse_duration("P1DT1H").is_exact
    assert not parse_duration("P1M").is_exact
    with pytest.raises(ValueError, match="no fixed length"):
        parse_duration("P1Y").exact_length()


# --- calendar arithmetic -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moment", "text", "expected"),
    [
        (utc(2026, 1, 31, 10), "P1M", utc(2026, 2, 28, 10)),
        (utc(2024, 1, 31, 10), "P1M", utc(2024, 2, 29, 10)),
        (utc(2026, 3, 31), "P1M", utc(2026, 4, 30)),
        (utc(2026, 1, 31), "P2M", utc(2026, 3, 31)),
        (utc(2026, 1, 31), "P13M", utc(2027, 2, 28)),
        (utc(2024, 2, 29), "P1Y", utc(2025, 2, 28)),
        (utc(2024, 2, 29), "P4Y", utc(2028, 2, 29)),
        (utc(2026, 12, 15), "P1M", utc(2027, 1, 15)),
        (utc(2026, 12, 31), "P1D", utc(2027, 1, 1)),
        (utc(2026, 1, 1), "P1W", utc(2026, 1, 8)),
        (utc(2026, 1, 31), "P1M1D", utc(2026, 3, 1)),  # months first, then days
        (utc(2026, 1, 1, 23, 30), "PT45M", utc(2026, 1, 2, 0, 15)),
        (utc(2026, 1, 1), "PT0.5S", utc(2026, 1, 1, 0, 0, 0) + timedelta(milliseconds=500)),
        (utc(2026, 1, 1), "PT0S", utc(2026, 1, 1)),
        (utc(2026, 2, 28), "P1Y1M1DT1H1M1S", utc(2027, 3, 29, 1, 1, 1)),
    ],
)
def test_add_duration(moment: datetime, text: str, expected: datetime) -> None:
    assert add_duration(moment, parse_duration(text)) == expected


def test_add_duration_keeps_the_moments_offset_and_reads_naive_as_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    # Jan 31 23:30 at +02:00 is Jan 31 21:30 UTC: the month is moved on the local calendar.
    moment = datetime(2026, 1, 31, 23, 30, tzinfo=plus_two)
    moved = add_duration(moment, parse_duration("P1MT1H"))
    assert moved == datetime(2026, 3, 1, 0, 30, tzinfo=plus_two)
    assert moved.utcoffset() == timedelta(hours=2)
    assert add_duration(datetime(2026, 1, 1), parse_duration("PT1H")) == utc(2026, 1, 1, 1)


def test_days_are_calendar_days_in_a_zone_with_daylight_saving() -> None:
    zoneinfo = pytest.importorskip("zoneinfo")
    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    before = datetime(2026, 3, 28, 12, tzinfo=berlin)  # the clocks go forward on March 29
    assert add_duration(before, parse_duration("P1D")) == datetime(2026, 3, 29, 12, tzinfo=berlin)
    later = add_duration(before, parse_duration("PT24H"))  # elapsed time: 13:00 the next day
    assert later.astimezone(UTC) - before.astimezone(UTC) == hours(24)
    assert (later.day, later.hour) == (29, 13)


# --- dates -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-24T18:00:00Z", utc(2026, 12, 24, 18)),
        ("2026-12-24T18:00:00", utc(2026, 12, 24, 18)),
        ("2026-12-24T18:00", utc(2026, 12, 24, 18)),
        ("2026-12-24T18:00:00.250Z", utc(2026, 12, 24, 18) + timedelta(milliseconds=250)),
        ("2026-12-24T18:00:00+01:00", utc(2026, 12, 24, 17)),
        ("2026-12-24T18:00:00-05:30", utc(2026, 12, 24, 23, 30)),
        ("2026-12-24", utc(2026, 12, 24)),
        ("20261224T180000Z", utc(2026, 12, 24, 18)),
        (" 2026-12-24T18:00:00Z\n", utc(2026, 12, 24, 18)),
    ],
)
def test_parse_date(text: str, expected: datetime) -> None:
    parsed = parse_date(text)
    assert parsed == expected
    assert parsed.tzinfo is not None


def test_parse_date_keeps_the_written_offset() -> None:
    parsed = parse_date("2026-12-24T18:00:00+01:00")
    assert parsed.utcoffset() == timedelta(hours=1)
    assert parse_date("2026-12-24T18:00:00").utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "tomorrow",
        "P1D",
        "PT1H",
        "R3/PT1M",
        "2026-13-01T00:00:00Z",
        "2026-02-30",
        "2026-12-24T25:00:00Z",
        "1234",
        "２０２６-01-01",
        "${date}",
    ],
)
def test_bad_dates_name_the_text(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_date(text)
    assert f"'{text}'" in str(caught.value)


# --- cycles ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("R3/PT10M", Cycle(3, Duration(time=timedelta(minutes=10)))),
        ("R/PT1H", Cycle(None, Duration(time=hours(1)))),
        ("R1/P1M", Cycle(1, Duration(months=1))),
        ("R/P1W", Cycle(None, Duration(days=7))),
        (
            "R5/2026-01-01T10:00:00Z/P1D",
            Cycle(5, Duration(days=1), utc(2026, 1, 1, 10)),
        ),
        (
            "R/2026-01-01T10:00:00/PT30M",
            Cycle(None, Duration(time=timedelta(minutes=30)), utc(2026, 1, 1, 10)),
        ),
        (" R2/PT1S ", Cycle(2, Duration(time=timedelta(seconds=1)))),
    ],
)
def test_parse_cycle(text: str, expected: Cycle) -> None:
    assert parse_cycle(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("PT10M", "is a duration, not a cycle"),
        ("R-1/PT1M", "cannot be negative"),
        ("R0/PT1M", "at least once"),
        ("R3/PT0S", "cannot be zero"),
        ("R3", "is not an ISO 8601 repeating interval"),
        ("R3/", "is not an ISO 8601 duration"),
        ("R3/PT1M/PT1M/PT1M", "is not an ISO 8601 repeating interval"),
        ("R3/PT1H/2026-01-01T00:00:00Z", "ending at a date is not supported"),
        ("R3/2026-01-01T00:00:00Z/2026-02-01T00:00:00Z", "is not an ISO 8601 duration"),
        ("R3/nonsense/PT1H", "'nonsense' is not an ISO 8601 date-time"),
        ("RR/PT1M", "is not an ISO 8601 repeating interval"),
        ("r3/PT1M", "is not an ISO 8601 repeating interval"),
        ("R3.5/PT1M", "is not an ISO 8601 repeating interval"),
        ("0 0 9 * * ?", "looks like a cron expression"),
        ("0 0/5 * * * ?", "looks like a cron expression"),
        ("", "is not an ISO 8601 repeating interval"),
        ("garbage", "is not an ISO 8601 repeating interval"),
        ("R3/PT", "is not an ISO 8601 duration"),
    ],
)
def test_bad_cycles(text: str, fragment: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_cycle(text)
    assert fragment in str(caught.value)
    assert f"'{text}'" in str(caught.value)


# --- when timers fire --------------------------------------------------------------------------

NOW = utc(2026, 5, 10, 12, 0, 0)


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("date", "2026-12-24T18:00:00Z", utc(2026, 12, 24, 18)),
        ("date", "2020-01-01T00:00:00Z", utc(2020, 1, 1)),  # in the past: overdue
        ("date", "2026-12-24T18:00:00+01:00", utc(2026, 12, 24, 17)),
        ("duration", "PT15M", utc(2026, 5, 10, 12, 15)),
        ("duration", "P1M", utc(2026, 6, 10, 12)),
        ("duration", "PT0S", NOW),
        ("cycle", "R3/PT10M", utc(2026, 5, 10, 12, 10)),
        ("cycle", "R/P1D", utc(2026, 5, 11, 12)),
        # A start in the future is the first occurrence.
        ("cycle", "R5/2026-06-01T09:00:00Z/P1D", utc(2026, 6, 1, 9)),
        ("cycle", "R5/2026-05-10T12:00:00Z/P1D", NOW),
        # A start in the past: the first occurrence at or after now.
        ("cycle", "R/2026-05-01T09:00:00Z/P1D", utc(2026, 5, 11, 9)),
        ("cycle", "R/2026-05-10T11:00:00Z/PT30M", NOW),
        ("cycle", "R/2000-01-01T00:00:07Z/PT1M", utc(2026, 5, 10, 12, 0, 7)),
        ("cycle", "R/2026-01-31T08:00:00Z/P1M", utc(2026, 5, 28, 8)),  # Feb 28 onwards
        ("cycle", "R/1990-01-15T00:00:00Z/P1Y", utc(2027, 1, 15)),
        ("cycle", "R/2026-05-10T11:00:00+01:00/PT1H", NOW),
    ],
)
def test_first_due(kind: TimerKind, text: str, expected: datetime) -> None:
    due = first_due(kind, text, NOW)
    assert due == expected
    assert due.utcoffset() == timedelta(0)


def test_first_due_reads_a_naive_now_as_utc() -> None:
    assert first_due("duration", "PT1H", datetime(2026, 1, 1)) == utc(2026, 1, 1, 1)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("date", "PT1H"),
        ("duration", "2026-01-01T00:00:00Z"),
        ("cycle", "PT1H"),
        ("cron", "0 0 * * *"),
        ("duration", "${delay}"),
    ],
)
def test_first_due_rejects_bad_text(kind: str, text: str) -> None:
    with pytest.raises(ValueError):
        first_due(kind, text, NOW)  # type: ignore[arg-type]  # "cron" is no timer kind, on purpose


def test_next_due_steps_from_the_previous_occurrence() -> None:
    cycle = parse_cycle("R3/PT10M")
    assert next_due(cycle, utc(2026, 1, 1, 10)) == utc(2026, 1, 1, 10, 10)
    monthly = parse_cycle("R/2026-01-31T08:00:00Z/P1M")
    due = first_due("cycle", "R/2026-01-31T08:00:00Z/P1M", utc(2026, 1, 1))
    seen = [due]
    for _ in range(4):
        due = next_due(monthly, due)
        seen.append(due)
    # As Camunda: each step adds a month to the previous occurrence.
    assert seen == [
        utc(2026, 1, 31, 8),
        utc(2026, 2, 28, 8),
        utc(2026, 3, 28, 8),
        utc(2026, 4, 28, 8),
        utc(2026, 5, 28, 8),
    ]


def test_next_due_works_on_the_clock_of_the_cycle_start() -> None:
    # Month ends at +02:00: Jan 31 23:00 local is Jan 31 21:00 UTC, stored as UTC by the caller.
    cycle = parse_cycle("R/2026-01-31T23:00:00+02:00/P1M")
    first = first_due("cycle", "R/2026-01-31T23:00:00+02:00/P1M", utc(2026, 1, 1))
    assert first == utc(2026, 1, 31, 21)
    assert next_due(cycle, first) == utc(2026, 2, 28, 21)
    assert next_due(cycle, first.replace(tzinfo=None)) == utc(2026, 2, 28, 21)


def test_unbounded_cycle_keeps_going() -> None:
    cycle = parse_cycle("R/PT1H")
    assert cycle.repetitions is None
    due = first_due("cycle", "R/PT1H", NOW)
    for _ in range(1000):
        due = next_due(cycle, due)
    assert due == NOW + hours(1001)


@pytest.mark.parametrize(
    "text", ["R/0001-01-01T00:00:00Z/P9999Y", "R/2000-01-01T00:00:00Z/P3000000D"]
)
def test_a_cycle_with_no_occurrence_left_before_9999(text: str) -> None:
    with pytest.raises(ValueError, match="9999"):
        first_due("cycle", text, NOW)


@settings(max_examples=60, deadline=None)
@given(
    start=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2030, 1, 1)),
    now=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2030, 1, 1)),
    step=st.sampled_from(["PT1M", "PT7S", "PT1H", "P1D", "P1W", "P1DT1H", "PT1.5S"]),
)
def test_first_occurrence_of_an_exact_cycle_is_on_the_grid_and_not_early(
    start: datetime, now: datetime, step: str
) -> None:
    start, now = start.replace(tzinfo=UTC), now.replace(tzinfo=UTC)
    interval = parse_duration(step).exact_length()
    due = first_due("cycle", f"R/{start.isoformat()}/{step}", now)
    assert due >= now
    assert due == start or (due - start) % interval == timedelta(0)
    assert due - interval < now or due == start


@pytest.mark.parametrize(
    ("kind", "text", "due"),
    [
        ("date", "2026-01-01T00:00:00Z", utc(2026, 1, 1)),
        ("duration", "P1D", utc(2026, 5, 11, 12)),
        ("cycle", "R/PT1H", utc(2026, 5, 10, 13)),
    ],
)
def test_validate_timer_accepts(kind: TimerKind, text: str, due: datetime) -> None:
    validate_timer(kind, text)
    # What it accepts is a timer of this kind, which fires when the text says...
    assert first_due(kind, text, NOW) == due
    # ...and of no other kind.
    for other in ("date", "duration", "cycle"):
        if other != kind:
            with pytest.raises(ValueError, match=f"'{text}'"):
                validate_timer(other, text)


@pytest.mark.parametrize(
    ("kind", "text", "fragment"),
    [
        ("date", "P1D", "is not an ISO 8601 date-time"),
        ("duration", "PT", "is not an ISO 8601 duration"),
        ("cycle", "PT1M", "is a duration, not a cycle"),
        ("weekly", "P1W", "'weekly' is not a timer kind"),
    ],
)
def test_validate_timer_rejects(kind: str, text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        validate_timer(kind, text)


# -- limits ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["R/PT0.000001S", "R3/PT0.5S", "R/2026-01-01T00:00:00Z/PT0.999S"])
def test_a_cycle_faster_than_once_a_second_does_not_deploy_or_start(text: str) -> None:
    with pytest.raises(ValueError, match="at least PT1S"):
        validate_timer("cycle", text)
    with pytest.raises(ValueError, match="at least PT1S"):
        first_due("cycle", text, NOW)
    parse_cycle(text)  # a cycle already running keeps its text


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("duration", "P101Y"),
        ("duration", "P36600D"),
        ("cycle", "R/P100Y1D"),
        ("duration", "P9999Y"),
    ],
)
def test_durations_are_limited_to_100_years(kind: TimerKind, text: str) -> None:
    with pytest.raises(ValueError, match="100 years"):
        validate_timer(kind, text)
    with pytest.raises(ValueError, match="too long|9999"):
        first_due(kind, text, NOW)


def test_the_limits_are_inclusive_and_adjustable() -> None:
    validate_timer("cycle", "R/PT1S")
    validate_timer("duration", "P100Y")
    assert first_due("cycle", "R/PT1S", NOW) == NOW + timedelta(seconds=1)
    fast = TimerLimits(min_cycle_interval=timedelta(milliseconds=100), max_duration_years=1)
    validate_timer("cycle", "R/PT0.1S", fast)
    assert first_due("cycle", "R/PT0.1S", NOW, fast) == NOW + timedelta(milliseconds=100)
    with pytest.raises(ValueError, match="1 years"):
        first_due("duration", "P1Y1D", NOW, fast)


def test_a_bpmn_file_with_a_too_fast_cycle_does_not_deploy() -> None:
    xml = (
        '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" '
        'targetNamespace="t"><process id="p" isExecutable="true">'
        '<startEvent id="s"><timerEventDefinition><timeCycle>R/PT0.000001S</timeCycle>'
        '</timerEventDefinition></startEvent><endEvent id="e"/>'
        '<sequenceFlow id="f" sourceRef="s" targetRef="e"/></process></definitions>'
    )
    with pytest.raises(ModelError, match="at least PT1S"):
        parse_bpmn(xml.encode(), "fast.bpmn")
