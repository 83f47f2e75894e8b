"""Plots of an agent's memory: context size against the threshold, token spend, compactions.

Every function takes an :class:`adfkit.AgentFile` (or a path to an ``.adf`` file, or the
DataFrame it needs) and ``ax=None``, draws on ``ax`` (or on a new figure with constrained
layout) and returns the Axes. None calls ``plt.show()`` or changes the global ``rcParams``:
style settings apply only while a plot is drawn. Matplotlib is imported on first use, so
``import adfkit.plots`` is cheap.

================  =====================================================================
kind (CLI)        function
================  =====================================================================
``context``       :func:`context_sawtooth`: context size per model call vs the threshold
``growth``        :func:`token_growth`: cumulative input/output tokens over time
``spend``         :func:`turn_spend`: input and output tokens per turn
``ratio``         :func:`compaction_ratio`: swept vs summary size per compaction
``composition``   :func:`context_composition`: what each call was sent, stacked by part
``window``        :func:`composition_at`: the parts of the context window at one call
================  =====================================================================

:func:`save_all` writes every plot of one agent as PNG files.

What the plots promise, whatever the agent:

- Agent text (its name, model ids) is drawn as plain text: a ``$`` or a backslash in it is
  shown as written, never read as matplotlib mathtext or LaTeX.
- An unknown number stays unknown: a missing price, token split or summary size is said to
  be unknown in the labels, never drawn or summed as 0.
- Tick labels on token axes never repeat and never round a tick's value away (``1.25M``, not
  ``1.2M``); time axes read as dates and times of day (UTC).
- The legend lists only what is drawn in view. It sits outside the axes (right) on a figure
  with a layout engine, such as the ones these functions create; on a figure without one it
  goes where it covers the least data.
- A reference line far above the data (a threshold of 200,000 tokens over a context of
  10,000) is not allowed to flatten the data: the axes stop above the data and a note with
  an arrow says where the line is. A threshold that cannot be placed (missing, infinite,
  more than 2**53 tokens) is not drawn, and a note says so.
- A long life (more than :data:`MANY_EVENTS` compactions) is drawn one point per epoch by
  default (``view="auto"``); ``view="calls"`` draws every call.

Examples
--------
>>> import adfkit
>>> from adfkit import plots
>>> with adfkit.open_adf("sample_agents/clean.adf") as agent:
...     ax = plots.context_sawtooth(agent)
>>> ax.get_ylabel()
'tokens'
>>> plots.close(ax)
"""

from __future__ import annotations

import contextlib
import math
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pandas as pd

from adfkit._analysis.usage import load_prices, turns_frame, usage_frame
from adfkit._base.errors import AdfWarning
from adfkit._base.outputs import check_output, safe_name
from adfkit._base.parts import NOT_IN_FILE as _NOT_IN_FILE
from adfkit._base.parts import PARTS
from adfkit._core.registry import agent_stem
from adfkit._facade.agent import AgentFile
from adfkit._facade.agent import open_one as open_agent

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.legend import Legend

__all__ = [
    "COMPOSITION_PARTS",
    "PLOTS",
    "close",
    "compaction_ratio",
    "composition_at",
    "context_composition",
    "context_sawtooth",
    "save_all",
    "token_growth",
    "turn_spend",
]

AgentLike: TypeAlias = AgentFile | str | os.PathLike[str]
Data: TypeAlias = AgentLike | pd.DataFrame

#: Style applied while a plot is drawn (restored afterwards).
STYLE: dict[Any, Any] = {
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "legend.fontsize": 9,
    "legend.framealpha": 0.9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
}

#: Colours (Okabe-Ito, colour-blind safe).
C_REPORTED = "#0072B2"
C_ESTIMATE = "#009E73"
C_THRESHOLD = "#D55E00"
C_COMPACTION = "#7f7f7f"
C_INPUT = "#0072B2"
C_OUTPUT = "#E69F00"
C_CACHE = "#56B4E9"
C_TOTAL_ONLY = "#8c8c8c"
C_SWEPT = "#56B4E9"
C_SUMMARY = "#CC79A7"
C_NOTE = "0.3"

FIGSIZE = (9.0, 4.5)

X_CALL = "model call (n-th, over the whole history)"
X_EPOCH = "epoch (n-th stretch of calls between compactions or clears)"
X_TURN = "turn (starts at a trigger or message)"
Y_TURN = "tokens (summed over the turn's calls)"
X_COMP = "compaction (n-th)"
Y_COMP = "estimated tokens (chars / 3.5)"

#: Columns read from ``AgentFile.replay()``: the provider-reported ``input + output`` and the
#: estimate of the conversation (first present wins).
REPORTED_COLS = ("tokens_total",)
ESTIMATE_COLS = ("est_tokens",)

#: Past this many compactions (and clears), event lines become a rug along the bottom and
#: ``view="auto"`` draws one point per epoch instead of one per call.
MANY_EVENTS = 40
#: A threshold more than this many times the data's peak is kept out of view (with a note).
THRESHOLD_CLIP = 2.5
#: The largest threshold that can be placed on a token axis (exact in float64).
MAX_TOKENS = 2**53
#: Views of :func:`context_sawtooth` and :func:`context_composition`.
VIEWS = ("auto", "calls", "epochs")

_UNITS = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))


# --- shared helpers -----------------------------------------------------------------------


@contextlib.contextmanager
def _drawing(ax: Axes | None, figsize: tuple[float, float] = FIGSIZE) -> Iterator[Axes]:
    """Yield the Axes to draw on, with :data:`STYLE` in force only for the duration; every
    text drawn meanwhile is made plain text (see :func:`_plain`)."""
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    with plt.rc_context(STYLE):
        if ax is None:
            _, ax = plt.subplots(figsize=figsize, layout="constrained")
        before = {id(t) for t in ax.findobj(Text)}
        yield ax
        _plain(ax, before)


def _plain(ax: Axes, before: set[int]) -> None:
    """Agent text is plain text: no mathtext (``$...$``), no LaTeX, on every Text object the
    plot created (legend entries, notes, annotations) and on the axis labels. The title is
    left to :func:`_title` (a caller's own title may use mathtext)."""
    from matplotlib.text import Text

    for t in ax.findobj(Text):
        if t is ax.title:
            continue
        if id(t) not in before or t is ax.xaxis.label or t is ax.yaxis.label:
            t.set_parse_math(False)
            t.set_usetex(False)


@contextlib.contextmanager
def _agent(data: AgentLike) -> Iterator[AgentFile]:
    """An open AgentFile for ``data``; a path is opened here and closed afterwards."""
    if isinstance(data, AgentFile):
        yield data
        return
    with open_agent(data) as agent:
        yield agent


def figure_of(ax: Axes) -> Figure:
    """The top-level figure an Axes is drawn on."""
    fig = ax.get_figure(root=True)
    assert fig is not None, "an Axes drawn by adfkit always has a figure"
    return fig


def _is_agent_like(data: Any) -> bool:
    return isinstance(data, AgentFile | str | os.PathLike)


def _col(df: pd.DataFrame, names: tuple[str, ...], what: str) -> str:
    for n in names:
        if n in df.columns:
            return n
    raise ValueError(f"the DataFrame has no {what} column (one of {list(names)}) ")


def _need(df: pd.DataFrame, cols: list[str], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what} needs column(s) {missing}; got {list(df.columns)}")


def _floats(s: pd.Series) -> np.ndarray:
    """A column as float64 with NaN for anything missing or not a number."""
    out: np.ndarray = pd.to_numeric(s, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    return out


def _fmt_tokens(v: float | None, _pos: object = None) -> str:
    """A token count for a label, 3 significant digits: 1234 -> '1.23k', 2_500_000 ->
    '2.5M'; NaN or None -> 'unknown'."""
    if v is None or not np.isfinite(v):
        return "unknown"
    if abs(v) < 999.5:
        return f"{v:.0f}"
    if abs(v) >= 999.5e12:
        return f"{v:.3g}"
    for unit, suffix in reversed(_UNITS):
        s = f"{v / unit:.3g}"
        if abs(float(s)) < 1000:
            return s + suffix
    return f"{v:.3g}"  # pragma: no cover - the loop always returns below 1e15


def _fmt_count(v: Any) -> str:
    """A number as written in a note: ``200,000``; a huge one in scientific notation."""
    try:
        f = float(v)
    except OverflowError:
        return "a number too large to place"
    except (TypeError, ValueError):
        return f"{_short(v, 20)!r} (not a number)"
    if not math.isfinite(f):
        return str(f)
    return f"{f:,.0f}" if abs(f) <= MAX_TOKENS else f"{f:.3g}"


def _tick_labels(values: Sequence[float]) -> list[str]:
    """Labels for token ticks: one unit for all (``k``, ``M``, ``B``, ``T``), and as many
    decimals as the ticks need, so no two ticks read the same and none is rounded away.

    Examples
    --------
    >>> from adfkit.plots import _tick_labels
    >>> _tick_labels([1_000_000, 1_250_000, 1_500_000, 1_750_000])
    ['1.00M', '1.25M', '1.50M', '1.75M']
    >>> _tick_labels([0, 5_000, 10_000])
    ['0', '5k', '10k']
    """
    vals = np.asarray(values, dtype="float64")
    fin = vals[np.isfinite(vals)]
    top = float(np.abs(fin).max()) if len(fin) else 0.0
    if top >= 1e15:  # no token count is this large: scientific notation, enough digits
        for p in range(2, 18):
            sci = [f"{v:.{p}g}" if np.isfinite(v) else "" for v in vals]
            if len(set(sci)) == len(sci):
                return sci
        return sci
    unit, suffix = next(((u, s) for u, s in _UNITS if top >= u), (1.0, ""))

    def label(v: float, d: int) -> str:
        if not np.isfinite(v):
            return ""
        if v == 0:
            return "0"
        return f"{v / unit:.{d}f}{suffix}"

    for d in range(0, 16):
        labels = [label(v, d) for v in vals]
        exact = all(
            abs(round(v / unit, d) - v / unit) <= 1e-9 * max(1.0, abs(v / unit)) for v in fin
        )
        if exact and len(set(labels)) == len(labels):
            return labels
    return [f"{v:.6g}" for v in vals]


def _token_formatter() -> Any:
    """A matplotlib Formatter that labels ticks with :func:`_tick_labels`."""
    from matplotlib.ticker import Formatter

    class TokenFormatter(Formatter):
        def format_ticks(self, values: Sequence[float]) -> list[str]:
            self.set_locs(list(values))
            return _tick_labels(values)

        def __call__(self, x: float, pos: int | None = None) -> str:
            locs = sorted({float(v) for v in self.locs} | {float(x)})
            return _tick_labels(locs)[locs.index(float(x))]

    return TokenFormatter()


def _token_axis(ax: Axes, axis: str = "y") -> None:
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(_token_formatter())


def _date_axis(ax: Axes) -> None:
    """Dates and times of day (UTC) with concise labels: ``09:30``, ``17:57:45``,
    ``17:46:59.15`` (never a bare ``59.15``); the date is written once, at the axis end."""
    import matplotlib.dates as mdates

    loc = mdates.AutoDateLocator(minticks=3, maxticks=7)
    # Steps of 2 too, so a span of 9 seconds or minutes gets more than two ticks.
    loc.intervald[mdates.SECONDLY] = [1, 2, 5, 10, 15, 30]
    loc.intervald[mdates.MINUTELY] = [1, 2, 5, 10, 15, 30]
    fmt = mdates.ConciseDateFormatter(
        loc,
        formats=["%Y", "%b", "%d", "%H:%M", "%H:%M", "%H:%M:%S.%f"],
        zero_formats=["", "%Y", "%b", "%b %d", "%H:%M", "%H:%M:%S.%f"],
        offset_formats=["", "%Y", "%Y %b", "%Y %b %d", "%Y %b %d", "%Y %b %d"],
    )
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(fmt)
    ax.set_xlabel("time (UTC)")


def _int_axis(ax: Axes) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=10))


def _times(s: pd.Series) -> np.ndarray:
    """UTC datetimes as naive datetime64 (what matplotlib's date axis plots)."""
    out: np.ndarray = s.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[ms]")
    return out


def _gid(container: Any, gid: str) -> None:
    """Tag every bar of a container (containers themselves carry no gid)."""
    for patch in container:
        patch.set_gid(gid)


def _empty(ax: Axes, message: str, xlabel: str, ylabel: str) -> None:
    """A finished-looking empty plot: the title stays, a message says why it is empty."""
    ax.text(
        0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="0.4", wrap=True
    )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_axis_off()


def _short(text: Any, n: int = 40) -> str:
    """Agent text cut to ``n`` characters for a label (``…`` marks the cut)."""
    s = str(text).replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def _title(ax: Axes, title: str | None, default: str, name: str | None) -> None:
    """The caller's title as given, or ``default: <agent name>`` as plain text."""
    if title is not None:
        ax.set_title(title)
        return
    if not name:
        ax.set_title(default)
    else:  # a long name goes on a line of its own, so the title stays inside the figure
        full = f"{default}: {_short(name, 60)}"
        ax.set_title(full if len(full) <= 60 else f"{default}:\n{_short(name, 60)}")
    ax.title.set_parse_math(False)
    ax.title.set_usetex(False)


def close(ax: Axes) -> None:
    """Close the figure that holds ``ax`` (frees its memory in scripts and tests).

    Examples
    --------
    >>> from adfkit import plots
    >>> import pandas as pd
    >>> ax = plots.compaction_ratio(pd.DataFrame({"swept_tokens": [900], "summary_tokens": [90]}))
    >>> plots.close(ax)
    """
    import matplotlib.pyplot as plt

    plt.close(figure_of(ax))


def _in_view(ax: Axes, artist: Any) -> bool:
    """Whether any point of ``artist`` lies inside the axes' current limits (a bar of zero
    height or an all-NaN line counts as not drawn)."""
    from matplotlib.collections import Collection
    from matplotlib.container import Container
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    if isinstance(artist, Container):
        return any(_in_view(ax, a) for a in artist if a is not None)
    if not artist.get_visible():
        return False
    if isinstance(artist, Line2D):
        pts = np.asarray(artist.get_xydata(), dtype="float64")
    elif isinstance(artist, Rectangle):
        if not artist.get_height() or not np.isfinite(artist.get_height()):
            return False
        pts = np.asarray(artist.get_path().vertices)
    elif isinstance(artist, Patch):
        pts = np.asarray(artist.get_path().vertices)
    elif isinstance(artist, Collection):
        paths = artist.get_paths()
        if not paths:
            return False
        pts = np.concatenate([p.vertices for p in paths])
    else:  # pragma: no cover - every artist adfkit labels is one of the above
        return True
    if not len(pts):
        return False
    data = (artist.get_transform() - ax.transData).transform(pts)
    x0, x1 = sorted(ax.get_xlim())
    y0, y1 = sorted(ax.get_ylim())
    tx, ty = 1e-9 * max(1.0, abs(x1 - x0)), 1e-9 * max(1.0, abs(y1 - y0))
    ok = (
        np.isfinite(data).all(axis=1)
        & (data[:, 0] >= x0 - tx)
        & (data[:, 0] <= x1 + tx)
        & (data[:, 1] >= y0 - ty)
        & (data[:, 1] <= y1 + ty)
    )
    return bool(ok.any())


def _legend(
    ax: Axes,
    handles: list[Any] | None = None,
    *,
    title: str | None = None,
) -> Legend | None:
    """The legend of what is drawn in view, outside the axes on the right when the figure
    has a layout engine to make room for it (the figures adfkit creates do), else inside
    where it covers the least. Call it after the limits are set."""
    if handles is None:
        handles, _ = ax.get_legend_handles_labels()
    keep = [h for h in handles if _in_view(ax, h)]
    labels = [str(h.get_label()) for h in keep]
    if not keep and not title:
        return None
    kw: dict[str, Any] = {"title": title, "alignment": "left"}
    if figure_of(ax).get_layout_engine() is not None:
        kw.update(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        kw.update(loc="best")
    leg = ax.legend(keep, labels, **kw)
    if title:
        leg.get_title().set_fontsize(8)
        leg.get_title().set_color(C_NOTE)
    return leg


def _note(ax: Axes, text: str, *, gid: str, color: str = C_NOTE, arrow: bool = False) -> None:
    """A note in the top right corner of the axes; with ``arrow``, pointing up out of it
    (at something above the plot)."""
    if arrow:
        ax.annotate(
            text,
            xy=(0.985, 1.0),
            xycoords="axes fraction",
            xytext=(0.985, 0.93),
            textcoords="axes fraction",
            ha="right",
            va="top",
            fontsize=8,
            color=color,
            gid=gid,
            arrowprops={"arrowstyle": "->", "color": color, "lw": 1.0, "relpos": (1.0, 1.0)},
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85},
        )
    else:
        ax.text(
            0.985,
            0.96,
            text,
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=8,
            color=color,
            gid=gid,
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85},
        )


def _placeable(v: Any) -> float | None:
    """``v`` as a float if a threshold line can be drawn there (a finite number from 0 to
    :data:`MAX_TOKENS`), else None (missing, not a number, infinite, out of range)."""
    if v is None:
        return None
    try:
        if pd.isna(v):
            return None
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) and 0 <= f <= MAX_TOKENS else None


def _mark_events(ax: Axes, marks: list[Any], *, gid: str, label: str, ls: Any) -> None:
    """One vertical line per event (gid ``gid``); a short rug at the bottom when there are
    many; ``×k`` above a line that stands for k events between the same two calls."""
    many = len(marks) > MANY_EVENTS
    for i, pos in enumerate(marks):
        ax.axvline(
            pos,
            ymax=0.035 if many else 1.0,
            color=C_COMPACTION,
            lw=0.8 if many else 0.9,
            ls="-" if many else ls,
            gid=gid,
            label=f"{label} ({len(marks)})" if i == 0 else "_nolegend_",
        )
    counts: dict[Any, int] = {}
    for pos in marks:
        counts[pos] = counts.get(pos, 0) + 1
    for pos, k in counts.items():
        if k > 1 and not many:
            ax.annotate(
                f"×{k}",
                (pos, 0.8),
                xycoords=("data", "axes fraction"),
                xytext=(3, 0),
                textcoords="offset points",
                ha="left",
                va="bottom",
                fontsize=8,
                color="0.25",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
            )


def _call_xlim(ax: Axes, n: int, marks: list[Any]) -> None:
    """x limits of a call (or epoch) axis: every call and every event marker in view (a
    compaction before the first call shown sits left of it, not on the spine)."""
    pos = [float(m) for m in marks]
    lo = min([0.5, *(p - 0.5 for p in pos)])
    hi = max([n + 0.5, *(p + 0.5 for p in pos)])
    ax.set_xlim(lo, hi)


def _epoch_groups(frame: pd.DataFrame) -> np.ndarray | None:
    """For each row, the 0-based index of its run of equal ``epoch`` (None without one)."""
    if "epoch" not in frame.columns or not len(frame):
        return None
    ep = _floats(frame["epoch"])
    change = np.r_[False, ~((ep[1:] == ep[:-1]) | (np.isnan(ep[1:]) & np.isnan(ep[:-1])))]
    out: np.ndarray = np.cumsum(change)
    return out


def _choose_view(view: str, groups: np.ndarray | None) -> str:
    if view not in VIEWS:
        raise ValueError(f"view must be one of {list(VIEWS)}, got {view!r}")
    if view == "epochs" and groups is None:
        raise ValueError("view='epochs' needs an 'epoch' column (AgentFile.replay() has one)")
    if view == "auto":
        many = groups is not None and int(groups[-1]) > MANY_EVENTS
        return "epochs" if many else "calls"
    return view


def _epoch_marks(marks: list[Any], groups: np.ndarray) -> list[float]:
    """Event positions on the call axis (``k + 0.5``: after the k-th call) moved to the
    epoch axis: after the epoch of the k-th call."""
    out: list[float] = []
    for m in marks:
        k = int(float(m) - 0.5)
        out.append(0.5 if k <= 0 else float(groups[min(k, len(groups)) - 1]) + 1.5)
    return out


def _missing(v: Any) -> bool:
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _thresholds(calls: pd.DataFrame, threshold: Any, configured: Any) -> tuple[np.ndarray, str]:
    """The threshold at each call (NaN where it cannot be placed) and a note on what is not
    drawn ('' when everything is). ``threshold`` overrides the frame's ``threshold`` column,
    which overrides ``configured`` (the agent's configured value)."""
    n = len(calls)
    if threshold is not None:
        raw = [threshold] * n
    elif "threshold" in calls.columns:
        raw = calls["threshold"].tolist()
    else:
        raw = [configured] * n
    tv = np.array([np.nan if (p := _placeable(v)) is None else p for v in raw], dtype="float64")
    bad = [v for v, t in zip(raw, tv, strict=True) if np.isnan(t)]
    if not bad:
        return tv, ""
    present = [v for v in bad if not _missing(v)]
    why = (
        f"{_fmt_count(present[0])} is out of range"
        if present
        else "no usable value (missing, or out of range in the config)"
    )
    where = "" if len(bad) == n else f" at {len(bad):,} of {n:,} calls"
    return tv, f"threshold not drawn{where}: {why}"


def _all_assumed(calls: pd.DataFrame) -> bool:
    """Whether every call's threshold is one no record states (``threshold_source``
    ``assumed``: a transcript tool's rule, or a config value before a change)."""
    if "threshold_source" not in calls.columns or not len(calls):
        return False
    return bool((calls["threshold_source"].astype("string") == "assumed").fillna(False).all())


def _draw_threshold(
    ax: Axes, xs: Any, tv: np.ndarray, note: str, data_top: float, *, assumed: bool = False
) -> float:
    """Draw the threshold (gid ``threshold``: a horizontal line when it never changes, else a
    step line) and return the top of the y axis: above the data and the threshold, unless
    the threshold is more than :data:`THRESHOLD_CLIP` times the data's peak; then it is left
    above the view and a note with an arrow gives its value (gid ``threshold_note``). An
    ``assumed`` threshold (no record states it) says so in its label and note."""
    word = "assumed threshold" if assumed else "threshold"
    fin = tv[np.isfinite(tv)]
    notes = [note] if note else []
    top = data_top * 1.08 if data_top > 0 else 1.0
    if len(fin):
        if len(fin) == len(tv) and len(np.unique(fin)) == 1:
            ax.axhline(
                float(fin[0]),
                color=C_THRESHOLD,
                lw=1.2,
                ls=(0, (6, 3)),
                gid="threshold",
                label=f"{word} ({float(fin[0]):,.0f} tokens)",
            )
        else:
            ax.step(
                xs,
                tv,
                where="mid",
                color=C_THRESHOLD,
                lw=1.2,
                gid="threshold",
                label=f"{word} in force",
            )
        thr_max = float(fin.max())
        if data_top <= 0 or thr_max <= THRESHOLD_CLIP * data_top:
            top = max(data_top, thr_max) * 1.08 or 1.0
        else:
            top = data_top * 1.15
            above = np.unique(fin[fin > top])
            what = f"up to {above.max():,.0f}" if len(above) > 1 else f"{above[0]:,.0f}"
            notes.insert(0, f"{word} {what} above")
            _note(ax, "\n".join(notes), gid="threshold_note", color=C_THRESHOLD, arrow=True)
            return top
    if notes:
        _note(ax, "\n".join(notes), gid="threshold_note")
    return top


# --- context sawtooth ---------------------------------------------------------------------


def _compaction_positions(
    calls: pd.DataFrame, events: pd.DataFrame | None, x: str, *, which: str = "compaction"
) -> list[float | np.datetime64]:
    """Where each event of kind ``which`` (``compaction`` or ``clear``) falls on the x axis:
    between the calls before and after it."""
    seqs = calls["seq"].to_numpy(dtype="int64")
    out: list[float | np.datetime64] = []
    if events is None:
        # No event table: a marker wherever the epoch goes up (one per event).
        if which != "compaction" or "epoch" not in calls.columns or len(calls) < 2:
            return []
        ep = calls["epoch"].to_numpy(dtype="int64", na_value=0)
        steps = np.diff(ep)
        times = _times(calls["created_at"]) if x == "time" else None
        for i in np.flatnonzero(steps > 0):
            pos: float | np.datetime64
            if times is not None:
                a, b = times[i], times[i + 1]
                pos = a + (b - a) / 2
            else:
                pos = i + 1.5
            out += [pos] * int(steps[i])
        return out
    ev = events
    if "event" in ev.columns:
        ev = ev[ev["event"].astype("string") == which]
    elif which != "compaction":
        return []
    if "boundary_seq" in ev.columns:
        bounds = ev["boundary_seq"].to_numpy(dtype="float64", na_value=np.nan)
    else:
        bounds = (
            ev[_col(ev, ("summary_seq", "seq"), "summary seq")].to_numpy(
                dtype="float64", na_value=np.nan
            )
            - 1
        )
    times = _times(calls["created_at"]) if x == "time" else None
    ev_times = (
        _times(ev["created_at"].astype("datetime64[ms, UTC]"))
        if times is not None and "created_at" in ev.columns
        else None
    )
    for e_i, b in enumerate(bounds):
        if np.isnan(b):
            continue
        k = int(np.searchsorted(seqs, b, side="right"))  # calls at or before the boundary
        if times is None:
            out.append(k + 0.5)
        elif ev_times is not None and not np.isnat(ev_times[e_i]):
            out.append(ev_times[e_i])  # the event's own time (its summary row)
        else:
            lo = times[k - 1] if k > 0 else (times[0] if len(times) else None)
            hi = times[k] if k < len(times) else lo
            if lo is None or hi is None or np.isnat(lo) or np.isnat(hi):
                continue
            out.append(lo + (hi - lo) / 2)
    return out


def _group_reduce(y: np.ndarray, groups: np.ndarray, how: str) -> np.ndarray:
    """Per run of ``groups``: the NaN-aware max or min of ``y`` (NaN for an all-NaN run)."""
    n = int(groups[-1]) + 1
    out = np.full(n, np.nan)
    fin = np.isfinite(y)
    if how == "max":
        np.fmax.at(out, groups[fin], y[fin])
    else:
        np.fmin.at(out, groups[fin], y[fin])
    return out


def _peak_rows(y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Index of the row with the largest ``y`` in each run (its last row if all NaN)."""
    n = int(groups[-1]) + 1
    out = np.zeros(n, dtype="int64")
    best = np.full(n, -np.inf)
    for i, (g, v) in enumerate(zip(groups, y, strict=True)):
        if (np.isfinite(v) and v >= best[g]) or best[g] == -np.inf:
            out[g] = i
            if np.isfinite(v):
                best[g] = v
    return out


def context_sawtooth(
    data: Data,
    *,
    ax: Axes | None = None,
    x: str = "call",
    events: pd.DataFrame | None = None,
    threshold: float | None = None,
    estimate: bool = True,
    title: str | None = None,
    view: str = "auto",
) -> Axes:
    """Context size per model call against the compaction threshold: the sawtooth.

    One point per model call over the whole history: the provider-reported ``input +
    output`` (the number the runtime compares with the threshold, ADF_FORMAT.md §5.1) as a
    solid line, the estimated context (``chars / 3.5``, §9.1) as a dashed line, the
    threshold as a horizontal line, one dotted vertical line per compaction and one dash-dot
    line per ``loop_clear``. Each compaction drops the context back down, hence the sawtooth.
    Events with no call between them share a line, labelled ``×k``; past
    :data:`MANY_EVENTS` events the lines shrink to a rug along the bottom.

    A long life is a band of teeth too thin to read, so past :data:`MANY_EVENTS` epochs the
    default view is one point per epoch (the calls between two compactions or clears): its
    peak (the call that made the runtime compact), a bar from its lowest call to that peak,
    and the estimate's peak. A threshold far above the data is not drawn in view: a note with
    an arrow gives its value (see the module's promises).

    Parameters
    ----------
    data : an AgentFile (or path), or the frame of ``AgentFile.replay()`` (one row per call:
        ``seq``, ``tokens_total`` (reported input + output), optionally ``est_tokens``,
        ``threshold``, ``epoch``, and ``created_at`` for ``x="time"``).
    ax : Axes to draw on; a new figure when None.
    x : ``"call"`` (default: the n-th model call, or epoch) or ``"time"`` (``created_at``,
        UTC; in the epochs view, the time of each epoch's peak call).
    events : compaction events (``AgentFile.events()`` or ``compactions()``: ``event``,
        ``boundary_seq``, and ``created_at`` for ``x="time"``) for the markers. Taken from
        the agent when ``data`` is one; with a bare frame and no ``events`` a marker is drawn
        wherever ``epoch`` goes up. On a time axis an event without a time sits halfway
        between the calls around it.
    threshold : overrides the threshold line (default: the frame's ``threshold`` column,
        else the agent's configured threshold). A value that cannot be placed (NaN, None,
        infinite, above 2**53) is not drawn; a note says so.
    estimate : draw the estimated-context line too.
    title : replaces the default title.
    view : ``"calls"`` (one point per call), ``"epochs"`` (one per epoch; needs ``epoch``)
        or ``"auto"`` (default: epochs past :data:`MANY_EVENTS` epochs, else calls).

    Returns
    -------
    The Axes. Artists carry gids for tests: ``reported``, ``estimate``, ``threshold``,
    ``compaction`` and ``clear`` (one line per event), ``threshold_note`` (the note when
    the threshold is above the view or not drawn), and in the epochs view
    ``reported_range`` (the bars from each epoch's lowest call to its peak).

    Examples
    --------
    >>> import adfkit
    >>> from adfkit import plots
    >>> agent = adfkit.open_adf("sample_agents/long-runner.adf")
    >>> ax = plots.context_sawtooth(agent)
    >>> sum(line.get_gid() == "compaction" for line in ax.lines)
    7
    >>> plots.close(ax)
    """
    if x not in ("call", "time"):
        raise ValueError(f"x must be one of ['call', 'time'], got {x!r}")
    name = None
    configured: Any = None
    if _is_agent_like(data):
        with _agent(data) as agent:
            calls = agent.replay()
            if events is None:
                events = agent.events()
                if x == "time":  # place each compaction at its summary row's time
                    h = agent.history()
                    when = dict(zip(h["seq"].tolist(), h["created_at"], strict=True))
                    events = events.assign(
                        created_at=pd.Series(
                            [
                                when.get(q, pd.NaT) if not pd.isna(q) else pd.NaT
                                for q in events["summary_seq"]
                            ],
                            dtype="datetime64[ms, UTC]",
                        )
                    )
            if threshold is None and "threshold" not in calls.columns:
                with contextlib.suppress(OverflowError, TypeError, ValueError):
                    configured = agent.compact_threshold()
            name = agent.name
    else:
        calls = data
    _need(calls, ["seq"] + (["created_at"] if x == "time" else []), "context_sawtooth")
    calls = calls.sort_values("seq", kind="stable").reset_index(drop=True)
    groups = _epoch_groups(calls)
    view = _choose_view(view, groups)
    with _drawing(ax) as ax:
        default_title = (
            "Context size per epoch" if view == "epochs" else "Context size per model call"
        )
        _title(ax, title, default_title, name)
        if not len(calls):
            _empty(ax, "no model calls in this history", X_CALL, "tokens")
            return ax
        rep = _col(calls, REPORTED_COLS, "reported tokens")
        y = _floats(calls[rep])
        est_col = next((c for c in ESTIMATE_COLS if c in calls.columns), None)
        e = _floats(calls[est_col]) if estimate and est_col is not None else None
        tv, note = _thresholds(calls, threshold, configured)
        assumed = threshold is None and _all_assumed(calls)
        marks: list[Any] = _compaction_positions(calls, events, x)
        clears: list[Any] = _compaction_positions(calls, events, x, which="clear")
        times = _times(calls["created_at"]) if x == "time" else None
        if view == "epochs":
            assert groups is not None
            rows = _peak_rows(y, groups)
            n_x = len(rows)
            xs: Any = times[rows] if times is not None else np.arange(1, n_x + 1)
            lo, hi = _group_reduce(y, groups, "min"), _group_reduce(y, groups, "max")
            ax.vlines(
                xs,
                lo,
                hi,
                color=C_REPORTED,
                alpha=0.35,
                lw=float(np.clip(500 / n_x, 1.0, 8.0)),
                gid="reported_range",
                label="range: lowest call to peak",
            )
            ax.plot(
                xs,
                hi,
                color=C_REPORTED,
                lw=1.2,
                marker="o",
                ms=2.5,
                gid="reported",
                label="peak reported input + output\nin the epoch (compared with\nthe threshold)",
            )
            if e is not None:
                e = _group_reduce(e, groups, "max")
            tv = tv[rows]
            y = hi
            if times is None:
                marks, clears = _epoch_marks(marks, groups), _epoch_marks(clears, groups)
        else:
            n_x = len(calls)
            xs = times if times is not None else np.arange(1, n_x + 1)
            ax.plot(
                xs,
                y,
                color=C_REPORTED,
                lw=1.4,
                gid="reported",
                label="reported input + output\n(compared with the threshold)",
            )
        if e is not None:
            ax.plot(
                xs,
                e,
                color=C_ESTIMATE,
                lw=1.1,
                ls="--",
                gid="estimate",
                label="estimated context\n(chars / 3.5)" + (", peak" if view == "epochs" else ""),
            )
        data_top = max(
            [float(np.nanmax(a)) for a in (y, e) if a is not None and np.isfinite(a).any()],
            default=0.0,
        )
        top = _draw_threshold(ax, xs, tv, note, data_top, assumed=assumed)
        _mark_events(ax, marks, gid="compaction", label="compaction", ls=":")
        _mark_events(ax, clears, gid="clear", label="loop_clear", ls="-.")
        ax.set_ylim(0, top)
        _token_axis(ax)
        ax.set_ylabel("tokens")
        if x == "time":
            _date_axis(ax)
        else:
            _call_xlim(ax, n_x, [*marks, *clears])
            _int_axis(ax)
            ax.set_xlabel(X_EPOCH if view == "epochs" else X_CALL)
        _legend(ax)
    return ax


# --- token growth -------------------------------------------------------------------------


def _usage_of(data: Data) -> tuple[pd.DataFrame, str | None]:
    if _is_agent_like(data):
        with _agent(data) as agent, warnings.catch_warnings():
            # the one usage rule (calls of abandoned branches included); a missing price is
            # said on the plot itself (_cost_note), not as a warning
            warnings.simplefilter("ignore", AdfWarning)
            return agent.usage(), agent.name
    return data, None


def _names(values: Any, limit: int = 3) -> str:
    """Up to ``limit`` agent-given names, quoted and cut short; ``+N more`` for the rest."""
    vals = [str(v) for v in dict.fromkeys(values)]
    shown = ", ".join(f"'{_short(v, 32)}'" for v in vals[:limit])  # as written, not repr()
    return shown + (f" +{len(vals) - limit} more" if len(vals) > limit else "")


def _cost_note(u: pd.DataFrame) -> str:
    """The number of calls and their estimated cost, or why the cost is unknown: a sum over
    calls whose cost is not known is unknown too, never $0."""
    n = len(u)
    head = f"{n:,} model call{'s' if n != 1 else ''}"
    if "cost_usd" not in u.columns:
        return f"{head}, cost unknown (no cost column)"
    cost = pd.to_numeric(u["cost_usd"], errors="coerce")
    unknown = cost.isna().to_numpy(dtype=bool)
    known = cost.sum(min_count=1)
    if not unknown.any():
        return f"{head}, estimated cost ${float(known):,.2f}"
    lines = [f"{head}, cost unknown"]
    if unknown.all():
        lines[0] += " for every call"
    else:
        lines[0] += f" for {int(unknown.sum()):,}"
        lines.append(f"(the other {int((~unknown).sum()):,} cost ${float(known):,.2f})")
    reasons = []
    if "price_input" in u.columns and "model" in u.columns:
        unpriced = unknown & np.isnan(_floats(u["price_input"]))
        models = u.loc[unpriced, "model"]
        if len(models):
            named = models.dropna()
            if len(named):
                reasons.append("no price for " + _names(named))
            if named.size < models.size:
                reasons.append("no model recorded")
    split = u["tokens_input"].isna() if "tokens_input" in u.columns else None
    if split is not None and (unknown & split.to_numpy(dtype=bool)).any():
        reasons.append("only a token total (no input/output split)")
    lines += [f"({r})" for r in reasons] or ["(no price or no input/output split)"]
    return "\n".join(lines)


def token_growth(
    data: Data, *, ax: Axes | None = None, x: str = "time", title: str | None = None
) -> Axes:
    """Cumulative tokens over the agent's life: input (which includes cached reads), output,
    cached reads when reported, and the estimated cost when every call has one.

    Each model call re-sends the whole context, so cumulative input grows much faster than
    output. Calls that store only a token total (legacy layouts) are drawn as a cumulative
    total, never as 0 input: alone when no call has a split, else next to input and output.
    A sum that misses unknown values says so in its label (``≥``), and a cost that is not
    known for every call is labelled unknown.

    Parameters
    ----------
    data : an AgentFile (or path), or the frame of ``AgentFile.usage()``.
    ax : Axes to draw on; a new figure when None.
    x : ``"time"`` (default, ``created_at`` in UTC, summed in time order; calls without a
        time are left out of the line, not of the sums, and the legend says how many) or
        ``"call"`` (the n-th model call, in display order).
    title : replaces the default title.

    Returns
    -------
    The Axes; lines carry gids ``cum_input``, ``cum_output``, ``cum_cache_read``,
    ``cum_total``; the legend's title gives the number of calls and the estimated cost.

    Examples
    --------
    >>> import adfkit
    >>> from adfkit import plots
    >>> ax = plots.token_growth("sample_agents/clean.adf")
    >>> [line.get_gid() for line in ax.lines]
    ['cum_input', 'cum_output', 'cum_cache_read']
    >>> plots.close(ax)
    """
    if x not in ("call", "time"):
        raise ValueError(f"x must be one of ['call', 'time'], got {x!r}")
    u, name = _usage_of(data)
    _need(u, ["tokens_input", "tokens_output", "tokens_total"], "token_growth")
    with _drawing(ax) as ax:
        _title(ax, title, "Cumulative tokens", name)
        if not len(u):
            _empty(
                ax, "no model calls with token usage in this history", X_CALL, "cumulative tokens"
            )
            return ax
        untimed = 0
        if x == "time":
            # Summed in time order (a manual compaction's summary is shown before rows
            # written earlier than it); a call without a time keeps its place after the
            # timed call before it, and counts in the sums without a point on the line.
            t = _times(u["created_at"])
            key = pd.Series(t).ffill().to_numpy(dtype="datetime64[ms]")
            lowest = np.iinfo(np.int64).min
            order = np.argsort(np.where(np.isnat(key), lowest, key.astype("int64")), kind="stable")
            u = u.iloc[order].reset_index(drop=True)
            xs: Any = t[order]
            keep = ~np.isnat(xs)
            untimed = int((~keep).sum())
        else:
            xs = np.arange(1, len(u) + 1)
            keep = np.ones(len(u), dtype=bool)
        tin, tout, ttot = (_floats(u[c]) for c in ("tokens_input", "tokens_output", "tokens_total"))
        total_only = np.isnan(tin) & np.isnan(tout) & ~np.isnan(ttot)
        series = []
        if not total_only.all():
            series += [("cum_input", tin, "input (incl. cached)", C_INPUT, "-")]
            series += [("cum_output", tout, "output", C_OUTPUT, "-")]
            cache = _floats(u["tokens_cache_read"]) if "tokens_cache_read" in u.columns else None
            if cache is not None and np.isfinite(cache).any():
                series += [("cum_cache_read", cache, "of which cached reads", C_CACHE, ":")]
        if total_only.any():
            label = (
                "total (legacy: no input/output split)"
                if total_only.all()
                else f"total, every call ({int(total_only.sum()):,} have no split)"
            )
            series += [
                ("cum_total", ttot, label, C_TOTAL_ONLY if not total_only.all() else C_INPUT, "-")
            ]
        missing_notes = []
        for gid, vals, label, color, ls in series:
            known = np.isfinite(vals)
            if not known.any():
                missing_notes.append(f"{label.split(' (')[0]}: not recorded")
                continue
            cum = np.nan_to_num(vals).cumsum()
            # An absent cache key means no cached read; an absent input or output is unknown.
            n_unknown = 0 if gid == "cum_cache_read" else int((~known).sum())
            value = _fmt_tokens(float(cum[-1]))
            if n_unknown:
                value = f"≥{value} ({n_unknown:,} call{'s' if n_unknown != 1 else ''} unknown)"
            ax.plot(
                xs[keep], cum[keep], color=color, lw=1.6, ls=ls, gid=gid, label=f"{label}: {value}"
            )
        ax.set_ylim(bottom=0)
        _token_axis(ax)
        ax.set_ylabel("cumulative tokens")
        if x == "time":
            _date_axis(ax)
        else:
            _int_axis(ax)
            ax.set_xlabel(X_CALL)
        if untimed:
            s = "s" if untimed != 1 else ""
            missing_notes.append(f"{untimed:,} call{s} without a time: in the sums, not drawn")
        note = "\n".join([_cost_note(u), *missing_notes])
        _legend(ax, title=note)
    return ax


# --- tokens per turn ----------------------------------------------------------------------

#: Past this many turns, ``group="auto"`` draws the mean of groups of consecutive turns.
MANY_TURNS = 150


def _turns_of(data: Data) -> tuple[pd.DataFrame, str | None]:
    if _is_agent_like(data):
        with _agent(data) as agent:
            h = agent.history()
            u, _, _ = usage_frame(h, load_prices(), agent.source.cache_writes_1h())
            return turns_frame(h, u), agent.name
    df: pd.DataFrame = data
    if "turn" in df.columns:
        return df, None
    if "kind" in df.columns:  # a history frame
        u, _, _ = usage_frame(df, load_prices())
        return turns_frame(df, u), None
    raise ValueError(
        "turn_spend needs an AgentFile, a history() frame or a per-turn frame with columns "
        f"turn, tokens_input, tokens_output; got columns {list(df.columns)}"
    )


def turn_spend(
    data: Data, *, ax: Axes | None = None, title: str | None = None, group: int | str = "auto"
) -> Axes:
    """Tokens spent per turn: stacked bars of input and output tokens.

    A turn starts at a trigger or message row (timer, inbox, startup, owner chat) and runs to
    the next one; compaction calls count in the turn where they ran. Every call in a turn
    re-sends the context, so a turn's input is the sum over its calls (not unique tokens).
    Tokens recorded only as a total (legacy layouts: no input/output split) are stacked as
    their own part, ``total only``, never shown as input.

    Past :data:`MANY_TURNS` turns one bar per turn is too thin to read: by default each bar
    is then the mean per turn over a group of consecutive turns, with a mark at the largest
    turn of the group.

    Parameters
    ----------
    data : an AgentFile (or path), its ``history()`` frame, or a per-turn frame with
        ``turn``, ``tokens_input``, ``tokens_output`` (and optionally ``tokens_total``).
    ax : Axes to draw on; a new figure when None.
    title : replaces the default title.
    group : turns per bar (1: one bar per turn), or ``"auto"`` (default: 1 up to
        :data:`MANY_TURNS` turns, else about 100 bars).

    Returns
    -------
    The Axes; the bar containers carry gids ``input``, ``output`` and ``total`` (tokens
    with no split), the median line ``median``, the group maxima ``group_max``. A part that
    is zero for every turn is not drawn.

    Examples
    --------
    >>> from adfkit import plots
    >>> ax = plots.turn_spend("sample_agents/messenger.adf")
    >>> ax.get_xlabel()
    'turn (starts at a trigger or message)'
    >>> plots.close(ax)
    """
    turns, name = _turns_of(data)
    _need(turns, ["turn", "tokens_input", "tokens_output"], "turn_spend")
    if not (group == "auto" or (isinstance(group, int) and group >= 1)):
        raise ValueError(f"group must be 'auto' or a whole number >= 1, got {group!r}")
    with _drawing(ax) as ax:
        _title(ax, title, "Tokens per turn", name)
        if not len(turns):
            _empty(ax, "no turns in this history", X_TURN, Y_TURN)
            return ax
        turn = turns["turn"].to_numpy(dtype="int64")
        tin = np.nan_to_num(_floats(turns["tokens_input"]))
        tout = np.nan_to_num(_floats(turns["tokens_output"]))
        if "tokens_total" in turns.columns:
            ttot = _floats(turns["tokens_total"])
            total_only = np.where(np.isnan(ttot), 0.0, np.maximum(ttot - tin - tout, 0.0))
        else:
            total_only = np.zeros(len(turns))
        total = tin + tout + total_only
        n = len(turns)
        k = (1 if n <= MANY_TURNS else math.ceil(n / 100)) if group == "auto" else int(group)
        parts = [
            ("input", tin, "input (incl. cached)", C_INPUT),
            ("output", tout, "output", C_OUTPUT),
            ("total", total_only, "total only (no input/output split)", C_TOTAL_ONLY),
        ]
        if k > 1:
            starts = np.arange(0, n, k)
            xs = np.array([turn[s : s + k].mean() for s in starts])
            width = np.array([(turn[s : s + k].max() - turn[s : s + k].min() + 1) for s in starts])
            width = width * 0.9
            parts = [
                (g, np.add.reduceat(v, starts) / np.diff([*starts, n]), lab, c)
                for g, v, lab, c in parts
            ]
            peaks = np.maximum.reduceat(total, starts)
        else:
            xs, width = turn.astype("float64"), np.full(n, 0.8 if n <= 60 else 1.0)
            peaks = None
        bottom = np.zeros(len(xs))
        handles: list[Any] = []
        for gid, vals, label, color in parts:
            if not vals.any():
                continue
            bars = ax.bar(xs, vals, width=width, bottom=bottom, color=color, lw=0.0, label=label)
            _gid(bars, gid)
            handles.insert(0, bars)  # legend top-down, as the stack
            bottom = bottom + vals
        if peaks is not None:
            handles += ax.plot(
                xs,
                peaks,
                ls="none",
                marker="_",
                ms=max(2.0, 300 / len(xs)),
                mew=1.2,
                color="0.2",
                gid="group_max",
                label="largest turn in the group",
            )
        med = float(np.median(total))
        handles.append(
            ax.axhline(
                med,
                color="0.3",
                lw=1.0,
                ls="--",
                gid="median",
                label=f"median turn {_fmt_tokens(med)}",
            )
        )
        ax.set_xlim(turn.min() - 0.7, turn.max() + 0.7)
        ax.set_ylim(0, max(float(total.max()), 1.0) * 1.08)
        _token_axis(ax)
        _int_axis(ax)
        ax.set_ylabel(Y_TURN if k == 1 else f"tokens per turn\n(mean over groups of {k} turns)")
        ax.set_xlabel(X_TURN)
        ax.grid(False, axis="x")
        _legend(ax, handles)
    return ax


# --- compaction ratio ---------------------------------------------------------------------


def _fmt_ratio(r: float) -> str:
    """``30×``; one decimal below 10 (``4.6×``)."""
    return f"{r:.0f}×" if r >= 10 else f"{r:.1f}×"


SWEPT_COLS = ("swept_tokens",)
SUMMARY_COLS = ("summary_tokens",)


def compaction_ratio(data: Data, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """What each compaction swept against what its summary kept (estimated tokens).

    Bars per compaction: the estimated size of the rows it archived or discarded, and of
    the summary that replaced them, side by side (in front of one another past 30
    compactions); the ratio is written above each pair when there are few enough
    compactions to read it. A size that is not known (rows discarded unarchived, a summary
    lost, or encrypted: a Codex remote compaction) has no bar: it is labelled ("summary
    encrypted", ...), or marked ``?`` at the base past 30 compactions.

    Parameters
    ----------
    data : an AgentFile (or path), or the frame of ``AgentFile.compactions()``
        (``swept_tokens``, ``summary_tokens``; rows whose ``event`` is ``clear`` are left
        out). A compaction whose swept rows were discarded is labelled "not archived".
    ax : Axes to draw on; a new figure when None.
    title : replaces the default title.

    Returns
    -------
    The Axes; the bar containers carry gids ``swept`` and ``summary`` (an unknown size is a
    NaN height), the ``?`` marks ``unknown``.

    Examples
    --------
    >>> import pandas as pd
    >>> from adfkit import plots
    >>> df = pd.DataFrame({"swept_tokens": [9000, 8000], "summary_tokens": [300, 400]})
    >>> ax = plots.compaction_ratio(df)
    >>> [t.get_text() for t in ax.texts]
    ['30×', '20×', 'median ratio 25× over 2 compactions']
    >>> plots.close(ax)
    """
    name = None
    if _is_agent_like(data):
        with _agent(data) as agent:
            comp = agent.compactions()
            name = agent.name
    else:
        comp = data
    if "event" in comp.columns:  # compactions() also lists clears
        comp = comp[comp["event"].astype("string") == "compaction"].reset_index(drop=True)
    with _drawing(ax) as ax:
        _title(ax, title, "What each compaction swept vs kept", name)
        if not len(comp):
            _empty(ax, "no compactions in this history", X_COMP, Y_COMP)
            return ax
        sw = _floats(comp[_col(comp, SWEPT_COLS, "swept tokens")])
        sm = _floats(comp[_col(comp, SUMMARY_COLS, "summary tokens")])
        n = len(comp)
        xs = np.arange(1, n + 1)
        labelled = n <= 30
        if labelled:
            w = 0.4
            b1 = ax.bar(xs - w / 2, sw, width=w, color=C_SWEPT, label="swept (est.)")
            b2 = ax.bar(xs + w / 2, sm, width=w, color=C_SUMMARY, label="summary (est.)")
        else:  # the summary in front of what it replaced: both readable at any width
            b1 = ax.bar(xs, sw, width=0.85, color=C_SWEPT, lw=0, label="swept (est.)")
            b2 = ax.bar(xs, sm, width=0.85, color=C_SUMMARY, lw=0, label="summary (est.)")
        _gid(b1, "swept")
        _gid(b2, "summary")
        top = float(np.nanmax(np.concatenate([sw, sm, [1.0]])))
        unknown = np.isnan(sw) | np.isnan(sm)
        enc = (
            comp["summary_encrypted"].fillna(False).to_numpy(dtype=bool)
            if "summary_encrypted" in comp.columns
            else np.zeros(n, dtype=bool)
        )
        if labelled:
            for xi, a, b, e in zip(xs, sw, sm, enc, strict=True):
                if e:
                    label = "summary encrypted"
                elif np.isnan(a):
                    label = "swept rows not archived"
                elif np.isnan(b):
                    label = "summary lost"
                elif b <= 0:
                    label = "empty summary"
                else:
                    r = a / b
                    label = _fmt_ratio(r)
                ax.annotate(
                    label,
                    (xi, max(0.0 if np.isnan(a) else a, 0.0 if np.isnan(b) else b)),
                    xytext=(0, 3),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=8 if n <= 15 else 7,
                    color="0.25",
                )
        elif unknown.any():
            ax.plot(
                xs[unknown],
                np.zeros(int(unknown.sum())),
                ls="none",
                marker="$?$",
                ms=7,
                color="0.2",
                clip_on=False,
                gid="unknown",
                label="size unknown (not archived,\nsummary lost or encrypted)",
            )
        ratios = sw / np.where(sm > 0, sm, np.nan)
        if np.isfinite(ratios).any():
            med = float(np.nanmedian(ratios))
            ax.text(
                0.99,
                0.98,
                f"median ratio {_fmt_ratio(med)} over {n} compaction{'s' if n != 1 else ''}",
                transform=ax.transAxes,
                ha="right",
                va="top",
                fontsize=9,
                color="0.25",
            )
        ax.set_ylim(0, top * 1.25)
        ax.set_xlim(0.4, n + 0.6)
        _token_axis(ax)
        if labelled:
            ax.set_xticks(xs)
        else:
            _int_axis(ax)
        ax.set_ylabel(Y_COMP)
        ax.set_xlabel(X_COMP)
        ax.grid(False, axis="x")
        _legend(ax)
    return ax


# --- context composition ------------------------------------------------------------------

#: The parts of the context window, in stacking order: column of ``AgentFile.composition()``
#: -> (label, colour). The one mapping :func:`context_composition` and :func:`composition_at`
#: both draw with, from :data:`adfkit._base.parts.PARTS` (the widgets use the same palette).
COMPOSITION_PARTS: dict[str, tuple[str, str]] = {p.column: (p.label, p.color) for p in PARTS}
#: What the file does not hold (:data:`adfkit._base.parts.NOT_IN_FILE`), drawn on top of the
#: estimated parts (gid ``not_in_file``): (label, colour).
NOT_IN_FILE = (_NOT_IN_FILE.label, _NOT_IN_FILE.color)


def _composition_of(data: Data, need_events: bool) -> tuple[pd.DataFrame, Any, str | None]:
    if _is_agent_like(data):
        with _agent(data) as agent:
            return agent.composition(), agent.events() if need_events else None, agent.name
    return data, None, None


def _parts_of(comp: pd.DataFrame, what: str) -> list[str]:
    _need(comp, ["seq"], what)
    parts = [c for c in COMPOSITION_PARTS if c in comp.columns]
    if not parts:
        raise ValueError(
            f"{what} needs some of {list(COMPOSITION_PARTS)}; got {list(comp.columns)}"
        )
    return parts


def context_composition(
    data: Data,
    *,
    ax: Axes | None = None,
    events: pd.DataFrame | None = None,
    title: str | None = None,
    view: str = "auto",
) -> Axes:
    """What each model call was sent, stacked by part, with a marker per compaction.

    One stacked area per part of ``AgentFile.composition()`` (estimated tokens, ``chars /
    3.5``): system prompt, dynamic instructions, compaction summary, messages, assistant
    turns, tool results and delivered ``loop_inject`` text, in the colours of
    :data:`COMPOSITION_PARTS`. Parts that are zero on every call are left out. Compactions
    are dotted vertical lines, clears dash-dot ones (a rug past :data:`MANY_EVENTS`). Past
    :data:`MANY_EVENTS` epochs the default view stacks one call per epoch: its fullest, the
    one before the compaction.

    Parameters
    ----------
    data : an AgentFile (or path), or the frame of ``AgentFile.composition()``.
    ax : Axes to draw on; a new figure when None.
    events : compaction events for the markers (taken from the agent when ``data`` is one;
        with a bare frame and no ``events`` a marker is drawn wherever ``epoch`` goes up).
    title : replaces the default title.
    view : ``"calls"``, ``"epochs"`` (needs ``epoch``) or ``"auto"`` (default), as in
        :func:`context_sawtooth`.

    Returns
    -------
    The Axes. Each stacked area carries the gid of its column (e.g. ``summary_tokens``);
    compaction markers have the gid ``compaction``, clear markers ``clear``.

    Examples
    --------
    >>> import adfkit
    >>> from adfkit import plots
    >>> agent = adfkit.open_adf("sample_agents/long-runner.adf")
    >>> ax = plots.context_composition(agent)
    >>> sum(line.get_gid() == "compaction" for line in ax.lines)
    7
    >>> plots.close(ax)
    """
    comp, agent_events, name = _composition_of(data, events is None)
    events = agent_events if events is None else events
    parts = _parts_of(comp, "context_composition")
    comp = comp.sort_values("seq", kind="stable").reset_index(drop=True)
    groups = _epoch_groups(comp)
    view = _choose_view(view, groups)
    with _drawing(ax) as ax:
        default_title = (
            "The fullest call of each epoch, by part"
            if view == "epochs"
            else "What each model call was sent"
        )
        _title(ax, title, default_title, name)
        if not len(comp):
            _empty(ax, "no model calls in this history", X_CALL, "estimated tokens")
            return ax
        marks: list[Any] = _compaction_positions(comp, events, "call")
        clears: list[Any] = _compaction_positions(comp, events, "call", which="clear")
        values = {c: np.nan_to_num(_floats(comp[c])) for c in parts}
        if "tokens_input" in comp.columns:  # what the provider counted beyond the estimate
            est = np.sum(list(values.values()), axis=0) if values else np.zeros(len(comp))
            values["not_in_file"] = np.clip(
                np.nan_to_num(_floats(comp["tokens_input"])) - est, 0, None
            ) * np.isfinite(_floats(comp["tokens_input"]))
        if view == "epochs":
            assert groups is not None
            rows = _peak_rows(np.sum(list(values.values()), axis=0), groups)
            values = {c: v[rows] for c, v in values.items()}
            marks, clears = _epoch_marks(marks, groups), _epoch_marks(clears, groups)
            n_x = len(rows)
        else:
            n_x = len(comp)
        xs = np.arange(1, n_x + 1)
        ys, labels, colors, gids = [], [], [], []
        for c in [*parts, "not_in_file"]:
            y = values.get(c)
            if y is None or not y.any():
                continue
            ys.append(y)
            label, color = COMPOSITION_PARTS.get(c, NOT_IN_FILE)
            labels.append(label)
            colors.append(color)
            gids.append(c)
        top = 0.0
        if ys:
            polys = ax.stackplot(xs, *ys, labels=labels, colors=colors, alpha=0.85, lw=0)
            for poly, gid in zip(polys, gids, strict=True):
                poly.set_gid(gid)
            top = float(np.sum(ys, axis=0).max())
        _mark_events(ax, marks, gid="compaction", label="compaction", ls=":")
        _mark_events(ax, clears, gid="clear", label="loop_clear", ls="-.")
        ax.set_ylim(0, top * 1.08 if top > 0 else 1)
        _call_xlim(ax, n_x, [*marks, *clears])
        _token_axis(ax)
        _int_axis(ax)
        ax.set_ylabel(
            "tokens (parts estimated as chars / 3.5)"
            if "not_in_file" in gids
            else "estimated tokens (chars / 3.5)"
        )
        ax.set_xlabel(X_EPOCH if view == "epochs" else X_CALL)
        handles, _ = ax.get_legend_handles_labels()
        stack = [h for h in handles if h.get_gid() in {*COMPOSITION_PARTS, "not_in_file"}]
        _legend(ax, stack[::-1] + [h for h in handles if h not in stack])  # top-down
    return ax


def composition_at(
    data: Data,
    seq: int | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """The context window at one model call, by part: one horizontal stacked bar.

    The parts are the columns of ``AgentFile.composition()`` (estimated tokens, ``chars /
    3.5``) in the labels and colours of :data:`COMPOSITION_PARTS`, the ones
    :func:`context_composition` stacks. The legend gives each part's tokens and share; a
    part that is not known (a system prompt lost to a history gap) is said to be unknown,
    not drawn as 0. A vertical line marks the input the provider reported for the call
    (it also counts what the estimate does not see: tool definitions, tokenizer
    differences), or its bare total in a legacy layout; when it is more than
    :data:`THRESHOLD_CLIP` times the estimate, a note with an arrow gives it instead, so
    the bar is not squashed.

    Parameters
    ----------
    data : an AgentFile (or path), or the frame of ``AgentFile.composition()``.
    seq : the model call's seq (an assistant row); default: the last call.
    ax : Axes to draw on; a new figure when None.
    title : replaces the default title.

    Returns
    -------
    The Axes. Each segment carries the gid of its column (e.g. ``tool_result_tokens``);
    the reported input line ``reported_input``, the note when it is out of view
    ``reported_note``.

    Raises
    ------
    ValueError
        ``seq`` is not a model call's seq (the message names the nearest ones).

    Examples
    --------
    >>> import adfkit
    >>> from adfkit import plots
    >>> agent = adfkit.open_adf("sample_agents/long-runner.adf")
    >>> seq = int(agent.composition()["seq"].iloc[-1])
    >>> ax = plots.composition_at(agent, seq)
    >>> [p.get_gid() for p in ax.patches][:2]
    ['system_prompt_tokens', 'dynamic_instructions_tokens']
    >>> plots.close(ax)
    """
    comp, _, name = _composition_of(data, False)
    parts = _parts_of(comp, "composition_at")
    if _is_agent_like(data) and "tokens_total" not in comp.columns:  # for a bare total
        with _agent(data) as agent:
            totals = agent.replay().set_index("seq")["tokens_total"]
        comp = comp.assign(tokens_total=comp["seq"].map(totals))
    seqs = _floats(comp["seq"])
    if not len(comp) and seq is None:  # a session with no model call yet: nothing was sent
        with _drawing(ax, figsize=(9.0, 2.8)) as ax:
            _title(ax, title, "Context window at the last call", name)
            _empty(ax, "no model call yet: no context window to show", "tokens", "model call")
        return ax
    if not len(comp):
        raise ValueError(f"seq {seq} is not a model call: there is no model call yet")
    if seq is None:
        i = int(np.nanargmax(seqs))
    else:
        hit = np.flatnonzero(seqs == seq)
        if not len(hit):
            order = np.sort(seqs[np.isfinite(seqs)])
            k = int(np.searchsorted(order, seq))
            near = [int(v) for v in order[max(k - 1, 0) : k + 1]]
            raise ValueError(
                f"seq {seq} is not a model call; the nearest calls are at seq "
                f"{' and '.join(map(str, near))}"
            )
        i = int(hit[0])
    row = comp.iloc[i]
    at = int(seqs[i])
    with _drawing(ax, figsize=(9.0, 2.8)) as ax:
        _title(ax, title, f"Context window at call S{at}", name)
        vals = {c: _placeable(row[c]) for c in parts}
        known = {c: v for c, v in vals.items() if v is not None and v > 0}
        total = sum(known.values())
        left = 0.0
        segments = []
        for c in parts:
            v = known.get(c)
            if v is None:
                continue
            label, color = COMPOSITION_PARTS[c]
            (bar,) = ax.barh(
                0,
                v,
                left=left,
                height=0.6,
                color=color,
                lw=0,
                label=f"{label}: {_fmt_tokens(v)} ({100 * v / total:.0f}%)",
            )
            bar.set_gid(c)
            segments.append((left, v))
            left += v
        unknown = [COMPOSITION_PARTS[c][0] for c, v in vals.items() if v is None]
        # What the provider counted: the input, else the bare total of a legacy layout.
        reported = _placeable(row["tokens_input"]) if "tokens_input" in comp.columns else None
        what = "input the provider reported"
        if reported is None and "tokens_total" in comp.columns:
            reported = _placeable(row["tokens_total"])
            what = "total the provider reported\n(no input/output split)"
        handles: list[Any] = ax.get_legend_handles_labels()[0]
        notes = [f"estimated total {_fmt_tokens(total)}"]
        right = max(total, 1.0) * 1.08
        if reported is not None:
            line = ax.axvline(
                reported,
                color="0.15",
                lw=1.4,
                ls="--",
                gid="reported_input",
                label=f"{what}: {_fmt_tokens(reported)}",
            )
            if reported <= THRESHOLD_CLIP * max(total, 1.0):
                handles.append(line)
                right = max(right, reported * 1.05)
            else:  # far to the right: it would squash the bar to a sliver
                ax.annotate(
                    f"{what}: {_fmt_tokens(reported)}",
                    xy=(1.0, 0.88),
                    xycoords="axes fraction",
                    xytext=(0.95, 0.88),
                    textcoords="axes fraction",
                    ha="right",
                    va="center",
                    fontsize=8,
                    color="0.15",
                    gid="reported_note",
                    arrowprops={"arrowstyle": "->", "color": "0.15", "relpos": (1.0, 0.5)},
                )
        if reported is not None and what.startswith("input") and reported > total:
            gap = reported - total
            if reported <= THRESHOLD_CLIP * max(total, 1.0):  # in view: its own segment
                bars = ax.barh(
                    0,
                    gap,
                    left=total,
                    height=0.6,
                    color=NOT_IN_FILE[1],
                    hatch="//",
                    edgecolor="white",
                    lw=0,
                    label=f"{NOT_IN_FILE[0]}: {_fmt_tokens(gap)}",
                )
                bars[0].set_gid("not_in_file")
                handles.insert(len(segments), bars)
                segments.append((total, gap))
            else:
                notes.append(f"not in the file: {_fmt_tokens(gap)} (reported - estimate)")
        ax.set_xlim(0, right)
        for x0, v in segments:
            if v / right >= 0.07:  # wide enough for its number
                ax.text(x0 + v / 2, 0, _fmt_tokens(v), ha="center", va="center", fontsize=8)
        ax.set_ylim(-0.6, 0.6)
        ax.set_yticks([0], [f"S{at}"])
        ax.grid(False, axis="y")
        _token_axis(ax, "x")
        ax.set_xlabel("tokens (the parts estimated as chars / 3.5)")
        ax.set_ylabel("model call")
        if unknown:
            notes.append(f"unknown: {', '.join(unknown)}")
        if not known:
            notes.append("nothing was sent that the estimate sees")
        _legend(ax, handles, title="\n".join(notes))
    return ax


# --- all at once --------------------------------------------------------------------------

#: Plot kinds for the CLI and :func:`save_all`: kind -> function(data, *, ax) -> Axes.
PLOTS: dict[str, Callable[..., Axes]] = {
    "context": context_sawtooth,
    "growth": token_growth,
    "spend": turn_spend,
    "ratio": compaction_ratio,
    "composition": context_composition,
    "window": composition_at,
}


def save_all(
    agent: AgentLike,
    folder: str | os.PathLike[str],
    *,
    kinds: list[str] | None = None,
    dpi: int = 120,
) -> list[Path]:
    """Write every plot of one agent as a PNG file: ``<folder>/<agent file stem>-<kind>.png``.

    Parameters
    ----------
    agent : an AgentFile or the path of an ``.adf`` file (opened read-only).
    folder : output folder, created if needed (the agent file's own folder is fine). No
        path written may be the agent file or a SQLite sidecar of it
        (:func:`adfkit._base.outputs.check_output`; an error before anything is written).
    kinds : a subset of :data:`PLOTS` (default: all).
    dpi : resolution of the PNGs.

    Returns
    -------
    The paths written, in the order of ``kinds``.

    Examples
    --------
    >>> import tempfile
    >>> from adfkit import plots
    >>> with tempfile.TemporaryDirectory() as d:
    ...     names = [p.name for p in plots.save_all("sample_agents/clean.adf", d)]
    >>> names  # doctest: +NORMALIZE_WHITESPACE
    ['clean-context.png', 'clean-growth.png', 'clean-spend.png', 'clean-ratio.png',
     'clean-composition.png', 'clean-window.png']
    """
    import matplotlib.pyplot as plt

    kinds = list(PLOTS) if kinds is None else list(kinds)
    bad = [k for k in kinds if k not in PLOTS]
    if bad:
        raise ValueError(f"kinds must be among {list(PLOTS)}, got {bad}")
    out_dir = Path(folder)
    written: list[Path] = []
    with _agent(agent) as a:
        stem = safe_name(agent_stem(a.path))  # as `adfkit plot` names one plot
        paths = {kind: out_dir / f"{stem}-{kind}.png" for kind in kinds}
        for path in [out_dir, *paths.values()]:
            check_output(path, [a.path])
        out_dir.mkdir(parents=True, exist_ok=True)
        for kind, path in paths.items():
            ax = PLOTS[kind](a)
            try:
                figure_of(ax).savefig(path, dpi=dpi, format="png")
                written.append(path)
            finally:
                plt.close(figure_of(ax))
    return written
