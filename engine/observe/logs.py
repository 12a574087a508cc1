"""How Interlock's processes log: one handler on the root logger, writing to stderr.

`INTERLOCK_LOG_FORMAT` picks the format: `text` (the default) writes a human line per record,
`json` one JSON object per line with `timestamp`, `level`, `logger` and `message`, and, where
they apply, `request_id`, `user`, `command`, `instance_id`, `duration_ms` and what else the
record carries (an access line: `method`, `path`, `status`). uvicorn's own loggers write through
the same handler in JSON mode. `INTERLOCK_LOG_LEVEL` (default `info`) is the level of
Interlock's own loggers; other libraries log from warnings up. One line per command is logged
at `debug`, so a busy server's default output is not a line per command.

The context of a line comes from context variables: the HTTP layer binds the request id and the
user (structlog's), the executor marks the command running and its instance (`enter_command`).
Every line, in either format, passes through `redact`: a database URL's password never reaches
the log.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import MutableMapping
from contextvars import ContextVar, Token
from types import TracebackType
from typing import IO, Any

import structlog
from structlog.contextvars import bind_contextvars, bound_contextvars, clear_contextvars

from engine.db.database import redact

__all__ = [
    "bind",
    "bound",
    "clear",
    "configure",
    "enter_command",
    "leave_command",
    "make_handler",
    "redact",
]

FORMAT_ENV = "INTERLOCK_LOG_FORMAT"
LEVEL_ENV = "INTERLOCK_LOG_LEVEL"
FORMATS = ("text", "json")
HUMAN_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The loggers `INTERLOCK_LOG_LEVEL` applies to; other libraries stay at INFO.
OWN_LOGGERS = ("interlock", "engine", "app")
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")
# What a record's `extra=` may add to a JSON line (uvicorn's `color_message` is left out).
FIELDS = (
    "request_id",
    "user",
    "command",
    "instance_id",
    "outcome",
    "duration_ms",
    "method",
    "path",
    "status",
    "client",
)

# The command running in this context and its instance's id (a plain context variable: set
# around every command, it must cost next to nothing).
_Running = tuple[str, object | None]
_COMMAND: ContextVar[_Running | None] = ContextVar("interlock_command", default=None)

bind = bind_contextvars
bound = bound_contextvars
clear = clear_contextvars


class _Redacting(logging.Formatter):
    """Another formatter's output, redacted."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        return redact(self.inner.format(record))


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler `configure` installs (and replaces when called again)."""


def make_handler(log_format: str, stream: IO[str]) -> logging.Handler:
    """A handler writing to `stream` in `log_format` ("text" or "json"), every line redacted."""
    inner = json_formatter() if log_format == "json" else logging.Formatter(HUMAN_FORMAT)
    handler = _Handler(stream)
    handler.setFormatter(_Redacting(inner))
    return handler


def json_formatter() -> logging.Formatter:
    """One JSON object per record: the record's own fields, the context bound where it was
    logged, and its allowed extras."""
    pre_chain: list[Any] = [
        structlog.contextvars.merge_contextvars,
        _add_command,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.ExtraAdder(allow=FIELDS),
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
    ]
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=pre_chain,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.EventRenamer("message"),
            _leading_fields,
            structlog.processors.JSONRenderer(),
        ],
    )


_LEADING = ("timestamp", "level", "logger", "message")


def _leading_fields(logger: Any, method: str, event: MutableMapping[str, Any]) -> dict[str, Any]:
    """The record's own fields first, its context after them: lines read alike."""
    return {
        **{key: event[key] for key in _LEADING if key in event},
        **{key: value for key, value in event.items() if key not in _LEADING},
    }


def wanted_format() -> str:
    """`INTERLOCK_LOG_FORMAT`, checked: `text` or `json`."""
    chosen = (os.environ.get(FORMAT_ENV) or "text").strip().lower()
    if chosen not in FORMATS:
        raise ValueError(f"{FORMAT_ENV} must be one of {', '.join(FORMATS)}, got {chosen!r}")
    return chosen


def wanted_level() -> int:
    """`INTERLOCK_LOG_LEVEL`, checked: debug, info, warning or error."""
    chosen = (os.environ.get(LEVEL_ENV) or "info").strip().upper()
    if chosen not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ValueError(
            f"{LEVEL_ENV} must be one of debug, info, warning, error, got {chosen.lower()!r}"
        )
    level: int = getattr(logging, chosen)
    return level


def configure(log_format: str | None = None, level: int | None = None) -> str:
    """Send every log record to stderr in `log_format` (default: the environment's), with
    Interlock's own loggers at `level`. Returns the format chosen. Raises ValueError for a
    format or level the environment names wrongly."""
    log_format = log_format or wanted_format()
    level = wanted_level() if level is None else level
    handler = make_handler(log_format, sys.stderr)
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Handler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    # Other libraries' chatter (SQL echo, migrations, the embedded server) only from warnings.
    root.setLevel(logging.WARNING)
    for name in OWN_LOGGERS:
        logging.getLogger(name).setLevel(level)
    if log_format == "json":
        for name in UVICORN_LOGGERS:
            found = logging.getLogger(name)
            found.handlers.clear()
            found.propagate = True
        logging.captureWarnings(True)
    # Uncaught exceptions go through the handler too: redacted, and in the chosen format.
    sys.excepthook = _log_uncaught
    threading.excepthook = _log_thread_exception
    return log_format


def _log_uncaught(
    kind: type[BaseException], value: BaseException, traceback: TracebackType | None
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, traceback)
        return
    logging.getLogger("interlock").critical("uncaught %s", kind.__name__, exc_info=value)


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit or args.exc_value is None:
        return
    name = args.thread.name if args.thread is not None else "?"
    logging.getLogger("interlock").error("thread %s failed", name, exc_info=args.exc_value)


def enter_command(name: str, instance_id: object | None) -> Token[_Running | None]:
    """Mark the command `name` (of the instance `instance_id`, if it names one) as running in
    this context until `leave_command` with the token returned."""
    return _COMMAND.set((name, instance_id))


def leave_command(token: Token[_Running | None]) -> None:
    _COMMAND.reset(token)


def _add_command(logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
    running = _COMMAND.get()
    if running is not None:
        event.setdefault("command", running[0])
        if running[1] is not None:
            event.setdefault("instance_id", str(running[1]))
    return event
