"""Plots of what forgetting costs: what is drawn is the tables' numbers, the published anchors
are there, and empty or unknown data says so."""

from __future__ import annotations

import json

import matplotlib
import pandas as pd
import pytest

import adfkit
from adfkit import plots_forgetting as pf
from adfsynth.forgetting import write_session

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    path = write_session(tmp_path_factory.mktemp("forgetting-plots"))
    truth = json.loads(path.with_suffix(".truth.json").read_text())
    with adfkit.open(path) as agent:
        yield agent, truth


def test_ledger_bars_are_the_lost_items_by_kind(planted):
    agent, truth = planted
    ax = pf.ledger_by_kind(agent)
    lost = {}
    for i in truth["items"]:
        if i["kept"] == "lost":
            lost[i["kind"]] = lost.get(i["kind"], 0) + 1
    for kind, n in lost.items():
        bars = [c for c in ax.containers if c[0].get_gid() == kind][0]
        assert float(bars[0].get_height()) == n  # the first compaction
    right = [a for a in ax.figure.axes if a is not ax][0]
    lines = {ln.get_gid(): ln for ln in right.get_lines()}
    assert lines["recall_default"].get_ydata()[0] == pytest.approx(0.38)
    assert lines["kept_text_summary"].get_ydata()[0] == pytest.approx(0.644)
    assert lines["rate"].get_ydata()[0] == pytest.approx(7 / 11)
    pf.close(ax)


def test_survival_plot_draws_the_curve(planted):
    agent, _ = planted
    ax = pf.survival_plot(agent)
    curve = agent.survival_curve()
    line = [ln for ln in ax.get_lines() if ln.get_gid() == "survival"][0]
    assert list(line.get_ydata())[1:] == pytest.approx(curve["survival"].astype(float).tolist())
    assert any(ln.get_gid() == "recall_default" for ln in ax.get_lines())
    pf.close(ax)


def test_cache_bars_are_the_costs(planted):
    agent, _ = planted
    c = agent.compaction_cache()
    ax = pf.cache_cost(c)
    for gid, col in (("after", "cost_after_usd"), ("without", "cost_no_compaction_usd"),
                     ("stable", "cost_stable_prefix_usd")):  # fmt: skip
        bars = [b for b in ax.containers if b[0].get_gid() == gid][0]
        assert [float(p.get_height()) for p in bars] == pytest.approx(
            c.loc[c["cost_after_usd"].notna(), col].astype(float).tolist()
        )
    pf.close(ax)


def test_recovery_plot_has_the_published_medians(planted):
    agent, truth = planted
    ax = pf.recovery_plot(agent)
    lines = {ln.get_gid(): ln for ln in ax.get_lines()}
    assert lines["cold_median"].get_ydata()[0] == 10
    assert lines["after_median"].get_ydata()[0] == 28
    assert list(lines["cold-points"].get_ydata()) == [truth["recovery"]["cold"]["actions"]]
    pf.close(ax)


@pytest.mark.parametrize(
    "func, frame",
    [
        (pf.ledger_by_kind, pd.DataFrame({"event_id": [], "kind": [], "kept": []})),
        (pf.survival_plot, pd.DataFrame({"n_checked": [], "lost_at": []})),
        (pf.cache_cost, pd.DataFrame({"event_id": [0], "cost_after_usd": [None]})),
        (pf.recovery_plot, pd.DataFrame({"start": [], "actions_to_productive": []})),
    ],
)
def test_empty_or_unknown_data_says_so(func, frame):
    ax = func(frame)
    assert ax.texts and not ax.axison
    pf.close(ax)


def test_fleet_frames_plot_one_group_per_agent(planted):
    agent, _ = planted
    led = adfkit.load_fleet([agent.path, agent.path], table="compaction_ledger", progress=False)
    df = led.df.copy()
    df.loc[: len(df) // 2 - 1, ["agent", "label"]] = "other"  # as two agents' labels differ
    ax = pf.ledger_by_kind(df)
    label = df["label"].iloc[-1]  # the session's own: its project and title, not its id
    assert not label.startswith("f0e1")
    assert [t.get_text() for t in ax.get_xticklabels()][0].startswith(("other", label[:20]))
    pf.close(ax)
