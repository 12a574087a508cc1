"""Ids are unique across threads and forked processes, and increase within one process."""

from __future__ import annotations

import os
import threading
from uuid import UUID

from engine.db.ids import new_id


def test_ids_from_racing_threads_are_unique_and_increase_per_thread() -> None:
    made: list[list[UUID]] = [[] for _ in range(4)]

    def draw(index: int) -> None:
        made[index] = [new_id() for _ in range(5000)]

    threads = [threading.Thread(target=draw, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [i for ids in made for i in ids]
    assert len(set(everything)) == len(everything)
    for ids in made:
        assert ids == sorted(ids)
    assert all(i.version == 7 for i in everything)


def test_a_forked_child_draws_other_random_bits_than_its_parent() -> None:
    new_id()  # the parent holds a partly used buffer of random bytes
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next ids and leave at once
        os.close(read)
        os.write(write, "".join(new_id().hex for _ in range(16)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read()
    os.waitpid(pid, 0)
    parent_random = {new_id().int & ((1 << 62) - 1) for _ in range(16)}
    child_random = {UUID(child[i : i + 32]).int & ((1 << 62) - 1) for i in range(0, 512, 32)}
    assert len(child_random) == 16
    assert not parent_random & child_random
