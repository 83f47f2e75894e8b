"""Claude Code sessions and Codex rollouts behind the reader boundary: every public AgentFile
method and adfkit function on the committed samples, with the values their simulators recorded
(``*.truth.json``: row order, compactions, swept and preserved rows, prompt sizes before and
after, usage counted once, rewinds, subagents).

A row is identified in the truth files by its ``uuid`` (Claude Code) or by the line of its first
record (Codex); ``ident`` maps a history seq to that identifier through the parsed transcript.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import fingerprint

import adfkit
from adfkit import schema
from adfkit._core.opening import detect_format
from adfkit._facade.agent import AgentFile
from adfkit._sources.transcript.source import TranscriptSource, compaction_rule

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_agents"
CC = SAMPLES / "claude-code" / "projects"
CC_WEBAPP = CC / "-home-user-work-webapp" / "24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl"
CC_CLI = CC / "-home-user-src-cli-tool" / "424b1fee-9709-4315-85d9-5954058b4714.jsonl"
CX = SAMPLES / "codex" / "sessions" / "2026" / "03"
CX_PLAIN = CX / "14" / "rollout-2026-03-14T09-12-33-51ea40b0-7088-4482-8231-74d06cde3e3a.jsonl"
CX_ZST = CX / "15" / "rollout-2026-03-15T10-20-00-0971f063-a2c6-41fe-9c17-1fdca0bfba76.jsonl.zst"
SESSIONS = [CC_WEBAPP, CC_CLI, CX_PLAIN, CX_ZST]
IDS = ["cc-webapp", "cc-cli", "codex", "codex-zst"]

#: Prices for the sample models the shipped (runtime) table lacks, USD per million tokens.
PRICES = {
    "claude-opus-4-1-20250805": {"input": 15.0, "output": 75.0},
    "claude-haiku-4-5-20251001": {"input": 1.0, "output": 5.0},
    "gpt-5.1-codex": {"input": 1.25, "output": 10.0},
    "gpt-5-codex": {"input": 1.25, "output": 10.0},
}


def truth_of(path: Path) -> dict[str, Any]:
    name = path.name.removesuffix(".zst").removesuffix(".jsonl") + ".truth.json"
    return dict(json.loads((path.parent / name).read_text()))


def open_quiet(path: Path | str) -> AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)
        return adfkit.open(path)


@pytest.fixture(scope="module", params=SESSIONS, ids=IDS)
def case(request: pytest.FixtureRequest) -> tuple[AgentFile, dict[str, Any]]:
    return open_quiet(request.param), truth_of(request.param)


def ident(agent: AgentFile, seqs: Any) -> list[Any]:
    """The truth identifiers (uuid or first line) of history seqs, in the given order."""
    src = agent.source
    assert isinstance(src, TranscriptSource)
    idx = src.row_index().set_index("seq")
    if src.format == "claude_code":
        return [str(idx.at[int(s), "uuid"]) for s in seqs]
    return [int(idx.at[int(s), "line"]) for s in seqs]


def usage_sum(frame: pd.DataFrame) -> dict[str, int]:
    cols = {"input": "tokens_input", "output": "tokens_output"}
    cols.update({k: f"tokens_{k}" for k in ("cache_read", "cache_write", "reasoning")})
    return {k: int(frame[c].fillna(0).sum()) for k, c in cols.items()}


# --- opening -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"),
    [(CC_WEBAPP, "claude_code"), (CX_PLAIN, "codex"), (CX_ZST, "codex")]
    + [(SAMPLES / "clean.adf", "adf")],
)
def test_open_recognises_each_kind(path: Path, fmt: str) -> None:
    assert detect_format(path) == fmt
    agent = open_quiet(path)
    with agent:
        assert agent.format == fmt
        labels = {"claude_code": "Claude Code session", "codex": "Codex rollout"}
        assert agent.format_label == labels.get(fmt, "ADF agent file")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)
        if fmt == "claude_code":
            assert adfkit.open_claude_code(path).format == fmt
        elif fmt == "codex":
            assert adfkit.open_codex(path).format == fmt
            with pytest.raises(adfkit.NotTranscriptError, match="not a Claude Code"):
                adfkit.open_claude_code(path)


def test_a_subagent_file_opens_on_its_own() -> None:
    sub = CC_WEBAPP.with_suffix("") / "subagents" / "agent-a1b2c3d4.jsonl"
    agent = adfkit.open(sub)
    assert agent.format == "claude_code"
    assert agent.name == "agent-a1b2c3d4"
    assert len(agent.history()) == 12  # the simulator's truth for this subagent: 12 rows


def test_half_written_last_line_reads_with_one_warning() -> None:
    for path in (CC_WEBAPP, CX_PLAIN):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            agent = adfkit.open(path)
        adf = [w for w in got if issubclass(w.category, adfkit.AdfWarning)]
        assert len(adf) == truth_of(path)["n_warnings"] == 1
        assert "incomplete" in str(adf[0].message)
        assert agent.info()["live"] is True
        assert len(agent.history()) == len(truth_of(path)["rows"])


@pytest.mark.parametrize(
    ("name", "data", "match"),
    [
        ("empty.jsonl", b"", "empty file"),
        ("notes.txt", b"# notes\nhello\n", "text that is not JSON lines"),
        ("blob.bin", b"\x00\x01\x02" * 50, "binary data"),
        ("other.jsonl", b'{"a": 1}\n{"b": 2}\n', "JSON lines of a kind adfkit does not read"),
    ],
)
def test_anything_else_is_a_clear_error(tmp_path: Path, name: str, data: bytes, match: str) -> None:
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(adfkit.UnknownFormatError, match=f"{name}: {match}") as ei:
        adfkit.open(p)
    assert isinstance(ei.value, adfkit.NotSQLiteError | adfkit.NotTranscriptError)
    assert os.listdir(tmp_path) == [name]  # nothing created beside it


def test_missing_and_directory_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(adfkit.AdfError, match="gone.jsonl: no such file"):
        adfkit.open(tmp_path / "gone.jsonl")
    with pytest.raises(adfkit.AdfError, match="is a directory"):
        adfkit.open(tmp_path)


def test_a_text_file_named_adf_keeps_the_adf_error(tmp_path: Path) -> None:
    p = tmp_path / "notes.adf"
    p.write_text("hello")
    with pytest.raises(adfkit.NotSQLiteError, match="not a SQLite database"):
        adfkit.open(p)


def test_open_adf_refuses_a_transcript() -> None:
    with pytest.raises(adfkit.NotSQLiteError):
        adfkit.open_adf(CC_WEBAPP)


def test_bad_middle_line_is_a_flagged_finding_not_a_traceback(tmp_path: Path) -> None:
    lines = CC_CLI.read_bytes().splitlines(keepends=True)
    p = tmp_path / CC_CLI.name
    p.write_bytes(b"".join([*lines[:10], b"{not json\n", *lines[10:]]))
    with pytest.warns(adfkit.AdfWarning, match="line 11"):
        agent = adfkit.open(p)
    r = agent.integrity()
    bad = r[r["check"] == "bad_json"]
    assert bad["rows"].tolist() == [(11,)] and bad["table"].tolist() == ["transcript"]
    assert len(agent.history()) == len(truth_of(CC_CLI)["rows"])


def test_never_writes_next_to_or_into_a_transcript(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    shutil.copytree(CC_WEBAPP.parent, folder)
    path = folder / CC_WEBAPP.name

    before = fingerprint(folder)
    os.chmod(path, 0o444)
    agent = open_quiet(path)
    agent.history(), agent.replay(), agent.compactions(), agent.integrity(), agent.usage()
    for sub in agent.subagents():
        sub.history()
    assert fingerprint(folder) == before


# --- the tables --------------------------------------------------------------------------------


def test_history_is_the_truth_rows_in_order(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    h = agent.history()
    assert list(h.columns) == list(schema.HISTORY)
    assert h["position"].tolist() == list(range(len(h)))
    _summaries_shown_before_what_they_preserved(agent, h, truth)
    h = h.sort_values("seq", ignore_index=True)  # the truth's rows: conversation (written) order
    assert ident(agent, h["seq"]) == truth["rows"]
    assert h["role"].astype(str).tolist() == truth["roles"]
    hinted = {
        i: k for i, k in enumerate(truth["kind_hints"]) if k in ("context", "compaction_summary")
    }
    assert {i: h["kind"].iloc[i] for i in hinted} == hinted
    summaries = h.loc[h["kind"] == "compaction_summary", "seq"].tolist()
    assert len(summaries) == truth["n_compactions"]
    assert (h["copies"] == 1).all()
    assert not h["malformed"].any()


def _summaries_shown_before_what_they_preserved(
    agent: AgentFile, h: pd.DataFrame, truth: dict[str, Any]
) -> None:
    """A summary is displayed (``position``) right before the rows its compaction preserved,
    which were written before it: Claude Code sends the summary, then those rows (a Codex
    replacement history is sent before its summary, as written)."""
    if agent.source.format != "claude_code":
        return
    at = dict(zip(ident(agent, h["seq"]), h["position"], strict=True))
    for c in truth.get("compactions", []):
        kept = [at[u] for u in c.get("preserved", []) if u in at]
        if kept and c.get("summary") in at:
            assert at[c["summary"]] == min(kept) - 1


def test_events_audit_and_archives(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    ev, a = agent.events(), agent.audit()
    assert list(ev.columns) == list(schema.EVENTS) and list(a.columns) == list(schema.AUDIT)
    comp = ev[ev["event"] == "compaction"]
    assert len(comp) == truth["n_compactions"] == len(a)
    assert (ev["event"] == "microcompaction").sum() == len(truth.get("microcompactions", []))
    assert comp["audit_ids"].tolist() == [(i,) for i in range(1, len(a) + 1)]
    assert (comp["boundary_seq"] == comp["summary_seq"] - 1).all()
    h = agent.history()
    for i, t in enumerate(truth["compactions"], start=1):
        rows = agent.decode_audit(i)
        assert isinstance(rows, pd.DataFrame)
        assert list(rows.columns) == list(schema.LOOP)
        assert sorted(ident(agent, rows["seq"]), key=str) == sorted(t["swept"], key=str)
        assert (rows["origin"] == "audit").all() and (rows["audit_id"] == i).all()
        rec = a[a["id"] == i].iloc[0]
        assert rec["entry_count"] == len(t["swept"])
        assert (rec["start_seq"], rec["end_seq"]) == (rows["seq"].min(), rows["seq"].max())
    assert (h["origin"] == "audit").sum() == sum(len(t["swept"]) for t in truth["compactions"])
    with pytest.raises(adfkit.AdfError, match="no archive"):
        agent.decode_audit(99)
    assert agent.history_gaps().empty
    assert agent.highest_seq() is None


def test_loop_is_the_window_now(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    lp, h = agent.loop(), agent.history()
    assert list(lp.columns) == list(schema.LOOP)
    last = truth["compactions"][-1]
    summary_at = truth["rows"].index(last["summary"])
    after = truth["rows"][summary_at:]
    want = sorted(last["preserved"] + after, key=truth["rows"].index)
    assert ident(agent, sorted(lp["seq"])) == want
    assert (lp["origin"] == "live").all() and lp["audit_id"].isna().all()
    assert len(lp) + int((h["origin"] == "audit").sum()) == len(h)


def test_compactions_match_the_truth(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    c = agent.compactions()
    comp = c[c["event"] == "compaction"].reset_index(drop=True)
    stated = [(k, t["trigger"]) for k, t in zip(comp["kind"], truth["compactions"], strict=True)]
    assert [k for k, t in stated if t is not None] == [t for _, t in stated if t is not None]
    assert comp["audited"].all() and not comp["summary_lost"].any()
    rep = agent.replay().set_index("seq")
    for j, t in enumerate(truth["compactions"]):
        row = comp.iloc[j]
        assert ident(agent, [row["summary_seq"]]) == [t["summary"]]
        assert sorted(ident(agent, row["swept_seqs"]), key=str) == sorted(t["swept"], key=str)
        assert sorted(ident(agent, row["tail_seqs"]), key=str) == sorted(t["preserved"], key=str)
        assert row["n_swept"] == len(t["swept"]) and row["n_tail"] == len(t["preserved"])
        # prompt size of the last call up to the summary (Codex's local summarization call
        # is that call: its usage is on the summary row) and of the first call after it
        h = agent.history().set_index("seq")["tokens_input"].dropna()
        before = h[h.index <= row["summary_seq"]].iloc[-1]
        after = rep.loc[rep.index[rep.index > row["summary_seq"]][0], "tokens_input"]
        assert (before, after) == (t["tokens_before"], t["tokens_after"])
        assert row["threshold"] == agent.compact_threshold()
        if row["summary_encrypted"]:  # a remote compaction: size and recall unknown, not 0
            assert pd.isna(row["summary_tokens"]) and pd.isna(row["compression_ratio"])
            assert pd.isna(row["recall"]) and row["n_identifiers"] > 0
        else:
            assert row["swept_tokens"] > row["summary_tokens"] > 0


def test_claude_code_manual_compaction_keeps_its_focus_and_segment() -> None:
    agent = open_quiet(CC_WEBAPP)
    c = agent.compactions()
    manual = c[c["kind"] == "manual"].iloc[0]
    assert manual["instructions"] == "keep the upload test plan"
    assert manual["n_tail"] == 4
    micro = c[c["event"] == "microcompaction"].iloc[0]
    truth = truth_of(CC_WEBAPP)
    assert ident(agent, micro["swept_seqs"]) == truth["microcompactions"][0]["swept"]
    # the cleared tool results stay in the window as stubs: the estimate drops, rows remain
    rep = agent.replay().set_index("seq")
    b = int(micro["boundary_seq"])
    before = rep.loc[rep.index[rep.index <= b][-1]]
    after = rep.loc[rep.index[rep.index > b][0]]
    assert after["est_tokens"] < before["est_tokens"]
    assert set(micro["swept_seqs"]) <= set(after["context_seqs"])


def test_replay_context_and_composition(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    r, comp, h = agent.replay(), agent.composition(), agent.history()
    assert list(r.columns) == list(schema.REPLAY) and list(comp.columns) == list(schema.COMPOSITION)
    calls = h.loc[h["kind"] == "assistant", "seq"].tolist()
    assert r["seq"].tolist() == calls == comp["seq"].tolist()
    sent = agent.source.context_in_messages  # Claude Code: attachments sent as reminders
    cols = ["summary_tokens", "message_tokens", "assistant_tokens", "tool_result_tokens"]
    parts = r[[*cols, "inject_tokens"]] if sent else r[cols]
    assert ((r["est_tokens"] - parts.sum(axis=1)) < 2).all()
    assert (r["inject_tokens"] > 0).any() == (sent and (h["kind"] == "context").any())
    assert (r["threshold"] == agent.compact_threshold()).all()
    # the tool's rule, not a number the file states: assumed (issue 19.6)
    assert r["threshold_source"].eq("assumed").all()
    # the last call saw exactly the rows of the live loop written before it
    last = int(r["seq"].iloc[-1])
    ctx = agent.context_at(last, context=False)
    live = agent.loop()
    conv = live[(live["seq"] < last) & (sent | (live["kind"] != "context"))]["seq"].tolist()
    assert ctx["seq"].tolist() == conv
    assert (ctx["part"] == "message").all()
    # every call after a compaction sees its summary, none before it
    seq_of = dict(zip(ident(agent, h["seq"]), h["seq"], strict=True))
    for t in truth["compactions"]:
        s = seq_of[t["summary"]]
        seen = [s in c for c in r["context_seqs"]]
        first = next(i for i, v in enumerate(seen) if v)
        assert r["seq"].iloc[first] > s and not any(seen[:first])
    with pytest.raises(adfkit.AdfError, match="not a model call"):
        agent.context_at(int(h["seq"].iloc[0]))


def test_recall_and_refetches(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    c = agent.compactions()
    for j in c.index[c["event"] == "compaction"]:
        if c.loc[j, "summary_encrypted"]:
            with pytest.raises(adfkit.AdfError, match="encrypted"):
                agent.summary_recall(int(j))
            continue
        r = agent.summary_recall(int(j))
        assert list(r.columns) == list(schema.SUMMARY_RECALL)
        assert len(r) == c.loc[j, "n_identifiers"]
        assert set(r["first_seq"]) <= set(c.loc[j, "swept_seqs"])
    f = agent.refetches()
    assert list(f.columns) == list(schema.REFETCHES)
    assert (f["seq"] > f["swept_seq"]).all()
    assert c["n_refetches"].sum() == len(f)


def test_usage_counts_every_call_once(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    with warnings.catch_warnings():
        warnings.simplefilter("error", adfkit.AdfWarning)  # every sample model is priced
        u = agent.usage(prices=PRICES)
    assert list(u.columns) == list(schema.USAGE)
    # calls of abandoned branches are not in history() (they are in branches()), but they
    # were made and paid for: usage() counts them, naming their branch
    got = usage_sum(u)
    br = agent.source.branches()
    assert sorted(u["branch"].dropna()) == sorted(br.loc[br["tokens_input"].notna(), "branch"])
    want = {k: truth["usage"].get(k, 0) for k in got}
    assert got == want
    src = agent.source
    assert isinstance(src, TranscriptSource)
    calls = src.calls()
    assert list(calls.columns[:3]) == ["key", "seq", "line"]
    assert usage_sum(calls) == {k: truth["usage"].get(k, 0) for k in usage_sum(calls)}
    assert len(u) == len(calls)  # every call once, the abandoned branches' too
    if src.format == "claude_code":
        assert (u["tokens_cache_write"].notna()).all()
        assert (u["tokens_input"] >= u["tokens_cache_read"] + u["tokens_cache_write"]).all()
        assert (u["call_kind"] == "assistant").all()  # the summarizing call is not on the chain
    else:
        assert u["tokens_cache_write"].isna().all() and u["tokens_reasoning"].notna().all()
        local = [t for t in truth["compactions"] if t.get("summary_tokens")]
        comp = u[u["call_kind"] == "compaction"]
        assert len(comp) == len(local)
        for (_, row), t in zip(comp.iterrows(), local, strict=True):
            assert row["tokens_input"] == t["summary_tokens"]["input"]
    priced = u["price_input"].notna()
    assert priced.all() and (u["cost_usd"] > 0).all()
    cr, cw = u["tokens_cache_read"].fillna(0), u["tokens_cache_write"].fillna(0)
    w1h = u["tokens_cache_write_1h"].fillna(0)
    expect = np.round(
        (
            (u["tokens_input"] - cr - cw) * u["price_input"]
            + cr * u["price_cache_read"]
            + (cw - w1h) * u["price_cache_write"]
            + w1h * u["price_cache_write_1h"]
            + u["tokens_output"] * u["price_output"]
        )
        / 1e6,
        8,
    )
    assert np.allclose(u["cost_usd"], expect.astype(float))


def test_sample_models_are_priced_by_the_shipped_table() -> None:
    agent = open_quiet(CX_ZST)
    with warnings.catch_warnings():
        warnings.simplefilter("error", adfkit.AdfWarning)
        u = agent.usage()
    assert (u["model"] == "gpt-5-codex").all()
    assert (u["price_cache_read"] == 0.125).all() and (u["cost_usd"] > 0).all()


def test_blocks_tool_calls_and_tool_taxonomy(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, _ = case
    b, t = agent.blocks(history=True), agent.tool_calls(history=True)
    assert list(b.columns) == list(schema.BLOCKS) and list(t.columns) == list(schema.TOOL_CALLS)
    assert t["matched"].all()  # every call of the samples has its result
    assert len(t) == (b["type"] == "tool_use").sum()
    assert set(agent.blocks()["seq"]) <= set(agent.loop()["seq"])
    obs = agent.observe()
    assert obs.to_dict()["name"] == agent.name
    classes = dict(zip(obs.calls["tool"], obs.calls["class"], strict=True))
    expected = {
        "claude_code": {"Read": "internal", "Bash": "world", "TodoWrite": "bookkeeping"},
        "codex": {"shell": "world", "apply_patch": "world", "update_plan": "bookkeeping"},
    }[agent.format]
    assert {k: v for k, v in classes.items() if k in expected} == {
        k: v for k, v in expected.items() if k in classes
    }
    assert set(obs.calls["class"]) <= {"world", "internal", "bookkeeping"}
    assert obs.turns["n_calls"].sum() == len(t)
    assert obs.turns["epoch"].max() == len(agent.audit())
    assert adfkit.signature("Read", {"file_path": "a"}).startswith("Read:")
    assert adfkit.load_taxonomy()["tools"]["msg_send"] == "world"  # the ADF default is unchanged
    # a taxonomy passed in replaces the per-format default
    mine = adfkit.observe(agent, taxonomy={"tools": {}, "prefixes": {}})
    assert set(mine.calls["class"]) == {"internal"}
    assert len(adfkit.observe(agent, segmentation="reference").turns) > 0


def test_simulate_under_the_agents_own_rule(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    real = adfkit.simulate(agent, adfkit.ThresholdPolicy())
    assert real.summary["n_real_compactions"] == truth["n_compactions"]
    assert (real.calls["threshold"] == agent.compact_threshold()).all()
    # the samples compact far below the tools' real thresholds: only manual ones are replayed
    n_manual = sum(t["trigger"] == "manual" for t in truth["compactions"])
    assert real.summary["n_compactions"] == n_manual
    comp_in = agent.compactions()["compaction_input"]
    # compaction calls whose usage the file does not hold: the total is unknown, never 0
    assert real.summary["tokens_sent_actual"] == (
        None
        if len(comp_in) and comp_in.isna().all()
        else int(agent.replay()["tokens_input"].sum()) + int(comp_in.fillna(0).sum())
    )
    low = min(t["tokens_before"] for t in truth["compactions"]) // 2
    sweep = adfkit.simulate_sweep(agent, [low, agent.compact_threshold()])
    assert sweep["n_compactions"].iloc[0] > sweep["n_compactions"].iloc[1] == n_manual
    assert (sweep["n_real_compactions"] == truth["n_compactions"]).all()
    for pol in (adfkit.SlidingWindowPolicy(5000), adfkit.TrimToolResultsPolicy(200)):
        res = adfkit.simulate(agent, pol)
        assert len(res.calls) == len(agent.replay())


def test_integrity_lists_the_readers_findings(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    r = agent.integrity()
    assert list(r.columns) == list(schema.INTEGRITY)
    found = set(r.loc[r["severity"] != "info", "check"])
    assert found == set(truth["finding_checks"])
    assert "loop_audit_off" not in set(r["check"]) and "lost_seqs" not in set(r["check"])
    for rows, table in zip(r["rows"], r["table"], strict=True):
        assert table != "transcript" or len(rows) <= 1


def test_empty_side_tables_mind_and_settings(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, _ = case
    side = {
        "inbox": (agent.inbox(), schema.INBOX),
        "outbox": (agent.outbox(), schema.OUTBOX),
        "files": (agent.files(), schema.FILES),
        "logs": (agent.logs(), schema.LOGS),
        "tasks": (agent.tasks(), schema.TASKS),
        "timers": (agent.timers(), schema.TIMERS),
    }
    for name, (df, cols) in side.items():
        assert df.empty and list(df.columns) == list(cols), name
    m = agent.mind()
    assert m.pages.empty and m.log.empty
    assert agent.mind_history().empty and list(agent.mind_history().columns) == list(
        schema.MIND_HISTORY
    )
    call = int(agent.replay()["seq"].iloc[3])
    with pytest.warns(adfkit.AdfWarning, match="no version of mind.md is known"):
        assert agent.mind_at(call) is None
    with pytest.warns(adfkit.AdfWarning, match="no system_prompt context row"):
        assert agent.system_prompt_at(call) is None
    assert agent.config_changes().empty
    cb = agent.context_blocks()
    assert list(cb.columns) == list(schema.CONTEXT_BLOCKS)
    h = agent.history()
    assert cb["seq"].tolist() == h.loc[h["kind"] == "context", "seq"].tolist()
    assert cb["category"].notna().all()
    with pytest.raises(adfkit.AdfError, match="no stored file"):
        agent.read_file("mind.md")
    with pytest.raises(adfkit.AdfError):
        agent.read_text("mind.md")
    assert agent.audit_settings()["loop"] is True
    meta = agent.meta()
    assert meta["format"] == agent.format and all(isinstance(v, str) for v in meta.values())
    assert agent.config()["context"]["compact_threshold"] == agent.compact_threshold()
    assert agent.settings().compact_threshold == agent.compact_threshold()
    assert agent.schema_version is None and agent.max_blob_bytes > 0
    assert agent.source.path == agent.path


def test_info_has_the_adf_keys(case: tuple[AgentFile, dict[str, Any]]) -> None:
    agent, truth = case
    adf_keys = set(adfkit.open_adf(SAMPLES / "clean.adf").info(sizes=True))
    info = agent.info(sizes=True)
    assert adf_keys == set(info)
    lp = agent.loop()
    assert info["loop_rows"] == len(lp)
    assert info["loop_seq_range"] == (int(lp["seq"].min()), int(lp["seq"].max()))
    assert info["audit_rows"] == {"loop": truth["n_compactions"]}
    assert info["audited_loop_entries"] == sum(len(t["swept"]) for t in truth["compactions"])
    assert info["compact_threshold"] == agent.compact_threshold()
    assert info["schema_version"] is None and info["handle"] is None
    assert info["format"] == agent.format
    assert info["file_bytes"] == os.path.getsize(agent.path)
    assert agent.info(sizes=False)["audited_loop_entries"] is None


def test_threshold_rules() -> None:
    cc = open_quiet(CC_WEBAPP)
    assert cc.compact_threshold() == 200_000 - 20_000 - 13_000
    assert cc.config()["context_window"] == 200_000
    assert compaction_rule("claude_code", "claude-opus-4-6[1m]")[:2] == (1_000_000, 967_000)
    cx = open_quiet(CX_PLAIN)
    window = truth_of(CX_PLAIN)["compactions"][0]["context_window"]
    assert cx.config()["context_window"] == window
    assert cx.compact_threshold() == int(window * 0.9)
    assert compaction_rule("codex", None, None)[:2] == (272_000, 244_800)


def test_rewinds_are_other_branches() -> None:
    for path in (CC_WEBAPP, CC_CLI, CX_PLAIN):
        agent, truth = open_quiet(path), truth_of(path)
        br = agent.branches()
        assert list(br.columns) == [*schema.LOOP, "branch"]
        assert ident(agent, br["seq"]) == truth["other_branches"]
        assert not set(br["seq"]) & set(agent.history()["seq"])
        assert agent.info()["branches"] == len(truth["rewinds"])


def test_subagents_are_reachable_and_counted_apart() -> None:
    agent = open_quiet(CC_WEBAPP)
    truth = truth_of(CC_WEBAPP)["subagents"]
    subs = {s.name.removeprefix("agent-"): s for s in agent.subagents()}
    assert set(subs) == set(truth)
    for aid, t in truth.items():
        s = subs[aid]
        assert ident(s, s.history()["seq"]) == t["rows"]
        assert usage_sum(s.usage(prices=PRICES))["input"] == t["usage"]["input"]
        meta = s.meta()
        assert meta.get("parent_tool_use_id") == t["tool_use_id"]
        assert meta.get("parent_agent_id") == t["parent_agent_id"]
        assert s.subagents() == []
    assert subs["acompact-9f8e7d"].meta()["agent_type"] == "compact"
    legacy = open_quiet(CC_CLI).subagents()
    assert [s.name for s in legacy] == ["agent-legacy01"]
    assert adfkit.open_adf(SAMPLES / "clean.adf").subagents() == []


def test_home_paths_as_the_readme_writes_them(tmp_path: Path, monkeypatch) -> None:
    """``~/.claude/projects`` and ``~/.codex/sessions`` (the README's examples) are listed and
    opened, as ``open_adf("~/...")`` is: ``~`` is the user's home, not a folder named ``~``."""
    shutil.copytree(CC, tmp_path / ".claude" / "projects")
    shutil.copytree(SAMPLES / "codex" / "sessions", tmp_path / ".codex" / "sessions")
    monkeypatch.setenv("HOME", str(tmp_path))
    cc = adfkit.list_claude_code_sessions("~/.claude/projects")
    cx = adfkit.list_codex_sessions("~/.codex/sessions")
    assert len(cc) == 2 and len(cx) == 2
    assert all(p.startswith(str(tmp_path)) for p in [*cc["path"], *cx["path"]])
    rel = CC_WEBAPP.relative_to(CC)
    with open_quiet(f"~/.claude/projects/{rel}") as session:
        assert session.format == "claude_code" and len(session.history()) > 0
        assert str(session.path).startswith(str(tmp_path))


def test_list_sessions_newest_first() -> None:
    cc = adfkit.list_claude_code_sessions(CC)
    assert sorted(cc["path"]) == sorted(str(p) for p in (CC_WEBAPP, CC_CLI))
    assert cc["modified"].is_monotonic_decreasing and (cc["size_bytes"] > 0).all()
    cx = adfkit.list_codex_sessions(SAMPLES / "codex")
    assert sorted(cx["path"]) == sorted(str(p) for p in (CX_PLAIN, CX_ZST))
    assert cx["modified"].is_monotonic_decreasing


# --- many agents at once -----------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["serial", "processes"])
def test_load_fleet_over_adf_and_transcripts(engine: str) -> None:
    paths = [str(SAMPLES / "clean.adf"), str(CC_CLI), str(CX_ZST)]
    df, errors = adfkit.load_fleet(paths, "history", engine=engine, progress=False)
    assert errors.empty
    names = [adfkit.open(p).name for p in paths]
    sizes = [len(adfkit.open(p).history()) for p in paths]
    assert df["agent"].tolist() == [n for n, k in zip(names, sizes, strict=True) for _ in range(k)]
    comp, _ = adfkit.load_fleet(paths, "compactions", engine=engine, progress=False)
    assert comp.groupby("agent", sort=False).size().tolist() == [2, 1, 1]


def test_export_writes_every_table(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("error", adfkit.AdfWarning)  # both sessions' models are priced
        manifest, errors = adfkit.export([str(CC_CLI), str(CX_ZST)], out, progress=False)
    assert errors.empty
    assert set(manifest["agent"]) == {adfkit.open(CC_CLI).name, adfkit.open(CX_ZST).name}
    h = pd.read_parquet(next(out.rglob("history.parquet")))
    assert len(h) in (len(adfkit.open(CC_CLI).history()), len(adfkit.open(CX_ZST).history()))


def test_cli_info_on_a_transcript() -> None:
    for path in (CC_WEBAPP, CX_ZST):
        res = subprocess.run(
            [sys.executable, "-m", "adfkit", "info", str(path), "--json"],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        )
        assert res.returncode == 0, res.stderr
        assert "Traceback" not in res.stderr
        assert json.loads(res.stdout)["format"] == detect_format(path)
        plain = subprocess.run(
            [sys.executable, "-m", "adfkit", "info", str(path)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        t = adfkit.open(path).compact_threshold()
        assert re.search(rf"^threshold +{t:,} tokens \(assumed: ", plain.stdout, re.M), plain.stdout


def test_plots_draw_transcripts(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from adfkit import plots

    agent = open_quiet(CC_WEBAPP)
    for name, fn in plots.PLOTS.items():
        ax = fn(agent)
        assert ax.figure is not None, name
        plots.close(ax)


# --- coverage of the facade -------------------------------------------------------------------


def test_a_shipped_session_is_found_by_sample_path() -> None:
    """``adfkit.sample_path`` finds a session of another format by its path below the
    samples' folder, the file the notebooks open."""
    rel = CC_WEBAPP.resolve().relative_to((ROOT / "sample_agents").resolve())
    assert adfkit.sample_path(str(rel)) == CC_WEBAPP.resolve()


def test_every_public_agentfile_member_is_exercised() -> None:
    """Each public member of AgentFile is used somewhere in this module (``.name`` appears)."""
    text = Path(__file__).read_text()
    public = {n for n, _ in inspect.getmembers(AgentFile) if not n.startswith("_")}
    assert sorted(n for n in public if not re.search(rf"\.{n}\b", text)) == []
    functions = {n for n in adfkit.__all__ if callable(getattr(adfkit, n)) and n[0].islower()}
    assert sorted(n for n in functions if f"adfkit.{n}(" not in text) == []


@pytest.mark.parametrize("path", SESSIONS, ids=IDS)
def test_forgetting_tables_on_transcripts(path: Path) -> None:
    """The forgetting tables have their schema on every sample session, one row per
    compaction (and the cold start for recovery)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open(path) as a:
            n = int((a.events()["event"] == "compaction").sum())
            frames = {
                "COMPACTION_LEDGER": a.compaction_ledger(),
                "FORGETTING": a.forgetting(),
                "ITEM_SURVIVAL": a.item_survival(),
                "SURVIVAL_CURVE": a.survival_curve(),
                "COMPACTION_CACHE": a.compaction_cache(),
                "RECOVERY": a.recovery(),
            }
    for name, df in frames.items():
        assert list(df.columns) == list(getattr(schema, name)), name
    assert len(frames["FORGETTING"]) == len(frames["COMPACTION_CACHE"]) == n
    assert len(frames["RECOVERY"]) == n + 1


def test_a_long_simulated_session_matches_its_truth(tmp_path: Path) -> None:
    """Many automatic compactions (some preserving rows), microcompactions and rewinds in one
    session, written by the sample simulator: rows, every compaction's swept and preserved
    rows and the usage (branches included) are the simulator's."""
    import random

    from adfsynth.claude_code import SYSTEM_TOKENS, Session

    rng = random.Random(3)
    s = Session(rng, "5e55a0b1-0000-4000-8000-000000000001", "/w", "2.1.90", 1772352000000)
    for n in range(1, 120):
        s.turn(rng.randint(1, 5))
        if n % 23 == 0:
            s.microcompact(2)
        if n % 37 == 0:
            s.abandoned_branch()
        if SYSTEM_TOKENS + sum(r.size for r in s.window) > 60_000:
            s.compact("auto", preserve_last=rng.choice((0, 2)))
    path = tmp_path / "5e55a0b1-0000-4000-8000-000000000001.jsonl"
    path.write_text(s.text())
    agent = adfkit.open(path)
    assert len(s.compactions) >= 5
    h = agent.history()
    assert ident(agent, sorted(h["seq"])) == [r.uuid for r in s.rows]
    c = agent.compactions()
    comp = c[c["event"] == "compaction"].reset_index(drop=True)
    assert len(comp) == len(s.compactions)
    for j, t in enumerate(s.compactions):
        assert set(ident(agent, comp.loc[j, "swept_seqs"])) == set(t["swept"])
        assert set(ident(agent, comp.loc[j, "tail_seqs"])) == set(t["preserved"])
    assert (c["event"] == "microcompaction").sum() == len(s.micro)
    got = usage_sum(agent.usage())  # the abandoned branches' calls included
    assert {k: got[k] for k in s.usage} == s.usage
    assert ident(agent, agent.source.branches()["seq"]) == [r.uuid for r in s.branch_rows]


def test_the_registry_lists_and_names_every_format() -> None:
    """``formats()`` names the readers, ``list_sessions`` is each one's listing with its
    ``format``, and a built-in name cannot be registered over."""
    assert {"adf", "claude_code", "codex"} <= set(adfkit.formats())
    codex = adfkit.list_sessions(ROOT / "sample_agents" / "codex", format="codex")
    assert codex.drop(columns="format").equals(
        adfkit.list_codex_sessions(ROOT / "sample_agents" / "codex")
    )
    from adfkit._core.registry import spec

    with pytest.raises(ValueError, match="built-in"):
        adfkit.register_format(spec("claude_code"))


def test_a_transcript_exports_to_opentelemetry() -> None:
    """``.to_otlp()`` on a transcript: one chat span per call (the OTel tests hold the rest)."""
    pytest.importorskip("opentelemetry.sdk", reason='needs pip install "adfkit[otel]"')
    agent = open_quiet(CC_WEBAPP)
    doc = agent.to_otlp()
    spans = [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    calls = len(agent.usage()) + sum(len(s.usage()) for s in agent.subagents())
    assert sum(s["name"].startswith("chat") for s in spans) == calls


def test_a_transcript_has_a_compaction_audit() -> None:
    """``.compaction_audit()`` and ``.missed_compactions()`` on a transcript (the audit's own
    tests plant every finding): a row per compaction, none for the clears."""
    agent = open_quiet(CC_WEBAPP)
    comp = agent.compactions()
    assert len(agent.compaction_audit()) == int((comp["event"] == "compaction").sum())
    assert list(agent.missed_compactions().columns)[:3] == ["first_seq", "last_seq", "n_calls"]


def test_a_transcript_runs_in_the_compaction_lab() -> None:
    """``.compaction_lab()`` on a transcript: one row per compaction and compactor (the lab's
    own tests plant exact scores), the recorded compactor among them."""
    agent = open_quiet(CC_WEBAPP)
    comp = agent.compactions()
    lab = agent.compaction_lab()
    n = int((comp["event"] == "compaction").sum())
    assert n and len(lab) == n * lab["compactor"].nunique()
    assert "recorded" in set(lab["compactor"])


def test_a_transcript_takes_a_compactor_of_ones_own_and_exports_its_dataset(
    tmp_path: Path,
) -> None:
    """``adfkit.register_compactor`` (a compactor keeping nothing: no needed item kept) and
    ``adfkit.export_compaction_dataset`` on a transcript (one record per compaction)."""
    from adfkit._analysis.compactors import unregister_compactor

    agent = open_quiet(CC_WEBAPP)
    adfkit.register_compactor("nothing", lambda: lambda window: [])
    try:
        lab = agent.compaction_lab(["nothing"])
    finally:
        unregister_compactor("nothing")
    assert len(lab) and (lab["n_needed_kept"].fillna(0) == 0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written, errors = adfkit.export_compaction_dataset(CC_WEBAPP, tmp_path / "ds")
    assert errors.empty
    records = (tmp_path / "ds" / "compactions.jsonl").read_text().splitlines()
    assert len(records) == len(lab)


def test_a_transcript_exports_to_an_otlp_file(tmp_path: Path) -> None:
    """``adfkit.export_otlp(...)`` writes one OTLP JSON line per agent of the paths."""
    pytest.importorskip("opentelemetry.sdk", reason='needs pip install "adfkit[otel]"')
    out = tmp_path / "trace.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n, failed = adfkit.export_otlp([str(CC_WEBAPP)], to=out)
    assert failed == [] and n > 0 and len(out.read_text().splitlines()) == 1


def _calls_of(path: Path) -> tuple[str, int]:
    with adfkit.open(path) as agent:
        return agent.name, len(agent.usage())


def test_run_maps_a_function_over_sessions_in_input_order() -> None:
    """``adfkit.run``: one function over many sessions on an engine, results in input order
    (the same on the process pool)."""
    paths = list(reversed(SESSIONS))
    want = [_calls_of(p) for p in paths]
    assert adfkit.run(_calls_of, paths, engine="serial") == want
    assert adfkit.run(_calls_of, paths, engine="processes", workers=2) == want
