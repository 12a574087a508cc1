"""Nodes that hold or start another scope: embedded and event subprocesses, call activities
and their variable mappings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from engine.language.expressions import Expression
from engine.model.node import Node, NodeKind


@dataclass(frozen=True, kw_only=True)
class SubProcess(Node):
    """An embedded subprocess: a scope whose nodes name it as `parent`. An event subprocess
    (`triggered_by_event`) has no flows in or out and starts when its start event triggers."""

    triggered_by_event: bool = False

    _kind = NodeKind.SUB_PROCESS


@dataclass(frozen=True, kw_only=True)
class Transaction(SubProcess):
    """A transaction subprocess (`bpmn:transaction`): an embedded subprocess that a cancel end
    event inside it cancels. Cancelling ends its other work, compensates what completed inside
    it (newest first), then leaves through its cancel boundary event. Otherwise it runs as an
    embedded subprocess."""

    _kind = NodeKind.TRANSACTION


CalledBinding = Literal["latest", "deployment", "version", "versionTag"]


@dataclass(frozen=True, kw_only=True)
class CallMapping:
    """One `camunda:in` or `camunda:out` of a call activity: every variable (`all`), one variable
    `source` or the value of `source_expression` copied to `target`, or (`business_key`, in
    only) the called instance's business key: the value of `source_expression`, or the constant
    `source`. `local`: an in reads only
    the call activity's own locals; an out sets locals of the call activity."""

    all: bool = False
    source: str | None = None
    source_expression: Expression | None = None
    target: str | None = None
    local: bool = False
    business_key: bool = False
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class CallActivity(Node):
    """Starts an instance of the process `called_element` (a key, or a `${...}` expression that
    yields one) and waits until it ends. `binding` picks its version: the latest, the one
    deployed with the caller (`deployment`), `version` (a number or an expression) or the latest
    with `version_tag`. `tenant_id`: `camunda:calledElementTenantId` as written, the tenant (or a
    `${...}` expression naming it; null: no tenant) whose definitions are called; None: the
    calling instance's own tenant."""

    called_element: str
    binding: CalledBinding = "latest"
    version: str | None = None
    version_tag: str | None = None
    tenant_id: str | None = None
    inputs: tuple[CallMapping, ...] = ()
    outputs: tuple[CallMapping, ...] = ()

    _kind = NodeKind.CALL_ACTIVITY
