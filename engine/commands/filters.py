"""Camunda's task filters (/engine-rest/filter): created, changed and deleted as saved views of
the task inbox (engine/commands/views.py keeps the console's), with Camunda's FILTER
authorizations: CREATE on filters to create one, UPDATE or DELETE on the filter to change or
delete it. As Camunda does, a filter's owner is granted every permission on it when it is made,
and the authorizations on a filter go with it.

The saved query is checked here as data (a JSON object, its expressions the served forms, its
size); that its fields are a task query the REST layer's one parser reads is checked there
(app/camunda/filters.py) before the command runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.views import MAX_NAME, MAX_QUERY, MAX_VIEWS, ViewResult
from engine.core import audit, permits
from engine.core.executor import Result, Tx
from engine.core.permits import CREATE_FILTER, DELETE_FILTER, UPDATE_FILTER, Permit
from engine.errors import BadRequest, Conflict, NotFound
from engine.language import task_filters
from engine.language.json_input import checked_name, text_problem
from engine.states import AuditEntity, AuditOperation, ListPage
from engine.store import views as store

# The JSON text of a saved query and of a filter's properties, at most.
MAX_JSON = 16 * 1024


def _owner(owner: str | None) -> str | None:
    if owner is None:
        return None
    if not owner.strip() or len(owner) > MAX_NAME or text_problem(owner):
        raise BadRequest(
            f"field 'owner' must be a user id of at most {MAX_NAME} printable characters",
            field="owner",
        )
    return owner


def _properties(properties: Any) -> dict[str, Any] | None:
    if properties is None:
        return None
    if not isinstance(properties, dict):
        raise BadRequest("field 'properties' must be a JSON object", field="properties")
    if len(json.dumps(properties)) > MAX_JSON:
        raise BadRequest(f"field 'properties' must be at most {MAX_JSON} characters of JSON")
    return properties


def _query(query: Any) -> dict[str, Any]:
    found = task_filters.checked(query)
    if len(json.dumps(found)) > MAX_JSON:
        raise BadRequest(f"field 'query' must be at most {MAX_JSON} characters of JSON")
    return found


def _console_query(task_query: dict[str, Any]) -> str:
    """What the console opens for the filter: the inbox's query string that shows the same tasks,
    empty when the console has no filter for some field (the console lists it not)."""
    return (task_filters.to_console(task_query) or "")[:MAX_QUERY]


@dataclass(frozen=True)
class CreateFilter:
    """A task filter named `title`, owned by `owner` (or nobody), with Camunda's task query
    `query` and `properties`; its owner gets every permission on it. A name its owner already
    gave a view of the inbox is refused; an owner keeps at most MAX_VIEWS of them."""

    name: ClassVar[str] = "CreateFilter"
    permits: ClassVar[tuple[Permit, ...]] = (CREATE_FILTER,)
    result_type: ClassVar[type[Result]] = ViewResult

    owner: str | None
    title: str
    query: dict[str, Any]
    properties: dict[str, Any] | None = None

    def execute(self, tx: Tx) -> ViewResult:
        owner = _owner(self.owner)
        title = checked_name(self.title, MAX_NAME)
        query, properties = _query(self.query), _properties(self.properties)
        page = ListPage.TASKS
        store.lock_owner(tx.conn, owner, page)
        _name_free(tx, owner, title)
        if store.count(tx.conn, owner, page) >= MAX_VIEWS:
            raise Conflict(
                f"{owner or 'nobody'} keeps {MAX_VIEWS} task filters already; delete one first",
                limit=MAX_VIEWS,
            )
        view_id = store.insert(
            tx.conn,
            owner,
            page,
            title,
            _console_query(query),
            tx.now,
            task_query=query,
            properties=properties,
        )
        store.grant_owner(tx.conn, view_id, owner)
        _audit(tx, AuditOperation.CREATE, view_id, after=_shown(owner, title, query))
        return ViewResult(str(view_id))


@dataclass(frozen=True)
class UpdateFilter:
    """Camunda's PUT /filter/{id}: the filter's name, owner, query and properties, all at once."""

    name: ClassVar[str] = "UpdateFilter"
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_FILTER,)
    result_type: ClassVar[type[Result]] = ViewResult

    view_id: UUID
    owner: str | None
    title: str
    query: dict[str, Any]
    properties: dict[str, Any] | None = None

    def execute(self, tx: Tx) -> ViewResult:
        row = store.lock_filter(tx.conn, self.view_id)
        if row is None:
            raise NotFound(f"Filter with id '{self.view_id}' does not exist.")
        permits.check(tx, UPDATE_FILTER, filter=self.view_id)
        owner = _owner(self.owner)
        title = checked_name(self.title, MAX_NAME)
        query, properties = _query(self.query), _properties(self.properties)
        if (owner, title) != (row.owner, row.name):
            store.lock_owner(tx.conn, owner, ListPage.TASKS)
            _name_free(tx, owner, title)
        store.update_filter(
            tx.conn,
            self.view_id,
            owner=owner,
            name=title,
            query=_console_query(query),
            task_query=query,
            properties=properties,
        )
        before = _shown(row.owner, row.name, row.task_query)
        _audit(
            tx,
            AuditOperation.UPDATE,
            self.view_id,
            before=before,
            after=_shown(owner, title, query),
        )
        return ViewResult(str(self.view_id), replaced=True)


@dataclass(frozen=True)
class DeleteFilter:
    """Delete the task filter `view_id` (a view of the inbox, made here or in the console) and
    the authorizations on it."""

    name: ClassVar[str] = "DeleteFilter"
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_FILTER,)
    result_type: ClassVar[type[Result]] = ViewResult

    view_id: UUID

    def execute(self, tx: Tx) -> ViewResult:
        row = store.lock_filter(tx.conn, self.view_id)
        if row is None:
            raise NotFound(f"Filter with id '{self.view_id}' does not exist.")
        permits.check(tx, DELETE_FILTER, filter=self.view_id)
        store.delete_filter(tx.conn, self.view_id)
        _audit(
            tx,
            AuditOperation.DELETE,
            self.view_id,
            before=_shown(row.owner, row.name, row.task_query),
        )
        return ViewResult(str(self.view_id))


def _name_free(tx: Tx, owner: str | None, title: str) -> None:
    if store.find(tx.conn, owner, ListPage.TASKS, title) is not None:
        raise BadRequest(
            f"field 'name': {owner or 'nobody'} has a task filter named '{title}' already",
            field="name",
        )


def _shown(owner: str | None, title: str, query: dict[str, Any] | None) -> dict[str, Any]:
    return {"page": ListPage.TASKS.value, "title": title, "owner": owner, "query": query}


def _audit(tx: Tx, operation: AuditOperation, view_id: UUID, **fields: Any) -> None:
    """A change of a task filter: configuration, as a saved view's."""
    audit.record(tx, operation, AuditEntity.CONFIGURATION, entity_id=f"view:{view_id}", **fields)
