"""Counterfactual replay: simulate() and simulate_sweep() under other memory policies."""

from __future__ import annotations

import json

import pytest

import adfkit
from adfkit import (
    SlidingWindowPolicy,
    ThresholdPolicy,
    TrimToolResultsPolicy,
    simulate,
    simulate_sweep,
)
from tests.conftest import SAMPLES, runtime_fixture, sample
from tests.test_replay import NUDGE, S1, S2, S3, est, three  # noqa: F401 - fixture

# the hand-built file's model calls (seq: reported input) and compaction calls, from its rows
CALL_INPUT = {2: 500, 4: 990, 7: 1100, 10: 400, 13: 450, 16: 600, 18: 1200, 21: 1300, 24: 500}
COMPACTION_INPUT = 300 + 200 + 350


def test_runtime_policy_reproduces_hand_built(three):  # noqa: F811
    res = simulate(three, ThresholdPolicy())
    ev = res.events
    assert ev["kind"].tolist() == ["auto", "manual", "auto"]
    assert ev["boundary_seq"].tolist() == [8, 14, 22]
    assert ev["before_call"].tolist() == [10, 16, 24]
    assert ev["summary_seq"].tolist() == [9, 15, 23]
    assert ev["matches_real"].all() and ev["simulated"].all()
    assert ev["dropped_seqs"].tolist() == [
        (1, 2, 3, 4, 5, 6, 7, 8),
        (9, 10, 11, 12),
        (15, 13, 14, 16, 17, 18, 19, 20, 21, 22),
    ]
    assert ev["kept_seqs"].tolist() == [(), (13, 14), ()]
    calls = res.calls.set_index("seq")
    assert calls["tokens_input_sim"].to_dict() == CALL_INPUT
    assert (calls["est_tokens_sim"] == calls["est_tokens_real"]).all()
    assert res.summary["n_compactions"] == res.summary["n_real_compactions"] == 3
    total = sum(CALL_INPUT.values()) + COMPACTION_INPUT
    assert res.summary["tokens_sent"] == res.summary["tokens_sent_actual"] == total


def test_lower_threshold_compacts_earlier(three):  # noqa: F811
    """Threshold 500, loop_compact ignored. After call 2 (510 >= 500) the check before call 4
    appends a nudge (the agent's own nudge size, 45 chars) and allows the grace call; call 4 is
    modelled as 990 + (est with the nudge - est without) = 990 + 34 - 17 = 1007 input, 1027 with
    output; the check before call 7 then compacts rows 1..5 (and the nudge)."""
    res = simulate(three, ThresholdPolicy(500, manual=False))
    calls = res.calls.set_index("seq")
    assert calls.at[4, "est_tokens_real"] == est(2, 2, 5) == 17
    assert calls.at[4, "est_tokens_sim"] == est(2, 2, 5, len(NUDGE)) == 34
    assert calls.at[4, "tokens_input_sim"] == 1007
    assert calls.at[4, "tokens_total_sim"] == 1027
    first = res.events.iloc[0]
    assert first["kind"] == "auto"
    assert first["before_call"] == 7 and first["boundary_seq"] == 5
    assert first["dropped_seqs"] == (1, 2, 3, 4, 5)
    assert not first["matches_real"]  # no real compaction there: the summary size is estimated
    mean_summary = round((len(S1) + len(S2) + len(S3)) / 3)
    assert first["summary_tokens"] == est(mean_summary)
    assert "manual" not in set(res.events["kind"])
    assert res.summary["n_compactions"] > 3


def test_sliding_window(three):  # noqa: F811
    """Window of 10 estimated tokens: before call 4 the context is rows 1, 2, 3 (17 tokens);
    evicting row 1 leaves 12, evicting row 2 leaves est(5) = 6."""
    res = simulate(three, SlidingWindowPolicy(10))
    first = res.events.iloc[0]
    assert first["kind"] == "evict" and first["before_call"] == 4
    assert first["dropped_seqs"] == (1, 2)
    assert first["dropped_tokens"] == est(2, 2)
    calls = res.calls.set_index("seq")
    assert calls.at[4, "est_tokens_sim"] == est(5) == 6
    assert calls.at[4, "tokens_input_sim"] == 990 - (17 - 6)
    # no threshold: no nudge, no automatic compaction; loop_compact is still replayed
    assert set(res.events["kind"]) == {"evict", "manual"}


def test_trim_tool_results(three):  # noqa: F811
    """Results cut to 1 character: before call 7 the result "abc" (row 5) loses 2 characters,
    and the nudge (a runtime artifact) is gone since no threshold policy applies."""
    res = simulate(three, TrimToolResultsPolicy(1, keep_recent=0))
    first = res.events.iloc[0]
    assert first["kind"] == "trim" and first["before_call"] == 7
    assert first["dropped_seqs"] == (5,)
    calls = res.calls.set_index("seq")
    assert calls.at[7, "est_tokens_sim"] == est(2, 2, 5, 21, 1)
    assert calls.at[7, "est_tokens_real"] == est(2, 2, 5, 21, 3, len(NUDGE))
    assert calls.at[7, "tokens_input_sim"] == 1100 + est(2, 2, 5, 21, 1) - est(
        2, 2, 5, 21, 3, len(NUDGE)
    )
    # trimming then the runtime's policy: compactions still happen
    res2 = simulate(three, TrimToolResultsPolicy(1, keep_recent=0, then=ThresholdPolicy()))
    assert {"trim", "auto", "manual"} <= set(res2.events["kind"])


def test_bad_policy(three):  # noqa: F811
    with pytest.raises(TypeError, match="policy must be one of"):
        simulate(three, {"threshold": 5})


# --- sample agents --------------------------------------------------------------------------

NAMES = ["long-runner", "messenger", "forgetful", "mind-keeper", "clean", "legacy-v27"]


@pytest.mark.parametrize("name", NAMES)
def test_runtime_policy_reproduces_samples(name):
    truth = json.loads((SAMPLES / f"{name}.truth.json").read_text())
    lost = set(truth["lost_seqs"])
    # compactions the file keeps whole: audited, summary not discarded
    expected = [t for t in truth["compactions"] if t["audited"] and t["summary_seq"] not in lost]
    res = simulate(sample(name), ThresholdPolicy())
    sim = res.events[res.events["simulated"] & res.events["kind"].isin(["auto", "manual"])]
    assert sim["summary_seq"].tolist() == [t["summary_seq"] for t in expected]
    assert sim["kind"].tolist() == [t["kind"] for t in expected]
    assert [list(d) for d in sim["dropped_seqs"]] == [t["swept_seqs"] for t in expected]
    c = res.calls
    assert (c["tokens_input_sim"] == c["tokens_input_real"]).all()
    assert res.summary["tokens_sent"] == res.summary["tokens_sent_actual"]


def test_sweep_on_sample():
    sweep = simulate_sweep(sample("clean"), [4000, 8000, 16000, 64000])
    assert sweep["threshold"].tolist() == [4000, 8000, 16000, 64000]
    at_real = sweep.set_index("threshold").loc[8000]
    assert at_real["n_compactions"] == 2 == at_real["n_real_compactions"]
    assert at_real["tokens_sent"] == at_real["tokens_sent_actual"]
    assert sweep["n_compactions"].is_monotonic_decreasing
    assert sweep.set_index("threshold").at[64000, "n_compactions"] == 0
    # never compacting sends more: every call carries the whole history
    assert sweep.set_index("threshold").at[64000, "tokens_saved"] < 0


# --- the real-runtime fixtures --------------------------------------------------------------


@pytest.mark.parametrize(("name", "n"), [("long-runner", 8), ("big-runner", 181)])
def test_runtime_policy_reproduces_fixtures(name, n):
    with adfkit.open_adf(runtime_fixture(name)) as agent:
        assert agent.compact_threshold() == 9000
        res = simulate(agent, ThresholdPolicy())
        real = agent.compactions()
    sim = res.events[res.events["simulated"]]
    assert len(sim) == n == len(real)
    assert sim["boundary_seq"].tolist() == real["boundary_seq"].tolist()
    assert sim["summary_seq"].tolist() == real["summary_seq"].tolist()
    assert sim["dropped_seqs"].tolist() == real["swept_seqs"].tolist()
    assert sim["kind"].tolist() == real["kind"].tolist()
    c = res.calls
    assert (c["tokens_total_sim"] == c["tokens_total_real"]).all()


def test_fixture_incomplete_history_is_replayed_as_recorded():
    """mind-keeper ran one compaction with loop audit off: that one and the one whose summary it
    discarded are applied as recorded; the other five are reproduced."""
    res = simulate(runtime_fixture("mind-keeper"), ThresholdPolicy())
    assert res.events["kind"].tolist().count("recorded") == 2
    assert res.summary["n_compactions"] == 5


# --- each policy's decision, on a hand-built state -------------------------------------------


class _State:
    """A stand-in for the simulator's state: the estimate is the conversation's characters
    (easy to follow by hand); each move is recorded."""

    def __init__(self, *, chat=0, flushed=False, grace=False, live=(), recorded=None):
        from adfkit._analysis.simulate import _Window

        self.chat, self.flushed, self.grace = chat, flushed, grace
        self.live = _Window(list(live))
        self.recorded = recorded
        self.moves = []
        self.flush_nudge = True  # the ADF runtime's: the nudge and a grace call first

    def est(self, rows=None):
        return sum(r.chars for r in (self.live if rows is None else rows) if r.conv)

    def recorded_threshold(self, seq):
        return self.recorded

    def compact(self, kind, *, call, keep, real_summary, threshold):
        self.moves.append((kind, call, keep, threshold))

    def send_nudge(self, nudge):
        self.moves.append(("nudge",))
        self.flushed = self.grace = True

    def add_removal(self, kind, call, rows, tokens, threshold):
        self.moves.append((kind, call, [r.seq for r in rows], tokens, threshold))


def _srow(seq, kind, chars, tr=None):
    from adfkit._analysis.simulate import _SRow

    return _SRow(seq, kind, True, chars, 0, tr)


def test_threshold_policy_nudges_then_compacts_then_guards():
    pol = ThresholdPolicy(1000, preserve=2)
    below = _State(chat=999)
    assert pol.before_call(below, 7, None, "S") == "S" and below.moves == []
    first = _State(chat=1000)  # reached: the nudge first, the summary is kept for later
    assert pol.before_call(first, 7, None, "S") == "S"
    assert first.moves == [("nudge",)] and first.flushed and first.grace
    then = _State(chat=1200, flushed=True)  # reached after the nudge: compact, keep 2
    assert pol.before_call(then, 9, None, "S") is None
    assert then.moves == [("auto", 9, 2, 1000)]
    # the guard: max(chat, estimate) against the threshold, or min(t + 30000, 1.3 t) in grace
    guard = _State(chat=10, live=[_srow(1, "message", 1000)])
    pol.preflight(guard, 9, None)
    assert guard.moves == [("preflight", 9, 2, 1000)]
    grace = _State(chat=10, grace=True, live=[_srow(1, "message", 1299)])
    pol.preflight(grace, 9, None)
    assert grace.moves == []
    grace.live[0].chars = 1300  # floor(1000 * 1.3)
    pol.preflight(grace, 9, None)
    assert grace.moves == [("preflight", 9, 2, 1000)]
    # no threshold of its own: the one in force; none in force: never compacts
    assert ThresholdPolicy().threshold_at(_State(recorded=500), 3) == 500
    never = _State(chat=10**9, flushed=True, live=[_srow(1, "message", 10**9)])
    assert ThresholdPolicy().before_call(never, 3, None, "S") == "S"
    ThresholdPolicy().preflight(never, 3, None)
    assert never.moves == []
    assert ThresholdPolicy(manual=False).replays_manual() is False


def test_sliding_window_evicts_oldest_with_their_tool_results():
    rows = [
        _srow(1, "message", 100),
        _srow(2, "assistant", 100),
        _srow(3, "tool_result", 100),
        _srow(4, "message", 100),
    ]
    st = _State(live=rows)
    pol = SlidingWindowPolicy(250)
    assert pol.before_call(st, 5, None, "S") == "S"  # no summary of its own: kept
    # 400 > 250: row 1 goes; 300 > 250: row 2 goes, and its tool result with it
    assert st.moves == [("evict", 5, [1, 2, 3], 300, 250)]
    assert [r.seq for r in st.live] == [4]
    one = _State(live=[_srow(9, "message", 10_000)])
    pol.before_call(one, 10, None, None)
    assert one.moves == [] and len(one.live) == 1  # the last conversation row always stays
    assert pol.threshold_at(_State(recorded=777), 1) == 777
    assert SlidingWindowPolicy(5, manual=False).replays_manual() is False


def test_trim_cuts_older_tool_results_once_then_applies_then():
    rows = [_srow(1, "tool_result", 50, [50]), _srow(2, "tool_result", 5, [5])]
    rows.append(_srow(3, "tool_result", 40, [40]))  # the newest: left whole
    st = _State(chat=2000, flushed=True, live=rows)
    pol = TrimToolResultsPolicy(10, keep_recent=1, then=ThresholdPolicy(1000))
    assert pol.before_call(st, 4, None, "S") is None  # then: over the threshold, compacts
    assert st.moves == [("trim", 4, [1], 40, None), ("auto", 4, 0, 1000)]
    assert [r.chars for r in rows] == [10, 5, 40]
    st.moves.clear()
    alone = TrimToolResultsPolicy(10, keep_recent=1)
    assert alone.before_call(st, 6, None, "S") == "S"  # already trimmed: nothing again
    assert st.moves == []
    assert pol.threshold_at(_State(recorded=5), 1) == 1000
    assert alone.threshold_at(_State(recorded=5), 1) == 5
    assert alone.replays_manual() is True
    assert (
        TrimToolResultsPolicy(1, then=SlidingWindowPolicy(9, manual=False)).replays_manual()
        is False
    )


@pytest.mark.parametrize(
    "policy",
    [SlidingWindowPolicy(10**9), ThresholdPolicy(10**9), SlidingWindowPolicy(5_000)],
    ids=["window-holds-all", "threshold-never", "window-evicts"],
)
def test_each_call_costs_the_rows_that_changed_not_the_window(tmp_path, monkeypatch, policy):
    """Issue 38: the simulator keeps the window's sums as rows come and go; before, every call
    summed the whole window two or three times (quadratic in the calls: simulate_calls 26x
    its parse floor on big-runner). Counted, not timed: every read of a row's ``conv`` (each
    sum over the window reads it once per row), ~3 n**2 of them before."""
    from adfkit._analysis import simulate as sim_mod
    from tests.adfbuild import build, row, text

    n = 300
    rows = []
    for i in range(n):
        rows.append(row(2 * i + 1, "user", text(f"task {i} " + "x" * 200)))
        rows.append(
            row(2 * i + 2, "assistant", text(f"done {i}"), tokens={"input": 9, "output": 1})
        )
    f = build(tmp_path / "long.adf", loop=rows)
    reads = [0]
    slot = sim_mod._SRow.conv

    class Counted(sim_mod._SRow):
        __slots__ = ()

        @property  # type: ignore[override]
        def conv(self) -> bool:
            reads[0] += 1
            return bool(slot.__get__(self))

        @conv.setter
        def conv(self, v: bool) -> None:
            slot.__set__(self, v)

    monkeypatch.setattr(sim_mod, "_SRow", Counted)
    with adfkit.open_adf(f) as agent:
        res = simulate(agent, policy)
    calls = res.calls
    assert len(calls) == n
    if res.events.empty:  # nothing left the window: the simulated context is the real one
        assert calls["n_rows_sim"].tolist() == [2 * i + 1 for i in range(n)]
        assert calls["est_tokens_sim"].tolist() == calls["est_tokens_real"].tolist()
    else:  # each eviction leaves at most 5,000 estimated tokens of conversation
        assert set(res.events["kind"]) == {"evict"}
        assert (calls["est_tokens_sim"] <= 5_000).all()
        assert calls["est_tokens_sim"].iloc[-1] > 4_000
    assert reads[0] <= 10 * 2 * n
