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
