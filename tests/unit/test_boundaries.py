"""The web layer stays on its side of the engine: no module under app/ opens a database
connection, touches psycopg, reaches into engine.store, or defines its own command. It reads
through engine.queries, engine/identity/accounts.py and Engine methods, and writes through
commands."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"
DRIVERS = ("psycopg", "psycopg_pool")
# The engine's connection pools and their hand-out: the way to a connection without `.connection(`.
POOL_ATTRIBUTES = ("pool", "command_pool", "getconn")


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _is_driver(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in DRIVERS)


def violations(source: str) -> list[str]:
    """Every crossing of the boundary in one module's source, as `line: what`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_driver(alias.name):
                    found.append(f"{line}: imports {alias.name}")
                if alias.name == "engine.store" or alias.name.startswith("engine.store."):
                    found.append(f"{line}: imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if _is_driver(module):
                found.append(f"{line}: imports from {module}")
            if module == "engine.store" or module.startswith("engine.store."):
                found.append(f"{line}: imports from {module}")
            if module == "engine":
                found += [f"{line}: imports engine.store" for a in node.names if a.name == "store"]
        elif isinstance(node, ast.Call):
            called = _dotted(node.func)
            if isinstance(node.func, ast.Attribute) and node.func.attr == "connection":
                found.append(f"{line}: calls {called or '.connection'}()")
            elif _is_driver(called.split(".")[0]) and called:
                found.append(f"{line}: calls {called}()")
        elif isinstance(node, ast.Attribute) and node.attr in POOL_ATTRIBUTES:
            found.append(f"{line}: uses {_dotted(node) or node.attr}")
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                target = base.value if isinstance(base, ast.Subscript) else base
                if _dotted(target).split(".")[-1] == "Command":
                    found.append(f"{line}: class {node.name} derives from Command")
    return found


def test_the_checker_sees_every_kind_of_crossing() -> None:
    source = """
import psycopg
import psycopg_pool.pool
from psycopg.rows import dict_row
from engine.store import instance_reads
from engine.store.instances import InstanceFilter
from engine import store
import engine.store.outbox

def read(engine):
    with engine.connection() as conn:
        return conn
    psycopg.connect("postgresql://")
    engine.pool.getconn()

class Mine(Command[Result]):
    pass

class Other(executor.Command):
    pass

engine.command_pool
"""
    assert sorted(violations(source)) == sorted(
        [
            "2: imports psycopg",
            "3: imports psycopg_pool.pool",
            "4: imports from psycopg.rows",
            "5: imports from engine.store",
            "6: imports from engine.store.instances",
            "7: imports engine.store",
            "8: imports engine.store.outbox",
            "11: calls engine.connection()",
            "13: calls psycopg.connect()",
            "14: uses engine.pool",
            "14: uses engine.pool.getconn",
            "16: class Mine derives from Command",
            "19: class Other derives from Command",
            "22: uses engine.command_pool",
        ]
    )
    assert violations("from engine.queries import console\nconsole.activity(engine, now)\n") == []


@pytest.mark.parametrize(
    "module", sorted(APP.rglob("*.py")), ids=lambda path: str(path.relative_to(APP.parent))
)
def test_no_app_module_crosses_into_the_database(module: Path) -> None:
    assert violations(module.read_text(encoding="utf-8")) == []
