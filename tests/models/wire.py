"""The messages between the crash variant's driver and its engine process
(tests/models/engine_process.py, tests/models/crash_driver.py): pickled tuples behind their
length, between our own test processes."""

from __future__ import annotations

import pickle
import struct
from typing import IO, Any
from uuid import UUID

_HEADER = struct.Struct(">I")


def send(stream: IO[bytes], message: object) -> None:
    data = pickle.dumps(message)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    """The next message, or None once the stream has ended."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    data = stream.read(_HEADER.unpack(header)[0])
    return pickle.loads(data)


class InstanceRef:
    """What a call that returned an instance handle answers: the instance's id."""

    def __init__(self, instance_id: UUID) -> None:
        self.id = instance_id
