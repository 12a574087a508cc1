"""The immutable process model. The BPMN parser and the Python builder both produce it.

Nodes and flows are frozen dataclasses; a `ProcessModel` holds them sorted by id so that two models
built in different orders compare equal. Source line numbers are kept for error messages but take
no part in equality; nor do documentation and camunda:properties, kept as read-only data that
changes nothing the engine does.

One module per family, every name re-exported here (`from engine.model import StartEvent`):
`node.py` (what every node shares: `Node`, its kind, listeners, scripts, loops), `events.py`,
`tasks.py`, `gateways.py`, `scopes.py` (subprocesses and call activities), `definition.py`
(`SequenceFlow`, `ProcessModel`) and `limits.py` (`ModelLimits`). The structural rules a model
must satisfy are in engine/model/validation.py.
"""

from engine.language.timers import TimerKind  # declared there
from engine.model.definition import (
    ACTIVITY_TYPES,
    IO_EVENT_TYPES,
    ProcessModel,
    SequenceFlow,
)
from engine.model.events import (
    VARIABLE_EVENTS,
    BoundaryEvent,
    CompensateThrow,
    ConditionalTrigger,
    EndEvent,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    MessageThrow,
    StartEvent,
    TimerDefinition,
    triggers,
)
from engine.model.gateways import (
    EventBasedGateway,
    ExclusiveGateway,
    InclusiveGateway,
    ParallelGateway,
)
from engine.model.limits import (
    DEFAULT_LIMITS,
    MAX_BPMN_BYTES,
    ModelLimits,
)
from engine.model.node import (
    EXECUTION_EVENTS,
    MULTI_INSTANCE_BODY,
    TAKE_EVENT,
    TASK_EVENTS,
    Listener,
    Loop,
    MultiInstance,
    Node,
    NodeKind,
    Properties,
    Script,
    ScriptCondition,
    ScriptFormat,
    StandardLoop,
)
from engine.model.scopes import (
    CallActivity,
    CalledBinding,
    CallMapping,
    SubProcess,
    Transaction,
)
from engine.model.tasks import (
    DECISION_RESULT_MAPPINGS,
    BusinessRuleTask,
    DecisionResultMapping,
    Implemented,
    NoneTask,
    ReceiveTask,
    ScriptTask,
    SendTask,
    ServiceTask,
    UserTask,
)

__all__ = [
    "ACTIVITY_TYPES",
    "BoundaryEvent",
    "BusinessRuleTask",
    "CallActivity",
    "CallMapping",
    "CalledBinding",
    "CompensateThrow",
    "ConditionalTrigger",
    "DECISION_RESULT_MAPPINGS",
    "DEFAULT_LIMITS",
    "DecisionResultMapping",
    "EXECUTION_EVENTS",
    "EndEvent",
    "EventBasedGateway",
    "ExclusiveGateway",
    "IO_EVENT_TYPES",
    "Implemented",
    "InclusiveGateway",
    "IntermediateCatchEvent",
    "IntermediateThrowEvent",
    "Listener",
    "Loop",
    "MAX_BPMN_BYTES",
    "MULTI_INSTANCE_BODY",
    "MessageThrow",
    "ModelLimits",
    "MultiInstance",
    "Node",
    "NodeKind",
    "NoneTask",
    "ParallelGateway",
    "ProcessModel",
    "Properties",
    "ReceiveTask",
    "Script",
    "ScriptCondition",
    "ScriptFormat",
    "ScriptTask",
    "SendTask",
    "SequenceFlow",
    "ServiceTask",
    "StandardLoop",
    "StartEvent",
    "SubProcess",
    "TAKE_EVENT",
    "TASK_EVENTS",
    "TimerDefinition",
    "TimerKind",
    "Transaction",
    "UserTask",
    "VARIABLE_EVENTS",
    "triggers",
]
