"""The context sawtooth: context size per model call against the compaction threshold."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from adfkit.plots._matplotlib import (
    C_ESTIMATE,
    C_REPORTED,
    ESTIMATE_COLS,
    REPORTED_COLS,
    X_CALL,
    X_EPOCH,
    Data,
    _agent,
    _all_assumed,
    _call_xlim,
    _choose_view,
    _col,
    _date_axis,
    _draw_threshold,
    _drawing,
    _empty,
    _epoch_groups,
    _epoch_marks,
    _floats,
    _int_axis,
    _is_agent_like,
    _legend,
    _mark_events,
    _need,
    _thresholds,
    _times,
    _title,
    _token_axis,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes


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
    calls, events, configured, name = _sawtooth_data(data, x, events, threshold)
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
        epochs = groups if view == "epochs" else None
        times = _times(calls["created_at"]) if x == "time" else None
        tv, note = _thresholds(calls, threshold, configured)
        xs, y, e, tv = _draw_context(ax, calls, tv, epochs, times, estimate=estimate)
        assumed = threshold is None and _all_assumed(calls)
        top = _draw_threshold(ax, xs, tv, note, _data_top(y, e), assumed=assumed)
        marks = _draw_event_marks(ax, calls, events, x, None if times is not None else epochs)
        ax.set_ylim(0, top)
        _token_axis(ax)
        ax.set_ylabel("tokens")
        if x == "time":
            _date_axis(ax)
        else:
            _call_xlim(ax, len(xs), marks)
            _int_axis(ax)
            ax.set_xlabel(X_EPOCH if view == "epochs" else X_CALL)
        _legend(ax)
    return ax


def _draw_context(
    ax: Axes,
    calls: pd.DataFrame,
    tv: np.ndarray,
    epochs: np.ndarray | None,
    times: Any,
    *,
    estimate: bool,
) -> tuple[Any, np.ndarray, np.ndarray | None, np.ndarray]:
    """Draw the reported context (per call, or per epoch when ``epochs`` groups the calls)
    and the estimate when asked and known. Returns the x positions, the reported and
    estimated values drawn, and the threshold at each of them."""
    y = _floats(calls[_col(calls, REPORTED_COLS, "reported tokens")])
    est_col = next((c for c in ESTIMATE_COLS if c in calls.columns), None)
    e = _floats(calls[est_col]) if estimate and est_col is not None else None
    if epochs is not None:
        xs, y, e, tv = _draw_epoch_peaks(ax, y, e, tv, epochs, times)
    else:
        xs = times if times is not None else np.arange(1, len(calls) + 1)
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
            label="estimated context\n(chars / 3.5)" + (", peak" if epochs is not None else ""),
        )
    return xs, y, e, tv


def _data_top(*series: np.ndarray | None) -> float:
    """The largest finite value of the series drawn (0 when none has one)."""
    return max(
        [float(np.nanmax(a)) for a in series if a is not None and np.isfinite(a).any()],
        default=0.0,
    )


def _draw_event_marks(
    ax: Axes, calls: pd.DataFrame, events: pd.DataFrame | None, x: str, epochs: Any
) -> list[Any]:
    """Draw a line per compaction and per clear (moved to the epoch axis when ``epochs``
    groups the calls) and return where they are."""
    marks: list[Any] = _compaction_positions(calls, events, x)
    clears: list[Any] = _compaction_positions(calls, events, x, which="clear")
    if epochs is not None:
        marks, clears = _epoch_marks(marks, epochs), _epoch_marks(clears, epochs)
    _mark_events(ax, marks, gid="compaction", label="compaction", ls=":")
    _mark_events(ax, clears, gid="clear", label="loop_clear", ls="-.")
    return [*marks, *clears]


def _sawtooth_data(
    data: Data, x: str, events: pd.DataFrame | None, threshold: float | None
) -> tuple[pd.DataFrame, pd.DataFrame | None, Any, str | None]:
    """The calls, the events, the configured threshold and the agent's name to draw."""
    if not _is_agent_like(data):
        return data, events, None, None
    configured: Any = None
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
        return calls, events, configured, agent.name


def _draw_epoch_peaks(
    ax: Axes,
    y: np.ndarray,
    e: np.ndarray | None,
    tv: np.ndarray,
    groups: np.ndarray,
    times: Any,
) -> tuple[Any, np.ndarray, np.ndarray | None, np.ndarray]:
    """The epochs view: a bar from each epoch's lowest call to its peak, and the peaks.

    Returns the x positions, the peaks, the estimate's peaks and the threshold at each peak.
    """
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
    return xs, hi, e, tv[rows]
