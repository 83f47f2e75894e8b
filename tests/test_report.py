"""``adfkit report``: parameter injection, headless execution, self-contained and inert HTML."""

from __future__ import annotations

import re

import nbformat
import pytest
from adfbuild import build, result, row, text, use
from conftest import fingerprint, sample

from adfkit import AdfError
from adfkit._report import (
    ReportError,
    available_notebooks,
    inject_parameters,
    notebook_path,
    write_report,
)
from adfkit.cli import main

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


@pytest.fixture
def hostile(tmp_path):
    """An agent whose text is hostile HTML everywhere a renderer may show it."""
    folder = tmp_path / "agents"
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


def test_inject_parameters_goes_after_the_parameters_cell():
    nb = _nb("print(AGENT)")
    inject_parameters(nb, {"AGENT": "/data/a b.adf"})
    assert [c.metadata.get("tags", []) for c in nb.cells] == [
        ["parameters"],
        ["injected-parameters"],
        [],
    ]
    assert nb.cells[1].source.endswith("AGENT = '/data/a b.adf'")
    inject_parameters(nb, {"AGENT": "/other.adf"})  # re-injecting replaces, never stacks
    assert len(nb.cells) == 3 and "/other.adf" in nb.cells[1].source
    bare = inject_parameters(_nb("1", params=False), {"AGENT": "y"})
    assert bare.cells[0].metadata["tags"] == ["injected-parameters"]


def test_notebook_names_and_prefixes():
    assert available_notebooks()[0] == "01-quickstart"
    assert notebook_path("02").name == "02-compaction-replay.ipynb"
    assert notebook_path("04-fleet").name == "04-fleet.ipynb"
    with pytest.raises(ReportError, match="choose one of .*01-quickstart"):
        notebook_path("nope")
    with pytest.raises(ReportError):
        notebook_path("0")  # ambiguous prefix


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


def test_report_refuses_to_write_beside_the_input(tmp_path, hostile):
    with pytest.raises(ReportError, match="next to the agent file"):
        write_report(hostile, hostile.parent / "report.html")
    with pytest.raises(ReportError, match="overwrite the agent file"):
        write_report(hostile, hostile)
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
    assert main(["report", str(sample("long-runner")), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out.resolve())
    html = out.read_text()
    assert "Quickstart" in html
    assert "long-runner" in html
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', html)) >= 1
    assert not re.search(r"<script[^>]*\bsrc=", html)


@pytest.mark.parametrize("notebook", available_notebooks())
def test_every_notebook_report_on_hostile_agent_is_inert(tmp_path, hostile, notebook):
    html = write_report(hostile, tmp_path / "r.html", notebook=notebook).read_text()
    assert "<script>alert" not in html
    assert "<img src=x onerror" not in html
    assert "<script" not in html  # no script at all: widgets are shown as their static view
    if notebook != "04-fleet":  # the fleet notebook shows counts, not text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
