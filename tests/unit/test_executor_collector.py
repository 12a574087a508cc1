"""A starting job executor tunes the garbage collector for bursts of jobs and never lowers what
the process chose itself."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from engine.loops.jobs import _YOUNG_COLLECTION_THRESHOLD, _settle_garbage_collector


@pytest.fixture
def collector_state() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.set_threshold(*threshold)
    gc.unfreeze()


def test_settling_freezes_what_exists_and_raises_the_young_threshold(
    collector_state: None,
) -> None:
    gc.unfreeze()
    gc.set_threshold(700, 9, 8)
    _settle_garbage_collector()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (_YOUNG_COLLECTION_THRESHOLD, 9, 8)


def test_settling_keeps_a_higher_threshold_the_process_set(collector_state: None) -> None:
    gc.set_threshold(_YOUNG_COLLECTION_THRESHOLD * 3, 10, 10)
    _settle_garbage_collector()
    assert gc.get_threshold() == (_YOUNG_COLLECTION_THRESHOLD * 3, 10, 10)
