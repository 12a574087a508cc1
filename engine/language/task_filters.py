"""Camunda's task filters as data: the saved task query (the fields POST /task takes), how a
query that extends it merges with it, Camunda's two identity expressions resolved for the caller,
and how the console's task-inbox views and Camunda's task queries map onto each other.

Pure: no SQL. The expressions are recognised by their exact form (`${currentUser()}`,
`${currentUserGroups()}`, spaces allowed inside), never evaluated: any other `${...}` is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from engine.errors import BadRequest

CURRENT_USER = "${currentUser()}"
CURRENT_USER_GROUPS = "${currentUserGroups()}"
_CURRENT_USER = re.compile(r"\$\{\s*currentUser\s*\(\s*\)\s*\}")
_CURRENT_USER_GROUPS = re.compile(r"\$\{\s*currentUserGroups\s*\(\s*\)\s*\}")

# Camunda's expression fields of a task query that name a user, and the field each stands for.
USER_EXPRESSIONS: Mapping[str, str] = {
    "assigneeExpression": "assignee",
    "assigneeLikeExpression": "assigneeLike",
    "ownerExpression": "owner",
    "involvedUserExpression": "involvedUser",
    "candidateUserExpression": "candidateUser",
}
# ... and those that name groups: `${currentUserGroups()}` only.
GROUP_EXPRESSIONS: Mapping[str, str] = {"candidateGroupsExpression": "candidateGroups"}
# Camunda's other expression fields (dates, a single group): no form of theirs is served.
_UNSERVED_EXPRESSIONS = (
    "candidateGroupExpression",
    "dueAfterExpression",
    "dueBeforeExpression",
    "dueDateExpression",
    "followUpAfterExpression",
    "followUpBeforeExpression",
    "followUpBeforeOrNotExistentExpression",
    "followUpDateExpression",
    "createdAfterExpression",
    "createdBeforeExpression",
    "createdOnExpression",
    "processInstanceBusinessKeyExpression",
    "processInstanceBusinessKeyLikeExpression",
    "processDefinitionKeyExpression",
    "taskDefinitionKeyExpression",
)
_VARIABLES = ("processVariables", "taskVariables")


def expression_problem(name: str, value: Any) -> str | None:
    """Why the task query field `name` with `value` is not served, or None when it is."""
    if name in _UNSERVED_EXPRESSIONS:
        return f"'{name}' is not supported: only ${{currentUser()}} and ${{currentUserGroups()}}"
    if name in USER_EXPRESSIONS:
        if isinstance(value, str) and _CURRENT_USER.fullmatch(value):
            return None
        return f"'{name}' must be {CURRENT_USER}, not {value!r}"
    if name in GROUP_EXPRESSIONS:
        if isinstance(value, str) and _CURRENT_USER_GROUPS.fullmatch(value):
            return None
        return f"'{name}' must be {CURRENT_USER_GROUPS}, not {value!r}"
    if isinstance(value, str) and value.startswith("${"):
        # An expression given as a plain field's value: the form its field takes, or none.
        if name in USER_EXPRESSIONS.values() and _CURRENT_USER.fullmatch(value):
            return None
        if name in GROUP_EXPRESSIONS.values() and _CURRENT_USER_GROUPS.fullmatch(value):
            return None
        return f"'{name}': the expression {value!r} is not supported"
    return None


def checked(query: Any, field: str = "query") -> dict[str, Any]:
    """`query` as a saved task query: a JSON object whose expressions are the served forms; its
    fields without a value dropped. A BadRequest names the field."""
    if not isinstance(query, dict):
        raise BadRequest(f"field '{field}' must be a JSON object (a task query)", field=field)
    for name, value in query.items():
        problem = expression_problem(name, value)
        if problem is not None:
            raise BadRequest(f"field '{field}': {problem}", field=field)
    return {name: value for name, value in query.items() if value is not None}


@dataclass(frozen=True)
class Caller:
    """Who a filter runs for: their user id and their groups' ids."""

    user: str | None
    groups: Sequence[str]


def resolved(query: Mapping[str, Any], caller: Caller) -> dict[str, Any]:
    """`query` with its expressions replaced by the caller's user id or groups: each expression
    field becomes the plain field it stands for, and so does a plain `assignee`,
    `candidateUser`... whose value is such an expression."""
    found: dict[str, Any] = {}
    for name, value in query.items():
        target = USER_EXPRESSIONS.get(name) or GROUP_EXPRESSIONS.get(name) or name
        if isinstance(value, str) and _CURRENT_USER.fullmatch(value):
            found[target] = caller.user
        elif isinstance(value, str) and _CURRENT_USER_GROUPS.fullmatch(value):
            found[target] = list(caller.groups)
        elif target not in found or name == target:
            found[target] = value
    return found


def merged(saved: Mapping[str, Any], extending: Mapping[str, Any]) -> dict[str, Any]:
    """The saved query extended as Camunda extends a filter's query: a field the extending query
    gives replaces the saved one (and the saved expression of that field); variable filters are
    merged, an extending one replacing the saved one of the same name and operator; the
    extending sorting comes after the saved one."""
    out = dict(saved)
    for name, value in extending.items():
        if value is None:
            continue
        if name in _VARIABLES:
            out[name] = _merged_variables(saved.get(name), value)
        elif name == "sorting" and isinstance(saved.get(name), list) and isinstance(value, list):
            out[name] = [*saved[name], *value]
        else:
            for expression, plain in (*USER_EXPRESSIONS.items(), *GROUP_EXPRESSIONS.items()):
                if name == plain:
                    out.pop(expression, None)
                elif name == expression:
                    out.pop(plain, None)
            out[name] = value
    return out


def _merged_variables(saved: Any, extending: Any) -> Any:
    if not isinstance(saved, list) or not isinstance(extending, list):
        return extending
    key = _variable_key
    given = {key(item) for item in extending}
    return [*extending, *(item for item in saved if key(item) not in given)]


def _variable_key(item: Any) -> tuple[Any, Any]:
    if isinstance(item, dict):
        return item.get("name"), item.get("operator")
    return None, None


# -- the console's task-inbox views ------------------------------------------------------------

# The console's `show` values that a Camunda task query says exactly, and how.
_SHOW_AS_QUERY: Mapping[str, dict[str, Any]] = {
    "all": {},
    "mine": {"assigneeExpression": CURRENT_USER},
    "unassigned": {"unassigned": True},
    "groups": {"candidateUserExpression": CURRENT_USER},
}
# The inbox's "inbox" view: tasks the user holds, or unassigned ones they are a candidate for;
# a Camunda task query has no field for either-or (it would take orQueries).
INBOX = "inbox"


@dataclass(frozen=True)
class ConsoleView:
    """A console view of the task inbox read as a task filter: the Camunda task query that says
    what it shows (as far as Camunda's fields go), and whether it shows the "inbox" (held or
    candidate), which no field says."""

    query: dict[str, Any]
    inbox: bool


def from_console(query: str, default_show: str) -> ConsoleView:
    """The console view whose normalized query string is `query` as a task filter;
    `default_show`: the view the inbox shows its user when the query names none."""
    fields = dict(parse_qsl(query))
    show = fields.get("show") or default_show
    task_query: dict[str, Any] = {}
    if fields.get("definition"):
        task_query["processDefinitionKey"] = fields["definition"]
    task_query.update(_SHOW_AS_QUERY.get(show, {}))
    return ConsoleView(task_query, show == INBOX)


def to_console(task_query: Mapping[str, Any]) -> str | None:
    """The console's query string that shows exactly what `task_query` finds, or None when the
    console has no filter for some of its fields."""
    rest = dict(task_query)
    definition = rest.pop("processDefinitionKey", None)
    for show, fields in _SHOW_AS_QUERY.items():
        if show != "all" and all(rest.get(k) == v for k, v in fields.items()):
            for k in fields:
                rest.pop(k)
            break
    else:
        show = "all"
    if rest or (definition is not None and not isinstance(definition, str)):
        return None
    return urlencode([("show", show), *([("definition", definition)] if definition else [])])
