"""The forgetting plots (the public module is :mod:`adfkit.plots_forgetting`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from adfkit._analysis.forgetting import survival_of
from adfkit.plots import C_INPUT, C_OUTPUT, C_SUMMARY, C_THRESHOLD, Data, close
from adfkit.plots._matplotlib import (
    _agent,
    _drawing,
    _empty,
    _gid,
    _is_agent_like,
    _legend,
    _short,
    _title,
    figure_of,
)
from adfkit.schema import ITEM_KINDS

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["ANCHORS", "cache_cost", "close", "ledger_by_kind", "recovery_plot", "survival_plot"]

#: Published figures the plots draw as reference lines: name -> (value, label). Each label says
#: in words what was measured (the recovery figures: tool calls before the first edit, over
#: 86 compactions of coding agents in a public issue thread of the deja-vu project), never just
#: where it was posted.
ANCHORS: dict[str, tuple[float, str]] = {
    "recall_default": (0.62, "facts recalled after a default compaction, 6.2/10 (pi benchmark)"),
    "kept_text_summary": (0.356, "task facts kept by a budget-matched text summary, 35.6%"),
    "cold_median": (
        10,
        "measured on coding agents: median 10 tool calls to the first edit from a cold start",
    ),
    "after_median": (28, "measured: median 28 tool calls to the first edit after a compaction"),
    "after_p75": (61, "measured: 3 in 4 compactions were followed by 61 or fewer"),
}
#: Colours of the item kinds (Okabe-Ito and greys).
KIND_COLOURS = dict(
    zip(
        ITEM_KINDS,
        ("#0072B2", "#E69F00", "#56B4E9", "#D55E00", "#009E73", "#CC79A7", "#F0E442", "#7f7f7f"),
        strict=True,
    )
)
C_ANCHOR = "0.35"
#: Line style of each anchor (they share one grey).
_ANCHOR_LS = {
    "recall_default": ":",
    "kept_text_summary": "--",
    "cold_median": "--",
    "after_median": ":",
    "after_p75": "-.",
}


def _frame(data: Data, table: str, **kw: Any) -> tuple[pd.DataFrame, str | None]:
    if _is_agent_like(data):
        with _agent(data) as agent:
            return getattr(agent, table)(**kw), agent.name
    assert isinstance(data, pd.DataFrame)
    return data, None


def _who(df: pd.DataFrame) -> str | None:
    """The column naming each agent of a fleet frame: its ``label`` (readable; a session's
    project and title, not its UUID), else ``agent``; None for one agent's table."""
    return next((c for c in ("label", "agent") if c in df.columns), None)


def _labels(df: pd.DataFrame) -> list[str]:
    """One x label per compaction row: ``#<event>`` or ``<agent label> #<event>`` in a fleet
    (the label cut to 30 characters)."""
    ev = [f"#{int(e)}" if not pd.isna(e) else "?" for e in df["event_id"]]
    who = _who(df)
    if who is not None and df[who].nunique() > 1:
        names = [_short(a, 30) for a in df[who].astype(str)]
        return [f"{a} {e}" for a, e in zip(names, ev, strict=True)]
    return ev


def _anchor(
    ax: Axes, key: str, *, scale: float = 1.0, y: float | None = None, label: str | None = None
) -> None:
    v, default = ANCHORS[key]
    label = default if label is None else label
    y = v * scale if y is None else y
    ax.axhline(y, color=C_ANCHOR, ls=_ANCHOR_LS[key], lw=1.2, label=label, gid=key)


def ledger_by_kind(data: Data, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """What each compaction lost, stacked by kind of item, and its loss rate.

    Bars: the items of each compaction's swept span that its summary did not keep (``kept``
    ``lost`` in :meth:`AgentFile.compaction_ledger`), stacked by ``kind``; dots on the right
    axis: the loss rate, against the published shares of facts lost (1 - 6.2/10 after a
    default compaction; 1 - 35.6% for a budget-matched text summary).

    Parameters
    ----------
    data : an AgentFile (or path), or a ``compaction_ledger()`` frame (a fleet's too).

    Examples
    --------
    >>> import pandas as pd
    >>> from adfkit import plots_forgetting as pf
    >>> led = pd.DataFrame({"event_id": [0, 0, 1], "kind": ["path", "url", "path"],
    ...                     "kept": ["lost", "exact", "lost"]})
    >>> ax = pf.ledger_by_kind(led)
    >>> [float(p.get_height()) for p in ax.containers[0]]
    [1.0, 1.0]
    >>> pf.close(ax)
    """
    led, name = _frame(data, "compaction_ledger")
    who = _who(led)
    keys = ["event_id"] if who is None else [who, "event_id"]
    with _drawing(ax) as ax:
        _title(ax, title, "What each compaction lost, by kind", name)
        known = led.loc[led["kept"].notna()] if len(led) else led
        if not len(known):
            _empty(ax, "no compaction with its swept rows and summary", "compaction", "items")
            return ax
        table, rate = _lost_by_kind(known, keys)
        xs = np.arange(len(table))
        bottom = np.zeros(len(table))
        for k in table.columns:
            h = table[k].to_numpy(dtype=float)
            _gid(ax.bar(xs, h, bottom=bottom, color=KIND_COLOURS[k], label=f"{k} lost"), k)
            bottom += h
        ax.set_xticks(xs, _labels(table.index.to_frame(index=False)), rotation=45, ha="right")
        ax.set_xlabel("compaction")
        ax.set_ylabel("items lost")
        _draw_loss_rate(ax, xs, rate)
    return ax


def _lost_by_kind(known: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, pd.Series]:
    """Per compaction (``keys``): the items lost of each kind (columns in the order of
    :data:`ITEM_KINDS`), and the share of its items lost."""
    lost = known.assign(lost=(known["kept"] == "lost").astype(int))
    table = lost.pivot_table(index=keys, columns="kind", values="lost", aggfunc="sum")
    table = table.reindex(columns=[k for k in ITEM_KINDS if k in table.columns]).fillna(0)
    return table, lost.groupby(keys)["lost"].mean().reindex(table.index)


def _draw_loss_rate(ax: Axes, xs: np.ndarray, rate: pd.Series) -> None:
    """On a right axis: each compaction's loss rate against the published shares of facts
    lost; the legend of both axes beyond the right axis's labels."""
    right = ax.twinx()
    right.plot(xs, rate.to_numpy(dtype=float), "o", color="black", label="loss rate", gid="rate")
    _anchor(
        right, "recall_default", y=1 - ANCHORS["recall_default"][0],
        label="facts lost after a default compaction, 1 - 6.2/10 (pi benchmark)",
    )  # fmt: skip
    _anchor(
        right, "kept_text_summary", y=1 - ANCHORS["kept_text_summary"][0],
        label="task facts a budget-matched text summary loses, 1 - 35.6%",
    )  # fmt: skip
    right.set_ylim(0, 1.05)
    right.set_ylabel("share of items lost")
    right.grid(False)
    h1, _ = ax.get_legend_handles_labels()
    h2, _ = right.get_legend_handles_labels()
    right.legend(  # beyond the right axis's tick labels and label, however wide the axes
        h1 + h2, [str(h.get_label()) for h in h1 + h2], loc="upper left",
        bbox_to_anchor=(1.0, 1.0), bbox_transform=_beyond_labels(right), borderaxespad=0.0,
    )  # fmt: skip


def _beyond_labels(ax: Axes) -> Any:
    """Axes coordinates moved right by the width of ``ax``'s right tick labels and label (in
    inches, so the offset holds at any axes width: a fraction of the axes was too little in a
    narrow subplot, and the legend covered the label)."""
    from matplotlib.transforms import ScaledTranslation

    fig = figure_of(ax)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    frame = ax.get_window_extent(renderer)
    labels = ax.get_tightbbox(renderer)
    inches = 0.08 + (0.0 if labels is None else max(0.0, labels.x1 - frame.x1) / fig.dpi)
    return ax.transAxes + ScaledTranslation(inches, 0, fig.dpi_scale_trans)


def survival_plot(data: Data, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """The share of items still kept after n compactions (summary of summary), a step
    curve (:meth:`AgentFile.survival_curve`), against the published recall after one
    default compaction (6.2/10).

    Parameters
    ----------
    data : an AgentFile (or path), an ``item_survival()`` frame (a fleet's: the curve of
        all its items) or a ``survival_curve()`` frame.
    """
    df, name = _frame(data, "item_survival")
    if "survival" not in df.columns and len(df):
        df = survival_of(df["n_checked"].to_numpy(dtype="int64"), df["lost_at"].notna().to_numpy())
    with _drawing(ax) as ax:
        _title(ax, title, "Items kept through chained compactions", name)
        if not len(df):
            _empty(ax, "no item was swept by a compaction", "compactions", "share kept")
            return ax
        xs = np.concatenate([[0], df["compactions"].to_numpy(dtype=float)])
        ys = np.concatenate([[1.0], df["survival"].to_numpy(dtype=float)])
        ax.step(xs, ys, where="post", color=C_INPUT, lw=2, label="share kept", gid="survival")
        _anchor(ax, "recall_default")
        ax.set_xticks(xs)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("compactions survived")
        ax.set_ylabel("share of items kept")
        _legend(ax)
    return ax


def cache_cost(data: Data, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """What the calls after each compaction cost through the prompt cache, against the
    counterfactuals of :meth:`AgentFile.compaction_cache`: no compaction (over the calls
    before the window would have overflowed: ``n_compared``, written above the bar), and a
    stable prefix (the summary after the system prompt and tools). The compaction call's own cost
    is stacked on the real bar when known. Unpriced or cacheless compactions have no bars
    and are named in a note.

    Parameters
    ----------
    data : an AgentFile (or path), or a ``compaction_cache()`` frame (a fleet's too).
    """
    df, name = _frame(data, "compaction_cache")
    with _drawing(ax) as ax:
        _title(ax, title, "Cache cost after each compaction", name)
        known = df.loc[df["cost_after_usd"].notna()] if len(df) else df
        if not len(known):
            _empty(
                ax,
                "no compaction with priced calls and cache fields on both sides",
                "compaction",
                "USD",
            )
            return ax
        xs = np.arange(len(known))
        w = 0.27
        after = known["cost_after_usd"].to_numpy(dtype=float)
        comp = known["compaction_cost_usd"].astype("Float64").fillna(0).to_numpy(dtype=float)
        bars = [
            ("after", xs - w, after, None, C_INPUT, "real (after)"),
            ("compaction", xs - w, comp, after, C_SUMMARY, "compaction call"),
            ("without", xs, known["cost_no_compaction_usd"], None, C_OUTPUT, "without compaction"),
            ("stable", xs + w, known["cost_stable_prefix_usd"], None, C_THRESHOLD, "stable prefix"),
        ]
        cf = known["cost_no_compaction_usd"].astype("Float64").fillna(0).to_numpy(dtype=float)
        for x0, top, n, m in zip(xs, cf, known["n_after"], known["n_compared"], strict=True):
            if not pd.isna(m) and not pd.isna(n) and int(m) < int(n):
                ax.annotate(
                    f"{int(m)} of {int(n)}\ncalls fit", (float(x0), float(top)), xytext=(0, 2),
                    textcoords="offset points", ha="center", va="bottom", fontsize=7,
                    gid="compared",
                )  # fmt: skip
        for gid, x, h, bottom, colour, label in bars:
            heights = np.asarray(
                pd.Series(h).astype("Float64").to_numpy(dtype=float, na_value=np.nan)
            )
            _gid(ax.bar(x, heights, width=w, bottom=bottom, color=colour, label=label), gid)
        ax.set_xticks(xs, _labels(known), rotation=45, ha="right")
        ax.set_xlabel("compaction")
        ax.set_ylabel(f"USD over the next {int(known['k'].max())} calls at most")
        _legend(ax)
    return ax


def recovery_plot(data: Data, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Tool calls before the first productive action, at the cold start and after each
    compaction (:meth:`AgentFile.recovery`), each start a dot and the median a bar, against
    the published medians (10 cold, 28 after a compaction, p75 61).

    Parameters
    ----------
    data : an AgentFile (or path), or a ``recovery()`` frame (a fleet's too).
    """
    df, name = _frame(data, "recovery")
    with _drawing(ax) as ax:
        _title(ax, title, "Getting going again", name)
        ax.set_ylabel("tool calls before the first productive action")
        if not len(df) or df["actions_to_productive"].isna().all():
            _empty(ax, "no productive action in any span", "start", ax.get_ylabel())
            return ax
        for x, kind in enumerate(("cold", "compaction")):
            v = df.loc[df["start"] == kind, "actions_to_productive"].dropna().to_numpy(float)
            if not len(v):
                continue
            jitter = (np.arange(len(v)) % 7 - 3) * 0.04
            ax.plot(x + jitter, v, "o", color=C_INPUT, alpha=0.7, gid=f"{kind}-points")
            _gid(ax.bar(x, float(np.median(v)), width=0.5, color=C_INPUT, alpha=0.25), kind)
        for key in ("cold_median", "after_median", "after_p75"):
            _anchor(ax, key)
        ax.set_xticks([0, 1], ["cold start", "after a compaction"])
        _legend(ax)
    return ax
