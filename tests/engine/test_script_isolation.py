"""Nothing a script does is seen by a later script, and what a script writes is checked as request
input is. The scripts of each test run one after another in one script process (the fixture
`one_script_process`), as the scripts of unrelated instances and operators may."""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.errors import HandlerError
from engine.scripting import Isolate, ScriptError, ScriptLimits, evaluate, hosts, outcome

# A model written to attack the sandbox: it tries to hook everything the sandbox itself uses
# (the prelude's bindings, the built-ins it calls, the global object), leaves globals and a
# promise job behind, and stores what it catches where a later script might look.
ATTACK = r"""
var stolen = [];
function spy() { stolen.push(Array.prototype.slice.call(arguments)); return true; }
function attempt(f) { try { f(); } catch (e) { /* frozen or out of reach */ } }
attempt(function () {
  own = { stolen: stolen, call: function (o, k) {  // what the victim's lookups would go through
    stolen.push([o, k]); return Object.prototype.hasOwnProperty.apply(o, [k]);
  } };
});
attempt(function () { clean = function () { return true; }; });
attempt(function () { global = { hooked: true }; });
attempt(function () { vars = stolen; changes = stolen; });
attempt(function () { Object.prototype.hasOwnProperty = spy; });
attempt(function () { Function.prototype.call = spy; });
attempt(function () { Reflect.apply = spy; });
attempt(function () { JSON.stringify = spy; });
attempt(function () { Object.defineProperty(JSON, 'parse', { value: spy }); });
attempt(function () { RegExp.prototype.exec = spy; });
attempt(function () { String.prototype.indexOf = spy; });
attempt(function () { Array.prototype.push = spy; });
attempt(function () { globalThis.__interlock_run = spy; });
attempt(function () { __TimerManager = stolen; });
attempt(function () { Promise.prototype.then = spy; });
attempt(function () { Object.setPrototypeOf(globalThis, { hooked: stolen }); });
Promise.resolve().then(function () { globalThis.late = stolen; lateTrap = stolen; });
trap = stolen;
globalThis.box = stolen;
'armed'
"""

# Another operator's instance: its script handles an e-mail address and a social security number.
VICTIM = r"""
var user = /^([^@]+)@(.+)$/.exec(email)[1];
var digits = ssn.replace(/-/g, '');
/(\d{3})-(\d{2})-(\d{4})/.test(ssn);
execution.setVariable('checked', user + ':' + digits.length);
"""

# A third script looks everywhere a previous script could have left something.
READER = r"""
var seen = [];
function peek(name, f) {
  try { seen.push(name + '=' + JSON.stringify(f())); } catch (e) { seen.push(name + '!' + e); }
}
peek('trap', function () { return trap; });
peek('box', function () { return globalThis.box; });
peek('late', function () { return globalThis.late; });
peek('lateTrap', function () { return lateTrap; });
peek('own', function () { return own; });
peek('timers', function () { return __TimerManager; });
peek('proto', function () { return Object.getPrototypeOf(globalThis).hooked; });
peek('regexp', function () {
  return [RegExp.input, RegExp.lastMatch, RegExp.lastParen, RegExp.leftContext,
          RegExp.rightContext, RegExp.$1, RegExp.$2, RegExp.$3];
});
peek('globals', function () { return Object.keys(globalThis); });
peek('hooks', function () {
  return [typeof JSON.stringify, Object.prototype.hasOwnProperty.name, [].push.name];
});
execution.setVariable('seen', seen.join('\n'));
"""


def scripted(key: str, script: str) -> ProcessBuilder:
    builder = ProcessBuilder(key).start_event("start")
    builder.script_task("run", script=script).user_task("wait").end_event("end")
    return builder.chain("start", "run", "wait", "end")


def test_a_script_that_hooks_the_sandbox_sees_nothing_of_later_scripts(
    engine: Engine, one_script_process: hosts.HostPool
) -> None:
    for key, script in (("attack", ATTACK), ("victim", VICTIM), ("reader", READER)):
        engine.deploy(scripted(key, script).build())
    engine.start_latest("attack", {"note": "mallory's"})
    victim = engine.start_latest(
        "victim", {"email": "alice.smith@example.org", "ssn": "078-05-1120"}
    )
    assert victim.variables()["checked"] == "alice.smith:9"  # the victim's script ran unhooked
    reader = engine.start_latest("reader", {})
    seen = str(reader.variables()["seen"])
    for secret in ("alice", "example.org", "078", "05", "1120", "armed", "mallory"):
        assert secret not in seen, seen
    assert seen.splitlines() == [
        "trap!ReferenceError: trap is not defined",
        "box=undefined",
        "late=undefined",
        "lateTrap!ReferenceError: lateTrap is not defined",
        "own!ReferenceError: own is not defined",
        "timers=undefined",
        "proto=undefined",
        'regexp=["","","","","","","",""]',
        'globals=["__timer_manager","setTimeout","clearTimeout"]',
        'hooks=["function","hasOwnProperty","push"]',
    ]
    assert one_script_process.started == 1  # all three ran in the one process


def test_a_script_name_or_value_the_database_cannot_take_is_the_scripts_error_with_its_line(
    engine: Engine, one_script_process: hosts.HostPool
) -> None:
    cases = {
        "long": (
            "var name = 'n'.repeat(100000);\nexecution.setVariable(name, 1);",
            "RangeError: a variable name has at most 255 characters, not 100000 (line 2)",
        ),
        "deep": (
            "var v = [];\nfor (var i = 0; i < 5000; i++) { v = [v]; }\n"
            "execution.setVariable('deep', v);",
            "RangeError: variable 'deep' is nested deeper than 64 levels (line 3)",
        ),
        "nul": (
            "execution.setVariable('x\\u0000y', 1);",
            "TypeError: a variable name must not contain a NUL character or a lone surrogate "
            "(line 1)",
        ),
        "surrogate": (
            "\n\nexecution.setVariable('text', 'a\\ud800b');",
            "TypeError: variable 'text' contains a NUL character or a lone surrogate (line 3)",
        ),
        "records": (
            "changes.push(['set']);",
            "ReferenceError: changes is not defined (line 1)",
        ),
    }
    for key, (script, _) in cases.items():
        engine.deploy(scripted(key, script).build())
    for key, (_, message) in cases.items():
        with pytest.raises(HandlerError) as caught:
            engine.start_latest(key, {})
        assert isinstance(caught.value, ScriptError)
        assert caught.value.message == f"script task 'run': {message}"
    engine.deploy(scripted("pairs", "execution.setVariable('emoji', '\\ud83d\\ude00'); 1").build())
    assert engine.start_latest("pairs", {}).variables()["emoji"] == "\U0001f600"


def test_a_deep_value_a_script_returns_is_its_error_not_a_recursion_error() -> None:
    # Building and returning the value takes a good part of the default second on a busy
    # machine; this test is about the error, not the time limit.
    roomy = Isolate(ScriptLimits(timeout_seconds=30.0))
    with pytest.raises(ScriptError) as caught:
        evaluate(
            "var v = []; for (var i = 0; i < 100000; i++) { v = [v]; } v",
            {},
            isolate=roomy,
            where="map",
        )
    assert caught.value.message.startswith("map: RangeError: ")


@pytest.mark.parametrize(
    "answer",
    [
        '[true, "{\\"changes\\": [[\\"set\\"]]}"]',
        '[true, "{\\"changes\\": [[\\"drop\\", \\"x\\", 1, false]]}"]',
        '[true, "{\\"changes\\": [[\\"set\\", 7, 1, false]]}"]',
        '[true, "{\\"changes\\": {}}"]',
        '[true, "[1, 2]"]',
        "[true]",
        '[true, "' + "[" * 5000 + '"]',
    ],
)
def test_an_answer_not_as_the_sandbox_writes_it_is_a_script_error(answer: str) -> None:
    with pytest.raises(ScriptError) as caught:
        outcome(answer, "script task 'T'")
    assert caught.value.message.startswith("script task 'T': ")
    assert "cannot be read" in caught.value.message
