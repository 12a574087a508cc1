"""Log lines: JSON objects with the context bound where they were logged, and never a database
password, in either format."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator

import pytest

from app.settings import Settings
from engine.db.database import Database, redact
from engine.observe import logs

SECRET = "s3cret-Pa55"
INSTANCE = "4a0e1c62-94f1-4b5e-8a7e-2a2f7d0f1c11"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "postgresql://app:s3cret-Pa55@db.example.com:5432/bpm",
            "postgresql://app:***@db.example.com:5432/bpm",
        ),
        (
            "postgresql+psycopg://app:s3cret-Pa55@/bpm?host=%2Ftmp",
            "postgresql+psycopg://app:***@/bpm?host=%2Ftmp",
        ),
        ("at postgres://a:s3cret@Pa55@h/d now", "at postgres://a:***@h/d now"),
        (
            "host=db user=app password=s3cret-Pa55 dbname=bpm",
            "host=db user=app password=*** dbname=bpm",
        ),
        ("host=db password='s3cret Pa55' dbname=bpm", "host=db password=*** dbname=bpm"),
        (
            "postgresql://app@db/bpm?password=s3cret-Pa55&sslmode=require",
            "postgresql://app@db/bpm?password=***&sslmode=require",
        ),
        ("postgresql://app@db/bpm", "postgresql://app@db/bpm"),
        ("write to ops@example.com", "write to ops@example.com"),
    ],
)
def test_redact_hides_every_password(text: str, shown: str) -> None:
    assert redact(text) == shown


def test_neither_the_database_nor_the_settings_show_the_password() -> None:
    url = f"postgresql://app:{SECRET}@db.example.com/bpm"
    database = Database(url=url, embedded=False)
    assert SECRET not in repr(database)
    assert database.shown_url == "postgresql://app:***@db.example.com/bpm"
    assert database.url == url
    assert SECRET not in repr(Settings(database_url=url))


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO, io.StringIO]]:
    """A logger of Interlock's with a JSON handler and a text handler on two streams."""
    logger = logging.getLogger("interlock.test-logs")
    as_json, as_text = io.StringIO(), io.StringIO()
    handlers = [logs.make_handler("json", as_json), logs.make_handler("text", as_text)]
    for handler in handlers:
        logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield logger, as_json, as_text
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
        logger.propagate = True
        logs.clear()


def test_a_json_line_carries_the_bound_context_and_no_password(
    captured: tuple[logging.Logger, io.StringIO, io.StringIO],
) -> None:
    logger, as_json, as_text = captured
    url = f"postgresql://app:{SECRET}@db.example.com/bpm"
    logs.bind(request_id="0123456789abcdef0123456789abcdef", user="alice")
    running = logs.enter_command("StartInstance", uuid.UUID(INSTANCE))
    try:
        logger.info("connecting to %s", url, extra={"duration_ms": 1.5, "color_message": "x"})
    finally:
        logs.leave_command(running)
    try:
        raise RuntimeError(f"could not reach {url}")
    except RuntimeError:
        logger.exception("failed")
    lines = [json.loads(line) for line in as_json.getvalue().splitlines()]
    assert len(lines) == 2
    first, second = lines
    assert first["message"] == "connecting to postgresql://app:***@db.example.com/bpm"
    assert first["level"] == "info"
    assert first["logger"] == "interlock.test-logs"
    assert first["timestamp"].endswith("Z")
    assert first["request_id"] == "0123456789abcdef0123456789abcdef"
    assert first["user"] == "alice"
    assert first["command"] == "StartInstance"
    assert first["instance_id"] == INSTANCE
    assert first["duration_ms"] == 1.5
    assert "color_message" not in first
    # The command's context ended with it; the request's did not.
    assert "command" not in second and second["user"] == "alice"
    assert second["level"] == "error"
    assert (
        "RuntimeError: could not reach postgresql://app:***@db.example.com/bpm"
        in (second["exception"])
    )
    text = as_text.getvalue()
    assert "connecting to postgresql://app:***@db.example.com/bpm" in text
    assert SECRET not in as_json.getvalue() + text


def test_a_wrong_log_format_or_level_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(logs.FORMAT_ENV, "yaml")
    with pytest.raises(ValueError, match="INTERLOCK_LOG_FORMAT must be one of text, json"):
        logs.wanted_format()
    monkeypatch.setenv(logs.FORMAT_ENV, "JSON")
    assert logs.wanted_format() == "json"
    monkeypatch.setenv(logs.LEVEL_ENV, "chatty")
    with pytest.raises(ValueError, match="INTERLOCK_LOG_LEVEL must be one of"):
        logs.wanted_level()
    monkeypatch.setenv(logs.LEVEL_ENV, "debug")
    assert logs.wanted_level() == logging.DEBUG
