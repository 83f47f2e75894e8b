"""The fleet plots: agents named by their label (never a session's UUID), token axes without
an offset text, every label inside the figure and clear of the others."""

from __future__ import annotations

import re
import warnings
from pathlib import PurePosixPath

import matplotlib
import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLES
from test_fleet import _session_facts

import adfkit
from adfkit import plots, plots_fleet
from adfkit import plots_forgetting as pf

matplotlib.use("Agg")

SESSION = next(
    p
    for p in sorted((SAMPLES / "claude-code" / "projects").glob("*/*.jsonl"))
    if not p.name.startswith("agent-")
)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-")


@pytest.fixture(scope="module")
def usage():
    """The usage of the ADF samples and one Claude Code session, as one fleet frame."""
    paths = [*sorted(SAMPLES.glob("*.adf")), SESSION]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # prices and a half-written last line
        df, errors = adfkit.load_fleet(paths, "usage", engine="serial", progress=False)
    assert errors.empty
    return df


def _drawn(ax):
    fig = plots.figure_of(ax)
    fig.canvas.draw()
    return fig, fig.canvas.get_renderer()


def _value(tick: str) -> float:
    units = {"k": 1e3, "M": 1e6, "B": 1e9}
    return float(tick[:-1]) * units[tick[-1]] if tick[-1] in units else float(tick)


def test_fleet_tokens_bars_are_each_files_total_named_by_label(usage):
    ax = plots_fleet.fleet_tokens(usage)
    try:
        names = [t.get_text() for t in ax.get_yticklabels()]
        widths = [b.get_width() for b in ax.patches if b.get_gid() == "tokens"]
        want = {}
        for path in usage["agent_path"].unique():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with adfkit.open(path) as agent:  # a fleet's usage: subagents' calls too
                    total = sum(
                        float(a.usage()["tokens_total"].sum()) for a in [agent, *agent.subagents()]
                    )
                    label = agent.name
            want[label] = total
        sid, cwd, about, _ = _session_facts(SESSION)
        label = f"{PurePosixPath(cwd).name} · {about}"
        want[label if len(label) <= 40 else label[:39] + "…"] = want.pop(sid)
        assert dict(zip(names, widths, strict=True)) == want
        assert widths == sorted(widths)  # the largest on top
        assert not [n for n in names if UUID.search(n)]
    finally:
        plots.close(ax)


def test_fleet_tokens_axis_has_no_offset_text(usage):
    """The ticks say 1.5M themselves: no "1e6" printed beside the axis label."""
    ax = plots_fleet.fleet_tokens(usage)
    try:
        fig, renderer = _drawn(ax)
        assert max(b.get_width() for b in ax.patches) > 1e6  # a scalar axis would say 1e6
        offset = ax.xaxis.get_offset_text()
        assert not (offset.get_visible() and offset.get_text())
        lo, hi = ax.get_xlim()
        shown = [
            (loc, t.get_text())
            for loc, t in zip(ax.get_xticks(), ax.get_xticklabels(), strict=True)
            if lo <= loc <= hi
        ]
        assert any(t.endswith("M") for _, t in shown)
        assert [_value(t) for _, t in shown] == pytest.approx([loc for loc, _ in shown])
        label = ax.xaxis.label.get_window_extent(renderer)
        assert fig.bbox.x0 <= label.x0 and label.x1 <= fig.bbox.x1
    finally:
        plots.close(ax)


def test_an_unknown_total_has_no_bar_and_says_unknown():
    df = pd.DataFrame(
        {
            "label": ["known", "unknown one"],
            "agent": ["a", "b"],
            "agent_path": ["a.adf", "b.adf"],
            "tokens_total": pd.array([1200, None], dtype="Int64"),
        }
    )
    ax = plots_fleet.fleet_tokens(df)
    try:
        assert [t.get_text() for t in ax.get_yticklabels()] == ["unknown one", "known"]
        bars = [b for b in ax.patches if b.get_gid() == "tokens"]
        assert [b.get_visible() for b in bars] == [False, True]
        assert [t.get_text() for t in ax.texts] == ["unknown", "1.2k"]
    finally:
        plots.close(ax)


def _compactions(rows):
    recs = []
    for label, ratios, recalls in rows:
        for r, c in zip(ratios, recalls, strict=True):
            recs.append(
                {
                    "label": label,
                    "agent": label[:8],
                    "agent_path": f"{label}.jsonl",
                    "event": "compaction",
                    "compression_ratio": r,
                    "recall": c,
                }
            )
    return pd.DataFrame(recs)


LONG = "a-project-folder · " + "a first prompt that runs on and on " * 2


def test_fleet_recall_points_are_each_agents_median_and_mean():
    comp = _compactions(
        [("one", [10.0, 30.0, 20.0], [0.5, 0.7, 0.9]), ("two", [5.0], [float("nan")])]
    )
    comp.loc[len(comp)] = ["one", "one", "one.jsonl", "clear", 99.0, 0.0]  # not a compaction
    ax = plots_fleet.fleet_recall(comp)
    try:
        (pts,) = [c for c in ax.collections if c.get_gid() == "agents"]
        assert pts.get_offsets().tolist() == [
            [20.0, pytest.approx(0.7)]
        ]  # "two" has no recall: not drawn
        assert [t.get_text() for t in ax.texts if t.get_gid() == "label"] == ["one"]
        assert "1 agent(s) without a measured compaction not drawn" in [
            t.get_text() for t in ax.texts
        ]
    finally:
        plots.close(ax)


def test_fleet_recall_labels_stay_inside_the_figure_and_apart():
    """Points on every edge, with long labels, several close together: each label lies inside
    the axes (so inside the figure) and covers no other label."""
    comp = _compactions(
        [
            (LONG, [40.0], [1.0]),  # top right: a label up and right would leave the figure
            ("top left " + LONG, [2.0], [1.0]),
            ("bottom right " + LONG, [40.0], [0.0]),
            ("bottom left", [2.0], [0.0]),
            ("near 1", [20.0], [0.5]),
            ("near 2", [20.5], [0.51]),
            ("near 3", [19.5], [0.49]),
        ]
    )
    ax = plots_fleet.fleet_recall(comp)
    try:
        fig, renderer = _drawn(ax)
        labels = [t for t in ax.texts if t.get_gid() == "label"]
        assert len(labels) == 7
        frame = ax.get_window_extent(renderer)
        boxes = [t.get_window_extent(renderer) for t in labels]
        for t, b in zip(labels, boxes, strict=True):
            assert fig.bbox.x0 <= b.x0 and b.x1 <= fig.bbox.x1, t.get_text()
            assert fig.bbox.y0 <= b.y0 and b.y1 <= fig.bbox.y1, t.get_text()
            assert frame.x0 <= b.x0 + 0.5 and b.x1 <= frame.x1 + 0.5, t.get_text()
            assert frame.y0 <= b.y0 + 0.5 and b.y1 <= frame.y1 + 0.5, t.get_text()
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not a.overlaps(b), (labels[boxes.index(a)].get_text(), "overlaps")
        assert all(len(t.get_text()) <= plots_fleet.PLOT_LABEL_CHARS for t in labels)
    finally:
        plots.close(ax)


def test_fleet_plots_take_what_load_fleet_reads():
    """A folder works as well as a frame: the sample folder's agents, by name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ax = plots_fleet.fleet_recall(str(SAMPLES))
    try:
        names = {t.get_text() for t in ax.texts if t.get_gid() == "label"}
        assert {"long-runner", "clean", "messenger"} <= names
        assert np.isfinite(ax.collections[0].get_offsets()).all()
    finally:
        plots.close(ax)


def test_forgetting_plots_of_a_fleet_name_agents_by_label():
    """A fleet's ledger names each compaction by the agent's label, not its session id."""
    sid = "24422850-abc3-4525-9567-e2fd4bd0adcb"
    led = pd.DataFrame(
        {
            "label": ["webapp · Webapp: fix the flaky upload test"] * 2 + ["long-runner"],
            "agent": [sid, sid, "long-runner"],
            "agent_path": ["s.jsonl", "s.jsonl", "long-runner.adf"],
            "event_id": [1, 1, 1],
            "kind": ["path", "url", "path"],
            "kept": ["lost", "exact", "lost"],
        }
    )
    ax = pf.ledger_by_kind(led)
    try:
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert ticks == ["long-runner #1", "webapp · Webapp: fix the flak… #1"]
        assert not [t for t in ticks if UUID.search(t)]
    finally:
        plots.close(ax)
