from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.dmn import (
    Aggregation,
    DecisionTable,
    Entry,
    ExpressionLanguage,
    HitPolicy,
    InputClause,
    LiteralExpression,
    OutputClause,
    Rule,
    parse_dmn,
)
from engine.dmn.graph import evaluation_order, find_cycle
from engine.errors import ModelError
from engine.model import ModelLimits

DATA = Path(__file__).parent.parent / "data" / "dmn"
DMN13 = "https://www.omg.org/spec/DMN/20191111/MODEL/"


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


def document(body: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<definitions xmlns="{DMN13}" xmlns:camunda="http://camunda.org/schema/1.0/dmn" '
        'id="Definitions_Bad" name="Bad" namespace="http://camunda.org/schema/1.0/dmn">\n'
        f"{body}\n"
        "</definitions>\n"
    )


def line_of(text: str, marker: str) -> int:
    return text[: text.index(marker)].count("\n") + 1


def table(body: str, attributes: str = "", decision_id: str = "d") -> str:
    return (
        f'<decision id="{decision_id}" name="D">\n'
        f'<decisionTable id="T_{decision_id}"{attributes}>\n'
        '<input id="In_1"><inputExpression id="E_1" typeRef="integer"><text>a</text>'
        "</inputExpression></input>\n"
        f"{body}\n"
        "</decisionTable>\n</decision>"
    )


OUT = '<output id="Out_1" name="x" typeRef="string" />'


def test_first_table_with_two_inputs_as_camunda_modeler_saves_it() -> None:
    definitions = parse_dmn(read("dish_first.dmn"), "dish_first.dmn")
    assert (definitions.id, definitions.name) == ("Definitions_Dish", "Dish")
    assert definitions.namespace == "http://camunda.org/schema/1.0/dmn"
    [decision] = definitions.decisions
    assert (decision.id, decision.name, decision.version_tag) == ("dish", "Dish", "v3")
    assert decision.history_time_to_live == 30
    assert decision.requirements == ()
    assert decision.logic == DecisionTable(
        id="DecisionTable_Dish",
        hit_policy=HitPolicy.FIRST,
        aggregation=None,
        inputs=(
            InputClause(
                id="Input_Season",
                label="Season",
                expression=Entry("season", ExpressionLanguage.FEEL, "InputExpression_Season"),
                type_ref="string",
                input_variable="cellInput",
                input_values='"Spring","Summer","Fall","Winter"',
            ),
            InputClause(
                id="Input_Guests",
                label="How many guests",
                expression=Entry("guestCount", ExpressionLanguage.FEEL, "InputExpression_Guests"),
                type_ref="integer",
                input_variable="guests",
            ),
        ),
        outputs=(OutputClause(id="Output_Dish", label="Dish", name="dish", type_ref="string"),),
        rules=(
            Rule(
                id="Rule_Fall",
                description="Autumn is for stew",
                input_entries=(
                    Entry('"Fall"', id="UnaryTests_1a"),
                    Entry("<= 8", id="UnaryTests_1b"),
                ),
                output_entries=(Entry('"Spareribs"', id="LiteralExpression_1"),),
            ),
            Rule(
                id="Rule_Winter",
                description=None,
                input_entries=(
                    Entry('"Winter"', id="UnaryTests_2a"),
                    Entry("", id="UnaryTests_2b"),
                ),
                output_entries=(Entry('"Roastbeef"', id="LiteralExpression_2"),),
            ),
        ),
    )


def test_collect_sum_and_the_same_table_in_dmn_1_2() -> None:
    points = parse_dmn(read("points_collect_sum.dmn"), "points_collect_sum.dmn")
    older = parse_dmn(read("points_dmn12.dmn"), "points_dmn12.dmn")
    assert points == older
    logic = points.decision("points").logic
    assert isinstance(logic, DecisionTable)
    assert (logic.hit_policy, logic.aggregation) == (HitPolicy.COLLECT, Aggregation.SUM)
    assert [rule.id for rule in logic.rules] == ["Rule_Base", "Rule_Large"]
    assert [rule.output_entries[0].text for rule in logic.rules] == ["10", "50"]


def test_decision_requirements_graph_orders_required_decisions_first() -> None:
    definitions = parse_dmn(read("beverages_drd.dmn"), "beverages_drd.dmn")
    beverages = definitions.decision("beverages")
    # requiredInput (input data) is no decision and is not a requirement to evaluate.
    assert beverages.requirements == ("season_dish",)
    assert [d.id for d in evaluation_order(definitions, "beverages")] == [
        "season_dish",
        "beverages",
    ]
    assert [d.id for d in evaluation_order(definitions, "season_dish")] == ["season_dish"]
    logic = definitions.decision("season_dish").logic
    assert isinstance(logic, DecisionTable) and logic.hit_policy is HitPolicy.UNIQUE


def test_literal_expression_decision() -> None:
    definitions = parse_dmn(read("greeting_literal.dmn"), "greeting_literal.dmn")
    decision = definitions.decision("greeting")
    assert decision.history_time_to_live == 7
    assert decision.logic == LiteralExpression(
        id="LiteralExpression_Greeting",
        variable_name="greetingText",
        type_ref="string",
        expression=Entry('"Hello " + name', ExpressionLanguage.FEEL, "LiteralExpression_Greeting"),
    )


def test_dmn_1_1_file_with_juel_and_priority_output_values() -> None:
    definitions = parse_dmn(read("discount_dmn11.dmn"), "discount_dmn11.dmn")
    assert definitions.expression_language is ExpressionLanguage.JUEL
    decision = definitions.decision("discount")
    assert decision.version_tag == "1.0"
    logic = decision.logic
    assert isinstance(logic, DecisionTable)
    assert logic.hit_policy is HitPolicy.PRIORITY
    assert logic.inputs[0].input_variable == "input1"
    assert logic.inputs[0].expression.language is ExpressionLanguage.JUEL
    assert logic.outputs[0].output_values == ('"gold"', '"silver"', '"none"')
    [rule] = logic.rules
    assert rule.input_entries[0] == Entry(
        "${input1 == 'gold'}", ExpressionLanguage.JUEL, "inputEntry_gold"
    )
    assert rule.output_entries[0].language is ExpressionLanguage.FEEL


def test_default_output_entry_and_string_values_with_commas() -> None:
    text = document(
        table(
            '<output id="Out_1" name="x" typeRef="string">'
            '<outputValues id="V"><text>"a, b", "c\\"d", "e"</text></outputValues>'
            '<defaultOutputEntry id="Def"><text>"e"</text></defaultOutputEntry></output>'
        )
    )
    logic = parse_dmn(text, "default.dmn").decision("d").logic
    assert isinstance(logic, DecisionTable)
    assert logic.outputs[0].output_values == ('"a, b"', '"c\\"d"', '"e"')
    assert logic.outputs[0].default_output_entry == Entry('"e"', id="Def")
    assert logic.rules == ()


BAD: list[tuple[str, str, str, str]] = [
    (
        "input entries",
        table(f'{OUT}\n<rule id="R_bad"><outputEntry><text>"y"</text></outputEntry></rule>'),
        'id="R_bad"',
        "R_bad",
    ),
    (
        "output entries",
        table(
            f"{OUT}\n"
            '<rule id="R_out"><inputEntry><text>1</text></inputEntry>'
            "<outputEntry><text>1</text></outputEntry><outputEntry><text>2</text></outputEntry>"
            "</rule>"
        ),
        'id="R_out"',
        "R_out",
    ),
    (
        "rule id 'R_1' is used twice",
        table(
            f"{OUT}\n"
            '<rule id="R_1"><inputEntry><text>1</text></inputEntry>'
            "<outputEntry><text>1</text></outputEntry></rule>\n"
            '<rule id="R_1"><inputEntry><text>2</text></inputEntry>'
            "<outputEntry><text>2</text></outputEntry></rule>"
        ),
        'id="R_1"><inputEntry><text>2',
        "R_1",
    ),
    (
        "used twice",
        table(f'{OUT}\n<output id="Out_2" name="x" typeRef="string" />'),
        'id="Out_2"',
        "Out_2",
    ),
    ("hitPolicy 'SOME'", table(OUT, ' hitPolicy="SOME"'), 'id="T_d"', "T_d"),
    (
        "only allowed with hitPolicy COLLECT",
        table(OUT, ' hitPolicy="FIRST" aggregation="SUM"'),
        'id="T_d"',
        "T_d",
    ),
    ("aggregation 'AVG'", table(OUT, ' hitPolicy="COLLECT" aggregation="AVG"'), 'id="T_d"', "T_d"),
    (
        "'missing' does not exist",
        '<decision id="needy">\n<informationRequirement id="IR">'
        '<requiredDecision href="#missing" /></informationRequirement>\n'
        '<literalExpression id="L"><text>1</text></literalExpression>\n</decision>',
        'id="needy"',
        "needy",
    ),
    (
        "cycle: a -> b -> a",
        '<decision id="a">\n<informationRequirement id="IR_a"><requiredDecision href="#b" />'
        '</informationRequirement>\n<literalExpression id="La"><text>1</text></literalExpression>'
        '\n</decision>\n<decision id="b">\n<informationRequirement id="IR_b">'
        '<requiredDecision href="#a" /></informationRequirement>\n'
        '<literalExpression id="Lb"><text>1</text></literalExpression>\n</decision>',
        'id="a"',
        "a",
    ),
    (
        "exactly one decisionTable or literalExpression",
        '<decision id="empty" name="Nothing">\n</decision>',
        'id="empty"',
        "empty",
    ),
    (
        "decision id 'twice' is used twice",
        '<decision id="twice">\n<literalExpression id="L1"><text>1</text></literalExpression>'
        '</decision>\n<decision id="twice">\n'
        '<literalExpression id="L2"><text>2</text></literalExpression></decision>',
        'id="twice">\n<literalExpression id="L2"',
        "twice",
    ),
    (
        "needs a table with exactly one output",
        table(
            f'{OUT}\n<output id="Out_2" name="y" typeRef="integer" />',
            ' hitPolicy="COLLECT" aggregation="COUNT"',
        ),
        'id="T_d"',
        "T_d",
    ),
    (
        "needs outputValues",
        table(OUT, ' hitPolicy="OUTPUT ORDER"'),
        'id="T_d"',
        "T_d",
    ),
    (
        "names starting with '_' are not allowed",
        '<decision id="juel">\n<literalExpression id="Lj" expressionLanguage="juel">'
        "<text>${x.__class__}</text></literalExpression></decision>",
        'id="Lj"',
        "Lj",
    ),
    (
        "expressionLanguage 'javascript'",
        '<decision id="js">\n<literalExpression id="L" expressionLanguage="javascript">'
        "<text>1</text></literalExpression></decision>",
        'id="L"',
        "L",
    ),
]


@pytest.mark.parametrize(("message", "body", "marker", "element"), BAD, ids=[b[0] for b in BAD])
def test_refused_files_name_file_line_and_element(
    message: str, body: str, marker: str, element: str
) -> None:
    text = document(body)
    with pytest.raises(ModelError) as caught:
        parse_dmn(text.encode(), "bad.dmn")
    error = caught.value
    assert message in error.message
    assert (error.file, error.line, error.element_id) == ("bad.dmn", line_of(text, marker), element)
    assert error.message.startswith(f"bad.dmn, line {error.line}, element '{element}': ")


def test_doctype_and_entities_are_refused() -> None:
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE definitions [<!ENTITY boom "boom">]>\n'
        + document(
            '<decision id="d"><literalExpression><text>&boom;</text></literalExpression></decision>'
        ).split("\n", 1)[1]
    )
    with pytest.raises(ModelError, match="DOCTYPE") as caught:
        parse_dmn(text.encode(), "entity.dmn")
    assert (caught.value.file, caught.value.line) == ("entity.dmn", 2)


def test_undeclared_entities_and_malformed_xml_are_refused_with_their_line() -> None:
    text = document('<decision id="d">\n<literalExpression><text>&boom;</text></literalExpression>')
    with pytest.raises(ModelError, match="malformed XML") as caught:
        parse_dmn(text.encode(), "broken.dmn")
    assert (caught.value.file, caught.value.line) == ("broken.dmn", 4)


def test_size_limit_and_foreign_root_are_refused() -> None:
    with pytest.raises(ModelError, match="larger than 100 bytes"):
        parse_dmn(read("dish_first.dmn"), "dish_first.dmn", ModelLimits(max_bytes=100))
    bpmn = '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="x" />'
    with pytest.raises(ModelError, match="not the definitions of DMN"):
        parse_dmn(bpmn, "process.bpmn")


def test_find_cycle() -> None:
    assert find_cycle({"a": ["b"], "b": ["c"], "c": []}) is None
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["b"]}) == ["b", "c", "b"]
    assert find_cycle({"a": ["a"]}) == ["a", "a"]


def test_evaluation_order_visits_shared_requirements_once() -> None:
    text = document(
        '<decision id="top"><informationRequirement id="I1"><requiredDecision href="#left" />'
        '</informationRequirement><informationRequirement id="I2">'
        '<requiredDecision href="#right" /></informationRequirement>'
        '<literalExpression id="Lt"><text>1</text></literalExpression></decision>'
        '<decision id="left"><informationRequirement id="I3"><requiredDecision href="#base" />'
        '</informationRequirement><literalExpression id="Ll"><text>1</text></literalExpression>'
        '</decision><decision id="right"><informationRequirement id="I4">'
        '<requiredDecision href="#base" /></informationRequirement>'
        '<literalExpression id="Lr"><text>1</text></literalExpression></decision>'
        '<decision id="base"><literalExpression id="Lb"><text>1</text></literalExpression>'
        "</decision>"
    )
    definitions = parse_dmn(text, "diamond.dmn")
    assert [d.id for d in evaluation_order(definitions, "top")] == ["base", "left", "right", "top"]
    assert [d.id for d in evaluation_order(definitions, "right")] == ["base", "right"]
    with pytest.raises(KeyError):
        evaluation_order(definitions, "missing")


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(sorted(path.name for path in DATA.glob("*.dmn"))),
    start=st.integers(min_value=0, max_value=4000),
    length=st.integers(min_value=0, max_value=40),
    insert=st.binary(max_size=12) | st.sampled_from([b"<", b"&x;", b'"', b"</rule>", b"#"]),
)
def test_damaged_files_parse_or_are_refused_as_model_errors(
    name: str, start: int, length: int, insert: bytes
) -> None:
    data = read(name)
    damaged = data[:start] + insert + data[start + length :]
    try:
        parse_dmn(damaged, name)
    except ModelError as error:
        assert error.file == name


def test_expression_language_is_inherited_from_definitions_then_table_then_entry() -> None:
    text = document(
        table(
            f"{OUT}\n"
            '<rule id="R_1"><inputEntry expressionLanguage="juel"><text>${cellInput > 1}</text>'
            "</inputEntry><outputEntry><text>1</text></outputEntry></rule>",
            ' expressionLanguage="feel"',
        )
    ).replace('name="Bad"', 'name="Bad" expressionLanguage="juel"')
    definitions = parse_dmn(text, "languages.dmn")
    assert definitions.expression_language is ExpressionLanguage.JUEL
    logic = definitions.decision("d").logic
    assert isinstance(logic, DecisionTable)
    assert logic.inputs[0].expression.language is ExpressionLanguage.FEEL
    [rule] = logic.rules
    assert rule.input_entries[0].language is ExpressionLanguage.JUEL
    assert rule.output_entries[0].language is ExpressionLanguage.FEEL
