"""Users and the identity service: `/user` (list, count, create, profile, credentials, delete,
unlock, options), `/identity/groups` and `/identity/verify`, as Camunda 7's REST reference gives
them. Changes need the admin role; a signed-in user may read their own profile and groups and
change their own password (giving it as authenticatedUserPassword)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app.auth import principal_of, user_id_of
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, found, json_response, listed, no_content, unfiltered
from app.errors import Forbidden
from engine.commands.identity import (
    CreateUserProfile,
    DeleteUser,
    SetUserPassword,
    UnlockUser,
    UpdateUserProfile,
)
from engine.core.executor import Command
from engine.errors import Conflict
from engine.identity.accounts import Role
from engine.queries import accounts as account_reads
from engine.queries import identity as reads
from engine.queries.identity import UserRow


def caller(call: Call) -> str | None:
    """The signed-in user's id; None when authentication is off (everyone acts as admin)."""
    return user_id_of(call.request)


def is_admin(call: Call) -> bool:
    return principal_of(call.request).role.allows(Role.ADMIN)


def visible_to(call: Call) -> str | None:
    """None for admins, who read every row; else the caller, who reads only their own (as in
    Camunda, where a user may read their own user and nothing else by default)."""
    if is_admin(call):
        return None
    return caller(call) or ""


def require_admin_unless_self(call: Call, user_id: str, what: str) -> None:
    """Admins may act on anybody; others only on themselves."""
    if is_admin(call) or caller(call) == user_id:
        return
    principal = principal_of(call.request)
    raise Forbidden(
        f"The user with id '{principal.name}' does not have 'READ' permission on resource"
        f" '{user_id}' of type 'User' ({what} needs the admin role)",
        role=principal.role.value,
        needed=Role.ADMIN.value,
    )


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
        visible_to=visible_to(call),
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
    return links(call, "/user", rels + ([("POST", "/create", "create")] if is_admin(call) else []))


def user_instance_options(call: Call) -> Response:
    user_id = call.path["id"]
    found(user_row(call, user_id), _missing(user_id))
    rels = [("GET", "/profile", "self")]
    if is_admin(call):
        rels += [("DELETE", "", "delete"), ("PUT", "/profile", "update")]
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
    require_admin_unless_self(call, user_id, "reading another user's profile")
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
    require_admin_unless_self(call, user_id, "changing another user's password")
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
    require_admin_unless_self(call, user_id, "reading another user's groups")
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
    Endpoint("/user", "GET", Role.VIEWER, list_users),
    Endpoint("/user", "OPTIONS", Role.VIEWER, user_options),
    Endpoint("/user/count", "GET", Role.VIEWER, count_users),
    Endpoint("/user/create", "POST", Role.ADMIN, create_user, body="json"),
    Endpoint("/user/{id}", "OPTIONS", Role.VIEWER, user_instance_options),
    Endpoint("/user/{id}", "DELETE", Role.ADMIN, delete_user),
    Endpoint("/user/{id}/profile", "GET", Role.VIEWER, get_profile),
    Endpoint("/user/{id}/profile", "PUT", Role.ADMIN, update_profile, body="json"),
    Endpoint("/user/{id}/credentials", "PUT", Role.VIEWER, update_credentials, body="json"),
    Endpoint("/user/{id}/unlock", "POST", Role.ADMIN, unlock_user),
    Endpoint("/identity/groups", "GET", Role.VIEWER, group_info),
    Endpoint("/identity/verify", "POST", Role.ADMIN, verify, body="json"),
]
