"""What a researcher, a student and a pip user see (issue 35): outputs named and placed as asked,
each format described in its own words, transcripts readable, samples that make a fleet."""

from __future__ import annotations

from pathlib import Path

import livesession
import pytest
from conftest import SAMPLES, sample

import adfkit.cli._report as report_cli
from adfkit.cli import main

COPILOT = SAMPLES / "copilot_cli" / "session-state" / "6df5dfb8-76b8-47ef-add4-3e771030055d"
SESSION = (
    SAMPLES
    / "claude-code/projects/-home-user-work-webapp/24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl"
)


@pytest.fixture
def reports(monkeypatch):
    """``adfkit report`` with its kernel replaced by a recorder of the paths it would write."""
    written: list[Path] = []

    def fake(path, target, **_):
        written.append(Path(target))
        return Path(target)

    monkeypatch.setattr(report_cli, "write_report", fake)
    return written


# item 6 ---------------------------------------------------------------------------------------


def test_report_into_an_existing_folder(tmp_path, reports, capsys):
    """`adfkit report F -o reports/` (a folder that exists, with or without the slash) writes
    reports/<stem>-report.html; it was refused as 'not .html'."""
    (tmp_path / "reports").mkdir()
    for out in (tmp_path / "reports", f"{tmp_path / 'reports'}/"):
        assert main(["report", str(sample("clean")), "-o", str(out)]) == 0, capsys.readouterr()
    assert reports == [tmp_path / "reports" / "clean-report.html"] * 2
    assert main(["report", str(sample("clean")), "-o", str(tmp_path / "one.html")]) == 0
    assert reports[-1] == tmp_path / "one.html"  # a file name is still a file


def test_copilot_outputs_are_named_by_session(tmp_path, reports, capsys):
    """Every Copilot CLI session's file is events.jsonl: plots and reports are named by the
    session's folder, as other formats' are by their session, not events-*.png."""
    sid = COPILOT.name
    for given in (COPILOT, COPILOT / "events.jsonl"):
        out = tmp_path / given.name
        assert main(["plot", str(given), "--kind", "all", "-o", str(out)]) == 0
        names = sorted(p.name for p in out.iterdir())
        assert names and all(n.startswith(f"{sid}-") for n in names), names
        assert main(["report", str(given), "-o", f"{out}/"]) == 0
        assert reports[-1] == out / f"{sid}-report.html"
    capsys.readouterr()


def _make_chromium(tmp_path: Path, uid: int) -> tuple[str, list[str]]:
    """``make chromium`` on a PATH without Chromium, as user ``uid``, with an apt-get that
    records what it was asked to do instead of doing it."""
    import shutil
    import subprocess

    bin_ = tmp_path / f"bin{uid}"
    bin_.mkdir()
    for tool in ("make", "sh"):
        (bin_ / tool).symlink_to(shutil.which(tool))  # type: ignore[arg-type]
    log = tmp_path / f"apt{uid}.log"
    (bin_ / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (bin_ / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    for f in ("id", "apt-get"):
        (bin_ / f).chmod(0o755)
    env = {"PATH": str(bin_), "HOME": str(tmp_path)}
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        ["make", "-s", "-C", str(root), "chromium"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, log.read_text().splitlines() if log.exists() else []


def test_make_test_finds_or_installs_chromium_or_says_what_is_skipped(tmp_path):
    """`make test` gets Chromium the way .ci/run did (as root, from Debian), so the browser
    tests run; where it cannot, it says they will be skipped and how to get them. README says
    the same, not "browser included" unconditionally."""
    import re

    root = Path(__file__).resolve().parents[1]
    assert re.search(r"^test: .*\bchromium\b", (root / "Makefile").read_text(), re.M)
    out, apt = _make_chromium(tmp_path, 0)
    assert apt == ["install -y -qq chromium"], (out, apt)
    out, apt = _make_chromium(tmp_path, 1000)
    assert apt == []
    assert "the browser tests (tests/test_browser.py) will be skipped" in out
    readme = (root / "README.md").read_text()
    assert "browser included" not in readme
    assert "make test` installs it" in readme


# item 3 ---------------------------------------------------------------------------------------


def test_info_describes_a_transcript_in_its_own_words(capsys):
    """`adfkit info` on a Claude Code session: no ADF words (live loop, archives of loop rows,
    audit on); the rows in context now, and what its compactions swept (figures from the
    tables: every history row not in the context was swept)."""
    import adfkit

    a = adfkit.open(SESSION)
    in_context, swept = len(a.loop()), len(a.history()) - len(a.loop())
    n = int((a.events()["event"] == "compaction").sum())
    assert main(["info", str(SESSION)]) == 0
    out = capsys.readouterr().out
    for adf_word in ("live loop", "audit on", "archive(s) of loop rows", "loop rows"):
        assert adf_word not in out, adf_word
    assert f"in context  {in_context} rows, seq " in out
    assert f"swept       {swept} rows by {n} compaction(s), kept in the file" in out, out
    assert main(["info", str(sample("long-runner"))]) == 0  # an ADF file keeps its words
    out = capsys.readouterr().out
    assert "live loop  30 rows" in out and "audit      7 archive(s) of loop rows" in out
    assert "audit on   loop" in out


def test_integrity_findings_name_the_formats_own_parts():
    """A history finding on an OpenHands conversation names its events, not adf_loop; an ADF
    file's still name adf_loop."""
    import adfkit

    conv = SAMPLES / "openhands/conversations/02ff349d4f874aa39c2b9d9f2ae75e2e"
    found = adfkit.open(conv).integrity()
    row = found[found["check"] == "tool_use_without_result"]
    assert list(row["table"]) == ["events"]
    assert not found["table"].str.startswith("adf_").any()
    adf = adfkit.open_adf(sample("forgetful")).integrity()
    assert set(adf["table"]) == {"adf_loop", "adf_config"}


def test_help_names_every_format():
    """`adfkit --help` says what it reads, every format by its label (it said "ADF files")."""
    from adfkit._core import registry
    from adfkit.cli import build_parser

    text = build_parser().format_help()
    assert "(ADF files" not in text
    flat = " ".join(text.split())
    for name in registry.BUILTIN:
        assert registry.spec(name).label in flat, name


def _notebook(stem: str) -> list[str]:
    import json

    nb = json.loads((Path(__file__).resolve().parents[1] / f"notebooks/{stem}.ipynb").read_text())
    return ["".join(c["source"]) for c in nb["cells"]]


def test_notebooks_describe_each_format_in_its_own_terms():
    """Notebook 02 does not say every agent archives its loop to adf_audit; notebook 01's info
    table holds the fields the file has (on a Claude Code session: no column of
    "(not in this file)"), and names the others in one line."""
    import io
    from contextlib import redirect_stdout

    import pandas as pd

    import adfkit

    assert "archives the loop to\n`adf_audit`" not in _notebook("02-compaction-replay")[1]
    (cell,) = [c for c in _notebook("01-quickstart") if "agent.info()" in c]
    *body, last = cell.splitlines()
    agent = adfkit.open(SESSION)
    ns = {"pd": pd, "agent": agent}
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec("\n".join(body), ns)
    table = eval(last, ns)
    info = agent.info()
    assert list(table.index) == [k for k, v in info.items() if v is not None]
    assert "(not in this file)" not in table.to_string()
    missing = sorted(k for k, v in info.items() if v is None)
    assert printed.getvalue() == f"not in this kind of file: {', '.join(missing)}\n"


# items 1 and 2 --------------------------------------------------------------------------------


def test_sample_path_finds_the_shipped_samples():
    """`adfkit.sample_path` is where the samples are, in a clone as after pip install (the
    wheel test runs the README's Quick start with it); a name not there says what is."""
    import adfkit

    assert adfkit.sample_path("long-runner.adf") == SAMPLES.resolve() / "long-runner.adf"
    assert adfkit.sample_path() == SAMPLES.resolve()
    with pytest.raises(adfkit.AdfError, match="no sample agent 'nope.adf'; adfkit ships"):
        adfkit.sample_path("nope.adf")
    with pytest.raises(adfkit.AdfError):
        adfkit.sample_path("../pyproject.toml")


def test_copied_notebooks_get_a_fleet_and_a_short_summary(tmp_path, capsys):
    """`adfkit notebooks DIR` prints one line per folder (it printed all 105 paths), and the
    samples it copies are the fleet notebook 04 shows in a clone: every ADF sample agent (a
    pip user got one, a fleet of one)."""
    import adfkit
    from adfkit._base.bundled import sample_files

    assert main(["notebooks", str(tmp_path / "nb")]) == 0
    out = capsys.readouterr().out.splitlines()
    n_notebooks = len(list((SAMPLES.parent / "notebooks").glob("*.ipynb")))
    assert out == [
        f"{tmp_path / 'nb' / 'notebooks'}: {n_notebooks} file(s) copied",
        f"{tmp_path / 'nb' / 'sample_agents'}: {len(sample_files())} file(s) copied",
    ]
    copied, errors = adfkit.load_fleet(tmp_path / "nb" / "sample_agents", "info", engine="serial")
    clone, _ = adfkit.load_fleet(SAMPLES, "info", engine="serial")
    # every ADF sample ships (a folder is searched through its subfolders: the clone's holds
    # the other formats' samples too, of which the wheel ships notebook 06's)
    adf = copied[copied["format"] == "adf"]
    assert errors.empty and len(adf) == len(list(SAMPLES.glob("*.adf"))) == 7
    assert set(copied["label"]) <= set(clone["label"])


# item 5 ---------------------------------------------------------------------------------------


def test_cache_cost_after_each_compaction_is_drawn_on_the_sample():
    """Notebook 07's "cache cost after each compaction" on long-runner.adf: a bar per
    compaction (it was empty: the sample's calls reported their cache parts on some calls
    only, as 'not reported', so every cost was unknown). Anthropic reports them on every call;
    adfsynth now writes them so, 0 when nothing was read or written."""
    import adfkit
    from adfkit import plots_forgetting

    agent = adfkit.open(sample("long-runner"))
    cache = agent.compaction_cache()
    assert cache["cost_after_usd"].notna().all() and len(cache) == 7
    ax = plots_forgetting.cache_cost(agent)
    heights = [p.get_height() for p in ax.patches]
    assert sum(h > 0 for h in heights) >= len(cache)
    plots_forgetting.close(ax)


def test_fleet_legend_clears_the_share_axis_and_anchors_say_what_they_measure():
    """The ledger's legend stands beyond the right axis's tick labels and label even in a narrow
    subplot (notebook 07's fleet figure: it covered the label), and no reference line cites an
    issue number instead of saying what was measured."""
    import re

    import matplotlib.pyplot as plt

    import adfkit
    from adfkit import plots_forgetting

    ledger = adfkit.open(sample("long-runner")).compaction_ledger()
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.5), layout="constrained")
    ax = plots_forgetting.ledger_by_kind(ledger, ax=axes[0])
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    (right,) = [a for a in fig.axes if a is not ax and a.bbox.bounds == ax.bbox.bounds]
    legend = right.get_legend().get_window_extent(r)
    label = right.yaxis.label.get_window_extent(r)
    ticks = max(t.get_window_extent(r).x1 for t in right.get_yticklabels() if t.get_text())
    assert legend.x0 >= max(label.x1, ticks), (legend.x0, label.x1, ticks)
    plt.close(fig)
    for _value, text in plots_forgetting.ANCHORS.values():
        assert not re.search(r"#\d", text), text


def test_a_report_on_a_session_without_compaction_has_no_empty_sections(tmp_path):
    """Notebook 02 as a report on a conversation with no compaction: no "What it swept" /
    "What the summary dropped" headings over nothing; on an agent with compactions they are
    there."""
    pytest.importorskip("nbclient")
    from adfkit.report import write_report

    none = SAMPLES / "openhands/conversations/e82659d1ad6244a3809906d6698e1087"
    import adfkit

    assert adfkit.open(none).compactions().empty
    html = write_report(none, tmp_path / "none.html", notebook="02").read_text()
    assert "One compaction up close" in html and "no compaction here has both" in html
    for heading in ("What it swept", "The summary that replaced it", "What the summary dropped"):
        assert heading not in html, heading
    html = write_report(sample("clean"), tmp_path / "clean.html", notebook="02").read_text()
    for heading in ("What it swept", "The summary that replaced it", "What the summary dropped"):
        assert heading in html, heading


# item 4 ---------------------------------------------------------------------------------------


@pytest.fixture
def md_session(tmp_path):
    import mdsession

    return mdsession.write(tmp_path / "projects" / "-home-u-webapp")


def test_transcript_markdown_is_rendered_and_stays_data(md_session):
    """A reply's markdown is shown as a reader expects (a heading, a table, a code block), and
    nothing in it becomes markup: its HTML and script are text, no image is fetched, no
    javascript: link is made, TeX stays inside an element MathJax leaves alone."""
    import adfkit
    from adfkit.widgets import rows_html

    html = rows_html(adfkit.open(md_session).history())
    assert "<h3>Plan</h3>" in html and "###" not in html
    assert "<th>step</th>" in html and "|---|" not in html
    assert '<pre><code class="language-go">' in html
    assert "&lt;b&gt;not bold&lt;/b&gt;" in html  # in the code block, as written
    for active in ("<script", "<img", 'onerror="', 'href="javascript', 'src="http'):
        assert active not in html, active
    assert "[click](javascript:window.pwned=3)" in html  # not a link: shown as written
    assert "$$x^2$$" in html and 'class="adf-loop tex2jax_ignore mathjax_ignore"' in html
    # tool inputs and results stay folded, as written
    assert '<details class="adf-tool-use"><summary>call <b>Read</b>' in html
    assert '<details class="adf-tool-result"><summary>&#8627; result of <b>Read</b>' in html


def test_loop_browser_searches_all_text_and_says_when_nothing_matches(md_session):
    """The search looks at a row's tool inputs and results too (a file named only there was
    found in no row: the text column of a tool call is empty), and a search that matches
    nothing says so instead of "rows 0-0 of 0"."""
    import mdsession

    import adfkit
    from adfkit.widgets import LoopBrowser

    agent = adfkit.open(md_session)
    history = agent.history()
    assert not history["text"].str.contains(mdsession.HIDDEN, regex=False).any()
    b = LoopBrowser(agent, history=True)
    b.search.value = "EXPLAIN.GO"  # any case
    assert list(b.page_frame["kind"]) == ["assistant", "tool_result"]
    assert b.status.value.startswith("rows 1-2 of 2 (filtered from 4)")
    assert b.html.value.count("<mark>") == 2
    b.search.value = "no such words"
    assert b.n_matches == 0
    assert b.status.value == 'no rows match "no such words" (in 4 rows of the history)'
    b.role.value = "assistant"
    assert b.status.value.endswith('"no such words" with role assistant (in 4 rows of the history)')
    assert "rows 0-0" not in b.status.value


def test_loop_browser_search_counts_rows_holding_the_text_anywhere():
    """On the Claude Code sample: the rows a search finds are every row whose content holds
    the text (counted here from the raw JSON, for a text with nothing to escape), more than
    the text column alone holds."""
    import adfkit
    from adfkit.widgets import LoopBrowser

    agent = adfkit.open(SESSION)
    history = agent.history()
    word = "webapp/src/"  # in tool inputs and results (paths), seldom in the text
    in_content = int(history["content"].str.lower().str.contains(word, regex=False).sum())
    in_text = int(history["text"].str.lower().str.contains(word, regex=False).sum())
    b = LoopBrowser(agent, history=True)
    b.search.value = word
    assert b.n_matches == in_content > in_text


def test_replay_player_has_a_speed_control():
    """ReplayPlayer plays at a chosen speed: at the fastest, an agent of 4,571 calls plays in
    seconds (at the 2 calls/s it had, 38 minutes)."""
    import math

    import adfkit
    from adfkit.widgets import ReplayPlayer

    p = ReplayPlayer(adfkit.open(sample("long-runner")))
    labels = [label for label, _ in p.speed.options]
    assert p.speed.label == "2 calls/s" and (p.play.interval, p.play.step) == (500, 1)
    p.speed.value = len(labels) - 1
    seconds = math.ceil(4571 / p.play.step) * p.play.interval / 1000
    assert seconds < 10 and p.speed.label == labels[-1]
    assert p.speed in p.widget.children[1].children


def test_a_report_is_titled_by_the_session_and_renders_its_markdown(md_session, tmp_path):
    """A report's title is the session's title (with its project), the uuid beside it; its
    rows are rendered markdown."""
    pytest.importorskip("nbclient")
    import mdsession

    from adfkit.report import write_report

    html = write_report(md_session, tmp_path / "r.html", notebook="01").read_text()
    title = f"webapp · {mdsession.TITLE}"
    assert f"<title>adfkit report: {title} ({md_session.name})</title>" in html
    assert f'">adfkit report: {title}<a class="anchor-link"' in html  # the heading
    assert f"({mdsession.SID})" in html  # the session id beside the file
    assert "<h3>Plan</h3>" in html and "<script>window.pwned" not in html  # its rows


def test_replay_player_ends_on_the_last_call_at_any_speed():
    """The browser's Play stops when a stride would pass the last call: the player then shows
    the last call (at 250 calls a stride, the last ones were never shown)."""
    import adfkit
    from adfkit.widgets import ReplayPlayer

    p = ReplayPlayer(adfkit.open(sample("long-runner")))
    p.speed.value = len(p.speed.options) - 1
    n = int(p.play.max)
    p.play.value = p.call.value = 1 + ((n - 1) // p.play.step) * p.play.step  # the last stride
    assert p.call.value < n
    p.play.playing = True
    p.play.playing = False  # what the browser sends when the next stride would pass the end
    assert p.call.value == n and p.call_seq == int(p.calls["seq"].iloc[-1])


# item 9 ---------------------------------------------------------------------------------------


_session = livesession.session


def test_watch_reads_only_what_was_appended(tmp_path):
    """A large session (20,000 calls, ~18 MB) followed by `adfkit watch`: appending 1,000 lines
    (500 calls) costs exactly the bytes appended (counted by the reader, not timed), and the
    figures after it are those of a full read of the file (calls, the latest prompt, cost)."""
    from adfkit._base.tail import CHECK
    from adfkit._facade.watch import Watched, figures_of

    path = tmp_path / "p" / "5e551011-0000-4000-8000-0000000000aa.jsonl"
    path.parent.mkdir()
    path.write_bytes(_session(0, 20_000))
    size = path.stat().st_size
    assert size > 15_000_000
    w = Watched(path)
    assert w.incremental
    w.update()
    assert w.tail.bytes_read == size and w.figures.calls == 20_000
    more = _session(20_000, 20_500, parent="a19999")
    assert more.count(b"\n") == 1_000
    with open(path, "ab") as f:
        f.write(more)
    assert w.update() == []
    # the appended bytes, and the 64 before them compared to notice a rewritten file
    assert w.tail.bytes_read - size == len(more) + CHECK
    full, threshold = figures_of(path)
    assert (w.figures.calls, w.figures.context_tokens) == (full.calls, full.context_tokens)
    assert w.figures.calls == 20_500
    assert w.figures.cost_usd == pytest.approx(full.cost_usd, abs=1e-6)
    assert w.threshold == threshold == 167_000
    before = w.tail.bytes_read
    assert w.update() == [] and w.tail.bytes_read == before + CHECK  # nothing new appended


def test_watch_shows_each_compaction_as_it_lands_and_rereads_a_rewritten_file(tmp_path):
    """A compaction appended to a running session lands in the next update with what the
    record says of it; a half-written line waits for its end; a file cut or rewritten is read
    again from its start, with a note."""
    import json

    from adfkit._facade.watch import Watched

    path = tmp_path / "5e551011-0000-4000-8000-0000000000bb.jsonl"
    path.write_bytes(_session(0, 10))
    w = Watched(path)
    w.update()
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "sessionId": "w"}
    boundary |= {"timestamp": "2026-03-01T11:00:00.000Z", "parentUuid": None}
    boundary["compactMetadata"] = {"trigger": "auto", "preTokens": 20_009, "postTokens": 900}
    line = json.dumps(boundary).encode() + b"\n"
    with open(path, "ab") as f:
        f.write(line[:40])  # the agent is writing it
    assert w.update() == [] and w.figures.landed == []
    with open(path, "ab") as f:
        f.write(line[40:])
    (landed,) = w.update()
    assert (landed.trigger, landed.tokens_before, landed.tokens_after) == ("auto", 20_009, 900)
    assert (landed.swept, landed.unit) == (20, "records")  # 10 calls: 10 user + 10 assistant
    path.write_bytes(_session(0, 3))  # cut: a shorter file under the name
    assert w.update() == []
    assert w.notes and "read again from its start" in w.notes[-1] and "cut to" in w.notes[-1]
    assert w.figures.calls == 3 and w.figures.landed == []


def test_watch_command_prints_the_figures(capsys):
    """`adfkit watch --once` on the Claude Code sample (incremental) and an ADF file (read in
    full, read-only): the compactions, then one status line each, figures from the tables."""
    import adfkit

    assert main(["watch", "--once", str(SESSION), str(sample("long-runner"))]) == 0
    out = capsys.readouterr().out.splitlines()
    session = adfkit.open(SESSION)
    usage = session.usage()
    n = int((session.events()["event"] == "compaction").sum())
    status = [line for line in out if " calls · $" in line]
    assert status[0] == (
        f"{SESSION.name}: context {int(usage['tokens_input'].iloc[-1]):,} of 167,000 tokens "
        f"({int(usage['tokens_input'].iloc[-1]) / 167_000:.0%}) · {len(usage)} calls · "
        f"${usage['cost_usd'].sum():,.2f} · {n} compactions, 2 microcompactions"
    )
    assert status[1].startswith("long-runner.adf: context ") and "· 346 calls ·" in status[1]
    assert sum(line.startswith(f"{SESSION.name}: compaction (") for line in out) == n


def test_watch_follows_an_adf_file_through_its_wal_read_only(tmp_path):
    """An ADF agent running (its writer holds the file open in WAL mode, commits only in the
    -wal): each update sees the new calls, and the watcher writes nothing (the file and its
    -wal are byte for byte as the writer left them)."""
    import json
    import sqlite3

    from adfbuild import build, row, text
    from conftest import fingerprint

    from adfkit._facade.watch import Watched

    f = build(tmp_path / "live.adf", loop=[row(1, "user", text("start"))])
    con = sqlite3.connect(f, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")

    def call(n: int) -> None:
        con.execute(
            "INSERT INTO adf_loop (role, content_json, model, tokens, created_at) "
            "VALUES ('assistant', ?, 'claude-sonnet-4-5', ?, ?)",
            (json.dumps(text(f"reply {n}")), json.dumps({"input": 1000 * n, "output": 5}), n),
        )

    try:
        call(1)
        w = Watched(f)
        assert not w.incremental
        w.update()
        assert (w.figures.calls, w.figures.context_tokens) == (1, 1000)
        call(2)
        before = fingerprint(tmp_path)
        w.update()
        assert (w.figures.calls, w.figures.context_tokens) == (2, 2000)
        after = fingerprint(tmp_path)
        assert after["live.adf"] == before["live.adf"]
        assert after["live.adf-wal"] == before["live.adf-wal"]
    finally:
        con.close()


@pytest.mark.parametrize(
    "path",
    [
        SESSION,
        SAMPLES / "codex/sessions/2026/03/14/"
        "rollout-2026-03-14T09-12-33-51ea40b0-7088-4482-8231-74d06cde3e3a.jsonl",
    ],
    ids=["claude_code", "codex"],
)
def test_watch_followers_agree_with_a_full_read(path):
    """Read record by record, a Claude Code session (replays, a rewind, microcompactions) and a
    Codex rollout give the figures of the tables: calls, the latest prompt, cost, compactions."""
    from adfkit._facade.watch import Watched, figures_of

    w = Watched(path)
    assert w.incremental
    w.update()
    full, threshold = figures_of(path)
    got = (w.figures.calls, w.figures.context_tokens, len(w.figures.landed), w.threshold)
    assert got == (full.calls, full.context_tokens, len(full.landed), threshold)
    assert w.figures.cost_usd == pytest.approx(full.cost_usd, abs=1e-8)
    assert w.figures.microcompactions == full.microcompactions
