"""Parsing, validating, building and writing models grow linearly with the model, and the limits.

Work is counted, not timed: `operations` counts the lines of Python a call executes, every loop
iteration again, which no load on the machine changes. For each shape of model (a chain of tasks,
a parallel split and join, boundary events, nested and sibling subprocesses) doubling the model
must about double the count: a walk over every flow for every node, or over every node for every
subprocess, quadruples it. The large models (a chain of 50,000 tasks, a split of 5,000 branches)
are parsed in full with the limits raised to fit, and models beyond the limits are refused with a
ModelError naming the file, line and element before they are read further.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.core.settings import EngineSettings
from engine.errors import ModelError
from engine.model import DEFAULT_LIMITS, ModelLimits, NoneTask, ParallelGateway, ProcessModel

UNLIMITED = ModelLimits(max_bytes=1 << 40, max_nodes=1 << 40, max_fan_out=1 << 40)

_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="Defs" '
    'targetNamespace="http://bpmn.io/schema/bpmn">\n'
    '<bpmn:message id="Message_1" name="poke"/>\n'
    '<bpmn:process id="p" isExecutable="true">\n'
)
_TAIL = "</bpmn:process>\n</bpmn:definitions>\n"


def _flow(flow_id: str, source: str, target: str) -> str:
    return f'<bpmn:sequenceFlow id="{flow_id}" sourceRef="{source}" targetRef="{target}"/>\n'


def chain(n: int) -> bytes:
    """Start, n tasks one after the other, end."""
    parts = [_HEAD, '<bpmn:startEvent id="Start"/>\n']
    previous = "Start"
    for i in range(n):
        parts += [f'<bpmn:task id="T{i}"/>\n', _flow(f"F{i}", previous, f"T{i}")]
        previous = f"T{i}"
    parts += ['<bpmn:endEvent id="End"/>\n', _flow("FEnd", previous, "End"), _TAIL]
    return "".join(parts).encode()


def split(n: int) -> bytes:
    """Start, a parallel split into n tasks, a join, end."""
    parts = [
        _HEAD,
        '<bpmn:startEvent id="Start"/>\n<bpmn:parallelGateway id="Split"/>\n',
        '<bpmn:parallelGateway id="Join"/>\n<bpmn:endEvent id="End"/>\n',
        _flow("FStart", "Start", "Split"),
        _flow("FEnd", "Join", "End"),
    ]
    for i in range(n):
        parts += [
            f'<bpmn:task id="T{i}"/>\n',
            _flow(f"FIn{i}", "Split", f"T{i}"),
            _flow(f"FOut{i}", f"T{i}", "Join"),
        ]
    return "".join([*parts, _TAIL]).encode()


def boundaries(n: int) -> bytes:
    """A chain of n tasks, each with a message boundary event that leads to an end event."""
    parts = [_HEAD, '<bpmn:startEvent id="Start"/>\n']
    previous = "Start"
    for i in range(n):
        parts += [
            f'<bpmn:task id="T{i}"/>\n',
            _flow(f"F{i}", previous, f"T{i}"),
            f'<bpmn:boundaryEvent id="B{i}" attachedToRef="T{i}">'
            '<bpmn:messageEventDefinition messageRef="Message_1"/></bpmn:boundaryEvent>\n',
            f'<bpmn:endEvent id="BE{i}"/>\n',
            _flow(f"FB{i}", f"B{i}", f"BE{i}"),
        ]
        previous = f"T{i}"
    parts += ['<bpmn:endEvent id="End"/>\n', _flow("FEnd", previous, "End"), _TAIL]
    return "".join(parts).encode()


def nested(n: int) -> bytes:
    """n subprocesses, each inside the one before: start, subprocess, end at every level."""

    def level(i: int) -> str:
        events = f'<bpmn:startEvent id="S{i}"/>\n<bpmn:endEvent id="E{i}"/>\n'
        if i + 1 == n:
            return events + _flow(f"F{i}", f"S{i}", f"E{i}")
        return (
            f'{events}<bpmn:subProcess id="P{i}">\n{level(i + 1)}</bpmn:subProcess>\n'
            + _flow(f"FS{i}", f"S{i}", f"P{i}")
            + _flow(f"FE{i}", f"P{i}", f"E{i}")
        )

    return (_HEAD + level(0) + _TAIL).encode()


def siblings(n: int) -> bytes:
    """A chain of n subprocesses, each holding a start and an end event."""
    parts = [_HEAD, '<bpmn:startEvent id="Start"/>\n']
    previous = "Start"
    for i in range(n):
        parts += [
            f'<bpmn:subProcess id="P{i}"><bpmn:startEvent id="PS{i}"/><bpmn:endEvent id="PE{i}"/>'
            f"{_flow(f'PF{i}', f'PS{i}', f'PE{i}')}</bpmn:subProcess>\n",
            _flow(f"F{i}", previous, f"P{i}"),
        ]
        previous = f"P{i}"
    parts += ['<bpmn:endEvent id="End"/>\n', _flow("FEnd", previous, "End"), _TAIL]
    return "".join(parts).encode()


def operations(call: Callable[[], object]) -> int:
    """The lines of Python `call` executes, each loop iteration's again."""
    count = 0

    def line(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return line

    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: line)
    try:
        call()
    finally:
        sys.settrace(previous)
    return count


def growth(make: Callable[[int], Any], work: Callable[[Any], object], n: int) -> float:
    """How much more work a model twice as large takes (2 when linear, 4 when quadratic)."""
    small, large = make(n), make(2 * n)
    return operations(lambda: work(large)) / operations(lambda: work(small))


# Linear work doubles; allow for the constant part and for n log n, never for n * n.
LINEAR = 2.3


@pytest.mark.parametrize(
    ("shape", "n"),
    [(chain, 1000), (split, 500), (boundaries, 400), (nested, 60), (siblings, 300)],
    ids=["chain", "split", "boundaries", "nested", "siblings"],
)
def test_parsing_grows_linearly(shape: Callable[[int], bytes], n: int) -> None:
    assert growth(shape, lambda data: parse_bpmn(data, "scaling.bpmn"), n) < LINEAR


def built_split(n: int) -> ProcessBuilder:
    builder = ProcessBuilder("wide").start_event("Start").parallel_gateway("Split")
    builder.parallel_gateway("Join").end_event("End").chain("Start", "Split")
    builder.chain("Join", "End")
    for i in range(n):
        builder.task(f"T{i}").chain("Split", f"T{i}", "Join")
    return builder


def built_siblings(n: int) -> ProcessModel:
    builder = ProcessBuilder("siblings").start_event("Start").end_event("End")
    previous = "Start"
    for i in range(n):
        builder.sub_process(f"P{i}").start_event(f"PS{i}", parent=f"P{i}")
        builder.end_event(f"PE{i}", parent=f"P{i}").chain(f"PS{i}", f"PE{i}")
        builder.chain(previous, f"P{i}")
        previous = f"P{i}"
    return builder.chain(previous, "End").build()


def test_building_grows_linearly() -> None:
    assert growth(built_split, lambda builder: builder.build(), 500) < LINEAR


@pytest.mark.parametrize(
    ("make", "n"),
    [(lambda n: built_split(n).build(), 500), (built_siblings, 300)],
    ids=["split", "siblings"],
)
def test_writing_grows_linearly(make: Callable[[int], ProcessModel], n: int) -> None:
    assert growth(make, lambda model: write_bpmn([model]), n) < LINEAR


def test_the_counter_tells_quadratic_work_from_linear() -> None:
    """The measure itself: a walk of every item for every item grows four times per doubling."""

    def quadratic(items: list[int]) -> int:
        return sum(1 for a in items for b in items if a == b)

    def linear(items: list[int]) -> int:
        return sum(1 for a in items if a >= 0)

    assert growth(lambda n: list(range(n)), quadratic, 200) > 3.5
    assert growth(lambda n: list(range(n)), linear, 200) < LINEAR


def test_a_chain_of_50000_tasks_parses_in_full() -> None:
    data = chain(50_000)
    [model] = parse_bpmn(data, "chain.bpmn", UNLIMITED)
    assert len(model.nodes) == 50_002 and len(model.flows) == 50_001
    tasks = [node for node in model.nodes if isinstance(node, NoneTask)]
    assert len(tasks) == 50_000
    assert all(len(task.incoming) == 1 and len(task.outgoing) == 1 for task in tasks)
    assert model.node("T49999").outgoing == ("FEnd",)


def test_a_split_of_5000_branches_parses_in_full() -> None:
    [model] = parse_bpmn(split(5_000), "split.bpmn", UNLIMITED)
    gateway = model.node("Split")
    join = model.node("Join")
    assert isinstance(gateway, ParallelGateway) and isinstance(join, ParallelGateway)
    assert gateway.outgoing == tuple(f"FIn{i}" for i in range(5_000))
    assert join.incoming == tuple(f"FOut{i}" for i in range(5_000)) and join.is_join


def test_the_engine_settings_default_to_the_model_limits() -> None:
    settings = EngineSettings()
    assert settings.max_bpmn_bytes == DEFAULT_LIMITS.max_bytes
    assert settings.max_process_nodes == DEFAULT_LIMITS.max_nodes == 10_000
    assert settings.max_fan_out == DEFAULT_LIMITS.max_fan_out == 1_000


def _line_of(data: bytes, marker: str) -> int:
    text = data.decode()
    return text[: text.index(marker)].count("\n") + 1


def test_more_nodes_than_the_limit_are_refused_naming_the_first_one_over() -> None:
    data = chain(DEFAULT_LIMITS.max_nodes)  # and a start and an end event
    with pytest.raises(ModelError) as refused:
        parse_bpmn(data, "big.bpmn")
    # The start event and 9,999 tasks fit; the 10,000th task is one too many.
    error = refused.value
    assert error.file == "big.bpmn" and error.element_id == "T9999"
    assert error.line == _line_of(data, '<bpmn:task id="T9999"/>')
    assert "more than 10000 flow nodes" in error.message and "max_process_nodes" in error.message
    # Raised, the limit lets it through; a process at the limit passes by default.
    limits = ModelLimits(max_nodes=DEFAULT_LIMITS.max_nodes + 2)
    assert len(parse_bpmn(data, "big.bpmn", limits)[0].nodes) == 10_002
    assert len(parse_bpmn(chain(DEFAULT_LIMITS.max_nodes - 2), "fits.bpmn")[0].nodes) == 10_000


def test_the_node_limit_counts_nodes_inside_subprocesses() -> None:
    data = siblings(40)  # 40 subprocesses of 3 nodes each, a start and an end: 122 nodes
    with pytest.raises(ModelError) as refused:
        parse_bpmn(data, "deep.bpmn", ModelLimits(max_nodes=100))
    # Start, then P0, PS0, PE0, P1, ...: the 101st node is the subprocess P33.
    assert refused.value.element_id == "P33"
    assert refused.value.line == _line_of(data, 'id="P33"')
    assert len(parse_bpmn(data, "deep.bpmn", ModelLimits(max_nodes=122))[0].nodes) == 122


def test_a_split_wider_than_the_limit_is_refused_naming_the_gateway() -> None:
    data = split(DEFAULT_LIMITS.max_fan_out + 1)
    with pytest.raises(ModelError) as refused:
        parse_bpmn(data, "wide.bpmn")
    error = refused.value
    assert (error.file, error.element_id) == ("wide.bpmn", "Split")
    assert error.line == _line_of(data, '<bpmn:parallelGateway id="Split"/>')
    assert "1001 outgoing sequence flows" in error.message and "max_fan_out" in error.message
    assert len(parse_bpmn(split(DEFAULT_LIMITS.max_fan_out), "fits.bpmn")) == 1


def test_a_join_wider_than_the_limit_is_refused_naming_the_join() -> None:
    """A chain of tasks that each also lead to one join: only the join has many flows."""
    parts = [
        _HEAD,
        '<bpmn:startEvent id="Start"/>\n<bpmn:parallelGateway id="Join"/>\n',
        '<bpmn:endEvent id="End"/>\n',
        _flow("FEnd", "Join", "End"),
    ]
    previous = "Start"
    for i in range(30):
        parts += [
            f'<bpmn:task id="T{i}"/>\n',
            _flow(f"F{i}", previous, f"T{i}"),
            _flow(f"FJ{i}", f"T{i}", "Join"),
        ]
        previous = f"T{i}"
    data = "".join([*parts, _TAIL]).encode()
    with pytest.raises(ModelError) as refused:
        parse_bpmn(data, "join.bpmn", ModelLimits(max_fan_out=29))
    assert refused.value.element_id == "Join"
    assert refused.value.line == _line_of(data, '<bpmn:parallelGateway id="Join"/>')
    assert "30 incoming sequence flows" in refused.value.message
    assert len(parse_bpmn(data, "join.bpmn", ModelLimits(max_fan_out=30))) == 1


def test_a_larger_input_than_the_limit_is_refused_unless_raised() -> None:
    data = chain(2_000)
    with pytest.raises(ModelError) as refused:
        parse_bpmn(data, "big.bpmn", ModelLimits(max_bytes=len(data) - 1))
    assert refused.value.file == "big.bpmn"
    assert f"larger than {len(data) - 1} bytes" in refused.value.message
    assert len(parse_bpmn(data, "big.bpmn", ModelLimits(max_bytes=len(data)))) == 1


def test_no_limits_reads_a_definition_deployed_under_raised_ones() -> None:
    [model] = parse_bpmn(split(1_500), "stored.bpmn", None)
    assert len(model.node("Split").outgoing) == 1_500
