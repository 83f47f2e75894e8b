"""Inspect AI ``.eval`` logs: the real fixtures, the adfsynth logs and hostile zips.

Every expected figure is computed here, independently of adfkit, from the zip itself (plain
``zipfile`` for the central directory, ``zstandard`` for method-93 members, ``json``): samples,
messages, model events, token sums, compaction events and the size of each compaction's sweep
as Inspect's own ``metadata.messages_before``/``messages_after`` state it; for the adfsynth
logs, from the simulator's ``truth.json``.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard

import adfkit
from adfkit._analysis.observe import default_taxonomy
from adfkit._analysis.replay import replay_state
from adfkit._base.errors import AdfError, NotTranscriptError
from adfkit._sources.inspect_eval import claims_file as claims
from adfkit._sources.inspect_eval import parser as parser_mod
from adfkit._sources.inspect_eval.source import EvalLog, list_eval_logs, open_eval
from adfkit._sources.inspect_eval.zipread import EvalLogError, MemberTooLargeError
from adfsynth.inspect_eval import write_samples, write_zip
from tests.conftest import fingerprint

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "inspect-eval"
SAMPLES = ROOT / "sample_agents" / "inspect"
POPULARITY = "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
REAL = ["log_formats.eval", "log_message_deduplication.eval", POPULARITY]
GENERATED = ["generated-summary.eval", "generated-trim.eval"]


def fixture(name: str) -> Path:
    p = FIXTURES / name
    if not p.exists():
        pytest.skip(f"Inspect fixture {p} not present (../shared is absent in a user's clone)")
    return p


# --- the oracle: the zip read by hand -------------------------------------------------------


def member_bytes(path: Path, name: str) -> bytes:
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(name)
        if info.compress_type != 93:
            return z.read(name)
    raw = path.read_bytes()
    n, m = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
    start = info.header_offset + 30 + n + m
    return (
        zstandard.ZstdDecompressor()
        .decompressobj()
        .decompress(raw[start : start + info.compress_size])
    )


def samples_of(path: Path) -> dict[str, dict[str, Any]]:
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if n.startswith("samples/")]
    return {n: json.loads(member_bytes(path, n)) for n in names}


def expected(sample: dict[str, Any]) -> dict[str, Any]:
    """What one sample holds, counted from its JSON."""
    models = [e for e in sample["events"] if e["event"] == "model"]
    comps = [e for e in sample["events"] if e["event"] == "compaction"]
    tok = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    for e in models:
        u = e["output"].get("usage") or {}
        cr, cw = u.get("input_tokens_cache_read") or 0, u.get("input_tokens_cache_write") or 0
        tok["input"] += u.get("input_tokens", 0) + cr + cw
        tok["output"] += u.get("output_tokens", 0)
        tok["cache_read"] += cr
        tok["cache_write"] += cw
    summaries = [
        i + 1
        for i, m in enumerate(sample["messages"])
        if (m.get("metadata") or {}).get("summary") is True
    ]
    return {
        "messages": len(sample["messages"]),
        "model_events": len(models),
        "tokens": tok,
        "compactions": [
            (e["type"], e["tokens_before"], e["tokens_after"], e["metadata"]) for e in comps
        ],
        "summaries": summaries,
    }


def by_member(log: EvalLog) -> dict[str, Any]:
    return {src.parsed.meta["member"]: src for src in log}


def quiet_open(path: Path, **kw: Any) -> EvalLog:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log = open_eval(path, **kw)
        list(log)
    return log


# --- real and generated fixtures ------------------------------------------------------------


@pytest.mark.parametrize("name", REAL + GENERATED)
def test_fixture_tables_match_the_zip(name: str) -> None:
    path = fixture(name)
    truth = samples_of(path)
    log = quiet_open(path)
    assert len(log) == len(truth)
    got = by_member(log)
    assert set(got) == set(truth)
    for member, sample in truth.items():
        exp = expected(sample)
        src = got[member]
        h = src.history()
        assert len(h) == exp["messages"]
        c = src.calls()
        assert len(c) == exp["model_events"]
        assert {k: int(c[f"tokens_{k}"].fillna(0).sum()) for k in exp["tokens"]} == exp["tokens"]
        assert h.loc[h["kind"] == "compaction_summary", "seq"].tolist() == exp["summaries"]
        a = adfkit.AgentFile(src)
        comp = a.compactions()
        assert len(comp) == len(exp["compactions"])
        for row, (kind, before, after, md) in zip(
            comp.itertuples(), exp["compactions"], strict=True
        ):
            assert row.recorded_tokens_before == before
            assert row.recorded_tokens_after == after
            assert row.kind == {"threshold": "auto", "forced": "manual"}[md["trigger"]]
            # Inspect's own count of the window before and after: the sweep's size
            summary = 1 if kind == "summary" else 0
            assert row.n_swept == md["messages_before"] - (md["messages_after"] - summary)
            assert (row.summary_seq is not None and not _na(row.summary_seq)) == (kind == "summary")
            assert not row.summary_lost
        assert len(src.storage_report().findings) == 0


def _na(v: Any) -> bool:
    try:
        return bool(v != v) or v is None or str(v) == "<NA>"
    except TypeError:
        return True


def test_fixture_figures_by_hand() -> None:
    """A few figures read off the files once by hand (not computed by adfkit)."""
    log = quiet_open(fixture("generated-summary.eval"))
    s1 = log[0]
    assert s1.name == "1_epoch_1"
    h = s1.history()
    assert len(h) == 33
    assert h["seq"][h["kind"] == "compaction_summary"].tolist() == [9, 16, 23, 30]
    # the first call: input_tokens 234 + cache read 150 + cache write 40
    assert int(h.loc[h["seq"] == 3, "tokens_input"].iloc[0]) == 424
    # the summarizer (2599 + 150 + 40) is on the first summary row
    assert int(h.loc[h["seq"] == 9, "tokens_input"].iloc[0]) == 2789
    ch = s1.window_changes()
    assert ch[0].swept == (3, 4, 5, 6, 7, 8) and ch[0].kept == (1, 2)
    trim = quiet_open(fixture("generated-trim.eval"))[0]
    assert trim.window_changes()[0].swept == (3, 4, 5, 6)
    assert trim.window_changes()[0].kept == (1, 2, 7, 8)
    pop = quiet_open(fixture(POPULARITY))
    assert [s for s, _ in pop.ids()] == [str(i) for i in range(1, 11)]


def _exact_windows(sample: dict[str, Any]) -> dict[int, tuple[int, ...]]:
    """Seqs of each agent call's input, from the pool by hand: the input message's position in
    ``sample.messages`` by id, but a summary message is the latest summary before the call
    (Inspect's pool keeps one copy of identical summaries, under the first one's id), and the
    output's position is the call's seq. The system message (context) is left out, as in
    replay()'s window."""
    msgs = sample["messages"]
    pos = {m.get("id"): i + 1 for i, m in enumerate(msgs)}
    pool = (sample.get("events_data") or {}).get("messages") or sample.get("message_pool") or []
    out = {}
    for e in sample["events"]:
        if e["event"] != "model" or not e.get("tools"):
            continue
        call = pos[e["output"]["choices"][0]["message"]["id"]]
        inp = e["input"] or [pool[i] for a, b in e["input_refs"] for i in range(a, b)]
        seqs = []
        for m in inp:
            if m["role"] == "system":
                continue
            if (m.get("metadata") or {}).get("summary"):
                q = max(
                    i + 1
                    for i, x in enumerate(msgs[: call - 1])
                    if (x.get("metadata") or {}).get("summary")
                )
            else:
                q = pos[m["id"]]
            seqs.append(q)
        out[call] = tuple(seqs)
    return out


@pytest.mark.parametrize("name", [*GENERATED, "log_message_deduplication.eval"])
def test_replay_window_is_the_recorded_input(name: str) -> None:
    """The window replay() walks to at every call is the input the file stores for it."""
    path = fixture(name)
    truth = samples_of(path)
    for member, src in by_member(quiet_open(path)).items():
        exact = _exact_windows(truth[member])
        st = replay_state(src)
        assert {q: st.window(q) for q in st.calls} == exact


def test_usage_marks_the_summarizer_calls() -> None:
    path = fixture("generated-summary.eval")
    sample = samples_of(path)["samples/1_epoch_1.json"]
    summarizers = [
        e for e in sample["events"] if e["event"] == "model" and not e.get("tools")
    ]  # each one right before a compaction in this file
    u = adfkit.AgentFile(quiet_open(path)[0]).usage(
        prices={"mockllm/model": {"input": 1.0, "output": 1.0}}
    )
    comp = u[u["call_kind"] == "compaction"]
    assert len(comp) == len(summarizers) == 4
    assert comp["tokens_cache_read"].sum() == sum(
        e["output"]["usage"]["input_tokens_cache_read"] for e in summarizers
    )


def test_listing_parses_no_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = parser_mod.parse_sample

    def counting(obj: Any, **kw: Any) -> Any:
        parsed.append(kw["member"])
        return real(obj, **kw)

    monkeypatch.setattr("adfkit._sources.inspect_eval.source.parse_sample", counting)
    log = open_eval(fixture(POPULARITY))
    assert len(log) == 10
    assert log.samples()["sample_id"].tolist() == [str(i) for i in range(1, 11)]
    assert log.samples()["compression"].unique().tolist() == ["deflate"]
    assert parsed == []
    assert log[log.index_of(7)].parsed.meta["sample_id"] == "7"
    assert log[6] is log[log.index_of("7", 1)]
    assert parsed == ["samples/7_epoch_1.json"]


def test_a_sample_without_compaction_costs_nothing_in_the_compaction_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 38: ``compactions()`` of a sample that has no compaction is the empty table
    without the replay walk (the per-sample cost that made a log of many such samples slow);
    a sample with compactions still walks, once."""
    from adfkit._analysis import compactions as compactions_mod

    walked: list[str] = []
    real = compactions_mod.replay_state

    def counting(src: Any) -> Any:
        walked.append(src.name)
        return real(src)

    monkeypatch.setattr(compactions_mod, "replay_state", counting)
    with adfkit.open(fixture(POPULARITY)) as log:
        for agent in log:
            assert agent.compactions().empty
    assert walked == []
    with adfkit.open(fixture("generated-summary.eval")) as log:
        assert len(log[0].compactions()) == 4
    assert walked  # the sample with compactions: the walk, as before


def test_opening_a_sample_builds_one_row_frame_not_a_second_for_no_branches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 38: a sample's history is one frame of rows; its abandoned branches (an Inspect
    sample has none) are the one empty frame every such source shares, not a frame built per
    sample, and still the columns of a branches table."""
    from adfkit._sources.transcript import source as transcript_source

    built: list[int] = []
    real = transcript_source._rows_frame

    def counting(rows: Any, *a: Any) -> Any:
        built.append(len(rows))
        return real(rows, *a)

    monkeypatch.setattr(transcript_source, "_rows_frame", counting)
    log = quiet_open(fixture(POPULARITY))
    for s in log:
        b = s.branches()
        assert b.empty and "branch" in b.columns and b["branch"].dtype == "string"
    assert len([n for n in built if n]) == 10  # each sample's rows
    assert built.count(0) <= 1  # the shared empty frame, made once a process


def test_a_sample_s_settings_are_found_once_for_every_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 38: the tables that need the threshold (compactions, integrity, the audit of
    each compaction, simulate) ask for the settings again and again; a sample finds them
    once, and each caller gets a record of its own (changing one changes no other)."""
    from adfkit._sources.transcript.source import TranscriptSource

    found: list[str] = []
    real = TranscriptSource.settings

    def counting(self: Any) -> Any:
        found.append(self.name)
        return real(self)

    monkeypatch.setattr(TranscriptSource, "settings", counting)
    with adfkit.open(fixture("generated-summary.eval")) as log:
        agent = log[0]
        agent.compactions()
        agent.integrity()
        agent.compaction_audit()
        adfkit.simulate(agent, adfkit.ThresholdPolicy())
        first = agent.source.settings()
        first.audit["loop"] = False
        assert agent.source.settings().audit["loop"] is True
        assert first.compact_threshold == 1200
    assert len(found) == 1


def test_settings_read_the_recorded_threshold() -> None:
    s = quiet_open(fixture("generated-trim.eval"))[0]
    st = s.settings()
    assert st.compact_threshold == 1200  # header.plan: CompactionTrim(threshold=1200)
    assert st.threshold_source == "configured" and "header.plan" in (st.threshold_rule or "")
    assert (st.model, st.provider) == ("mockllm/model", "mockllm")
    assert s.config()["context"]["compact_threshold"] == 1200
    assert s.info()["tool_version"] == "0.3.285"
    old = quiet_open(fixture("log_formats.eval"))[0].settings()
    assert old.compact_threshold is None and old.threshold_source is None
    assert old.provider == "ollama"


# --- adfsynth logs --------------------------------------------------------------------------


def _truths() -> list[Path]:
    return sorted(SAMPLES.glob("*.truth.json"))


def test_samples_are_regenerated_byte_for_byte(tmp_path: Path) -> None:
    out = write_samples(tmp_path)
    committed = sorted(p.name for p in SAMPLES.iterdir())
    assert committed == sorted(p.name for p in out.iterdir())
    for name in committed:
        assert (out / name).read_bytes() == (SAMPLES / name).read_bytes(), name


@pytest.mark.parametrize("truth_file", _truths(), ids=lambda p: p.name.split("_")[-1])
def test_synth_matches_its_truth(truth_file: Path) -> None:
    t = json.loads(truth_file.read_text())
    path = SAMPLES / t["file"]
    with zipfile.ZipFile(path) as z:
        assert {i.compress_type for i in z.infolist()} == {93}
    log = quiet_open(path)
    got = by_member(log)
    assert len(log) == len(t["samples"])
    for s in t["samples"]:
        src = got[s["member"]]
        assert src.parsed.meta["sample_id"] == s["sample_id"]
        h = src.history()
        assert len(h) == s["n_messages"]
        c = src.calls()
        assert len(c) == s["n_model_events"]
        assert {k: int(c[f"tokens_{k}"].sum()) for k in s["tokens"]} == s["tokens"]
        changes = src.window_changes()
        assert len(changes) == len(s["compactions"])
        ev = src.events()
        for j, (ch, tc) in enumerate(zip(changes, s["compactions"], strict=True)):
            assert ch.tokens_before == tc["tokens_before"]
            assert ch.tokens_after == tc["tokens_after"]
            if tc["type"] == "edit":
                assert ev["event"][j] == "microcompaction"
                assert ch.cleared == tuple(tc["cleared"]) and ch.swept == ()
                assert ch.stub_chars == len("(tool result removed)")
            else:
                assert ev["event"][j] == "compaction"
                assert ch.swept == tuple(tc["swept"])
                assert ch.kept == tuple(tc["kept"])
                summary = ev["summary_seq"][j]
                assert (None if _na(summary) else int(summary)) == tc["summary_seq"]
                assert not bool(ev["summary_lost"][j])
        ctx = set(h.loc[h["kind"] == "context", "seq"].tolist())
        exact = {
            c["seq"]: tuple(q for q in c["input_seqs"] if q is not None and q not in ctx)
            for c in s["calls"]
            if c["seq"] is not None and h.loc[h["seq"] == c["seq"], "role"].iloc[0] == "assistant"
        }
        st = replay_state(src)
        assert {q: st.window(q) for q in st.calls} == exact
        inputs = src.call_inputs()
        assert {q: tuple(x for x in v if x not in ctx) for q, v in inputs.items()} == exact
        assert all(v[0] == 1 for v in inputs.values())  # the system message, a context row
        assert len(src.storage_report().findings) == 0


def test_synth_observe_uses_the_inspect_taxonomy() -> None:
    tax = default_taxonomy("inspect_eval")
    assert tax["tools"]["bash"] == "world" and tax["tools"]["think"] == "bookkeeping"
    path = next(SAMPLES.glob("*summary.eval"))
    sample = samples_of(path)["samples/1_epoch_1.json"]
    names = [tc["function"] for m in sample["messages"] for tc in m.get("tool_calls") or []]
    src = next(s for s in quiet_open(path) if s.parsed.meta["member"] == "samples/1_epoch_1.json")
    obs = adfkit.AgentFile(src).observe()
    got = obs.calls["class"].value_counts().to_dict()
    want: dict[str, int] = {}
    for n in names:
        k = {"think": "bookkeeping"}.get(n, "world")  # bash, python, text_editor, submit
        want[k] = want.get(k, 0) + 1
    assert got == want


# --- recognition ----------------------------------------------------------------------------


def test_claims_only_eval_zips() -> None:
    head = fixture("generated-summary.eval").read_bytes()[:4096]
    assert claims(Path("a.eval"), False, head)
    assert not claims(Path("a.zip"), False, head)
    assert not claims(Path("a.eval"), True, b"")
    assert not claims(Path("a.eval"), False, b"PK\x03\x04 some other zip")
    assert claims(Path("a.eval"), False, b"not a zip")  # by name: the reader says why


# --- hostile --------------------------------------------------------------------------------


def _zip(path: Path, members: list[tuple[str, bytes]], method: int = 93) -> Path:
    write_zip(path, members, method=method)
    return path


HEADER = json.dumps({"version": 2, "eval": {"task": "t", "model": "m/x"}}).encode()


def _sample_json(**extra: Any) -> bytes:
    s = {
        "id": 1,
        "epoch": 1,
        "messages": [
            {"id": "u1", "role": "user", "content": "hi"},
            {"id": "a1", "role": "assistant", "content": "hello"},
        ],
        "events": [
            {
                "event": "model",
                "timestamp": "2026-06-01T08:00:00+00:00",
                "input": [],
                "input_refs": [[0, 1]],
                "tools": [],
                "output": {
                    "choices": [{"message": {"id": "a1", "role": "assistant", "content": "hello"}}],
                    "usage": {"input_tokens": 5, "output_tokens": 2},
                },
            }
        ],
        "events_data": {"messages": [{"id": "u1", "role": "user", "content": "hi"}]},
        "attachments": {},
    }
    s.update(extra)
    return json.dumps(s).encode()


def test_zip_bomb_declared_size_refused(tmp_path: Path) -> None:
    data = b"\0" * (4 << 20)
    p = _zip(tmp_path / "b.eval", [("header.json", HEADER), ("samples/1_epoch_1.json", data)])
    log = open_eval(p, max_member_bytes=1 << 20)
    with pytest.raises(MemberTooLargeError, match=r"samples/1_epoch_1\.json.*declares") as e:
        log[0]
    assert str(p) in str(e.value)


def test_zip_bomb_lying_size_stops_at_the_cap(tmp_path: Path) -> None:
    """A member whose central directory says 100 bytes but which decompresses to 64 MiB."""
    cctx = zstandard.ZstdCompressor(level=3, write_content_size=False).compressobj()
    comp = b"".join(cctx.compress(b"\0" * (1 << 20)) for _ in range(64)) + cctx.flush()
    assert len(comp) < 10_000
    p = tmp_path / "lying.eval"
    _raw_zip(p, [("header.json", HEADER, None), ("samples/1_epoch_1.json", comp, 100)])
    log = open_eval(p, max_member_bytes=2 << 20)
    with pytest.raises(MemberTooLargeError, match="decompresses past"):
        log[0]


def _raw_zip(path: Path, members: list[tuple[str, bytes, int | None]]) -> None:
    """A zip whose members are given compressed (zstd) or, when ``size`` is None, compressed
    here; ``size`` is what the headers declare."""
    local, central = bytearray(), bytearray()
    for name, data, size in members:
        if size is None:
            comp, size, crc = zstandard.ZstdCompressor().compress(data), len(data), zlib.crc32(data)
        else:
            comp, crc = data, 0
        nb = name.encode()
        off = len(local)
        local += struct.pack(
            "<4s5H3L2H", b"PK\x03\x04", 63, 0, 93, 0, 0, crc, len(comp), size, len(nb), 0
        )
        local += nb + comp
        central += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, crc, len(comp), size, len(nb),
            0, 0, 0, 0, 0, off,
        )  # fmt: skip
        central += nb
    eocd = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(local), 0
    )
    path.write_bytes(bytes(local + central + eocd))


def test_deflate_bomb_refused(tmp_path: Path) -> None:
    p = tmp_path / "d.eval"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", HEADER)
        z.writestr("samples/1_epoch_1.json", b"\0" * (4 << 20))
    with pytest.raises(MemberTooLargeError):
        open_eval(p, max_member_bytes=1 << 20)[0]


def test_truncated_zip(tmp_path: Path) -> None:
    """A cut zip (no central directory) is read from its local headers: the complete members
    before the cut, with an error finding; cut before any complete member, it is refused."""
    path = fixture("generated-summary.eval")
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        s2 = z.getinfo("samples/2_epoch_1.json")
    p = tmp_path / "cut.eval"
    p.write_bytes(raw[: s2.header_offset + 100])  # inside sample 2
    log = open_eval(p)
    assert log.ids() == [("1", 1)]
    f = [f for f in log.findings if f.check == "truncated_zip"]
    assert len(f) == 1 and f[0].severity == "error" and "2 complete member(s)" in f[0].detail
    src = quiet_open(p)[0]
    assert len(src.history()) == len(samples_of(path)["samples/1_epoch_1.json"]["messages"])
    assert "truncated_zip" in {x.check for x in src.storage_report().findings}
    p.write_bytes(raw[:100])
    with pytest.raises(NotTranscriptError, match="central directory") as e:
        open_eval(p)
    assert str(p) in str(e.value)


@pytest.mark.parametrize("body", [b"", b"hello, not a zip\n", b"\x89PNG\r\n\x1a\n...."])
def test_not_a_zip(tmp_path: Path, body: bytes) -> None:
    p = tmp_path / "x.eval"
    p.write_bytes(body)
    with pytest.raises(NotTranscriptError, match="not an Inspect .eval log") as e:
        open_eval(p)
    assert str(p) in str(e.value)


def test_zip_of_something_else(tmp_path: Path) -> None:
    p = _zip(tmp_path / "other.eval", [("readme.txt", b"hi")])
    with pytest.raises(EvalLogError, match="not an Inspect .eval log"):
        open_eval(p)


def test_member_with_bad_json(tmp_path: Path) -> None:
    p = _zip(
        tmp_path / "j.eval",
        [("header.json", HEADER), ("samples/1_epoch_1.json", b'{"id": 1, "messages": [')],
    )
    log = open_eval(p)
    assert len(log) == 1  # listing needs no sample
    with pytest.raises(EvalLogError, match=r"'samples/1_epoch_1\.json' is not valid JSON") as e:
        log[0]
    assert str(p) in str(e.value)


def test_bad_header_and_missing_header_are_findings(tmp_path: Path) -> None:
    p = _zip(
        tmp_path / "h.eval", [("header.json", b"{oops"), ("samples/1_epoch_1.json", _sample_json())]
    )
    src = quiet_open(p)[0]
    checks = {f.check: f for f in src.storage_report().findings}
    assert checks["bad_member"].severity == "error" and "header.json" in checks["bad_member"].detail
    p2 = _zip(tmp_path / "n.eval", [("samples/1_epoch_1.json", _sample_json())])
    with pytest.warns(adfkit.AdfWarning, match="no header.json"):
        src2 = open_eval(p2)[0]
    assert "missing_member" in {f.check for f in src2.storage_report().findings}
    assert len(src2.history()) == 2


def test_ref_naming_no_message_is_a_finding(tmp_path: Path) -> None:
    bad = json.loads(_sample_json())
    bad["events"][0]["input_refs"] = [[0, 1], [3, 9]]
    p = _zip(
        tmp_path / "r.eval",
        [("header.json", HEADER), ("samples/1_epoch_1.json", json.dumps(bad).encode())],
    )
    with pytest.warns(adfkit.AdfWarning, match="input_refs"):
        src = open_eval(p)[0]
    f = [f for f in src.storage_report().findings if f.check == "bad_ref"]
    assert len(f) == 1 and f[0].severity == "error"
    assert int(src.history()["tokens_input"].iloc[1]) == 5


def test_damaged_zstd_data(tmp_path: Path) -> None:
    p = _zip(
        tmp_path / "z.eval", [("header.json", HEADER), ("samples/1_epoch_1.json", _sample_json())]
    )
    raw = bytearray(p.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as z:
        info = z.getinfo("samples/1_epoch_1.json")
    at = info.header_offset + 30 + len(info.filename) + info.compress_size // 2
    raw[at] ^= 0xFF
    p.write_bytes(bytes(raw))
    with pytest.raises(EvalLogError, match=r"samples/1_epoch_1\.json"):
        open_eval(p)[0]


def test_unknown_method_refused(tmp_path: Path) -> None:
    p = _zip(tmp_path / "m.eval", [("header.json", HEADER)], method=0)
    raw = bytearray(p.read_bytes())
    cd = raw.find(b"PK\x01\x02")
    raw[cd + 10 : cd + 12] = struct.pack("<H", 99)  # AES: not a method adfkit reads
    p.write_bytes(bytes(raw))
    log = open_eval(p)
    assert any("compression method 99" in f.detail for f in log.findings)


def test_nothing_is_written(tmp_path: Path) -> None:
    src_path = next(SAMPLES.glob("*summary.eval"))
    folder = tmp_path / "logs"
    folder.mkdir()
    p = folder / src_path.name
    p.write_bytes(src_path.read_bytes())
    before = fingerprint(folder)
    for src in quiet_open(p):
        a = adfkit.AgentFile(src)
        a.history(), a.replay(), a.compactions(), a.integrity(), a.observe()
    assert fingerprint(folder) == before


def test_every_error_is_an_adf_error() -> None:
    assert issubclass(EvalLogError, AdfError) and issubclass(MemberTooLargeError, EvalLogError)
    assert issubclass(NotTranscriptError, AdfError)


def test_compaction_with_no_agent_call_after(tmp_path: Path) -> None:
    """A compaction followed only by a scorer's call: nothing is counted as swept (the
    scorer's input says nothing about the agent's window), with a finding."""
    sample = samples_of(fixture("generated-trim.eval"))["samples/1_epoch_1.json"]
    last = max(i for i, e in enumerate(sample["events"]) if e["event"] == "compaction")
    scorer = {
        "event": "model",
        "span_id": "scorer-span",
        "timestamp": "2026-12-01T20:06:00+00:00",
        "input": [{"role": "user", "content": "Grade it."}],
        "tools": [],
        "output": {
            "choices": [{"message": {"id": "g1", "role": "assistant", "content": "C"}}],
            "usage": {"input_tokens": 9, "output_tokens": 1},
        },
    }
    sample["events"] = [*sample["events"][: last + 1], scorer]
    n = len(sample["messages"])
    p = _zip(
        tmp_path / "s.eval",
        [("header.json", HEADER), ("samples/1_epoch_1.json", json.dumps(sample).encode())],
    )
    src = quiet_open(p)[0]
    assert src.window_changes()[-1].swept == ()
    assert "no_call_after_compaction" in {f.check for f in src.storage_report().findings}
    c = src.calls()
    assert c["seq"].isna().iloc[-1] and int(c["tokens_input"].iloc[-1]) == 9
    assert len(src.history()) == n


def test_list_eval_logs(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    (folder / "sub").mkdir(parents=True)
    for i, name in enumerate(["generated-trim.eval", POPULARITY]):
        dst = (folder / "sub" if i else folder) / name
        dst.write_bytes(fixture(name).read_bytes())
        os.utime(dst, ns=(10**18 + i, 10**18 + i))
    (folder / "broken.eval").write_bytes(b"not a zip")
    os.utime(folder / "broken.eval", ns=(10**17, 10**17))
    df = list_eval_logs(folder)
    assert [Path(p).name for p in df["path"]] == [POPULARITY, "generated-trim.eval", "broken.eval"]
    assert df["samples"].tolist()[:2] == [10, 2]
    assert df["compressed"].tolist()[:2] == ["deflate", "zstd"]
    assert df["task"].tolist()[:2] == ["popularity", "compaction_demo"]
    assert "not a zip" in df["error"].iloc[2] and df["samples"].isna().iloc[2]


def test_message_shapes_become_blocks(tmp_path: Path) -> None:
    """Content parts, reasoning, images, tool errors and arguments that did not parse."""
    sample = json.loads(_sample_json())
    image = {"type": "image", "image": "data:image/png;base64," + "A" * 5000}
    parts = [{"type": "reasoning", "reasoning": "think first"}, {"type": "text", "text": "ok"}]
    calls = [
        {"id": "t1", "function": "bash", "arguments": {"cmd": "ls"}},
        {"id": "t2", "function": "python", "arguments": "print(", "parse_error": "bad"},
    ]
    sample["messages"] = [
        {"id": "s", "role": "system", "content": "be brief"},
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "look"}, image]},
        {"id": "a", "role": "assistant", "model": "m/x", "content": parts, "tool_calls": calls},
        {"id": "r1", "role": "tool", "tool_call_id": "t1", "function": "bash", "content": "a b"},
        {"id": "r2", "role": "tool", "tool_call_id": "t2", "function": "python", "content": "",
         "error": {"type": "parsing", "message": "could not parse"}},
    ]  # fmt: skip
    sample["events"][0]["output"]["choices"][0]["message"]["id"] = "a"
    sample["events"][0]["output"]["usage"] = {"input_tokens": -3, "output_tokens": 2}
    body = json.dumps(sample).encode()
    p = _zip(tmp_path / "m.eval", [("header.json", HEADER), ("samples/1_epoch_1.json", body)])
    with pytest.warns(adfkit.AdfWarning):
        src = open_eval(p)[0]
    h = src.history()
    assert h["kind"].tolist() == ["context", "message", "assistant", "tool_result", "tool_result"]
    assert h["tool_names"].iloc[2] == "bash,python"
    blocks = json.loads(h["content"].iloc[2])
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert blocks[3]["input"] == {"_error": "bad", "_raw_arguments": "print("}
    assert len(h["content"].iloc[1]) < 500  # never the whole base64 image
    err = json.loads(h["content"].iloc[4])[0]
    assert err["is_error"] is True and err["content"] == "could not parse"
    # input -3 is not a count: NA (never summed), the row flagged, a finding
    assert _na(h["tokens_input"].iloc[2]) and int(h["tokens_output"].iloc[2]) == 2
    assert bool(h["malformed"].iloc[2])
    assert "bad_token_count" in {f.check for f in src.storage_report().findings}


def test_one_sample_by_name() -> None:
    from adfkit._sources import inspect_eval

    path = SAMPLES / "2026-06-01T08-00-00+00-00_tide-drift-summary.eval"
    log = open_eval(path, warn=False)
    assert log.names()[:3] == ["1_epoch_1", "1_epoch_2", "2_epoch_1"]
    one = inspect_eval.open_session(path, member="gauge_7_epoch_2", warn=False)
    assert one.name == "gauge_7_epoch_2" and one.parsed.meta["epoch"] == "2"
    assert inspect_eval.open_session(path, member="gauge_7", warn=False).name == "gauge_7_epoch_1"
    with pytest.raises(EvalLogError, match="no sample 'nope'"):
        inspect_eval.open_session(path, member="nope")


def test_a_sample_the_header_promises_is_missing(tmp_path: Path) -> None:
    ev = {"task": "t", "dataset": {"sample_ids": [1, 2]}, "config": {"epochs": 2}}
    header = {"version": 2, "status": "success", "eval": ev}
    p = _zip(
        tmp_path / "m.eval",
        [("header.json", json.dumps(header).encode()), ("samples/1_epoch_1.json", _sample_json())],
    )
    log = open_eval(p)
    f = [f for f in log.findings if f.check == "missing_member"]
    assert len(f) == 1 and f[0].severity == "warning"
    assert "3 sample(s)" in f[0].detail and "2_epoch_1, 1_epoch_2, 2_epoch_2" in f[0].detail
    assert len(log) == 1


def test_recognition_imports_no_inspect_reader() -> None:
    code = textwrap.dedent(
        f"""
        import sys
        from adfkit._core import registry as _registry
        print(_registry.recognise({str(next(SAMPLES.glob("*.eval")))!r}).name)
        mods = ("parser", "source", "zipread")
        print([m for m in mods if "adfkit._sources.inspect_eval." + m in sys.modules])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.split() == ["inspect_eval", "[]"], out.stderr


def test_adfkit_open_gives_a_collection() -> None:
    path = SAMPLES / "2026-06-01T08-00-00+00-00_tide-drift-trim.eval"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = adfkit.open(path)
        assert isinstance(col, adfkit.AgentCollection)
        assert col.format == "inspect_eval"
        assert col.names == ["1_epoch_1", "1_epoch_2", "2_epoch_1", "2_epoch_2"]
        one = adfkit.open(f"{path}#2_epoch_1")
    assert one.name == "2_epoch_1"
    assert len(one.history()) == len(col["2_epoch_1"].history())
    assert one.compactions()["n_swept"].tolist() == col[2].compactions()["n_swept"].tolist()


def test_info_has_the_same_keys_as_every_format() -> None:
    from adfkit._core.source import INFO_KEYS

    src = quiet_open(SAMPLES / "2026-06-01T08-00-00+00-00_tide-drift-edit.eval")[0]
    for sizes in (True, False):
        assert list(src.info(sizes=sizes)) == list(INFO_KEYS)
    info = src.info()
    assert info["format"] == "inspect_eval" and info["compact_threshold"] == 2000
    assert info["microcompactions"] == len(
        json.loads(next(SAMPLES.glob("*edit.truth.json")).read_text())["samples"][0]["compactions"]
    )
    assert info["compactions"] == 0


def test_open_reads_no_sample_until_one_is_asked_for() -> None:
    """``adfkit.open`` of a log lists its samples from the zip's directory: none is parsed until
    an agent is touched, and then only that one."""
    log = sorted((ROOT / "sample_agents" / "inspect").glob("*tide-drift-summary.eval"))[0]
    coll = adfkit.open(log)
    assert isinstance(coll, adfkit.AgentCollection)
    assert coll.names == [
        "1_epoch_1", "1_epoch_2", "2_epoch_1", "2_epoch_2", "gauge_7_epoch_1", "gauge_7_epoch_2"
    ]  # fmt: skip
    assert coll.paths[2] == f"{log}#2_epoch_1"
    parsed = coll._sources._cache  # type: ignore[attr-defined]
    assert parsed == {}
    assert len(coll["2_epoch_1"].history()) > 0
    assert list(parsed) == [2]
    coll.close()


def test_the_plot_command_draws_each_sample_of_a_log(tmp_path: Path) -> None:
    log = sorted((ROOT / "sample_agents" / "inspect").glob("*tide-drift-trim.eval"))[0]
    out = subprocess.run(
        [sys.executable, "-m", "adfkit", "plot", str(log), "--kind", "growth", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    names = adfkit.open(log).names
    want = sorted(f"{log.stem}-{n}-growth.png" for n in names)
    assert sorted(os.listdir(tmp_path)) == want


def test_every_plot_of_every_sample_gets_its_own_files(tmp_path: Path) -> None:
    """``--kind all`` on a log: each sample's plots are named by the sample, none overwritten."""
    from adfkit import plots

    log = sorted((ROOT / "sample_agents" / "inspect").glob("*tide-drift-edit.eval"))[0]
    out = subprocess.run(
        [sys.executable, "-m", "adfkit", "plot", str(log), "--kind", "all", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    names = adfkit.open(log).names
    want = sorted(f"{log.stem}-{n}-{k}.png" for n in names for k in plots.PLOTS)
    assert sorted(os.listdir(tmp_path)) == want
