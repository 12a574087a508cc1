"""A Bytes or File variable's bytes as a response: downloaded, never shown inline, never sniffed
nor run. The console and /engine-rest serve them the same way."""

from __future__ import annotations

from starlette.responses import Response

from app.guard import raw_file_headers
from engine.language.variables import DEFAULT_MIME_TYPE, FileValue, TypedValue


def binary_response(value: TypedValue, name: str) -> Response:
    """The bytes of `value` (a Bytes or File variable called `name`): a File with its MIME type
    and encoding and its file name to save it as; Bytes as application/octet-stream."""
    found = value.value
    if isinstance(found, FileValue):
        media = found.mime_type or DEFAULT_MIME_TYPE
        if found.encoding:
            media = f"{media}; charset={found.encoding}"
        # Set as given: Starlette would add a charset of its own to a text/* type.
        headers = {**raw_file_headers(found.filename), "Content-Type": media}
        return Response(found.content, headers=headers)
    content = found if isinstance(found, bytes) else b""
    headers = {**raw_file_headers(name), "Content-Type": DEFAULT_MIME_TYPE}
    return Response(content, headers=headers)
