"""The generated diagram layout: columns left to right, branches side by side, subprocesses around
their content, boundary events on their hosts, loops, and a shape or edge for every element."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest
from lxml import etree  # type: ignore[import-untyped]

from engine.bpmn import parse_bpmn, write_bpmn
from engine.bpmn.diagram import BPMNDI_NS, DC_NS, DI_NS, generated_diagram
from engine.bpmn.layout import Box
from engine.builder import ProcessBuilder
from engine.model import ProcessModel, TimerDefinition

DATA = Path(__file__).parent.parent / "data" / "bpmn"
NS = {"bpmndi": BPMNDI_NS, "dc": DC_NS, "di": DI_NS}
TIMER = TimerDefinition(kind="duration", text="PT1H")


class Diagram:
    def __init__(self, xml: str) -> None:
        self.root = etree.fromstring(xml.encode())
        self.shapes: dict[str, Box] = {}
        self.expanded: set[str] = set()
        self.edges: dict[str, list[tuple[float, float]]] = {}
        self.labels: dict[str, Box] = {}
        for shape in self.root.iterfind(".//bpmndi:BPMNShape", NS):
            b = shape.find("dc:Bounds", NS)
            box = Box(*(float(b.get(a)) for a in ("x", "y", "width", "height")))
            self.shapes[shape.get("bpmnElement")] = box
            if shape.get("isExpanded") == "true" or shape.get("isHorizontal") == "true":
                self.expanded.add(shape.get("bpmnElement"))
        for owner in self.root.iterfind(".//bpmndi:BPMNLabel/..", NS):
            b = owner.find("bpmndi:BPMNLabel/dc:Bounds", NS)
            box = Box(*(float(b.get(a)) for a in ("x", "y", "width", "height")))
            self.labels[owner.get("bpmnElement")] = box
        for edge in self.root.iterfind(".//bpmndi:BPMNEdge", NS):
            points = [
                (float(p.get("x")), float(p.get("y"))) for p in edge.iterfind("di:waypoint", NS)
            ]
            self.edges[edge.get("bpmnElement")] = points

    def width_height(self) -> tuple[float, float]:
        boxes = list(self.shapes.values())
        width = max(b.right for b in boxes) - min(b.x for b in boxes)
        height = max(b.bottom for b in boxes) - min(b.y for b in boxes)
        return width, height


def diagram_of(model: ProcessModel) -> Diagram:
    xml = generated_diagram(write_bpmn([model]))
    assert xml is not None
    return Diagram(xml)


def three_branches() -> ProcessModel:
    return (
        ProcessBuilder("three")
        .start_event("Start", "Order in")
        .parallel_gateway("Split", "Split")
        .user_task("A", "Pick")
        .user_task("B", "Pack")
        .user_task("C", "Invoice")
        .parallel_gateway("Join")
        .end_event("End", "Done")
        .chain("Start", "Split")
        .chain("Split", "A", "Join")
        .chain("Split", "B", "Join")
        .chain("Split", "C", "Join")
        .chain("Join", "End")
        .build()
    )


def nested() -> ProcessModel:
    """A subprocess with a boundary timer, a review loop, and an event subprocess."""
    return (
        ProcessBuilder("nested")
        .start_event("Start")
        .user_task("Draft", "Draft")
        .exclusive_gateway("Ok", "Approved?", default="Flow_Ok_Draft")
        .sub_process("Work", "Do the work")
        .start_event("WorkStart", parent="Work")
        .service_task("Step1", "Step one", parent="Work", topic="step")
        .service_task("Step2", "Step two", parent="Work", topic="step")
        .end_event("WorkEnd", parent="Work")
        .boundary_event("Late", "Work", "Late", timer=TIMER, cancel_activity=False)
        .user_task("Remind", "Remind")
        .end_event("Reminded")
        .end_event("End")
        .sub_process("OnError", "On error", triggered_by_event=True)
        .start_event("ErrorStart", parent="OnError", error=True)
        .user_task("Repair", "Repair", parent="OnError")
        .end_event("ErrorEnd", parent="OnError")
        .chain("Start", "Draft", "Ok")
        .flow("Ok", "Work", condition="${ok}")
        .flow("Ok", "Draft")
        .chain("WorkStart", "Step1", "Step2", "WorkEnd")
        .chain("Work", "End")
        .chain("Late", "Remind", "Reminded")
        .chain("ErrorStart", "Repair", "ErrorEnd")
        .build()
    )


def assert_complete(model: ProcessModel, diagram: Diagram, *, only: bool = True) -> None:
    """Every node has a shape and every flow an edge (and, `only`, nothing else is drawn)."""
    nodes, flows = {n.id for n in model.nodes}, {f.id for f in model.flows}
    if only:
        assert nodes == set(diagram.shapes)
        assert flows == set(diagram.edges)
    assert nodes <= set(diagram.shapes)
    assert flows <= set(diagram.edges)
    for flow in model.flows:
        points = diagram.edges[flow.id]
        assert len(points) >= 2
        for (x1, y1), (x2, y2) in zip(points, points[1:], strict=False):
            assert x1 == x2 or y1 == y2, f"{flow.id} has a slanted segment"
        assert touches(diagram.shapes[flow.source], points[0]), flow.id
        assert touches(diagram.shapes[flow.target], points[-1]), flow.id


def touches(box: Box, point: tuple[float, float]) -> bool:
    x, y = point
    on_x = box.x <= x <= box.right
    on_y = box.y <= y <= box.bottom
    return (on_x and y in (box.y, box.bottom)) or (on_y and x in (box.x, box.right))


def assert_labels_clear(diagram: Diagram) -> None:
    """No label covers a shape (but the subprocess or pool it lies in) or another label."""
    for owner, label in diagram.labels.items():
        for key, box in diagram.shapes.items():
            if key != owner and key not in diagram.expanded:
                assert not label.overlaps(box), (owner, key)
    for (a, one), (b, other) in combinations(diagram.labels.items(), 2):
        assert not one.overlaps(other), (a, b)


def assert_no_overlap(model: ProcessModel, diagram: Diagram) -> None:
    """No two shapes overlap, but for a boundary event on its host and a subprocess around its
    content."""
    above = {n.id: getattr(n, "attached_to", None) or n.parent for n in model.nodes}

    def holds(outer: str, inner: str | None) -> bool:
        while inner is not None:
            if inner == outer:
                return True
            inner = above.get(inner)
        return False

    for a, b in combinations(model.nodes, 2):
        if holds(a.id, b.id) or holds(b.id, a.id):
            continue
        assert not diagram.shapes[a.id].overlaps(diagram.shapes[b.id]), (a.id, b.id)


def test_a_split_into_three_branches_puts_them_side_by_side_in_one_column() -> None:
    model = three_branches()
    diagram = diagram_of(model)
    a, b, c = (diagram.shapes[key] for key in "ABC")
    assert a.x == b.x == c.x
    assert a.bottom < b.y and b.bottom < c.y
    start, split, join, end = (diagram.shapes[k] for k in ("Start", "Split", "Join", "End"))
    assert start.right < split.x < split.right < a.x
    assert a.right < join.x < join.right < end.x
    # The main line is straight: the split, the middle branch and the join share a centre line.
    assert start.cy == split.cy == b.cy == join.cy == end.cy
    width, height = diagram.width_height()
    assert width > height
    assert (a.w, a.h, start.w, start.h, split.w, split.h) == (100, 80, 36, 36, 50, 50)
    assert_complete(model, diagram)
    assert_no_overlap(model, diagram)


def test_subprocesses_hold_their_content_and_boundary_events_sit_on_the_host() -> None:
    model = nested()
    diagram = diagram_of(model)
    assert_complete(model, diagram)
    assert_no_overlap(model, diagram)
    work, on_error = diagram.shapes["Work"], diagram.shapes["OnError"]
    assert diagram.expanded == {"Work", "OnError"}
    for child in ("WorkStart", "Step1", "Step2", "WorkEnd"):
        assert work.contains(diagram.shapes[child]), child
        assert not on_error.overlaps(diagram.shapes[child])
    for child in ("ErrorStart", "Repair", "ErrorEnd"):
        assert on_error.contains(diagram.shapes[child]), child
    step1, step2 = diagram.shapes["Step1"], diagram.shapes["Step2"]
    assert step1.right < step2.x and step1.cy == step2.cy
    late = diagram.shapes["Late"]
    assert late.cy == work.bottom and work.x <= late.x and late.right <= work.right
    # The boundary event's flow leaves downwards, to a task under the subprocess's successor.
    remind, end = diagram.shapes["Remind"], diagram.shapes["End"]
    assert diagram.edges["Flow_Late_Remind"][0] == (late.cx, late.bottom)
    assert remind.y > end.bottom and remind.x > work.right
    # The event subprocess lies under the graph of its scope.
    assert on_error.y > max(diagram.shapes[k].bottom for k in ("Draft", "Work", "End"))


def test_a_loop_back_edge_goes_back_under_the_nodes_it_spans() -> None:
    model = nested()
    diagram = diagram_of(model)
    draft, ok = diagram.shapes["Draft"], diagram.shapes["Ok"]
    assert draft.right < ok.x and draft.cy == ok.cy
    back = diagram.edges["Flow_Ok_Draft"]
    assert back[0] == (ok.cx, ok.bottom) and back[-1] == (draft.cx, draft.bottom)
    assert min(y for _, y in back[1:-1]) > max(draft.bottom, ok.bottom)


def test_a_task_that_loops_to_itself_gets_an_edge_around_it() -> None:
    model = (
        ProcessBuilder("self")
        .start_event("Start")
        .exclusive_gateway("Again", default="Flow_Again_End")
        .end_event("End")
        .chain("Start", "Again", "End")
        .flow("Again", "Again", id="Loop", condition="${again}")
        .build()
    )
    diagram = diagram_of(model)
    assert_complete(model, diagram)
    assert len(diagram.edges["Loop"]) >= 4


def test_a_hand_written_file_without_layout_gets_one_and_keeps_its_content() -> None:
    source = (DATA / "handwritten_dispatch.bpmn").read_bytes()
    xml = generated_diagram(source, "handwritten_dispatch.bpmn")
    assert xml is not None
    (model,) = parse_bpmn(source)
    assert parse_bpmn(xml) == [model]
    diagram = Diagram(xml)
    assert_complete(model, diagram)
    assert_no_overlap(model, diagram)
    pick, label, notify = (diagram.shapes[k] for k in ("Pick", "PrintLabel", "Notify"))
    assert pick.x == label.x == notify.x and pick.bottom < label.y < label.bottom < notify.y
    assert diagram.shapes["Late"].cy == diagram.shapes["Ship"].bottom


def test_ids_missing_from_the_file_are_the_ids_the_parser_gives() -> None:
    source = """<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
      <process id="bare" isExecutable="true">
        <startEvent id="S"/><sequenceFlow sourceRef="S" targetRef="T"/>
        <task id="T"/><sequenceFlow sourceRef="T" targetRef="E"/><endEvent id="E"/>
      </process></definitions>"""
    xml = generated_diagram(source)
    assert xml is not None
    (model,) = parse_bpmn(source)
    assert_complete(model, Diagram(xml))


def test_a_file_with_a_layout_of_its_own_is_left_alone() -> None:
    source = (DATA / "invoice_approval.bpmn").read_bytes()
    assert generated_diagram(source) is None


def test_the_layout_is_the_same_every_time() -> None:
    xml = write_bpmn([nested()])
    assert generated_diagram(xml) == generated_diagram(xml)


def test_each_process_of_a_file_gets_a_diagram_the_one_asked_for_first() -> None:
    xml = write_bpmn([three_branches(), nested()])
    for key in ("three", "nested"):
        out = generated_diagram(xml, first=key)
        assert out is not None
        planes = Diagram(out).root.findall(".//bpmndi:BPMNPlane", NS)
        assert [p.get("bpmnElement") for p in planes][0] == key
        assert len(planes) == 2


@pytest.mark.parametrize("branches", [1, 12])
def test_wide_splits_stay_in_one_column_without_overlaps(branches: int) -> None:
    builder = ProcessBuilder("wide").start_event("Start").inclusive_gateway("Split")
    builder.inclusive_gateway("Join").end_event("End").chain("Start", "Split")
    for index in range(branches):
        builder.user_task(f"T{index}").chain("Split", f"T{index}", "Join")
    builder.flow("Split", "Join", id="Skip")
    model = builder.chain("Join", "End").build()
    diagram = diagram_of(model)
    assert_complete(model, diagram)
    assert_no_overlap(model, diagram)
    assert len({diagram.shapes[f"T{i}"].x for i in range(branches)}) == 1


COLLABORATION = """<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
  <collaboration id="Shop">
    <participant id="CustomerPool" name="Customer" processRef="customer"/>
    <participant id="ShopPool" name="Shop" processRef="shop"/>
    <participant id="BankPool" name="Bank"/>
    <messageFlow id="Order" sourceRef="SendOrder" targetRef="Received"/>
    <messageFlow id="Charge" sourceRef="Bill" targetRef="BankPool"/>
  </collaboration>
  <process id="customer" isExecutable="false">
    <startEvent id="Want"/><sequenceFlow id="c1" sourceRef="Want" targetRef="SendOrder"/>
    <sendTask id="SendOrder" name="Send order"/>
    <sequenceFlow id="c2" sourceRef="SendOrder" targetRef="Sent"/><endEvent id="Sent"/>
  </process>
  <process id="shop" isExecutable="true">
    <startEvent id="Received"/><sequenceFlow id="s1" sourceRef="Received" targetRef="Bill"/>
    <serviceTask id="Bill" name="Bill"/>
    <sequenceFlow id="s2" sourceRef="Bill" targetRef="Done"/><endEvent id="Done"/>
  </process>
</definitions>"""


def test_a_collaboration_gets_a_pool_per_participant_and_its_message_flows() -> None:
    xml = generated_diagram(COLLABORATION)
    assert xml is not None
    diagram = Diagram(xml)
    [plane] = diagram.root.findall(".//bpmndi:BPMNPlane", NS)
    assert plane.get("bpmnElement") == "Shop"
    customer, shop, bank = (diagram.shapes[k] for k in ("CustomerPool", "ShopPool", "BankPool"))
    assert customer.bottom < shop.y and shop.bottom < bank.y
    assert customer.w == shop.w == bank.w
    for pool, nodes in ((customer, ("Want", "SendOrder", "Sent")), (shop, ("Received", "Bill"))):
        for node in nodes:
            assert pool.contains(diagram.shapes[node]), node
    order = diagram.edges["Order"]
    assert touches(diagram.shapes["SendOrder"], order[0])
    assert touches(diagram.shapes["Received"], order[-1])
    assert touches(bank, diagram.edges["Charge"][-1])
    assert set(diagram.edges) == {"Order", "Charge", "c1", "c2", "s1", "s2"}


FIXTURES = sorted(DATA.glob("*.bpmn"))


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_fixture_without_its_layout_gets_a_complete_one(path: Path) -> None:
    root = etree.fromstring(path.read_bytes())
    for own in root.findall("bpmndi:BPMNDiagram", NS):
        root.remove(own)
    source = etree.tostring(root)
    xml = generated_diagram(source, path.name)
    assert xml is not None
    diagram = Diagram(xml)
    for model in parse_bpmn(source, path.name):
        assert_complete(model, diagram, only=False)
        assert_no_overlap(model, diagram)
    assert_labels_clear(diagram)


def test_a_main_line_with_boundary_events_stays_straight() -> None:
    model = (
        ProcessBuilder("guarded")
        .start_event("Start", "Drafted")
        .user_task("Review", "Review")
        .user_task("Sign", "Sign")
        .end_event("End", "Signed")
        .boundary_event("Withdrawn", "Review", "Withdrawn", message="withdrawn")
        .boundary_event("Late", "Sign", "Late", timer=TIMER)
        .end_event("Stopped", "Stopped")
        .end_event("Expired", "Expired")
        .chain("Start", "Review", "Sign", "End")
        .chain("Withdrawn", "Stopped")
        .chain("Late", "Expired")
        .build()
    )
    diagram = diagram_of(model)
    assert_complete(model, diagram)
    assert_no_overlap(model, diagram)
    assert_labels_clear(diagram)
    line = {diagram.shapes[key].cy for key in ("Start", "Review", "Sign", "End")}
    assert len(line) == 1
    for host, event, target in (("Review", "Withdrawn", "Stopped"), ("Sign", "Late", "Expired")):
        assert diagram.shapes[event].cy == diagram.shapes[host].bottom
        assert diagram.shapes[target].y > diagram.shapes[host].bottom
