"""Every command checks its actor's Camunda permissions inside its transaction: a table of
command x grants -> allowed or refused, run against a real database with the grants bound
directly on the actor (`acting(Actor(..., grants=...))`). A refused command writes nothing (every
table's rows are the same before and after) and leaves no audit entry; a REVOKE wins over a
group's GRANT; with no actor, or an actor without grants, nothing is checked."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
from psycopg import sql

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.identity import (
    AddGroupMember,
    CreateGroup,
    CreateUserProfile,
    DeleteGroup,
    UpdateUserProfile,
)
from engine.commands.job_settings import SetJobDefinitionSuspended, SetJobPriority
from engine.core.actors import Actor, acting
from engine.errors import AuthorizationDenied
from engine.identity.evaluate import Rule
from engine.identity.grants import Grants, grants_of
from engine.identity.permissions import (
    AuthorizationType,
    ResourceType,
    builtin_grants,
    permission_bits,
)
from engine.model import TimerDefinition
from engine.model.job_definitions import job_definition_id
from engine.semantics.modification import StartBefore
from engine.states import AuditChannel

GRANT, REVOKE = AuthorizationType.GRANT, AuthorizationType.REVOKE
PD, PI = ResourceType.PROCESS_DEFINITION, ResourceType.PROCESS_INSTANCE
TASK, DD = ResourceType.TASK, ResourceType.DECISION_DEFINITION
DEPLOYMENT = ResourceType.DEPLOYMENT
LOAN = Path(__file__).parent.parent / "data" / "dmn" / "loan_eligibility.dmn"
APPLICANT = {"age": 40, "income": 60000, "creditScore": 720, "employment": "employed"}


def _order(key: str) -> Any:
    """A user task for the clerks beside a one-hour timer (a job) and a wait for the message
    "go", joined before the end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .parallel_gateway("split")
        .user_task("approve", candidate_groups="clerks")
        .intermediate_catch_event("nap", timer=TimerDefinition(kind="duration", text="PT1H"))
        .intermediate_catch_event("wait", message="go")
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "split", "approve", "join", "end")
        .flow("split", "nap")
        .flow("nap", "join")
        .flow("split", "wait")
        .flow("wait", "join")
        .build()
    )


def _beacon() -> Any:
    return (
        ProcessBuilder("beacon")
        .start_event("start")
        .intermediate_catch_event("watch", signal="flare")
        .end_event("end")
        .chain("start", "watch", "end")
        .build()
    )


def _pay() -> Any:
    return (
        ProcessBuilder("pay")
        .start_event("start")
        .service_task("charge", topic="charge")
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )


@dataclass
class Setting:
    """The resources one case acts on, made by the engine itself (no actor)."""

    engine: Engine
    instance: UUID
    task: UUID
    job: UUID
    plan: Any
    wider_plan: Any
    beacon: UUID | None = None
    paid: UUID | None = None
    incident: UUID | None = None
    external_task: UUID | None = None


@pytest.fixture(scope="module")
def setting(round_engine: Engine) -> Iterator[Callable[[], Setting]]:
    engine = round_engine
    order = engine.deploy(_order("order")).definitions[0]
    order2 = engine.deploy(_order("order2")).definitions[0]
    engine.deploy(_pay(), _beacon(), LOAN)
    plan = engine.migration_plan(order["id"], order2["id"])
    same = engine.migration_plan(order["id"], order["id"])

    def make() -> Setting:
        instance = engine.start_latest("order")
        [task] = instance.user_tasks()
        [job] = engine.jobs(instance.id)
        return Setting(engine, instance.id, task.id, job.id, same, plan)

    yield make


def _with_beacons(s: Setting) -> Setting:
    """Two instances waiting for the signal "flare" (besides those earlier cases left)."""
    s.beacon = s.engine.start_latest("beacon").id
    s.engine.start_latest("beacon")
    return s


def _with_incident(s: Setting) -> Setting:
    paid = s.engine.start_latest("pay")
    # An earlier case's retry made its task fetchable again: it is paid and ends.
    fetched = s.engine.fetch_and_lock("w", {"charge": 60_000}, max_tasks=100)
    [locked] = [t for t in fetched if t["instance_id"] == str(paid.id)]
    for other in fetched:
        if other is not locked:
            s.engine.complete_external_task(other["id"], "w")
    s.engine.fail_external_task(locked["id"], "w", "card declined", retries=0)
    [incident] = s.engine.incidents(instance_id=paid.id)
    s.paid, s.incident, s.external_task = paid.id, incident.id, UUID(locked["id"])
    return s


# -- the commands ---------------------------------------------------------------------------------

Act = Callable[[Setting], object]


def start(s: Setting) -> object:
    return s.engine.start_latest("order")


def cancel(s: Setting) -> object:
    return s.engine.instance(s.instance).cancel()


def modify(s: Setting) -> object:
    return s.engine.modify(s.instance, StartBefore(node_id="approve"))


def suspend(s: Setting) -> object:
    s.engine.instance(s.instance).suspend()
    return None


def set_variables(s: Setting) -> object:
    s.engine.instance(s.instance).set_variables({"amount": 12})
    return None


def complete(s: Setting) -> object:
    return s.engine.complete_task(s.task, {"approved": True})


def claim(s: Setting) -> object:
    return s.engine.claim_task(s.task, "ann")


def assign(s: Setting) -> object:
    return s.engine.set_assignee(s.task, "bob")


def task_variables(s: Setting) -> object:
    return s.engine.modify_task_variables(s.task, {"note": "ok"})


def retry_incident(s: Setting) -> object:
    assert s.incident is not None
    return s.engine.retry_incident(s.incident)


def external_task_retries(s: Setting) -> object:
    assert s.external_task is not None
    return s.engine.set_external_task_retries(s.external_task, 2)


def job_retries(s: Setting) -> object:
    s.engine.set_job_retries(s.job, 4)
    return None


def job_priority(s: Setting) -> object:
    return s.engine.run(SetJobPriority(s.job, 9))


def job_definition_suspended(s: Setting) -> object:
    with s.engine.connection() as conn:
        row = conn.execute(
            "SELECT definition_id, node_id, kind FROM job WHERE id = %s", (s.job,)
        ).fetchone()
    assert row is not None
    job_definition = UUID(job_definition_id(*row))
    return s.engine.run(SetJobDefinitionSuspended(job_definition, True, include_jobs=True))


def migrate_same_key(s: Setting) -> object:
    return s.engine.migrate(s.plan, [s.instance])


def migrate_to_order2(s: Setting) -> object:
    return s.engine.migrate(s.wider_plan, [s.instance])


def deploy(s: Setting) -> object:
    return s.engine.deploy(_order("fresh"), duplicate_filtering=False)


def evaluate(s: Setting) -> object:
    return s.engine.evaluate_decision("loanEligibility", APPLICANT)


def execute_job(s: Setting) -> object:
    return s.engine.run_job(s.job)


def correlate(s: Setting) -> object:
    return s.engine.correlate_message("go", instance_id=s.instance)


def signal(s: Setting) -> object:
    return s.engine.signal("flare")


INCIDENT_CASES = (retry_incident, external_task_retries)

# (owner, type, resource id, permission): the owner "ann" or "group:<id>"; "$instance" and
# "$task" stand for the case's own instance and task.
G = tuple[AuthorizationType, str, ResourceType, str, str]


def grant(resource: ResourceType, rid: str, permission: str, owner: str = "ann") -> G:
    return (GRANT, owner, resource, rid, permission)


def revoke(resource: ResourceType, rid: str, permission: str, owner: str = "ann") -> G:
    return (REVOKE, owner, resource, rid, permission)


# command, grants, the assignee the engine sets first, allowed?
CASES: list[tuple[Act, tuple[G, ...], str | None, bool]] = [
    (start, (), None, False),
    (start, (grant(PD, "order", "CREATE_INSTANCE"),), None, False),
    (start, (grant(PI, "*", "CREATE"), grant(PD, "order", "CREATE_INSTANCE")), None, True),
    (start, (grant(PI, "*", "CREATE"), grant(PD, "pay", "CREATE_INSTANCE")), None, False),
    (cancel, (grant(PD, "order", "DELETE_INSTANCE"),), None, True),
    (cancel, (grant(PI, "$instance", "DELETE"),), None, True),
    (cancel, (grant(PD, "order", "UPDATE_INSTANCE"),), None, False),
    (modify, (grant(PD, "order", "UPDATE_INSTANCE"),), None, True),
    (modify, (grant(PI, "$instance", "UPDATE"),), None, True),
    (modify, (grant(PD, "*", "READ_INSTANCE"), grant(PI, "*", "READ")), None, False),
    (suspend, (grant(PI, "$instance", "SUSPEND"),), None, True),
    (suspend, (grant(PD, "order", "SUSPEND_INSTANCE"),), None, True),
    (suspend, (grant(PD, "order", "DELETE_INSTANCE"),), None, False),
    (set_variables, (grant(PD, "order", "UPDATE_INSTANCE_VARIABLE"),), None, True),
    (set_variables, (grant(PI, "$instance", "UPDATE_VARIABLE"),), None, True),
    (set_variables, (grant(PD, "order", "READ_INSTANCE_VARIABLE"),), None, False),
    (complete, (), "ann", True),
    (complete, (), "bob", False),
    (complete, (grant(TASK, "$task", "TASK_WORK"),), "bob", True),
    (complete, (grant(PD, "order", "TASK_WORK"),), None, True),
    (complete, (grant(PD, "order", "TASK_ASSIGN"),), None, False),
    (claim, (), None, False),
    (claim, (grant(PD, "order", "TASK_ASSIGN"),), None, True),
    (claim, (grant(TASK, "$task", "TASK_WORK"),), None, True),
    (assign, (grant(TASK, "$task", "TASK_WORK"),), None, False),
    (assign, (grant(TASK, "$task", "TASK_ASSIGN"),), None, True),
    (assign, (grant(PD, "order", "UPDATE_TASK"),), None, True),
    (task_variables, (grant(TASK, "$task", "UPDATE_VARIABLE"),), None, True),
    (task_variables, (grant(TASK, "$task", "READ_VARIABLE"),), None, False),
    (retry_incident, (grant(PD, "pay", "RETRY_JOB"),), None, True),
    (retry_incident, (grant(PD, "order", "RETRY_JOB"),), None, False),
    (retry_incident, (grant(PD, "pay", "READ"),), None, False),
    (external_task_retries, (grant(PD, "pay", "RETRY_JOB"),), None, True),
    (external_task_retries, (), None, False),
    (job_retries, (grant(PI, "$instance", "RETRY_JOB"),), None, True),
    (job_retries, (grant(PD, "order", "UPDATE_INSTANCE"),), None, True),
    (job_retries, (grant(PD, "order", "SUSPEND_INSTANCE"),), None, False),
    (job_priority, (grant(PI, "$instance", "UPDATE"),), None, True),
    (job_priority, (grant(PD, "order", "UPDATE_INSTANCE"),), None, True),
    (job_priority, (grant(PI, "$instance", "RETRY_JOB"),), None, False),
    (job_definition_suspended, (grant(PD, "order", "UPDATE"),), None, True),
    (job_definition_suspended, (grant(PD, "order", "UPDATE_INSTANCE"),), None, False),
    (migrate_same_key, (grant(PD, "order", "MIGRATE_INSTANCE"),), None, True),
    (migrate_to_order2, (grant(PD, "order", "MIGRATE_INSTANCE"),), None, False),
    (
        migrate_to_order2,
        (grant(PD, "order", "MIGRATE_INSTANCE"), grant(PD, "order2", "MIGRATE_INSTANCE")),
        None,
        True,
    ),
    (migrate_same_key, (grant(PD, "*", "UPDATE_INSTANCE"),), None, False),
    # A refused job run is no failure of the job: its retries stay as they were.
    (execute_job, (grant(PI, "*", "RETRY_JOB"),), None, False),
    (execute_job, (grant(PI, "$instance", "UPDATE"),), None, True),
    (correlate, (grant(PD, "order", "UPDATE_INSTANCE"),), None, True),
    (correlate, (grant(PD, "order", "READ_INSTANCE"),), None, False),
    (signal, (grant(PD, "beacon", "UPDATE_INSTANCE"),), None, True),
    # One instance of two: the whole broadcast is refused, neither receives it.
    (signal, (grant(PI, "$beacon", "UPDATE"),), None, False),
    (deploy, (grant(DEPLOYMENT, "*", "CREATE"),), None, True),
    (deploy, (grant(DEPLOYMENT, "*", "READ"),), None, False),
    (evaluate, (grant(DD, "loanEligibility", "CREATE_INSTANCE"),), None, True),
    (evaluate, (grant(DD, "other", "CREATE_INSTANCE"), grant(DD, "*", "READ")), None, False),
    # A user's REVOKE wins over their group's GRANT; at one level a REVOKE wins over a GRANT.
    (
        modify,
        (
            grant(PD, "*", "UPDATE_INSTANCE", owner="group:clerks"),
            revoke(PD, "order", "UPDATE_INSTANCE"),
        ),
        None,
        False,
    ),
    (
        modify,
        (
            grant(PD, "order", "UPDATE_INSTANCE", owner="group:clerks"),
            revoke(PD, "order", "UPDATE_INSTANCE", owner="group:clerks"),
        ),
        None,
        False,
    ),
    (modify, (grant(PD, "*", "UPDATE_INSTANCE", owner="group:clerks"),), None, True),
    # Candidates claim without any grant, but may not assign somebody else.
    (claim, (grant(PD, "*", "READ", owner="group:clerks"),), None, True),
    (assign, (grant(PD, "*", "READ", owner="group:clerks"),), None, False),
]


def _grants(given: tuple[G, ...], s: Setting) -> Grants:
    rules = []
    for kind, owner, resource, rid, permission in given:
        named = {"$instance": s.instance, "$task": s.task, "$beacon": s.beacon}
        rid = str(named[rid]) if rid in named else rid
        user, group = (None, owner[6:]) if owner.startswith("group:") else (owner, None)
        bits = permission_bits(resource, [permission])
        rules.append(Rule(kind, user, group, int(resource), rid, bits))
    # Ann is in the groups the case grants something to (clerks are the task's candidates).
    groups = {owner[6:] for _, owner, *_ in given if owner.startswith("group:")}
    return grants_of("ann", groups, rules)


def _digest(engine: Engine) -> dict[str, tuple[int, str | None]]:
    """Every table's row count and the digest of its rows, in one snapshot."""
    with engine.pool.connection() as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            ).fetchall()
        ]
        found = {}
        for table in tables:
            query = sql.SQL(
                "SELECT count(*), md5(string_agg(t::text, ',' ORDER BY t::text)) FROM {} t"
            ).format(sql.Identifier(table))
            row = conn.execute(query).fetchone()
            assert row is not None
            found[table] = (int(row[0]), row[1])
        return found


def _audit_entries(engine: Engine) -> int:
    with engine.pool.connection() as conn:
        row = conn.execute("SELECT count(*) FROM audit_entry").fetchone()
    assert row is not None
    return int(row[0])


def _case_id(case: tuple[Act, tuple[G, ...], str | None, bool]) -> str:
    act, given, assignee, allowed = case
    held = "+".join(f"{g[0].name.lower()}:{g[1]}:{g[2].name}:{g[3]}:{g[4]}" for g in given)
    who = f"-assignee:{assignee}" if assignee else ""
    return f"{act.__name__}-{held or 'nothing'}{who}-{'allowed' if allowed else 'refused'}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_a_command_is_allowed_exactly_when_the_grants_say_so(
    setting: Callable[[], Setting], case: tuple[Act, tuple[G, ...], str | None, bool]
) -> None:
    act, given, assignee, allowed = case
    s = setting()
    if act in INCIDENT_CASES:
        _with_incident(s)
    if act is signal:
        _with_beacons(s)
    if assignee is not None:
        s.engine.set_assignee(s.task, assignee)
    actor = Actor("ann", AuditChannel.API, grants=_grants(given, s))
    before, entries = _digest(s.engine), _audit_entries(s.engine)
    with acting(actor):
        if allowed:
            act(s)
        else:
            with pytest.raises(AuthorizationDenied) as refused:
                act(s)
    if allowed:
        assert _digest(s.engine) != before
        return
    assert _digest(s.engine) == before  # nothing written, not even an audit entry
    assert _audit_entries(s.engine) == entries
    assert refused.value.user_id == "ann"
    assert refused.value.missing, "a refusal names what would have allowed it"
    assert refused.value.message.startswith(
        "The user with id 'ann' does not have one of the following permissions: "
    )


def test_a_refusal_names_every_permission_that_would_have_done(
    setting: Callable[[], Setting],
) -> None:
    s = setting()
    nobody = Actor("ann", AuditChannel.API, grants=grants_of("ann", [], []))
    with acting(nobody), pytest.raises(AuthorizationDenied) as refused:
        modify(s)
    assert [m.to_dict() for m in refused.value.missing] == [
        {
            "permission": "UPDATE",
            "resource_type": "ProcessInstance",
            "resource_id": str(s.instance),
        },
        {
            "permission": "UPDATE_INSTANCE",
            "resource_type": "ProcessDefinition",
            "resource_id": "order",
        },
    ]


def _builtin(group: str) -> Grants:
    rules = [
        Rule(GRANT, None, g.group_id, int(g.resource_type), "*", g.permissions)
        for g in builtin_grants()
    ]
    return grants_of("olga", [group], rules)


def test_the_built_in_groups_allow_what_their_roles_did(setting: Callable[[], Setting]) -> None:
    s = setting()
    operator = Actor("olga", AuditChannel.CONSOLE, grants=_builtin("operator"))
    with acting(operator):
        start(s)
        modify(s)
        claim(s)
        complete(s)
        evaluate(s)
        for admins_only in (deploy, migrate_to_order2):
            with pytest.raises(AuthorizationDenied):
                admins_only(setting())
    viewer = Actor("vic", AuditChannel.CONSOLE, grants=_builtin("viewer"))
    with acting(viewer), pytest.raises(AuthorizationDenied):
        suspend(setting())
    admin = Actor("ada", AuditChannel.CONSOLE, grants=_builtin("camunda-admin"))
    with acting(admin):
        deploy(s)
        migrate_to_order2(setting())


def test_no_grants_bound_checks_nothing(setting: Callable[[], Setting]) -> None:
    with acting(Actor("cli", AuditChannel.CLI)):
        cancel(setting())
    with acting(None):
        deploy(setting())


def test_identity_commands_check_the_user_group_and_authorization(
    round_engine: Engine,
) -> None:
    engine = round_engine
    suffix = uuid4().hex[:8]
    ann, bob, clerks, auditors = f"ann{suffix}", f"bob{suffix}", f"clerks{suffix}", f"aud{suffix}"
    for command in (
        CreateUserProfile(ann),
        CreateUserProfile(bob),
        CreateGroup(clerks),
        CreateGroup(auditors),
    ):
        engine.run(command)

    def as_ann(*given: tuple[ResourceType, str, str]) -> Any:
        rules = [
            Rule(GRANT, ann, None, int(t), rid, permission_bits(t, [p])) for t, rid, p in given
        ]
        return acting(Actor(ann, AuditChannel.API, grants=grants_of(ann, [], rules)))

    membership = ResourceType.GROUP_MEMBERSHIP
    allowed: list[tuple[Any, tuple[tuple[ResourceType, str, str], ...]]] = [
        (UpdateUserProfile(ann, first_name="Ann"), ()),  # her own profile
        (AddGroupMember(clerks, bob), ((membership, clerks, "CREATE"),)),
        (CreateUserProfile(f"cy{suffix}"), ((ResourceType.USER, "*", "CREATE"),)),
    ]
    refused: list[tuple[Any, tuple[tuple[ResourceType, str, str], ...]]] = [
        (UpdateUserProfile(bob, first_name="Bob"), ((ResourceType.USER, ann, "UPDATE"),)),
        (AddGroupMember(auditors, bob), ((membership, clerks, "CREATE"),)),
        (CreateUserProfile(f"dee{suffix}"), ((ResourceType.USER, "*", "READ"),)),
        (DeleteGroup(auditors), ((ResourceType.GROUP, clerks, "DELETE"),)),
    ]
    for command, given in allowed:
        with as_ann(*given):
            engine.run(command)
    for command, given in refused:
        before = _digest(engine)
        with as_ann(*given), pytest.raises(AuthorizationDenied):
            engine.run(command)
        assert _digest(engine) == before, command
