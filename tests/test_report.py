"""``adfkit report``: parameter injection, headless execution, self-contained and inert HTML."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from adfbuild import build, result, row, text, use
from background import Background
from conftest import fingerprint, sample

from adfkit import AdfError
from adfkit._base.errors import OutputPathError
from adfkit._facade.report import (
    ReportError,
    available_notebooks,
    execute_notebook,
    inject_parameters,
    notebook_path,
)
from adfkit.cli import main
from adfkit.report import write_report

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"


def _nb(*sources: str, params: bool = True) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    cells = [nbformat.v4.new_code_cell(s) for s in sources]
    if params:
        cells.insert(
            0, nbformat.v4.new_code_cell('AGENT = "x.adf"', metadata={"tags": ["parameters"]})
        )
    nb.cells = cells
    return nb


def _hostile(base: Path) -> Path:
    """An agent whose text is hostile HTML everywhere a renderer may show it."""
    folder = base / "agents"
    folder.mkdir()
    tok = {"input": 100, "output": 10}
    p = build(
        folder / "hostile.adf",
        loop=[
            row(1, "user", text(f"hello {SCRIPT} {IMG}")),
            row(2, "user", text(f"[Context: system_prompt] {SCRIPT}")),
            row(3, "assistant", [use("x1", "fs_read", {"path": SCRIPT, "q": IMG})], tokens=tok),
            row(4, "user", [result("x1", f"{IMG} {SCRIPT}")]),
            row(5, "assistant", text(f"done {IMG}"), tokens=tok),
        ],
        files={f"{SCRIPT}.md": IMG, "mind.md": f"# Mind\n{SCRIPT}"},
    )
    return p


@pytest.fixture
def hostile(tmp_path):
    return _hostile(tmp_path)


@pytest.fixture(scope="module")
def hostile_reports(request, tmp_path_factory):
    """The reports of the bundled notebooks the selected tests check, on one hostile agent,
    started together on first use and run two at a time (each is one kernel): keyed by
    notebook name, each the path written."""
    base = tmp_path_factory.mktemp("hostile")
    agent = _hostile(base)
    wanted = [
        item.callspec.params["notebook"]
        for item in request.session.items
        if getattr(item, "module", None) is request.module
        and getattr(item, "originalname", "")
        == "test_every_notebook_report_on_hostile_agent_is_inert"
    ]
    with Background() as background:
        for notebook in wanted:
            out = base / f"{notebook}.html"
            background.start(notebook, write_report, agent, out, notebook=notebook)
        yield background


def test_inject_parameters_replaces_the_parameters_cell():
    """One parameter cell in the report: the notebook's own, holding this run's values."""
    nb = _nb("print(AGENT)")
    inject_parameters(nb, {"AGENT": "/data/a b.adf"})
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    assert tags == [["parameters", "injected-parameters"], []]
    assert nb.cells[0].source.endswith("AGENT = '/data/a b.adf'")
    inject_parameters(nb, {"AGENT": "/other.adf"})  # re-injecting replaces, never stacks
    assert len(nb.cells) == 2 and "/other.adf" in nb.cells[0].source
    bare = inject_parameters(_nb("1", params=False), {"AGENT": "y"})
    assert bare.cells[0].metadata["tags"] == ["parameters", "injected-parameters"]


def test_notebook_names_and_prefixes():
    assert available_notebooks()[0] == "01-quickstart"
    assert notebook_path("02").name == "02-compaction-replay.ipynb"
    assert notebook_path("04-fleet").name == "04-fleet.ipynb"
    with pytest.raises(ReportError, match="choose one of .*01-quickstart"):
        notebook_path("nope")
    with pytest.raises(ReportError, match="matches .*01-quickstart.*02-compaction-replay"):
        notebook_path("0")  # ambiguous prefix: the message lists what it matches
    assert notebook_path("1").name == "01-quickstart.ipynb"  # a number
    assert notebook_path("teaching").name == "05-teaching-memory.ipynb"  # a word of the name


def test_report_is_self_contained_inert_and_leaves_the_input_alone(tmp_path, hostile):
    """A small notebook through the same machinery: plot inline, agent text escaped."""
    nbfile = tmp_path / "nb" / "t.ipynb"
    nbfile.parent.mkdir()
    nbformat.write(
        _nb(
            "import adfkit, adfkit.widgets\nimport matplotlib.pyplot as plt\n"
            "from IPython.display import HTML, display\nagent = adfkit.open_adf(AGENT)",
            'display(agent.loop()[["seq", "kind", "text"]])\ndisplay(agent.files())',
            "HTML(adfkit.widgets.rows_html(agent.history()))",
            "print(agent.read_text('mind.md'))",
            "fig, ax = plt.subplots()\nax.plot([1, 2, 3])\nplt.show()",
        ),
        nbfile,
    )
    before = fingerprint(hostile.parent)
    out = write_report(hostile, tmp_path / "out" / "r.html", notebook=str(nbfile))
    html = out.read_text()
    assert out == (tmp_path / "out" / "r.html").resolve()
    assert fingerprint(hostile.parent) == before  # nothing written or created beside the input
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', html)) == 1
    assert not re.search(r"<script[^>]*\bsrc=", html)  # no script from the network
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the text is there, escaped
    assert "<script>alert" not in html
    assert "<img src=x onerror" not in html
    assert 'data-kind="context"' in html  # the Loop-tab view made it into the report


def test_h64_report_never_writes_an_input_or_its_sidecar_names(tmp_path, hostile):
    for target in (hostile, hostile.parent / f"{hostile.name}-wal"):
        with pytest.raises(OutputPathError, match="refusing to write"):
            write_report(hostile, target)
    link = tmp_path / "link.adf"
    link.symlink_to(hostile)
    with pytest.raises(OutputPathError, match="-journal"):
        write_report(link, hostile.parent / f"{hostile.name}-journal")  # through the link too
    with pytest.raises(ReportError, match=r"ending in \.html"):
        write_report(hostile, tmp_path / "r.txt")


def test_report_on_a_bad_file_fails_before_any_kernel(tmp_path, capsys):
    bad = tmp_path / "in" / "notes.adf"
    bad.parent.mkdir()
    bad.write_text("not a database")
    with pytest.raises(AdfError):
        write_report(bad, tmp_path / "o.html")
    assert main(["report", str(bad), "-o", str(tmp_path / "o.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("adfkit: error:") and "notes.adf" in err
    assert not (tmp_path / "o.html").exists()


def test_report_cli_quickstart_on_a_sample(tmp_path, capsys):
    out = tmp_path / "reports" / "long-runner.html"
    agent = sample("long-runner")
    assert main(["report", str(agent), "-o", str(out), "--notebook", "01"]) == 0
    got = capsys.readouterr()
    assert got.out.strip() == str(out.resolve())
    assert "report long-runner.adf: cell 1/" in got.err  # progress on stderr
    html = out.read_text()
    assert "Quickstart" in html
    # A header says which agent, which file, when and which adfkit; the title too.
    assert "<title>adfkit report: long-runner (long-runner.adf)</title>" in html
    assert re.search(r"Agent file <strong>long-runner.adf</strong> .* made \d{4}-\d\d-\d\d", html)
    # One parameter cell, naming the file only; no local folder anywhere in the page.
    assert html.count("Parameters of this run") == 1
    assert str(agent.parent) not in html and "/tmp/ipykernel" not in html
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', html)) >= 1
    assert not re.search(r"<script[^>]*\bsrc=", html)


@pytest.mark.parametrize("notebook", available_notebooks())
def test_every_notebook_report_on_hostile_agent_is_inert(hostile_reports, notebook):
    html = hostile_reports.result(notebook).read_text()
    assert "<script>alert" not in html
    assert "<img src=x onerror" not in html
    assert "<script" not in html  # no script at all: widgets are shown as their static view
    # The fleet notebook shows counts, not text; the comparison shows this agent's text only
    # in its compactions' summaries, and the forgetting notebook only items its compactions
    # swept: this agent has none; the lab likewise shows only compactions' windows.
    if notebook not in (
        "04-fleet",
        "06-compare-agents",
        "07-what-forgetting-costs",
        "08-compaction-lab",
    ):
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_notebook_run_in_a_thread_leaves_no_event_loop_open(tmp_path):
    """A run outside an event loop (a thread of a fleet, of a test) closes the loop it ran
    in: nbclient's own would stay open on the thread and, collected later, warn about an
    unclosed loop and its sockets in whatever code runs then."""
    import gc
    import threading
    import warnings

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(AGENT.endswith('clean.adf'))")]
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, path)
    out: list = []
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        job = threading.Thread(target=lambda: out.append(execute_notebook(path, sample("clean"))))
        job.start()
        job.join()
        gc.collect()
    assert out and out[0].cells[-1].outputs[0]["text"] == "True\n"
    assert not [w for w in seen if issubclass(w.category, ResourceWarning)], seen


def test_a_parameters_cell_that_is_not_python_is_a_clear_error(tmp_path):
    """A notebook whose parameters cell someone broke: one ReportError naming the cell, not
    a SyntaxError traceback."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('AGENT = "a.adf"\nOTHERS = [', metadata={"tags": ["parameters"]})
    ]
    with pytest.raises(ReportError, match="parameters cell is not valid Python"):
        inject_parameters(nb, {"AGENT": "/x/b.adf"})


def test_the_report_command_skips_jsonschemas_slow_iri_grammar(tmp_path):
    """``adfkit report`` imports nbformat, which imports jsonschema, which imports
    rfc3987_syntax where JupyterLab's dependencies installed it: 2.3 s of building a grammar
    for a format nbformat never checks (a third of a report's time). The command keeps it out
    of its process; nbformat still reads and validates the notebook."""
    import subprocess
    import sys
    from importlib.machinery import PathFinder

    # on the path, not in sys.modules: tests/conftest.py keeps it out of this process too
    if PathFinder.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987-syntax is not installed here: nothing to keep out")
    code = """if True:
        import sys
        import adfkit.cli._report as r
        def fake(path, target, **_):
            import nbformat
            nb = nbformat.read(sys.argv[1], as_version=4)
            nbformat.validate(nb)
            print("grammar", sys.modules.get("rfc3987_syntax") is not None)
            return target
        r.write_report = fake
        from adfkit.cli import main
        sys.exit(main(["report", sys.argv[2], "-o", sys.argv[3]]))
    """
    nb = Path(__file__).resolve().parent.parent / "notebooks" / "01-quickstart.ipynb"
    args = [str(nb), str(sample("clean")), str(tmp_path / "r.html")]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "grammar False", done.stdout
