"""Context composition: what each call was sent, stacked by part, and the window at one
call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from adfkit._base.parts import NOT_IN_FILE as _NOT_IN_FILE
from adfkit._base.parts import PARTS
from adfkit.plots._matplotlib import (
    THRESHOLD_CLIP,
    X_CALL,
    X_EPOCH,
    Data,
    _agent,
    _call_xlim,
    _choose_view,
    _drawing,
    _empty,
    _epoch_groups,
    _epoch_marks,
    _floats,
    _fmt_tokens,
    _int_axis,
    _is_agent_like,
    _legend,
    _mark_events,
    _need,
    _placeable,
    _title,
    _token_axis,
)
from adfkit.plots._sawtooth import _compaction_positions, _peak_rows

if TYPE_CHECKING:
    from matplotlib.axes import Axes


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
        _title(ax, title, _COMPOSITION_TITLES[view], name)
        if not len(comp):
            _empty(ax, "no model calls in this history", X_CALL, "estimated tokens")
            return ax
        _draw_composition(ax, comp, parts, events, groups if view == "epochs" else None)
    return ax


#: The default title of :func:`context_composition` in each view.
_COMPOSITION_TITLES = {
    "epochs": "The fullest call of each epoch, by part",
    "calls": "What each model call was sent",
}


def _draw_composition(
    ax: Axes, comp: pd.DataFrame, parts: list[str], events: Any, epochs: np.ndarray | None
) -> None:
    """The stacked parts of every call (of each epoch's fullest call when ``epochs`` groups
    the calls), the event markers, the axes and the legend."""
    values = _part_values(comp, parts)
    marks: list[Any] = _compaction_positions(comp, events, "call")
    clears: list[Any] = _compaction_positions(comp, events, "call", which="clear")
    n_x = len(comp)
    if epochs is not None:
        rows = _peak_rows(np.sum(list(values.values()), axis=0), epochs)
        values = {c: v[rows] for c, v in values.items()}
        marks, clears = _epoch_marks(marks, epochs), _epoch_marks(clears, epochs)
        n_x = len(rows)
    gids, top = _stack_parts(ax, np.arange(1, n_x + 1), values, parts)
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
    ax.set_xlabel(X_EPOCH if epochs is not None else X_CALL)
    handles, _ = ax.get_legend_handles_labels()
    stack = [h for h in handles if h.get_gid() in {*COMPOSITION_PARTS, "not_in_file"}]
    _legend(ax, stack[::-1] + [h for h in handles if h not in stack])  # top-down


def _part_values(comp: pd.DataFrame, parts: list[str]) -> dict[str, np.ndarray]:
    """Each part's estimated tokens per call (0 where unknown) and, when the frame has the
    reported input, ``not_in_file``: what the provider counted beyond the estimate."""
    values = {c: np.nan_to_num(_floats(comp[c])) for c in parts}
    if "tokens_input" in comp.columns:
        est = np.sum(list(values.values()), axis=0) if values else np.zeros(len(comp))
        values["not_in_file"] = np.clip(
            np.nan_to_num(_floats(comp["tokens_input"])) - est, 0, None
        ) * np.isfinite(_floats(comp["tokens_input"]))
    return values


def _stack_parts(
    ax: Axes, xs: np.ndarray, values: dict[str, np.ndarray], parts: list[str]
) -> tuple[list[str], float]:
    """One stacked area per part that is not zero everywhere (gid: its column), in the order
    of ``parts`` with ``not_in_file`` on top; returns the gids drawn and the stack's top."""
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
    if not ys:
        return gids, 0.0
    polys = ax.stackplot(xs, *ys, labels=labels, colors=colors, alpha=0.85, lw=0)
    for poly, gid in zip(polys, gids, strict=True):
        poly.set_gid(gid)
    return gids, float(np.sum(ys, axis=0).max())


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
    comp, parts, name = _window_of(data)
    seqs = _floats(comp["seq"])
    i = _call_index(comp, seqs, seq)
    with _drawing(ax, figsize=(9.0, 2.8)) as ax:
        if i is None:  # a session with no model call yet: nothing was sent
            _title(ax, title, "Context window at the last call", name)
            _empty(ax, "no model call yet: no context window to show", "tokens", "model call")
            return ax
        _title(ax, title, f"Context window at call S{int(seqs[i])}", name)
        _draw_window(ax, comp, parts, comp.iloc[i], int(seqs[i]))
    return ax


def _window_of(data: Data) -> tuple[pd.DataFrame, list[str], str | None]:
    """The composition frame, its parts and the agent's name; from an agent, with each call's
    reported total too (the bare total of a legacy layout)."""
    comp, _, name = _composition_of(data, False)
    parts = _parts_of(comp, "composition_at")
    if _is_agent_like(data) and "tokens_total" not in comp.columns:
        with _agent(data) as agent:
            totals = agent.replay().set_index("seq")["tokens_total"]
        comp = comp.assign(tokens_total=comp["seq"].map(totals))
    return comp, parts, name


def _call_index(comp: pd.DataFrame, seqs: np.ndarray, seq: int | None) -> int | None:
    """Row of ``comp`` for the model call ``seq`` (the last call when None; None when there is
    no call and none was asked for)."""
    if not len(comp):
        if seq is None:
            return None
        raise ValueError(f"seq {seq} is not a model call: there is no model call yet")
    if seq is None:
        return int(np.nanargmax(seqs))
    hit = np.flatnonzero(seqs == seq)
    if not len(hit):
        order = np.sort(seqs[np.isfinite(seqs)])
        k = int(np.searchsorted(order, seq))
        near = [int(v) for v in order[max(k - 1, 0) : k + 1]]
        raise ValueError(
            f"seq {seq} is not a model call; the nearest calls are at seq "
            f"{' and '.join(map(str, near))}"
        )
    return int(hit[0])


def _draw_window(ax: Axes, comp: pd.DataFrame, parts: list[str], row: pd.Series, at: int) -> None:
    """The window at one call: a segment per known part, the reported input, the labels and
    the legend (with what is unknown or not drawn)."""
    vals = {c: _placeable(row[c]) for c in parts}
    known = {c: v for c, v in vals.items() if v is not None and v > 0}
    total = sum(known.values())
    segments = _draw_part_bars(ax, parts, known, total)
    unknown = [COMPOSITION_PARTS[c][0] for c, v in vals.items() if v is None]
    reported, what = _reported_of(comp, row)
    handles: list[Any] = ax.get_legend_handles_labels()[0]
    notes = [f"estimated total {_fmt_tokens(total)}"]
    right = _draw_reported(ax, reported, what, total, handles)
    if reported is not None and what.startswith("input") and reported > total:
        _draw_not_in_file(ax, reported, total, handles, segments, notes)
    _label_window(ax, segments, right, at)
    if unknown:
        notes.append(f"unknown: {', '.join(unknown)}")
    if not known:
        notes.append("nothing was sent that the estimate sees")
    _legend(ax, handles, title="\n".join(notes))


def _draw_part_bars(
    ax: Axes, parts: list[str], known: dict[str, float], total: float
) -> list[tuple[float, float]]:
    """One bar segment per known part, left to right; returns each segment's (left, width)."""
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
    return segments


def _reported_of(comp: pd.DataFrame, row: pd.Series) -> tuple[float | None, str]:
    """What the provider counted: the input, else the bare total of a legacy layout."""
    reported = _placeable(row["tokens_input"]) if "tokens_input" in comp.columns else None
    what = "input the provider reported"
    if reported is None and "tokens_total" in comp.columns:
        reported = _placeable(row["tokens_total"])
        what = "total the provider reported\n(no input/output split)"
    return reported, what


def _draw_reported(
    ax: Axes, reported: float | None, what: str, total: float, handles: list[Any]
) -> float:
    """The reported line (in view) or a note with an arrow; returns the x axis's right end."""
    right = max(total, 1.0) * 1.08
    if reported is None:
        return right
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
    return right


def _draw_not_in_file(
    ax: Axes,
    reported: float,
    total: float,
    handles: list[Any],
    segments: list[tuple[float, float]],
    notes: list[str],
) -> None:
    """The reported input beyond the estimate: its own segment in view, else a note."""
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


def _label_window(ax: Axes, segments: list[tuple[float, float]], right: float, at: int) -> None:
    """The x range, each wide segment's number, and the axes' labels."""
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
