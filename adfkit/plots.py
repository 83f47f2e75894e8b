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
================  =====================================================================

:func:`save_all` writes every plot of one agent as PNG files.

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
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pandas as pd

from ._agent import AgentFile
from ._agent import open as open_agent
from ._open import refuse_beside_input
from ._usage import load_prices, turns_frame, usage_frame

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "PLOTS",
    "close",
    "compaction_ratio",
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
C_SWEPT = "#56B4E9"
C_SUMMARY = "#CC79A7"

FIGSIZE = (9.0, 4.5)

X_CALL = "model call (n-th, over the whole history)"
X_TURN = "turn (starts at a trigger or message)"
Y_TURN = "tokens (summed over the turn's calls)"
X_COMP = "compaction (n-th)"
Y_COMP = "estimated tokens (chars / 3.5)"

#: Columns read from ``AgentFile.replay()``: the provider-reported ``input + output`` and the
#: estimate of the conversation (first present wins).
REPORTED_COLS = ("tokens_total",)
ESTIMATE_COLS = ("est_tokens",)


# --- shared helpers -----------------------------------------------------------------------


@contextlib.contextmanager
def _drawing(ax: Axes | None, figsize: tuple[float, float] = FIGSIZE) -> Iterator[Axes]:
    """Yield the Axes to draw on, with :data:`STYLE` in force only for the duration."""
    import matplotlib.pyplot as plt

    with plt.rc_context(STYLE):
        if ax is None:
            _, ax = plt.subplots(figsize=figsize, layout="constrained")
        yield ax


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


def _fmt_tokens(v: float, _pos: object = None) -> str:
    """1234 -> '1.2k', 2_500_000 -> '2.5M'."""
    a = abs(v)
    if a >= 1e6:
        s = f"{v / 1e6:.1f}M"
    elif a >= 1e3:
        s = f"{v / 1e3:.1f}k"
    else:
        return f"{v:.0f}"
    return s.replace(".0k", "k").replace(".0M", "M")


def _token_axis(ax: Axes, axis: str = "y") -> None:
    from matplotlib.ticker import FuncFormatter

    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(FuncFormatter(_fmt_tokens))


def _date_axis(ax: Axes) -> None:
    import matplotlib.dates as mdates

    loc = mdates.AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
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


def _title(ax: Axes, title: str | None, default: str, name: str | None) -> None:
    ax.set_title(title if title is not None else (f"{default}: {name}" if name else default))


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


def _mark_events(ax: Axes, marks: list[Any], *, gid: str, label: str, ls: Any) -> None:
    """One vertical line per event (gid ``gid``); a short rug at the bottom when there are
    many; ``×k`` above a line that stands for k events between the same two calls."""
    many = len(marks) > 40
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
                (pos, 0.8),  # under the legend, above a threshold drawn at 1/1.32 of the height
                xycoords=("data", "axes fraction"),
                xytext=(3, 0),
                textcoords="offset points",
                ha="left",
                va="bottom",
                fontsize=8,
                color="0.25",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
            )


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


def context_sawtooth(
    data: Data,
    *,
    ax: Axes | None = None,
    x: str = "call",
    events: pd.DataFrame | None = None,
    threshold: float | None = None,
    estimate: bool = True,
    title: str | None = None,
) -> Axes:
    """Context size per model call against the compaction threshold: the sawtooth.

    One point per model call over the whole history: the provider-reported ``input +
    output`` (the number the runtime compares with the threshold, ADF_FORMAT.md §5.1) as a
    solid line, the estimated context (``chars / 3.5``, §9.1) as a dashed line, the
    threshold as a horizontal line, one dotted vertical line per compaction and one dash-dot
    line per ``loop_clear``. Each compaction drops the context back down, hence the sawtooth.
    Events with no call between them share a line, labelled ``×k``; past 40 events the lines
    shrink to a rug along the bottom.

    Parameters
    ----------
    data : an AgentFile (or path), or the frame of ``AgentFile.replay()`` (one row per call:
        ``seq``, ``tokens_total`` (reported input + output), optionally ``est_tokens``,
        ``threshold``, ``epoch``, and ``created_at`` for ``x="time"``).
    ax : Axes to draw on; a new figure when None.
    x : ``"call"`` (default: the n-th model call) or ``"time"`` (``created_at``, UTC).
    events : compaction events (``AgentFile.events()`` or ``compactions()``: ``event``,
        ``boundary_seq``, and ``created_at`` for ``x="time"``) for the markers. Taken from
        the agent when ``data`` is one; with a bare frame and no ``events`` a marker is drawn
        wherever ``epoch`` goes up. On a time axis an event without a time sits halfway
        between the calls around it.
    threshold : overrides the threshold line (default: the frame's ``threshold`` column,
        else the agent's configured threshold).
    estimate : draw the estimated-context line too.
    title : replaces the default title.

    Returns
    -------
    The Axes. Artists carry gids for tests: ``reported``, ``estimate``, ``threshold``,
    ``compaction`` and ``clear`` (one line per event).

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
                threshold = agent.compact_threshold()
            name = agent.name
    else:
        calls = data
    _need(calls, ["seq"] + (["created_at"] if x == "time" else []), "context_sawtooth")
    calls = calls.sort_values("seq", kind="stable").reset_index(drop=True)
    with _drawing(ax) as ax:
        _title(ax, title, "Context size per model call", name)
        if not len(calls):
            _empty(ax, "no model calls in this history", X_CALL, "tokens")
            return ax
        if x == "time":
            xs: Any = _times(calls["created_at"])
        else:
            xs = np.arange(1, len(calls) + 1)
        top = 0.0
        rep = _col(calls, REPORTED_COLS, "reported tokens")
        y = calls[rep].to_numpy(dtype="float64", na_value=np.nan)
        ax.plot(
            xs,
            y,
            color=C_REPORTED,
            lw=1.4,
            gid="reported",
            label="reported input + output (compared with the threshold)",
        )
        top = max(top, np.nanmax(y) if np.isfinite(y).any() else 0.0)
        if estimate:
            est_col = next((c for c in ESTIMATE_COLS if c in calls.columns), None)
            if est_col is not None:
                e = calls[est_col].to_numpy(dtype="float64", na_value=np.nan)
                ax.plot(
                    xs,
                    e,
                    color=C_ESTIMATE,
                    lw=1.1,
                    ls="--",
                    gid="estimate",
                    label="estimated context (chars / 3.5)",
                )
                top = max(top, np.nanmax(e) if np.isfinite(e).any() else 0.0)
        thr: Any = threshold
        if thr is None and "threshold" in calls.columns:
            t = calls["threshold"].dropna().to_numpy(dtype="float64")
            if len(t):
                thr = t if len(np.unique(t)) > 1 else float(t[0])
        if isinstance(thr, np.ndarray):
            tv = calls["threshold"].to_numpy(dtype="float64", na_value=np.nan)
            ax.step(
                xs, tv, where="mid", color=C_THRESHOLD, lw=1.2, gid="threshold", label="threshold"
            )
            top = max(top, float(np.nanmax(tv)))
        elif thr is not None:
            ax.axhline(
                float(thr),
                color=C_THRESHOLD,
                lw=1.2,
                ls=(0, (6, 3)),
                gid="threshold",
                label=f"threshold ({float(thr):,.0f} tokens)",
            )
            top = max(top, float(thr))
        marks = _compaction_positions(calls, events, x)
        _mark_events(ax, marks, gid="compaction", label="compaction", ls=":")
        clears = _compaction_positions(calls, events, x, which="clear")
        _mark_events(ax, clears, gid="clear", label="loop_clear", ls="-.")
        ax.set_ylim(0, top * 1.32 if top > 0 else 1)
        _token_axis(ax)
        ax.set_ylabel("tokens")
        if x == "time":
            _date_axis(ax)
        else:
            ax.set_xlim(0.5, len(calls) + 0.5)
            _int_axis(ax)
            ax.set_xlabel(X_CALL)
        ax.legend(loc="upper left", ncols=2)
    return ax


# --- token growth -------------------------------------------------------------------------


def _usage_of(data: Data) -> tuple[pd.DataFrame, str | None]:
    if _is_agent_like(data):
        with _agent(data) as agent:
            u, _, _ = usage_frame(agent.history(), load_prices())
            return u, agent.name
    return data, None


def token_growth(
    data: Data, *, ax: Axes | None = None, x: str = "time", title: str | None = None
) -> Axes:
    """Cumulative tokens over the agent's life: input (which includes cached reads), output,
    cached reads when reported, and the estimated cost when every model has a price.

    Each model call re-sends the whole context, so cumulative input grows much faster than
    output. Legacy files that store only token totals show the cumulative total instead.

    Parameters
    ----------
    data : an AgentFile (or path), or the frame of ``AgentFile.usage()``.
    ax : Axes to draw on; a new figure when None.
    x : ``"time"`` (default, ``created_at`` in UTC; calls without a time are left out of the
        line, not of the sums) or ``"call"`` (the n-th model call).
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
        if x == "time":
            xs: Any = _times(u["created_at"])
            keep = ~np.isnat(xs)
        else:
            xs = np.arange(1, len(u) + 1)
            keep = np.ones(len(u), dtype=bool)
        series = []
        if u["tokens_input"].notna().any() or u["tokens_output"].notna().any():
            series += [("cum_input", "tokens_input", "input (incl. cached)", C_INPUT)]
            series += [("cum_output", "tokens_output", "output", C_OUTPUT)]
            if u.get("tokens_cache_read", pd.Series(dtype="Int64")).notna().any():
                series += [
                    ("cum_cache_read", "tokens_cache_read", "of which cached reads", C_CACHE)
                ]
        else:
            series += [
                ("cum_total", "tokens_total", "total (legacy: no input/output split)", C_INPUT)
            ]
        for gid, col, label, color in series:
            cum = u[col].fillna(0).to_numpy(dtype="float64").cumsum()
            ls = ":" if gid == "cum_cache_read" else "-"
            ax.plot(
                xs[keep],
                cum[keep],
                color=color,
                lw=1.6,
                ls=ls,
                gid=gid,
                label=f"{label}: {_fmt_tokens(cum[-1])}",
            )
        ax.set_ylim(bottom=0)
        _token_axis(ax)
        ax.set_ylabel("cumulative tokens")
        if x == "time":
            _date_axis(ax)
        else:
            _int_axis(ax)
            ax.set_xlabel(X_CALL)
        cost = u.get("cost_usd")
        if cost is not None and len(cost) and cost.notna().all():
            note = f"{len(u):,} model calls, estimated cost ${float(cost.sum()):,.2f}"
        else:
            note = (
                f"{len(u):,} model calls, cost unknown\n(unpriced model or no input/output split)"
            )
        leg = ax.legend(loc="upper left", title=note, alignment="left")
        leg.get_title().set_fontsize(8)
        leg.get_title().set_color("0.3")
    return ax


# --- tokens per turn ----------------------------------------------------------------------


def _turns_of(data: Data) -> tuple[pd.DataFrame, str | None]:
    if _is_agent_like(data):
        with _agent(data) as agent:
            h = agent.history()
            u, _, _ = usage_frame(h, load_prices())
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


def turn_spend(data: Data, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Tokens spent per turn: stacked bars of input and output tokens.

    A turn starts at a trigger or message row (timer, inbox, startup, owner chat) and runs to
    the next one; compaction calls count in the turn where they ran. Every call in a turn
    re-sends the context, so a turn's input is the sum over its calls (not unique tokens).

    Parameters
    ----------
    data : an AgentFile (or path), its ``history()`` frame, or a per-turn frame with
        ``turn``, ``tokens_input``, ``tokens_output`` (and optionally ``tokens_total``).
    ax : Axes to draw on; a new figure when None.
    title : replaces the default title.

    Returns
    -------
    The Axes; the two bar containers carry gids ``input`` and ``output``, the median line
    ``median``.

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
    with _drawing(ax) as ax:
        _title(ax, title, "Tokens per turn", name)
        if not len(turns):
            _empty(ax, "no turns in this history", X_TURN, Y_TURN)
            return ax
        xs = turns["turn"].to_numpy(dtype="int64")
        tin = turns["tokens_input"].fillna(0).to_numpy(dtype="float64")
        tout = turns["tokens_output"].fillna(0).to_numpy(dtype="float64")
        legacy = False
        if not tin.any() and not tout.any() and "tokens_total" in turns.columns:
            tin = turns["tokens_total"].fillna(0).to_numpy(dtype="float64")
            legacy = True
        width = 0.8 if len(turns) <= 60 else 1.0
        lw = 0.0
        b1 = ax.bar(
            xs,
            tin,
            width=width,
            color=C_INPUT,
            lw=lw,
            label="total (legacy: no split)" if legacy else "input (incl. cached)",
        )
        _gid(b1, "input")
        b2 = ax.bar(xs, tout, width=width, bottom=tin, color=C_OUTPUT, lw=lw, label="output")
        _gid(b2, "output")
        total = tin + tout
        med = float(np.median(total))
        ax.axhline(
            med, color="0.3", lw=1.0, ls="--", gid="median", label=f"median {_fmt_tokens(med)}"
        )
        ax.set_xlim(xs.min() - 0.7, xs.max() + 0.7)
        ax.set_ylim(0, max(float(total.max()), 1.0) * 1.15)
        _token_axis(ax)
        _int_axis(ax)
        ax.set_ylabel(Y_TURN)
        ax.set_xlabel(X_TURN)
        ax.grid(False, axis="x")
        ax.legend(
            handles=[b1, b2, *[ln for ln in ax.lines if ln.get_gid() == "median"]],
            loc="upper left",
            ncols=3,
        )
    return ax


# --- compaction ratio ---------------------------------------------------------------------

SWEPT_COLS = ("swept_tokens",)
SUMMARY_COLS = ("summary_tokens",)


def compaction_ratio(data: Data, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """What each compaction swept against what its summary kept (estimated tokens).

    Side-by-side bars per compaction: the estimated size of the rows it archived or
    discarded, and of the summary that replaced them; the ratio is written above each pair
    when there are few enough compactions to read it.

    Parameters
    ----------
    data : an AgentFile (or path), or the frame of ``AgentFile.compactions()``
        (``swept_tokens``, ``summary_tokens``; rows whose ``event`` is ``clear`` are left
        out). A compaction whose swept rows were discarded is labelled "not archived".
    ax : Axes to draw on; a new figure when None.
    title : replaces the default title.

    Returns
    -------
    The Axes; the bar containers carry gids ``swept`` and ``summary``.

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
        sw = comp[_col(comp, SWEPT_COLS, "swept tokens")].to_numpy(dtype="float64", na_value=np.nan)
        sm = comp[_col(comp, SUMMARY_COLS, "summary tokens")].to_numpy(
            dtype="float64", na_value=np.nan
        )
        n = len(comp)
        xs = np.arange(1, n + 1)
        w = 0.4
        b1 = ax.bar(xs - w / 2, np.nan_to_num(sw), width=w, color=C_SWEPT, label="swept (est.)")
        _gid(b1, "swept")
        b2 = ax.bar(xs + w / 2, np.nan_to_num(sm), width=w, color=C_SUMMARY, label="summary (est.)")
        _gid(b2, "summary")
        top = float(np.nanmax(np.concatenate([sw, sm, [1.0]])))
        if n <= 30:
            for xi, a, b in zip(xs, sw, sm, strict=True):
                if np.isnan(a):
                    label = "swept rows not archived"
                elif np.isnan(b):
                    label = "summary lost"
                elif b <= 0:
                    label = "empty summary"
                else:
                    r = a / b
                    label = f"{r:.0f}×" if r >= 10 else f"{r:.1f}×"
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
        ratios = sw / np.where(sm > 0, sm, np.nan)
        if np.isfinite(ratios).any():
            med = float(np.nanmedian(ratios))
            ax.text(
                0.99,
                0.98,
                f"median ratio {med:.0f}× over {n} compaction{'s' if n != 1 else ''}",
                transform=ax.transAxes,
                ha="right",
                va="top",
                fontsize=9,
                color="0.25",
            )
        ax.set_ylim(0, top * 1.25)
        ax.set_xlim(0.4, n + 0.6)
        _token_axis(ax)
        if n <= 30:
            ax.set_xticks(xs)
        else:
            _int_axis(ax)
        ax.set_ylabel(Y_COMP)
        ax.set_xlabel(X_COMP)
        ax.grid(False, axis="x")
        ax.legend(loc="upper left", ncols=2)
    return ax


# --- context composition ------------------------------------------------------------------

#: The stacked parts of :func:`context_composition`: column -> (label, colour).
COMPOSITION_PARTS: dict[str, tuple[str, str]] = {
    "system_prompt_tokens": ("system prompt", "#999999"),
    "dynamic_instructions_tokens": ("dynamic instructions", "#F0E442"),
    "summary_tokens": ("compaction summary", C_SUMMARY),
    "message_tokens": ("messages (chat, triggers, notices)", "#0072B2"),
    "assistant_tokens": ("assistant turns", "#E69F00"),
    "tool_result_tokens": ("tool results", "#009E73"),
    "inject_tokens": ("loop_inject", "#D55E00"),
}


def context_composition(
    data: Data,
    *,
    ax: Axes | None = None,
    events: pd.DataFrame | None = None,
    title: str | None = None,
) -> Axes:
    """What each model call was sent, stacked by part, with a marker per compaction.

    One stacked area per part of ``AgentFile.composition()`` (estimated tokens, ``chars /
    3.5``): system prompt, dynamic instructions, compaction summary, messages, assistant
    turns, tool results and delivered ``loop_inject`` text. Parts that are zero on every call
    are left out. Compactions are dotted vertical lines.

    Parameters
    ----------
    data : an AgentFile (or path), or the frame of ``AgentFile.composition()``.
    ax : Axes to draw on; a new figure when None.
    events : compaction events for the markers (taken from the agent when ``data`` is one;
        with a bare frame and no ``events`` a marker is drawn wherever ``epoch`` goes up).
    title : replaces the default title.

    Returns
    -------
    The Axes. Each stacked area carries the gid of its column (e.g. ``summary_tokens``);
    compaction markers have the gid ``compaction``.

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
    name = None
    if _is_agent_like(data):
        with _agent(data) as agent:
            comp = agent.composition()
            if events is None:
                events = agent.events()
            name = agent.name
    else:
        comp = data
    _need(comp, ["seq"], "context_composition")
    parts = [c for c in COMPOSITION_PARTS if c in comp.columns]
    if not parts:
        raise ValueError(
            f"context_composition needs some of {list(COMPOSITION_PARTS)}; got {list(comp.columns)}"
        )
    comp = comp.sort_values("seq", kind="stable").reset_index(drop=True)
    with _drawing(ax) as ax:
        _title(ax, title, "What each model call was sent", name)
        if not len(comp):
            _empty(ax, "no model calls in this history", X_CALL, "estimated tokens")
            return ax
        xs = np.arange(1, len(comp) + 1)
        ys, labels, colors, gids = [], [], [], []
        for c in parts:
            y = np.nan_to_num(comp[c].to_numpy(dtype="float64", na_value=np.nan))
            if not y.any():
                continue
            ys.append(y)
            labels.append(COMPOSITION_PARTS[c][0])
            colors.append(COMPOSITION_PARTS[c][1])
            gids.append(c)
        top = 0.0
        if ys:
            polys = ax.stackplot(xs, *ys, labels=labels, colors=colors, alpha=0.85, lw=0)
            for poly, gid in zip(polys, gids, strict=True):
                poly.set_gid(gid)
            top = float(np.sum(ys, axis=0).max())
        marks = _compaction_positions(comp, events, "call")
        for i, pos in enumerate(marks):
            ax.axvline(
                float(pos),
                color=C_COMPACTION,
                lw=0.9,
                ls=":",
                gid="compaction",
                label=f"compaction ({len(marks)})" if i == 0 else "_nolegend_",
            )
        ax.set_ylim(0, top * 1.35 if top > 0 else 1)
        ax.set_xlim(0.5, len(comp) + 0.5)
        _token_axis(ax)
        _int_axis(ax)
        ax.set_ylabel("estimated tokens (chars / 3.5)")
        ax.set_xlabel(X_CALL)
        ax.legend(loc="upper left", ncols=2)
    return ax


# --- all at once --------------------------------------------------------------------------

#: Plot kinds for the CLI and :func:`save_all`: kind -> function(data, *, ax) -> Axes.
PLOTS: dict[str, Callable[..., Axes]] = {
    "context": context_sawtooth,
    "growth": token_growth,
    "spend": turn_spend,
    "ratio": compaction_ratio,
    "composition": context_composition,
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
    folder : output folder, created if needed. Must not be the agent file's own folder
        (:class:`adfkit.AdfError` otherwise: adfkit never creates files beside an input).
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
     'clean-composition.png']
    """
    import matplotlib.pyplot as plt

    kinds = list(PLOTS) if kinds is None else list(kinds)
    bad = [k for k in kinds if k not in PLOTS]
    if bad:
        raise ValueError(f"kinds must be among {list(PLOTS)}, got {bad}")
    out_dir = Path(folder)
    written: list[Path] = []
    with _agent(agent) as a:
        stem = Path(a.path).stem
        refuse_beside_input(a.path, out_dir / f"{stem}-{kinds[0] if kinds else 'plot'}.png")
        out_dir.mkdir(parents=True, exist_ok=True)
        for kind in kinds:
            ax = PLOTS[kind](a)
            try:
                path = out_dir / f"{stem}-{kind}.png"
                figure_of(ax).savefig(path, dpi=dpi)
                written.append(path)
            finally:
                plt.close(figure_of(ax))
    return written
