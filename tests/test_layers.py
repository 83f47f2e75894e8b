"""The house: adfkit's modules form layers, and imports only point down.

Every ``import`` in ``adfkit/*.py`` counts, wherever it stands (module level, inside a function,
under ``TYPE_CHECKING``). The test fails on an import from a lower layer to a higher one, on a
cycle among adfkit modules, and on a module that no layer lists (so a new module must be placed).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "adfkit"

#: Layer of every module, bottom first. A module may import its own layer or lower ones.
LAYERS: dict[str, int] = {
    # 0 foundation: no adfkit imports but each other
    **dict.fromkeys(
        ["_errors", "_js", "schema", "_config", "_html", "_redact", "_outputs", "_terminal"]
        + ["_bundled", "_user_files", "_parts"],
        0,
    ),
    # 1 reader core: opening, raw tables, blobs, the row rule, the merged history, the boundary
    **dict.fromkeys(
        [
            "_blobs",
            "_rows",
            "_loopframe",
            "_open",
            "_history",
            "_source",
            "_adf_checks",
            "_adf",
            "_transcript",
            "_claude_code",
            "_codex",
            "_transcript_source",
            "_opening",
            "_registry",
        ],
        1,
    ),
    # 2 analyses: functions over an AgentSource
    **dict.fromkeys(
        [
            "_tables",
            "_timeline",
            "_settings",
            "_context",
            "_mind",
            "_replay",
            "_recall",
            "_compactions",
            "_simulate",
            "_usage",
            "_observe",
            "_integrity",
            "_items",
            "_forgetting",
        ],
        2,
    ),
    # 3 the public facade
    **dict.fromkeys(
        [
            "_agent",
            "_fleet",
            "plots",
            "plots_forgetting",
            "plots_fleet",
            "widgets",
            "_report",
            "_cli_common",
            "_cli_info",
            "_cli_plot",
            "_cli_observe",
            "_cli_fleet",
            "_cli_report",
            "cli",
            "__init__",
            "__main__",
            "_entry",
            "_cli_usage",
            "_fleet_usage",
            "_index",
        ],
        3,
    ),
}
#: Format-specific readers: no analysis may import them (only the boundary and the facade).
READERS = {
    "_adf",
    "_adf_checks",
    "_open",
    "_transcript",
    "_claude_code",
    "_codex",
    "_transcript_source",
}


def _imports(path: Path) -> set[str]:
    """adfkit modules imported anywhere in ``path`` (relative or absolute imports)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 or (node.module or "").startswith("adfkit"):
                base = (node.module or "").removeprefix("adfkit").lstrip(".")
                if base:
                    out.add(base.split(".")[0])
                else:  # from . import x, y
                    out.update(a.name for a in node.names if a.name != "__version__")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("adfkit."):
                    out.add(a.name.split(".")[1])
    out.discard(path.stem)
    return out


GRAPH = {p.stem: _imports(p) for p in sorted(PACKAGE.glob("*.py"))}


def test_every_module_has_a_layer():
    assert sorted(set(GRAPH) - set(LAYERS)) == []
    assert sorted(set(LAYERS) - set(GRAPH)) == []


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_point_down(module):
    up = sorted(m for m in GRAPH[module] if m in LAYERS and LAYERS[m] > LAYERS[module])
    assert up == [], f"{module} (layer {LAYERS[module]}) imports a higher layer: {up}"


@pytest.mark.parametrize("module", sorted(m for m, layer in LAYERS.items() if layer == 2))
def test_analyses_know_no_file_format(module):
    assert sorted(GRAPH.get(module, set()) & READERS) == []


@pytest.mark.parametrize("module", sorted(m for m, layer in LAYERS.items() if layer == 2))
def test_analyses_open_no_path(module):
    """Analyses take a source; the facade opens paths (``_agent.opened``)."""
    assert sorted(GRAPH.get(module, set()) & {"_opening", "_agent"}) == []


def test_no_cycles():
    """Depth-first search over the whole graph; any back edge is a cycle."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(GRAPH.get(m, ())):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(n) :] + [n]))
            if n in GRAPH and not state.get(n):
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if not state.get(m):
            visit(m)


def test_the_test_sees_imports():
    """The graph is not empty by accident: known edges are found, function-local ones too."""
    assert "_source" in GRAPH["_adf"]
    assert "_replay" in GRAPH["_compactions"]
    assert "_opening" in GRAPH["_agent"]
