"""Business rule tasks: a decision evaluated inside the command's transaction, its result mapped
into a variable as Camunda maps it, its evaluation a history row and an outbox event of the same
transaction; a failing evaluation fails the command, or in a job counts retries and then opens an
incident."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.errors import ExpressionError, ModelError
from engine.model import DecisionResultMapping

DATA = Path(__file__).parent.parent / "data"

# Two outputs; "COLLECT" of every rule that holds for `amount`.
OFFERS = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/"
  xmlns:camunda="http://camunda.org/schema/1.0/dmn"
  id="Offers" name="Offers" namespace="http://camunda.org/schema/1.0/dmn">
  <decision id="offers" name="Offers" camunda:versionTag="{tag}">
    <decisionTable id="Table_Offers" hitPolicy="{policy}">
      <input id="Input_Amount" label="Amount">
        <inputExpression id="Expr_Amount" typeRef="integer"><text>amount</text></inputExpression>
      </input>
      <output id="Output_Offer" label="Offer" name="offer" typeRef="string" />
      <output id="Output_Rate" label="Rate" name="rate" typeRef="double" />
      <rule id="Rule_Small">
        <inputEntry id="In_Small"><text>&lt; 100</text></inputEntry>
        <outputEntry id="Out_Small_Offer"><text>"small"</text></outputEntry>
        <outputEntry id="Out_Small_Rate"><text>{rate}</text></outputEntry>
      </rule>
      <rule id="Rule_Any">
        <inputEntry id="In_Any"><text>[0..1000]</text></inputEntry>
        <outputEntry id="Out_Any_Offer"><text>"standard"</text></outputEntry>
        <outputEntry id="Out_Any_Rate"><text>0.5</text></outputEntry>
      </rule>
    </decisionTable>
  </decision>
</definitions>
"""


def offers(policy: str = "COLLECT", rate: str = "0.25", tag: str = "v1") -> str:
    return OFFERS.format(policy=policy, rate=rate, tag=tag)


def rule_process(key: str, **task: Any) -> Any:
    return (
        ProcessBuilder(key)
        .start_event("s")
        .business_rule_task("Decide", **task)
        .user_task("Look")
        .end_event("e")
        .chain("s", "Decide", "Look", "e")
        .build()
    )


def rows(engine: Engine, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with engine.pool.connection() as conn:
        return conn.execute(sql, params).fetchall()


def test_a_modeler_file_evaluates_its_decision_in_the_starting_transaction(engine: Engine) -> None:
    engine.deploy(DATA / "bpmn" / "dinner_planning.bpmn", DATA / "dmn" / "dish_first.dmn")
    winter = engine.start_latest("dinner_planning", {"season": "Winter", "guestCount": 4})
    assert winter.variables() == {"season": "Winter", "guestCount": 4, "dish": "Roastbeef"}
    [(visit_id,)] = rows(
        engine,
        "SELECT id FROM history WHERE instance_id = %s AND node_id = 'Task_Dish'",
        winter.id,
    )
    [evaluation] = rows(
        engine,
        "SELECT id, decision_key, instance_id, node_id, history_id, process_definition_id, "
        "inputs, matched_rules, outputs, result, root_id FROM decision_evaluation",
    )
    evaluation_id, key, instance_id, node_id, history_id, definition_id, *recorded = evaluation
    assert (key, instance_id, node_id, history_id) == ("dish", winter.id, "Task_Dish", visit_id)
    assert definition_id.startswith("dinner_planning:1:")
    inputs, matched, outputs, result, root_id = recorded
    assert [(i["id"], i["value"]) for i in inputs] == [
        ("Input_Season", "Winter"),
        ("Input_Guests", 4),
    ]
    assert matched == ["Rule_Winter"]
    assert [(o["name"], o["rule_id"], o["value"]) for o in outputs] == [
        ("dish", "Rule_Winter", "Roastbeef")
    ]
    assert (result, root_id) == ([{"dish": "Roastbeef"}], None)
    # The outbox row of the evaluation: the instance's, naming the token's node and the row.
    assert rows(
        engine,
        "SELECT instance_id, node_id, history_id FROM outbox_event "
        "WHERE event = 'decision.evaluated'",
    ) == [(winter.id, "Task_Dish", evaluation_id)]

    # No rule matches: singleEntry maps an empty result to null.
    spring = engine.start_latest("dinner_planning", {"season": "Spring", "guestCount": 4})
    assert spring.variables()["dish"] is None

    # A variable the input expression reads is missing: the start fails, and writes nothing.
    before = rows(engine, "SELECT count(*) FROM process_instance")[0][0]
    with pytest.raises(ExpressionError) as caught:
        engine.start_latest("dinner_planning", {"season": "Winter"})
    assert "business rule task 'Task_Dish'" in caught.value.message
    assert "guestCount" in caught.value.message
    assert rows(engine, "SELECT count(*) FROM process_instance")[0][0] == before
    assert rows(engine, "SELECT count(*) FROM decision_evaluation")[0][0] == 2


# mapDecisionResult over a COLLECT of both rules (amount 50) and of one (amount 500), pinned.
MAPPINGS: list[tuple[DecisionResultMapping, int, Any]] = [
    (
        "resultList",
        50,
        [{"offer": "small", "rate": 0.25}, {"offer": "standard", "rate": 0.5}],
    ),
    ("resultList", 500, [{"offer": "standard", "rate": 0.5}]),
    ("singleResult", 500, {"offer": "standard", "rate": 0.5}),
    ("singleResult", 5000, None),
]


def test_each_result_mapping_maps_as_camunda_does(engine: Engine) -> None:
    engine.deploy(offers())
    for n, (mapping, amount, expected) in enumerate(MAPPINGS):
        engine.deploy(
            rule_process(
                f"map{n}", decision_ref="offers", result_variable="r", map_decision_result=mapping
            )
        )
        instance = engine.start_latest(f"map{n}", {"amount": amount})
        assert instance.variables()["r"] == expected, (mapping, amount)

    # One output: singleEntry and collectEntries read the value itself.
    engine.deploy(DATA / "dmn" / "dish_first.dmn")
    singles: list[tuple[DecisionResultMapping, Any]] = [
        ("singleEntry", "Spareribs"),
        ("collectEntries", ["Spareribs"]),
    ]
    for mapping, expected in singles:
        key = f"one-{mapping}"
        engine.deploy(
            rule_process(key, decision_ref="dish", result_variable="r", map_decision_result=mapping)
        )
        instance = engine.start_latest(key, {"season": "Fall", "guestCount": 2})
        assert instance.variables()["r"] == expected

    # Two entries for singleResult and singleEntry, two outputs for collectEntries: refused,
    # in Camunda's words.
    several = "Unable to get single decision result as it has more than one result"
    refusals: list[tuple[DecisionResultMapping, str]] = [
        ("singleResult", "'SingleResultDecisionResultMapper' failed to process '[{"),
        ("singleResult", several),
        ("singleEntry", several),
        (
            "collectEntries",
            "The decision outputs should only contains values for one output name but found "
            '\'["offer", "rate"]\'.',
        ),
    ]
    for mapping, message in refusals:
        key = f"refused-{mapping}"
        engine.deploy(
            rule_process(
                key, decision_ref="offers", result_variable="r", map_decision_result=mapping
            )
        )
        with pytest.raises(ExpressionError) as caught:
            engine.start_latest(key, {"amount": 50})
        assert message in caught.value.message
        assert f"camunda:mapDecisionResult {mapping}" in caught.value.message

    # No result variable: the decision is evaluated (and recorded), no variable is set.
    engine.deploy(rule_process("unmapped", decision_ref="offers"))
    quiet = engine.start_latest("unmapped", {"amount": 5})
    assert quiet.variables() == {"amount": 5}
    assert rows(
        engine, "SELECT matched_rules FROM decision_evaluation WHERE instance_id = %s", quiet.id
    ) == [(["Rule_Small", "Rule_Any"],)]


def test_bindings_pick_the_version_a_call_activity_would(engine: Engine) -> None:
    engine.deploy(offers(rate="0.1", tag="v1"))
    engine.deploy(offers(rate="0.2", tag="v2"))
    engine.deploy(offers(rate="0.3", tag="v3"))
    cases: list[tuple[str, dict[str, Any], float]] = [
        ("latest", {}, 0.3),
        ("version", {"binding": "version", "version": 1}, 0.1),
        ("version-expr", {"binding": "version", "version": "${wanted}"}, 0.2),
        ("tag", {"binding": "versionTag", "version_tag": "v2"}, 0.2),
    ]
    for key, binding, rate in cases:
        engine.deploy(
            rule_process(
                key,
                decision_ref="${'off' + 'ers'}",
                result_variable="r",
                map_decision_result="resultList",
                **binding,
            )
        )
        instance = engine.start_latest(key, {"amount": 50, "wanted": 2})
        assert instance.variables()["r"][0] == {"offer": "small", "rate": rate}, key

    # The deployment binding: the decision deployed with the process, not a later one.
    engine.deploy(
        rule_process(
            "own",
            decision_ref="offers",
            binding="deployment",
            result_variable="r",
            map_decision_result="resultList",
        ),
        offers(rate="0.4", tag="v4"),
    )
    engine.deploy(offers(rate="0.5", tag="v5"))
    own = engine.start_latest("own", {"amount": 50})
    assert own.variables()["r"][0] == {"offer": "small", "rate": 0.4}

    # A binding no deployed decision satisfies fails the start naming the decision.
    engine.deploy(rule_process("missing", decision_ref="offers", binding="version", version=9))
    with pytest.raises(ExpressionError) as caught:
        engine.start_latest("missing", {"amount": 50})
    assert "no decision definition 'offers' version 9 is deployed" in caught.value.message


def test_a_failing_evaluation_in_a_job_counts_retries_then_opens_an_incident(
    engine: Engine,
) -> None:
    engine.deploy(offers(policy="UNIQUE"))
    engine.deploy(
        ProcessBuilder("async-rule")
        .start_event("s")
        .business_rule_task(
            "Decide",
            decision_ref="offers",
            result_variable="r",
            map_decision_result="singleResult",
            async_before=True,
            retry_cycle="R2/PT1S",
        )
        .end_event("e")
        .chain("s", "Decide", "e")
        .build()
    )
    instance = engine.start_latest("async-rule", {"amount": 50})
    [job] = engine.jobs(instance.id)
    assert engine.execute_job(job.id) == "failed"
    [job] = engine.jobs(instance.id)
    assert job.retries == 1
    assert job.error_message is not None
    assert "hit policy UNIQUE allows one matching rule, but 2 matched: Rule_Small, Rule_Any" in (
        job.error_message
    )
    assert engine.execute_job(job.id) == "failed"
    [incident] = engine.incidents()
    assert (incident.node_id, incident.type) == ("Decide", "failedJob")
    # Nothing of the failed attempts was kept: no evaluation row, no variable.
    assert rows(engine, "SELECT count(*) FROM decision_evaluation") == [(0,)]
    assert "r" not in instance.variables()
    # One match (amount 500): a retry goes through.
    instance.set_variables({"amount": 500})
    engine.set_job_retries(job.id, 1)
    assert engine.execute_job(job.id) == "executed"
    assert instance.variables()["r"] == {"offer": "standard", "rate": 0.5}


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ('camunda:decisionRef=""', "camunda:decisionRef is empty"),
        (
            'camunda:decisionRef="d" camunda:decisionRefBinding="newest"',
            "camunda:decisionRefBinding 'newest' is not one of latest, deployment, version, "
            "versionTag",
        ),
        (
            'camunda:decisionRef="d" camunda:decisionRefBinding="version"',
            'decisionRefBinding="version" needs camunda:decisionRefVersion',
        ),
        (
            'camunda:decisionRef="d" camunda:mapDecisionResult="firstEntry" '
            'camunda:resultVariable="r"',
            "camunda:mapDecisionResult 'firstEntry' is not one of singleEntry, singleResult, "
            "collectEntries, resultList",
        ),
        (
            'camunda:decisionRef="d" camunda:mapDecisionResult="singleEntry"',
            "camunda:mapDecisionResult needs camunda:resultVariable",
        ),
        ('camunda:decisionRef="${a +}"', "camunda:decisionRef"),
        (
            'camunda:decisionRef="d" camunda:decisionRefTenantId="t"',
            "camunda:decisionRefTenantId is not supported",
        ),
    ],
)
def test_a_business_rule_task_is_refused_naming_file_line_and_element(
    attributes: str, message: str
) -> None:
    from engine.bpmn.parser import parse_bpmn

    text = (
        '<?xml version="1.0"?>\n<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/'
        '20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d1">\n'
        '<bpmn:process id="p" isExecutable="true">\n<bpmn:startEvent id="s"/>\n'
        f'<bpmn:businessRuleTask id="Rules" {attributes}/>\n'
        '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="Rules"/>\n'
        "</bpmn:process>\n</bpmn:definitions>\n"
    )
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "rules.bpmn")
    assert message in caught.value.message
    assert (caught.value.detail["file"], caught.value.detail["line"]) == ("rules.bpmn", 5)
    assert caught.value.detail["element_id"] == "Rules"


def test_a_workers_report_reaching_a_business_rule_task_evaluates_under_the_lock(
    engine: Engine,
) -> None:
    """A worker's report runs optimistically first, outside a transaction; reaching the task, it
    runs again the ordinary way, and the decision is evaluated and recorded once."""
    engine.deploy(DATA / "dmn" / "dish_first.dmn")
    engine.deploy(
        ProcessBuilder("after-work")
        .start_event("s")
        .service_task("Count", topic="count-guests")
        .business_rule_task(
            "Decide", decision_ref="dish", result_variable="dish", map_decision_result="singleEntry"
        )
        .user_task("Cook")
        .end_event("e")
        .chain("s", "Count", "Decide", "Cook", "e")
        .build()
    )
    instance = engine.start_latest("after-work", {"season": "Fall"})
    [task] = engine.fetch_and_lock("w", {"count-guests": 30_000})
    engine.complete_external_task(task["id"], "w", {"guestCount": 6})
    assert instance.variables() == {"season": "Fall", "guestCount": 6, "dish": "Spareribs"}
    assert rows(engine, "SELECT instance_id, matched_rules FROM decision_evaluation") == [
        (instance.id, ["Rule_Fall"])
    ]
    assert [t.node_id for t in instance.user_tasks()] == ["Cook"]
