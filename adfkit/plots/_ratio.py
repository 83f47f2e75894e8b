"""The compaction ratio: swept size against summary size, per compaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from adfkit.plots._matplotlib import (
    C_SUMMARY,
    C_SWEPT,
    X_COMP,
    Y_COMP,
    Data,
    _agent,
    _col,
    _drawing,
    _empty,
    _floats,
    _gid,
    _int_axis,
    _is_agent_like,
    _legend,
    _title,
    _token_axis,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes


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
    comp, name = _compactions_of(data)
    with _drawing(ax) as ax:
        _title(ax, title, "What each compaction swept vs kept", name)
        if not len(comp):
            _empty(ax, "no compactions in this history", X_COMP, Y_COMP)
            return ax
        sw = _floats(comp[_col(comp, SWEPT_COLS, "swept tokens")])
        sm = _floats(comp[_col(comp, SUMMARY_COLS, "summary tokens")])
        xs = np.arange(1, len(comp) + 1)
        labelled = len(comp) <= 30
        _draw_size_bars(ax, xs, sw, sm, side_by_side=labelled)
        unknown = np.isnan(sw) | np.isnan(sm)
        if labelled:
            _label_pairs(ax, xs, sw, sm, _encrypted(comp))
        elif unknown.any():
            _mark_unknown(ax, xs, unknown)
        _median_note(ax, sw, sm, len(comp))
        top = float(np.nanmax(np.concatenate([sw, sm, [1.0]])))
        _ratio_axes(ax, xs, top, labelled=labelled)
    return ax


def _compactions_of(data: Data) -> tuple[pd.DataFrame, str | None]:
    """The compactions to draw (``compactions()`` also lists clears: they are left out) and
    the agent's name."""
    name = None
    if _is_agent_like(data):
        with _agent(data) as agent:
            comp = agent.compactions()
            name = agent.name
    else:
        comp = data
    if "event" in comp.columns:
        comp = comp[comp["event"].astype("string") == "compaction"].reset_index(drop=True)
    return comp, name


def _draw_size_bars(
    ax: Axes, xs: np.ndarray, sw: np.ndarray, sm: np.ndarray, *, side_by_side: bool
) -> None:
    """The swept and summary bars of each compaction: side by side, or the summary in front of
    what it replaced (both readable at any width)."""
    if side_by_side:
        w = 0.4
        b1 = ax.bar(xs - w / 2, sw, width=w, color=C_SWEPT, label="swept (est.)")
        b2 = ax.bar(xs + w / 2, sm, width=w, color=C_SUMMARY, label="summary (est.)")
    else:
        b1 = ax.bar(xs, sw, width=0.85, color=C_SWEPT, lw=0, label="swept (est.)")
        b2 = ax.bar(xs, sm, width=0.85, color=C_SUMMARY, lw=0, label="summary (est.)")
    _gid(b1, "swept")
    _gid(b2, "summary")


def _encrypted(comp: pd.DataFrame) -> np.ndarray:
    """Whether each compaction's summary is encrypted (a Codex remote compaction)."""
    if "summary_encrypted" not in comp.columns:
        return np.zeros(len(comp), dtype=bool)
    enc: np.ndarray = comp["summary_encrypted"].fillna(False).to_numpy(dtype=bool)
    return enc


def _ratio_axes(ax: Axes, xs: np.ndarray, top: float, *, labelled: bool) -> None:
    """Room above the tallest bar for its label, a tick per compaction when they are labelled,
    the axes' labels and the legend."""
    ax.set_ylim(0, top * 1.25)
    ax.set_xlim(0.4, len(xs) + 0.6)
    _token_axis(ax)
    if labelled:
        ax.set_xticks(xs)
    else:
        _int_axis(ax)
    ax.set_ylabel(Y_COMP)
    ax.set_xlabel(X_COMP)
    ax.grid(False, axis="x")
    _legend(ax)


def _label_pairs(ax: Axes, xs: np.ndarray, sw: np.ndarray, sm: np.ndarray, enc: np.ndarray) -> None:
    """Above each pair of bars: its ratio, or why a size is not known."""
    n = len(xs)
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


def _mark_unknown(ax: Axes, xs: np.ndarray, unknown: np.ndarray) -> None:
    """Past 30 compactions: a ``?`` at the base of each compaction with a size not known."""
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


def _median_note(ax: Axes, sw: np.ndarray, sm: np.ndarray, n: int) -> None:
    """The median ratio over the compactions, top right (none when no ratio is known)."""
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
