"""JSON access as Camunda Spin gives it: `S(value)` and `JSON(value)` in expressions, conditions
and JavaScript, over a Json variable (set here over /engine-rest as Camunda's clients set it),
a JSON text or a node. Prop chains, elements, missing properties and type errors, each failure
a clear message naming the expression; Spin XML refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.deployments import Deploy, Resource
from engine.errors import ExpressionError, ModelError
from engine.language.expressions import compile_expression
from engine.scripting import ScriptError, evaluate
from tests.server import PASSWORD

ORDER: dict[str, Any] = {
    "amount": 150,
    "rate": 0.5,
    "express": True,
    "note": None,
    "customer": {"name": "Kermit", "address": {"city": "Muppetville", "zip": 1234}},
    "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 1}],
}
WHERE = {"order": ORDER, "text": json.dumps(ORDER), "xml": "<order amount='1'/>"}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('${S(order).prop("amount").numberValue()}', 150),
        ("${S(order).prop('rate').numberValue() * 2}", 1.0),
        ("${S(order).prop('customer').prop('address').prop('city').stringValue()}", "Muppetville"),
        ("${S(order).prop('express').boolValue()}", True),
        ("${S(order).prop('note').isNull()}", True),
        ("${S(order).prop('note').value()}", None),
        ("${S(order).prop('customer').prop('name').value()}", "Kermit"),
        ("${S(order).hasProp('customer')}", True),
        ("${S(order).hasProp('coupon')}", False),
        ("${S(order).prop('items').elements().size()}", 2),
        ("${S(order).prop('items').elements()[1].prop('sku').stringValue()}", "B-2"),
        ("${S(order).prop('items').elements().get(0).prop('qty').numberValue()}", 2),
        ("${S(order).prop('customer').fieldNames()}", ["name", "address"]),
        ("${S(order).prop('customer').prop('address')}", {"city": "Muppetville", "zip": 1234}),
        ("${S(order).prop('items').toString()}", '[{"sku":"A-1","qty":2},{"sku":"B-2","qty":1}]'),
        ("${S(order).isObject() && S(order).prop('items').isArray()}", True),
        ("${S(order).prop('amount').isNumber() && !S(order).prop('amount').isString()}", True),
        ("${S(order).prop('express').isBoolean()}", True),
        ("${S(order).prop('customer').prop('name').isString()}", True),
        # A JSON text reads as its JSON, with S and JSON alike, and a node reads as itself.
        ("${S(text).prop('customer').prop('name').stringValue()}", "Kermit"),
        ("${JSON(text).prop('amount').numberValue() > 100}", True),
        ("${JSON('[1, 2, 3]').elements().size()}", 3),
        ("${S(S(order).prop('customer')).prop('name').stringValue()}", "Kermit"),
        ("${S(order, 'application/json').prop('amount').numberValue()}", 150),
        # A Json variable is a node already, as in Camunda: its methods work without S().
        ("${order.prop('customer').prop('name').stringValue()}", "Kermit"),
    ],
)
def test_spin_reads_json_in_expressions(source: str, expected: Any) -> None:
    value = compile_expression(source).evaluate(WHERE)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("${S(order).prop('coupon').stringValue()}", "prop(): unable to find property 'coupon'"),
        ("${S(order).prop('amount').stringValue()}", "expected a STRING node, got NUMBER"),
        ("${S(order).prop('customer').numberValue()}", "expected a NUMBER node, got OBJECT"),
        ("${S(order).prop('amount').boolValue()}", "expected a BOOLEAN node, got NUMBER"),
        ("${S(order).prop('items').value()}", "got ARRAY"),
        ("${S(order).prop('customer').elements()}", "expected a ARRAY node, got OBJECT"),
        ("${S(order).prop('amount').prop('x')}", "cannot read property 'x' of a NUMBER node"),
        ("${S(order).prop('items').elements().get(5)}", "index 5 is out of range"),
        ("${S(order.coupon)}", "S(): needs a value, got null"),
        ("${JSON('{not json')}", "JSON(): cannot read the text as JSON"),
        ("${S(order).prop('amount', 3)}", "nodes are read-only"),
        ("${S(order).prop('amount') > 100}", "cannot compare"),
    ],
)
def test_spin_failures_name_the_problem_and_the_expression(source: str, problem: str) -> None:
    expression = compile_expression(source)
    with pytest.raises(ExpressionError) as caught:
        expression.evaluate(WHERE)
    assert problem in caught.value.message
    assert caught.value.message.endswith(f"in {source}")


@pytest.mark.parametrize(
    "source",
    [
        "${XML(xml).attr('amount').value()}",
        "${S('<order/>').childElement('item')}",
        "${S(text).xPath('/order/@amount').string()}",
        "${S(xml, 'application/xml')}",
        "${S(order).deleteProp('amount')}",
    ],
)
def test_spin_xml_and_setters_are_refused_when_compiled(source: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(source)
    message = caught.value.message
    assert "Spin XML is not supported" in message or "Spin nodes are read-only" in message
    assert source in message


def test_spin_xml_text_in_a_variable_is_refused_when_evaluated() -> None:
    expression = compile_expression("${S(xml).prop('amount')}")
    with pytest.raises(ExpressionError) as caught:
        expression.evaluate(WHERE)
    assert "S(): Spin XML is not supported by this engine" in caught.value.message
    assert "${S(xml).prop('amount')}" in caught.value.message


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('S(order).prop("amount").numberValue() > 100', True),
        ("S(order).prop('customer').prop('address').prop('zip').numberValue()", 1234),
        (
            "S(order).prop('items').elements().map(function (i) { return i.prop('sku').value(); })",
            ["A-1", "B-2"],
        ),  # fmt: skip
        ("S(order).prop('items').elements().get(1).prop('qty').numberValue()", 1),
        ("S(text).prop('express').boolValue()", True),
        ("JSON(text).hasProp('coupon')", False),
        ("S(order).prop('note').isNull()", True),
        ("S(order).prop('customer')", {"name": "Kermit", "address": ORDER["customer"]["address"]}),
        ("S(order).prop('items').toString()", '[{"sku":"A-1","qty":2},{"sku":"B-2","qty":1}]'),
        # The built-in JSON keeps working beside Spin's JSON().
        ("JSON.stringify(JSON.parse('[1,2]'))", "[1,2]"),
    ],
)
def test_spin_reads_json_in_javascript(source: str, expected: Any) -> None:
    assert evaluate(source, WHERE) == expected


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("S(order).prop('coupon')", "unable to find property 'coupon'"),
        ("S(order).prop('amount').stringValue()", "expected a STRING node, got NUMBER"),
        ("XML(xml)", "Spin XML is not supported"),
        ("S(xml)", "Spin XML is not supported"),
        ("S(order).xPath('/a')", "Spin XML is not supported"),
        ("S(order).deleteProp('amount')", "read-only"),
        # Spin is frozen: a script cannot change it for the scripts after it.
        ("'use strict'; S(order).constructor.prototype.prop = null", "read only"),
    ],
)
def test_spin_failures_in_javascript_are_the_scripts_errors(source: str, problem: str) -> None:
    with pytest.raises(ScriptError) as caught:
        evaluate(source, WHERE, where="script task 'Check'")
    assert caught.value.message.startswith("script task 'Check': ")
    assert problem in caught.value.message


# --- through a running process, the order set over /engine-rest ------------------------------

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Defs" '
    'targetNamespace="http://bpmn.io/schema/bpmn">\n'
)
ROUTING = (
    HEAD
    + """  <bpmn:process id="routing" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:scriptTask id="count" scriptFormat="javascript" camunda:resultVariable="itemCount">
      <bpmn:script>S(order).prop('items').elements().length</bpmn:script>
    </bpmn:scriptTask>
    <bpmn:serviceTask id="total"
        camunda:expression="${JSON(order).prop('amount').numberValue() * 2}"
        camunda:resultVariable="doubled">
      <bpmn:extensionElements>
        <camunda:inputOutput>
          <camunda:outputParameter name="city"
            >${S(order).prop('customer').prop('address').prop('city').stringValue()}</camunda:outputParameter>
        </camunda:inputOutput>
      </bpmn:extensionElements>
    </bpmn:serviceTask>
    <bpmn:exclusiveGateway id="size" default="small" />
    <bpmn:userTask id="big_order" />
    <bpmn:userTask id="small_order" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="count" />
    <bpmn:sequenceFlow id="f2" sourceRef="count" targetRef="total" />
    <bpmn:sequenceFlow id="f3" sourceRef="total" targetRef="size" />
    <bpmn:sequenceFlow id="big" sourceRef="size" targetRef="big_order">
      <bpmn:conditionExpression>
        ${S(order).prop("amount").numberValue() &gt; 100}
      </bpmn:conditionExpression>
    </bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="small" sourceRef="size" targetRef="small_order" />
  </bpmn:process>
</bpmn:definitions>
"""
)


@pytest.fixture
def rest(server: Any) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("admin", PASSWORD), timeout=30
    ) as client:
        yield client


def _deploy(rest: httpx.Client, text: str) -> httpx.Response:
    files = [("data", ("routing.bpmn", text.encode(), "application/octet-stream"))]
    return rest.post("/deployment/create", data={"deployment-name": "spin"}, files=files)


def _start(rest: httpx.Client, order: Any) -> httpx.Response:
    variables = {"order": {"type": "Json", "value": json.dumps(order)}}
    return rest.post("/process-definition/key/routing/start", json={"variables": variables})


def _path(rest: httpx.Client, instance_id: str) -> list[str]:
    found = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance_id, "sortBy": "startTime", "sortOrder": "asc"},
    )
    assert found.status_code == 200, found.text
    return [row["activityId"] for row in found.json()]


@pytest.mark.parametrize(("amount", "taken"), [(150, "big_order"), (90, "small_order")])
def test_a_json_variable_routes_a_process_through_spin(
    rest: httpx.Client, amount: int, taken: str
) -> None:
    assert _deploy(rest, ROUTING).status_code == 200
    response = _start(rest, {**ORDER, "amount": amount})
    assert response.status_code == 200, response.text
    instance = response.json()["id"]
    assert _path(rest, instance) == ["start", "count", "total", "size", taken]
    variables = rest.get(f"/process-instance/{instance}/variables").json()
    assert variables["itemCount"] == {"type": "Integer", "value": 2, "valueInfo": {}}
    assert variables["doubled"]["value"] == 2 * amount
    assert variables["city"] == {"type": "String", "value": "Muppetville", "valueInfo": {}}
    assert variables["order"]["type"] == "Json"


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4) as engine:
        yield engine


def test_a_missing_property_in_a_condition_names_the_flow_and_the_expression(
    engine: Engine,
) -> None:
    engine.run(Deploy((Resource("routing.bpmn", ROUTING.encode()),)))
    order = {key: value for key, value in ORDER.items() if key != "amount"}
    with pytest.raises(ExpressionError) as caught:
        engine.start_latest("routing", {"order": {**order, "amount": "150"}})
    message = caught.value.message
    assert "camunda:expression of service task 'total' failed" in message
    assert "expected a NUMBER node, got STRING" in message
    assert "${JSON(order).prop('amount').numberValue() * 2}" in message
    text = ROUTING.replace("${JSON(order).prop('amount').numberValue() * 2}", "${1}")
    engine.run(Deploy((Resource("routing.bpmn", text.encode()),)))
    with pytest.raises(ExpressionError) as caught:
        engine.start_latest("routing", {"order": order})
    message = caught.value.message
    assert "condition of sequence flow 'big' failed" in message
    assert "unable to find property 'amount'" in message
    assert '${S(order).prop("amount").numberValue() > 100}' in message
    assert engine.list_instances().items == []


def test_spin_xml_in_a_condition_is_refused_at_deployment(engine: Engine) -> None:
    text = ROUTING.replace(
        '${S(order).prop("amount").numberValue() &gt; 100}',
        "${XML(order).xPath('/order/amount').element().textContent() == '1'}",
    )
    with pytest.raises(ModelError) as caught:
        engine.run(Deploy((Resource("routing.bpmn", text.encode()),)))
    error = caught.value
    assert error.element_id == "big"
    assert "routing.bpmn" in str(error)
    assert "Spin XML is not supported by this engine" in str(error)
    assert engine.definitions("routing") == []


def test_spin_in_a_collection_and_a_completion_condition(engine: Engine) -> None:
    model = (
        ProcessBuilder("picking")
        .start_event("start")
        .user_task("pick", name="Pick ${S(item).prop('sku').stringValue()}")
        .user_task("after")
        .chain("start", "pick", "after")
        .multi_instance(
            "pick",
            collection="${S(order).prop('items').elements()}",
            element_variable="item",
            completion_condition="${nrOfCompletedInstances >= JSON(order).prop('needed').value()}",
        )
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("picking", {"order": {**ORDER, "needed": 1}})
    tasks = engine.user_tasks(instance.id)
    assert sorted(t.name or "" for t in tasks) == ["Pick A-1", "Pick B-2"]
    engine.complete_task(tasks[0].id)
    [after] = engine.user_tasks(instance.id)
    assert after.node_id == "after"
