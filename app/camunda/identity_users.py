"""Users and the identity service: `/user` (list, count, create, profile, credentials, delete,
unlock, options), `/identity/groups` and `/identity/verify`, as Camunda 7's REST reference gives
them. Changes are the commands' to allow (USER permissions); a signed-in user may read their own
profile and groups and change their own password (giving it as authenticatedUserPassword), and
reads another's with READ on them."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app import gates
from app.auth import user_id_of
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, found, json_response, listed, no_content, unfiltered
from app.gates import Gate
from engine.commands.identity import (
    CreateUserProfile,
    DeleteUser,
    SetUserPassword,
    UnlockUser,
    UpdateUserProfile,
)
from engine.core import actors, permits
from engine.core.executor import Command
from engine.core.permits import CREATE_USER, DELETE_USER, UPDATE_OWN_USER, Permit
from engine.errors import Conflict
from engine.queries import accounts as account_reads
from engine.queries import identity as reads
from engine.queries.identity import UserRow


def caller(call: Call) -> str | None:
    """The signed-in user's id; None when authentication is off (everyone acts as admin)."""
    return user_id_of(call.request)


def may(needed: Permit, **facts: Any) -> bool:
    """Whether the caller holds `needed` (what the command it names would check), for the links
    an OPTIONS request offers."""
    return permits.holds(actors.current(), needed, **facts)


def run(call: Call, command: Command[Any]) -> None:
    """Run an identity command; a refusal (an id taken, leaving no admin) is a bad request."""
    try:
        call.engine.run(command)
    except Conflict as exc:
        raise invalid_request(exc.message) from exc


def text_field(body: Any, name: str, owner: str) -> str | None:
    """A string field of a JSON object (`owner` names the object in the message)."""
    if not isinstance(body, dict):
        return None
    value = body.get(name)
    if value is None or isinstance(value, str):
        return value
    raise invalid_request(f"'{owner}{name}' must be a string, not {value!r}")


def _object(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid_request(f"'{name}' must be a JSON object")
    return value


def profile(user: UserRow) -> dict[str, Any]:
    return {
        "id": user.id,
        "firstName": user.first_name,
        "lastName": user.last_name,
        "email": user.email,
    }


def _query(call: Call, *, count: bool = False) -> list[UserRow] | int:
    return reads.users(
        call.engine,
        call.page(reads.USER_SORT),
        user_id=call.text("id"),
        user_ids=call.csv("idIn"),
        first_name=call.text("firstName"),
        first_name_like=call.text("firstNameLike"),
        last_name=call.text("lastName"),
        last_name_like=call.text("lastNameLike"),
        email=call.text("email"),
        email_like=call.text("emailLike"),
        member_of_group=call.text("memberOfGroup"),
        member_of_tenant=call.text("memberOfTenant"),
        count=count,
    )


def user_row(call: Call, user_id: str) -> UserRow | None:
    rows = listed(reads.users(call.engine, unfiltered(call).page({}), user_id=user_id))
    return rows[0] if rows else None


def _missing(user_id: str) -> str:
    return f"User with id {user_id} does not exist"


def list_users(call: Call) -> Response:
    return json_response([profile(row) for row in listed(_query(call))])


def count_users(call: Call) -> Response:
    return json_response({"count": _query(call, count=True)})


def links(call: Call, path: str, rels: list[tuple[str, str, str]]) -> Response:
    """Camunda's resource options: the operations the caller may use, as links."""
    return json_response(
        {
            "links": [
                {"method": method, "href": f"{call.base}{path}{suffix}", "rel": rel}
                for method, suffix, rel in rels
            ]
        }
    )


def user_options(call: Call) -> Response:
    rels = [("GET", "", "list"), ("GET", "/count", "count")]
    return links(
        call, "/user", rels + ([("POST", "/create", "create")] if may(CREATE_USER) else [])
    )


def user_instance_options(call: Call) -> Response:
    user_id = call.path["id"]
    found(user_row(call, user_id), _missing(user_id))
    rels = [("GET", "/profile", "self")]
    if may(DELETE_USER, user=user_id):
        rels.append(("DELETE", "", "delete"))
    if may(UPDATE_OWN_USER, user=user_id):
        rels.append(("PUT", "/profile", "update"))
    return links(call, f"/user/{user_id}", rels)


def create_user(call: Call) -> Response:
    body = _object(call.body, "body")
    given = _object(body.get("profile"), "profile")
    user_id = text_field(given, "id", "profile.")
    if not user_id:
        raise invalid_request("'profile.id' is required: the new user's id")
    password = text_field(
        _object(body.get("credentials"), "credentials"), "password", "credentials."
    )
    run(
        call,
        CreateUserProfile(
            user_id,
            text_field(given, "firstName", "profile."),
            text_field(given, "lastName", "profile."),
            text_field(given, "email", "profile."),
            password,
        ),
    )
    return no_content()


def get_profile(call: Call) -> Response:
    user_id = call.path["id"]
    gates.demand_readable_user(actors.current(), user_id)
    return json_response(profile(found(user_row(call, user_id), _missing(user_id))))


def update_profile(call: Call) -> Response:
    user_id = call.path["id"]
    body = _object(call.body, "body")
    new_id = text_field(body, "id", "")
    if new_id is not None and new_id != user_id:
        raise invalid_request(f"'id' must be the user's id '{user_id}': a user id cannot change")
    run(
        call,
        UpdateUserProfile(
            user_id,
            text_field(body, "firstName", ""),
            text_field(body, "lastName", ""),
            text_field(body, "email", ""),
        ),
    )
    return no_content()


def update_credentials(call: Call) -> Response:
    user_id = call.path["id"]
    body = _object(call.body, "body")
    password = text_field(body, "password", "")
    if password is None:
        raise invalid_request("'password' is required: the new password")
    run(
        call,
        SetUserPassword(
            user_id, password, caller(call), text_field(body, "authenticatedUserPassword", "")
        ),
    )
    return no_content()


def delete_user(call: Call) -> Response:
    run(call, DeleteUser(call.path["id"]))
    return no_content()


def unlock_user(call: Call) -> Response:
    user_id = call.path["id"]
    run(call, UnlockUser(user_id))
    authenticator = getattr(call.request.app.state, "authenticator", None)
    if authenticator is not None:
        authenticator.throttle.forget(user_id)
    return no_content()


# -- the identity service ------------------------------------------------------------------------


def _display_name(user: UserRow) -> str:
    if user.first_name is None and user.last_name is None:
        return user.id
    return " ".join(part for part in (user.first_name, user.last_name) if part is not None)


def group_info(call: Call) -> Response:
    user_id = call.text("userId")
    if user_id is None:
        raise invalid_request("No user id was supplied")
    gates.demand_readable_user(actors.current(), user_id)
    groups = listed(reads.groups(call.engine, unfiltered(call).page({}), member=user_id))
    groups.sort(key=lambda group: (group.name is None, group.name or "", group.id))
    fellows = reads.fellow_members(call.engine, [group.id for group in groups])
    return json_response(
        {
            "groups": [{"id": group.id, "name": group.name} for group in groups],
            "groupUsers": [
                {
                    "id": user.id,
                    "firstName": user.first_name,
                    "lastName": user.last_name,
                    "displayName": _display_name(user),
                }
                for user in fellows
                if user.id != user_id
            ],
        }
    )


def verify(call: Call) -> Response:
    body = _object(call.body, "body")
    username = text_field(body, "username", "")
    password = text_field(body, "password", "")
    if username is None or password is None:
        raise invalid_request("Username and password are required")
    principal = account_reads.verify_password(call.engine, username, password)
    return json_response({"authenticatedUser": username, "authenticated": principal is not None})


endpoints = [
    Endpoint("/user", "GET", list_users),
    Endpoint("/user", "OPTIONS", user_options),
    Endpoint("/user/count", "GET", count_users),
    Endpoint("/user/create", "POST", create_user, body="json"),
    Endpoint("/user/{id}", "OPTIONS", user_instance_options),
    Endpoint("/user/{id}", "DELETE", delete_user),
    Endpoint("/user/{id}/profile", "GET", get_profile),
    Endpoint("/user/{id}/profile", "PUT", update_profile, body="json"),
    Endpoint("/user/{id}/credentials", "PUT", update_credentials, body="json"),
    Endpoint("/user/{id}/unlock", "POST", unlock_user),
    Endpoint("/identity/groups", "GET", group_info),
    Endpoint("/identity/verify", "POST", verify, body="json", gate=Gate.ADMINISTER),
]
