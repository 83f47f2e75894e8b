"""The compaction lab: recall of what was needed again against tokens kept, per compactor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from adfkit.plots._matplotlib import (
    C_INPUT,
    C_SUMMARY,
    _agent,
    _drawing,
    _empty,
    _title,
    _token_axis,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

LAB_TITLE = "What each compactor keeps, and what it costs in tokens"
X_KEPT = "mean tokens of the new window"
Y_NEEDED = "recall of items needed again"


def _lab_frame(data: Any) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    frame = getattr(data, "df", None)  # a FleetResult
    if isinstance(frame, pd.DataFrame):
        return frame
    with _agent(data) as agent:
        return agent.compaction_lab()


def lab_recall_tokens(data: Any, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """One point per compactor: the mean tokens of the new windows it made against its recall
    of the items needed again after the compactions (pooled: items kept over items needed, over
    every compaction where some were), from :meth:`compaction_lab`. The recorded compactor
    (what the agent did) is a star; each point is labelled with the compactor's spec, as
    plain text.

    Parameters
    ----------
    data : the frame of ``AgentFile.compaction_lab()`` or ``load_fleet(..., "compaction_lab")``,
        or an AgentFile or path (its lab with the built-in compactors).
    ax : Axes to draw on; a new figure when None.
    title : replaces the default title.

    Returns
    -------
    The Axes; the points are the collection with gid ``compactors`` (the recorded one, when
    drawn, the collection with gid ``recorded``), each label an annotation with gid ``label``.
    A compactor without a known recall (nothing needed again) is not drawn, and a note says so.

    Examples
    --------
    >>> import pandas as pd
    >>> from adfkit import plots
    >>> lab = pd.DataFrame({"compactor": ["recorded", "mask", "mask"],
    ...                     "tokens_after": [100, 300, 500], "n_needed": [4, 2, 2],
    ...                     "n_needed_kept": [1, 2, 1]})
    >>> ax = plots.lab_recall_tokens(lab)
    >>> ax.collections[0].get_offsets().tolist()
    [[400.0, 0.75]]
    >>> plots.close(ax)
    """
    df = _lab_frame(data)
    for col in ("compactor", "tokens_after", "n_needed", "n_needed_kept"):
        if col not in df.columns:
            raise ValueError(f"lab_recall_tokens needs a {col} column; got {list(df.columns)}")
    names, x, y = _per_compactor(df)
    ok = np.isfinite(x) & np.isfinite(y)
    with _drawing(ax, figsize=(8.0, 4.0)) as ax:
        _title(ax, title, LAB_TITLE, None)
        if not ok.any():
            _empty(ax, "no compaction had an item needed again", X_KEPT, Y_NEEDED)
            return ax
        _draw_compactors(ax, names, x, y, ok)
        _lab_axes(ax)
        missing = int((~ok).sum())
        if missing:
            ax.text(
                0.99,
                0.02,
                f"{missing} compactor(s) without a known recall not drawn",
                transform=ax.transAxes,
                ha="right",
                va="bottom",
                fontsize=8,
                color="0.35",
            )
    return ax


def _per_compactor(df: pd.DataFrame) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Each compactor's name, the mean tokens of its new windows and its pooled recall of the
    items needed again (items kept over items needed; NaN when none was needed)."""
    g = df.groupby(df["compactor"].astype("string"), sort=False)
    tokens = g["tokens_after"].agg(lambda s: pd.to_numeric(s).astype("Float64").mean())
    needed = g["n_needed"].agg(lambda s: pd.to_numeric(s).astype("Float64").sum())
    kept = g["n_needed_kept"].agg(lambda s: pd.to_numeric(s).astype("Float64").sum())
    x = tokens.to_numpy(dtype="float64", na_value=np.nan)
    n = needed.to_numpy(dtype="float64", na_value=np.nan)
    k = kept.to_numpy(dtype="float64", na_value=np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.where(n > 0, k / n, np.nan)
    return [str(c) for c in tokens.index], x, y


def _draw_compactors(
    ax: Axes, names: list[str], x: np.ndarray, y: np.ndarray, ok: np.ndarray
) -> None:
    """A point per compactor ``ok`` marks (the recorded one a star), each labelled with its
    spec."""
    rec = np.array([c == "recorded" or c.startswith("recorded:") for c in names], dtype=bool) & ok
    other = ok & ~rec
    pts = ax.scatter(x[other], y[other], s=60, color=C_INPUT, zorder=3)
    pts.set_gid("compactors")
    if rec.any():
        star = ax.scatter(x[rec], y[rec], s=180, marker="*", color=C_SUMMARY, zorder=4)
        star.set_gid("recorded")
    for i in np.flatnonzero(ok):
        label = "recorded (what the agent did)" if names[i] == "recorded" else names[i]
        a = ax.annotate(label, (x[i], y[i]), xytext=(6, 6), textcoords="offset points", fontsize=8)
        a.set_gid("label")


def _lab_axes(ax: Axes) -> None:
    """Tokens from 0 across, recall (a share) up, with room for the labels."""
    ax.margins(0.15, 0.15)
    ax.autoscale_view()
    ax.set_xlim(0, ax.get_xlim()[1])
    ax.set_ylim(-0.05, 1.1)
    ax.set_xlabel(X_KEPT)
    ax.set_ylabel(Y_NEEDED)
    _token_axis(ax, "x")
