"""Time-ordered UUIDs (version 7 layout): new rows land at the right edge of their indexes."""

from __future__ import annotations

import os
import threading
import time
import uuid

_lock = threading.Lock()
_last_ms = 0
_counter = 0
# Random bytes drawn from the system 4 KiB at a time: one system call for 512 ids, not each.
_RANDOM_CHUNK = 4096
_random = b""
_random_at = 0


def _forget_random() -> None:
    """A forked child must not hand out the random bytes its parent will also use."""
    global _random, _random_at
    _random, _random_at = b"", 0


os.register_at_fork(after_in_child=_forget_random)


def new_id() -> uuid.UUID:
    """48 bits of Unix milliseconds, a 12-bit counter that keeps ids from one process increasing
    within a millisecond, and 62 random bits."""
    global _last_ms, _counter, _random, _random_at
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            _counter += 1
            if _counter > 0xFFF:
                _last_ms += 1
                _counter = 0
            ms = _last_ms
        else:
            _last_ms = ms
            _counter = 0
        counter = _counter
        if _random_at >= len(_random):
            _random, _random_at = os.urandom(_RANDOM_CHUNK), 0
        random_bytes = _random[_random_at : _random_at + 8]
        _random_at += 8
    rand = int.from_bytes(random_bytes, "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | counter << 64 | 0b10 << 62 | rand
    return uuid.UUID(int=value)
