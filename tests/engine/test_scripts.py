"""Script tasks, execution and task listeners and JavaScript conditions on real PostgreSQL:
they run inside the command's transaction, and a failure rolls the whole command back."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.commands.deployments import Deploy, Resource
from engine.core.handlers import TaskContext
from engine.errors import HandlerError, ModelError
from engine.model import ScriptTask
from engine.scripting import ScriptError
from engine.states import InstanceState

DATA = Path(__file__).parent.parent / "data" / "bpmn"
INVOICE = DATA / "invoice_scripts.bpmn"
RESOURCES = DATA / "resources"


def record_events(engine: Engine, *names: str) -> list[tuple[str, str | None, str | None]]:
    """Register handlers under `names` that record (name, node, event) of every call."""
    calls: list[tuple[str, str | None, str | None]] = []

    def make(name: str) -> Any:
        def handler(ctx: TaskContext) -> None:
            calls.append((name, ctx.node_id or None, ctx.event_name))

        return handler

    for name in names:
        engine.register_handler(name, make(name))
    return calls


def visited(instance: InstanceHandle) -> list[str]:
    """The nodes the instance's tokens visited, in order (one track)."""
    return [step.node_id for path in instance.history() for step in path.steps]


def counts(engine: Engine) -> dict[str, int]:
    with engine.connection() as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[index]
            for table in ("process_instance", "token", "variable", "user_task", "history", "job")
        }


# --- the invoice model: script task, JavaScript condition, listeners ---------------------------


def test_large_invoice_runs_scripts_and_a_create_listener_assigns_the_task(engine: Engine) -> None:
    calls = record_events(engine, "org.example.AuditListener", "audit", "audit.notify")
    engine.deploy(INVOICE)
    instance = engine.start_latest(
        "Process_InvoiceScripts",
        {"amount": 500, "quantity": 2, "approver": "mary"},
        business_key="INV-1",
    )
    variables = instance.variables()
    assert variables["net"] == 1000
    assert variables["total"] == 1250
    assert variables["reference"] == "INV-1/Task_Total"
    [task] = instance.user_tasks()
    assert (task.node_id, task.assignee) == ("Task_Approve", "mary")
    # Assigning at creation fires the assignment listeners once.
    assert (variables["assignedTo"], variables["assignments"]) == ("mary", 1)
    assert calls == [
        ("org.example.AuditListener", None, "start"),
        ("audit", "Task_Total", "start"),
        ("audit.notify", "Task_Total", "end"),
        ("audit", "Gateway_Amount", "take"),
    ]
    engine.claim_task(task.id, "mary")  # already hers: no assignment
    engine.set_assignee(task.id, "peter")
    assert instance.variables()["assignedTo"] == "peter"
    assert instance.variables()["assignments"] == 2
    engine.complete_task(task.id, {"comment": "fine"})
    assert instance.state is InstanceState.COMPLETED
    final = instance.variables()
    assert (final["approvedBy"], final["endedAt"], final["comment"]) == (
        "peter",
        "EndEvent_Approved",
        "fine",
    )
    assert calls[-1] == ("org.example.AuditListener", None, "end")


def test_small_invoice_takes_the_default_flow_and_a_juel_script(engine: Engine) -> None:
    record_events(engine, "org.example.AuditListener", "audit", "audit.notify")
    engine.deploy(INVOICE)
    instance = engine.start_latest("Process_InvoiceScripts", {"amount": 100, "quantity": 2})
    assert instance.state is InstanceState.COMPLETED
    variables = instance.variables()
    assert (variables["total"], variables["autoApproved"]) == (250, True)
    assert "approvedBy" not in variables
    assert [node for node in visited(instance) if node.startswith("Task")] == [
        "Task_Total",
        "Task_Auto",
    ]


def test_a_listener_that_raises_rolls_the_whole_command_back(engine: Engine) -> None:
    record_events(engine, "org.example.AuditListener", "audit")

    def broken(ctx: TaskContext) -> None:
        ctx.set("half", "written")
        raise RuntimeError("audit store unavailable")

    engine.register_handler("audit.notify", broken)
    engine.deploy(INVOICE)
    before = counts(engine)
    with pytest.raises(HandlerError) as caught:
        engine.start_latest("Process_InvoiceScripts", {"amount": 1, "quantity": 1})
    assert caught.value.message == (
        "handler 'audit.notify' of the end listener of scriptTask 'Task_Total' raised "
        "RuntimeError: audit store unavailable"
    )
    assert counts(engine) == before


def test_a_failing_task_listener_script_leaves_the_task_open(engine: Engine) -> None:
    record_events(engine, "org.example.AuditListener", "audit", "audit.notify")
    model = (
        ProcessBuilder("strict-complete")
        .start_event("s")
        .user_task("review")
        .end_event("e")
        .chain("s", "review", "e")
        .listener(
            "review",
            "complete",
            task=True,
            script="if (!execution.hasVariable('verdict')) { throw new Error('no verdict'); }",
        )
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("strict-complete")
    [task] = instance.user_tasks()
    before = counts(engine)
    with pytest.raises(ScriptError) as caught:
        engine.complete_task(task.id, {"note": "x"})
    assert caught.value.message == (
        "complete task listener of user task 'review': Error: no verdict (line 1)"
    )
    assert counts(engine) == before
    assert "note" not in instance.variables()
    engine.complete_task(task.id, {"verdict": "ok"})
    assert instance.state is InstanceState.COMPLETED


def test_delete_listeners_run_when_the_task_is_interrupted(engine: Engine) -> None:
    calls = record_events(engine, "gone")
    model = (
        ProcessBuilder("deleted-task")
        .start_event("s")
        .user_task("review")
        .end_event("e")
        .end_event("cancelled")
        .chain("s", "review", "e")
        .boundary_event("stop", "review", message="stop")
        .chain("stop", "cancelled")
        .listener("review", "delete", task=True, handler="gone")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("deleted-task")
    engine.correlate_message("stop")
    assert instance.state is InstanceState.COMPLETED
    assert calls == [("gone", "review", "delete")]


# --- JavaScript conditions ---------------------------------------------------------------------


def javascript_choice(condition: str) -> Any:
    return (
        ProcessBuilder("js-choice")
        .start_event("s")
        .exclusive_gateway("g", default="to_low")
        .end_event("high")
        .end_event("low")
        .chain("s", "g")
        .flow("g", "high", id="to_high", condition=condition, condition_language="javascript")
        .flow("g", "low", id="to_low")
        .build()
    )


@pytest.mark.parametrize(("score", "end"), [(90, "high"), (10, "low")])
def test_a_javascript_condition_chooses_the_flow(engine: Engine, score: int, end: str) -> None:
    engine.deploy(javascript_choice("score > 50 && execution.getVariable('score') % 2 === 0"))
    instance = engine.start_latest("js-choice", {"score": score})
    assert instance.state is InstanceState.COMPLETED
    assert visited(instance)[-1] == end


def test_a_non_boolean_javascript_condition_fails_and_nothing_is_persisted(
    engine: Engine,
) -> None:
    engine.deploy(javascript_choice("score + 1"))
    before = counts(engine)
    with pytest.raises(ScriptError) as caught:
        engine.start_latest("js-choice", {"score": 3})
    assert caught.value.message == (
        "condition of sequence flow 'to_high': the script's value is int, not a boolean"
    )
    assert counts(engine) == before


# --- script failures: in a command, and in a job -----------------------------------------------


def test_a_script_that_times_out_fails_the_command_naming_the_element(database_url: str) -> None:
    from engine.core.settings import EngineSettings

    settings = EngineSettings(script_timeout_ms=200)
    with Engine(database_url, migrate=False, settings=settings) as engine:
        engine.deploy(
            ProcessBuilder("spin")
            .start_event("s")
            .script_task("Spin", script="while (true) {}")
            .end_event("e")
            .chain("s", "Spin", "e")
            .build()
        )
        before = counts(engine)
        with pytest.raises(ScriptError) as caught:
            engine.start_latest("spin")
        assert caught.value.message == "script task 'Spin': the script ran longer than 0.2 s"
        assert counts(engine) == before


def test_a_failing_script_in_a_job_counts_retries_then_opens_an_incident(engine: Engine) -> None:
    engine.deploy(
        ProcessBuilder("async-script")
        .start_event("s")
        .script_task(
            "Charge",
            script="if (!card) { throw new Error('card declined'); } 'charged'",
            result_variable="status",
            async_before=True,
            retry_cycle="R2/PT1S",
        )
        .end_event("e")
        .chain("s", "Charge", "e")
        .build()
    )
    instance = engine.start_latest("async-script", {"card": False})
    [job] = engine.jobs(instance.id)
    assert engine.execute_job(job.id) == "failed"
    [job] = engine.jobs(instance.id)
    assert job.retries == 1
    assert job.error_message == ("ScriptError: script task 'Charge': Error: card declined (line 1)")
    assert engine.incidents() == []
    assert engine.execute_job(job.id) == "failed"
    [incident] = engine.incidents()
    assert (incident.node_id, incident.type) == ("Charge", "failedJob")
    assert "card declined" in incident.message
    instance.set_variables({"card": True})
    engine.set_job_retries(job.id, 1)
    assert engine.execute_job(job.id) == "executed"
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables()["status"] == "charged"


# --- scripts in files of their own -------------------------------------------------------------


def deploy_files(engine: Engine, *names: str) -> None:
    resources = tuple(Resource(name, (RESOURCES / name).read_bytes()) for name in names)
    engine.run(Deploy(resources))


def test_script_resources_of_the_deployment_run_and_survive_a_restart(engine: Engine) -> None:
    deploy_files(engine, "discount_resource.bpmn", "discount.js", "assign-reviewer.js")
    instance = engine.start_latest("Process_Discount", {"total": 800, "reviewer": "lena"})
    assert (instance.variables()["discount"], instance.variables()["rate"]) == (80, 0.1)
    [task] = instance.user_tasks()
    assert task.assignee == "lena"
    # The stored definition holds the scripts: read again from the database, it runs alone.
    engine.definition_cache.clear()
    model = engine.model(engine.latest_definition("Process_Discount").id, "Process_Discount")
    script_task = model.node("Task_Discount")
    assert isinstance(script_task, ScriptTask)
    assert script_task.script.source == (RESOURCES / "discount.js").read_text()
    again = engine.start_latest("Process_Discount", {"total": 100, "reviewer": "otto"})
    assert again.variables()["discount"] == 5


def rejected_deployment(engine: Engine, resources: tuple[Resource, ...]) -> ModelError:
    with pytest.raises(ModelError) as caught:
        engine.run(Deploy(resources))
    return caught.value


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_a_missing_script_resource_fails_the_deployment_naming_file_line_element(
    engine: Engine,
) -> None:
    text = (RESOURCES / "discount_resource.bpmn").read_text()
    error = rejected_deployment(
        engine,
        (
            Resource("discount_resource.bpmn", text.encode()),
            Resource("discount.js", (RESOURCES / "discount.js").read_bytes()),
        ),
    )
    assert (error.file, error.line, error.element_id) == (
        "discount_resource.bpmn",
        line_of(text, '<camunda:script scriptFormat="javascript" resource="assign-reviewer.js"'),
        "Task_Review",
    )
    assert "camunda:resource 'assign-reviewer.js' names no file of this deployment" in str(error)
    assert engine.definitions("Process_Discount") == []


def test_a_classpath_resource_fails_the_deployment(engine: Engine) -> None:
    text = (
        (RESOURCES / "discount_resource.bpmn")
        .read_text()
        .replace("deployment://discount.js", "classpath://org/example/discount.js")
    )
    error = rejected_deployment(engine, (Resource("discount.bpmn", text.encode()),))
    assert (error.file, error.element_id) == ("discount.bpmn", "Task_Discount")
    assert error.line == line_of(text, '<bpmn:scriptTask id="Task_Discount"')
    assert "the class path cannot be read by this engine; deploy the file with the process" in (
        str(error)
    )


@pytest.mark.parametrize("language", ["groovy", "python", "jython", "ruby", "JRuby"])
def test_other_script_languages_fail_the_deployment_saying_how_to_port(
    engine: Engine, language: str
) -> None:
    text = INVOICE.read_text().replace(
        'id="Task_Total" name="Compute total" scriptFormat="javascript"',
        f'id="Task_Total" name="Compute total" scriptFormat="{language}"',
    )
    error = rejected_deployment(engine, (Resource("invoice.bpmn", text.encode()),))
    assert (error.file, error.element_id) == ("invoice.bpmn", "Task_Total")
    assert error.line == line_of(text, '<bpmn:scriptTask id="Task_Total"')
    assert f"script language '{language}' is not supported by this engine; port it to " in (
        error.message
    )
    assert "JavaScript" in error.message and "Python handler" in error.message


def test_a_listener_expression_must_name_a_handler(engine: Engine) -> None:
    text = INVOICE.read_text().replace(
        'expression="${audit.notify(execution)}"', 'expression="${audit.notify(execution, 1 + 2)}"'
    )
    error = rejected_deployment(engine, (Resource("invoice.bpmn", text.encode()),))
    assert (error.element_id, error.line) == (
        "Task_Total",
        line_of(text, 'expression="${audit.notify(execution, 1 + 2)}"'),
    )
    assert "must name a registered handler as ${name} or ${name.method(execution)}" in str(error)


def test_listener_field_injection_is_refused(engine: Engine) -> None:
    text = INVOICE.read_text().replace(
        '<camunda:executionListener delegateExpression="${audit}" event="start" />',
        '<camunda:executionListener delegateExpression="${audit}" event="start">'
        '<camunda:field name="level" stringValue="high" /></camunda:executionListener>',
    )
    error = rejected_deployment(engine, (Resource("invoice.bpmn", text.encode()),))
    assert error.element_id == "Task_Total"
    assert "camunda:field on a camunda:executionListener is not supported" in str(error)


def test_an_unregistered_listener_handler_fails_the_command(engine: Engine) -> None:
    engine.deploy(INVOICE)
    before = counts(engine)
    with pytest.raises(HandlerError) as caught:
        engine.start_latest("Process_InvoiceScripts", {"amount": 1, "quantity": 1})
    assert "no handler is registered under the name 'org.example.AuditListener'" in (
        caught.value.message
    )
    assert counts(engine) == before


def test_instance_ids_reach_listener_scripts(engine: Engine) -> None:
    model = (
        ProcessBuilder("ids")
        .start_event("s")
        .task("t")
        .end_event("e")
        .chain("s", "t", "e")
        .listener(
            "t",
            "start",
            script="execution.setVariable('seen', [execution.getProcessInstanceId(), "
            "execution.getActivityId(), execution.getEventName(), execution.businessKey, "
            "typeof businessKey])",
        )
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("ids", business_key="B-1")
    seen = instance.variables()["seen"]
    assert seen == [str(instance.id), "t", "start", "B-1", "undefined"]
    assert UUID(seen[0]) == instance.id


def test_cancelling_runs_the_end_listeners_of_what_it_ends(engine: Engine) -> None:
    calls = record_events(engine, "closed")
    model = (
        ProcessBuilder("cancelled")
        .start_event("s")
        .user_task("review")
        .end_event("e")
        .chain("s", "review", "e")
        .listener("review", "end", handler="closed")
        .listener("review", "delete", task=True, handler="closed")
        .listener("cancelled", "end", handler="closed")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("cancelled")
    assert calls == []
    assert instance.cancel() is InstanceState.TERMINATED
    assert calls == [
        ("closed", "review", "delete"),
        ("closed", "review", "end"),
        ("closed", None, "end"),
    ]


def variable_rows(engine: Engine, instance_id: UUID) -> list[tuple[str, bool]]:
    """(name, whether it is local to an activity instance) of every variable row."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT name, scope_key <> '' FROM variable WHERE instance_id = %s ORDER BY name",
            (instance_id,),
        ).fetchall()
    return [(name, local) for name, local in rows]


def test_set_variable_local_lives_and_ends_with_the_activity(engine: Engine) -> None:
    model = (
        ProcessBuilder("locals")
        .start_event("s")
        .user_task("review")
        .end_event("e")
        .chain("s", "review", "e")
        .listener(
            "review",
            "start",
            script="execution.setVariableLocal('draft', 1); execution.setVariable('seen', true)",
        )
        .listener(
            "review",
            "complete",
            task=True,
            script="execution.setVariable('final', draft + 1); task.getVariable('draft')",
        )
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("locals")
    assert variable_rows(engine, instance.id) == [("draft", True), ("seen", False)]
    [task] = instance.user_tasks()
    engine.complete_task(task.id)
    assert instance.state is InstanceState.COMPLETED
    assert variable_rows(engine, instance.id) == [("final", False), ("seen", False)]
    assert instance.variables() == {"seen": True, "final": 2}


def test_remove_variable_deletes_where_the_name_lives(engine: Engine) -> None:
    model = (
        ProcessBuilder("removals")
        .start_event("s")
        .user_task("review")
        .end_event("e")
        .chain("s", "review", "e")
        .listener("review", "start", script="execution.setVariableLocal('draft', 1)")
        .listener(
            "review",
            "complete",
            task=True,
            script="execution.removeVariable('draft'); execution.removeVariable('obsolete')",
        )
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("removals", {"obsolete": "x", "kept": 1})
    assert variable_rows(engine, instance.id) == [
        ("draft", True),
        ("kept", False),
        ("obsolete", False),
    ]
    [task] = instance.user_tasks()
    engine.complete_task(task.id)
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables() == {"kept": 1}
