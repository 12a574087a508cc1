"""A business rule task evaluated by instances started from several connections at once: every
evaluation's history row is reproduced by evaluating the table again from the inputs it recorded,
and matches what its instance stored."""

from __future__ import annotations

import random
import threading
from typing import Any

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.dmn import parse_dmn
from engine.dmn.evaluate import compile_definitions

STARTS = 1000
CONNECTIONS = 4

RISK = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/"
  xmlns:camunda="http://camunda.org/schema/1.0/dmn"
  id="Risk" name="Risk" namespace="http://camunda.org/schema/1.0/dmn">
  <decision id="risk" name="Risk">
    <decisionTable id="Table_Risk" hitPolicy="FIRST">
      <input id="In_Amount" label="Amount">
        <inputExpression id="E_Amount" typeRef="integer"><text>amount</text></inputExpression>
      </input>
      <input id="In_Country" label="Country">
        <inputExpression id="E_Country" typeRef="string"><text>country</text></inputExpression>
      </input>
      <input id="In_Vip" label="VIP">
        <inputExpression id="E_Vip" typeRef="boolean"><text>vip</text></inputExpression>
      </input>
      <input id="In_Score" label="Score">
        <inputExpression id="E_Score" typeRef="double"><text>score / 10</text></inputExpression>
      </input>
      <output id="Out_Level" label="Level" name="level" typeRef="string" />
      <output id="Out_Limit" label="Limit" name="limit" typeRef="integer" />
      <rule id="R_Vip">
        <inputEntry id="R_Vip_1"><text>-</text></inputEntry>
        <inputEntry id="R_Vip_2"><text>-</text></inputEntry>
        <inputEntry id="R_Vip_3"><text>true</text></inputEntry>
        <inputEntry id="R_Vip_4"><text>&gt;= 5</text></inputEntry>
        <outputEntry id="R_Vip_5"><text>"low"</text></outputEntry>
        <outputEntry id="R_Vip_6"><text>amount * 2</text></outputEntry>
      </rule>
      <rule id="R_Huge">
        <inputEntry id="R_Huge_1"><text>&gt; 9000</text></inputEntry>
        <inputEntry id="R_Huge_2"><text>-</text></inputEntry>
        <inputEntry id="R_Huge_3"><text>-</text></inputEntry>
        <inputEntry id="R_Huge_4"><text>-</text></inputEntry>
        <outputEntry id="R_Huge_5"><text>"high"</text></outputEntry>
        <outputEntry id="R_Huge_6"><text>0</text></outputEntry>
      </rule>
      <rule id="R_Abroad">
        <inputEntry id="R_Abroad_1"><text>[1000..9000]</text></inputEntry>
        <inputEntry id="R_Abroad_2"><text>not("DE", "AT")</text></inputEntry>
        <inputEntry id="R_Abroad_3"><text>-</text></inputEntry>
        <inputEntry id="R_Abroad_4"><text>&lt; 3</text></inputEntry>
        <outputEntry id="R_Abroad_5"><text>"high"</text></outputEntry>
        <outputEntry id="R_Abroad_6"><text>floor(amount / 4)</text></outputEntry>
      </rule>
      <rule id="R_Home">
        <inputEntry id="R_Home_1"><text>-</text></inputEntry>
        <inputEntry id="R_Home_2"><text>"DE","AT"</text></inputEntry>
        <inputEntry id="R_Home_3"><text>-</text></inputEntry>
        <inputEntry id="R_Home_4"><text>]2..8]</text></inputEntry>
        <outputEntry id="R_Home_5"><text>"medium"</text></outputEntry>
        <outputEntry id="R_Home_6"><text>amount + 100</text></outputEntry>
      </rule>
      <rule id="R_Rest">
        <inputEntry id="R_Rest_1"><text>-</text></inputEntry>
        <inputEntry id="R_Rest_2"><text>-</text></inputEntry>
        <inputEntry id="R_Rest_3"><text>-</text></inputEntry>
        <inputEntry id="R_Rest_4"><text>-</text></inputEntry>
        <outputEntry id="R_Rest_5"><text>"review"</text></outputEntry>
        <outputEntry id="R_Rest_6"><text>null</text></outputEntry>
      </rule>
    </decisionTable>
  </decision>
</definitions>
"""


def test_evaluations_from_racing_connections_are_reproduced_from_their_history(
    engine: Engine,
) -> None:
    engine.deploy(RISK)
    engine.deploy(
        ProcessBuilder("risk-check")
        .start_event("s")
        .business_rule_task(
            "Assess",
            decision_ref="risk",
            result_variable="assessment",
            map_decision_result="singleResult",
        )
        .end_event("e")
        .chain("s", "Assess", "e")
        .build()
    )
    generator = random.Random(24)
    inputs = [
        {
            "amount": generator.choice([50, 999, 1000, 4000, 9000, 9001, 20000]),
            "country": generator.choice(["DE", "AT", "FR", "US"]),
            "vip": generator.random() < 0.2,
            "score": generator.randint(0, 100),
        }
        for _ in range(STARTS)
    ]
    started: dict[Any, dict[str, Any]] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(CONNECTIONS)
    lock = threading.Lock()

    def starter(part: list[dict[str, Any]]) -> None:
        try:
            barrier.wait()
            for variables in part:
                instance = engine.start_latest("risk-check", variables)
                with lock:
                    started[instance.id] = variables
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [
        threading.Thread(target=starter, args=(inputs[n::CONNECTIONS],)) for n in range(CONNECTIONS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(started) == STARTS

    with engine.pool.connection() as conn:
        evaluations = conn.execute(
            "SELECT e.instance_id, e.variables, e.inputs, e.matched_rules, e.result, v.value "
            "FROM decision_evaluation e JOIN variable v "
            "ON v.instance_id = e.instance_id AND v.name = 'assessment'"
        ).fetchall()
    assert len(evaluations) == STARTS
    assert {row[0] for row in evaluations} == set(started)
    table = compile_definitions(parse_dmn(RISK, "risk.dmn"), "risk.dmn")
    matched_rules: set[str] = set()
    for instance_id, read, recorded_inputs, matched, result, stored in evaluations:
        variables = started[instance_id]
        expected_inputs = [
            variables["amount"],
            variables["country"],
            variables["vip"],
            variables["score"] / 10,
        ]
        assert [item["value"] for item in recorded_inputs] == expected_inputs
        # Exactly the variables the table reads were recorded, and they reproduce it.
        assert read == {name: variables[name] for name in ("amount", "country", "vip", "score")}
        again = table.replay("risk", read)
        assert [item.value for item in again.inputs] == expected_inputs
        assert list(again.matched_rules) == matched
        assert again.result == result
        assert table.evaluate("risk", variables).result == result
        assert stored == result[0]
        matched_rules.update(matched)
    # The inputs reach every rule of the table.
    assert matched_rules == {"R_Vip", "R_Huge", "R_Abroad", "R_Home", "R_Rest"}
