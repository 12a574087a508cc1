"""Reads of saved views: a user's views of one list page, by name."""

from __future__ import annotations

from engine.queries import query
from engine.store import views as store
from engine.store.views import SavedViewRow

__all__ = ["SavedViewRow", "of_owner"]

of_owner = query(store.of_owner)
