"""Compaction replay: compactions(), replay(), context_at(), summary_recall(), refetches().

Expected values come from rows written in the test (hand-built file), from the sample agents'
ground truth (``sample_agents/<name>.truth.json``) and from the real-runtime fixtures' README.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import adfkit
from adfkit import AdfError
from tests.adfbuild import build, result, row, text, use
from tests.conftest import SAMPLES, runtime_fixture, sample

NUDGE = "Context is about to be compacted. Save notes."
FOOT = "\n\n---\nYour loop was compacted. Continue."
S1 = "[Loop Compacted, audited] Read a.md at [S4]." + FOOT
S2 = "[Loop Compacted, audited] Kept a.md." + FOOT
S3 = "[Loop Compacted, audited] Said bye." + FOOT
# estimator characters (ADF_FORMAT.md §9.1) of the two tool calls, by hand:
# fs_read {"path":"a.md"}: 7 + obj = 7 + 2 + (4 + (4 + 2) + 2) = 21
# loop_compact {"instructions":"keep a.md"}: 12 + 2 + (12 + (9 + 2) + 2) = 39
FS_READ = 21
LOOP_COMPACT = 39


def est(*chars: int) -> int:
    """The runtime's estimate of a conversation whose rows have these character counts."""
    return math.ceil((sum(chars) + 16 * len(chars)) / 3.5)


def tok(i: int, o: int) -> dict:
    return {"input": i, "output": o}


def _rows() -> dict[int, dict]:
    r = {
        1: row(1, "user", text("hi")),
        2: row(2, "assistant", text("ok"), tokens=tok(500, 10)),
        3: row(3, "user", text("go on")),
        4: row(4, "assistant", [use("u1", "fs_read", {"path": "a.md"})], tokens=tok(990, 20)),
        5: row(5, "user", [result("u1", "abc")]),
        6: row(6, "user", text(NUDGE)),
        7: row(7, "assistant", text("noted"), tokens=tok(1100, 10)),
        8: row(8, "user", text("next")),
        # compaction 1 (automatic): rows 1..8 archived
        9: row(9, "user", text(S1), tokens=tok(300, 40), model="test-model"),
        10: row(10, "assistant", [use("u2", "fs_read", {"path": "a.md"})], tokens=tok(400, 10)),
        11: row(11, "user", [result("u2", "abc")]),
        12: row(12, "user", text("compact please")),
        13: row(
            13,
            "assistant",
            [use("u3", "loop_compact", {"instructions": "keep a.md"})],
            tokens=tok(450, 10),
        ),
        14: row(14, "user", [result("u3", "Compaction initiated for 6 loop entries.")]),
        # compaction 2 (loop_compact): rows 9..12 archived, tail 13, 14 kept
        15: row(15, "user", text(S2), tokens=tok(200, 30), model="test-model", ord=12),
        16: row(16, "assistant", text("resumed"), tokens=tok(600, 10)),
        17: row(17, "user", text("bye")),
        18: row(18, "assistant", text("bye"), tokens=tok(1200, 10)),
        19: row(19, "user", text("more")),
        20: row(20, "user", text(NUDGE)),
        21: row(21, "assistant", text("saved"), tokens=tok(1300, 10)),
        22: row(22, "user", text("again")),
        # compaction 3 (automatic): 15, 13, 14, 16..22 archived
        23: row(23, "user", text(S3), tokens=tok(350, 45), model="test-model"),
        24: row(24, "assistant", text("fine"), tokens=tok(500, 5)),
    }
    return r


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """A schema-28 file with three compactions (threshold 1000, loop audit on)."""
    r = _rows()
    p = tmp_path_factory.mktemp("replay") / "three.adf"
    build(
        p,
        loop=[r[23], r[24]],
        audit=[
            {"source": "loop", "rows": [r[s] for s in range(1, 9)]},
            {"source": "loop", "rows": [r[s] for s in (9, 10, 11, 12)]},
            {"source": "loop", "rows": [r[s] for s in (15, 13, 14, 16, 17, 18, 19, 20, 21, 22)]},
        ],
    )
    with adfkit.open_adf(p) as agent:
        yield agent


# chars of every conversation row of the hand-built file (text length, or the tool sizes above)
CH = {
    1: 2, 2: 2, 3: 5, 4: FS_READ, 5: 3, 6: len(NUDGE), 7: 5, 8: 4, 9: len(S1), 10: FS_READ,
    11: 3, 12: 14, 13: LOOP_COMPACT, 14: 40, 15: len(S2), 16: 7, 17: 3, 18: 3, 19: 4,
    20: len(NUDGE), 21: 5, 22: 5, 23: len(S3),
}  # fmt: skip


def test_hand_built_context_windows(three):
    """Every model call's window and its estimate, written out from the rows above."""
    windows = {
        2: (1,),
        4: (1, 2, 3),
        7: (1, 2, 3, 4, 5, 6),
        10: (9,),
        13: (9, 10, 11, 12),
        16: (15, 13, 14),
        18: (15, 13, 14, 16, 17),
        21: (15, 13, 14, 16, 17, 18, 19, 20),
        24: (23,),
    }
    r = three.replay().set_index("seq")
    assert list(r.index) == list(windows)
    for call, seqs in windows.items():
        assert r.at[call, "context_seqs"] == seqs
        assert r.at[call, "est_tokens"] == est(*(CH[s] for s in seqs))
    assert r.at[7, "est_tokens"] == est(
        2,
        2,
        5,
        21,
        3,
        45,
    )
    assert r.at[7, "tokens_total"] == 1110
    assert r.at[7, "report_minus_est"] == 1100 - r.at[7, "est_tokens"]
    # chatTokens at the check before the call: the previous call's input + output
    assert r.at[4, "chat_tokens_before"] == 510
    assert r.at[7, "chat_tokens_before"] == 1010
    assert r.at[10, "chat_tokens_before"] == est(len(S1))  # the estimate after compaction
    assert r.at[16, "chat_tokens_before"] == est(len(S2), LOOP_COMPACT, 40)  # summary + tail
    assert (r["threshold"] == 1000).all()
    assert r.at[18, "over_threshold"] and not r.at[16, "over_threshold"]
    assert list(r["epoch"]) == [0, 0, 0, 1, 1, 2, 2, 2, 3]


def test_replay_columns_and_dtypes(three):
    """replay() has the documented columns and dtypes, and composition() is a view of it."""
    from adfkit import schema

    r = three.replay()
    assert {c: str(r[c].dtype) for c in r.columns} == schema.REPLAY
    assert list(r.columns) == list(schema.REPLAY)
    comp = three.composition()
    assert list(comp.columns) == list(schema.COMPOSITION)
    assert comp["context_chars"].tolist() == r["est_chars"].tolist()
    assert comp["n_messages"].tolist() == r["n_context_rows"].tolist()
    # no system prompt or dynamic instructions in this file: the conversation is everything
    assert comp["total_tokens"].tolist() == pytest.approx(
        r[["summary_tokens", "message_tokens", "assistant_tokens", "tool_result_tokens"]]
        .sum(axis=1)
        .tolist()
    )
    # call 16 sees the summary S2 and the preserved tail 13 (loop_compact), 14 (its result)
    assert r.set_index("seq").at[16, "summary_tokens"] == pytest.approx((len(S2) + 16) / 3.5)
    assert r.set_index("seq").at[16, "assistant_tokens"] == pytest.approx((LOOP_COMPACT + 16) / 3.5)
    assert r.set_index("seq").at[16, "tool_result_tokens"] == pytest.approx((40 + 16) / 3.5)


def test_hand_built_context_at(three):
    ctx = three.context_at(16)
    assert ctx["seq"].tolist() == [15, 13, 14]
    assert set(ctx["part"]) == {"message"}
    assert ctx["kind"].tolist() == ["compaction_summary", "assistant", "tool_result"]
    with pytest.raises(AdfError, match="not a model call"):
        three.context_at(17)


def test_hand_built_compactions(three):
    c = three.compactions()
    assert c["kind"].tolist() == ["auto", "manual", "auto"]
    assert c["summary_seq"].tolist() == [9, 15, 23]
    assert c["boundary_seq"].tolist() == [8, 14, 22]
    assert [tuple(x) for x in c["audit_ids"]] == [(1,), (2,), (3,)]
    assert c["audited"].tolist() == [True, True, True]
    assert c["swept_seqs"].tolist() == [
        (1, 2, 3, 4, 5, 6, 7, 8),
        (9, 10, 11, 12),
        (15, 13, 14, 16, 17, 18, 19, 20, 21, 22),
    ]
    assert c["swept_start"].tolist() == [1, 9, 13]
    assert c["swept_end"].tolist() == [8, 12, 22]
    assert c["n_swept"].tolist() == [8, 4, 10]
    assert c["tail_seqs"].tolist() == [(), (13, 14), ()]
    assert c["instructions"].tolist()[1] == "keep a.md"
    assert c["instructions"].isna().tolist() == [True, False, True]
    swept = [range(1, 9), (9, 10, 11, 12), (15, 13, 14, 16, 17, 18, 19, 20, 21, 22)]
    summary = [S1, S2, S3]
    for i in range(3):
        chars = [CH[s] for s in swept[i]]
        assert c.at[i, "swept_chars"] == sum(chars)
        assert c.at[i, "swept_tokens"] == est(*chars)
        assert c.at[i, "summary_chars"] == len(summary[i])
        assert c.at[i, "summary_tokens"] == est(len(summary[i]))
        assert c.at[i, "compression_ratio"] == pytest.approx(est(*chars) / est(len(summary[i])))
    assert c["compaction_input"].tolist() == [300, 200, 350]
    assert c["compaction_output"].tolist() == [40, 30, 45]
    # the last call before each event: 7 (1100 + 10), 13 (450 + 10), 21 (1300 + 10)
    assert c["trigger_tokens"].tolist() == [1110, 460, 1310]


def test_hand_built_recall_and_refetch(three):
    rec = three.summary_recall(0)
    got = {
        (k, v): bool(r) for k, v, r in zip(rec["kind"], rec["value"], rec["recalled"], strict=True)
    }
    # S1 says "Read a.md at [S4]": the path is kept; the seq of the fs_read call and the
    # tool's name are adfkit's identifiers, not items
    assert got == {("path", "a.md"): True}
    c = three.compactions()
    assert c.at[0, "recall_path"] == 1.0 and c.at[0, "recall"] == 1.0
    ref = three.refetches()
    # seq 10 repeats fs_read {"path": "a.md"} of seq 4, which compaction 0 swept
    assert ref[["event_id", "seq", "swept_seq", "result_seq"]].values.tolist() == [[0, 10, 4, 11]]
    assert ref.at[0, "result_tokens"] == est(3)
    assert ref.at[0, "call_tokens_input"] == 400
    assert c["n_refetches"].tolist() == [1, 0, 0]
    with pytest.raises(AdfError, match="no compaction event 7"):
        three.summary_recall(7)


def test_unaudited_compaction_has_unknown_sizes(tmp_path):
    """Audit off: the event is listed, its swept rows and sizes unknown (NA), not skipped."""
    r = _rows()
    p = build(
        tmp_path / "forgot.adf",
        loop=[r[23], r[24]],
        config={"context": {"compact_threshold": 1000, "audit": {"loop": False}}},
        highest_seq=24,
    )
    with adfkit.open_adf(p) as agent:
        c = agent.compactions()
        assert len(c) == 1
        assert c.at[0, "summary_seq"] == 23 and not c.at[0, "audited"]
        assert c["swept_start"].isna().all() and c["swept_tokens"].isna().all()
        assert c.at[0, "summary_tokens"] == est(len(S3))
        with pytest.raises(AdfError, match="no summary recall"):
            agent.summary_recall(0)


# --- the sample agents' ground truth --------------------------------------------------------

NAMES = ["long-runner", "messenger", "forgetful", "mind-keeper", "clean", "legacy-v27"]


def _truth(name: str) -> dict:
    return json.loads((SAMPLES / f"{name}.truth.json").read_text())


@pytest.mark.parametrize("name", NAMES)
def test_sample_compactions_match_truth(name):
    truth = _truth(name)
    with adfkit.open_adf(sample(name)) as agent:
        c = agent.compactions()
        present = set(agent.history()["seq"].astype(int))
    lost = set(truth["lost_seqs"])
    visible = [t for t in truth["compactions"] if t["audited"] or t["summary_seq"] not in lost]
    comp = c[c["event"] == "compaction"]
    assert len(comp) == len(visible)
    assert len(c) - len(comp) == len(truth["clears"])
    for t, (_, e) in zip(visible, comp.iterrows(), strict=True):
        assert e["kind"] == t["kind"]
        assert bool(e["audited"]) == t["audited"]
        assert (None if e["instructions"] is pd.NA else e["instructions"]) == t["instructions"]
        if t["summary_seq"] in present:
            assert e["summary_seq"] == t["summary_seq"]
        else:
            assert e["summary_lost"]
        assert list(e["tail_seqs"]) == t["tail_seqs"]
        if t["audited"]:
            assert list(e["swept_seqs"]) == t["swept_seqs"]
            assert e["audit_ids"] == (t["audit_id"],)
        else:
            assert e["swept_seqs"] == ()
            assert e["swept_end"] == max(t["swept_seqs"])
            if e["swept_start"] is not pd.NA:
                assert e["swept_start"] == min(t["swept_seqs"])
                assert e["n_swept"] == len(t["swept_seqs"])
    for t, (_, e) in zip(truth["clears"], c[c["event"] == "clear"].iterrows(), strict=True):
        assert e["audit_ids"] == tuple(t["audit_ids"])
        assert set(e["swept_seqs"]) == set(t["slice_seqs"]) | set(t["rest_seqs"])


@pytest.mark.parametrize("name", ["long-runner", "clean", "mind-keeper", "messenger"])
def test_sample_summary_recall_matches_truth(name):
    """The synthesizer records which swept paths/URLs each summary names."""
    truth = _truth(name)
    with adfkit.open_adf(sample(name)) as agent:
        c = agent.compactions()
        by_summary = {
            int(s): int(i)
            for s, i in zip(c["summary_seq"], c["event_id"], strict=True)
            if s is not pd.NA
        }
        checked = 0
        for t in truth["compactions"]:
            if not t["audited"] or t["summary_seq"] not in by_summary:
                continue
            rec = agent.summary_recall(by_summary[t["summary_seq"]])
            got = {
                v: bool(r)
                for k, v, r in zip(rec["kind"], rec["value"], rec["recalled"], strict=True)
                if k in ("path", "url")
            }
            for p in t["mentioned_paths"]:
                assert got[p] is True, p
            for p in t["omitted_paths"]:
                assert got[p] is False, p
            # tool names and cited seqs are adfkit's identifiers, never items
            values = set(rec["value"])
            assert not values & set(t["mentioned_tools"])
            assert not values & {str(s) for s in t["cited_seqs"]}
            checked += 1
        assert checked >= 1


def test_sample_refetches_include_the_planted_ones():
    truth = _truth("long-runner")
    with adfkit.open_adf(sample("long-runner")) as agent:
        ref = agent.refetches()
        c = agent.compactions()
        calls = agent.tool_calls(history=True)
    got = set(zip(ref["summary_seq"], ref["seq"], ref["tool_name"], strict=True))
    for p in truth["planted"]["refetches"]:
        assert (p["after_summary_seq"], p["refetch_seq"], p["tool"]) in got
    # every reported refetch really repeats a call that its compaction swept
    inputs = dict(
        zip(
            zip(calls["call_seq"], calls["tool_name"], strict=True),
            calls["tool_input"],
            strict=True,
        )
    )
    for _, r in ref.iterrows():
        ev = c.loc[int(r["event_id"])]
        assert r["swept_seq"] in ev["swept_seqs"] and r["seq"] > ev["boundary_seq"]
        a = json.loads(inputs[(r["swept_seq"], r["tool_name"])])
        b = json.loads(inputs[(r["seq"], r["tool_name"])])
        assert a == b
    assert c["n_refetches"].sum() == len(ref)


def test_sample_threshold_and_windows():
    """Every call's window holds only rows created before it, and never a swept row."""
    with adfkit.open_adf(sample("long-runner")) as agent:
        r = agent.replay()
        c = agent.compactions()
    assert (r["threshold"] == 9000).all()
    bounds = c["boundary_seq"].tolist()
    for seq, ctx in zip(r["seq"], r["context_seqs"], strict=True):
        assert all(q < seq for q in ctx)
        for b, swept in zip(bounds, c["swept_seqs"], strict=True):
            if seq > b:
                assert not set(ctx) & set(swept)


# --- the real-runtime fixtures --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "n_comp", "n_clear"),
    [
        ("long-runner", 8, 0),
        ("audited-messenger", 1, 1),
        ("manual-compact", 2, 0),
        ("mind-keeper", 7, 0),
        ("forgetful", 1, 0),
        ("big-runner", 181, 0),
    ],
)
def test_fixture_event_counts(name, n_comp, n_clear):
    with adfkit.open_adf(runtime_fixture(name)) as agent:
        c = agent.compactions()
        audit = agent.audit()
    assert (c["event"] == "compaction").sum() == n_comp
    assert (c["event"] == "clear").sum() == n_clear
    loops = audit[audit["source"] == "loop"]
    ranges = {
        int(i): (int(a), int(b))
        for i, a, b in zip(loops["id"], loops["start_seq"], loops["end_seq"], strict=True)
    }
    # every audited swept range is exactly the range of its audit row(s)
    for _, e in c[c["audited"].fillna(False)].iterrows():
        lo = min(ranges[i][0] for i in e["audit_ids"])
        hi = max(ranges[i][1] for i in e["audit_ids"])
        assert (e["swept_start"], e["swept_end"]) == (lo, hi)
    assert sorted(i for ids in c["audit_ids"] for i in ids) == sorted(ranges)


def test_fixture_kinds_and_instructions():
    with adfkit.open_adf(runtime_fixture("manual-compact")) as agent:
        c = agent.compactions()
    assert c["kind"].tolist() == ["manual", "manual"]
    assert c["instructions"].notna().all()
    assert c["n_tail"].tolist() == [2, 2]
    with adfkit.open_adf(runtime_fixture("long-runner")) as agent:
        c = agent.compactions()
    assert (c["kind"] == "auto").all() and (c["threshold"] == 9000).all()
    assert (c["trigger_tokens"] >= 9000).all()
    with adfkit.open_adf(runtime_fixture("mind-keeper")) as agent:
        c = agent.compactions()
    # one compaction ran with its audit off: listed, its sizes unknown
    off = c[~c["audited"].fillna(False)]
    assert len(off) == 1 and off["swept_tokens"].isna().all()
    with adfkit.open_adf(runtime_fixture("audited-messenger")) as agent:
        c = agent.compactions()
    assert c["kind"].tolist() == ["clear", "manual"]
    assert c.at[0, "audit_ids"] == (11, 12)


@pytest.mark.parametrize(
    ("warning", "before", "source"), [(True, 1000, "warning_text"), (False, 2000, "assumed")]
)
def test_threshold_follows_sys_update_config(tmp_path, warning, before, source):
    """An approved sys_update_config sets 2000 from seq 4 on. Before it, the threshold is read
    from a context-warning text when there is one, else the current config value is assumed."""
    dyn = "[Context: dynamic_instructions] APPROACHING CONTEXT LIMIT (threshold: 1,000)."
    change = {"path": "context.compact_threshold", "value": 2000}
    loop = [
        row(1, "user", text(dyn if warning else "hello")),
        row(2, "assistant", [use("c1", "sys_update_config", change)], tokens=tok(100, 5)),
        row(3, "user", [result("c1", "Updated context.compact_threshold.")]),
        row(4, "assistant", text("done"), tokens=tok(120, 5)),
    ]
    p = build(tmp_path / "cfg.adf", loop=loop, config={"context": {"compact_threshold": 2000}})
    with adfkit.open_adf(p) as agent:
        r = agent.replay()
    assert r["threshold"].tolist() == [before, 2000]
    assert r["threshold_source"].tolist() == [source, "sys_update_config"]


# --- work done once per file (issue 38) -----------------------------------------------------


def test_replay_builds_no_tool_call_table_without_a_config_call():
    """The threshold schedule needs the ``sys_update_config`` calls only: an agent whose rows
    name no such call (and no such task) gets its replay without the tool-call table (every
    block of the history), with the same empty config changes; one with a call still finds it."""
    from adfkit._analysis.tables import _TOOL_CALLS

    with adfkit.open_adf(sample("long-runner")) as agent:
        agent.replay()
        assert not any(k is _TOOL_CALLS for k, _ in agent.source.memo._values)
        assert agent.config_changes().empty
    with adfkit.open_adf(sample("mind-keeper")) as agent:
        agent.replay()
        assert any(k is _TOOL_CALLS for k, _ in agent.source.memo._values)
        assert agent.config_changes()["seq"].notna().sum() == 1


def test_replay_and_observe_find_the_reappended_copies_once(monkeypatch):
    """The copies a fallback compaction re-appended (legacy-v27: 121 and 122) are found once
    per agent for the replay and observe(), and both still leave them out."""
    from adfkit._analysis import observe as observe_mod
    from adfkit._analysis import replay as replay_mod

    found = []

    def counted(h):
        found.append(len(h))
        return reappended_copies(h)

    reappended_copies = replay_mod.reappended_copies
    monkeypatch.setattr(replay_mod, "reappended_copies", counted)
    monkeypatch.setattr(observe_mod, "reappended_copies", counted)
    with adfkit.open_adf(sample("legacy-v27")) as agent:
        calls = agent.replay()["seq"].tolist()
        obs = agent.observe()
    assert len(found) == 1
    assert 121 not in calls and 122 not in calls
    assert not obs.calls["seq"].isin([121, 122]).any()


def test_replay_and_observe_build_with_the_collector_paused(monkeypatch):
    """The walk, the replay's frame and observe()'s tally make many small acyclic objects:
    each runs with the cyclic collector off, and the collector is on again after."""
    import gc

    from adfkit._analysis import observe as observe_mod
    from adfkit._analysis import replay as replay_mod

    seen = {}

    def watch(module, name):
        inner = getattr(module, name)

        def wrapped(*args, **kwargs):
            seen[name] = gc.isenabled()
            return inner(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapped)

    watch(replay_mod, "_walk")
    watch(replay_mod, "_replay_frame")
    watch(observe_mod, "_observation")
    with adfkit.open_adf(sample("long-runner")) as agent:
        agent.replay()
        agent.observe()
    assert seen == {"_walk": False, "_replay_frame": False, "_observation": False}
    assert gc.isenabled()


def test_replay_rows_hold_the_history_values():
    """Each row of the walk (built by position, in the order of ReplayRow's fields) holds its
    history row's values, field by field."""
    from adfkit._analysis.replay import _rows

    with adfkit.open_adf(sample("long-runner")) as agent:
        h = agent.history()
        rows = _rows(h)

    def val(v):
        return None if pd.isna(v) else v

    assert len(rows) == len(h)
    for i, r in enumerate(h.itertuples(index=False)):
        got = rows[int(r.seq)]
        assert (got.seq, got.kind, got.sub) == (r.seq, r.kind, val(r.subkind))
        assert (got.chars, got.media) == (r.chars, r.media_chars)
        assert (got.ord, got.key) == (val(r.ord), r.seq if pd.isna(r.ord) else r.ord)
        assert got.audit_id == val(r.audit_id)
        assert (got.tin, got.tout, got.ttot, got.cw, got.cr) == tuple(
            val(v)
            for v in (
                r.tokens_input,
                r.tokens_output,
                r.tokens_total,
                r.tokens_cache_write,
                r.tokens_cache_read,
            )
        )
        assert got.call == (r.kind == "assistant")
        assert (got.pos, got.content) == (i, r.content)
        if not got.conv:
            assert got.part == -1
        elif r.kind in ("assistant", "tool_result"):
            assert got.part == {"assistant": 2, "tool_result": 3}[r.kind]
    # the comparison is not vacuous: calls with token counts that differ
    assert any(r.tin is not None and r.tout != r.tin for r in rows.values())


@pytest.mark.parametrize("which", ["three", "long-runner"])
def test_replay_state_holds_each_calls_part_sums_in_one_array(three, which):
    """The walk keeps each call's characters and media per part in one flat int64 array (in
    call order: the parts' chars, then their media), not a tuple of pairs per call (half a
    million objects at big-runner x16); the sums are those of the call's window, row by row."""
    import array

    from adfkit._analysis.replay import PARTS, replay_state

    agent = three if which == "three" else adfkit.open_adf(sample("long-runner"))
    st = replay_state(agent.source)
    assert isinstance(st.parts, array.array) and st.parts.typecode == "q"
    p = len(PARTS)
    assert len(st.parts) == 2 * p * len(st.calls) > 0
    for i, c in enumerate(st.calls):
        chars, media = [0] * p, [0] * p
        for q in st.window(c):
            r = st.rows[q]
            chars[r.part] += r.chars + 16
            media[r.part] += r.media
        assert list(st.parts[2 * p * i : 2 * p * (i + 1)]) == chars + media
        assert st.est[c][:2] == (sum(chars), sum(media))
    k = PARTS.index("assistant_tokens")
    parts = st.parts
    assert agent.replay()["assistant_tokens"].tolist() == [
        parts[2 * p * i + k] / 3.5 + parts[2 * p * i + p + k] / 100 for i in range(len(st.calls))
    ]
