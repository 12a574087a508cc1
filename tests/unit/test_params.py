"""The query-parameter readers of app/params.py: each reads a valid value, refuses NUL and lone
surrogates, values out of range and values of the wrong type with a ParameterError naming the
parameter; each surface answers that error in its own shape."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

import pytest
from starlette.datastructures import QueryParams

from app.camunda.errors import translate
from app.camunda.http import Call
from app.errors import error_response
from app.params import NO_MATCH, ParameterError, Query, as_uuid, parse_time
from engine.errors import BadRequest
from engine.language.json_input import INT64_MAX, INT64_MIN

ID = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"


def query(text: str) -> Query:
    return Query(QueryParams(text))


def refused(read: Callable[[], object], name: str, *words: str) -> ParameterError:
    with pytest.raises(ParameterError) as raised:
        read()
    error = raised.value
    assert isinstance(error, BadRequest)
    assert error.name == name and error.detail == {"field": name}
    assert f"query parameter '{name}'" in error.message
    for word in words:
        assert word in error.message, error.message
    return error


# -- text -----------------------------------------------------------------------------------------


def test_text_reads_a_value_and_takes_empty_as_absent() -> None:
    q = query("name=Ann&empty=&spaced=%20x%20&blank=%20%20")
    assert q.text("name") == "Ann"
    assert q.text("empty") is None and q.text("missing") is None
    assert q.text("empty", "dflt") == "dflt" and q.text("missing", "dflt") == "dflt"
    assert q.text("spaced") == " x "
    assert q.text("spaced", strip=True) == "x"
    assert q.text("blank", strip=True) is None


@pytest.mark.parametrize(
    ("raw", "word"),
    [("a\x00b", "NUL"), ("\x00", "NUL"), ("\ud800", "surrogate"), ("x\udfff", "surrogate")],
)
def test_every_reader_refuses_what_no_text_column_holds(raw: str, word: str) -> None:
    q = Query(QueryParams([("p", raw)]))
    readers: list[Callable[[], object]] = [
        lambda: q.text("p"),
        lambda: q.texts("p"),
        lambda: q.fields(["p"]),
        lambda: q.integer("p"),
        lambda: q.flag("p"),
        lambda: q.uuid("p"),
        lambda: q.uuids("p"),
        lambda: q.csv("p"),
        lambda: q.date("p"),
        lambda: q.one_of("p", ("a",)),
    ]
    for read in readers:
        refused(read, "p", word)


def test_texts_reads_every_value_of_a_repeated_parameter() -> None:
    q = query("var=a%3A1&var=b%3A2&other=x")
    assert q.texts("var") == ["a:1", "b:2"]
    assert q.texts("missing") == []
    refused(lambda: query("var=ok&var=b%00").texts("var"), "var", "NUL")


def test_fields_are_the_stripped_values_a_form_sent() -> None:
    q = query("definition=%20order%20&version=&state=Active&other=x")
    assert q.fields(["definition", "version", "state", "absent"]) == {
        "definition": "order",
        "state": "Active",
    }


# -- integers -------------------------------------------------------------------------------------


def test_integer_reads_within_its_bounds() -> None:
    q = query("n=42&neg=-7&plus=%2B5&big=2147483647&low=-2147483648&empty=")
    assert q.integer("n") == 42
    assert q.integer("neg") == -7
    assert q.integer("plus") == 5
    assert q.integer("big") == 2**31 - 1
    assert q.integer("low") == -(2**31)
    assert q.integer("empty") is None and q.integer("missing") is None
    assert q.integer("missing", 50) == 50
    assert query("n=%207%20").integer("n", strip=True) == 7
    long = query(f"n={INT64_MAX}&m={INT64_MIN}")
    assert long.integer("n", minimum=INT64_MIN, maximum=INT64_MAX) == INT64_MAX
    assert long.integer("m", minimum=INT64_MIN, maximum=INT64_MAX) == INT64_MIN


@pytest.mark.parametrize(
    ("value", "minimum", "maximum", "words"),
    [
        ("2147483648", -(2**31), 2**31 - 1, ("between -2147483648 and 2147483647",)),
        ("-2147483649", -(2**31), 2**31 - 1, ("between",)),
        ("99999999999", 0, 2**31 - 1, ("between 0 and 2147483647",)),
        ("9" * 5000, 0, 2**31 - 1, ("between 0 and 2147483647",)),
        ("0", 1, 500, ("between 1 and 500",)),
        ("501", 1, 500, ("between 1 and 500",)),
        ("-1", 0, 10, ("between 0 and 10",)),
        (str(2**63), INT64_MIN, INT64_MAX, ("between",)),
    ],
)
def test_integer_out_of_range_is_refused(
    value: str, minimum: int, maximum: int, words: tuple[str, ...]
) -> None:
    q = Query(QueryParams([("n", value)]))
    error = refused(lambda: q.integer("n", minimum=minimum, maximum=maximum), "n", *words)
    assert len(error.shown) <= 43


@pytest.mark.parametrize("value", ["abc", "1.5", "1e3", "0x10", "1_000", "\u0663", "--1", " 1"])
def test_integer_of_the_wrong_type_is_refused(value: str) -> None:
    q = Query(QueryParams([("limit", value)]))
    refused(lambda: q.integer("limit"), "limit", "must be an integer")


# -- booleans -------------------------------------------------------------------------------------


def test_flag_reads_true_and_false_in_any_case() -> None:
    q = query("a=true&b=FALSE&c=True&d=1&e=0&empty=")
    assert q.flag("a") is True and q.flag("b") is False and q.flag("c") is True
    assert q.flag("empty") is None and q.flag("missing") is None
    assert q.flag("d", digits=True) is True and q.flag("e", digits=True) is False
    refused(lambda: q.flag("d"), "d", "must be true or false")
    refused(lambda: q.flag("e"), "e", "must be true or false")


@pytest.mark.parametrize("value", ["yes", "2", "t", "truee", "-1"])
def test_flag_of_the_wrong_type_is_refused(value: str) -> None:
    q = Query(QueryParams([("locked", value)]))
    refused(lambda: q.flag("locked", digits=True), "locked", "must be true or false")


# -- ids ------------------------------------------------------------------------------------------


def test_uuid_reads_an_id_and_refuses_anything_else() -> None:
    q = query(f"id={ID}&upper={ID.upper()}&bad=nope&empty=")
    assert q.uuid("id") == UUID(ID)
    assert q.uuid("upper") == UUID(ID)
    assert q.uuid("empty") is None and q.uuid("missing") is None
    refused(lambda: q.uuid("bad"), "bad", "must be an id (a UUID)")
    refused(lambda: query("ids=" + ID + ",nope").uuids("ids"), "ids", "must be an id")


def test_camunda_ids_it_never_issued_match_nothing() -> None:
    call = Call(
        request=None,  # type: ignore[arg-type]
        engine=None,  # type: ignore[arg-type]
        path={},
        query=QueryParams(f"taskId=nope&ids={ID},,nope&ok={ID}"),
        base="",
    )
    assert call.uuid("taskId") == NO_MATCH
    assert call.uuid("ok") == UUID(ID)
    assert call.uuids("ids") == [UUID(ID), NO_MATCH]
    assert as_uuid("nope") == NO_MATCH and as_uuid(ID) == UUID(ID)
    refused(lambda: query("taskId=nope").uuid("taskId"), "taskId")


def test_csv_reads_camundas_comma_lists() -> None:
    q = query("keys=a,b,,c&one=a&empty=&commas=,,")
    assert q.csv("keys") == ["a", "b", "c"]
    assert q.csv("one") == ["a"]
    assert q.csv("empty") is None and q.csv("missing") is None
    assert q.csv("commas") == []
    assert query(f"ids={ID},{ID}").uuids("ids") == [UUID(ID), UUID(ID)]


# -- dates and times ------------------------------------------------------------------------------


def test_date_reads_iso_8601_and_camundas_format() -> None:
    plus_one = timezone(timedelta(hours=1))
    expected = datetime(2025, 1, 31, 12, 0, tzinfo=plus_one)
    for text in (
        "2025-01-31T12:00:00%2B01:00",
        "2025-01-31T12:00:00.000%2B0100",
        "2025-01-31T12:00:00.000+0100",  # the + arrived as a space
        "2025-01-31T11:00:00Z",
    ):
        q = query(f"at={text}")
        assert q.date("at") == expected, text
        assert q.date("at", offset_required=True) == expected, text
    naive = query("at=2025-01-31T12:00:00")
    assert naive.date("at") == datetime(2025, 1, 31, 12, tzinfo=UTC)
    refused(lambda: naive.date("at", offset_required=True), "at", "with an offset")
    assert query("at=").date("at") is None and query("").date("at") is None
    assert parse_time("2025-01-31T12:00:00") == datetime(2025, 1, 31, 12, tzinfo=UTC)


@pytest.mark.parametrize("value", ["yesterday", "2025-13-01", "2025-01-31T25:00:00Z", "12"])
def test_date_of_the_wrong_type_is_refused(value: str) -> None:
    q = Query(QueryParams([("started_after", value)]))
    refused(lambda: q.date("started_after"), "started_after", "must be a date and time")
    refused(
        lambda: q.date("started_after", offset_required=True),
        "started_after",
        "must be an ISO 8601 time with an offset",
    )


# -- words ----------------------------------------------------------------------------------------


def test_one_of_reads_only_its_choices() -> None:
    q = query("sortOrder=asc&bad=up&case=ASC")
    assert q.one_of("sortOrder", ("asc", "desc")) == "asc"
    assert q.one_of("missing", ("asc", "desc")) is None
    refused(lambda: q.one_of("bad", ("asc", "desc")), "bad", "must be one of asc, desc")
    refused(lambda: q.one_of("case", ("asc", "desc")), "case")


# -- each surface's answer ------------------------------------------------------------------------


def test_each_surface_answers_the_error_in_its_own_shape() -> None:
    with pytest.raises(ParameterError) as raised:
        query("maxResults=" + "9" * 80).integer("maxResults")
    error = raised.value

    native = error_response(error)
    assert native.status_code == 400
    assert json.loads(bytes(native.body)) == {
        "type": "BadRequest",
        "message": "query parameter 'maxResults' must be between -2147483648 and 2147483647",
        "detail": {"field": "maxResults"},
    }

    camunda = translate(error)
    assert camunda.status == 400 and camunda.type == "InvalidRequestException"
    assert camunda.message == (
        "Cannot set query parameter 'maxResults' to value '"
        + "9" * 40
        + "...': the value must be between -2147483648 and 2147483647"
    )

    with pytest.raises(ParameterError) as raised:
        Query(QueryParams([("businessKey", "a\x00b")])).text("businessKey")
    assert translate(raised.value).message == (
        "Cannot set query parameter 'businessKey' to value 'a\\x00b': "
        "the value must not contain a NUL character (\\x00)"
    )
