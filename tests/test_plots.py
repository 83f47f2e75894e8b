"""adfkit.plots: what each plot draws (asserted on the returned Axes), PNG output, the CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import warnings

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLES, fingerprint, runtime_fixture, sample

import adfkit
from adfkit import plots
from adfkit._base.outputs import check_output
from adfkit.cli import main

PNG = b"\x89PNG\r\n\x1a\n"
SAMPLE_NAMES = ["long-runner", "messenger", "forgetful", "mind-keeper", "clean", "legacy-v27"]
SAMPLE_NAMES += ["legacy-v12"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _gid(ax, gid):
    return [a for a in [*ax.lines, *ax.patches] if a.get_gid() == gid]


def _times(*minutes):
    base = pd.Timestamp("2026-06-01 12:00", tz="UTC")
    return pd.Series([base + pd.Timedelta(minutes=m) for m in minutes]).astype(
        "datetime64[ms, UTC]"
    )


# --- hand-built frames: every number below is written here ------------------------------

# Six calls; a compaction (summary seq 8, boundary 7) after the third.
CALLS = pd.DataFrame(
    {
        "seq": [2, 4, 6, 9, 11, 13],
        "created_at": _times(0, 1, 2, 10, 11, 12),
        "epoch": [0, 0, 0, 1, 1, 1],
        "est_tokens": [80, 300, 700, 100, 350, 800],
        "tokens_input": [90, 380, 880, 140, 480, 930],
        "tokens_total": [100, 400, 900, 150, 500, 950],
        "threshold": [1000] * 6,
    }
)
EVENTS = pd.DataFrame(
    {
        "event": ["compaction"],
        "summary_seq": pd.array([8], dtype="Int64"),
        "boundary_seq": pd.array([7], dtype="Int64"),
    }
)


def test_sawtooth_from_frames():
    ax = plots.context_sawtooth(CALLS, events=EVENTS)
    (rep,) = _gid(ax, "reported")
    assert list(rep.get_xdata()) == [1, 2, 3, 4, 5, 6]
    assert list(rep.get_ydata()) == [100, 400, 900, 150, 500, 950]
    (est,) = _gid(ax, "estimate")
    assert list(est.get_ydata()) == [80, 300, 700, 100, 350, 800]
    (thr,) = _gid(ax, "threshold")
    assert list(thr.get_ydata()) == [1000, 1000]
    marks = _gid(ax, "compaction")
    assert [m.get_xdata()[0] for m in marks] == [3.5]  # between call 3 (seq 6) and 4 (seq 9)
    assert ax.get_ylim()[1] > 1000  # the threshold is in view
    assert ax.get_xlabel() and ax.get_ylabel() == "tokens" and ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "threshold (1,000 tokens)" in labels and "compaction (1)" in labels
    assert len(ax.lines) == 4


def test_sawtooth_markers_from_epoch_without_events():
    """With a bare frame and no events, a marker goes wherever the epoch goes up."""
    two = CALLS.assign(epoch=[0, 0, 0, 2, 2, 2])  # two events between calls 3 and 4
    ax = plots.context_sawtooth(two)
    assert [m.get_xdata()[0] for m in _gid(ax, "compaction")] == [3.5, 3.5]


def test_sawtooth_clear_lines_and_shared_marker_label():
    """A clear gets its own line; two compactions between the same calls share one, ×2."""
    ev = pd.DataFrame(
        {
            "event": ["compaction", "compaction", "clear"],
            "boundary_seq": pd.array([6, 7, 10], dtype="Int64"),
        }
    )
    ax = plots.context_sawtooth(CALLS, events=ev)
    assert [m.get_xdata()[0] for m in _gid(ax, "compaction")] == [3.5, 3.5]
    assert [m.get_xdata()[0] for m in _gid(ax, "clear")] == [4.5]
    assert [t.get_text() for t in ax.texts] == ["×2"]


def test_sawtooth_many_events_become_a_rug():
    n = 60
    calls = pd.DataFrame({"seq": np.arange(1, 2 * n + 1), "tokens_total": np.tile([10, 20], n)})
    ev = pd.DataFrame({"event": ["compaction"] * n, "boundary_seq": np.arange(2, 2 * n + 1, 2)})
    marks = _gid(plots.context_sawtooth(calls, events=ev, threshold=30), "compaction")
    assert len(marks) == n
    assert {tuple(m.get_ydata()) for m in marks} == {(0, 0.035)}


def test_sawtooth_time_axis_and_threshold_override():
    ax = plots.context_sawtooth(CALLS, events=EVENTS, x="time", threshold=1200, estimate=False)
    assert _gid(ax, "estimate") == []
    assert list(_gid(ax, "threshold")[0].get_ydata()) == [1200, 1200]
    (m,) = _gid(ax, "compaction")
    # halfway between 12:02 and 12:10
    got = mpl.dates.num2date(mpl.dates.date2num(m.get_xdata()[0]))
    assert got.strftime("%H:%M") == "12:06"
    assert ax.get_xlabel() == "time (UTC)"
    # An event with its own time (the summary row's) is drawn there.
    timed = EVENTS.assign(created_at=_times(5))
    (m,) = _gid(plots.context_sawtooth(CALLS, events=timed, x="time"), "compaction")
    got = mpl.dates.num2date(mpl.dates.date2num(m.get_xdata()[0]))
    assert got.strftime("%H:%M") == "12:05"


def test_sawtooth_varying_threshold_is_a_step_line():
    ax = plots.context_sawtooth(CALLS.assign(threshold=[1000, 1000, 1000, 2000, 2000, 2000]))
    (thr,) = _gid(ax, "threshold")
    assert list(thr.get_ydata()) == [1000, 1000, 1000, 2000, 2000, 2000]


def test_sawtooth_bad_options():
    with pytest.raises(ValueError, match=r"x must be one of \['call', 'time'\], got 'seq'"):
        plots.context_sawtooth(CALLS, x="seq")
    with pytest.raises(ValueError, match="reported tokens"):
        plots.context_sawtooth(CALLS.drop(columns="tokens_total"))


USAGE = pd.DataFrame(
    {
        "created_at": _times(0, 5, 9),
        "tokens_input": pd.array([1000, 2000, 3000], dtype="Int64"),
        "tokens_output": pd.array([10, 20, pd.NA], dtype="Int64"),
        "tokens_cache_read": pd.array([pd.NA, 1500, 2500], dtype="Int64"),
        "tokens_total": pd.array([1010, 2020, 3000], dtype="Int64"),
        "cost_usd": [0.1, 0.2, 0.3],
    }
)


def test_token_growth_from_frame():
    ax = plots.token_growth(USAGE, x="call")
    lines = {ln.get_gid(): list(ln.get_ydata()) for ln in ax.lines}
    assert lines == {
        "cum_input": [1000, 3000, 6000],
        "cum_output": [10, 30, 30],
        "cum_cache_read": [0, 1500, 4000],
    }
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == "input (incl. cached): 6k"
    assert "estimated cost $0.60" in ax.get_legend().get_title().get_text()
    assert ax.get_ylabel() == "cumulative tokens"


def test_token_growth_legacy_totals_only():
    legacy = USAGE.assign(
        tokens_input=pd.array([pd.NA] * 3, dtype="Int64"),
        tokens_output=pd.array([pd.NA] * 3, dtype="Int64"),
        tokens_cache_read=pd.array([pd.NA] * 3, dtype="Int64"),
        cost_usd=np.nan,
    )
    ax = plots.token_growth(legacy)
    assert [ln.get_gid() for ln in ax.lines] == ["cum_total"]
    assert list(ax.lines[0].get_ydata()) == [1010, 3030, 6030]
    assert "cost unknown" in ax.get_legend().get_title().get_text()


def test_turn_spend_from_frame():
    turns = pd.DataFrame(
        {"turn": [1, 2, 3], "tokens_input": [100, 300, 200], "tokens_output": [5, 7, 9]}
    )
    ax = plots.turn_spend(turns)
    assert [p.get_height() for p in _gid(ax, "input")] == [100, 300, 200]
    assert [p.get_height() for p in _gid(ax, "output")] == [5, 7, 9]
    assert [p.get_y() for p in _gid(ax, "output")] == [100, 300, 200]  # stacked
    assert list(_gid(ax, "median")[0].get_ydata()) == [209, 209]


def test_compaction_ratio_from_frame():
    df = pd.DataFrame({"swept_tokens": [9000, 8000, 5000], "summary_tokens": [300, 400, np.nan]})
    ax = plots.compaction_ratio(df)
    assert [p.get_height() for p in _gid(ax, "swept")] == [9000, 8000, 5000]
    heights = [p.get_height() for p in _gid(ax, "summary")]
    assert heights[:2] == [300, 400] and np.isnan(heights[2])  # a lost summary: unknown, not 0
    texts = [t.get_text() for t in ax.texts]
    assert texts[:3] == ["30×", "20×", "summary lost"]
    assert texts[3] == "median ratio 25× over 3 compactions"


@pytest.mark.parametrize(
    "func,frame",
    [
        (plots.context_sawtooth, CALLS.iloc[:0]),
        (plots.token_growth, USAGE.iloc[:0]),
        (plots.turn_spend, pd.DataFrame({"turn": [], "tokens_input": [], "tokens_output": []})),
        (plots.compaction_ratio, pd.DataFrame({"swept_tokens": [], "summary_tokens": []})),
    ],
)
def test_empty_data_gives_a_labelled_message(func, frame):
    ax = func(frame)
    assert ax.texts[0].get_text().startswith("no ")
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


def test_draws_on_given_axes_and_leaves_global_state_alone(monkeypatch):
    """ax= is used as is; rcParams are restored; plt.show() is never called."""
    before = dict(mpl.rcParams)
    monkeypatch.setattr(plt, "show", lambda *a, **k: pytest.fail("plt.show() called"))
    fig, axes = plt.subplots(2, 2)
    got = [
        plots.context_sawtooth(CALLS, ax=axes[0, 0]),
        plots.token_growth(USAGE, ax=axes[0, 1]),
        plots.turn_spend(
            pd.DataFrame({"turn": [1], "tokens_input": [1], "tokens_output": [1]}), ax=axes[1, 0]
        ),
        plots.compaction_ratio(
            pd.DataFrame({"swept_tokens": [10], "summary_tokens": [1]}), ax=axes[1, 1]
        ),
    ]
    assert got == list(axes.flat)
    assert len(plt.get_fignums()) == 1
    assert dict(mpl.rcParams) == before


def test_importing_adfkit_does_not_import_matplotlib():
    code = (
        "import sys, adfkit; a = 'matplotlib' in sys.modules; import adfkit.plots; "
        "b = 'matplotlib.pyplot' in sys.modules; print(a, b)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# --- real agents ------------------------------------------------------------------------


def _visible_compactions(truth: dict) -> int:
    """Compactions the file still shows: summary kept in the history, or archived."""
    hist = set(truth["history_seqs"])
    return sum(1 for c in truth["compactions"] if c["summary_seq"] in hist or c.get("audited"))


def _check_all(path, n_compactions, n_clears, threshold, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with adfkit.open_adf(path) as agent:
            ax = plots.context_sawtooth(agent)
            assert len(_gid(ax, "compaction")) == n_compactions
            (thr,) = _gid(ax, "threshold")
            assert set(thr.get_ydata()) == {threshold}
            assert len(_gid(ax, "reported")) == 1 and len(_gid(ax, "estimate")) == 1
            assert len(_gid(ax, "clear")) == n_clears
            assert len(ax.lines) == 3 + n_compactions + n_clears
            axes = [ax, plots.token_growth(agent), plots.turn_spend(agent)]
            axes.append(plots.compaction_ratio(agent))
            ratio = axes[-1]
            comps = agent.compactions()
            assert len(_gid(ratio, "swept")) == (comps["event"] == "compaction").sum()
            for i, a in enumerate(axes):
                assert a.get_title() and a.get_xlabel() and a.get_ylabel()
                out = tmp_path / f"{i}.png"
                a.figure.savefig(out)
                assert out.read_bytes()[:8] == PNG
                plt.close(a.figure)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_every_plot_renders_for_sample_agents(name, tmp_path):
    truth = json.loads(sample(name).with_suffix(".truth.json").read_text())
    n = _visible_compactions(truth)
    _check_all(sample(name), n, len(truth["clears"]), truth["threshold"], tmp_path)


# (compactions, loop_clears) per file, from ../shared/fixtures/README.md.
FIXTURE_EVENTS = {"long-runner": (8, 0), "manual-compact": (2, 0), "audited-messenger": (1, 1)}


def _raw_threshold(path) -> int:
    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        (cfg,) = con.execute("SELECT config_json FROM adf_config").fetchone()
    finally:
        con.close()
    return json.loads(cfg).get("context", {}).get("compact_threshold") or 100000


@pytest.mark.parametrize("name", sorted(FIXTURE_EVENTS))
def test_every_plot_renders_for_runtime_fixtures(name, tmp_path):
    path = runtime_fixture(name)
    n, clears = FIXTURE_EVENTS[name]
    _check_all(path, n, clears, _raw_threshold(path), tmp_path)


def test_save_all_writes_pngs_and_nothing_beside_the_input(tmp_path):
    before = fingerprint(SAMPLES)
    paths = plots.save_all(sample("long-runner"), tmp_path / "out")
    assert [p.name for p in paths] == [f"long-runner-{k}.png" for k in plots.PLOTS]
    assert all(p.read_bytes()[:8] == PNG for p in paths)
    assert fingerprint(SAMPLES) == before
    assert plt.get_fignums() == []  # every figure closed
    with pytest.raises(ValueError, match="kinds must be among"):
        plots.save_all(sample("clean"), tmp_path, kinds=["pie"])


# --- CLI --------------------------------------------------------------------------------


def test_cli_plot_one_kind(tmp_path, capsys):
    out = tmp_path / "sub" / "ctx.png"
    assert main(["plot", str(sample("clean")), "--kind", "context", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG
    assert capsys.readouterr().out.strip() == str(out)


def test_cli_plot_all(tmp_path, capsys):
    assert main(["plot", str(sample("messenger")), "--kind", "all", "-o", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.split()
    assert sorted(lines) == sorted(str(tmp_path / f"messenger-{k}.png") for k in plots.PLOTS)


def test_cli_plot_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["plot", str(sample("clean")), "--kind", "pie", "-o", str(tmp_path / "x.png")])
    assert exc.value.code == 2
    assert "invalid choice: 'pie'" in capsys.readouterr().err
    src = str(sample("clean"))
    assert main(["plot", src, "-o", src]) == 2
    assert "plots are written as PNG" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "nope.adf"), "-o", str(tmp_path / "x.png")]) == 2
    assert capsys.readouterr().err.startswith("adfkit: error:")


def test_cli_plot_help_has_example(capsys):
    with pytest.raises(SystemExit):
        main(["plot", "--help"])
    assert "Example: adfkit plot" in capsys.readouterr().out


# --- 1. an unknown number stays unknown -------------------------------------------------


def test_token_growth_unknown_totals_are_not_zero():
    """A series with no known value is not drawn as 0; a cost not known for every call is
    'unknown', with the known part given separately (never a $ total over unknowns)."""
    u = USAGE.assign(
        tokens_output=pd.array([pd.NA] * 3, dtype="Int64"),
        cost_usd=[0.1, np.nan, 0.3],
        model=["m1", "secret-model", "m1"],
        price_input=[3.0, np.nan, 3.0],
    )
    ax = plots.token_growth(u, x="call")
    assert "cum_output" not in [ln.get_gid() for ln in ax.lines]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert not any(lab.startswith("output") for lab in labels)
    note = ax.get_legend().get_title().get_text()
    assert "output: not recorded" in note
    assert "cost unknown for 1" in note and "(the other 2 cost $0.40)" in note
    assert "no price for 'secret-model'" in note


def test_token_growth_every_cost_unknown_says_so():
    ax = plots.token_growth(USAGE.assign(cost_usd=np.nan), x="call")
    note = ax.get_legend().get_title().get_text()
    assert "cost unknown for every call" in note and "$" not in note


def test_token_growth_partly_unknown_sum_is_a_lower_bound():
    u = USAGE.assign(tokens_input=pd.array([1000, pd.NA, 3000], dtype="Int64"))
    ax = plots.token_growth(u, x="call")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == "input (incl. cached): ≥4k (1 call unknown)"


def test_compaction_ratio_unknown_size_is_no_bar_at_any_count():
    """Past 30 compactions the labels go, but an unknown size is still no bar, marked '?'."""
    n = 40
    sm = np.full(n, 100.0)
    sm[5] = np.nan
    df = pd.DataFrame({"swept_tokens": np.full(n, 2000.0), "summary_tokens": sm})
    ax = plots.compaction_ratio(df)
    heights = [p.get_height() for p in _gid(ax, "summary")]
    assert np.isnan(heights[5]) and heights[4] == 100
    (unknown,) = _gid(ax, "unknown")
    assert list(unknown.get_xdata()) == [6]


# --- 2. the context window at one call ----------------------------------------------------


def test_composition_at_draws_every_part_in_the_shared_colours():
    import matplotlib.colors as mcolors

    agent = adfkit.open_adf(sample("long-runner"))
    comp = agent.composition()
    seq = int(comp["seq"].iloc[100])
    ax = plots.composition_at(agent, seq)
    row = comp.set_index("seq").loc[seq]
    drawn = {p.get_gid(): p for p in ax.patches}
    want = [c for c in plots.COMPOSITION_PARTS if row[c] > 0]
    gap = drawn.pop("not_in_file")  # the provider counted more than the file holds
    assert gap.get_width() == pytest.approx(row["tokens_input"] - sum(row[c] for c in want))
    assert list(drawn) == want
    for c, patch in drawn.items():
        label, color = plots.COMPOSITION_PARTS[c]
        assert patch.get_width() == pytest.approx(row[c])
        assert mcolors.to_hex(patch.get_facecolor()) == mcolors.to_hex(color)
    # the bars lie end to end
    lefts = [p.get_x() for p in drawn.values()]
    assert lefts == pytest.approx(np.r_[0, np.cumsum([row[c] for c in want])[:-1]])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(lab.startswith("tool results: ") for lab in labels)
    assert ax.get_title() == f"Context window at call S{seq}: long-runner"
    (rep,) = _gid(ax, "reported_input")
    assert rep.get_xdata()[0] == row["tokens_input"]
    # one mapping: context_composition stacks the same parts in the same colours
    ax2 = plots.context_composition(agent)
    for poly in ax2.collections:
        if poly.get_gid() in drawn:
            got = mcolors.to_hex(poly.get_facecolor()[0])
            assert got == mcolors.to_hex(plots.COMPOSITION_PARTS[poly.get_gid()][1])
    agent.close()


def test_composition_at_defaults_to_the_last_call_and_names_near_calls():
    comp = pd.DataFrame(
        {
            "seq": [4, 9],
            "system_prompt_tokens": [np.nan, 50.0],
            "message_tokens": [10.0, 20.0],
            "tool_result_tokens": [0.0, 30.0],
            "tokens_input": pd.array([pd.NA, 400], dtype="Int64"),
            "tokens_total": pd.array([70, 420], dtype="Int64"),
        }
    )
    ax = plots.composition_at(comp)
    assert [p.get_gid() for p in ax.patches] == [
        "system_prompt_tokens",
        "message_tokens",
        "tool_result_tokens",
    ]
    assert ax.get_yticklabels()[0].get_text() == "S9"
    # The reported input (400) is more than 2.5x the estimate (100): a note, not a squashed bar.
    assert ax.get_xlim()[1] < 400
    (note,) = [t for t in ax.texts if t.get_gid() == "reported_note"]
    assert note.get_text() == "input the provider reported: 400"
    # A part that is not known is said to be unknown, not drawn as 0; a bare total shows as one.
    ax = plots.composition_at(comp, 4)
    assert [p.get_gid() for p in ax.patches] == ["message_tokens"]
    assert "unknown: system prompt" in ax.get_legend().get_title().get_text()
    (rep,) = _gid(ax, "reported_input")
    assert "total the provider reported" in rep.get_label() and rep.get_xdata()[0] == 70
    with pytest.raises(
        ValueError, match="seq 5 is not a model call; the nearest calls are at seq 4 and 9"
    ):
        plots.composition_at(comp, 5)


def test_composition_at_legacy_agent_shows_its_total():
    ax = plots.composition_at(sample("legacy-v12"))
    (rep,) = _gid(ax, "reported_input")
    assert rep.get_label().startswith("total the provider reported")


# --- 3. token tick labels -------------------------------------------------------------------


def test_token_ticks_keep_the_digits_the_spacing_needs():
    fig, ax = plt.subplots()
    plots._matplotlib._token_axis(ax)
    ax.set_ylim(0, 1_750_000)
    ax.set_yticks(np.arange(0, 1_750_001, 250_000))
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["0", "0.25M", "0.50M", "0.75M", "1.00M", "1.25M", "1.50M", "1.75M"]


@pytest.mark.parametrize("lo", [0, 990, 99_000, 999_000, 1_000_000, 12_345_678, 2e9])
@pytest.mark.parametrize("span", [7, 130, 2_500, 40_000, 1_234_567, 3e10])
def test_token_tick_labels_are_distinct_and_exact(lo, span):
    """Whatever ticks a locator picks, no two read the same and each reads as its value."""
    from matplotlib.ticker import MaxNLocator

    ticks = MaxNLocator(nbins=8).tick_values(lo, lo + span)
    _, ax = plt.subplots()
    plots._matplotlib._token_axis(ax)
    labels = ax.yaxis.get_major_formatter().format_ticks(ticks)
    assert len(set(labels)) == len(labels)
    units = {"k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
    for v, lab in zip(ticks, labels, strict=True):
        num = float(lab[:-1]) * units[lab[-1]] if lab[-1] in units else float(lab)
        assert num == pytest.approx(v, rel=1e-9, abs=1e-6), (lab, v)


# --- 4. readable at one compaction and at 181 -----------------------------------------------


def test_legend_lists_only_what_is_drawn():
    """forgetful's only compaction happened before its first call shown: it is drawn inside
    the axes (not on the spine) since the legend names it; legacy-v12 has no output tokens,
    so no 'output' entry."""
    ax = plots.context_sawtooth(sample("forgetful"))
    (mark,) = _gid(ax, "compaction")
    assert ax.get_xlim()[0] < mark.get_xdata()[0] < ax.get_xlim()[1]
    assert "compaction (1)" in [t.get_text() for t in ax.get_legend().get_texts()]
    ax = plots.turn_spend(sample("legacy-v12"))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "output" not in labels and not any(lab.startswith("input") for lab in labels)


def test_threshold_far_above_the_data_is_a_note_not_a_squash():
    calls = CALLS.assign(threshold=200_000)
    ax = plots.context_sawtooth(calls, events=EVENTS)
    (thr,) = _gid(ax, "threshold")
    assert list(thr.get_ydata()) == [200_000, 200_000]  # the number is kept
    assert ax.get_ylim()[1] < 2 * 950  # the data fill the axes
    (note,) = [t for t in ax.texts if t.get_gid() == "threshold_note"]
    assert note.get_text() == "threshold 200,000 above"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert not any(lab.startswith("threshold") for lab in labels)  # not drawn in view


def test_threshold_far_above_in_a_real_fixture():
    ax = plots.context_sawtooth(runtime_fixture("audited-messenger"))
    assert ax.get_ylim()[1] < 50_000
    (note,) = [t for t in ax.texts if t.get_gid() == "threshold_note"]
    assert "200,000" in note.get_text()


def _long_life(epochs=60, per=20):
    n = epochs * per
    ep = np.repeat(np.arange(epochs), per)
    within = np.tile(np.arange(per), epochs)
    return pd.DataFrame(
        {
            "seq": np.arange(1, n + 1) * 2,
            "epoch": ep,
            "tokens_total": 1000 + 400 * within,
            "est_tokens": 500 + 300 * within,
            "threshold": 8000,
            "system_prompt_tokens": 100.0,
            "tool_result_tokens": 200.0 * within,
        }
    )


def test_long_life_defaults_to_one_point_per_epoch():
    calls = _long_life()
    ax = plots.context_sawtooth(calls)
    (rep,) = _gid(ax, "reported")
    assert list(rep.get_ydata()) == [1000 + 400 * 19] * 60  # each epoch's peak
    assert list(rep.get_xdata()) == list(range(1, 61))
    (rng,) = [c for c in ax.collections if c.get_gid() == "reported_range"]
    assert len(rng.get_segments()) == 60
    assert len(_gid(ax, "compaction")) == 59  # one per epoch change, as a rug
    assert ax.get_xlabel().startswith("epoch")
    ax = plots.context_sawtooth(calls, view="calls")
    assert len(_gid(ax, "reported")[0].get_ydata()) == 1200
    ax = plots.context_sawtooth(calls.iloc[:200])  # 10 epochs: every call
    assert len(_gid(ax, "reported")[0].get_ydata()) == 200
    comp = plots.context_composition(calls)
    (tool,) = [c for c in comp.collections if c.get_gid() == "tool_result_tokens"]
    assert tool.get_paths()[0].vertices[:, 0].max() == 60
    with pytest.raises(ValueError, match="view must be one of"):
        plots.context_sawtooth(calls, view="zoom")
    with pytest.raises(ValueError, match="needs an 'epoch' column"):
        plots.context_sawtooth(calls.drop(columns="epoch"), view="epochs")


def test_big_runner_default_views_are_per_epoch():
    path = runtime_fixture("big-runner")
    with adfkit.open_adf(path) as agent:
        ax = plots.context_sawtooth(agent)
        assert len(_gid(ax, "reported")[0].get_ydata()) == 182
        assert len(_gid(ax, "compaction")) == 181
        ax = plots.turn_spend(agent)
        assert len(_gid(ax, "input")) <= 100 and _gid(ax, "group_max")


def test_many_turns_are_grouped():
    turns = pd.DataFrame(
        {"turn": np.arange(1, 401), "tokens_input": np.arange(400) * 10, "tokens_output": 5}
    )
    ax = plots.turn_spend(turns)
    bars = _gid(ax, "input")
    assert len(bars) == 100
    assert bars[0].get_height() == pytest.approx(np.mean([0, 10, 20, 30]))
    assert list(_gid(ax, "group_max")[0].get_ydata())[:2] == [35, 75]
    assert len(_gid(plots.turn_spend(turns, group=1), "input")) == 400
    with pytest.raises(ValueError, match="group must be"):
        plots.turn_spend(turns, group=0)


@pytest.mark.parametrize("seconds", [0.4, 9, 600, 3 * 86400])
def test_time_axis_reads_as_times(seconds):
    """Short lives too: '17:46:59.15', not a bare '59.15'; no two ticks alike."""
    from datetime import datetime

    import matplotlib.dates as mdates

    base = pd.Timestamp("2026-11-29 17:46:58.6", tz="UTC")
    t = pd.Series([base + pd.Timedelta(seconds=seconds * i / 9) for i in range(10)])
    u = (
        USAGE.iloc[[0] * 10]
        .reset_index(drop=True)
        .assign(created_at=t.astype("datetime64[ms, UTC]"))
    )
    ax = plots.token_growth(u)
    fig = ax.figure
    fig.canvas.draw()
    ticks = ax.get_xticks()
    labels = [lab.get_text() for lab in ax.get_xticklabels()]
    assert len(set(labels)) == len(labels) >= 3
    offset = ax.xaxis.get_offset_text().get_text()
    for v, lab in zip(ticks, labels, strict=True):
        when = mdates.num2date(v).replace(tzinfo=None)
        if seconds < 86400:
            assert ":" in lab
            fmt = "%H:%M:%S.%f" if "." in lab else ("%H:%M:%S" if lab.count(":") == 2 else "%H:%M")
            parsed = datetime.strptime(lab, fmt).time()
            assert abs(datetime.combine(when.date(), parsed) - when).total_seconds() < 1e-3, (
                lab,
                when,
            )
    if seconds < 86400:
        assert offset == "2026 Nov 29"


def test_time_axis_sums_in_time_order():
    """A manual compaction's summary is shown before rows written earlier: on a time axis
    the cumulative line still runs forward."""
    u = USAGE.assign(created_at=_times(0, 9, 5))
    (line,) = [ln for ln in plots.token_growth(u).lines if ln.get_gid() == "cum_input"]
    x = mpl.dates.date2num(line.get_xdata())
    assert list(np.diff(x) > 0) == [True, True]
    assert list(line.get_ydata()) == [1000, 4000, 6000]
    # A call without a time keeps its place in the sums: the line ends at the total.
    u = USAGE.assign(created_at=pd.Series([pd.NaT, *_times(5, 9)]).astype("datetime64[ms, UTC]"))
    ax = plots.token_growth(u)
    (line,) = [ln for ln in ax.lines if ln.get_gid() == "cum_input"]
    assert list(line.get_ydata()) == [3000, 6000]
    assert "1 call without a time: in the sums, not drawn" in ax.get_legend().get_title().get_text()


def _boxes_overlap(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _check_readable(ax):
    """The legend lies outside the axes, inside the figure; every entry is drawn in view;
    no two texts overlap; the data are not flattened under a reference line."""
    fig = ax.figure
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    fig_box = fig.bbox
    tb = ax.title.get_window_extent(r)
    assert tb.x0 >= fig_box.x0 - 1 and tb.x1 <= fig_box.x1 + 1, "title clipped"
    leg = ax.get_legend()
    if leg is not None:
        lb = leg.get_window_extent(r)
        assert lb.x0 >= fig_box.x0 - 1 and lb.x1 <= fig_box.x1 + 1, "legend clipped"
        assert lb.y0 >= fig_box.y0 - 1 and lb.y1 <= fig_box.y1 + 1, "legend clipped"
        assert not _boxes_overlap(lb, ax.get_window_extent(r)), "legend covers the plot"
        drawn: dict[str, list] = {}
        for h in ax.get_legend_handles_labels()[0]:
            drawn.setdefault(h.get_label(), []).append(h)
        for t in leg.get_texts():  # an entry names something drawn in view
            assert any(plots._matplotlib._in_view(ax, h) for h in drawn.get(t.get_text(), [])), (
                t.get_text()
            )
    texts = [t for t in ax.texts if t.get_visible() and t.get_text()]
    boxes = [t.get_window_extent(r) for t in texts]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not _boxes_overlap(boxes[i], boxes[j]), (
                texts[i].get_text(),
                texts[j].get_text(),
            )
    for which, lab in (("x", ax.get_xticklabels()), ("y", ax.get_yticklabels())):
        shown = [t.get_text() for t in lab if t.get_text()]
        if which == "x" and ax.get_xlabel() == "time (UTC)":
            # concise dates: '12:00' may come back on the next day, after that day's label
            day, keys = "", []
            for s in shown:
                day = s if ":" not in s else day
                keys.append((day, s))
            shown = keys
        assert len(set(shown)) == len(shown), shown


REVIEW = [
    ("forgetful", lambda: sample("forgetful")),
    ("long-runner", lambda: sample("long-runner")),
    ("legacy-v12", lambda: sample("legacy-v12")),
    ("big-runner", lambda: runtime_fixture("big-runner")),
    ("audited-messenger", lambda: runtime_fixture("audited-messenger")),
]


@pytest.mark.parametrize("name,path", REVIEW, ids=[n for n, _ in REVIEW])
def test_every_kind_is_readable(name, path, tmp_path):
    with adfkit.open_adf(path()) as agent:
        for kind, func in plots.PLOTS.items():
            ax = func(agent)
            _check_readable(ax)
            ax.figure.savefig(tmp_path / f"{name}-{kind}.png")
            plt.close(ax.figure)


def test_legend_inside_on_a_figure_without_layout_engine():
    """On the caller's own figure (no layout engine to make room) the legend goes inside,
    where it covers the least."""
    fig, (left, right) = plt.subplots(1, 2)
    plots.context_sawtooth(CALLS, ax=left)
    leg = left.get_legend()
    assert leg._loc == 0  # "best"
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert not _boxes_overlap(leg.get_window_extent(r), right.get_window_extent(r))


# --- 5. total-only token counts -------------------------------------------------------------


def test_turn_spend_shows_bare_totals_as_totals():
    turns = pd.DataFrame(
        {
            "turn": [1, 2, 3],
            "tokens_input": [100, 0, 50],
            "tokens_output": [10, 0, 5],
            "tokens_total": [110, 700, 555],  # turn 2 only totals; turn 3 has 500 more
        }
    )
    ax = plots.turn_spend(turns)
    assert [p.get_height() for p in _gid(ax, "input")] == [100, 0, 50]
    assert [p.get_height() for p in _gid(ax, "total")] == [0, 700, 500]
    assert [p.get_y() for p in _gid(ax, "total")] == [110, 0, 55]
    assert list(_gid(ax, "median")[0].get_ydata()) == [555, 555]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == "total only (no input/output split)"


def test_legacy_agent_spend_is_totals_only():
    path = sample("legacy-v12")
    with adfkit.open_adf(path) as agent:
        h = agent.history()
        from adfkit._analysis.usage import load_prices, turns_frame, usage_frame

        u, _, _ = usage_frame(h, load_prices())
        turns = turns_frame(h, u)
        ax = plots.turn_spend(agent)
    assert _gid(ax, "input") == [] and _gid(ax, "output") == []
    assert [p.get_height() for p in _gid(ax, "total")] == list(turns["tokens_total"])


def test_token_growth_mixed_layout_draws_the_total_too():
    u = USAGE.assign(
        tokens_input=pd.array([1000, pd.NA, 3000], dtype="Int64"),
        tokens_output=pd.array([10, pd.NA, 30], dtype="Int64"),
        tokens_total=pd.array([1010, 2020, 3030], dtype="Int64"),
    )
    ax = plots.token_growth(u, x="call")
    lines = {ln.get_gid(): list(ln.get_ydata()) for ln in ax.lines}
    assert lines["cum_total"] == [1010, 3030, 6060]
    assert lines["cum_input"] == [1000, 1000, 4000]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "input (incl. cached): ≥4k (1 call unknown)" in labels
    assert "total, every call (1 have no split): 6.06k" in labels


# --- 6. agent text is plain text --------------------------------------------------------------

NASTY = ["$\\foo$", "$" + "\\sqrt{" * 200 + "}" * 200 + "$", "\\sqrt{" * 200]


def _nasty_agent(path, text):
    from adfbuild import build, result, row, use
    from adfbuild import text as t

    loop = []
    s = 1
    for i in range(4):
        loop.append(row(s, "user", t(f"ask {i}")))
        loop.append(
            row(
                s + 1,
                "assistant",
                [*t("ok"), use(f"u{i}", text)],
                model=text,
                tokens={"input": 100 + 50 * i, "output": 10},
            )
        )
        loop.append(row(s + 2, "user", [result(f"u{i}", text)]))
        s += 3
    cfg = {"name": text, "context": {"compact_threshold": 1000}}
    return build(path, loop=loop, config=cfg, meta={"adf_name": text})


@pytest.mark.parametrize("text", NASTY, ids=["foo", "sqrt-math", "sqrt"])
def test_agent_text_is_drawn_as_plain_text(text, tmp_path):
    path = _nasty_agent(tmp_path / "nasty.adf", text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open_adf(path) as agent:
            assert agent.name == text
            for kind, func in plots.PLOTS.items():
                ax = func(agent)
                _check_readable(ax)
                ax.figure.savefig(tmp_path / f"{kind}.png")
                title = ax.get_title()
                assert title.endswith(text[:20]) or text[:20] in title, title
                if kind == "growth":  # the unpriced model is named in the legend
                    assert f"no price for '{text[:31]}" in ax.get_legend().get_title().get_text()
                plt.close(ax.figure)
            assert main(["plot", str(path), "--kind", "all", "-o", str(tmp_path / "all")]) == 0


def test_caller_title_may_still_use_mathtext():
    ax = plots.compaction_ratio(
        pd.DataFrame({"swept_tokens": [10], "summary_tokens": [1]}), title=r"$\alpha$ ratio"
    )
    assert ax.title.get_parse_math()
    ax.figure.savefig(__import__("io").BytesIO())


# --- 7. a threshold that cannot be placed ----------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        [1e300] * 6,
        pd.array([pd.NA] * 6, dtype="Int64"),
        pd.Series([2**64 - 1] * 6, dtype=object),
        [float("inf")] * 6,
    ],
    ids=["1e300", "NA", "2**64-1", "inf"],
)
def test_threshold_out_of_range_is_not_drawn(values):
    ax = plots.context_sawtooth(CALLS.assign(threshold=values), events=EVENTS)
    assert _gid(ax, "threshold") == []
    (note,) = [t for t in ax.texts if t.get_gid() == "threshold_note"]
    assert note.get_text().startswith("threshold not drawn: ")
    assert ax.get_ylim()[1] < 2000
    ax.figure.savefig(__import__("io").BytesIO())


def test_threshold_override_out_of_range_and_partly_known():
    ax = plots.context_sawtooth(CALLS, threshold=2**64 - 1)
    assert _gid(ax, "threshold") == []
    note = [t for t in ax.texts if t.get_gid() == "threshold_note"][0].get_text()
    assert note == "threshold not drawn: 1.84e+19 is out of range"
    part = CALLS.assign(threshold=pd.array([1000, 1000, 1000, pd.NA, pd.NA, pd.NA], dtype="Int64"))
    ax = plots.context_sawtooth(part)
    (thr,) = _gid(ax, "threshold")
    assert list(thr.get_ydata())[:3] == [1000, 1000, 1000] and np.isnan(thr.get_ydata()[3])
    note = [t for t in ax.texts if t.get_gid() == "threshold_note"][0].get_text()
    assert note.startswith("threshold not drawn at 3 of 6 calls")


def test_agent_whose_threshold_is_none(monkeypatch):
    """The threshold rule may answer None (out of range in the config): no line, a note."""
    agent = adfkit.open_adf(sample("clean"))
    real = agent.replay()
    monkeypatch.setattr(type(agent), "compact_threshold", lambda self: None)
    monkeypatch.setattr(type(agent), "replay", lambda self: real.drop(columns="threshold"))
    ax = plots.context_sawtooth(agent)
    assert _gid(ax, "threshold") == []
    assert [t.get_gid() for t in ax.texts].count("threshold_note") == 1
    agent.close()


@pytest.mark.parametrize("value", [1e300, 2**64 - 1])
def test_agent_file_with_an_out_of_range_threshold(value, tmp_path):
    from adfbuild import build, row, text

    loop = [
        row(1, "user", text("hi")),
        row(2, "assistant", text("ok"), tokens={"input": 9, "output": 1}),
    ]
    path = build(tmp_path / "a.adf", loop=loop, config={"context": {"compact_threshold": value}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open_adf(path) as agent:
            assert agent.replay()["threshold"].isna().all()
            for kind, func in plots.PLOTS.items():
                ax = func(agent)
                ax.figure.savefig(tmp_path / f"{kind}.png")
                plt.close(ax.figure)


# --- 8. the CLI writes what it says, where it is told -----------------------------------------


def test_cli_adds_png_and_prints_the_path_written(tmp_path, capsys):
    out = tmp_path / "ctx"
    assert main(["plot", str(sample("clean")), "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"{out}.png\n"
    assert (tmp_path / "ctx.png").read_bytes()[:8] == PNG
    assert not out.exists()
    assert main(["plot", str(sample("clean")), "-o", str(tmp_path / "x.svg")]) == 2
    assert "give a .png name" in capsys.readouterr().err
    assert not (tmp_path / "x.svg").exists()


def test_cli_all_wants_a_folder_not_a_png_name(tmp_path, capsys):
    out = tmp_path / "x.png"
    assert main(["plot", str(sample("clean")), "--kind", "all", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "-o is a folder" in err
    assert not out.exists()
    (tmp_path / "afile").write_text("x")
    assert main(["plot", str(sample("clean")), "--kind", "all", "-o", str(tmp_path / "afile")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_cli_window_seq(tmp_path, capsys):
    seq = int(adfkit.open_adf(sample("clean")).composition()["seq"].iloc[3])
    out = tmp_path / "w.png"
    assert (
        main(["plot", str(sample("clean")), "--kind", "window", "--seq", str(seq), "-o", str(out)])
        == 0
    )
    assert out.read_bytes()[:8] == PNG
    assert (
        main(["plot", str(sample("clean")), "--kind", "window", "--seq", "0", "-o", str(out)]) == 2
    )
    assert "is not a model call" in capsys.readouterr().err
    assert main(["plot", str(sample("clean")), "--seq", "3", "-o", str(out)]) == 2


def test_cli_writes_beside_the_input_but_never_onto_it(tmp_path, capsys):
    """The agent file's own folder is fine; the file itself and SQLite's names for its
    sidecars (-wal, -shm, -journal) are not, whatever the kind."""
    src = tmp_path / "clean.adf"
    src.write_bytes(sample("clean").read_bytes())
    digest = fingerprint(tmp_path)["clean.adf"]
    assert main(["plot", str(src), "-o", str(tmp_path / "ctx.png")]) == 0
    assert main(["plot", str(src), "--kind", "all", "-o", str(tmp_path)]) == 0
    written = capsys.readouterr().out.split()
    assert written[0] == str(tmp_path / "ctx.png")
    assert sorted(written[1:]) == sorted(str(tmp_path / f"clean-{k}.png") for k in plots.PLOTS)
    assert all((tmp_path / p).exists() for p in written)
    assert fingerprint(tmp_path)["clean.adf"] == digest
    before = sorted(os.listdir(tmp_path))
    for suffix in ("-wal", "-shm", "-journal"):
        side = str(src) + suffix
        assert main(["plot", str(src), "--kind", "all", "-o", side]) == 2
        err = capsys.readouterr().err
        assert "the name SQLite uses beside the input" in err and f"({suffix})" in err
        assert main(["plot", str(src), "-o", side]) == 2
        capsys.readouterr()
    # an agent file that happens to have a .png name is not overwritten either
    png_src = tmp_path / "agent.png"
    png_src.write_bytes(src.read_bytes())
    before.append("agent.png")
    assert main(["plot", str(png_src), "-o", str(png_src)]) == 2
    assert "it is the input file" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == sorted(before)
    assert fingerprint(tmp_path)["clean.adf"] == digest


def test_save_all_beside_the_input_and_the_sidecar_rule(tmp_path):
    src = tmp_path / "clean.adf"
    src.write_bytes(sample("clean").read_bytes())
    paths = plots.save_all(src, tmp_path)
    assert [p.parent for p in paths] == [tmp_path] * len(plots.PLOTS)
    with pytest.raises(adfkit.AdfError, match="the name SQLite uses beside the input .*-shm"):
        plots.save_all(src, str(src) + "-shm")
    assert not (tmp_path / "clean.adf-shm").exists()
    link = tmp_path / "link.png"
    link.symlink_to(src)
    with pytest.raises(adfkit.AdfError, match="it is the input file"):
        check_output(link, [src])
    hard = tmp_path / "hard.png"
    os.link(src, hard)
    with pytest.raises(adfkit.AdfError, match="it is the input file .* under another name"):
        check_output(hard, [src])
    # a symlinked input: its own name's sidecars and its target's are both refused
    alias = tmp_path / "alias.adf"
    alias.symlink_to(src)
    for out in (str(alias) + "-wal", str(src) + "-wal"):
        with pytest.raises(adfkit.AdfError, match="-wal"):
            check_output(out, [alias])


def test_what_the_file_does_not_hold_is_its_own_segment_wherever_a_context_is_stacked():
    """Issue 19.5: the estimate sees only what the file holds; the rest of the reported input
    (system prompt and tools not logged) is drawn as "not in the file", never hidden."""
    agent = adfkit.open_adf(sample("long-runner"))
    comp = agent.composition().reset_index(drop=True)
    parts = [c for c in plots.COMPOSITION_PARTS if c in comp.columns]
    want = (comp["tokens_input"].astype("float64") - comp[parts].sum(axis=1)).clip(lower=0)
    ax = plots.context_composition(agent, view="calls")
    (area,) = [c for c in ax.collections if c.get_gid() == "not_in_file"]
    top = area.get_paths()[0].vertices[:, 1].max()
    assert top == pytest.approx(float((comp[parts].sum(axis=1) + want).max()))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("not in the file")
    plots.close(ax)


def test_an_assumed_threshold_says_so():
    """Issue 19.6: a threshold no record states (Codex: 90% of the window, Claude Code: its
    formula) is labelled "assumed"; an ADF file's configured one is not."""
    codex = next(SAMPLES.glob("codex/**/*.jsonl"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = adfkit.open(codex)
        assert set(agent.replay()["threshold_source"]) == {"assumed"}
        ax = plots.context_sawtooth(agent)
    texts = [t.get_text() for t in ax.texts] + [ln.get_label() for ln in ax.get_lines()]
    assert any(t.startswith("assumed threshold") for t in texts)
    plots.close(ax)
    ax = plots.context_sawtooth(adfkit.open_adf(sample("long-runner")))
    labels = [ln.get_label() for ln in ax.get_lines() if ln.get_gid() == "threshold"]
    assert labels == ["threshold (9,000 tokens)"]
    plots.close(ax)
