"""Tokens per turn: input and output tokens spent by each turn."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from adfkit._analysis.usage import call_tokens, load_prices, turns_frame, usage_frame
from adfkit._core.rows import TOKEN_COLUMNS
from adfkit.plots._matplotlib import (
    C_INPUT,
    C_OUTPUT,
    C_TOTAL_ONLY,
    X_TURN,
    Y_TURN,
    Data,
    _agent,
    _drawing,
    _empty,
    _floats,
    _fmt_tokens,
    _gid,
    _int_axis,
    _is_agent_like,
    _legend,
    _need,
    _title,
    _token_axis,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from adfkit._facade.agent import AgentFile


#: Past this many turns, ``group="auto"`` draws the mean of groups of consecutive turns.
MANY_TURNS = 150


def _turns_of(data: Data) -> tuple[pd.DataFrame, str | None]:
    if _is_agent_like(data):
        with _agent(data) as agent:
            return turns_frame(agent.history(), _history_calls(agent)), agent.name
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


def _history_calls(agent: AgentFile) -> pd.DataFrame:
    """The calls of the history that record tokens: the rows of the agent's usage frame (made
    once per file, :func:`adfkit._analysis.usage.call_tokens`) that are in no abandoned
    branch and carry a token count."""
    u = call_tokens(agent.source)
    on_history = u["branch"].isna().to_numpy(dtype=bool)
    tokened = u[list(TOKEN_COLUMNS)].notna().any(axis=1).to_numpy(dtype=bool)
    return u[on_history & tokened].reset_index(drop=True)


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
        parts, total = _turn_parts(turns)
        k = _turns_per_bar(len(turns), group)
        handles = _draw_turn_bars(ax, turn, parts, total, k)
        ax.set_xlim(turn.min() - 0.7, turn.max() + 0.7)
        ax.set_ylim(0, max(float(total.max()), 1.0) * 1.08)
        _token_axis(ax)
        _int_axis(ax)
        ax.set_ylabel(Y_TURN if k == 1 else f"tokens per turn\n(mean over groups of {k} turns)")
        ax.set_xlabel(X_TURN)
        ax.grid(False, axis="x")
        _legend(ax, handles)
    return ax


def _turns_per_bar(n: int, group: int | str) -> int:
    """Turns per bar: ``group``, or for ``"auto"`` 1 up to :data:`MANY_TURNS` turns, else as
    many as make about 100 bars."""
    if group != "auto":
        return int(group)
    return 1 if n <= MANY_TURNS else math.ceil(n / 100)


#: One part of a turn's bar: (gid, tokens per turn or bar, legend label, colour).
_Part = tuple[str, np.ndarray, str, str]


def _turn_parts(turns: pd.DataFrame) -> tuple[list[_Part], np.ndarray]:
    """The parts stacked in each turn's bar (input, output, and the tokens recorded only as
    a total beyond them), and each turn's total."""
    tin = np.nan_to_num(_floats(turns["tokens_input"]))
    tout = np.nan_to_num(_floats(turns["tokens_output"]))
    if "tokens_total" in turns.columns:
        ttot = _floats(turns["tokens_total"])
        total_only = np.where(np.isnan(ttot), 0.0, np.maximum(ttot - tin - tout, 0.0))
    else:
        total_only = np.zeros(len(turns))
    parts = [
        ("input", tin, "input (incl. cached)", C_INPUT),
        ("output", tout, "output", C_OUTPUT),
        ("total", total_only, "total only (no input/output split)", C_TOTAL_ONLY),
    ]
    return parts, tin + tout + total_only


def _draw_turn_bars(
    ax: Axes, turn: np.ndarray, parts: list[_Part], total: np.ndarray, k: int
) -> list[Any]:
    """Draw the stacked bars (one per turn, or the mean of each group of ``k`` turns with a
    mark at its largest turn) and the median turn; return the legend's handles, top-down."""
    n = len(turn)
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
    median = ax.axhline(
        med, color="0.3", lw=1.0, ls="--", gid="median", label=f"median turn {_fmt_tokens(med)}"
    )
    return [*handles, median]
