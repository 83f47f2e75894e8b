"""The bundled notebooks: public API only, stripped, and they run top to bottom (real kernel)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from background import Background
from conftest import ROOT, sample

import adfkit
from adfkit._core import registry
from adfkit._facade import report as _report

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = [
    "01-quickstart",
    "02-compaction-replay",
    "03-self-observation-audit",
    "04-fleet",
    "05-teaching-memory",
    "06-compare-agents",
    "07-what-forgetting-costs",
    "08-compaction-lab",
]
PUBLIC_SUBMODULES = {"plots", "plots_forgetting", "plots_fleet", "widgets", "teaching"}
#: Agents every notebook runs on here: an ADF sample whose compactions have no audit, a Claude
#: Code session, a Codex rollout. Each runs on its default, long-runner.adf (compactions with
#: audit), in tests/test_cli.py (from a wheel) and tests/test_browser.py (Run All): once is enough.
RUN_ON = {
    "forgetful": "forgetful.adf",
    "claude-code": "claude-code/projects/-home-user-work-webapp/"
    "24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl",
    "codex": "codex/sessions/2026/03/14/"
    "rollout-2026-03-14T09-12-33-51ea40b0-7088-4482-8231-74d06cde3e3a.jsonl",
}


def _execute(path, agent):
    return _report.execute_notebook(path, agent, timeout=60)


def _needs(item: pytest.Item) -> tuple[str, str] | None:
    """The notebook run (notebook stem, sample file) a test of this module checks, if any."""
    name = getattr(item, "originalname", None)
    if name == "test_notebook_runs":
        params = item.callspec.params  # type: ignore[attr-defined]
        return params["path"].stem, RUN_ON[params["agent"]]
    return {
        "test_teaching_answers_are_worth_finding_on_the_sample": (
            "05-teaching-memory",
            "long-runner.adf",
        ),
        "test_quickstart_says_an_unknown_cost_is_unknown": ("01-quickstart", "legacy-v12.adf"),
        "test_compare_puts_every_format_side_by_side": ("06-compare-agents", "forgetful.adf"),
    }.get(name or "")


@pytest.fixture(scope="module")
def runs(request):
    """The notebook runs the selected tests of this module check, started together on first
    use, in test order, two at a time (each is one kernel process); a test waits for its own."""
    with Background() as background:
        for item in request.session.items:
            key = _needs(item) if getattr(item, "module", None) is request.module else None
            if key is not None:
                stem, agent = key
                path = ROOT / "notebooks" / f"{stem}.ipynb"
                background.start(key, _execute, path, ROOT / "sample_agents" / agent)
        yield background


def _run(runs, stem: str, agent: str):
    """The executed notebook of ``stem`` on ``sample_agents/<agent>``."""
    key = (stem, agent)
    runs.start(key, _execute, ROOT / "notebooks" / f"{stem}.ipynb", ROOT / "sample_agents" / agent)
    return runs.result(key)


def _code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _adfkit_names(source: str) -> tuple[set[str], list[str]]:
    """(``adfkit.X`` names used, private uses found) in one cell."""
    tree = ast.parse(source)
    used: set[str] = set()
    private: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "adfkit" and any(p.startswith("_") for p in parts[1:]):
                    private.append(f"import {a.name}")
                if parts[0] == "adfkit" and len(parts) > 1:
                    used.add(parts[1])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("adfkit"):
            parts = (node.module or "").split(".")
            names = [a.name for a in node.names]
            if any(p.startswith("_") for p in parts[1:]) or any(n.startswith("_") for n in names):
                private.append(f"from {node.module} import {', '.join(names)}")
            if len(parts) == 1:
                used.update(names)
            else:
                used.add(parts[1])
        elif isinstance(node, ast.Attribute):
            chain = []
            cur: ast.AST = node
            while isinstance(cur, ast.Attribute):
                chain.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id == "adfkit":
                chain.reverse()
                if any(p.startswith("_") and p != "__version__" for p in chain):
                    private.append("adfkit." + ".".join(chain))
                used.add(chain[0])
    return used, private


def test_the_eight_notebooks_are_there():
    assert [p.stem for p in NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_uses_only_the_public_api(path):
    nb = nbformat.read(path, as_version=4)
    for src in _code(nb):
        used, private = _adfkit_names(src)
        assert not private, f"{path.name}: private adfkit names in a cell: {private}"
        unknown = used - set(adfkit.__all__) - PUBLIC_SUBMODULES
        assert not unknown, f"{path.name}: adfkit names that are not public: {sorted(unknown)}"


def test_the_checker_catches_private_use():
    """The parser above is what keeps notebooks honest: check it on known bad cells."""
    assert _adfkit_names("from adfkit._analysis.replay import x")[1]
    assert _adfkit_names("import adfkit._sources.adf.sqlite")[1]
    assert _adfkit_names("adfkit._facade.agent.open_adf('x')")[1]
    assert _adfkit_names("from adfkit import _report")[1]
    assert _adfkit_names("adfkit.plots._matplotlib._drawing(1)")[1]
    assert _adfkit_names("adfkit.open_adf(A).loop()") == ({"open_adf"}, [])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_shape(path):
    """One parameter cell first, defaulting to a sample agent; committed without outputs."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    first = nb.cells[0]
    assert first.cell_type == "code" and first.metadata.get("tags") == ["parameters"]
    m = re.search(r'^AGENT = "\.\./sample_agents/([\w-]+)\.adf"$', first.source, re.M)
    assert m, first.source
    assert (ROOT / "sample_agents" / f"{m.group(1)}.adf").exists()
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, f"{path.name}: not stripped"
    assert nb.cells[1].cell_type == "markdown" and nb.cells[1].source.startswith("# ")


def test_teaching_notebook_keeps_its_answers_out_of_sight():
    """Each exercise is followed by its answer cell, whose code and output stay folded after
    Run All until the reader opens them; the exercise text gives a hint, not the answer."""
    nb = nbformat.read(ROOT / "notebooks" / "05-teaching-memory.ipynb", as_version=4)
    cells = nb.cells
    exercises = [
        i for i, c in enumerate(cells) if c.cell_type == "markdown" and "**Exercise" in c.source
    ]
    assert len(exercises) == 5
    for i in exercises:
        answer = cells[i + 1]
        folded = answer.metadata.get("jupyter", {})
        assert answer.cell_type == "code" and "answer" in answer.metadata.get("tags", [])
        assert folded.get("source_hidden")
        # its result folded too: JupyterLab ignores outputs_hidden on Run All (test_browser.py
        # checks what a person sees)
        assert answer.source.startswith("with adfkit.widgets.answer():\n")
        assert "Answer" not in cells[i].source  # no answer written in the exercise itself


def test_teaching_answers_are_worth_finding_on_the_sample(runs):
    """Run on the bundled sample, every answer is a specific finding, not a bare listing."""
    out = _run(runs, "05-teaching-memory", sample("long-runner").name)
    texts = [
        "".join(o.get("text", "") for o in c.get("outputs", []))
        + "".join(str(o.get("data", {}).get("text/plain", "")) for o in c.get("outputs", []))
        for c in out.cells
        if "answer" in c.metadata.get("tags", [])
    ]
    assert len(texts) == 5
    assert re.search(r"\d+% ?\)?", texts[0])  # a share of the loop's tokens
    assert re.search(
        r"compaction \d+ \(\w+\): [\d.]+x smaller; its summary kept \d+% of the \d+ items", texts[1]
    )
    assert "re-fetch" in texts[2]
    assert re.search(r"fs_read: 8 of 46 calls failed \(17%\)", texts[3])
    assert re.search(r"\w+: \d+ turns, [\d.]+ tool calls each", texts[4])


@pytest.mark.parametrize("agent", RUN_ON)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, agent, runs):
    """Every cell runs without error in a real kernel on the agent (nbclient)."""
    target = ROOT / "sample_agents" / RUN_ON[agent]
    out = _run(runs, path.stem, RUN_ON[agent])
    errors = [
        o
        for c in out.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors
    # The parameter really reached the kernel: the opened agent is the one asked for.
    injected = [c for c in out.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and str(target) in injected[0].source
    setup = next(c for c in out.cells if "adfkit.open(AGENT)" in c.source)
    assert any(target.name in str(o.get("data", {})) for o in setup.outputs)
    if path.stem == "06-compare-agents":  # counts stay integers: 725, not 725.0
        glance = next(c for c in out.cells if "glance(a)" in c.source and "DataFrame" in c.source)
        shown = "".join(str(o.get("data", {}).get("text/plain", "")) for o in glance.outputs)
        rows = [ln for ln in shown.splitlines() if ln.startswith(("rows", "model calls"))]
        assert rows and not re.search(r"\d\.0\b", "".join(rows)), shown
    if path.stem == "01-quickstart":  # fields a format does not hold are named, not None
        info = next(c for c in out.cells if "agent.info()" in c.source)
        shown = "".join(
            str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
            for o in info.outputs
        )
        assert "schema_version" in shown and not re.search(r"\bNone\b", shown), shown
        assert "(not in this file)" not in shown


def test_quickstart_says_an_unknown_cost_is_unknown(runs):
    """legacy-v12 records no model: no call has a price. The total is unknown, never $0."""
    out = _run(runs, "01-quickstart", sample("legacy-v12").name)
    texts = "".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        for c in out.cells
        for o in c.get("outputs", [])
    )
    assert "total cost: unknown (31 call(s) have no price)" in texts
    assert "$0.0" not in texts


def _texts(cell) -> str:
    return "".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs
    )


def test_compare_puts_every_format_side_by_side(runs):
    """Notebook 06 on an ADF agent with its default ``OTHERS`` (None): one agent of each other
    format with a file in sample_agents/ (the first by path; an Inspect log's first sample),
    one column each, named by format, with each agent's own figures (computed here by opening
    the same files) and a sawtooth each. The formats are the samples folder's, as the
    registry recognises them: a format whose sample is added shows without a change here."""
    out = _run(runs, "06-compare-agents", "forgetful.adf")
    cells = {c.source.split("\n")[0]: c for c in out.cells if c.cell_type == "code"}
    firsts: dict[str, Path] = {}
    for p in sorted(registry.discover(ROOT / "sample_agents").inputs):
        firsts.setdefault(registry.recognise(p).name, Path(p))
    firsts.pop("adf")
    assert {"claude_code", "codex", "inspect_eval", "openhands", "letta"} <= set(firsts)
    agents = [adfkit.open(sample("forgetful"))]
    for fmt in adfkit.formats():
        if fmt in firsts:
            got = adfkit.open(firsts[fmt])
            agents.append(got[0] if isinstance(got, adfkit.AgentCollection) else got)
    labels = [a.format_label for a in agents]
    assert len(set(labels)) == len(agents) == len(firsts) + 1, labels
    glance = next(c for c in out.cells if "glance(a)" in c.source and "DataFrame" in c.source)
    shown = _texts(glance)
    assert all(label in shown for label in labels), shown
    compactions = [int((a.compactions()["event"] == "compaction").sum()) for a in agents]
    # pandas wraps the wide table into blocks of columns: the row's values over the blocks
    row = [x for ln in shown.splitlines() if ln.startswith("compactions") for x in ln.split()[1:]]
    assert [int(x) for x in row] == compactions, shown
    subs = _texts(next(c for k, c in cells.items() if "a.subagents()" in c.source))
    for label, a in zip(labels, agents, strict=True):
        assert f"{label}: {len(a.subagents())} subagent(s)" in subs, subs
    saw = _texts(next(c for c in out.cells if "context_sawtooth" in c.source))
    assert f"with {2 * ((len(agents) + 1) // 2)} Axes" in saw, saw


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_file_a_notebook_opens_is_a_parameter_and_ships(path):
    """A path to a sample stands only in the ``parameters`` cell (where ``adfkit report`` and a
    reader change it), and each is one the wheel ships and ``adfkit notebooks`` copies; no
    notebook tells a Claude Code user that an agent is an .adf file."""
    assert "An `.adf` file is one agent's whole memory" not in path.read_text()
    from adfkit._base.bundled import sample_files

    nb = nbformat.read(path, as_version=4)
    params, rest = nb.cells[0].source, [c.source for c in nb.cells[1:] if c.cell_type == "code"]
    assert not [s for s in rest if "sample_agents" in s], f"{path.name}: a path outside parameters"
    shipped = {str(p) for p in sample_files()}
    for name in re.findall(r'"\.\./sample_agents/([^"#]+)', params):
        whole = name in shipped or any(f.startswith(f"{name}/") for f in shipped)  # a folder
        assert whole, f"{path.name}: {name} is not shipped ({sorted(shipped)})"
