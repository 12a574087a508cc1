"""How the console's exports write one value: CSV cells defended against formula injection (text
only: the numbers and times the rows carry are never prefixed), JSON values as plain JSON."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

import pytest

from app.console.exports import check_format, csv_cell, json_value
from engine.errors import BadRequest

MOMENT = datetime(2026, 1, 31, 13, 0, 5, 250_000, tzinfo=timezone(timedelta(hours=1)))


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+2", "'=1+2"),
        ("+49 30 1234", "'+49 30 1234"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("a=1", "a=1"),
        (" =1", " =1"),
        ("", ""),
        (None, ""),
        (-3, "-3"),
        (7, "7"),
        (MOMENT, "2026-01-31T12:00:05.250000+00:00"),
        (UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (["a", "b"], "a,b"),
        (["=x", "b"], "'=x,b"),
        ([], ""),
    ],
)
def test_a_csv_cell(value: object, cell: str) -> None:
    assert csv_cell(value) == cell


def test_json_values_stay_as_they_are() -> None:
    assert json_value("=1+2") == "=1+2"
    assert json_value(MOMENT) == "2026-01-31T12:00:05.250000+00:00"
    assert json_value([UUID(int=2), None, 3]) == ["00000000-0000-0000-0000-000000000002", None, 3]
    assert json_value(datetime(2026, 1, 1, tzinfo=UTC)) == "2026-01-01T00:00:00+00:00"


def test_only_csv_and_json_are_formats() -> None:
    assert check_format("csv") == "csv" and check_format("json") == "json"
    with pytest.raises(BadRequest) as refused:
        check_format("xlsx")
    assert refused.value.detail["field"] == "format"
    assert "'xlsx' is unknown; use csv or json" in refused.value.message
