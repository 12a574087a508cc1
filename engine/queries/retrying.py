"""Instances retrying now (see engine/store/retrying.py): how many, which of a list's rows, and
the failed jobs and external tasks of one instance with their next attempt."""

from __future__ import annotations

from engine.queries import query
from engine.store import retrying as store
from engine.store.retrying import RetryingWork

__all__ = ["RetryingWork", "count", "counts", "of_instance"]

count = query(store.count)
counts = query(store.counts)
of_instance = query(store.of_instance)
