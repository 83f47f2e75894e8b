"""The Claude Code samples carry the shapes real files show (TRANSCRIPTS.md §0; fixtures README
"Observed in real files"), and adfkit reads each exactly as the simulator's truth says.

The shape checks scan the sample JSONL directly (not through adfkit, not through the truth): a
boundary whose logical parent was never written with a hook_progress off that uuid just before
it, another just after a microcompaction; parallel tool calls whose later block record sits on a
side branch; block records interleaved with tool results; a Stop hook pointing at a final block
record never written; microcompactions shaped like D4/D11's; an old-form (1.0.x) compaction.
The reading checks compare adfkit with ``*.truth.json``: every call's usage, every tool call and
its result, every compaction's recorded and computed token counts, the chain-gap findings."""

from __future__ import annotations

import json
import re
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import SAMPLES

import adfkit
from adfkit._sources.claude_code.parser import parse_claude_code

CC = SAMPLES / "claude-code" / "projects"
WEBAPP = CC / "-home-user-work-webapp" / "24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl"
LEGACY = CC / "-home-user-src-cli-tool" / "424b1fee-9709-4315-85d9-5954058b4714.jsonl"
SESSIONS = [WEBAPP, LEGACY]


def _records(path: Path) -> list[dict[str, Any]]:
    """Every complete line of the file, with its 1-based line number as ``_line``."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # the half-written last line
        rec["_line"] = n
        out.append(rec)
    return out


def _truth(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.with_name(path.stem + ".truth.json").read_text()))


def _mid(r: dict[str, Any]) -> str | None:
    m = r.get("message")
    return m.get("id") if r.get("type") == "assistant" and isinstance(m, dict) else None


def _blocks(r: dict[str, Any]) -> list[dict[str, Any]]:
    m = r.get("message")
    c = m.get("content") if isinstance(m, dict) else None
    return [b for b in c if isinstance(b, dict)] if isinstance(c, list) else []


def _result_for(r: dict[str, Any]) -> set[str]:
    if r.get("type") != "user":
        return set()
    return {b["tool_use_id"] for b in _blocks(r) if b.get("type") == "tool_result"}


def _uses(r: dict[str, Any]) -> set[str]:
    return {b["id"] for b in _blocks(r) if b.get("type") == "tool_use"}


class _Scan:
    def __init__(self, path: Path) -> None:
        self.recs = _records(path)
        self.uuids = {r["uuid"] for r in self.recs if isinstance(r.get("uuid"), str)}
        self.children: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in self.recs:
            if isinstance(r.get("parentUuid"), str):
                self.children[r["parentUuid"]].append(r)

    def before(self, r: dict[str, Any]) -> dict[str, Any]:
        return next(x for x in reversed(self.recs) if x["_line"] < r["_line"])


@pytest.fixture(scope="module")
def webapp() -> _Scan:
    return _Scan(WEBAPP)


# --- the shapes are in the samples ----------------------------------------------------------


def test_boundaries_whose_logical_parent_was_never_written(webapp: _Scan) -> None:
    dangling = [
        r
        for r in webapp.recs
        if r.get("subtype") == "compact_boundary" and r["logicalParentUuid"] not in webapp.uuids
    ]
    before = [webapp.before(r) for r in dangling]
    # D5: a hook_progress off the same unwritten uuid just before; D4: a microcompaction
    assert [(b.get("data") or {}).get("type") or b.get("subtype") for b in before] == [
        "hook_progress",
        "microcompact_boundary",
    ]
    assert before[0]["parentUuid"] == dangling[0]["logicalParentUuid"]
    assert dangling[0]["compactMetadata"].keys() == {"trigger", "preTokens"}  # as in D4, D5


def test_parallel_tool_calls_with_the_later_block_record_on_a_side_branch(webapp: _Scan) -> None:
    """Block record P (tool A) has two children: Q (tool B) with B's result, and A's result,
    from which the conversation goes on (D1, D3)."""
    by_uuid = {r["uuid"]: r for r in webapp.recs if "uuid" in r}
    found = 0
    for p in webapp.recs:
        up = by_uuid.get(p.get("parentUuid") or "", {})
        if not _uses(p) or (_mid(up) == _mid(p) and _uses(up)):
            continue  # P is the first tool_use block record of its response
        kids = webapp.children[p["uuid"]]
        q = [k for k in kids if _mid(k) == _mid(p)]
        ra = [k for k in kids if _result_for(k) == _uses(p)]
        if not (q and ra):
            continue
        assert any(_result_for(k) == _uses(q[0]) for k in webapp.children[q[0]["uuid"]])
        assert any(_mid(k) not in (None, _mid(p)) for k in webapp.children[ra[0]["uuid"]])
        found += 1
    assert found >= 2


def test_block_records_interleaved_with_tool_results(webapp: _Scan) -> None:
    by_uuid = {r["uuid"]: r for r in webapp.recs if "uuid" in r}
    inter = [
        r
        for r in webapp.recs
        if _mid(r)
        and (p := by_uuid.get(r.get("parentUuid") or "")) is not None
        and _result_for(p)
        and (src := by_uuid.get(p.get("sourceToolAssistantUUID") or "")) is not None
        and _mid(src) == _mid(r)
    ]
    assert len({_mid(r) for r in inter}) >= 2


def test_a_stop_hook_points_at_a_final_block_record_never_written(webapp: _Scan) -> None:
    hooks = [
        r
        for r in webapp.recs
        if (r.get("data") or {}).get("hookEvent") == "Stop" and r["parentUuid"] not in webapp.uuids
    ]
    assert len(hooks) == 1
    h = hooks[0]
    prev = webapp.before(h)
    assert _blocks(prev)[0]["type"] == "thinking"  # the response's last record written (D7)
    summary = webapp.children[h["uuid"]]
    assert [s.get("subtype") for s in summary] == ["stop_hook_summary"]
    duration = webapp.children[summary[0]["uuid"]]
    assert [d.get("subtype") for d in duration] == ["turn_duration"]
    assert [c["type"] for c in webapp.children[duration[0]["uuid"]]] == ["user"]  # next prompt


def test_microcompactions_look_like_the_real_ones(webapp: _Scan) -> None:
    micro = [r for r in webapp.recs if r.get("subtype") == "microcompact_boundary"]
    assert len(micro) == 2
    answered = set().union(*map(_result_for, webapp.recs))
    for m in micro:
        md = m["microcompactMetadata"]
        assert md.keys() == {
            "trigger",
            "preTokens",
            "tokensSaved",
            "compactedToolIds",
            "clearedAttachmentUUIDs",
        }
        assert md["trigger"] == "auto" and md["preTokens"] > md["tokensSaved"] > 0
        assert md["compactedToolIds"] and set(md["compactedToolIds"]) <= answered
        assert (m["content"], m["level"], m["isMeta"]) == ("Context microcompacted", "info", False)


def test_hook_progress_records(webapp: _Scan) -> None:
    events = {
        (r.get("data") or {}).get("hookEvent")
        for r in webapp.recs
        if (r.get("data") or {}).get("type") == "hook_progress"
    }
    assert {"PostToolUse", "Stop"} <= events


def test_the_legacy_session_has_an_old_form_compaction() -> None:
    s = _Scan(LEGACY)
    assert s.recs[0]["type"] == "summary" and {r.get("version") for r in s.recs} == {None, "1.0.98"}
    assert not [r for r in s.recs if r.get("subtype") == "compact_boundary"]
    roots = [r for r in s.recs if r.get("type") == "user" and r["parentUuid"] is None]
    assert [r.get("isCompactSummary") for r in roots] == [None, True]
    warn = s.before(roots[1])
    assert warn["type"] == "system"
    assert re.fullmatch(r"\d+% context left until auto-compact", warn["content"])


# --- adfkit reads them as the truth says ----------------------------------------------------


def _open(path: Path) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)
        return adfkit.open(path)


def _uuid_of(agent: adfkit.AgentFile) -> dict[int, str]:
    idx = agent.source.row_index()  # type: ignore[attr-defined]
    return {int(s): str(u) for s, u in zip(idx["seq"], idx["uuid"], strict=True)}


@pytest.mark.parametrize("path", SESSIONS, ids=["webapp", "legacy"])
def test_every_call_has_the_usage_the_truth_says(path: Path) -> None:
    """Side-branch parallel calls: the last block record's output; a response whose final
    block record was never written: the last written one's."""
    truth, agent = _truth(path), _open(path)
    u = agent.usage()
    ids = _uuid_of(agent)
    got = {
        ids[int(r.seq)]: (
            r.tokens_input,
            r.tokens_output,
            r.tokens_cache_read,
            r.tokens_cache_write,
        )
        for r in u.itertuples()
    }
    want = {
        c["uuid"]: (c["input"], c["output"], c["cache_read"], c["cache_write"])
        for c in truth["calls"]
    }
    assert got == want
    shapes = {c["shape"] for c in truth["calls"]}
    assert shapes == (
        {"plain", "side", "interleaved", "final_unwritten"} if path == WEBAPP else {"plain"}
    )


def test_a_final_block_record_never_written_counts_the_last_written_one() -> None:
    truth = _truth(WEBAPP)
    (c,) = [c for c in truth["calls"] if c["shape"] == "final_unwritten"]
    s = _Scan(WEBAPP)
    recs = [r for r in s.recs if _mid(r) == c["message_id"]]
    assert [r["uuid"] for r in recs] == c["records"]  # the final text block is not in the file
    assert c["output"] == recs[-1]["message"]["usage"]["output_tokens"]
    got = _open(WEBAPP).usage()
    seq = {u: q for q, u in _uuid_of(_open(WEBAPP)).items()}[c["uuid"]]
    assert got.loc[got["seq"] == seq, "tokens_output"].tolist() == [c["output"]]


@pytest.mark.parametrize("path", SESSIONS, ids=["webapp", "legacy"])
def test_every_tool_call_is_in_its_row_with_its_result(path: Path) -> None:
    truth, agent = _truth(path), _open(path)
    ids = _uuid_of(agent)
    tc = agent.tool_calls(history=True)
    on_chain = [c for c in truth["calls"] if not c.get("branch")]
    assert tc["tool_use_id"].tolist() == [t for c in on_chain for t in c["tool_use_ids"]]
    assert [ids[int(s)] for s in tc["call_seq"]] == [
        c["uuid"] for c in on_chain for _ in c["tool_use_ids"]
    ]
    assert tc["matched"].all()
    assert set(map(ids.get, tc["result_seq"].astype(int))) <= set(truth["rows"])


@pytest.mark.parametrize("path", SESSIONS, ids=["webapp", "legacy"])
def test_compactions_have_the_recorded_and_computed_token_counts(path: Path) -> None:
    truth, agent = _truth(path), _open(path)
    c = agent.compactions()
    comp = c[c["event"] == "compaction"].reset_index(drop=True)
    want = truth["compactions"]
    rec = [None if pd.isna(v) else int(v) for v in comp["recorded_tokens_before"]]
    assert rec == [t["pre_tokens"] for t in want]
    assert comp["trigger_tokens"].tolist() == [t["trigger_tokens"] for t in want]
    after = [None if pd.isna(v) else int(v) for v in comp["recorded_tokens_after"]]
    assert after == [t["post_tokens"] for t in want]
    micro = c[c["event"] == "microcompaction"]
    assert micro["recorded_tokens_before"].tolist() == [
        m["pre_tokens"] for m in truth["microcompactions"]
    ]


def test_microcompactions_keep_their_saved_tokens_and_tool_ids() -> None:
    truth = _truth(WEBAPP)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = parse_claude_code(WEBAPP)
    micro = [e for e in t.events if e.kind == "microcompaction"]
    assert [(e.line, e.trigger, e.pre_tokens, e.extra["tokens_saved"]) for e in micro] == [
        (m["line"], m["trigger"], m["pre_tokens"], m["tokens_saved"])
        for m in truth["microcompactions"]
    ]
    assert [e.extra["n_tool_ids"] for e in micro] == [
        len(m["compacted_tool_ids"]) for m in truth["microcompactions"]
    ]


@pytest.mark.parametrize("path", SESSIONS, ids=["webapp", "legacy"])
def test_chain_gaps_and_new_roots_are_flagged_where_the_truth_says(path: Path) -> None:
    truth = _truth(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = parse_claude_code(path)
    gaps = sorted((f.line, f.severity, f.detail) for f in t.findings if f.check == "chain_gap")
    assert gaps == [
        (
            g["line"],
            "info",
            f"{g['field']} not in the file; continued from line {g['continued_from_line']}",
        )
        for g in truth["chain_gaps"]
    ]
    roots = [f.line for f in t.findings if f.check == "new_root"]
    assert roots == [r["line"] for r in truth["new_roots"]]
    assert len(truth["chain_gaps"]) == (3 if path == WEBAPP else 0)
    assert len(truth["new_roots"]) == (0 if path == WEBAPP else 1)


def test_an_old_form_compaction_states_no_trigger() -> None:
    """A 1.0.x summary record says nothing of what triggered it: the reader's trigger is None,
    so ``compactions()`` must not report ``auto`` (its docstring: "for a transcript, the trigger
    the record states"). FAILS today: ``_transcript_source`` fills ``e.trigger or "auto"``."""
    c = _open(LEGACY).compactions()
    comp = c[c["event"] == "compaction"]
    assert len(comp) == 1
    assert comp["kind"].isna().all(), comp["kind"].tolist()


@pytest.mark.parametrize("seed", [1, 4, 5])
def test_a_long_session_of_every_shape_reads_as_its_truth(seed: int, tmp_path: Path) -> None:
    """Many turns with side-branch and interleaved parallel calls, Stop-hook gaps, boundaries
    whose logical parent was never written (with and without the hook before), old-form and
    ordinary compactions, microcompactions and rewinds, from the simulator: rows, branches,
    usage, every compaction's swept and preserved rows and prompt sizes, the gaps flagged."""
    import random

    from adfsynth.claude_code import SYSTEM_TOKENS, Session

    rng = random.Random(seed)
    sid = f"5e55a0b1-0000-4000-8000-{seed:012d}"
    s = Session(rng, sid, "/w", "2.1.29", 1772352000000)
    s.stop_hooks = True
    for n in range(1, 50):
        s.turn(
            rng.randint(1, 4),
            stop_gap=rng.random() < 0.15,
            parallel=rng.choice((None, None, "side", "interleaved")),
        )
        if n % 11 == 0:
            s.microcompact(3)
        if n % 17 == 0:
            s.abandoned_branch()
            s.turn(1)  # a compaction right at a rewind is ambiguous in file order (see report)
        if SYSTEM_TOKENS + sum(r.size for r in s.window) > 45_000:
            k = rng.random()
            if k < 0.4:
                s.compact("auto", dangling=True, hook_first=rng.random() < 0.5, minimal=True)
            elif k < 0.6:
                s.old_compact(warn_pct=rng.choice((None, 5)))
            else:
                s.compact("auto", preserve_last=rng.choice((0, 2)))
    path = tmp_path / f"{sid}.jsonl"
    path.write_text(s.text())
    t = parse_claude_code(path, warn=False)
    assert [r.uuid for r in t.rows] == [r.uuid for r in s.rows]
    assert [r.uuid for r in t.other_branches] == [r.uuid for r in s.branch_rows]
    got = t.usage()
    assert got.pop("cache_write_1h", 0) == 0  # the simulator writes 5-minute caching only
    assert got == s.usage
    by = {r.uuid: r.seq for r in t.rows + t.other_branches}
    comp = [e for e in t.events if e.kind == "compaction"]
    assert {c["form"] for c in s.compactions} == {"boundary", "summary_root"}
    assert len(comp) == len(s.compactions) >= 4
    for ev, exp in zip(comp, s.compactions, strict=True):
        assert ev.swept == tuple(sorted(by[u] for u in exp["swept"]))
        assert ev.preserved == tuple(sorted(by[u] for u in exp["preserved"]))
        assert ev.summary_seq == by[exp["summary"]]
        assert (ev.tokens_before, ev.tokens_after) == (exp["tokens_before"], exp["tokens_after"])
    assert len([e for e in t.events if e.kind == "rewind"]) == len(s.rewinds)
    gaps = sorted(f.line for f in t.findings if f.check == "chain_gap")
    assert gaps == sorted(g["line"] for g in s.gaps) and len(gaps) >= 3
    assert not [f for f in t.findings if f.severity != "info"]


@pytest.mark.parametrize("trigger", ["manual", "auto"])
def test_a_segment_kept_by_reference_reads_as_its_truth(trigger: str, tmp_path: Path) -> None:
    """Claude Code 2.1.217's ``/compact`` keeping a preserved segment by reference: the record
    after the summary hangs off the segment's last record, before the boundary. Every
    compaction is found with its swept and preserved rows, and the summary is displayed
    before the preserved rows (the request Claude Code sends)."""
    import random

    from adfsynth.claude_code import Session

    rng = random.Random(7)
    sid = "5e55a0b1-0000-4000-8000-000000000217"
    s = Session(rng, sid, "/w", "2.1.217", 1772352000000)
    for n in range(1, 13):
        s.turn(rng.randint(1, 3))
        if n % 4 == 0:
            s.compact(trigger, preserve_last=2, referenced=True, focus="keep it")
    path = tmp_path / f"{sid}.jsonl"
    path.write_text(s.text())
    t = parse_claude_code(path, warn=False)
    assert [r.uuid for r in t.rows] == [r.uuid for r in s.rows]
    by = {r.uuid: r.seq for r in t.rows}
    comp = [e for e in t.events if e.kind == "compaction"]
    assert [c["preserved_by_reference"] for c in s.compactions] == [True] * 3
    assert len(comp) == len(s.compactions) == 3
    for ev, exp in zip(comp, s.compactions, strict=True):
        assert ev.trigger == exp["trigger"] == trigger
        assert ev.swept == tuple(sorted(by[u] for u in exp["swept"]))
        assert ev.preserved == tuple(sorted(by[u] for u in exp["preserved"])) != ()
        assert ev.summary_seq == by[exp["summary"]]
    h = _open(path).history()
    pos = dict(zip(h["seq"], h["position"], strict=True))
    for ev in comp:
        assert pos[ev.summary_seq] == min(pos[q] for q in ev.preserved) - 1
