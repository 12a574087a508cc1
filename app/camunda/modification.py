"""Process instance modification over Camunda's REST: `POST /process-instance/{id}/modification`
and `POST /modification/execute` (synchronous, one transaction per instance).

`modification_command` turns Camunda's body into the engine's `ModifyInstance` for one instance:
what an asynchronous modification batch runs for each of its instances."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from starlette.responses import Response

from app.camunda import batches
from app.camunda.errors import CamundaError, invalid_request
from app.camunda.http import Call, Endpoint, no_content
from app.camunda.variables import to_typed
from app.params import as_uuid
from engine.commands.modification import ModifyInstance, PreviewModification
from engine.errors import BadRequest, Conflict, NotFound
from engine.semantics.modification import (
    CancelNode,
    CancelToken,
    Instruction,
    StartAfter,
    StartBefore,
    StartOnFlow,
    StartVariable,
)

START_TYPES = ("startBeforeActivity", "startAfterActivity", "startTransition")
TYPES = ("cancel", *START_TYPES)
CANCEL_KEYS = ("activityId", "activityInstanceId", "transitionInstanceId")


def _text(entry: Mapping[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise invalid_request(f"{where}.{key} must be a non-empty string, not {value!r}")
    return value


def _id(entry: Mapping[str, Any], key: str, where: str) -> UUID | None:
    value = _text(entry, key, where)
    if value is None:
        return None
    found = as_uuid(value)
    if str(found) != value.lower():
        raise invalid_request(f"{where}.{key}: '{value}' is no activity instance id")
    return found


def _variables(entry: Mapping[str, Any], where: str) -> tuple[StartVariable, ...]:
    values = entry.get("variables")
    if values is None:
        return ()
    if not isinstance(values, Mapping):
        raise invalid_request(f"{where}.variables must be an object of variables")
    found = []
    for name, dto in values.items():
        try:
            typed = to_typed(str(name), dto)
        except CamundaError as exc:
            raise invalid_request(f"{where}.variables: {exc.message}") from None
        local = dto.get("local", False)
        if not isinstance(local, bool):
            raise invalid_request(f"{where}.variables.{name}.local must be a boolean")
        found.append(StartVariable(str(name), typed, local))
    return tuple(found)


def instruction(entry: Any, index: int) -> Instruction:
    """One of Camunda's modification instructions (a ProcessInstanceModificationInstructionDto)."""
    where = f"instructions[{index}]"
    if not isinstance(entry, Mapping):
        raise invalid_request(f"{where} must be an object")
    kind = entry.get("type")
    if kind not in TYPES:
        raise invalid_request(f"{where}.type must be one of {', '.join(TYPES)}, not {kind!r}")
    if kind == "cancel":
        given = [key for key in CANCEL_KEYS if entry.get(key) is not None]
        if len(given) != 1:
            raise invalid_request(
                f"{where}: for instruction type 'cancel': exactly one, 'activityId', "
                "'activityInstanceId', or 'transitionInstanceId', is required"
            )
        if given == ["activityId"]:
            node_id = _text(entry, "activityId", where)
            assert node_id is not None
            return CancelNode(node_id)
        token = _id(entry, given[0], where)
        assert token is not None
        return CancelToken(token)
    variables = _variables(entry, where)
    ancestor = _id(entry, "ancestorActivityInstanceId", where)
    if kind == "startTransition":
        flow_id = _text(entry, "transitionId", where)
        if flow_id is None:
            raise invalid_request(
                f"{where}: for instruction type 'startTransition': 'transitionId' is required"
            )
        return StartOnFlow(variables, ancestor, flow_id=flow_id)
    node_id = _text(entry, "activityId", where)
    if node_id is None:
        raise invalid_request(f"{where}: for instruction type '{kind}': 'activityId' is required")
    if kind == "startBeforeActivity":
        return StartBefore(variables, ancestor, node_id=node_id)
    return StartAfter(variables, ancestor, node_id=node_id)


def instructions(body: Mapping[str, Any]) -> tuple[Instruction, ...]:
    found = body.get("instructions")
    if not isinstance(found, list) or not found:
        raise invalid_request("'instructions' must be a non-empty list of instructions")
    return tuple(instruction(entry, index) for index, entry in enumerate(found))


def _flag(body: Mapping[str, Any], name: str) -> bool:
    value = body.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise invalid_request(f"'{name}' must be a boolean, not {value!r}")
    return value


def modification_command(instance_id: UUID, body: Any) -> ModifyInstance:
    """The engine command Camunda's modification `body` asks of the instance `instance_id`
    (raises CamundaError 400 for a body that does not fit)."""
    if not isinstance(body, Mapping):
        raise invalid_request("the request body must be a JSON object")
    annotation = body.get("annotation")
    if annotation is not None and not isinstance(annotation, str):
        raise invalid_request(f"'annotation' must be a string, not {annotation!r}")
    return ModifyInstance(
        instance_id,
        instructions(body),
        _flag(body, "skipCustomListeners"),
        _flag(body, "skipIoMappings"),
        annotation,
    )


def modify(call: Call) -> Response:
    command = modification_command(as_uuid(call.path["id"]), call.body)
    try:
        call.engine.run(command)
    except Conflict as exc:  # the instance is suspended or has ended
        raise invalid_request(exc.message) from exc
    return no_content()


def definition_body(call: Call) -> tuple[Mapping[str, Any], str]:
    """The body of a modification of many instances, and its `processDefinitionId`."""
    body = call.body
    if not isinstance(body, Mapping):
        raise invalid_request("the request body must be a JSON object")
    definition_id = body.get("processDefinitionId")
    if not isinstance(definition_id, str) or not definition_id:
        raise invalid_request("'processDefinitionId' is required")
    if body.get("historicProcessInstanceQuery") is not None:
        raise invalid_request("'historicProcessInstanceQuery' is not supported")
    return body, definition_id


def execute(call: Call) -> Response:
    """Modify every selected instance of `processDefinitionId`, one transaction each, in order,
    once each has been tried without writing: a refusal of any leaves them all as they were
    (unless one changed between its try and its turn)."""
    body, definition_id = definition_body(call)
    ids = list(dict.fromkeys(UUID(i) for i in batches._instance_ids(call)))
    if not ids:
        raise invalid_request("Process instance ids is empty")
    parsed = dataclasses.replace(modification_command(ids[0], body), definition_id=definition_id)
    commands = [dataclasses.replace(parsed, instance_id=instance_id) for instance_id in ids]
    # Each instance's modification is tried first (nothing written), so that a refusal of one
    # leaves every instance as it was rather than the ones before it modified.
    for command in commands:
        preview = PreviewModification(
            command.instance_id,
            command.instructions,
            command.skip_custom_listeners,
            command.skip_io_mappings,
            definition_id=command.definition_id,
        )
        _refused_as_400(call, preview)
    for command in commands:
        _refused_as_400(call, command)
    return no_content()


def _refused_as_400(call: Call, command: ModifyInstance | PreviewModification) -> None:
    try:
        call.engine.run(command)
    except (BadRequest, Conflict, NotFound) as exc:
        raise invalid_request(f"process instance {command.instance_id}: {exc.message}") from exc


endpoints = [
    Endpoint("/modification/execute", "POST", execute, body="json"),
    Endpoint("/process-instance/{id}/modification", "POST", modify, body="json"),
]
