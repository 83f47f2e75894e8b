"""Crafted files: numbers out of range, ids missing, NULLs where the runtime never writes them.

Each class on a file built for it; every public path must answer with a value, NA and a
warning, never an exception.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from adfbuild import build, result, row, text, use

import adfkit
from adfkit import cli


def _loop() -> list[dict]:
    return [
        row(1, "user", text("Agent started")),
        row(
            2, "assistant", [use("t1", "fs_read", {"path": "a"})], tokens={"input": 50, "output": 5}
        ),
        row(3, "user", [result("t1", "aaa")]),
        row(4, "user", text("[Loop Compacted] gist")),
        row(5, "assistant", text("ok"), tokens={"input": 80, "output": 7}),
    ]


@pytest.mark.parametrize("value", [1e300, 2**64 - 1, -5, 0])
def test_h56_out_of_range_threshold_is_na_with_a_warning(tmp_path, value, capsys):
    f = build(tmp_path / "t.adf", loop=_loop(), config={"context": {"compact_threshold": value}})
    with adfkit.open_adf(f) as agent:
        with pytest.warns(
            adfkit.AdfWarning, match="compact_threshold in the config is out of range"
        ):
            rep = agent.replay()
        assert rep["threshold"].isna().all() and rep["over_threshold"].isna().all()
        assert agent.compactions()["threshold"].isna().all()
        assert len(agent.composition()) == 2
        assert agent.compact_threshold() is None and agent.info()["compact_threshold"] is None
        sim = adfkit.simulate(agent, adfkit.ThresholdPolicy())
        assert sim.summary["n_compactions"] == 0 and sim.calls["threshold"].isna().all()
        for pol in (adfkit.SlidingWindowPolicy(max_tokens=40), adfkit.TrimToolResultsPolicy(10)):
            assert len(adfkit.simulate(agent, pol).calls) == 2
        assert list(adfkit.simulate_sweep(agent, [50, 90])["threshold"]) == [50, 90]
    assert cli.main(["info", str(f)]) == 0
    assert "threshold" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [1e300, 2**64 - 1, -1, float("nan")])
def test_h56_out_of_range_policy_thresholds_are_refused_clearly(bad):
    with pytest.raises(ValueError, match="threshold must be a number above 0"):
        adfkit.ThresholdPolicy(threshold=bad)


def test_h56_a_change_to_an_out_of_range_threshold_is_na_from_then_on(tmp_path):
    loop = _loop()
    loop[1] = row(
        2,
        "assistant",
        [use("t1", "sys_update_config", {"path": "context.compact_threshold", "value": 1e300})],
        tokens={"input": 50, "output": 5},
    )
    f = build(tmp_path / "c.adf", loop=loop, config={"context": {"compact_threshold": 9000}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = adfkit.open_adf(f).replay().set_index("seq")
    assert rep.loc[2, "threshold"] == 9000  # assumed before the change: the current config
    assert pd.isna(rep.loc[5, "threshold"])


@pytest.mark.parametrize(
    "tokens, flagged",
    [
        ({"input": -10, "output": 5}, True),
        ({"input": 10.5, "output": 5}, True),
        ({"input": 10.0, "output": 5}, False),  # a whole number written as a float
        (-3, True),  # a legacy bare total
        ({"input": 10, "output": 5}, False),
    ],
)
def test_h57_negative_or_fractional_token_counts_are_flagged_not_summed(tmp_path, tokens, flagged):
    loop = [row(1, "user", text("hi")), row(2, "assistant", text("yo"), tokens=tokens)]
    f = build(tmp_path / "n.adf", loop=loop)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with adfkit.open_adf(f) as agent:
            h = agent.history().set_index("seq")
            u = agent.usage()
    assert bool(h.loc[2, "malformed"]) is flagged
    assert any("unreadable tokens" in str(w.message) for w in got) is flagged
    if flagged:
        assert pd.isna(h.loc[2, "tokens_total"])
        assert u["tokens_input"].isna().all() or (u["tokens_input"].fillna(0) >= 0).all()
    else:
        assert h.loc[2, "tokens_total"] == 15


def test_h58_missing_tool_ids_never_match(tmp_path):
    """A tool_use without an id and a tool_result whose tool_use_id is null are not a pair."""
    loop = [
        row(1, "user", text("go")),
        row(
            2,
            "assistant",
            [{"type": "tool_use", "name": "fs_read", "input": {}}],
            tokens={"input": 5},
        ),
        row(3, "user", [{"type": "tool_result", "tool_use_id": None, "content": "stray"}]),
        row(4, "assistant", [use("", "fs_list", {})], tokens={"input": 6}),
        row(5, "user", [result("", "empty id")]),
        row(6, "assistant", [use("t9", "fs_write", {"path": "x"})], tokens={"input": 7}),
        row(7, "user", [result("t9", "written")]),
    ]
    f = build(tmp_path / "ids.adf", loop=loop)
    with adfkit.open_adf(f) as agent:
        calls = agent.tool_calls().set_index("call_seq")
        rep = agent.integrity()
    assert calls["matched"].to_dict() == {2: False, 4: False, 6: True}
    assert calls.loc[6, "result_seq"] == 7
    assert pd.isna(calls.loc[2, "result_seq"]) and pd.isna(calls.loc[4, "result_seq"])
    assert set(rep.loc[rep["check"] == "tool_use_without_result", "rows"].iloc[0]) == {2, 4}


def test_h59_null_role_or_created_at_is_flagged_malformed(tmp_path):
    loop = [row(1, "user", text("hi")), row(2, "assistant", text("yo"), tokens={"input": 3})]
    f = build(
        tmp_path / "nulls.adf",
        loop=loop,
        not_null=False,
        sql=[
            "UPDATE adf_loop SET role = NULL WHERE seq = 1",
            "UPDATE adf_loop SET created_at = NULL WHERE seq = 2",
        ],
    )
    with pytest.warns(
        adfkit.AdfWarning, match=r"2 row\(s\) with a NULL role or created_at \(seq 1, 2\)"
    ):
        h = adfkit.open_adf(f).loop()
    assert h["malformed"].tolist() == [True, True]
    assert h["kind"].tolist() == ["unknown", "assistant"]


def test_h59_a_layout_without_created_at_is_not_damage(tmp_path):
    """Pre-public files have no created_at column at all: nothing to flag."""
    loop = [row(1, "user", text("hi")), row(2, "assistant", text("yo"))]
    f = build(tmp_path / "old.adf", loop=loop, schema=12, loop_columns=("tokens",))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h = adfkit.open_adf(f).loop()
    assert not h["malformed"].any() and h["created_at"].isna().all()
