"""Plots of many agents at once, from the frames of ``adfkit.load_fleet``: tokens per agent
(:func:`fleet_tokens`) and compression against recall per agent (:func:`fleet_recall`).

Each agent is named by its fleet ``label`` (an ADF agent's name; a session's project folder
and title or first prompt), never by a session's UUID; the id stays in the frame's ``agent``
column. Token axes read ``1.25M`` and ``500k``, with no offset text ("1e6") beside the axis
label, and every label drawn stays inside the figure. Style and plain-text rules are those of
:mod:`adfkit.plots`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np
import pandas as pd

from adfkit.plots import C_INPUT
from adfkit.plots._matplotlib import (
    _drawing,
    _empty,
    _floats,
    _fmt_tokens,
    _gid,
    _short,
    _token_axis,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["fleet_recall", "fleet_tokens"]

#: What the fleet plots take: a ``load_fleet`` frame or result, or what ``load_fleet`` reads.
FleetData: TypeAlias = pd.DataFrame | tuple[Any, ...] | str | os.PathLike[str] | Iterable[Any]

#: Longest agent label drawn (characters; the fleet's own labels go to 60).
PLOT_LABEL_CHARS = 40

#: Past this many agents, only the ones with the most compactions are named on the scatter.
MAX_LABELS = 40

X_TOKENS = "tokens over the lifetime (input + output; the total where only it is recorded)"
RECALL_TITLE = "Does a summary that compresses harder forget more?"
X_RATIO = "median compression (swept tokens / summary tokens)"
Y_RECALL = "mean recall (share of swept items kept)"


def _fleet_frame(data: FleetData, table: str) -> pd.DataFrame:
    """The fleet frame of ``table``: ``data`` itself, a FleetResult's frame, or loaded."""
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, tuple) and data and isinstance(data[0], pd.DataFrame):
        return data[0]  # a FleetResult (df, errors)
    from adfkit._facade.fleet import load_fleet

    return load_fleet(data, table, progress=False).df


def _per_agent(df: pd.DataFrame) -> tuple[pd.core.groupby.DataFrameGroupBy, pd.Series]:
    """The frame grouped by file (``agent_path``, else ``agent``), and each group's label."""
    key = "agent_path" if "agent_path" in df.columns else "agent"
    if key not in df.columns:
        raise ValueError(f"a fleet frame needs an agent_path or agent column; got {list(df)}")
    name = "label" if "label" in df.columns else "agent"
    g = df.groupby(key, sort=False, dropna=False)
    labels = g[name].first().astype("string").fillna(g["agent"].first().astype("string"))
    return g, labels


def fleet_tokens(data: FleetData, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Tokens each agent of a fleet used over its life: one horizontal bar per agent, the
    largest on top.

    Parameters
    ----------
    data : the frame of ``load_fleet(..., "usage")`` (or its FleetResult, or what
        ``load_fleet`` reads: a folder, a glob, a list of paths). ``tokens_total`` is summed
        per file; an agent with no known total has no bar and reads "unknown", never 0.
    ax : Axes to draw on; a new figure (its height fits the number of agents) when None.
    title : replaces the default title.

    Returns
    -------
    The Axes; the bars carry the gid ``tokens``, in the order of the y ticks (bottom up).

    Examples
    --------
    >>> import pandas as pd
    >>> from adfkit import plots, plots_fleet
    >>> usage = pd.DataFrame({"label": ["a", "a", "b"], "agent": ["a", "a", "b"],
    ...                       "agent_path": ["a.adf", "a.adf", "b.adf"],
    ...                       "tokens_total": [1_000_000, 500_000, 250_000]})
    >>> ax = plots_fleet.fleet_tokens(usage)
    >>> [t.get_text() for t in ax.get_yticklabels()], [float(b.get_width()) for b in ax.patches]
    (['b', 'a'], [250000.0, 1500000.0])
    >>> plots.close(ax)
    """
    df = _fleet_frame(data, "usage")
    g, labels = _per_agent(df)
    if "tokens_total" not in df.columns:
        raise ValueError(f"fleet_tokens needs a tokens_total column; got {list(df.columns)}")
    totals = g["tokens_total"].agg(lambda s: pd.to_numeric(s).sum(min_count=1))
    order = sorted(range(len(totals)), key=lambda i: (pd.notna(totals.iloc[i]), totals.iloc[i]))
    values = _floats(totals.iloc[order])
    names = [_short(labels.iloc[i], PLOT_LABEL_CHARS) for i in order]
    height = max(2.4, 1.3 + 0.32 * len(names))
    with _drawing(ax, figsize=(8.0, height)) as ax:
        ax.set_title("Tokens per agent" if title is None else title)
        if not len(names):
            _empty(ax, "no agent in this fleet", X_TOKENS, "")
            return ax
        ys = np.arange(len(names))
        bars = ax.barh(ys, np.nan_to_num(values, nan=0.0), color=C_INPUT, height=0.6)
        _gid(bars, "tokens")
        for b, v in zip(bars, values, strict=True):
            if np.isnan(v):
                b.set_visible(False)  # no bar for an unknown total
        _write_totals(ax, ys, values)
        ax.set_yticks(ys, names)
        _token_axis(ax, "x")
        ax.set_xlabel(X_TOKENS)
        ax.grid(False, axis="y")
    return ax


def _write_totals(ax: Axes, ys: np.ndarray, values: np.ndarray) -> None:
    """Each agent's total after its bar ("unknown" where it has none), and room for the one
    after the longest bar."""
    top = float(np.nanmax(np.r_[values, 1.0]))
    for y, v in zip(ys, values, strict=True):
        ax.annotate(
            _fmt_tokens(v),
            (0.0 if np.isnan(v) else v, y),
            xytext=(3, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=8,
            color="0.25",
        )
    ax.set_xlim(0, top * 1.12)


def fleet_recall(data: FleetData, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Does a summary that compresses harder forget more? One point per agent: the median
    compression ratio of its compactions against the mean recall of the items they swept
    (``recall`` of :meth:`compactions`: the loss ledger's items, ``1 - loss_rate``), sized
    by how many compactions it had, labelled with the agent's label.

    Parameters
    ----------
    data : the frame of ``load_fleet(..., "compactions")`` (or its FleetResult, or what
        ``load_fleet`` reads). Rows whose ``event`` is not ``compaction`` are left out; an
        agent none of whose compactions was measured (audit off: ratio and recall unknown)
        is not drawn, and a note counts it.
    ax : Axes to draw on; a new figure when None.
    title : replaces the default title.

    Returns
    -------
    The Axes; the points are the collection with gid ``agents`` (in the order of the frame's
    files), each label an annotation with gid ``label``, placed towards the middle of the
    axes so it stays inside them.

    Examples
    --------
    >>> import pandas as pd
    >>> from adfkit import plots, plots_fleet
    >>> comp = pd.DataFrame({"label": ["a", "a", "b"], "agent": ["a", "a", "b"],
    ...                      "agent_path": ["a.adf", "a.adf", "b.adf"],
    ...                      "event": ["compaction"] * 3, "compression_ratio": [10, 30, 5],
    ...                      "recall": [0.5, 0.7, 0.9]})
    >>> ax = plots_fleet.fleet_recall(comp)
    >>> ax.collections[0].get_offsets().tolist()
    [[20.0, 0.6], [5.0, 0.9]]
    >>> plots.close(ax)
    """
    df = _fleet_frame(data, "compactions")
    for col in ("compression_ratio", "recall"):
        if col not in df.columns:
            raise ValueError(f"fleet_recall needs a {col} column; got {list(df.columns)}")
    if "event" in df.columns:
        df = df[df["event"].astype("string") == "compaction"]
    labels, x, y, n = _recall_per_agent(df)
    ok = np.isfinite(x) & np.isfinite(y)
    with _drawing(ax, figsize=(8.0, 4.0)) as ax:
        ax.set_title(RECALL_TITLE if title is None else title)
        if not ok.any():
            _empty(ax, "no agent has a measured compaction (audit off?)", X_RATIO, Y_RECALL)
            return ax
        pts = ax.scatter(x[ok], y[ok], s=30 + 20 * n[ok], color=C_INPUT, alpha=0.8, zorder=3)
        pts.set_gid("agents")
        _recall_axes(ax)
        shown = np.flatnonzero(ok)
        if len(shown) > MAX_LABELS:  # the agents with the most compactions are named
            shown = shown[np.argsort(-n[shown], kind="stable")[:MAX_LABELS]]
        note = _note_not_drawn(ax, int((~ok).sum()))
        names = labels.iloc[shown].tolist()
        _place_labels(ax, x[shown], y[shown], 30 + 20 * n[shown], names, avoid=note)
    return ax


def _recall_per_agent(df: pd.DataFrame) -> tuple[pd.Series, np.ndarray, np.ndarray, np.ndarray]:
    """Each agent's label, median compression ratio, mean recall and number of compactions."""
    g, labels = _per_agent(df)
    ratio = g["compression_ratio"].agg(lambda s: pd.to_numeric(s).median())
    recall = g["recall"].agg(lambda s: pd.to_numeric(s).mean())
    return labels, _floats(ratio), _floats(recall), _floats(g.size())


def _recall_axes(ax: Axes) -> None:
    """Room around the points, recall kept near its range (a share: no room far past 0 or
    1), and the axes' labels."""
    ax.margins(0.12, 0.15)
    ax.autoscale_view()
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    ax.set_xlim(x0, x1)
    ax.set_ylim(max(y0, -0.05), min(y1, 1.05))
    ax.set_xlabel(X_RATIO)
    ax.set_ylabel(Y_RECALL)


def _note_not_drawn(ax: Axes, missing: int) -> Any:
    """The note (bottom right) counting the agents not drawn; None when all are."""
    if not missing:
        return None
    return ax.text(
        0.99,
        0.02,
        f"{missing} agent(s) without a measured compaction not drawn",
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=8,
        color="0.35",
    )


_Ha: TypeAlias = Literal["left", "center", "right"]
_Va: TypeAlias = Literal["bottom", "center", "top"]
_SIDES: tuple[tuple[int, int, _Ha, _Va], ...] = (
    (1, 1, "left", "bottom"),
    (-1, 1, "right", "bottom"),
    (1, -1, "left", "top"),
    (-1, -1, "right", "top"),
    (1, 0, "left", "center"),
    (-1, 0, "right", "center"),
    (0, 1, "center", "bottom"),
    (0, -1, "center", "top"),
)
#: Where a label may go around its point, nearest first: (dx, dy) in points, ha, va.
_AROUND: list[tuple[tuple[int, int], _Ha, _Va]] = [
    ((dx * d, dy * d), ha, va) for d in (6, 16, 30, 48) for (dx, dy, ha, va) in _SIDES
]


def _overlap(a: Any, b: Any) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return float(w * h) if w > 0 and h > 0 else 0.0


def _place_labels(
    ax: Axes,
    xs: np.ndarray,
    ys: np.ndarray,
    sizes: np.ndarray,
    names: list[str],
    *,
    avoid: Any = None,
) -> None:
    """One annotation (gid ``label``) per point, each put where it lies inside the axes and
    covers no other label, no point and not the artist ``avoid`` (a note): the nearest such
    place around its point (a thin line leads back to a label set further off), else the
    place that covers least."""
    renderer = _final_layout(ax)
    frame = ax.get_window_extent(renderer)
    dots = _dot_boxes(ax, xs, ys, sizes)
    placed: list[Any] = [] if avoid is None else [avoid.get_window_extent(renderer)]
    for k in np.argsort(-ys, kind="stable"):  # from the top down
        name = _short(names[k], PLOT_LABEL_CHARS)
        probe = ax.annotate(
            name, (xs[k], ys[k]), xytext=(0, 0), textcoords="offset points", fontsize=8
        )
        others = [d for j, d in enumerate(dots) if j != k]
        offset, ha, va = _AROUND[_best_place(probe, renderer, frame, placed, others)]
        probe.remove()
        far = max(abs(offset[0]), abs(offset[1])) > _AROUND[0][0][0]
        text = ax.annotate(
            name,
            (xs[k], ys[k]),
            xytext=offset,
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=8,
            color="0.15",
            gid="label",
            arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.6, "shrinkA": 1, "shrinkB": 4}
            if far
            else None,
        )
        placed.append(text.get_window_extent(renderer))


def _final_layout(ax: Axes) -> Any:
    """The renderer of ``ax``'s figure, once its layout engine has put the axes in their
    final place (labels are measured against it)."""
    fig = ax.get_figure(root=True)
    assert fig is not None
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
    return fig.canvas.get_renderer()  # type: ignore[attr-defined]


def _dot_boxes(ax: Axes, xs: np.ndarray, ys: np.ndarray, sizes: np.ndarray) -> list[Any]:
    """The box each scatter point covers on the figure (``sizes`` in points squared)."""
    from matplotlib.transforms import Bbox

    fig = ax.get_figure(root=True)
    assert fig is not None
    px = fig.dpi / 72.0
    centres = ax.transData.transform(np.column_stack([xs, ys]))
    return [
        Bbox.from_bounds(cx - r, cy - r, 2 * r, 2 * r)
        for (cx, cy), r in zip(centres, np.sqrt(sizes) / 2 * px, strict=True)
    ]


def _best_place(probe: Any, renderer: Any, frame: Any, labels: list[Any], dots: list[Any]) -> int:
    """Index in :data:`_AROUND` of the nearest place where the text ``probe`` lies inside
    ``frame`` and covers none of the boxes of ``labels`` (and a note) and ``dots`` (the other
    points), else of the place that covers least (a place out of the frame counts far more
    than one covering a box)."""
    best: tuple[float, int] | None = None
    for i, (offset, ha, va) in enumerate(_AROUND):
        probe.set_position(offset)
        probe.set_horizontalalignment(ha)
        probe.set_verticalalignment(va)
        box = probe.get_window_extent(renderer)
        outside = (
            max(frame.x0 - box.x0, 0)
            + max(box.x1 - frame.x1, 0)
            + max(frame.y0 - box.y0, 0)
            + max(box.y1 - frame.y1, 0)
        )
        cover = sum(_overlap(box, b) for b in labels)
        cover += sum(_overlap(box, d) for d in dots)
        score = outside * 1e6 + cover
        if best is None or score < best[0]:
            best = (score, i)
        if score == 0:
            break
    assert best is not None
    return best[1]
