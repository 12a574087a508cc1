"""Camunda's task filters as data (engine/language/task_filters.py): the served expression forms
and the refused ones, their resolution for a caller, Camunda's merge of an extending query, and
the console's inbox views mapped to task queries and back."""

from __future__ import annotations

from typing import Any

import pytest

from engine.errors import BadRequest
from engine.language.task_filters import (
    Caller,
    checked,
    from_console,
    merged,
    resolved,
    to_console,
)

ANN = Caller("ann", ["sales", "support"])


@pytest.mark.parametrize(
    "query",
    [
        {"assigneeExpression": "${currentUser()}"},
        {"assigneeExpression": "${ currentUser( ) }"},
        {"candidateGroupsExpression": "${currentUserGroups()}"},
        {"assignee": "${currentUser()}"},
        {"candidateGroups": "${currentUserGroups()}"},
        {"name": "plain", "priority": 3},
    ],
)
def test_served_forms_pass(query: dict[str, Any]) -> None:
    assert checked(query) == query


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"assigneeExpression": "${execution.getVariable('x')}"}, "assigneeExpression"),
        ({"assigneeExpression": "ann"}, "assigneeExpression"),
        ({"assigneeExpression": "${currentUserGroups()}"}, "assigneeExpression"),
        ({"candidateGroupsExpression": "${currentUser()}"}, "candidateGroupsExpression"),
        ({"dueDateExpression": "${now()}"}, "dueDateExpression"),
        ({"candidateGroupExpression": "${currentUserGroups()}"}, "candidateGroupExpression"),
        ({"assignee": "${currentUserGroups()}"}, "assignee"),
        ({"name": "${'x'.getClass()}"}, "name"),
        ({"assignee": "${currentUser()} "}, "assignee"),
    ],
)
def test_other_expressions_are_refused_naming_the_field(query: dict[str, Any], named: str) -> None:
    with pytest.raises(BadRequest) as refused:
        checked(query)
    assert named in refused.value.message


def test_checked_wants_an_object_and_drops_empty_fields() -> None:
    with pytest.raises(BadRequest):
        checked(["assignee"])
    assert checked({"assignee": None, "name": "n"}) == {"name": "n"}


def test_expressions_resolve_to_the_caller() -> None:
    query = {
        "assigneeExpression": "${currentUser()}",
        "candidateGroupsExpression": "${currentUserGroups()}",
        "involvedUser": "${currentUser()}",
        "name": "Review",
    }
    assert resolved(query, ANN) == {
        "assignee": "ann",
        "candidateGroups": ["sales", "support"],
        "involvedUser": "ann",
        "name": "Review",
    }
    assert resolved({"candidateGroupsExpression": "${currentUserGroups()}"}, Caller("x", [])) == {
        "candidateGroups": []
    }


def test_an_extending_query_merges_as_camunda_extends() -> None:
    saved = {
        "processDefinitionKey": "a",
        "assigneeExpression": "${currentUser()}",
        "processVariables": [
            {"name": "amount", "operator": "gt", "value": 5},
            {"name": "region", "operator": "eq", "value": "north"},
        ],
        "sorting": [{"sortBy": "priority", "sortOrder": "desc"}],
    }
    extending = {
        "processDefinitionKey": "b",
        "assignee": "bob",
        "processVariables": [{"name": "amount", "operator": "gt", "value": 9}],
        "sorting": [{"sortBy": "name", "sortOrder": "asc"}],
        "priority": None,
    }
    assert merged(saved, extending) == {
        "processDefinitionKey": "b",
        "assignee": "bob",
        "processVariables": [
            {"name": "amount", "operator": "gt", "value": 9},
            {"name": "region", "operator": "eq", "value": "north"},
        ],
        "sorting": [
            {"sortBy": "priority", "sortOrder": "desc"},
            {"sortBy": "name", "sortOrder": "asc"},
        ],
    }
    assert merged(saved, {}) == saved


@pytest.mark.parametrize(
    ("console", "query", "inbox"),
    [
        ("show=all", {}, False),
        ("show=mine&definition=k", {"processDefinitionKey": "k",
                                    "assigneeExpression": "${currentUser()}"}, False),
        ("show=unassigned", {"unassigned": True}, False),
        ("show=groups", {"candidateUserExpression": "${currentUser()}"}, False),
        ("show=inbox&definition=k", {"processDefinitionKey": "k"}, True),
    ],
)  # fmt: skip
def test_console_views_map_to_task_queries(
    console: str, query: dict[str, Any], inbox: bool
) -> None:
    view = from_console(console, "all")
    assert (view.query, view.inbox) == (query, inbox)
    if not inbox:
        assert to_console(view.query) == console


def test_a_view_without_show_is_the_default_one() -> None:
    assert from_console("definition=k", "inbox").inbox
    assert from_console("definition=k", "all") == from_console("show=all&definition=k", "inbox")


@pytest.mark.parametrize(
    "query",
    [
        {"name": "Review"},
        {"assigneeExpression": "${currentUser()}", "priority": 5},
        {"assignee": "ann"},
        {"processDefinitionKey": ["k"]},
        {"sorting": [{"sortBy": "name", "sortOrder": "asc"}]},
    ],
)
def test_queries_the_console_cannot_say_have_no_console_view(query: dict[str, Any]) -> None:
    assert to_console(query) is None
