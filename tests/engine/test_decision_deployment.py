"""DMN files deployed and decisions evaluated through the engine, against a real database.

Each test costs a database, so each groups what one deployment shows: versions, refusals that
write nothing, and the history and outbox rows an evaluation writes in its transaction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.api import Engine
from engine.dmn import DmnEvaluationError
from engine.errors import BadRequest, ModelError, NotFound
from engine.states import OutboxEvent

DMN = Path(__file__).parent.parent / "data" / "dmn"
LOAN = DMN / "loan_eligibility.dmn"

# (age, income, creditScore, employment) -> (eligible, maxAmount, reason): one case per rule.
LOAN_CASES: list[tuple[tuple[int, float, int, str], tuple[bool, int, str]]] = [
    ((17, 90000, 800, "employed"), (False, 0, "too young")),
    ((30, 20000, 450, "employed"), (False, 0, "credit score too low")),
    ((30, 20000, 650, "unemployed"), (False, 0, "no regular income")),
    ((30, 120000, 780, "employed"), (True, 500000, "premium")),
    ((40, 60000, 720, "employed"), (True, 250000, "standard")),
    ((45, 45000, 660, "self-employed"), (True, 100000, "self-employed")),
    ((50, 35000, 650, "employed"), (True, 50000, "basic")),
    ((50, 35000, 650, "retired"), (False, 0, "manual review")),
]


def applicant(age: int, income: float, score: int, employment: str) -> dict[str, Any]:
    return {"age": age, "income": income, "creditScore": score, "employment": employment}


def count(engine: Engine, table: str) -> int:
    with engine.pool.connection() as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # noqa: S608 - fixed names
    assert row is not None
    return int(row[0])


def rows(engine: Engine, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with engine.pool.connection() as conn:
        return list(conn.execute(sql, params).fetchall())


def test_a_modeler_file_deploys_evaluates_and_versions_per_key(
    engine: Engine, tmp_path: Path
) -> None:
    first = engine.deploy(LOAN)
    [described] = first.decisions
    assert first.deployment_id is not None
    assert {k: described[k] for k in ("key", "version", "name", "resource_name", "created")} == {
        "key": "loanEligibility",
        "version": 1,
        "name": "Loan eligibility",
        "resource_name": "loan_eligibility.dmn",
        "created": True,
    }
    assert rows(
        engine,
        "SELECT version_tag, history_ttl_days, source_xml = %s FROM decision_definition",
        LOAN.read_text(),
    ) == [("2026.1", 180, True)]
    for inputs, (eligible, amount, reason) in LOAN_CASES:
        evaluated = engine.evaluate_decision("loanEligibility", applicant(*inputs))
        assert (evaluated.key, evaluated.version, evaluated.definition_id) == (
            "loanEligibility",
            1,
            described["id"],
        )
        assert evaluated.result == [{"eligible": eligible, "maxAmount": amount, "reason": reason}]

    # The same file again: no new version, no deployment.
    again = engine.deploy(LOAN)
    assert again.deployment_id is None
    assert [(d["id"], d["version"], d["created"]) for d in again.decisions] == [
        (described["id"], 1, False)
    ]

    # A changed file of the same name: version 2, which the key now evaluates.
    changed = tmp_path / "loan_eligibility.dmn"
    changed.write_text(LOAN.read_text().replace("<text>500000</text>", "<text>600000</text>"))
    second = engine.deploy(changed)
    [described_2] = second.decisions
    assert (described_2["key"], described_2["version"], described_2["created"]) == (
        "loanEligibility",
        2,
        True,
    )
    premium = applicant(30, 120000, 780, "employed")
    assert engine.evaluate_decision("loanEligibility", premium).result[0]["maxAmount"] == 600000
    assert engine.evaluate_decision("loanEligibility", premium, version=1).result[0] == {
        "eligible": True,
        "maxAmount": 500000,
        "reason": "premium",
    }
    assert engine.evaluate_decision("loanEligibility", premium, version_tag="2026.1").version == 2
    assert engine.deploy(changed).deployment_id is None
    assert rows(engine, "SELECT version FROM decision_definition ORDER BY version") == [(1,), (2,)]

    # A DMN 1.1 file (JUEL entries) deploys as well.
    old = engine.deploy(DMN / "discount_dmn11.dmn")
    assert [(d["key"], d["version"], d["created"]) for d in old.decisions] == [
        ("discount", 1, True)
    ]
    assert rows(engine, "SELECT version_tag FROM decision_definition WHERE key = 'discount'") == [
        ("1.0",)
    ]
    # Its input expression `customerStatus` reads the variable, as `${customerStatus}`.
    assert engine.evaluate_decision("discount", {"customerStatus": "gold"}).result == [
        {"discount": "gold"}
    ]
    assert engine.evaluate_decision("discount", {"customerStatus": "bronze"}).result == []

    with pytest.raises(NotFound):
        engine.evaluate_decision("loanEligibility", premium, version=3)


def _line_of(text: str, marker: str) -> int:
    return text[: text.index(marker)].count("\n") + 1


# (what is broken, old text, new text, the element named, the marker of its line, message part)
BROKEN: list[tuple[str, str, str, str, str, str]] = [
    (
        "an input entry that does not parse",
        "<text>[50000..100000[</text>",
        "<text>[50000..</text>",
        "UnaryTests_0y5h6ua1",
        'id="UnaryTests_0y5h6ua1"',
        "does not parse",
    ),
    (
        "an output name used twice",
        'name="reason"',
        'name="eligible"',
        "Output_Reason",
        'id="Output_Reason"',
        "the output name 'eligible' is used twice",
    ),
    (
        "a hit policy not allowed",
        'hitPolicy="FIRST"',
        'hitPolicy="LAST"',
        "DecisionTable_Loan",
        'id="DecisionTable_Loan"',
        "hitPolicy 'LAST' is not one of",
    ),
    (
        "an aggregation with a policy other than COLLECT",
        'hitPolicy="FIRST"',
        'hitPolicy="FIRST" aggregation="SUM"',
        "DecisionTable_Loan",
        'id="DecisionTable_Loan"',
        "aggregation SUM is only allowed with hitPolicy COLLECT",
    ),
]
WRITTEN = ("deployment", "decision_definition", "process_definition", "audit_entry", "outbox")


def test_a_refused_file_names_file_line_and_element_and_writes_nothing(
    engine: Engine, tmp_path: Path
) -> None:
    source = LOAN.read_text()
    before = {table: count(engine, table) for table in WRITTEN}
    for what, old, new, element, marker, message in BROKEN:
        assert source.count(old) == 1, what
        broken = source.replace(old, new)
        path = tmp_path / "broken_loan.dmn"
        path.write_text(broken)
        with pytest.raises(ModelError) as raised:
            # Deployed with a good file: the deployment is refused as a whole.
            engine.deploy(DMN / "dish_first.dmn", path)
        error = raised.value
        assert (error.file, error.line, error.element_id) == (
            "broken_loan.dmn",
            _line_of(broken, marker),
            element,
        ), what
        assert message in error.message, what
        assert error.message.startswith(f"broken_loan.dmn, line {error.line}, element '{element}'")
    assert {table: count(engine, table) for table in WRITTEN} == before
    with pytest.raises(NotFound):
        engine.evaluate_decision("dish", {"season": "Fall", "guestCount": 4})


def test_every_evaluation_writes_its_history_and_outbox_rows_in_its_transaction(
    engine: Engine,
) -> None:
    engine.deploy(DMN / "beverages_drd.dmn")
    evaluated = engine.evaluate_decision(
        "beverages", {"season": "Summer", "guestsWithChildren": True}
    )
    assert evaluated.result == [{"beverages": "Apple Juice"}]
    [asked, required] = rows(
        engine,
        "SELECT id, root_id, decision_key, definition_id, instance_id, inputs, matched_rules,"
        " result, xmin::text::bigint FROM decision_evaluation ORDER BY root_id NULLS FIRST",
    )
    assert str(asked[0]) == evaluated.evaluation_id
    assert asked[1:3] == (None, "beverages")
    assert asked[3] == evaluated.definition_id
    assert asked[4] is None
    assert asked[5] == [
        {"id": "Input_Dish", "label": "Dish", "type": "string", "value": "Light salad"},
        {"id": "Input_Children", "label": "Guests with children", "type": "boolean", "value": True},
    ]
    assert asked[6:8] == (["Rule_Juice"], [{"beverages": "Apple Juice"}])
    # The required decision: its own definition of the same deployment, rooted at the asked one.
    assert required[1] == asked[0]
    assert required[2] == "season_dish"
    assert required[3].startswith("season_dish:1:")
    assert required[6:8] == (["Rule_Summer"], [{"dish": "Light salad"}])
    [outbox] = rows(
        engine,
        "SELECT event, instance_id, node_id, history_id, txid %% 4294967296 FROM outbox_event"
        " WHERE event = %s",
        OutboxEvent.DECISION_EVALUATED.value,
    )
    assert outbox[:4] == ("decision.evaluated", asked[0], "beverages", asked[0])
    # One transaction wrote the history rows and the outbox row.
    assert outbox[4] == asked[8] == required[8]

    # A second evaluation: two more history rows and one more outbox row.
    second = engine.evaluate_decision(
        "beverages", {"season": "Summer", "guestsWithChildren": False}
    )
    assert second.result == []
    assert count(engine, "decision_evaluation") == 4
    # A failed evaluation writes nothing at all.
    with pytest.raises(DmnEvaluationError, match="guestsWithChildren"):
        engine.evaluate_decision("beverages", {"season": "Summer"})
    # Variables no history row could hold are refused naming the variable, not left to the
    # database to reject.
    engine.deploy(DMN / "dish_first.dmn")
    refused: list[tuple[dict[str, Any], str]] = [
        ({"season": "Fa\x00ll", "guestCount": 4}, "season"),
        ({"season": "\ud800", "guestCount": 4}, "season"),
        ({"season": "Fall", "guestCount": 4, "extra": [1.0, float("nan")]}, "extra[1]"),
    ]
    for variables, where in refused:
        with pytest.raises(BadRequest) as raised:
            engine.evaluate_decision("dish", variables)
        assert raised.value.message.startswith(f"field '{where}' must "), raised.value.message
    assert count(engine, "decision_evaluation") == 4
    assert len(rows(engine, "SELECT 1 FROM outbox_event WHERE event = 'decision.evaluated'")) == 2
