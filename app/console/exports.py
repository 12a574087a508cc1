"""Exports of a filtered list (instances, incidents, user tasks) as CSV or JSON, streamed.

A list page's export reads the page's filters with the page's own reader and its rows with the
engine's batched read of the same statement (engine/queries/lists.py), so it holds exactly the
rows the list shows, in the same order, however many: rows go out batch by batch as they are
read, never all in memory, and no database connection is held between batches.

CSV: a header row, then one line per row, quoted by the `csv` module; times in ISO 8601 (UTC),
lists joined by commas, absent values empty. A text cell that starts with `=`, `+`, `-`, `@`, a
tab or a carriage return gets a leading `'`, as OWASP recommends against CSV (formula)
injection: a spreadsheet opening the file shows such text instead of running it as a formula.
JSON: one array of objects (`application/json`), written as the rows are read; times as ISO 8601
strings, values unchanged (no prefix: JSON is data, not a spreadsheet).

The first batch is read before the answer starts, so a filter or the database failing then is a
proper error status; if the database fails later the body ends early (an incomplete file).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse

from engine.errors import BadRequest

FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json"}
# What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

Column = tuple[str, Callable[[Any], Any]]


def check_format(value: str) -> str:
    if value not in FORMATS:
        raise BadRequest(
            f"export format '{value}' is unknown; use {' or '.join(FORMATS)}", field="format"
        )
    return value


def json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value


def csv_cell(value: Any) -> str:
    """One CSV cell: text from the rows defended against formula injection."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, list | tuple):
        return csv_cell(",".join(str(v) for v in value))
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    return str(value)


def _csv(columns: Sequence[Column], batches: Iterator[list[Any]]) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([name for name, _ in columns])
    for batch in batches:
        for row in batch:
            writer.writerow([csv_cell(read(row)) for _, read in columns])
        yield buffer.getvalue().encode("utf-8")
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue().encode("utf-8")


def _json(columns: Sequence[Column], batches: Iterator[list[Any]]) -> Iterator[bytes]:
    separator = "[\n"
    for batch in batches:
        parts = []
        for row in batch:
            record = {name: json_value(read(row)) for name, read in columns}
            parts.append(separator + json.dumps(record, ensure_ascii=False))
            separator = ",\n"
        yield "".join(parts).encode("utf-8")
    yield ("[]\n" if separator == "[\n" else "\n]\n").encode("utf-8")


async def export(
    name: str, format: str, columns: Sequence[Column], batches: Iterator[list[Any]]
) -> StreamingResponse:
    """The rows of `batches` as a download `name-<time>.<format>`."""
    first = await run_in_threadpool(next, batches, None)

    def rows() -> Iterator[list[Any]]:
        if first is not None:
            yield first
            yield from batches

    body = _csv(columns, rows()) if format == "csv" else _json(columns, rows())
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return StreamingResponse(
        body,
        media_type=FORMATS[format],
        headers={
            "Content-Disposition": f'attachment; filename="{name}-{stamp}.{format}"',
            "Cache-Control": "no-store",
        },
    )
