"""The plain HTML report (``adfkit report FILE``, no kernel): its figures against reference
figures computed independently, agent text inert in it, the input never written, every format."""

from __future__ import annotations

import html as html_lib
import json
import re
import warnings
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, fingerprint, runtime_fixture, sample
from test_claude_code import Log, text

import adfkit
from adfkit._base.errors import OutputPathError
from adfkit.cli import main
from adfkit.report import ReportError, write_report

TRANSCRIPTS = ROOT.parent / "shared" / "fixtures" / "transcripts"
#: The largest real Claude Code session: 2 compactions and 2 microcompactions (reference.json).
SESSION = (
    "claude-code/projects/-Users-alex-workspace-cli--worktrees-alex-ent-109-text-output-"
    "checkpoint-flag/70d782f7-b303-4e48-9512-6bec16c37abd.jsonl"
)

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
MATH = "$$\\int_0^1 x\\,dx$$"
CONTROLS = "\x1b[2J\x07\x00\x9b31m\u202e"


def _section(page: str, anchor: str) -> str:
    """The HTML of one section of the report (``<section id=anchor>``)."""
    m = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert m, f"no section {anchor}"
    return m.group(1)


def _rows(section: str) -> list[list[str]]:
    """The cells of every table row of a section, as text."""
    return [
        [html_lib.unescape(c) for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", tr)]
        for tr in re.findall(r"<tr>(.*?)</tr>", section, re.S)
    ]


def _figure(cell: str) -> int:
    return int(cell.replace(",", ""))


def _quiet_report(agent: Path | str, out: Path, **kw: object) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return write_report(agent, out, **kw).read_text(encoding="utf-8")


def test_a_real_session_reports_its_reference_figures(tmp_path):
    """The largest real Claude Code session: the compactions and microcompactions counted, and
    the tokens of the main conversation, as reference.json (an independent reader) has them."""
    if not (TRANSCRIPTS / "reference.json").exists():
        pytest.skip(f"real transcripts not present at {TRANSCRIPTS} (../shared is absent)")
    ref = json.loads((TRANSCRIPTS / "reference.json").read_text())[SESSION]
    page = _quiet_report(TRANSCRIPTS / SESSION, tmp_path / "r.html")
    events = _section(page, "compactions")
    assert f"{ref['compactions']:,} compaction(s)" in events
    assert f"{ref['microcompactions']:,} microcompaction(s)" in events
    assert (
        events.count('<details class="adf-event">') == ref["compactions"] + ref["microcompactions"]
    )
    # each compaction shows its summary (a row of the compaction kind), none is said missing
    assert events.count("The summary that replaced it") == ref["compactions"]
    rows = {r[0]: r for r in _rows(_section(page, "usage"))}
    head = _rows(_section(page, "usage"))[0]
    total = dict(zip(head, rows["all"], strict=True))
    main_ = ref["parts"]["main"]
    assert _figure(total["calls"]) == main_["calls"]
    assert (
        _figure(total["tokens_input"])
        == main_["input"] + main_["cache_read"] + main_["cache_write"]
    )
    assert _figure(total["tokens_output"]) == main_["output"]
    assert _figure(total["tokens_cache_read"]) == main_["cache_read"]
    assert _figure(total["tokens_cache_write"]) == main_["cache_write"]
    assert len(re.findall(r'<img class="adf-plot" [^>]*src="data:image/png;base64,', page)) == 4


def test_an_adf_runtime_file_reports_its_compactions_and_threshold(tmp_path):
    """The real runtime's long-runner.adf: 8 automatic compactions, threshold 9000 (the
    fixtures' README)."""
    agent = runtime_fixture("long-runner")
    page = _quiet_report(agent, tmp_path / "r.html")
    assert "8 compaction(s)" in _section(page, "compactions")
    kinds = [r[2] for r in _rows(_section(page, "compactions"))[1:9]]
    assert kinds == ["auto"] * 8
    assert re.search(r"threshold\s+9,000 tokens", _section(page, "info"))
    assert "forgetting_cost_usd" in _section(page, "forgetting")
    assert str(agent.parent) not in page  # the file by its name, never its folder


def _hostile_session(folder: Path) -> Path:
    """A Claude Code session whose prompt, answer, compaction summary and title hold markup,
    TeX and control characters."""
    log = Log()
    log.user("u1", None, f"fix it {SCRIPT} {MATH} {CONTROLS}")
    log.asst("a1", "u1", "m1", [text(f"ok {IMG} {MATH}")], req="r1")
    log.system(
        "b1",
        None,
        "compact_boundary",
        logicalParentUuid="a1",
        compactMetadata={"trigger": "manual", "preTokens": 1000},
    )
    log.user(
        "s1", "b1", f"Summary {SCRIPT} {IMG} {MATH} {CONTROLS} \ud800end", isCompactSummary=True
    )
    log.user("u2", "s1", "go on")
    log.asst("a2", "u2", "m2", [text(f"done {SCRIPT}")], req="r2")
    log.raw(
        {"type": "custom-title", "customTitle": f"t {SCRIPT}{CONTROLS}", "sessionId": log.session}
    )
    path = folder / "projects" / "-home-u-proj" / f"{log.session}.jsonl"
    path.parent.mkdir(parents=True)
    out = bytearray()
    for r in log.recs:  # a lone surrogate as JSON writes it: an escape in the file
        out += json.dumps(r).encode() + b"\n"
    path.write_bytes(bytes(out))
    return path


def test_hostile_agent_text_is_inert(tmp_path):
    """Markup, TeX and control characters from the file are shown as text: no tag, no
    MathJax (none is loaded, and the body is marked for MathJax to skip), no raw control
    character (a bidi override reorders what is shown; NUL is invalid HTML), a lone surrogate
    replaced, not a UnicodeEncodeError."""
    src = _hostile_session(tmp_path)
    page = _quiet_report(src, tmp_path / "r.html")
    assert "<script" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the summary's text, escaped
    assert "Summary &lt;script&gt;" in _section(page, "compactions")
    assert "$$\\int_0^1 x" in page  # as written (markdown's own escapes aside), never typeset
    assert '<div class="tex2jax_ignore mathjax_ignore">' in page
    assert "mathjax" not in page.lower().replace("mathjax_ignore", "")  # no MathJax loaded
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", page)
    assert "\\x1b[2J" in page and "\\u202e" in page  # shown as escapes
    assert "\ufffdend" in page
    assert not re.search(r"\bsrc=\"(?!data:image/png;base64,)", page)  # nothing from elsewhere


def test_the_report_never_writes_onto_an_input(tmp_path):
    """The input, a SQLite sidecar name of it, the input under another name: refused before
    anything is written; nothing is created or touched beside the input."""
    folder = tmp_path / "in"
    folder.mkdir()
    agent = folder / "clean.adf"
    agent.write_bytes(sample("clean").read_bytes())
    link = tmp_path / "link.adf"
    link.symlink_to(agent)
    before = fingerprint(folder)
    for target in (agent, folder / "clean.adf-wal", link):
        with pytest.raises(OutputPathError, match="refusing to write"):
            write_report(agent, target)
    with pytest.raises(ReportError, match=r"ending in \.html"):
        write_report(agent, tmp_path / "r.txt")
    out = write_report(agent, tmp_path / "out" / "r.html")
    assert out.is_file() and fingerprint(folder) == before


def test_the_cli_default_is_the_plain_report_without_the_notebooks_extra(
    tmp_path, capsys, monkeypatch
):
    """``adfkit report FILE`` with no kernel to be had (a plain pip install): the plain report,
    its path on stdout and nothing on stderr; ``--notebook`` is what needs the extra."""
    monkeypatch.setattr("adfkit._facade.report.missing", lambda: ["nbformat", "nbclient"])
    out = tmp_path / "r.html"
    assert main(["report", str(sample("long-runner")), "-o", str(out)]) == 0
    got = capsys.readouterr()
    assert got.out.strip() == str(out.resolve()) and got.err == ""
    page = out.read_text()
    assert "<title>adfkit report: long-runner (long-runner.adf)</title>" in page
    assert "plain report" in page and "7 compaction(s)" in page
    assert main(["report", str(sample("clean")), "-o", str(out), "--notebook", "01"]) == 2
    assert "running a notebook needs nbformat" in capsys.readouterr().err


def _every_format() -> list[Path]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        listed = adfkit.list_sessions(SAMPLES)
        out = []
        for p in listed.drop_duplicates("format")["path"]:
            with adfkit.open(p) as got:  # a file of several agents: its first, by its PATH#NAME
                out.append(Path(got.paths[0] if isinstance(got, adfkit.AgentCollection) else p))
    return out


@pytest.mark.parametrize("path", _every_format(), ids=lambda p: p.name[:24])
def test_every_format_gets_every_section(tmp_path, path):
    """One sample of each format: every section there, each plot drawn."""
    page = _quiet_report(path, tmp_path / "r.html")
    for anchor in ("info", "usage", "plots", "compactions", "forgetting"):
        assert _section(page, anchor).startswith("<h2>"), anchor
    assert page.count('src="data:image/png;base64,') == 4
    assert "Traceback" not in page


def test_in_chromium_the_report_runs_nothing_and_fetches_nothing(tmp_path, playwright_browser):
    """The hostile session's report opened in Chromium (tests/test_browser.py's browser): no
    script runs (no dialog, no script element), no request leaves the page, every plot
    decodes, each compaction unfolds to its summary, and the TeX is text."""
    page_file = tmp_path / "r.html"
    _quiet_report(_hostile_session(tmp_path), page_file)
    page = playwright_browser.new_page()
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    try:
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        sizes = page.eval_on_selector_all("img.adf-plot", "els => els.map(e => e.naturalWidth)")
        page.click("details.adf-event > summary")
        summary = page.inner_text("details.adf-event[open]")
        scripts = page.eval_on_selector_all("script", "els => els.length")
    finally:
        page.close()
    assert dialogs == [] and scripts == 0
    assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
    assert len(sizes) == 4 and all(w > 0 for w in sizes), sizes
    assert "Summary <script>alert(1)</script>" in summary
    assert "$$\\int_0^1 x" in summary


def test_a_file_of_several_agents_gets_a_report_per_agent(tmp_path, capsys):
    """An Inspect log of six samples: one report per sample into the folder (each titled by
    its sample), as ``adfkit plot`` writes a plot per sample; one file named for six is an
    error line, nothing written."""
    log = next((SAMPLES / "inspect").glob("*summary.eval"))
    with adfkit.open(log) as opened:
        members = opened.paths
    assert len(members) == 6
    out = tmp_path / "reports"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["report", str(log), "-o", f"{out}/"]) == 0
    written = capsys.readouterr().out.splitlines()
    assert len(written) == 6 and sorted(p.name for p in out.iterdir()) == sorted(
        Path(p).name for p in written
    )
    for member, path in zip(members, written, strict=True):
        sample_name = member.rpartition("#")[2]
        assert f"#{sample_name})</title>" in Path(path).read_text()
    assert main(["report", str(log), "-o", str(tmp_path / "one.html")]) == 2
    assert "names one file, but 6 agents were given" in capsys.readouterr().err
    assert not (tmp_path / "one.html").exists()


def test_a_session_without_a_model_call_says_so(tmp_path):
    """A session of one prompt and no answer yet: the report is written and says, section by
    section, what the file does not have (no table of zeros)."""
    log = Log()
    log.user("u1", None, "hello")
    page = _quiet_report(
        log.write(tmp_path / "p" / "-x" / f"{log.session}.jsonl"), tmp_path / "r.html"
    )
    assert "No model call records tokens in this file." in _section(page, "usage")
    assert "No compaction or clear in this file." in _section(page, "compactions")
    assert "<table" not in _section(page, "usage")


def test_a_long_life_lists_every_compaction_and_details_the_first(tmp_path):
    """big-runner.adf (181 compactions, the fixtures' README): the table has a row for each,
    the first MAX_DETAILED are unfolded one by one, a line says so; its mock model has no
    price, so the total cost is unknown, never $0."""
    from adfkit.report.page import MAX_DETAILED

    page = _quiet_report(runtime_fixture("big-runner"), tmp_path / "r.html")
    events = _section(page, "compactions")
    assert "181 compaction(s)" in events
    assert len(_rows(events.split("<details", 1)[0])) == 1 + 181  # the heading row and each
    assert events.count('<details class="adf-event">') == MAX_DETAILED == 60
    assert f"The first {MAX_DETAILED} of 181 are shown one by one" in events
    assert re.search(r"Total cost: unknown \([\d,]+ call\(s\) have no price\)", page)


def test_totals_match_the_sample_truth_and_an_unknown_part_is_unknown(tmp_path):
    """long-runner.adf's tokens in all as its generator's truth file has them; its compaction
    calls record no cache figures, so the total of cache reads is unknown ("-"), not the sum
    of the calls that have one."""
    truth = json.loads((SAMPLES / "long-runner.truth.json").read_text())["tokens_total"]
    page = _quiet_report(sample("long-runner"), tmp_path / "r.html")
    head, *rows = _rows(_section(page, "usage"))
    table = {r[0]: dict(zip(head, r, strict=True)) for r in rows}
    assert _figure(table["all"]["tokens_input"]) == truth["input"]
    assert _figure(table["all"]["tokens_output"]) == truth["output"]
    assert table["compaction"]["tokens_cache_read"] == "-"
    assert table["assistant"]["tokens_cache_read"] != "-"
    assert table["all"]["tokens_cache_read"] == "-"


def test_a_hostile_file_name_is_text(tmp_path):
    """An agent file named with markup and an escape sequence: the name is shown escaped, its
    control character as an escape, in the title, the heading and the info lines."""
    agent = tmp_path / f"{IMG}\x1b[2J.adf"
    agent.write_bytes(sample("clean").read_bytes())
    page = _quiet_report(agent, tmp_path / "r.html")
    assert "<img src=x" not in page and "\x1b" not in page
    shown = "&lt;img src=x onerror=alert(1)&gt;\\x1b[2J.adf"
    assert page.count(shown) >= 3, page.count(shown)  # title, heading line, info's file line


def test_no_plots_leaves_matplotlib_unimported_and_says_so(tmp_path):
    """``--no-plots``: every other section as with plots, no image, a line saying how to get
    them, and matplotlib never imported (the half of the CPU a renderer does not spend)."""
    import subprocess
    import sys

    agent = sample("long-runner")
    out = tmp_path / "r.html"
    code = (
        "import sys; from adfkit.cli import main; "
        f"rc = main(['report', {str(agent)!r}, '-o', {str(out)!r}, '--no-plots']); "
        "print(rc, 'matplotlib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.split()[-2:] == ["0", "False"]
    page = out.read_text(encoding="utf-8")
    with_plots = write_report(agent, tmp_path / "p.html").read_text(encoding="utf-8")
    assert "<img" not in page and with_plots.count("<img") == 4
    assert "adfkit plot FILE" in page
    sections = re.findall(r'<section id="([a-z]+)">', page)
    assert sections == re.findall(r'<section id="([a-z]+)">', with_plots)
    assert sections == ["info", "usage", "plots", "compactions", "forgetting"]


def test_no_plots_with_a_notebook_is_an_error(tmp_path, capsys):
    rc = main(
        [
            "report",
            str(sample("clean")),
            "-o",
            str(tmp_path / "r.html"),
            "--notebook",
            "01",
            "--no-plots",
        ]
    )
    assert rc != 0 and "--no-plots" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_the_report_draws_its_plots_without_pyplot(tmp_path):
    """The plots of the plain report are drawn on bare figures with the Agg canvas: pyplot
    (its figure manager, its backend switching) is never imported by ``adfkit report``."""
    import subprocess
    import sys

    out = tmp_path / "r.html"
    code = (
        "import sys; from adfkit.cli import main; "
        f"rc = main(['report', {str(sample('long-runner'))!r}, '-o', {str(out)!r}]); "
        "print(rc, 'matplotlib' in sys.modules, 'matplotlib.pyplot' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.split()[-3:] == ["0", "True", "False"]
    assert out.read_text(encoding="utf-8").count("<img") == 4


def test_each_plot_is_drawn_once_and_is_what_savefig_draws(tmp_path, monkeypatch):
    """Each plot of the report is drawn once (``savefig`` draws a figure with a layout
    engine twice: once with drawing disabled to run the layout, then the pixels), and its
    pixels are the ones ``savefig`` writes for the same plot."""
    import base64
    import io

    import numpy as np
    from matplotlib.figure import Figure
    from PIL import Image

    from adfkit import plots
    from adfkit.report import page

    draws = []
    real_draw = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda fig, r: draws.append(fig) or real_draw(fig, r))
    with adfkit.open(sample("long-runner")) as agent:
        shown = re.findall(r"base64,([^\"]+)", page.render(agent))
        assert len(shown) == 4 and len(draws) == 4 and len(set(map(id, draws))) == 4
        for (kind, _), data in zip(page.PLOTS, shown, strict=True):
            fig = Figure(figsize=plots.FIGSIZE, layout="constrained")
            plots.PLOTS[kind](agent, ax=fig.subplots())
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=100)
            want = np.asarray(Image.open(buf).convert("RGBA"))
            got = np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGBA"))
            assert got.shape == want.shape == (450, 900, 4), kind
            assert (got == want).all(), kind


def test_the_report_run_as_the_program_draws_what_a_library_call_draws(tmp_path):
    """``adfkit report FILE`` as the program (its imports frozen, matplotlib's with them and
    without its ``set()`` docstrings, ``kwdoc`` back afterwards): the page has the four plots,
    each a PNG that decodes to 900 x 450 RGB pixels, and they are the pixels (and the page the
    bytes, but for its time) of the report written by a library call in a process that did
    neither."""
    import base64
    import io
    import subprocess
    import sys

    import numpy as np
    from PIL import Image

    agent, out = sample("long-runner"), tmp_path / "program.html"
    code = (
        "import gc, sys\n"
        f"sys.argv = ['adfkit', 'report', {str(agent)!r}, '-o', {str(out)!r}]\n"
        "from adfkit._entry import main\n"
        "rc = main()\n"
        "import matplotlib.artist, matplotlib.lines, pandas\n"
        "seen = {id(o) for o in gc.get_objects()}  # frozen objects are not among them\n"
        "print(rc, id(pandas.DataFrame) in seen, id(matplotlib.lines.Line2D) in seen,\n"
        "      matplotlib.artist.kwdoc.__name__, len(matplotlib.lines.Line2D.set.__doc__))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    rc, pandas_seen, line2d_seen, kwdoc, doc_chars = done.stdout.split()[-5:]
    assert [rc, pandas_seen, line2d_seen, kwdoc] == ["0", "False", "False", "kwdoc"]
    from matplotlib.lines import Line2D

    full = len(Line2D.set.__doc__ or "")  # this process's: every property of Line2D listed
    assert 0 < int(doc_chars) < full / 2, (doc_chars, full)
    program = out.read_text(encoding="utf-8")
    library = _quiet_report(agent, tmp_path / "library.html")
    img = r'<img class="adf-plot" alt="[^"]*" src="data:image/png;base64,([^"]+)"'
    shown = re.findall(img, program)
    assert len(shown) == 4
    want = re.findall(r"base64,([^\"]+)", library)
    for got_b64, want_b64 in zip(shown, want, strict=True):
        got = Image.open(io.BytesIO(base64.b64decode(got_b64)))
        assert (got.format, got.mode, got.size) == ("PNG", "RGB", (900, 450))
        ref = Image.open(io.BytesIO(base64.b64decode(want_b64)))
        assert (np.asarray(got) == np.asarray(ref)).all()
    made = re.compile(r"made \d{4}-\d\d-\d\d \d\d:\d\d UTC")
    assert made.sub("", program) == made.sub("", library)


def test_agent_text_cannot_take_a_plots_place(tmp_path):
    """The plots' PNGs are put in after the page's text is scrubbed, each where its own
    ``<img>`` is: agent text that spells that place (as text, as a markdown link) stays text,
    and every image is one of the plots."""
    spelled = 'src="adfkit-plot:0" [plot](adfkit-plot:1) <img src="adfkit-plot:2">'
    log = Log()
    log.user("u1", None, f"draw {spelled}")
    log.asst("a1", "u1", "m1", [text(f"ok {spelled}")], req="r1")
    log.system(
        "b1",
        None,
        "compact_boundary",
        logicalParentUuid="a1",
        compactMetadata={"trigger": "manual", "preTokens": 1000},
    )
    log.user("s1", "b1", f"Summary {spelled}", isCompactSummary=True)
    log.user("u2", "s1", "go on")
    log.asst("a2", "u2", "m2", [text("done")], req="r2")
    path = tmp_path / "projects" / "-home-u-proj" / f"{log.session}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in log.recs), encoding="utf-8")
    page = _quiet_report(path, tmp_path / "r.html")
    srcs = re.findall(r"\bsrc=\"([^\"]*)\"", page)
    assert len(srcs) == page.count("<img") == 4
    assert all(s.startswith("data:image/png;base64,iVBORw0KGgo") for s in srcs)
    assert "Summary src=&quot;adfkit-plot:0&quot;" in _section(page, "compactions")
