"""The compaction lab: compactors as plug-ins, scored on a planted session.

Ground truth: ``adfsynth.lab`` (the forgetting session, with what the audit must find and
what each built-in compactor must keep and weigh, from the simulator's own copy of the window
and its own estimator)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import adfkit
from adfkit._analysis import compactors as comp
from adfkit._base.errors import AdfError
from adfsynth.lab import write_session


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    path, truth = write_session(tmp_path_factory.mktemp("lab"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = adfkit.open(path)
        lab = agent.compaction_lab()
        audit = agent.compaction_audit()
    return agent, lab, audit, truth


def test_audit_findings_are_the_planted_ones(planted):
    _, _, audit, truth = planted
    assert audit["threshold"].tolist() == [truth["threshold"]] * 2
    assert [list(f) for f in audit["findings"]] == [a["findings"] for a in truth["audit"]]


def test_each_builtin_compactor_scores_what_was_planted(planted):
    _, lab, _, truth = planted
    first = lab[lab["event_id"] == 0].set_index("compactor")
    assert list(first.index) == list(comp.DEFAULT)
    assert set(first["tokens_before"]) == {truth["tokens_before"]}
    assert set(first["n_needed"]) == {truth["n_needed"]}
    for name, want in truth["lab"].items():
        row = first.loc[name]
        kept = want["kept"]
        assert row["n_needed_kept"] == sum(kept.values()), name
        assert row["recall"] == pytest.approx(sum(kept.values()) / truth["n_needed"]), name
        for kind, n in truth["needed"].items():
            assert row[f"recall_{kind}"] == pytest.approx(kept.get(kind, 0) / n), (name, kind)
        assert pd.isna(row["recall_url"]) and pd.isna(row["recall_todo"])  # none needed
        assert row["tokens_after"] == want["tokens"], name
    # no call for a deterministic compactor; the recorded one's call is not in the file
    assert (first.drop(index="recorded")["compaction_cost_usd"] == 0).all()
    assert pd.isna(first.loc["recorded", "compaction_cost_usd"])


def test_nothing_needed_again_is_no_recall_not_zero(planted):
    _, lab, _, _ = planted
    second = lab[lab["event_id"] == 1]
    assert (second["n_needed"] == 0).all()
    assert second["recall"].isna().all()


def test_cache_rewrite_is_the_new_window_at_the_cache_write_price(planted):
    _, lab, _, _ = planted
    # claude-sonnet-4-5: cache writes at 3.75 USD per million tokens (1.25 x 3.0)
    want = (lab["tokens_after"] * 3.75 / 1e6).round(8)
    assert lab["cache_rewrite_usd"].tolist() == pytest.approx(want.tolist())


def test_a_registered_compactor_runs_by_its_name(planted):
    agent, _, _, _ = planted

    def make(word="kept"):
        def compact(inp):
            return [comp.Message("compaction_summary", "user", ({"type": "text", "text": word},))]

        return compact

    comp.register_compactor("one_word", make)
    try:
        lab = agent.compaction_lab(["one_word:word=/w/app/src/limits.py"])
    finally:
        comp.unregister_compactor("one_word")
    assert lab["compactor"].tolist() == ["one_word:word=/w/app/src/limits.py"] * 2
    assert lab["n_needed_kept"].tolist()[0] == 1  # the limits path, and nothing else
    with pytest.raises(ValueError, match="built-in"):
        comp.register_compactor("mask", make)


def test_an_unknown_compactor_or_parameter_is_a_clear_error(planted):
    agent, _, _, _ = planted
    with pytest.raises(AdfError, match="no compactor 'nope'; known: recorded"):
        agent.compaction_lab(["nope"])
    with pytest.raises(AdfError, match="whole number"):
        agent.compaction_lab(["keep_last:n=many"])
    with pytest.raises(AdfError, match="key=value"):
        agent.compaction_lab(["keep_last:3"])


def test_turns_split_at_a_person_and_at_a_call_after_a_result():
    m = comp.Message
    kinds = ["message", "assistant", "tool_result", "assistant", "assistant", "tool_result"]
    msgs = [m(k, "", ()) for k in [*kinds, "message", "assistant"]]
    assert comp.turns(msgs) == [[0, 1, 2], [3, 4, 5], [6, 7]]


def test_the_lab_is_a_fleet_table(planted, tmp_path):
    agent, lab, _, _ = planted
    df, errors = adfkit.load_fleet([agent.path], "compaction_lab", engine="serial", progress=False)
    assert errors.empty
    assert df["recall"].fillna(-1).tolist() == lab["recall"].fillna(-1).tolist()
    assert df["compactor"].tolist() == lab["compactor"].tolist()


def test_every_real_claude_code_compaction_is_replayed_by_every_compactor():
    from conftest import ROOT

    folder = ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude-code"
    if not folder.is_dir():
        pytest.skip(f"real fixtures {folder} not present (../shared is absent in a user's clone)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lab, errors = adfkit.load_fleet(folder, "compaction_lab", engine="serial", progress=False)
        audit, _ = adfkit.load_fleet(folder, "compaction_audit", engine="serial", progress=False)
    assert errors.empty
    assert len(lab) == len(comp.DEFAULT) * len(audit) == 5 * 12
    assert lab["recall"].dropna().between(0, 1).all()
    rec = lab[lab["compactor"] == "recorded"]
    assert (rec["tokens_after"] < rec["tokens_before"]).all()
    # the extractive baseline keeps every item it lists: nothing needed again is lost
    ext = lab[lab["compactor"] == "extractive"]
    assert (ext["n_needed_kept"] == ext["n_needed"]).all()
