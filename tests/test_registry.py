"""The format registry: a format is a plug-in, recognition is positive and loud.

The toy format below is registered from inside the test (an in-process :func:`register_format`
and, for the processes a report or a fleet starts, an ``adfkit.formats`` entry point on the
path) and gets every table, analysis, plot, widget, report and fleet with no other file
changed. Its files have known answers, counted here by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import adfkit
from adfkit._core import registry

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "fixtures"

#: A toy agent's transcript: one record per line, ``role|tokens in,out|text``; a line
#: ``compact|summary`` is a compaction that swept everything before it.
TOY_MODULE = '''
"""A toy agent format for adfkit's plug-in test."""
from pathlib import Path

from adfkit._core.registry import FormatSpec, Rule
from adfkit._sources.transcript.kit import (
    ParsedTranscript,
    TranscriptEvent,
    TranscriptRow,
    ModelCall,
)
from adfkit._sources.transcript.source import TranscriptSource

MAGIC = b"TOYAGENT 1\\n"


def _open(path, **options):
    rows, events, calls = [], [], []
    lines = Path(path).read_text().splitlines()[1:]
    for n, line in enumerate(lines, start=2):
        role, tokens, text = line.split("|", 2)
        seq = len(rows) + 1
        if role == "compact":
            rows.append(TranscriptRow(seq, "user", [{"type": "text", "text": text}],
                                      kind_hint="compaction_summary", line=n))
            events.append(TranscriptEvent("compaction", trigger="auto", line=n, summary_seq=seq,
                                          swept=tuple(r.seq for r in rows[:-1])))
            continue
        content = [{"type": "text", "text": text}]
        if text.startswith("run "):
            content.append({"type": "tool_use", "id": f"t{seq}", "name": text.split()[1],
                            "input": {"cmd": text}})
        if role == "tool":
            role, content = "user", [{"type": "tool_result", "tool_use_id": f"t{seq - 1}",
                                      "content": text, "is_error": False}]
        tok = {}
        if tokens:
            i, o = (int(x) for x in tokens.split(","))
            tok = {"input": i, "output": o}
            calls.append(ModelCall(f"c{seq}", seq, n, "toy-1", tok))
        rows.append(TranscriptRow(seq, role, content, model="toy-1" if tok else None,
                                  tokens=tok, created_at=1_700_000_000_000 + 1000 * seq, line=n))
    parsed = ParsedTranscript(str(path), "toy", Path(path).stem, rows=rows, events=events,
                              calls=calls)
    return TranscriptSource(parsed)


SPEC = FormatSpec(
    name="toy",
    label="toy agent log",
    looks_for="a TOYAGENT header",
    claims=lambda probe: not probe.is_dir and probe.head.startswith(MAGIC),
    open=_open,
    find=lambda folder: folder.glob("*.toy"),
    compaction_rule=lambda model, window: Rule(1000, 900, "toy: compacts at 900 tokens"),
    provider=lambda model: "toyco",
)
'''

#: A session: 2 compactions; 5 model calls (input 300+600+950+200+500, output 10 each).
TOY_LOG = """TOYAGENT 1
user||list the files
assistant|300,10|run ls
tool||a.txt b.txt
assistant|600,10|two files
user||read a.txt
assistant|950,10|run cat
tool||hello
compact||Summary: the user listed files and read a.txt
user||now b.txt
assistant|200,10|run cat
tool||world
compact||Summary: read both files
assistant|500,10|done
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The toy format, registered in this process and as an installed plug-in (an entry point
    on the path of child processes); yields a folder holding two toy logs."""
    plug = tmp_path / "plugin"
    plug.mkdir()
    (plug / "toyformat.py").write_text(TOY_MODULE)
    dist = plug / "toyformat-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyformat\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[adfkit.formats]\ntoy = toyformat:SPEC\n")
    monkeypatch.syspath_prepend(str(plug))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(plug), str(ROOT)]))
    import toyformat  # type: ignore[import-not-found]

    adfkit.register_format(toyformat.SPEC)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "one.toy").write_text(TOY_LOG)
    (logs / "two.toy").write_text(TOY_LOG.replace("|500,10|done", "|700,10|done"))
    try:
        yield logs
    finally:
        registry.unregister_format("toy")
        sys.modules.pop("toyformat", None)


def test_a_toy_format_gets_every_table_and_analysis(toy: Path) -> None:
    agent = adfkit.open(toy / "one.toy")
    assert isinstance(agent, adfkit.AgentFile)
    assert agent.format == "toy" and agent.name == "one"
    h = agent.history()
    assert len(h) == 13 and h["kind"].tolist().count("compaction_summary") == 2
    c = agent.compactions()
    assert c["event"].tolist() == ["compaction", "compaction"]
    assert c["n_swept"].tolist() == [7, 4]  # everything before each summary (the first summary too)
    u = agent.usage()
    assert u["tokens_input"].sum() == 300 + 600 + 950 + 200 + 500
    assert u["tokens_output"].sum() == 50
    assert agent.compact_threshold() == 900
    assert agent.config()["model"]["provider"] == "toyco"
    info = agent.info()
    assert info["format"] == "toy" and info["compactions"] == 2
    r = agent.replay()
    assert len(r) == 5  # one context per model call
    assert len(agent.integrity().columns) > 0
    obs = agent.observe()
    assert len(obs.turns) > 0
    assert set(obs.turns.columns) >= {"turn"}
    sim = adfkit.simulate(agent, adfkit.ThresholdPolicy())  # the toy rule: 900 tokens
    assert sim.summary["n_real_compactions"] == 2 and len(sim.calls) == 5
    assert sim.summary["calls_input_actual"] == 2550
    for table in ("forgetting", "compaction_ledger", "item_survival", "survival_curve"):
        assert isinstance(getattr(agent, table)(), pd.DataFrame), table
    agent.close()


def test_a_toy_format_gets_every_plot_and_widget(toy: Path) -> None:
    pytest.importorskip("matplotlib")
    from adfkit import plots, plots_forgetting, widgets

    path = toy / "one.toy"
    with adfkit.open(path) as agent:
        for name, fn in plots.PLOTS.items():
            ax = fn(agent)
            assert ax.figure is not None, name
            plots.close(ax)
        for fn in (plots_forgetting.ledger_by_kind, plots_forgetting.survival_plot):
            plots.close(fn(agent))
        ax = plots.context_sawtooth(path)  # a path of the plug-in format opens too
        assert "900" in " ".join(t.get_text() for t in ax.texts) or ax.lines
        plots.close(ax)
        for cls in (widgets.LoopBrowser, widgets.ReplayPlayer, widgets.AuditExplorer):
            w = cls(agent)
            assert "toy" not in type(w).__name__ and w is not None


def test_a_toy_format_in_fleets_and_the_cli(toy: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for engine in ("serial", "processes"):
            fleet = adfkit.load_fleet(toy, table="usage", engine=engine)
            assert fleet.errors.empty, fleet.errors
            per = fleet.df.groupby("agent")["tokens_input"].sum().to_dict()
            assert per == {"one": 2550, "two": 2750}, engine
    out = subprocess.run(
        [sys.executable, "-m", "adfkit", "info", str(toy / "one.toy"), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["format"] == "toy" and doc["compactions"] == 2


def test_a_toy_format_gets_a_report(toy: Path, tmp_path: Path) -> None:
    pytest.importorskip("nbclient")
    html = tmp_path / "toy-report.html"
    out = subprocess.run(
        [sys.executable, "-m", "adfkit", "report", str(toy / "one.toy"), "-o", str(html)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    text = html.read_text()
    assert "one.toy" in text and "Traceback" not in text


# --- recognition --------------------------------------------------------------------------

GEMINI_CHAT = {
    "sessionId": "5e3c9f8a-0000-4000-8000-000000000000",
    "projectHash": "ab" * 32,
    "startTime": "2026-01-01T00:00:00.000Z",
    "lastUpdated": "2026-01-01T00:01:00.000Z",
    "messages": [
        {"id": "m1", "timestamp": "2026-01-01T00:00:00.000Z", "type": "user", "content": "hi"},
        {"id": "m2", "timestamp": "2026-01-01T00:00:05.000Z", "type": "gemini", "content": "hey"},
    ],
}


@pytest.mark.parametrize(
    ("name", "data", "what"),
    [
        ("chat.json", json.dumps(GEMINI_CHAT, indent=2).encode(), "a JSON document of a kind"),
        ("chat-line.json", json.dumps(GEMINI_CHAT).encode() + b"\n", "JSON lines of a kind"),
        ("other.json", b'{"rows": [1, 2, 3], "meta": {"sessionId": "x"}}', "a JSON document"),
        ("list.json", b"[1, 2, 3]\n", "a JSON document"),
        ("records.jsonl", b'{"type": "message", "text": "x"}\n' * 3, "JSON lines of a kind"),
    ],
)
def test_what_no_format_claims_is_an_unknown_format(
    tmp_path: Path, name: str, data: bytes, what: str
) -> None:
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(adfkit.UnknownFormatError, match=what) as ei:
        adfkit.open(p)
    msg = str(ei.value)
    assert name in msg and "looked for" in msg
    for s in registry.specs():
        assert s.label in msg  # each format says what it looks for
    assert os.listdir(tmp_path) == [name]


def test_a_pi_session_is_never_a_codex_rollout() -> None:
    pi = SHARED / "pi" / "large-session.jsonl"
    if not pi.exists():
        pytest.skip("../shared/fixtures/pi is absent (a user's clone has none)")
    if "pi" in adfkit.formats():
        assert registry.recognise(pi).name == "pi"
    else:
        with pytest.raises(adfkit.UnknownFormatError):
            adfkit.open(pi)


def _inputs() -> Iterator[tuple[Path, str]]:
    """Every sample and fixture with the format it is in, known from where it lives."""
    for p in sorted((ROOT / "sample_agents").glob("*.adf")):
        yield p, "adf"
    for p in sorted((ROOT / "sample_agents" / "claude-code").rglob("*.jsonl")):
        yield p, "claude_code"
    for p in sorted((ROOT / "sample_agents" / "codex").rglob("rollout-*.jsonl*")):
        yield p, "codex"
    for p in sorted((ROOT / "sample_agents" / "inspect").glob("*.eval")):
        yield p, "inspect_eval"
    for p in sorted((ROOT / "sample_agents" / "openhands" / "conversations").iterdir()):
        if p.is_dir():
            yield p, "openhands"
    for p in sorted((ROOT / "sample_agents" / "pi").rglob("*.jsonl")):
        yield p, "pi"
    for p in sorted((ROOT / "sample_agents" / "copilot_cli").rglob("events.jsonl")):
        yield p.parent, "copilot_cli"
    for p in sorted((ROOT / "tests" / "fixtures" / "recorded").rglob("openclaw-agent.sqlite")):
        yield p, "openclaw"
    if SHARED.is_dir():
        for p in sorted((SHARED / "inspect-eval").glob("*.eval")):
            yield p, "inspect_eval"
        for p in sorted((SHARED / "openhands").iterdir()):
            if p.is_dir():
                yield p, "openhands"
        for p in sorted((SHARED / "pi").glob("*.jsonl")):
            yield p, "pi"
        for p in sorted((SHARED / "adf-runtime").glob("*.adf")):
            yield p, "adf"
        for sub, fmt in (("claude-code", "claude_code"), ("codex", "codex")):
            for p in sorted((SHARED / "transcripts" / sub).rglob("*")):
                if p.is_file() and p.name.endswith((".jsonl", ".jsonl.zst")):
                    yield p, fmt


def test_every_sample_and_fixture_is_claimed_by_exactly_its_format() -> None:
    seen = 0
    for path, fmt in _inputs():
        claimed = [s.name for s in registry.claimants(registry.Probe(path))]
        assert claimed == [fmt], path
        seen += 1
    assert seen >= 12


def test_formats_and_listings() -> None:
    assert adfkit.formats()[:3] == ("adf", "claude_code", "codex")
    both = adfkit.list_sessions(ROOT / "sample_agents" / "claude-code" / "projects")
    cc = adfkit.list_claude_code_sessions(ROOT / "sample_agents" / "claude-code" / "projects")
    assert both["format"].tolist() == ["claude_code"] * len(cc)
    assert sorted(both["path"]) == sorted(cc["path"])
    assert both["modified"].is_monotonic_decreasing
    with pytest.raises(ValueError, match="built-in"):
        adfkit.register_format(registry.spec("codex"))


def test_a_member_of_a_one_agent_input_is_refused() -> None:
    with pytest.raises(adfkit.AdfError, match="holds one agent"):
        adfkit.open(str(ROOT / "sample_agents" / "long-runner.adf") + "#x")


def test_a_toy_format_with_many_agents_is_a_collection(toy: Path, tmp_path: Path) -> None:
    import toyformat

    many = registry.FormatSpec(
        name="toys",
        label="toy bundle",
        looks_for="a TOYBUNDLE header",
        claims=lambda probe: not probe.is_dir and probe.head.startswith(b"TOYBUNDLE\n"),
        open=lambda path, member=None, **kw: _bundle(path, member, toyformat),
        many=True,
    )
    adfkit.register_format(many)
    try:
        bundle = tmp_path / "b.toys"
        bundle.write_text("TOYBUNDLE\n" + str(toy / "one.toy") + "\n" + str(toy / "two.toy") + "\n")
        got = adfkit.open(bundle)
        assert isinstance(got, adfkit.AgentCollection) and got.names == ["one", "two"]
        assert got["two"].usage()["tokens_input"].sum() == 2750
        assert got[0].path == f"{bundle}#one"
        one = adfkit.open(got[1].path)  # a member's path opens that one agent
        assert isinstance(one, adfkit.AgentFile) and one.name == "two"
        with pytest.raises(adfkit.AdfError, match="holds 2 agents"):
            adfkit.AgentFile(bundle)
        fleet = adfkit.load_fleet([bundle], table="history")
        assert fleet.df.groupby("agent").size().to_dict() == {"one": 13, "two": 13}
    finally:
        registry.unregister_format("toys")


def _bundle(path: Path, member: str | None, toyformat: object) -> object:
    files = [Path(x) for x in path.read_text().splitlines()[1:]]
    sources = [toyformat.SPEC.open(f) for f in files]  # type: ignore[attr-defined]
    if member is None:
        return sources
    return next(s for s in sources if s.name == member)


def test_the_spec_modules_are_light() -> None:
    """Recognising a file imports no reader: the spec modules hold only recognition."""
    code = textwrap.dedent(
        """
        import sys
        from adfkit._core import registry as _registry
        _registry.recognise("sample_agents/long-runner.adf")
        readers = (
            "adfkit._sources.adf.source",
            "adfkit._sources.claude_code.parser",
            "adfkit._sources.codex.parser",
        )
        print([m for m in readers if m in sys.modules])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stderr


def test_a_format_package_is_found_without_a_line_in_the_list(tmp_path):
    """Package discovery: every folder of ``_sources`` whose ``__init__`` assigns a ``SPEC`` is
    a built-in format, after the ones the list places (in their order); a shared package (no
    SPEC) is none. The real folder gives exactly the built-in formats."""
    for name, text in (
        ("adf", "SPEC = FormatSpec(...)\n"),
        ("zeta", "SPEC: FormatSpec = make()\n"),
        ("alpha", "from x import y\n\nSPEC = FormatSpec(\n    name='alpha',\n)\n"),
        ("kit", '"""Shared: no SPEC = here."""\nSPECS = 1\n'),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(text)
    (tmp_path / "notes").mkdir()  # no __init__.py: no package
    known = {"zeta": "adfkit._sources.zeta", "adf": "adfkit._sources.adf"}
    got = registry.with_discovered(known, tmp_path)
    assert list(got) == ["zeta", "adf", "alpha"]
    assert got["alpha"] == "adfkit._sources.alpha"
    sources = ROOT / "adfkit" / "_sources"
    packages = {p.parent.name for p in sources.glob("*/__init__.py")} - {"transcript"}
    assert set(registry.BUILTIN) == packages
    assert all(registry.spec(name).name == name for name in registry.BUILTIN)


def test_every_format_package_names_its_parts_by_the_template():
    """The naming pattern of docs/formats.md ("Adding a format"): the functions a SPEC points
    at are named for its fields (``claims``, ``open_session``, ``find``, ``list_sessions``,
    ``compaction_rule``, ``provider``, ``follow``, ``figures``...)."""
    import importlib

    fields = {"open": "open_session"}
    for name, module in registry.BUILTIN.items():
        spec = registry.spec(name)
        package = importlib.import_module(module)
        for field in ("claims", "open", "find", "list_sessions", "compaction_rule", "figures"):
            func = getattr(spec, field)
            if func is None or getattr(func, "__module__", "").startswith("adfkit._core"):
                continue  # the field's default
            want = fields.get(field, field)
            assert getattr(package, want, None) is func, (name, field, func.__name__)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        b"a",
        b"a\n",
        b"\xef\xbb\xbf{}\r\n\n  {}\nx",
        b"\n".join([b"{}"] * 60),
        b"{}\n" * 60,
    ],
)
def test_recognition_takes_the_first_50_complete_lines_of_the_head(data: bytes) -> None:
    from adfkit._core.probe import _first_lines

    for n in (0, 1, 2, 50):
        assert _first_lines(data, n) == data.split(b"\n", n)[:-1]
