"""Crafted Claude Code sessions and Codex rollouts (issue 24): special files, listings that must
stay linear, memory bounded by the decompression cap, token counts that are not counts, byte-order
marks, cut zstd frames, timestamps, secrets, control characters, colliding report names and
sessions without a model call. Each case is built here, in ``tmp_path``; ROBUSTNESS.md lists them.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tracemalloc
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import zstandard
from conftest import fingerprint
from test_claude_code import Log, text
from test_codex import SID as CODEX_SID
from test_codex import Roll, basic

import adfkit
from adfkit import cli
from adfkit._base.terminal import printable
from adfkit._sources.claude_code import listing as cc_listing
from adfkit._sources.claude_code.listing import list_claude_code_sessions
from adfkit._sources.claude_code.parser import parse_claude_code
from adfkit._sources.codex.listing import list_codex_sessions
from adfkit._sources.codex.parser import parse_codex
from adfkit._sources.transcript.kit import LINE_CHARGE

SID = "11111111-2222-3333-4444-555555555555"


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail (instead of hanging the run) when the test blocks longer than 20 s: an ``open`` of a
    FIFO without a writer blocks until one comes."""

    def boom(*_a: Any) -> None:
        raise TimeoutError("blocked (a FIFO opened for reading waits for a writer)")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def session(log: Log | None = None, n: int = 2) -> Log:
    """A session of ``n`` prompt/answer pairs."""
    log = log or Log()
    parent = None
    for i in range(n):
        log.user(f"u{i}", parent, f"prompt {i}")
        log.asst(f"a{i}", f"u{i}", f"msg_{i}", [text(f"answer {i}")], req=f"req_{i}")
        parent = f"a{i}"
    return log


def quiet(fn: Any, *a: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


# --- 1. special files ------------------------------------------------------------------------


def test_h65_fifo_as_session_subagent_legacy_agent_and_in_listings(
    tmp_path: Path, no_hang: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only regular files are opened: a FIFO as the session or rollout is a clear AdfError (and
    one CLI line), a FIFO in ``subagents/`` an error finding, a legacy ``agent-*.jsonl`` FIFO
    beside the session is not read, and listings name the FIFO in ``error``. Nothing blocks."""
    proj = tmp_path / "projects" / "-p"
    proj.mkdir(parents=True)
    fifo = proj / "22222222-2222-3333-4444-555555555555.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(adfkit.AdfError, match=r"is a named pipe \(FIFO\), not a regular file"):
        adfkit.open(fifo)
    with pytest.raises(adfkit.AdfError, match=r"named pipe"):
        parse_claude_code(fifo)
    assert cli.main(["info", str(fifo)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"adfkit: error: {fifo}: is a named pipe"), err

    main = session().write(proj / f"{SID}.jsonl")
    subs = proj / SID / "subagents"
    subs.mkdir(parents=True)
    os.mkfifo(subs / "agent-aaaa.jsonl")
    os.mkfifo(subs / "agent-aaaa.meta.json")
    os.mkfifo(proj / "agent-legacy.jsonl")
    before = fingerprint(tmp_path)
    t = parse_claude_code(main, warn=False)
    assert [r.role for r in t.rows] == ["user", "assistant"] * 2
    (sub,) = t.subagents  # the legacy FIFO is not this session's (its sessionId is unknown)
    assert sub.agent_id == "aaaa" and not sub.rows
    assert [(f.check, f.severity) for f in sub.findings] == [("not_transcript", "error")]
    assert "named pipe" in sub.findings[0].detail
    df = list_claude_code_sessions(tmp_path / "projects")
    by_name = {Path(p).name: e for p, e in zip(df.path, df.error, strict=True)}
    assert pd.isna(by_name[f"{SID}.jsonl"])
    assert "named pipe (FIFO)" in by_name[fifo.name]
    assert df.set_index("session_id").loc[SID, "n_subagents"] == 1

    codex = tmp_path / "codex" / "2026" / "03" / "14"
    codex.mkdir(parents=True)
    rfifo = codex / f"rollout-2026-03-14T09-00-00-{CODEX_SID}.jsonl"
    os.mkfifo(rfifo)
    zfifo = codex / "rollout-2026-03-14T10-00-00-x.jsonl.zst"
    os.mkfifo(zfifo)
    for f in (rfifo, zfifo):
        with pytest.raises(adfkit.AdfError, match=r"named pipe"):
            adfkit.open(f)
        with pytest.raises(adfkit.AdfError, match=r"named pipe"):
            parse_codex(f)
    cdf = list_codex_sessions(tmp_path / "codex")
    assert len(cdf) == 2 and all("named pipe (FIFO)" in e for e in cdf.error)
    assert fingerprint(tmp_path) == before


def test_h65_device_is_refused(no_hang: None) -> None:
    """``/dev/zero`` never ends: refused as a device before a byte is read."""
    with pytest.raises(adfkit.AdfError, match="is a device, not a regular file"):
        parse_codex(Path("/dev/zero"))


# --- 4. listings stay linear -----------------------------------------------------------------


def test_h66_listing_reads_each_legacy_agent_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``list_claude_code_sessions`` with ``n`` sessions and ``n`` legacy ``agent-*.jsonl`` files
    in one folder peeks each agent file once (``n`` reads), not once per session (``n**2``), and
    still counts each session's own."""
    proj = tmp_path / "-p"
    n = 6
    sids = [f"{i:08d}-2222-3333-4444-555555555555" for i in range(n)]
    for i, sid in enumerate(sids):
        session(Log(session=sid), 1).write(proj / f"{sid}.jsonl")
        for k in range(i % 3):  # session i has i % 3 legacy agents
            log = Log(session=sid, side=True, agent=f"{i}x{k}")
            log.user(f"s{i}{k}", None, "task")
            log.write(proj / f"agent-{i}x{k}.jsonl")
    calls: list[Path] = []
    real = cc_listing._first_session_id

    def counting(f: Path, max_lines: int = 50) -> str | None:
        calls.append(f)
        return real(f, max_lines)

    monkeypatch.setattr(cc_listing, "_first_session_id", counting)
    df = list_claude_code_sessions(tmp_path)
    n_agents = sum(i % 3 for i in range(n))
    assert len(calls) == n_agents == len(set(calls))
    assert dict(zip(df.session_id, df.n_subagents, strict=True)) == {
        sid: i % 3 for i, sid in enumerate(sids)
    }


# --- 5. the decompression cap bounds memory --------------------------------------------------


def tiny_line_bomb(root: Path, mb: int) -> Path:
    """A rollout of ``mb`` MiB of tiny lines (the worst case: every line costs Python objects),
    compressed to a few KB: the file ``make bench`` measures at three sizes."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import scale_transcripts

    return scale_transcripts.tiny_zst(root, mb)


def test_h67_zst_of_tiny_lines_is_held_within_the_cap(tmp_path: Path) -> None:
    """64 MiB of tiny lines in a 5 KB ``.jsonl.zst``, read with a 16 MiB cap: each line held
    counts as at least ``LINE_CHARGE`` bytes, so at most cap / 1 KiB lines are kept (not the
    ~96,000 the bytes allow) and Python's allocations peak below twice the cap plus 16 MiB
    (``tracemalloc``; measured 26 MiB, and 161 MiB for 99,271 rows before the per-line charge)."""
    bomb = tiny_line_bomb(tmp_path, 64)
    assert bomb.stat().st_size < 20_000
    cap = 16 << 20
    tracemalloc.start()
    try:
        t = quiet(parse_codex, bomb, max_decompressed_bytes=cap)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(t.rows) == cap // LINE_CHARGE - 1  # the cap's worth of lines, session_meta first
    assert "decompressed_size_cap" in {f.check for f in t.findings}
    assert peak < 2 * cap + (16 << 20), f"Python allocations peaked at {peak / 2**20:.0f} MiB"


# --- 7. token counts that are not counts ----------------------------------------------------


def open_warned(path: Path, *matches: str) -> Any:
    """``adfkit.open(path).source``, checking that its warnings are AdfWarnings saying each of
    ``matches`` (the reader's finding, the row rule's flag)."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        src = adfkit.open(path).source
    texts = [str(w.message) for w in got]
    assert all(issubclass(w.category, adfkit.AdfWarning) for w in got), texts
    assert len(texts) == len(matches), texts
    for m in matches:
        assert any(m in t for t in texts), (m, texts)
    return src


#: Values that are not token counts, each in one call's usage.
NOT_COUNTS = [-5, 1.5, "12", 1e300, 2**63 + 5, True]


def test_h71_token_counts_that_are_not_counts_are_na_and_flagged(tmp_path: Path) -> None:
    """A negative, fractional, text, 1e300, beyond-Int64 or bool count in a Claude Code usage or
    a Codex ``token_count``: that count is NA in ``calls()`` and ``history()`` (so is every sum
    holding it: ``input`` with a bad cache part, the row's total), the row is flagged malformed
    with a note, each call gives a ``bad_token_count`` finding; only clean counts are summed and
    ``calls()`` never raises."""
    log = Log()
    parent = None
    for i, v in enumerate([*NOT_COUNTS, 0]):
        log.user(f"u{i}", parent, f"q{i}")
        good = {"input_tokens": 3, "cache_read_input_tokens": 100, "output_tokens": 7}
        bad_key = ("input_tokens", "cache_read_input_tokens", "output_tokens")[i % 3]
        usage = {**good, bad_key: v} if i < len(NOT_COUNTS) else good
        log.asst(f"a{i}", f"u{i}", f"m{i}", [text("x")], usage=usage, req=f"r{i}")
        parent = f"a{i}"
    cc = log.write(tmp_path / f"{SID}.jsonl")
    src = open_warned(cc, "not a token count", "6 row(s) with unreadable tokens")
    calls = src.calls()
    assert calls.tokens_input.tolist()[:6] == [pd.NA, pd.NA, 103, pd.NA, pd.NA, 103]
    assert calls.tokens_output.tolist() == [7, 7, pd.NA, 7, 7, pd.NA, 7]
    assert calls.tokens_cache_read.tolist() == [100, pd.NA, 100, 100, pd.NA, 100, 100]
    assert int(calls.tokens_input.sum()) == 3 * 103 and int(calls.tokens_output.sum()) == 5 * 7
    h = src.history()
    asst = h[h.role == "assistant"]
    assert asst.malformed.tolist() == [True] * 6 + [False]
    assert asst.tokens_total.isna().tolist() == [True] * 6 + [False]
    assert asst.tokens_total.iloc[-1] == 110
    t = parse_claude_code(cc, warn=False)
    assert [f.line for f in t.findings if f.check == "bad_token_count"] == [2, 4, 6, 8, 10, 12]

    r = Roll()
    r.meta()
    r.ctx()
    total = 0
    for i, v in enumerate([*NOT_COUNTS, 0]):
        r.msg("user", f"q{i}")
        r.msg("assistant", f"a{i}")
        total += 110
        last = {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 10}
        if i < len(NOT_COUNTS):
            last[("input_tokens", "output_tokens")[i % 2]] = v
        tot = {"input_tokens": total, "output_tokens": 0, "total_tokens": total}
        info = {"total_token_usage": tot, "last_token_usage": last, "model_context_window": 1000}
        r.add("event_msg", {"type": "token_count", "info": info})
    cx = r.write(tmp_path / f"rollout-2026-03-14T09-00-00-{CODEX_SID}.jsonl")
    src = open_warned(cx, "not a token count", "6 row(s) with unreadable tokens")
    calls = src.calls()
    assert calls.tokens_input.isna().tolist() == [True, False] * 3 + [False]
    assert calls.tokens_output.isna().tolist() == [False, True] * 3 + [False]
    assert int(calls.tokens_input.sum()) == 4 * 100 and int(calls.tokens_output.sum()) == 4 * 10
    asst = src.history().query("role == 'assistant'")
    assert asst.malformed.tolist() == [True] * 6 + [False]
    assert asst.tokens_total.isna().tolist() == [True] * 6 + [False]

    # the counts a compaction records, by the same rule
    log = session(n=1)
    md = {"trigger": "auto", "preTokens": 2**63 + 5, "postTokens": -3}
    log.system("b1", None, "compact_boundary", logicalParentUuid="a0", compactMetadata=md)
    log.user("s1", "b1", "Summary", isCompactSummary=True)
    (ev,) = parse_claude_code(log.write(tmp_path / "c" / f"{SID}.jsonl"), warn=False).events
    assert ev.kind == "compaction" and ev.pre_tokens is None and ev.post_tokens is None


# --- 8. byte-order marks, cut zstd frames ----------------------------------------------------


def test_h68_zst_cut_mid_frame_keeps_the_complete_frames(tmp_path: Path) -> None:
    """A rollout written as three zstd frames and cut in the middle of the last: the first two
    frames' lines are read, with a ``zstd_cut`` warning finding and one AdfWarning; a one-frame
    file cut anywhere reads no line but says why (it did neither)."""
    r = Roll()
    basic(r)
    plain = r.write(tmp_path / "plain" / f"rollout-2026-03-14T09-00-00-{CODEX_SID}.jsonl")
    lines = plain.read_bytes().splitlines(keepends=True)
    c = zstandard.ZstdCompressor()
    frames = [c.compress(b"".join(lines[a:b])) for a, b in ((0, 6), (6, 12), (12, len(lines)))]
    z = tmp_path / "z" / (plain.name + ".zst")
    z.parent.mkdir()
    z.write_bytes(frames[0] + frames[1] + frames[2][: len(frames[2]) // 2])
    whole = parse_codex(plain, warn=False)
    with pytest.warns(adfkit.AdfWarning, match="ends inside a frame"):
        t = parse_codex(z)
    assert [r.line for r in t.rows] == [r.line for r in whole.rows if r.line <= 12]
    assert [(f.check, f.severity) for f in t.findings] == [("zstd_cut", "warning")]
    assert "2 complete frame(s)" in t.findings[0].detail
    one = tmp_path / "z" / "rollout-one.jsonl.zst"
    one.write_bytes(c.compress(plain.read_bytes())[:-9])
    with pytest.warns(adfkit.AdfWarning, match="ends inside a frame"):
        parse_codex(one)


def test_h69_byte_order_mark_keeps_the_first_record(tmp_path: Path) -> None:
    """A UTF-8 byte-order mark before the first record: Claude Code keeps its first prompt,
    Codex its ``session_meta`` (``cli_version``, ``git_branch`` in ``meta()``), listings and
    ``adfkit.open`` see the same, and nothing is flagged."""
    bom = b"\xef\xbb\xbf"
    cc = session().write(tmp_path / "cc" / f"{SID}.jsonl")
    cc.write_bytes(bom + cc.read_bytes())
    t = parse_claude_code(cc, warn=False)
    assert [r.uuid for r in t.rows] == ["u0", "a0", "u1", "a1"] and not t.findings
    assert t.rows[0].content == [{"type": "text", "text": "prompt 0"}]
    assert quiet(list_claude_code_sessions, tmp_path / "cc").cwd.tolist() == ["/home/u/proj"]
    r = Roll()
    basic(r)
    plain = r.write(tmp_path / "cx" / f"rollout-2026-03-14T09-00-00-{CODEX_SID}.jsonl")
    want = parse_codex(plain, warn=False)
    plain.write_bytes(bom + plain.read_bytes())
    zst = plain.with_name(plain.name + ".zst")
    zst.write_bytes(zstandard.ZstdCompressor().compress(bom + r.lines[0] + b"\n"))
    c = parse_codex(plain, warn=False)
    assert c.rows == want.rows and not c.findings
    assert c.meta["cli_version"] == "0.77.0" and c.meta["git_branch"] == "main"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        meta = adfkit.open(plain).meta()
    assert meta["cli_version"] == "0.77.0" and meta["git_branch"] == "main"
    z = parse_codex(zst, warn=False)
    assert z.meta["cli_version"] == "0.77.0" and z.session_id == CODEX_SID
    assert list_codex_sessions(tmp_path / "cx").cli_version.tolist() == ["0.77.0"]


# --- 9. timestamps ---------------------------------------------------------------------------

#: ISO-8601 forms with a zone and the instant each one is (2026-03-01T10:00:0Ns UTC).
TIMES = {
    "2026-03-01T10:00:00Z": 0,
    "2026-03-01T12:00:01+02:00": 1,
    "2026-03-01T08:30:02-0130": 2,
    "2026-03-01 10:00:03Z": 3,
    "2026-03-01t10:00:04.25z": 4.25,
    "2026-03-01T11:00:05+01": 5,
    " 2026-03-01T10:00:06.123456789Z ": 6.123,
    "2026-03-01T10:00:07,5Z": 7.5,
}
BASE_MS = 1_772_359_200_000


def test_h70_iso_timestamps_in_other_forms_read(tmp_path: Path) -> None:
    """Offsets, no fraction, a space, lower case, a comma, nine digits, blanks: every form is the
    instant it names, in Claude Code rows and Codex rows alike; ``24:00`` is the next midnight; a
    time without a zone stays unknown (NaT), never a guessed zone."""
    forms = list(TIMES)
    log = Log()
    parent = None
    for i, ts in enumerate(forms):
        log.user(f"u{i}", parent, f"q{i}")
        log.recs[-1]["timestamp"] = ts
        parent = f"u{i}"
    log.user("naive", parent, "no zone")
    log.recs[-1]["timestamp"] = "2026-03-01T10:00:08"
    log.user("eod", "naive", "end of day")
    log.recs[-1]["timestamp"] = "2026-02-28T24:00:00Z"
    t = parse_claude_code(log.write(tmp_path / f"{SID}.jsonl"), warn=False)
    want = [BASE_MS + round(v * 1000) for v in TIMES.values()]
    assert [r.created_at for r in t.rows] == [*want, None, BASE_MS - 10 * 3600 * 1000]
    r = Roll()
    for i, ts in enumerate(forms):
        r.msg("user", f"q{i}")
        o = json.loads(r.lines[-1])
        o["timestamp"] = ts
        r.lines[-1] = json.dumps(o).encode()
    c = parse_codex(
        r.write(tmp_path / f"rollout-2026-03-14T09-00-00-{CODEX_SID}.jsonl"), warn=False
    )
    assert [x.created_at for x in c.rows] == want


# --- 10. secrets: the one rule on every text column and report -------------------------------

GH_TOKEN = "ghp_" + "F4KE" * 9
JWT = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiJGQUtFRkFLRSJ9." + "c2lnbmF0dXJlRkFLRUZBS0U"
RSA_BODY = "MIIEFAKERSABODY" + "A1b2C3d4" * 40
SSH_BODY = "b3BlbnNzaC1GQUtFa2V5" + "Zz9Yy8Xx" * 30


def _secret_session(tmp_path: Path) -> tuple[Path, Path]:
    """A Claude Code session with a GitHub token in a compaction's ``userContext``, a JWT as
    ``"access_token": "..."`` and an RSA key straddling the 4,000-character clip in tool
    output; a Codex rollout with an OpenSSH key in a JSON-string tool output (escaped
    newlines)."""
    log = Log()
    log.user("u1", None, "log in")
    log.asst("a1", "u1", "m1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}])
    log.result("r1", "a1", "t1", json.dumps({"access_token": JWT, "expires_in": 3600}))
    log.asst("a2", "r1", "m2", [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}])
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{RSA_BODY}\n-----END RSA PRIVATE KEY-----"
    log.result("r2", "a2", "t2", "x" * (4000 - 100) + pem)
    log.asst("a3", "r2", "m3", [text("ok")], req="r3")
    log.system(
        "b1",
        None,
        "compact_boundary",
        logicalParentUuid="a3",
        compactMetadata={"trigger": "manual", "userContext": f"use {GH_TOKEN} for the push"},
    )
    log.user("s1", "b1", "Summary of the session", isCompactSummary=True)
    log.user("u2", "s1", "go on")
    log.asst("a4", "u2", "m4", [text("done")], req="r4")
    cc = log.write(tmp_path / "in-cc" / f"{SID}.jsonl")
    r = Roll()
    basic(r)
    key = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SSH_BODY}\n-----END OPENSSH PRIVATE KEY-----\n"
    r.fout("c1", json.dumps({"output": key, "metadata": {"exit_code": 0}}))
    cx = r.write(tmp_path / "in-cx" / f"rollout-2026-03-14T09-00-00-{CODEX_SID}.jsonl")
    return cc, cx


SECRETS = (GH_TOKEN, JWT, RSA_BODY[:40], SSH_BODY[:40])


def test_h72_secrets_in_every_text_column_and_report(tmp_path: Path) -> None:
    """``export --redact`` leaves no secret in any table (the ``instructions`` column of
    ``compactions.parquet`` included: every text column goes through the one secret rule); an
    HTML report shows no JWT in ``"access_token": "..."`` form, no piece of an RSA key the
    4,000-character clip would cut (the cut moves before it), no OpenSSH key written inside a
    JSON string."""
    from adfkit._base.redact import redact_frame, redact_text
    from adfkit.report import write_report

    cc, cx = _secret_session(tmp_path)
    compactions = quiet(lambda: adfkit.open(cc).compactions())
    assert GH_TOKEN in compactions.instructions.iloc[0]  # read as written...
    assert GH_TOKEN not in redact_frame(compactions).to_string()  # ...and redacted on export
    odd = pd.DataFrame({"note": [f"pushed with {GH_TOKEN}", None], "n": [1, 2]})
    assert redact_frame(odd).note.tolist()[0] == "pushed with __redacted__"
    out = tmp_path / "export"
    written, errors = quiet(adfkit.export, [str(cc), str(cx)], out, redact=True, progress=False)
    assert errors.empty and len(written)
    blob = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    for secret in SECRETS:
        assert secret.encode() not in blob, secret[:12]
    assert redact_text(json.dumps({"access_token": JWT})) == '{"access_token": "__redacted__"}'
    nb = _tiny_notebook(
        tmp_path,
        "import adfkit.widgets\nfrom IPython.display import HTML",
        "HTML(adfkit.widgets.rows_html(adfkit.open(AGENT).history()))",
    )
    for src in (cc, cx):
        html = write_report(src, tmp_path / f"{src.parent.name}.html", notebook=str(nb))
        text_ = html.read_text()
        assert "more characters" in text_ or src == cx
        for secret in SECRETS:
            assert secret not in text_, (src.name, secret[:12])


def _cell(source: str, tags: list[str] | None = None) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": f"c{abs(hash(source)) % 10**8}",
        "metadata": {"tags": tags or []},
        "outputs": [],
        "source": source,
    }


# --- 11. control characters never reach the terminal raw -------------------------------------

CONTROLS = "\x1b[2J\x07\x08\x9b31m\u202e"


def test_h73_control_characters_in_plot_output_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Codex rollout whose file name and text hold ESC, BEL, backspace, a C1 CSI and an RTL
    override: every line ``adfkit plot`` prints (one kind, ``--kind all``) shows them as escapes
    (``printable``); the PNG names hold no C0 control (``safe_name``, as one plot is named)."""
    r = Roll()
    basic(r)
    r.msg("user", f"hello {CONTROLS} world")
    name = f"rollout-2026-03-14T09-00-00-{CODEX_SID}{CONTROLS}.jsonl"
    src = r.write(tmp_path / "in" / name)
    out = tmp_path / f"plots{CONTROLS}"
    for argv in (
        ["plot", str(src), "--kind", "all", "-o", str(out)],
        ["plot", str(src), "--kind", "context", "-o", str(out / "one.png")],
    ):
        assert cli.main(argv) == 0, capsys.readouterr().err
        got = capsys.readouterr()
        lines = (got.out + got.err).splitlines()
        assert lines and all(printable(x) == x for x in lines), lines
        assert all("\\x1b" in x for x in got.out.splitlines()), got.out  # the folder's ESC
    names = [p.name for p in out.iterdir()]
    assert len(names) == 7 and not any(c in n for n in names for c in "\x1b\x07\x08"), names


# --- 12. report names never collide ----------------------------------------------------------


def test_h74_reports_of_two_sessions_with_one_uuid_get_two_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``adfkit report`` of the same session uuid from two project folders into one folder
    writes two files (``<uuid>-report.html``, ``<uuid>-2-report.html``: ``unique_names``, as
    export names its folders), each the report of its own session; the inputs are untouched."""
    a = session(n=1).write(tmp_path / "projects" / "-a" / f"{SID}.jsonl")
    b = session(Log(), n=2).write(tmp_path / "projects" / "-b" / f"{SID}.jsonl")
    nb = _tiny_notebook(tmp_path, "print(len(adfkit.open(AGENT).history()), 'rows')")
    before = fingerprint(tmp_path / "projects")
    out = tmp_path / "reports"
    assert cli.main(["report", str(a), str(b), "-o", str(out), "--notebook", str(nb)]) == 0
    printed = capsys.readouterr().out.splitlines()
    names = sorted(p.name for p in out.iterdir())
    assert names == [f"{SID}-2-report.html", f"{SID}-report.html"]
    assert [Path(x).name for x in printed] == [f"{SID}-report.html", f"{SID}-2-report.html"]
    assert "2 rows" in (out / f"{SID}-report.html").read_text()
    assert "4 rows" in (out / f"{SID}-2-report.html").read_text()
    assert fingerprint(tmp_path / "projects") == before


def _tiny_notebook(tmp_path: Path, *sources: str) -> Path:
    nb = tmp_path / "nb" / "t.ipynb"
    nb.parent.mkdir(exist_ok=True)
    cells = [_cell('AGENT = "x"', ["parameters"]), _cell("import adfkit")]
    cells += [_cell(s) for s in sources]
    kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    doc = {"cells": cells, "metadata": kernel, "nbformat": 4, "nbformat_minor": 5}
    nb.write_text(json.dumps(doc))
    return nb


# --- 13. a session with no model call yet ----------------------------------------------------


def test_h75_no_model_call_yet_plots_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session whose first prompt has no answer yet (Claude Code and Codex): the window plot
    is an empty plot saying there is no model call yet (no raw ValueError), ``adfkit plot``
    writes it and every kind of ``--kind all``; ``--seq`` of a call that cannot exist is one
    ``adfkit: error:`` line."""
    from adfkit import plots

    log = Log()
    log.user("u0", None, "first prompt")
    cc = log.write(tmp_path / "cc" / f"{SID}.jsonl")
    r = Roll()
    r.meta()
    r.ctx()
    r.msg("user", "first prompt")
    cx = r.write(tmp_path / "cx" / f"rollout-2026-03-14T09-00-00-{CODEX_SID}.jsonl")
    for src in (cc, cx):
        with adfkit.open(src) as agent:
            ax = plots.composition_at(agent)
            assert "no model call yet" in " ".join(t.get_text() for t in ax.texts)
            plots.close(ax)
        out = tmp_path / f"out-{src.parent.name}"
        assert cli.main(["plot", str(src), "--kind", "window", "-o", str(out / "w.png")]) == 0
        assert cli.main(["plot", str(src), "--kind", "all", "-o", str(out)]) == 0
        assert len(list(out.glob("*.png"))) == 1 + len(plots.PLOTS)
        capsys.readouterr()
        argv = ["plot", str(src), "--kind", "window", "--seq", "1", "-o", str(out / "s.png")]
        assert cli.main(argv) == 2
        err = capsys.readouterr().err.splitlines()
        assert err == ["adfkit: error: seq 1 is not a model call: there is no model call yet"]
