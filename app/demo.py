"""The living demo that `make run` (`interlock serve --demo`) starts.

It deploys an order process (a parallel split into an external task and a user task, a join, a
timer) and a small refund process that has no diagram layout and asks a decision table which
refund policy applies, serves the external tasks with a
bundled worker that sometimes fails so incidents appear, approves orders that waited a while,
retries incidents nobody retried for a while, and keeps a gentle trickle of new instances flowing.
`Demo.stop()` ends all of it.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.deployments import Resource
from engine.core.handlers import TaskContext
from engine.errors import InterlockError
from engine.loops.worker import ExternalTaskFailure, Task, Worker
from engine.model import ProcessModel, TimerDefinition

log = logging.getLogger(__name__)

ORDER_KEY = "demo-order"
REFUND_KEY = "demo-refund"
WORKER_ID = "demo-worker"

ORDER_BPMN = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI"
    xmlns:dc="http://www.omg.org/spec/DD/20100524/DC"
    xmlns:di="http://www.omg.org/spec/DD/20100524/DI"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    id="Definitions_DemoOrder" targetNamespace="https://interlock.example/demo">
  <bpmn:process id="demo-order" name="Order (demo)" isExecutable="true">
    <bpmn:startEvent id="Start" name="Order received">
      <bpmn:outgoing>F1</bpmn:outgoing>
    </bpmn:startEvent>
    <bpmn:serviceTask id="CheckOrder" name="Check order" camunda:delegateExpression="${checkOrder}">
      <bpmn:incoming>F1</bpmn:incoming>
      <bpmn:outgoing>F2</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:parallelGateway id="Split" name="Split">
      <bpmn:incoming>F2</bpmn:incoming>
      <bpmn:outgoing>F3</bpmn:outgoing>
      <bpmn:outgoing>F4</bpmn:outgoing>
    </bpmn:parallelGateway>
    <bpmn:serviceTask id="ReserveStock" name="Reserve stock" camunda:type="external"
        camunda:topic="reserve-stock">
      <bpmn:incoming>F3</bpmn:incoming>
      <bpmn:outgoing>F5</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:userTask id="ApproveOrder" name="Approve order" camunda:candidateGroups="sales">
      <bpmn:incoming>F4</bpmn:incoming>
      <bpmn:outgoing>F6</bpmn:outgoing>
    </bpmn:userTask>
    <bpmn:parallelGateway id="Join" name="Join">
      <bpmn:incoming>F5</bpmn:incoming>
      <bpmn:incoming>F6</bpmn:incoming>
      <bpmn:outgoing>F7</bpmn:outgoing>
    </bpmn:parallelGateway>
    <bpmn:intermediateCatchEvent id="WaitForPickup" name="Wait for pickup">
      <bpmn:incoming>F7</bpmn:incoming>
      <bpmn:outgoing>F8</bpmn:outgoing>
      <bpmn:timerEventDefinition id="WaitForPickupTimer">
        <bpmn:timeDuration>PT8S</bpmn:timeDuration>
      </bpmn:timerEventDefinition>
    </bpmn:intermediateCatchEvent>
    <bpmn:serviceTask id="Ship" name="Ship order" camunda:delegateExpression="${shipOrder}">
      <bpmn:incoming>F8</bpmn:incoming>
      <bpmn:outgoing>F9</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:endEvent id="End" name="Shipped">
      <bpmn:incoming>F9</bpmn:incoming>
    </bpmn:endEvent>
    <bpmn:sequenceFlow id="F1" sourceRef="Start" targetRef="CheckOrder"/>
    <bpmn:sequenceFlow id="F2" sourceRef="CheckOrder" targetRef="Split"/>
    <bpmn:sequenceFlow id="F3" sourceRef="Split" targetRef="ReserveStock"/>
    <bpmn:sequenceFlow id="F4" sourceRef="Split" targetRef="ApproveOrder"/>
    <bpmn:sequenceFlow id="F5" sourceRef="ReserveStock" targetRef="Join"/>
    <bpmn:sequenceFlow id="F6" sourceRef="ApproveOrder" targetRef="Join"/>
    <bpmn:sequenceFlow id="F7" sourceRef="Join" targetRef="WaitForPickup"/>
    <bpmn:sequenceFlow id="F8" sourceRef="WaitForPickup" targetRef="Ship"/>
    <bpmn:sequenceFlow id="F9" sourceRef="Ship" targetRef="End"/>
  </bpmn:process>
  <bpmndi:BPMNDiagram id="Diagram_DemoOrder">
    <bpmndi:BPMNPlane id="Plane_DemoOrder" bpmnElement="demo-order">
      <bpmndi:BPMNShape id="Start_di" bpmnElement="Start">
        <dc:Bounds x="172" y="192" width="36" height="36"/>
        <bpmndi:BPMNLabel><dc:Bounds x="152" y="235" width="76" height="14"/></bpmndi:BPMNLabel>
      </bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="CheckOrder_di" bpmnElement="CheckOrder">
        <dc:Bounds x="260" y="170" width="100" height="80"/>
      </bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="Split_di" bpmnElement="Split">
        <dc:Bounds x="415" y="185" width="50" height="50"/>
        <bpmndi:BPMNLabel><dc:Bounds x="448" y="238" width="24" height="14"/></bpmndi:BPMNLabel>
      </bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="ReserveStock_di" bpmnElement="ReserveStock">
        <dc:Bounds x="520" y="80" width="100" height="80"/>
      </bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="ApproveOrder_di" bpmnElement="ApproveOrder">
        <dc:Bounds x="520" y="260" width="100" height="80"/>
      </bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="Join_di" bpmnElement="Join">
        <dc:Bounds x="675" y="185" width="50" height="50"/>
        <bpmndi:BPMNLabel><dc:Bounds x="708" y="238" width="22" height="14"/></bpmndi:BPMNLabel>
      </bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="WaitForPickup_di" bpmnElement="WaitForPickup">
        <dc:Bounds x="772" y="192" width="36" height="36"/>
        <bpmndi:BPMNLabel><dc:Bounds x="752" y="235" width="77" height="14"/></bpmndi:BPMNLabel>
      </bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="Ship_di" bpmnElement="Ship">
        <dc:Bounds x="860" y="170" width="100" height="80"/>
      </bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="End_di" bpmnElement="End">
        <dc:Bounds x="1012" y="192" width="36" height="36"/>
        <bpmndi:BPMNLabel><dc:Bounds x="1007" y="235" width="46" height="14"/></bpmndi:BPMNLabel>
      </bpmndi:BPMNShape>
      <bpmndi:BPMNEdge id="F1_di" bpmnElement="F1">
        <di:waypoint x="208" y="210"/><di:waypoint x="260" y="210"/>
      </bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="F2_di" bpmnElement="F2">
        <di:waypoint x="360" y="210"/><di:waypoint x="415" y="210"/>
      </bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="F3_di" bpmnElement="F3">
        <di:waypoint x="440" y="185"/><di:waypoint x="440" y="120"/>
        <di:waypoint x="520" y="120"/>
      </bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="F4_di" bpmnElement="F4">
        <di:waypoint x="440" y="235"/><di:waypoint x="440" y="300"/>
        <di:waypoint x="520" y="300"/>
      </bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="F5_di" bpmnElement="F5">
        <di:waypoint x="620" y="120"/><di:waypoint x="700" y="120"/>
        <di:waypoint x="700" y="185"/>
      </bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="F6_di" bpmnElement="F6">
        <di:waypoint x="620" y="300"/><di:waypoint x="700" y="300"/>
        <di:waypoint x="700" y="235"/>
      </bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="F7_di" bpmnElement="F7">
        <di:waypoint x="725" y="210"/><di:waypoint x="772" y="210"/>
      </bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="F8_di" bpmnElement="F8">
        <di:waypoint x="808" y="210"/><di:waypoint x="860" y="210"/>
      </bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="F9_di" bpmnElement="F9">
        <di:waypoint x="960" y="210"/><di:waypoint x="1012" y="210"/>
      </bpmndi:BPMNEdge>
    </bpmndi:BPMNPlane>
  </bpmndi:BPMNDiagram>
</bpmn:definitions>
"""

CUSTOMERS = ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov")
PRODUCTS = ("keyboard", "monitor", "dock", "headset", "webcam", "cable")


POLICY_KEY = "demo-refund-policy"
# The refund policy: which way a refund of `amount` goes (FIRST matching rule).
REFUND_POLICY_DMN = f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/"
  id="RefundPolicy" name="Refund policy" namespace="http://camunda.org/schema/1.0/dmn">
  <decision id="{POLICY_KEY}" name="Refund policy (demo)">
    <decisionTable id="PolicyTable" hitPolicy="FIRST">
      <input id="Amount" label="Amount">
        <inputExpression id="AmountIn" typeRef="double"><text>amount</text></inputExpression>
      </input>
      <output id="Policy" label="Policy" name="policy" typeRef="string" />
      <rule id="Small">
        <description>Small refunds are paid without a look</description>
        <inputEntry id="SmallAmount"><text>&lt; 20</text></inputEntry>
        <outputEntry id="SmallPolicy"><text>"automatic"</text></outputEntry>
      </rule>
      <rule id="Usual">
        <inputEntry id="UsualAmount"><text>[20..100[</text></inputEntry>
        <outputEntry id="UsualPolicy"><text>"standard"</text></outputEntry>
      </rule>
      <rule id="Large">
        <description>Large refunds are checked by a person first</description>
        <inputEntry id="LargeAmount"><text>&gt;= 100</text></inputEntry>
        <outputEntry id="LargePolicy"><text>"review"</text></outputEntry>
      </rule>
    </decisionTable>
  </decision>
</definitions>
"""


def refund_process() -> ProcessModel:
    """A process built in Python: it has no diagram layout, so the console generates one."""
    return (
        ProcessBuilder(REFUND_KEY, name="Refund (demo)")
        .start_event("Start", "Refund requested")
        .business_rule_task(
            "RefundPolicy",
            "Choose refund policy",
            decision_ref=POLICY_KEY,
            result_variable="policy",
            map_decision_result="singleEntry",
        )
        .service_task("ComputeRefund", "Compute refund", handler="computeRefund")
        .intermediate_catch_event(
            "CoolingOff", "Cooling-off", timer=TimerDefinition(kind="duration", text="PT5S")
        )
        .service_task("PayRefund", "Pay refund", topic="pay-refund")
        .end_event("End", "Refunded")
        .chain("Start", "RefundPolicy", "ComputeRefund", "CoolingOff", "PayRefund", "End")
        .build()
    )


class Demo:
    """The demo's background work: a worker thread and a trickle thread."""

    def __init__(
        self,
        engine: Engine,
        *,
        interval: float = 4.0,
        max_active: int = 25,
        failure_rate: float = 0.15,
        approve_after: float = 20.0,
        retry_after: float = 90.0,
        seed: int | None = None,
    ) -> None:
        self.engine = engine
        self.interval = interval
        self.max_active = max_active
        self.failure_rate = failure_rate
        self.approve_after = timedelta(seconds=approve_after)
        self.retry_after = timedelta(seconds=retry_after)
        self.random = random.Random(seed)
        self.started = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.worker = Worker(engine, WORKER_ID, max_tasks=4, lock_ms=15_000, long_poll_seconds=2.0)
        self.worker.topic("reserve-stock")(self._reserve_stock)
        self.worker.topic("pay-refund")(self._pay_refund)

    # -- handlers ---------------------------------------------------------------------------------

    def _work(self, what: str) -> None:
        self._stop.wait(self.random.uniform(0.3, 1.5))
        if self.random.random() < self.failure_rate:
            raise ExternalTaskFailure(
                f"{what}: the service did not answer (demo failure)",
                details="The demo worker fails some tasks on purpose. Press Retry: it will "
                "most likely succeed the next time.",
                retries=0,
            )

    def _reserve_stock(self, task: Task) -> dict[str, Any]:
        self._work("Warehouse")
        return {"reserved": True, "reservation": f"R-{self.random.randrange(10_000, 99_999)}"}

    def _pay_refund(self, task: Task) -> dict[str, Any]:
        self._work("Payment provider")
        return {"refunded": True}

    # -- the trickle ------------------------------------------------------------------------------

    def _start_one(self) -> None:
        self.started += 1
        if self.started % 3 == 0:
            self.engine.start_latest(
                REFUND_KEY,
                {"amount": round(self.random.uniform(5, 120), 2)},
                business_key=f"refund-{self.random.randrange(1000, 9999)}",
            )
            return
        self.engine.start_latest(
            ORDER_KEY,
            {
                "customer": self.random.choice(CUSTOMERS),
                "product": self.random.choice(PRODUCTS),
                "quantity": self.random.randint(1, 5),
                "amount": round(self.random.uniform(20, 900), 2),
            },
            business_key=f"order-{self.random.randrange(10_000, 99_999)}",
        )

    def _approve_old_orders(self) -> None:
        cutoff = datetime.now(UTC) - self.approve_after
        for task in self.engine.user_tasks(definition_key=ORDER_KEY):
            if task.created_at <= cutoff:
                try:
                    self.engine.complete_task(task.id, {"approved": True, "approver": "demo"})
                except InterlockError as error:
                    log.debug("demo: could not approve %s: %s", task.id, error.message)

    def _retry_old_incidents(self) -> None:
        """Nobody pressed Retry for a while: do it, so the demo keeps flowing."""
        cutoff = datetime.now(UTC) - self.retry_after
        for key in (ORDER_KEY, REFUND_KEY):
            for incident in self.engine.incidents(definition_key=key):
                if incident.created_at <= cutoff:
                    try:
                        self.engine.retry_incident(incident.id)
                    except InterlockError as error:
                        log.debug("demo: could not retry %s: %s", incident.id, error.message)

    def _active(self) -> int:
        counts = self.engine.instance_counts()
        return counts.get("Active", 0)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._approve_old_orders()
                self._retry_old_incidents()
                if self._active() < self.max_active:
                    self._start_one()
            except Exception:
                log.exception("demo: a round failed; trying again shortly")
            self._stop.wait(self.interval)

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> Demo:
        self._stop.clear()
        self.worker.start()
        self._thread = threading.Thread(target=self._loop, name="interlock-demo", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the trickle and the worker; tasks the worker holds are reported first."""
        deadline = time.monotonic() + timeout
        self._stop.set()
        self.worker.stop(timeout)
        if self._thread is not None:
            self._thread.join(max(0.0, deadline - time.monotonic()))
            self._thread = None


def register_handlers(engine: Engine) -> None:
    def check_order(ctx: TaskContext) -> dict[str, Any]:
        return {"checked": True}

    def ship_order(ctx: TaskContext) -> dict[str, Any]:
        return {"tracking": f"TRK-{str(ctx.instance_id)[:8].upper()}"}

    def compute_refund(ctx: TaskContext) -> dict[str, Any]:
        return {"refund": ctx.get("amount", 0)}

    engine.register_handler("checkOrder", check_order)
    engine.register_handler("shipOrder", ship_order)
    engine.register_handler("computeRefund", compute_refund)


def install_demo(engine: Engine, *, start: bool = True, **options: Any) -> Demo:
    """Deploy the demo processes (unchanged ones keep their version), register their handlers,
    and start the worker and the trickle. The first order starts at once."""
    register_handlers(engine)
    policy = Resource("refund-policy.dmn", REFUND_POLICY_DMN.encode("utf-8"))
    engine.deploy(ORDER_BPMN, refund_process(), policy, name="demo")
    demo = Demo(engine, **options)
    if start:
        demo.start()
    return demo
