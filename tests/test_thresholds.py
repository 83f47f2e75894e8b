"""Thresholds and windows learned from the file (adfkit._core.thresholds): the tokens a record
states before each automatic compaction give the threshold in force (``recorded``), a context
larger than the assumed window gives a larger window, an assumed value says ``assumed``
wherever it is shown, and a sweep past the window says so.

The reference figures of the real Claude Code sessions (reference.json: every compaction's
trigger and ``preTokens``) were computed from the JSONL without adfkit.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

import adfkit
from adfkit.cli import main
from tests.conftest import ROOT
from tests.test_claude_code import Log, text, usage

TRANSCRIPTS = ROOT.parent / "shared" / "fixtures" / "transcripts"


def _sessions() -> list[tuple[str, dict[str, Any]]]:
    ref = TRANSCRIPTS / "reference.json"
    if not ref.is_file():
        return []
    data = json.loads(ref.read_text())
    return [(k, v) for k, v in sorted(data.items()) if v["format"] == "claude_code"]


@pytest.mark.skipif(not _sessions(), reason="../shared fixtures absent (a user's clone)")
def test_the_fourteen_real_sessions_are_all_here():
    assert len(_sessions()) == 14


@pytest.mark.parametrize("key,ref", _sessions(), ids=[k.split("/")[-1][:8] for k, _ in _sessions()])
def test_recorded_threshold_reproduces_the_automatic_compactions(key, ref):
    """The threshold in force is the fewest ``preTokens`` before an automatic compaction
    (``recorded``; a session without one keeps Claude Code's rule, ``assumed``), and
    ``simulate()`` at it makes as many automatic compactions as the session, each where the
    real one was. On main the threshold was 167,000 assumed everywhere (6113e919 compacts at
    ``preTokens`` 155,241-156,699) and 4 sessions came out wrong."""
    auto = [e["pre_tokens"] for e in ref["compaction_events"] if e["trigger"] == "auto"]
    with adfkit.open(TRANSCRIPTS / key) as agent:
        st = agent.settings()
        info = agent.info(sizes=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ev = adfkit.simulate(agent, adfkit.ThresholdPolicy()).events
    if auto:
        assert (st.compact_threshold, st.threshold_source) == (min(auto), "recorded")
        assert "fewest tokens in context before an automatic compaction" in st.threshold_rule
    else:
        assert (st.compact_threshold, st.threshold_source) == (167_000, "assumed")
    assert (st.context_window, st.window_source) == (200_000, "assumed")
    assert info["threshold_source"] == st.threshold_source and info["window_source"] == "assumed"
    sim_auto = ev[ev["simulated"] & ev["kind"].isin(["auto", "preflight"])]
    assert len(sim_auto) == len(auto)
    assert sim_auto["matches_real"].all()


def _opus5_session(tmp_path: Path, trigger: str, first: int = 250_000) -> Path:
    """A claude-opus-5 session whose one compaction records 297,190 tokens before it: more
    than the 200k window a model id alone gives. ``first``: the cache read of its first call."""
    log = Log()
    m = "claude-opus-5"
    log.user("u1", None, "start")
    log.asst("a1", "u1", "m1", [text("read it all")], usage(5, 2_000, first, 40), model=m)
    log.user("u2", "a1", "and the rest")
    log.asst("a2", "u2", "m2", [text("done")], usage(5, 3_000, 293_000, 60), model=m)
    meta = {"trigger": trigger, "preTokens": 297_190}
    log.system("b1", None, "compact_boundary", logicalParentUuid="a2", compactMetadata=meta)
    log.user("s1", "b1", "This session is being continued ... summary", isCompactSummary=True)
    log.user("u3", "s1", "go on")
    log.asst("a3", "u3", "m3", [text("ok")], usage(5, 1_000, 20_000, 10), model=m)
    return log.write(tmp_path / "opus5.jsonl")


def test_a_context_past_the_assumed_window_means_the_1m_window(tmp_path):
    """preTokens 297,190 on claude-opus-5: the window is the 1M one, not 200k; an automatic
    compaction's count is the threshold (recorded), a manual one's is not."""
    with adfkit.open(_opus5_session(tmp_path, "auto")) as a:
        st = a.settings()
    assert (st.context_window, st.window_source) == (1_000_000, "assumed")
    assert (st.compact_threshold, st.threshold_source) == (297_190, "recorded")
    assert "would say 967,000" in st.threshold_rule
    with adfkit.open(_opus5_session(tmp_path / "m", "manual")) as a:
        st = a.settings()
    assert (st.context_window, st.window_source) == (1_000_000, "assumed")
    assert (st.compact_threshold, st.threshold_source) == (967_000, "assumed")
    assert "297,190 tokens in context, more than a 200,000-token window" in st.threshold_rule


def test_info_says_where_the_threshold_and_the_window_come_from(tmp_path, capsys):
    f = _opus5_session(tmp_path, "auto")
    assert main(["info", str(f)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\bwindow +1,000,000 tokens \(assumed\)", out), out
    assert re.search(r"\bthreshold +297,190 tokens \(recorded: ", out), out
    assert main(["info", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)  # one path: one object
    assert doc["window_source"] == "assumed" and doc["threshold_source"] == "recorded"


def test_a_sweep_past_the_window_says_so(tmp_path):
    f = _opus5_session(tmp_path, "auto")
    with pytest.warns(adfkit.AdfWarning, match="above the context window"):
        s = adfkit.simulate_sweep(f, [200_000, 1_200_000])
    assert s["past_window"].tolist() == [False, True]
    assert s["context_window"].tolist() == [1_000_000, 1_000_000]
    assert s["window_source"].tolist() == ["assumed", "assumed"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", adfkit.AdfWarning)  # inside the window: no warning
        s = adfkit.simulate_sweep(f, [200_000])
    long_runner = adfkit.simulate_sweep(ROOT / "sample_agents" / "clean.adf", [6_000])
    assert long_runner["past_window"].isna().all()  # an ADF file records no window


def test_counts_that_disagree_with_the_calls_give_no_recorded_threshold(tmp_path):
    """A call of 310,045 tokens that no compaction followed, then an automatic compaction at
    297,190: the tool did not compact at 310,045, so 297,190 is not its threshold (as in the
    generated sample session, which compacts at 32,780 after calls of up to 58,730)."""
    with adfkit.open(_opus5_session(tmp_path, "auto", first=308_000)) as a:
        st = a.settings()
    assert (st.compact_threshold, st.threshold_source) == (967_000, "assumed")
    assert "(297,190) is not the threshold: the call at seq 2 reached 310,045" in st.threshold_rule
