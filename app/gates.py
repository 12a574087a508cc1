"""What a route asks of its caller before it runs, declared once for the three surfaces.

Every route needs an authenticated principal, and nothing more by default (`Gate.SIGNED_IN`):
what the caller may do is decided by authorizations alone. A mutation runs a command, which
checks the permits it declares inside its transaction (engine/core/permits.py); a read narrows
its rows by the caller's grants (`Where.authorized`). Neither is repeated here.

The few routes that run no command with a permit and read no narrowed rows (settings and
administration pages, the audit log, sessions and credentials, whole-type
identity lists) name a `Gate`, and `GATES` says which Camunda authorization each needs. What was
decided, so that the built-in groups keep exactly what their roles gave:

- `APPLICATION`: ACCESS on the application `*` (every viewer holds it): the console's settings
  pages and configuration reads (history cleanup, webhooks, workers);
- `AUDIT`: UPDATE_HISTORY on every process definition (what annotating the audit log needs;
  operators hold it): the audit log;
- `OPERATE`: UPDATE on every process instance (operators): computing migration plans, saved
  views (a worker's fetch-and-lock is not gated: it locks only the tasks of instances the
  worker may READ and UPDATE, engine/sql/covers.fetchable);
- `ADMINISTER`: ALL on the authorization resource (admins), as the commands of the same work
  declare (engine/core/permits.ADMINISTER): sessions and credentials, webhook secrets, checking
  another user's password;
- `READ_GROUPS`, `READ_TENANTS`, `READ_AUTHORIZATIONS`: READ on every resource of that type:
  the links an OPTIONS answer offers, another user's authorizations checked, and (READ on every
  authorization) the console's Admin section. The identity lists and look-ups themselves are
  reads narrowed by READ on each row (engine/sql/covers.py), not gated.

A batch's type may ask more of who acts on a batch of it than the batch commands' permits
(UPDATE or DELETE on the batch): `BATCH_TYPE_GATES`, what its items need on every definition.
Reading one user's profile or groups asks READ on that user, or being them
(`demand_readable_user`).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from engine.core import permits
from engine.core.actors import Actor
from engine.core.permits import Facts, Need, Permit, permit
from engine.identity.permissions import ResourceType
from engine.states import BatchType

PD = ResourceType.PROCESS_DEFINITION


class Gate(StrEnum):
    SIGNED_IN = "signed-in"
    APPLICATION = "application"
    AUDIT = "audit"
    OPERATE = "operate"
    ADMINISTER = "administer"
    READ_GROUPS = "read-groups"
    READ_TENANTS = "read-tenants"
    READ_AUTHORIZATIONS = "read-authorizations"


GATES: Mapping[Gate, Permit | None] = {
    Gate.SIGNED_IN: None,
    Gate.APPLICATION: permit(Need("ACCESS", ResourceType.APPLICATION)),
    Gate.AUDIT: permit(Need("UPDATE_HISTORY", PD)),
    Gate.OPERATE: permits.OPERATE,
    Gate.ADMINISTER: permits.ADMINISTER,
    Gate.READ_GROUPS: permit(Need("READ", ResourceType.GROUP)),
    Gate.READ_TENANTS: permit(Need("READ", ResourceType.TENANT)),
    Gate.READ_AUTHORIZATIONS: permit(Need("READ", ResourceType.AUTHORIZATION)),
}

BATCH_TYPE_GATES: Mapping[str, Permit] = {
    BatchType.DELETE_HISTORY.value: permit(Need("DELETE_HISTORY", PD)),
    BatchType.MIGRATE.value: permit(Need("MIGRATE_INSTANCE", PD)),
}


def demand(actor: Actor | None, gate: Gate) -> None:
    """Refuse (AuthorizationDenied, naming what is missing) unless `actor` passes `gate`."""
    needed = GATES[gate]
    if needed is not None:
        permits.demand(actor, needed, Facts({}))


def passes(actor: Actor | None, gate: Gate) -> bool:
    needed = GATES[gate]
    return needed is None or permits.holds(actor, needed)


def demand_batch_type(actor: Actor | None, batch_type: str) -> None:
    """Refuse unless `actor` holds what acting on a batch of `batch_type` needs besides the
    batch commands' own permits."""
    needed = BATCH_TYPE_GATES.get(batch_type)
    if needed is not None:
        permits.demand(actor, needed, Facts({}))


def acts_on_batch_type(actor: Actor | None, batch_type: str) -> bool:
    needed = BATCH_TYPE_GATES.get(batch_type)
    return needed is None or permits.holds(actor, needed)


def demand_readable_user(actor: Actor | None, user_id: str) -> None:
    """Refuse unless `actor` may read the user `user_id` (their profile, their groups): anybody
    reads themselves; another user needs READ on them."""
    permits.demand(actor, permits.READ_OWN_USER, permits.facts_of(user=user_id))
