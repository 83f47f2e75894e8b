"""The agent's timeline: the points where its loop was emptied or its prompt rebuilt.

Resets (compactions, clears, history gaps), restarts, configuration changes: derived once from
the history of an :class:`AgentSource` and shared by the replay, the context blocks, the mind
and the compaction analyses.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np
import pandas as pd

from adfkit._analysis.tables import tool_calls
from adfkit._core.source import AgentSource, Key

_RESETS: Key[list[tuple[int, str, range]]] = Key("timeline.resets")
_CONFIG_CALLS: Key[list[int]] = Key("timeline.config_calls")
_RESTARTS: Key[list[int]] = Key("timeline.restarts")


def resets(src: AgentSource) -> list[tuple[int, str, range]]:
    """Points where the loop was emptied: ``(first seq after, kind, preserved tail range)``.

    A compaction resets at its summary's seq and keeps the rows of its preserved tail (the
    rows written after the summary's ``ord`` and before the summary: the seqs of the tail
    range); a clear, a compaction whose summary was lost and a history gap reset after their
    last row, with an empty range. Sorted by seq.
    """
    return src.memo.get(_RESETS, lambda: _resets(src))


def _resets(src: AgentSource) -> list[tuple[int, str, range]]:
    ev = src.events()
    summ = ev.loc[ev["summary_seq"].notna().to_numpy(bool), "summary_seq"].astype("int64")
    h = src.history()
    ords: dict[int, Any] = {}
    if len(summ):
        want = h["seq"].isin(summ.tolist()).to_numpy(bool)
        ords = dict(zip(h["seq"][want].tolist(), h["ord"][want].tolist(), strict=True))
    out: list[tuple[int, str, range]] = []
    for e, s, b in zip(
        ev["event"].tolist(), ev["summary_seq"].tolist(), ev["boundary_seq"].tolist(), strict=True
    ):
        if e == "repair":  # the loop was rewritten, not emptied
            continue
        if not pd.isna(s):
            o = ords.get(int(s))
            tail = range(int(o) + 1, int(s)) if o is not None and not pd.isna(o) else range(0)
            out.append((int(s), str(e), tail))
        elif not pd.isna(b):
            out.append((int(b) + 1, str(e), range(0)))
    for g_end in gap_list(src)[1]:
        out.append((g_end + 1, "gap", range(0)))
    # At one seq, a gap's reset is the same event as the compaction or clear: name that.
    out.sort(key=lambda x: (x[0], x[1] != "gap"))
    return out


def turn_starts(rows: pd.DataFrame) -> np.ndarray:
    """Which rows open a turn: the one meaning of "turn" in adfkit (ADF_FORMAT.md §8.1).

    A turn opens at a trigger row (a timer, an inbox message, a startup...) or at a user message
    with text (an owner's chat); everything up to the next such row belongs to it. Context
    rows, tool results and runtime notices never open one. ``rows`` needs ``kind`` and
    ``subkind``; the result is a bool array in the frame's order.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"kind": ["trigger", "context", "assistant", "message", "message"],
    ...                      "subkind": ["timer", "system_prompt", None, "chat", None]})
    >>> turn_starts(rows).tolist()
    [True, False, False, True, False]
    """
    kind = rows["kind"].astype("string").fillna("").to_numpy(dtype=object)
    sub = rows["subkind"].astype("string").fillna("").to_numpy(dtype=object)
    return np.asarray((kind == "trigger") | ((kind == "message") & (sub != "")), dtype=bool)


def restarts(src: AgentSource) -> list[int]:
    """Seqs of the ``startup`` trigger rows (the runtime started again), ascending."""

    def build() -> list[int]:
        h = src.history()
        at = (h["kind"] == "trigger") & (h["subkind"] == "startup")
        return sorted(int(s) for s in h.loc[at, "seq"])

    found: list[int] = src.memo.get(_RESTARTS, build)
    return list(found)  # a copy: the caller may change it


def config_calls(src: AgentSource) -> list[int]:
    """Seqs of the assistant rows of successful ``sys_update_config`` calls."""

    def build() -> list[int]:
        c = tool_calls(src, history=True)
        c = c[(c["tool_name"] == "sys_update_config") & ~c["is_error"].fillna(True)]
        return sorted(int(s) for s in c["call_seq"])

    return src.memo.get(_CONFIG_CALLS, build)


def reset_between(src: AgentSource, lo: int, hi: int, *, config: bool = False) -> str | None:
    """The last event after seq ``lo`` and before ``hi`` that makes the runtime write a
    context block again: ``compaction``, ``clear``, ``gap`` (rows lost: an unaudited reset),
    ``restart`` and, with ``config=True`` (the system prompt hashes the config),
    ``config_change``."""
    found: tuple[int, str] | None = None
    points_ = resets(src)
    k = bisect.bisect_right([r[0] for r in points_], hi) - 1  # last reset at or before hi
    if k >= 0 and points_[k][0] > lo:
        found = (points_[k][0], points_[k][1])
    for points, kind in (
        (restarts(src), "restart"),
        (config_calls(src) if config else [], "config_change"),
    ):
        j = bisect.bisect_left(points, hi) - 1  # last point before hi
        if j >= 0 and points[j] > lo and (found is None or points[j] > found[0]):
            found = (points[j], kind)
    return None if found is None else found[1]


def gap_list(src: AgentSource) -> tuple[list[int], list[int]]:
    """The history gaps as two ascending lists: their first seqs and their last seqs."""
    return src.gap_ranges()


def gap_between(src: AgentSource, lo: int, hi: int) -> tuple[int, int] | None:
    """The first history gap with seqs strictly between ``lo`` and ``hi``, if any."""
    starts, ends = gap_list(src)
    i = bisect.bisect_right(ends, lo)  # the first gap ending after lo (gaps are disjoint)
    if i < len(starts) and starts[i] < hi:
        return starts[i], ends[i]
    return None
