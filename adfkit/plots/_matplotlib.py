"""Matplotlib helpers every plot shares: the style, colours and axis labels, drawing on
a given or new Axes, token and date axes, legends, notes, threshold and event marks."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pandas as pd

from adfkit._facade.agent import AgentFile
from adfkit._facade.agent import open_one as open_agent

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.legend import Legend


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


@contextlib.contextmanager
def _drawing(ax: Axes | None, figsize: tuple[float, float] = FIGSIZE) -> Iterator[Axes]:
    """Yield the Axes to draw on, with :data:`STYLE` in force only for the duration; every
    text drawn meanwhile is made plain text (see :func:`_plain`). Pyplot is imported only to
    make a new figure: drawing on a given Axes (the plain report's, on a bare ``Figure``)
    needs none of it."""
    import matplotlib as mpl
    from matplotlib.text import Text

    with mpl.rc_context(STYLE):
        if ax is None:
            import matplotlib.pyplot as plt

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
    >>> from adfkit.plots._matplotlib import _tick_labels
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
