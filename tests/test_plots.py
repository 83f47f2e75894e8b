"""adfkit.plots: what each plot draws (asserted on the returned Axes), PNG output, the CLI."""

from __future__ import annotations

import json
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
    assert [p.get_height() for p in _gid(ax, "summary")] == [300, 400, 0]
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
    assert "must be a new PNG path" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "nope.adf"), "-o", str(tmp_path / "x.png")]) == 2
    assert capsys.readouterr().err.startswith("adfkit: error:")


def test_cli_plot_help_has_example(capsys):
    with pytest.raises(SystemExit):
        main(["plot", "--help"])
    assert "Example: adfkit plot" in capsys.readouterr().out


def test_plots_refuse_to_write_beside_the_input(tmp_path, capsys):
    """Like the report, plots never create a file in the agent file's own folder."""
    src = tmp_path / "clean.adf"
    src.write_bytes(sample("clean").read_bytes())
    before = fingerprint(tmp_path)
    with pytest.raises(adfkit.AdfError, match="next to the agent file"):
        plots.save_all(src, tmp_path)
    assert main(["plot", str(src), "-o", str(tmp_path / "ctx.png")]) == 2
    assert "next to the agent file" in capsys.readouterr().err
    assert main(["plot", str(src), "--kind", "all", "-o", str(tmp_path)]) == 2
    assert fingerprint(tmp_path) == before
