"""No import circles between the modules of engine/ and app/.

Every import counts, the ones at module level and the ones inside functions alike: a function-local
import only postpones a circle to the first call. The imports under `if TYPE_CHECKING:` are left
out, since they never run. `from X import Y` is an edge to the submodule X.Y when Y is one, and to
X otherwise. Importing a submodule also runs its package's `__init__`, but a package is always
loaded before its submodules and a submodule that names nothing of its package does not depend on
it, so that implicit edge is not drawn: a package `__init__` that imports its own submodule is a
circle only when the submodule imports from the package in turn."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "app")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module of the given top-level packages, by dotted name."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            found[module_name(path, root)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: all but those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports_in(child)
            continue
        yield from _imports_in(node)


def _imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
        return
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        for child in node.orelse:
            yield from _imports_in(child)
        return
    yield from _imports(node)


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base.pop()
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imported_modules(source: str, importer: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules among `known` that one module's source imports."""
    found: set[str] = set()
    for node in _imports(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
            continue
        target = _absolute(node, importer, is_package)
        for alias in node.names:
            submodule = f"{target}.{alias.name}"
            if submodule in known:
                found.add(submodule)
            elif target in known:
                found.add(target)
    return found


def graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the modules it imports, for sources given as name -> (text, is a package)."""
    known = set(sources)
    return {
        name: imported_modules(text, name, is_package, known)
        for name, (text, is_package) in sources.items()
    }


def circles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, and modules importing themselves
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    found.append(sorted(component))
    return sorted(found)


def _describe(component: list[str], edges: Mapping[str, set[str]]) -> str:
    members = set(component)
    lines = [" <-> ".join(component)]
    for name in component:
        inside = sorted(edges[name] & members)
        lines.append(f"    {name} imports {', '.join(inside)}")
    return "\n".join(lines)


def _sources(texts: Mapping[str, str]) -> dict[str, tuple[str, bool]]:
    """Test sources by file name ("a/b.py", "a/__init__.py") -> name -> (text, is a package)."""
    result: dict[str, tuple[str, bool]] = {}
    for file, text in texts.items():
        path = Path(file)
        result[module_name(path, Path("."))] = (text, path.name == "__init__.py")
    return result


def test_the_graph_counts_local_imports_and_skips_type_checking_ones() -> None:
    edges = graph(
        _sources(
            {
                "pkg/__init__.py": "from pkg import sub\n",
                "pkg/sub.py": "X = 1\n",
                "pkg/a.py": (
                    "from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n"
                    "    from pkg import b\n"
                    "def f():\n"
                    "    from pkg.b import thing\n"
                    "    return thing\n"
                ),
                "pkg/b.py": (
                    "import typing\n"
                    "if typing.TYPE_CHECKING:\n"
                    "    import pkg.a\n"
                    "else:\n"
                    "    from . import c\n"
                ),
                "pkg/c.py": "from .sub import X\nfrom pkg import NAME\n",
            }
        )
    )
    assert edges == {
        "pkg": {"pkg.sub"},
        "pkg.sub": set(),
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.c"},
        "pkg.c": {"pkg.sub", "pkg"},
    }
    assert circles(edges) == []


def test_the_graph_finds_circles_including_through_a_package() -> None:
    edges = graph(
        _sources(
            {
                "pkg/__init__.py": "from pkg.sub import helper\n",
                "pkg/sub.py": "def helper():\n    from pkg import other\n",
                "pkg/other.py": "from ..pkg import sub\n",
                "pkg/x.py": "import pkg.y\n",
                "pkg/y.py": "class C:\n    def m(self):\n        import pkg.x\n",
                "pkg/z.py": "from pkg import z\n",
            }
        )
    )
    assert circles(edges) == [["pkg.other", "pkg.sub"], ["pkg.x", "pkg.y"], ["pkg.z"]]


def test_engine_and_app_import_no_circle() -> None:
    sources = {
        name: (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for name, path in modules().items()
    }
    edges = graph(sources)
    found = circles(edges)
    assert not found, "import circles:\n" + "\n".join(_describe(c, edges) for c in found)
