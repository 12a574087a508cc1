"""A script process: one V8 isolate, driven by this process's one thread, serving the scripts
the parent hands it one at a time (see `engine.scripting.hosts`).

Run as `python -I engine/scripting/host.py`: it imports nothing of Interlock (only the standard
library and mini-racer), so nothing of the server's state is in its memory. Requests and answers
are frames on stdin and stdout: a 4-byte big-endian length, then that many bytes of JSON.

    request: {"code": "__interlock_run(...)", "timeout": 1.0, "memory": 67108864}
    answer:  {"answer": "<the prelude's JSON text>"}
             or {"failure": "timeout" | "memory" | "threw", "message": "..."}

Each script is cut off after its `timeout`, and the promise jobs it left run within the same
deadline: the host waits for them (an empty evaluation queued behind them) before it answers. A
script that timed out, ran out of memory, threw past the prelude, or left a global that cannot be
deleted, retires its process: the host answers, then exits, and the parent starts another. End of
input (the parent closed the pipe or died) ends the process too.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

from py_mini_racer import JSEvalException, JSOOMException, JSTimeoutException, MiniRacer

HEADER = struct.Struct(">I")
PRELUDE = Path(__file__).with_name("prelude.js")
# The shortest wait for a script's pending jobs: an empty evaluation takes a fraction of this.
BARRIER_FLOOR_SECONDS = 0.05


def read_frame(stream: BinaryIO) -> bytes | None:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    body = stream.read(size)
    return body if len(body) == size else None


def write_frame(stream: BinaryIO, body: bytes) -> None:
    stream.write(HEADER.pack(len(body)) + body)
    stream.flush()


def serve(racer: MiniRacer, request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Run one script; the answer, and whether this process must retire after answering."""
    timeout = float(request["timeout"])
    started = time.monotonic()
    try:
        answer = racer.eval(request["code"], timeout_sec=timeout, max_memory=int(request["memory"]))
        # Promise jobs the script left run before anything else does: within its deadline.
        remaining = max(timeout - (time.monotonic() - started), BARRIER_FLOOR_SECONDS)
        racer.eval("0", timeout_sec=remaining)
    except JSTimeoutException:
        return {"failure": "timeout"}, True
    except JSOOMException:
        return {"failure": "memory"}, True
    except JSEvalException as exc:
        return {"failure": "threw", "message": str(exc)}, True
    text = str(answer)
    return {"answer": text}, not text.startswith("[true,")


def main() -> None:
    # Ctrl-C in a terminal reaches the whole process group: the parent decides when this ends.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames goes to the parent's pipe
    racer = MiniRacer()
    racer.eval(PRELUDE.read_text(encoding="utf-8"))
    write_frame(stdout, b'{"ready": true}')
    while True:
        request = read_frame(stdin)
        if request is None:
            break
        answer, retire = serve(racer, json.loads(request))
        write_frame(stdout, json.dumps(answer).encode())
        if retire:
            break
    stdout.flush()
    os._exit(0)  # without waiting for an isolate that may still be busy


if __name__ == "__main__":
    main()
