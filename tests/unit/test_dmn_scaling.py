"""Reading and compiling a DMN file grows linearly with its rules, and the limits of a file.

Work is counted, not timed (tests/unit/test_parse_scaling.py's `operations`: the lines of Python
a call executes): doubling a decision table's rules must about double the count. A check of each
rule's id against every rule before it, as the parser once made, quadruples it. Tables beyond
the rule limit and files beyond the decision limit are refused with a ModelError naming the
file, line and element of the first one over, before their rules are read.
"""

from __future__ import annotations

import pytest

from bench.dmn_deploy_bench import rules_table
from engine.core.settings import EngineSettings
from engine.dmn import parse_dmn
from engine.dmn.evaluate import compile_definitions
from engine.errors import ModelError
from engine.model import DEFAULT_LIMITS, ModelLimits
from tests.unit.test_parse_scaling import LINEAR, growth


def _line_of(data: bytes, marker: str) -> int:
    text = data.decode()
    return text[: text.index(marker)].count("\n") + 1


def test_parsing_a_table_grows_linearly_with_its_rules() -> None:
    assert growth(rules_table, lambda data: parse_dmn(data, "rules.dmn"), 1_000) < LINEAR


def test_compiling_a_table_grows_linearly_with_its_rules() -> None:
    def compiled(data: bytes) -> object:
        return compile_definitions(parse_dmn(data, "rules.dmn"), "rules.dmn")

    assert growth(rules_table, compiled, 500) < LINEAR


def test_a_rule_id_used_twice_is_refused_naming_the_later_rule() -> None:
    data = rules_table(1_000)
    twice = data.replace(b'<rule id="Rule_999">', b'<rule id="Rule_0">')
    with pytest.raises(ModelError) as refused:
        parse_dmn(twice, "twice.dmn")
    assert (refused.value.file, refused.value.element_id) == ("twice.dmn", "Rule_0")
    assert refused.value.line == _line_of(twice, '<rule id="Rule_998">') + 1
    assert "the rule id 'Rule_0' is used twice" in refused.value.message


def test_the_engine_settings_default_to_the_dmn_limits() -> None:
    settings = EngineSettings()
    assert settings.max_decision_rules == DEFAULT_LIMITS.max_rules == 10_000
    assert settings.max_dmn_decisions == DEFAULT_LIMITS.max_decisions == 100
    assert settings.max_bpmn_bytes == DEFAULT_LIMITS.max_bytes


def test_more_rules_than_the_limit_are_refused_naming_the_first_one_over() -> None:
    data = rules_table(31)
    with pytest.raises(ModelError) as refused:
        parse_dmn(data, "big.dmn", ModelLimits(max_rules=30))
    error = refused.value
    assert (error.file, error.element_id) == ("big.dmn", "Rule_30")
    assert error.line == _line_of(data, '<rule id="Rule_30">')
    assert "31 rules, more than 30" in error.message and "max_decision_rules" in error.message
    assert len(parse_dmn(data, "fits.dmn", ModelLimits(max_rules=31)).decisions) == 1
    # A deployed definition is read whatever the limits were.
    assert len(parse_dmn(data, "stored.dmn", None).decisions) == 1


def test_a_table_at_the_default_rule_limit_passes_and_one_more_is_refused() -> None:
    at_limit = rules_table(DEFAULT_LIMITS.max_rules)
    [decision] = parse_dmn(at_limit, "limit.dmn").decisions
    assert decision.id == "bench-rules"
    with pytest.raises(ModelError, match="max_decision_rules") as refused:
        parse_dmn(rules_table(DEFAULT_LIMITS.max_rules + 1), "over.dmn")
    assert refused.value.element_id == f"Rule_{DEFAULT_LIMITS.max_rules}"


def _decisions(count: int) -> bytes:
    literal = '<literalExpression id="L{0}"><text>{0}</text></literalExpression>'
    decisions = "".join(
        f'<decision id="d{i}">\n{literal.format(i)}</decision>\n' for i in range(count)
    )
    return (
        '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="defs" '
        f'name="many" namespace="http://camunda.org/schema/1.0/dmn">\n{decisions}</definitions>'
    ).encode()


def test_more_decisions_than_the_limit_are_refused_naming_the_first_one_over() -> None:
    data = _decisions(DEFAULT_LIMITS.max_decisions + 1)
    with pytest.raises(ModelError) as refused:
        parse_dmn(data, "many.dmn")
    error = refused.value
    assert (error.file, error.element_id) == ("many.dmn", "d100")
    assert error.line == _line_of(data, '<decision id="d100">')
    assert "101 decisions, more than 100" in error.message and "max_dmn_decisions" in error.message
    fits = _decisions(DEFAULT_LIMITS.max_decisions)
    assert len(parse_dmn(fits, "fits.dmn").decisions) == 100
    raised = ModelLimits(max_decisions=101)
    assert len(parse_dmn(data, "many.dmn", raised).decisions) == 101


def test_a_larger_file_than_the_limit_is_refused_naming_the_setting() -> None:
    data = rules_table(10)
    with pytest.raises(ModelError) as refused:
        parse_dmn(data, "big.dmn", ModelLimits(max_bytes=len(data) - 1))
    assert refused.value.file == "big.dmn"
    assert f"larger than {len(data) - 1} bytes" in refused.value.message
    assert "max_bpmn_bytes" in refused.value.message
