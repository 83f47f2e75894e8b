"""The house: adfkit's modules live in layer folders, and imports only point down.

Layers, bottom first: ``_base`` < ``_core`` < ``_sources`` < ``_analysis`` < the facade
(``_facade/``, ``cli/``, ``plots/``, ``widgets/`` and the public top-level modules). Every
``import`` in ``adfkit/**/*.py`` counts, wherever it stands (module level, inside a function,
under ``TYPE_CHECKING``); a module named in a string (the format registry's module paths) is
not an import. The test fails on an import pointing up a layer, on a reader that reaches an
analysis or the facade or an analysis that reaches a reader (directly or through other
modules), on a cycle, and on a module outside every layer (a new module must be placed).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "adfkit"

#: Layer of each folder under adfkit/, bottom first; a module may import its layer or lower.
FOLDERS = {"_base": 0, "_core": 1, "_sources": 2, "_analysis": 3}
FOLDERS |= {"_facade": 4} | dict.fromkeys(["cli", "plots", "widgets", "report"], 5)
#: The top-level modules: the public names, the console entry point, and schema (public, but
#: a foundation: every layer builds frames with it).
TOP = dict.fromkeys(["adfkit", "adfkit.__main__", "adfkit._entry"], 5)
TOP |= dict.fromkeys(["adfkit.plots_forgetting", "adfkit.plots_fleet", "adfkit.teaching"], 5)
TOP["adfkit.schema"] = 0


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """adfkit modules ``name`` imports (``from pkg import module`` is an edge to the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - max(node.level - 1, 0)]
            mod = ".".join(base + [node.module or ""]).strip(".") if node.level else node.module
            if mod and mod.split(".")[0] == "adfkit":
                subs = {f"{mod}.{a.name}" for a in node.names} & MODULES.keys()
                out |= subs or {mod}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "adfkit"}
    return out - {name, "adfkit"}  # the package's own __init__ (``__version__``) runs first anyway


@functools.cache
def graph() -> dict[str, set[str]]:
    """Module -> the adfkit modules it imports (parsed on first use, not when every worker
    collects the tests)."""
    return {m: _imports(m, p) for m, p in MODULES.items()}


def layer(module: str) -> int | None:
    """The module's layer: its folder's, or its own if it is a top-level public module."""
    return TOP.get(module, FOLDERS.get(module.split(".")[1]) if "." in module else None)


def reach(module: str) -> set[str]:
    """Every module ``module`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for n in graph().get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def test_every_module_has_a_layer():
    assert sorted(m for m in MODULES if layer(m) is None) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    up = sorted(n for n in graph()[module] if (layer(n) or 0) > (layer(module) or 0))
    assert up == [], f"{module} (layer {layer(module)}) imports a higher layer: {up}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer(m) == 2))
def test_readers_reach_no_analysis(module):
    assert sorted(n for n in reach(module) if (layer(n) or 0) > 2) == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer(m) == 3))
def test_analyses_reach_no_reader(module):
    assert sorted(n for n in reach(module) if layer(n) == 2) == []


def test_no_cycles():
    """Depth-first search over the whole graph; any back edge is a cycle."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph().get(m, ())):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(n) :] + [n]))
            if n in graph() and not state.get(n):
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(graph()):
        if not state.get(m):
            visit(m)


def test_the_test_sees_imports():
    """The graph is not empty by accident: known edges are found, function-local ones too."""
    assert "adfkit._core.source" in graph()["adfkit._sources.adf.source"]
    assert "adfkit._analysis.replay" in graph()["adfkit._analysis.compactions"]
    assert "adfkit.cli" in graph()["adfkit._entry"]  # inside main()
    assert "adfkit._analysis.compactions" in reach("adfkit")
    assert layer("adfkit._sources.claude_code.parser") == 2 and layer("adfkit._stray") is None
