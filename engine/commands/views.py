"""Saved views: a console user keeps the filters of a list page under a name, and deletes them.

A view belongs to its owner alone: every command names the owner, and touches only the views of
that owner (another user's view is, to them, a view that does not exist). A view's query is the
page's query string, checked and normalized here: only the page's filter names (see
`engine.queries.lists.FILTERS`), each at most once, empty ones dropped, in the order the page's
form shows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode
from uuid import UUID

from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import OWN_RECORDS, Permit
from engine.errors import BadRequest, Conflict, NotFound
from engine.language.json_input import checked_name, text_problem
from engine.queries.lists import FILTERS
from engine.states import AuditEntity, AuditOperation, ListPage
from engine.store import views as store

MAX_NAME = 100
MAX_QUERY = 4000
# Views one user keeps per page, at most.
MAX_VIEWS = 50


def check_page(page: str) -> ListPage:
    try:
        return ListPage(page)
    except ValueError:
        raise BadRequest(
            f"field 'page' must be one of {', '.join(ListPage)}, not '{page}'", field="page"
        ) from None


def normalized_query(page: ListPage, query: str) -> str:
    """`query` with only `page`'s filters, in the page's order, empty ones dropped."""
    query = query.strip().removeprefix("?")
    if len(query) > MAX_QUERY or text_problem(query):
        raise BadRequest(
            f"field 'query' must be at most {MAX_QUERY} printable characters", field="query"
        )
    known = FILTERS[page]
    found: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in known:
            raise BadRequest(
                f"field 'query' names '{key}', which is no filter of the {page} page; "
                f"its filters: {', '.join(known)}",
                field="query",
            )
        if key in found:
            raise BadRequest(f"field 'query' names the filter '{key}' twice", field="query")
        if text_problem(value):
            raise BadRequest(f"field 'query': the filter '{key}' is not text", field="query")
        found[key] = value.strip()
    return urlencode([(key, found[key]) for key in known if found.get(key)])


@dataclass(frozen=True)
class ViewResult(Result):
    view_id: str
    # Saved under a name the owner already used for this page: its query replaced.
    replaced: bool = False


@dataclass(frozen=True)
class SaveView:
    """Keep `query` as `owner`'s view `title` of `page`, replacing the query of the view of that
    name if there is one. An owner keeps at most MAX_VIEWS views per page."""

    name: ClassVar[str] = "SaveView"
    permits: ClassVar[tuple[Permit, ...]] = OWN_RECORDS
    result_type: ClassVar[type[Result]] = ViewResult

    owner: str
    page: str
    title: str
    query: str

    def execute(self, tx: Tx) -> ViewResult:
        page = check_page(self.page)
        title = checked_name(self.title, MAX_NAME)
        query = normalized_query(page, self.query)
        store.lock_owner(tx.conn, self.owner, page)
        existing = store.find(tx.conn, self.owner, page, title)
        shown = {"page": page.value, "title": title, "query": query}
        if existing is not None:
            store.update_query(tx.conn, existing, query)
            _audit(tx, AuditOperation.UPDATE, existing, after=shown)
            return ViewResult(str(existing), replaced=True)
        if store.count(tx.conn, self.owner, page) >= MAX_VIEWS:
            raise Conflict(
                f"you keep {MAX_VIEWS} views of the {page} page already; delete one first",
                limit=MAX_VIEWS,
            )
        view_id = store.insert(tx.conn, self.owner, page, title, query, tx.now)
        if page is ListPage.TASKS:
            # A view of the inbox is a task filter too (engine/commands/filters.py).
            store.grant_owner(tx.conn, view_id, self.owner)
        _audit(tx, AuditOperation.CREATE, view_id, after=shown)
        return ViewResult(str(view_id))


@dataclass(frozen=True)
class DeleteView:
    """Delete `owner`'s view `view_id`."""

    name: ClassVar[str] = "DeleteView"
    permits: ClassVar[tuple[Permit, ...]] = OWN_RECORDS
    result_type: ClassVar[type[Result]] = ViewResult

    owner: str
    view_id: UUID

    def execute(self, tx: Tx) -> ViewResult:
        if not store.delete(tx.conn, self.owner, self.view_id):
            raise NotFound(f"saved view {self.view_id} does not exist")
        _audit(tx, AuditOperation.DELETE, self.view_id)
        return ViewResult(str(self.view_id))


def _audit(tx: Tx, operation: AuditOperation, view_id: UUID, **fields: Any) -> None:
    """A change of a saved view: the console's configuration of its owner."""
    audit.record(tx, operation, AuditEntity.CONFIGURATION, entity_id=f"view:{view_id}", **fields)
