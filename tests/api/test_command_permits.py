"""A command refused for want of a permission answers 403 on both HTTP surfaces and in the
console's words, through the app's one table of errors (app/errors.py).

The refusals here are real: each comes from a command run against a real database by a user
whose grants are bound on the actor. The requests' own binding of grants (app/access.py) is not
on main yet, so each refusal is answered through the same functions the servers answer with:
`error_response` (/api/v1), `translate` (/engine-rest) and the console's flash."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from html import unescape
from typing import Any

import pytest

from app.camunda.errors import translate
from app.console.common import refusal
from app.errors import error_response
from app.templating import templates
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.actors import Actor, acting
from engine.errors import AuthorizationDenied
from engine.identity.evaluate import Rule
from engine.identity.grants import grants_of
from engine.identity.permissions import AuthorizationType, ResourceType, permission_bits
from engine.states import AuditChannel, InstanceState

PD, PI = ResourceType.PROCESS_DEFINITION, ResourceType.PROCESS_INSTANCE


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4) as engine:
        engine.deploy(
            ProcessBuilder("order")
            .start_event("start")
            .user_task("approve")
            .end_event("end")
            .chain("start", "approve", "end")
            .build()
        )
        yield engine


def _refused(engine: Engine, act: Callable[[], object], *granted: tuple[Any, str, str]) -> Any:
    rules = [
        Rule(AuthorizationType.GRANT, "ann", None, int(t), rid, permission_bits(t, [p]))
        for t, rid, p in granted
    ]
    with (
        acting(Actor("ann", AuditChannel.API, grants=grants_of("ann", [], rules))),
        pytest.raises(AuthorizationDenied) as refused,
    ):
        act()
    return refused.value


def _api_v1(error: AuthorizationDenied) -> tuple[int, dict[str, Any]]:
    response = error_response(error)
    return response.status_code, json.loads(bytes(response.body))


def _engine_rest(error: AuthorizationDenied) -> tuple[int, dict[str, Any]]:
    response = translate(error).response()
    return response.status_code, json.loads(bytes(response.body))


def test_cancelling_without_delete_is_403_naming_both_permissions(engine: Engine) -> None:
    instance = engine.start_latest("order")
    error = _refused(engine, instance.cancel, (PD, "order", "UPDATE_INSTANCE"))
    assert instance.state is InstanceState.ACTIVE
    message = (
        "The user with id 'ann' does not have one of the following permissions: 'DELETE' "
        f"permission on resource '{instance.id}' of type 'ProcessInstance' or "
        "'DELETE_INSTANCE' permission on resource 'order' of type 'ProcessDefinition'."
    )
    assert _engine_rest(error) == (
        403,
        {
            "type": "AuthorizationException",
            "message": message,
            "userId": "ann",
            "missingAuthorizations": [
                {
                    "permissionName": "DELETE",
                    "resourceName": "ProcessInstance",
                    "resourceId": str(instance.id),
                },
                {
                    "permissionName": "DELETE_INSTANCE",
                    "resourceName": "ProcessDefinition",
                    "resourceId": "order",
                },
            ],
        },
    )
    assert _api_v1(error) == (
        403,
        {
            "type": "Forbidden",
            "message": message,
            "detail": {
                "user_id": "ann",
                "missing": [
                    {
                        "permission": "DELETE",
                        "resource_type": "ProcessInstance",
                        "resource_id": str(instance.id),
                    },
                    {
                        "permission": "DELETE_INSTANCE",
                        "resource_type": "ProcessDefinition",
                        "resource_id": "order",
                    },
                ],
            },
        },
    )


def test_starting_without_create_names_the_one_missing(engine: Engine) -> None:
    error = _refused(engine, lambda: engine.start_latest("order"), (PD, "order", "CREATE_INSTANCE"))
    with engine.connection() as conn:
        assert conn.execute("SELECT count(*) FROM process_instance").fetchone() == (0,)
    status, body = _engine_rest(error)
    assert status == 403 and body["missingAuthorizations"] == [
        {"permissionName": "CREATE", "resourceName": "ProcessInstance", "resourceId": "*"}
    ]
    status, body = _api_v1(error)
    assert status == 403 and body["detail"]["missing"] == [
        {"permission": "CREATE", "resource_type": "ProcessInstance", "resource_id": "*"}
    ]


def test_the_console_flash_says_it_in_the_operators_words(engine: Engine) -> None:
    instance = engine.start_latest("order")
    error = _refused(engine, instance.suspend)
    html = unescape(templates.env.get_template("_flash.html").render(refusal(error)))
    assert 'role="alert"' in html and "Not allowed." in html
    assert (
        f"It needs SUSPEND on process instance '{instance.id}', or UPDATE on process instance "
        f"'{instance.id}', or SUSPEND_INSTANCE on process definition 'order', or "
        "UPDATE_INSTANCE on process definition 'order': an administrator can grant it."
    ) in html
    assert "does not have one of the following permissions" not in html
