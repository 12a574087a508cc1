"""camunda:historyTimeToLive on a process (days or an ISO-8601 duration in days, never an
expression), in BPMN files and built models, and the retention settings: the daily window and
the INTERLOCK_* variables."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.bpmn import parse_bpmn
from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.db.retention import CleanupWindow, RetentionSettings
from engine.errors import ModelError
from engine.language.history_ttl import parse_history_ttl

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def process(ttl: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="t">\n'
        f'  <bpmn:process id="kept" isExecutable="true" camunda:historyTimeToLive="{ttl}">\n'
        '    <bpmn:startEvent id="start" />\n'
        "  </bpmn:process>\n"
        "</bpmn:definitions>\n"
    )


@pytest.mark.parametrize(
    ("text", "days"), [("5", 5), ("P5D", 5), ("0", 0), (" 180 ", 180), ("", None)]
)
def test_days_or_a_duration_in_days(text: str, days: int | None) -> None:
    [model] = parse_bpmn(process(text), "kept.bpmn")
    assert model.history_ttl_days == days


def test_a_process_without_one_leaves_it_to_the_setting() -> None:
    [model] = parse_bpmn((DATA / "leave_request.bpmn").read_bytes(), "leave_request.bpmn")
    assert model.history_ttl_days == 30  # P30D
    [model] = parse_bpmn(process("1").replace(' camunda:historyTimeToLive="1"', ""), "k.bpmn")
    assert model.history_ttl_days is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("${days}", "cannot be an expression"),
        ("PT5H", "a duration in days like P5D"),
        ("P1M", "a duration in days like P5D"),
        ("-1", "a duration in days like P5D"),
        ("five", "a duration in days like P5D"),
        ("400000", "between 0 and 365000 days"),
    ],
)
def test_a_bad_value_is_a_deployment_error_naming_file_line_and_element(
    text: str, problem: str
) -> None:
    with pytest.raises(ModelError) as caught:
        parse_bpmn(process(text), "kept.bpmn")
    error = caught.value
    assert (error.file, error.line) == ("kept.bpmn", 3)  # the <bpmn:process> line
    assert "element 'kept'" in error.message and problem in error.message


def test_built_models_carry_it_through_their_bpmn() -> None:
    model = ProcessBuilder("built", history_ttl_days=7).start_event("s").build()
    assert model.history_ttl_days == 7
    [again] = parse_bpmn(write_bpmn([model]), "built.bpmn")
    assert again.history_ttl_days == 7
    with pytest.raises(ModelError, match="between 0 and 365000"):
        ProcessBuilder("built", history_ttl_days=-3)


def test_parse_history_ttl() -> None:
    assert parse_history_ttl("p12d") == 12
    with pytest.raises(ValueError, match="expression"):
        parse_history_ttl("#{x}")


def test_the_window_crosses_midnight() -> None:
    window = CleanupWindow.parse("22:00-06:00")
    assert window is not None and str(window) == "22:00-06:00"

    def at(hour: int, minute: int = 0, day: int = 1) -> datetime:
        return datetime(2030, 1, day, hour, minute, tzinfo=UTC)

    assert window.contains(at(23)) and window.contains(at(5, 59)) and window.contains(at(22))
    assert not window.contains(at(6)) and not window.contains(at(12))
    assert window.next_start(at(12)) == at(22)
    assert window.next_start(at(23)) == at(22, day=2)
    assert window.next_start(at(3)) == at(22)
    assert window.due(at(3)) == at(3) and window.due(at(7)) == at(22)


def test_a_window_within_a_day_and_all_day() -> None:
    window = CleanupWindow.parse("08:30-10:00")
    assert window is not None
    assert window.contains(datetime(2030, 1, 1, 9, tzinfo=UTC))
    assert not window.contains(datetime(2030, 1, 1, 10, tzinfo=UTC))
    assert window.next_start(datetime(2030, 1, 1, 9, tzinfo=UTC)) == datetime(
        2030, 1, 2, 8, 30, tzinfo=UTC
    )
    always = CleanupWindow.parse("00:00-00:00")
    assert always is not None and always.contains(datetime(2030, 5, 5, 13, tzinfo=UTC))
    assert CleanupWindow.parse("off") is None


def test_settings_from_the_environment() -> None:
    assert RetentionSettings.from_env({}) == RetentionSettings()
    assert RetentionSettings().history_ttl_days == 180
    assert str(RetentionSettings().window) == "22:00-06:00"
    settings = RetentionSettings.from_env(
        {
            "INTERLOCK_HISTORY_TTL_DAYS": "none",
            "INTERLOCK_CLEANUP_WINDOW": "off",
            "INTERLOCK_CLEANUP_BATCH_SIZE": "50",
            "INTERLOCK_IDEMPOTENCY_RETENTION_DAYS": "2",
            "INTERLOCK_OUTBOX_RETENTION_DAYS": "3",
        }
    )
    assert settings == RetentionSettings(
        history_ttl_days=None, window=None, batch_size=50, idempotency_days=2, outbox_days=3
    )


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("INTERLOCK_HISTORY_TTL_DAYS", "P5D", "INTERLOCK_HISTORY_TTL_DAYS"),
        ("INTERLOCK_CLEANUP_WINDOW", "22-6", "INTERLOCK_CLEANUP_WINDOW"),
        ("INTERLOCK_CLEANUP_WINDOW", "25:00-06:00", "INTERLOCK_CLEANUP_WINDOW"),
        ("INTERLOCK_CLEANUP_BATCH_SIZE", "0", "batch size"),
        ("INTERLOCK_OUTBOX_RETENTION_DAYS", "-1", "INTERLOCK_OUTBOX_RETENTION_DAYS"),
    ],
)
def test_bad_settings_name_their_variable(variable: str, value: str, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        RetentionSettings.from_env({variable: value})
