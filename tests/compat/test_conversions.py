"""Camunda's date format, typed values and activity type names, without a server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.camunda.dto import activity_type, format_date, parse_date
from app.camunda.errors import CamundaError
from app.camunda.variables import to_dto, to_typed
from engine.builder import ProcessBuilder
from engine.language.variables import TypedValue
from engine.model import TimerDefinition


def test_dates_use_camundas_format_in_utc() -> None:
    berlin = timezone(timedelta(hours=1))
    assert format_date(datetime(2026, 1, 31, 11, 0, 0, 123456, tzinfo=berlin)) == (
        "2026-01-31T10:00:00.123+0000"
    )
    assert format_date(None) is None
    expected = datetime(2026, 1, 31, 10, 0, tzinfo=UTC)
    for text in (
        "2026-01-31T10:00:00.000+0000",
        "2026-01-31T10:00:00.000 0000",
        "2026-01-31T11:00:00+01:00",
        "2026-01-31T10:00:00Z",
        "2026-01-31T10:00:00",
    ):
        assert parse_date(text) == expected, text


@pytest.mark.parametrize(
    ("dto", "expected"),
    [
        ({"value": "x"}, TypedValue("string", "x")),
        ({"value": 1}, TypedValue("integer", 1)),
        ({"value": 2**31}, TypedValue("long", 2**31)),
        ({"value": 0.5}, TypedValue("double", 0.5)),
        ({"value": False}, TypedValue("boolean", False)),
        ({"value": None}, TypedValue("null", None)),
        ({"value": [1, {"a": 2}]}, TypedValue("json", [1, {"a": 2}])),
        ({"value": "12", "type": "integer"}, TypedValue("integer", 12)),
        ({"value": "12", "type": "Short"}, TypedValue("short", 12)),
        ({"value": 5, "type": "Long"}, TypedValue("long", 5)),
        ({"value": "true", "type": "Boolean"}, TypedValue("boolean", True)),
        ({"value": 3, "type": "String"}, TypedValue("string", "3")),
        ({"value": None, "type": "Null"}, TypedValue("null", None)),
        ({"value": '{"a":1}', "type": "Json"}, TypedValue("json", {"a": 1})),
        ({"value": {"a": 1}, "type": "JSON"}, TypedValue("json", {"a": 1})),
        (
            {"value": "[1]", "type": "Object",
             "valueInfo": {"serializationDataFormat": "application/json"}},
            TypedValue("object", [1]),
        ),
        (
            {"value": "2026-01-31T10:00:00.000+0000", "type": "Date"},
            TypedValue("date", datetime(2026, 1, 31, 10, 0, tzinfo=UTC)),
        ),
    ],
)  # fmt: skip
def test_typed_values_from_clients(dto: dict[str, object], expected: TypedValue) -> None:
    assert to_typed("v", dto) == expected


@pytest.mark.parametrize(
    "dto",
    [
        {"value": "abc", "type": "Integer"},
        {"value": 2**31, "type": "Integer"},
        {"value": 40_000, "type": "Short"},
        {"value": "maybe", "type": "Boolean"},
        {"value": "{", "type": "Json"},
        {"value": "x", "type": "Date"},
        {"value": "not base64!", "type": "Bytes"},
        {"value": "AAAA", "type": "File"},
        {"value": 5, "type": "Xml"},
        {"value": "rO0=", "type": "Object",
         "valueInfo": {"serializationDataFormat": "application/x-java-serialized-object"}},
        "not an object",
    ],
)  # fmt: skip
def test_values_that_do_not_fit_are_invalid_requests(dto: object) -> None:
    with pytest.raises(CamundaError) as raised:
        to_typed("v", dto)
    assert (raised.value.status, raised.value.type) == (400, "InvalidRequestException")


def test_typed_values_for_clients() -> None:
    when = datetime(2026, 1, 31, 10, 0, tzinfo=UTC)
    assert to_dto(TypedValue("date", when)) == {
        "type": "Date",
        "value": "2026-01-31T10:00:00.000+0000",
        "valueInfo": {},
    }
    assert to_dto(TypedValue("json", {"b": [1, "é"]}))["value"] == '{"b":[1,"é"]}'
    assert to_dto(TypedValue("long", 7))["type"] == "Long"
    assert to_dto(TypedValue("null", None)) == {"type": "Null", "value": None, "valueInfo": {}}


def test_activity_types_are_named_as_camunda_names_them() -> None:
    hour = TimerDefinition(kind="duration", text="PT1H")
    model = (
        ProcessBuilder("types")
        .start_event("start")
        .exclusive_gateway("xor", default="x1")
        .parallel_gateway("split")
        .parallel_gateway("join")
        .service_task("ext", topic="t")
        .user_task("user", "User")
        .receive_task("receive", message="m")
        .intermediate_catch_event("timer", timer=hour)
        .boundary_event("late", "user", timer=hour)
        .end_event("end")
        .end_event("stop", terminate=True)
        .flow("xor", "split", id="x1")
        .chain("start", "xor")
        .chain("split", "ext", "join")
        .chain("split", "user", "join")
        .chain("join", "receive", "timer", "end")
        .chain("late", "stop")
        .build()
    )
    names = {node.id: activity_type(node) for node in model.nodes}
    assert names == {
        "start": "startEvent",
        "xor": "exclusiveGateway",
        "split": "parallelGateway",
        "join": "parallelGateway",
        "ext": "serviceTask",
        "user": "userTask",
        "receive": "receiveTask",
        "timer": "intermediateTimer",
        "late": "boundaryTimer",
        "end": "noneEndEvent",
        "stop": "terminateEndEvent",
    }
