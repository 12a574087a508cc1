"""Messages (correlated to one waiting instance or message start event) and signals (to all)."""

from __future__ import annotations

from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response

from app.api.body import Body
from app.api.http import Op, Reply, reply, run
from app.api.schemas import BOOLEAN, STRING, VARIABLES_IN, ref, request
from engine.commands.messages import BroadcastSignal, CorrelateMessage
from engine.errors import BadRequest

MESSAGE_BODY = request(
    {
        "message_name": STRING,
        "business_key": STRING,
        "instance_id": STRING,
        "correlation_keys": {
            "type": "object",
            "description": "variables the waiting instance must have with these values",
        },
        "variables": VARIABLES_IN,
        "all": {**BOOLEAN, "description": "deliver to every match instead of exactly one"},
    },
    required=("message_name",),
)
SIGNAL_BODY = request({"signal_name": STRING, "variables": VARIABLES_IN}, required=("signal_name",))


async def correlate(request: Request) -> Response:
    body = await Body.read(request, MESSAGE_BODY)
    raw_instance = body.text("instance_id")
    try:
        instance_id = UUID(raw_instance) if raw_instance is not None else None
    except ValueError:
        raise BadRequest(
            "field 'instance_id' must be an id (a UUID)", field="instance_id"
        ) from None
    command = CorrelateMessage(
        body.required_text("message_name"),
        body.text("business_key"),
        instance_id,
        body.mapping("correlation_keys"),
        body.variables(),
        body.boolean("all", False),
    )
    return reply((await run(request, command)).to_json())


async def signal(request: Request) -> Response:
    body = await Body.read(request, SIGNAL_BODY)
    command = BroadcastSignal(body.required_text("signal_name"), body.variables())
    return reply((await run(request, command)).to_json())


_DELIVERED = {200: Reply("Where it was delivered", ref("Deliveries"))}

operations = [
    Op(
        "POST",
        "/messages",
        correlate,
        "Correlate a message: exactly one match unless `all` (404 for none, 409 for several)",
        body=MESSAGE_BODY,
        body_required=True,
        replies=_DELIVERED,
    ),
    Op(
        "POST",
        "/signals",
        signal,
        "Broadcast a signal to every waiting subscription and signal start event",
        body=SIGNAL_BODY,
        body_required=True,
        replies=_DELIVERED,
    ),
]
