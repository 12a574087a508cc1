"""Reads of saved views: a user's views of one list page, by name. A task filter made over REST
is a view of the task inbox too; the console lists it when its query is one the inbox's own
filters say exactly (engine/language/task_filters.py `to_console`)."""

from __future__ import annotations

from engine.language.task_filters import to_console
from engine.queries import Connection, query
from engine.store import views as store
from engine.store.views import SavedViewRow

__all__ = ["SavedViewRow", "of_owner"]


@query
def of_owner(conn: Connection, owner: str, page: str) -> list[SavedViewRow]:
    return [
        row
        for row in store.of_owner(conn, owner, page)
        if row.task_query is None or to_console(row.task_query) is not None
    ]
