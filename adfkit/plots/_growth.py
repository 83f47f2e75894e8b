"""Token growth: cumulative input and output tokens (and cost) over time."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from adfkit._base.errors import AdfWarning
from adfkit.plots._matplotlib import (
    C_CACHE,
    C_INPUT,
    C_OUTPUT,
    C_TOTAL_ONLY,
    X_CALL,
    Data,
    _agent,
    _date_axis,
    _drawing,
    _empty,
    _floats,
    _fmt_tokens,
    _int_axis,
    _is_agent_like,
    _legend,
    _need,
    _short,
    _times,
    _title,
    _token_axis,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes


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
        u, xs, keep = _in_x_order(u, x)
        notes = _draw_cumulative(ax, xs[keep], keep, _growth_series(u))
        _growth_axes(ax, x)
        untimed = int((~keep).sum())
        if untimed:
            s = "s" if untimed != 1 else ""
            notes.append(f"{untimed:,} call{s} without a time: in the sums, not drawn")
        _legend(ax, title="\n".join([_cost_note(u), *notes]))
    return ax


def _growth_axes(ax: Axes, x: str) -> None:
    """Cumulative tokens from 0 against time or the n-th call."""
    ax.set_ylim(bottom=0)
    _token_axis(ax)
    ax.set_ylabel("cumulative tokens")
    if x == "time":
        _date_axis(ax)
    else:
        _int_axis(ax)
        ax.set_xlabel(X_CALL)


def _in_x_order(u: pd.DataFrame, x: str) -> tuple[pd.DataFrame, Any, np.ndarray]:
    """The calls in the order they are summed, their x positions, and which have one.

    On a time axis the calls are summed in time order (a manual compaction's summary is
    shown before rows written earlier than it); a call without a time keeps its place after
    the timed call before it, and counts in the sums without a point on the line.
    """
    if x != "time":
        return u, np.arange(1, len(u) + 1), np.ones(len(u), dtype=bool)
    t = _times(u["created_at"])
    key = pd.Series(t).ffill().to_numpy(dtype="datetime64[ms]")
    lowest = np.iinfo(np.int64).min
    order = np.argsort(np.where(np.isnat(key), lowest, key.astype("int64")), kind="stable")
    xs = t[order]
    return u.iloc[order].reset_index(drop=True), xs, ~np.isnat(xs)


#: One cumulative line: (gid, tokens per call, legend label, colour, line style).
_Series = tuple[str, np.ndarray, str, str, str]


def _growth_series(u: pd.DataFrame) -> list[_Series]:
    """The lines to draw: input, output and cached reads when any call has an input/output
    split, and the total when some call has only a total."""
    tin, tout, ttot = (_floats(u[c]) for c in ("tokens_input", "tokens_output", "tokens_total"))
    total_only = np.isnan(tin) & np.isnan(tout) & ~np.isnan(ttot)
    series: list[_Series] = []
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
    return series


def _draw_cumulative(ax: Axes, xs: Any, keep: np.ndarray, series: list[_Series]) -> list[str]:
    """Draw each series' running sum at ``xs`` (the calls ``keep`` marks), its label giving the
    final sum (``≥`` and how many calls are unknown when some are); return a note per series
    no call records."""
    notes = []
    for gid, vals, label, color, ls in series:
        known = np.isfinite(vals)
        if not known.any():
            notes.append(f"{label.split(' (')[0]}: not recorded")
            continue
        cum = np.nan_to_num(vals).cumsum()
        # An absent cache key means no cached read; an absent input or output is unknown.
        n_unknown = 0 if gid == "cum_cache_read" else int((~known).sum())
        value = _fmt_tokens(float(cum[-1]))
        if n_unknown:
            value = f"≥{value} ({n_unknown:,} call{'s' if n_unknown != 1 else ''} unknown)"
        ax.plot(xs, cum[keep], color=color, lw=1.6, ls=ls, gid=gid, label=f"{label}: {value}")
    return notes
