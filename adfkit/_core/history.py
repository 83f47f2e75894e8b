"""Lifetime history: live loop + audited loop rows, deduplicated by seq; events; epochs; gaps.

Works on the rows a :class:`adfkit._core.loopframe.RowBuilder` holds (every blob plus the live
loop): :func:`history_rows` picks one copy per seq and orders them by ``COALESCE(ord, seq), seq``
(the rule :meth:`RowBuilder.frame <adfkit._core.loopframe.RowBuilder.frame>` and
:func:`adfkit._core.loopframe.sort_display` apply too); :func:`events`, :func:`add_epochs` and
:func:`gaps` work on the resulting frame; :func:`reappended_copies` finds the rows a fallback
(or pre-v28) compaction re-appended under new seqs.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from adfkit._core.calls import REAPPENDED_TAIL as REAPPENDED_TAIL  # re-exported
from adfkit._core.calls import reappended_pairs
from adfkit._core.loopframe import RowBuilder
from adfkit._core.rows import TOKEN_COLUMNS

#: Two audit rows of one model-initiated ``loop_clear`` are written within this many ms.
CLEAR_PAIR_MS = 5_000
_TOKEN_COLS = TOKEN_COLUMNS


def history_rows(rows: RowBuilder) -> tuple[np.ndarray, np.ndarray]:
    """Pick one copy per seq from every row added to ``rows`` (blobs and live loop).

    A seq in several blobs keeps the oldest blob's copy (lowest audit id), then the live copy
    when no blob has it (ADF_FORMAT.md §4.4); within one blob, the first in display order.

    Returns ``(positions, copies)``: the chosen rows' positions in ``rows``, in display order
    (``COALESCE(ord, seq), seq``), and how many stored copies each seq has.
    """
    key, seq = rows.display_key()
    aid, live = rows.int_array("audit_id")
    rank = np.where(live, np.iinfo(np.int64).max, aid)
    order = np.lexsort((key, rank, seq))
    s = seq[order]
    first = np.ones(len(s), dtype=bool)
    first[1:] = s[1:] != s[:-1]
    starts = np.flatnonzero(first)
    copies = np.diff(np.append(starts, len(s)))
    chosen = order[starts]
    display = np.lexsort((seq[chosen], key[chosen]))
    return chosen[display], copies[display]


def blob_tops(rows: RowBuilder, spans: list[tuple[int, int, int]]) -> dict[int, int | None]:
    """Highest seq of each blob: ``spans`` holds ``(audit id, first row, end row)`` of the
    rows each blob added to ``rows`` (None when none of them has a seq)."""
    if not spans:
        return {}
    seq, na = rows.int_array("seq")
    end = spans[-1][2]
    seq = np.where(na, np.iinfo(np.int64).min, seq)[:end]
    starts = np.array([lo for _, lo, _ in spans], dtype=np.int64)
    # reduceat runs each span to the next one's start: the spans are non-empty, in order and
    # contiguous (the blobs' rows were added one blob after the other)
    top = np.maximum.reduceat(seq, starts)
    has = np.logical_or.reduceat(~na[:end], starts)
    return {
        aid: (int(t) if h else None)
        for (aid, _, _), t, h in zip(spans, top.tolist(), has.tolist(), strict=True)
    }


def rewritten_blobs(rows: RowBuilder) -> set[int]:
    """Loop audit ids of the blobs some of whose rows were written again later, changed, under
    the same seq (in a later blob or the live loop): the provider-compatibility repair
    (ADF_FORMAT.md §4.3) archives the loop, strips its tool blocks and writes the survivors back
    under their old seqs. A row archived twice unchanged is not a repair (a fallback compaction
    re-appends under new seqs; the two blobs of a ``loop_clear`` share no seq)."""
    seq, seq_na = rows.int_array("seq")
    aid, live = rows.int_array("audit_id")
    n_blocks, _ = rows.int_array("n_blocks")
    chars, _ = rows.int_array("chars")
    keep = ~seq_na
    seq, aid, live = seq[keep], aid[keep], live[keep]
    n_blocks, chars = n_blocks[keep], chars[keep]
    if not len(seq):
        return set()
    rank = np.where(live, np.iinfo(np.int64).max, aid)
    order = np.lexsort((rank, seq))
    s, r = seq[order], rank[order]
    last = np.ones(len(s), dtype=bool)
    last[:-1] = s[:-1] != s[1:]
    # each row's group (one seq) ends at its last row, which holds the group's highest rank
    ends = np.flatnonzero(last)
    latest = ends[np.searchsorted(ends, np.arange(len(s)))]  # each row's group's latest copy
    group_top = r[latest]
    nb, ch = n_blocks[order], chars[order]
    changed = (nb != nb[latest]) | (ch != ch[latest])
    later = (r < group_top) & ~live[order] & changed
    return {int(a) for a in np.unique(aid[order][later]).tolist()}


def events(
    history: pd.DataFrame,
    blob_tops: dict[int, int | None],
    audit_times: dict[int, int],
    rewritten: set[int] | frozenset[int] = frozenset(),
) -> pd.DataFrame:
    """Compaction, clear and repair events, in order.

    Parameters
    ----------
    history : the merged history frame.
    blob_tops : loop audit id -> the highest seq its blob holds (None when it holds none).
    audit_times : loop audit id -> its ``created_at`` in ms.
    rewritten : the loop audit ids of repairs (:func:`rewritten_blobs`).

    Returns one row per event: ``event`` (``compaction``/``clear``/``repair``), ``summary_seq``
    (compactions), ``boundary_seq`` (rows with a larger seq come after the event), ``audit_ids``
    (tuple), ``summary_lost`` (a compaction known only from its archive: its summary was
    discarded).
    """
    # Only the two columns needed: a boolean filter over the whole frame would gather every
    # text column's chunks too.
    summ = history.loc[(history["kind"] == "compaction_summary").to_numpy(bool), ["seq", "ord"]]
    summaries = sorted(
        zip(summ["seq"].astype("int64"), summ["ord"].tolist(), strict=True), key=lambda x: x[0]
    )
    present: list[int] = sorted_unique(history["seq"].to_numpy(dtype="int64")).tolist()
    high = present[-1] if present else 0
    attached, loose = _attach_archives(blob_tops, summaries, present)
    rows = []
    for s_seq, _ in summaries:
        rows.append(
            {
                "event": "compaction",
                "summary_seq": int(s_seq),
                "boundary_seq": int(s_seq) - 1,
                "audit_ids": tuple(attached.get(int(s_seq), [])),
                "summary_lost": False,
            }
        )
    # A repair rewrote the loop it archived: an event of its own, which sweeps nothing.
    for aid in loose:
        if aid in rewritten:
            rows.append(
                {
                    "event": "repair",
                    "summary_seq": None,
                    "boundary_seq": blob_tops[aid] or 0,
                    "audit_ids": (aid,),
                    "summary_lost": False,
                }
            )
    loose = [aid for aid in loose if aid not in rewritten]
    for g in _clear_groups(loose, audit_times):
        top = max((t for a in g if (t := blob_tops[a]) is not None), default=0)
        # The row right after the archived ones is missing: that is where a compaction's
        # summary stood before a later, unaudited compaction discarded it.
        lost = top > 0 and (top + 1) <= high and _count(present, top + 1, top + 2) == 0
        rows.append(
            {
                "event": "compaction" if lost else "clear",
                "summary_seq": None,
                "boundary_seq": top,
                "audit_ids": tuple(g),
                "summary_lost": lost,
            }
        )
    ev = pd.DataFrame(
        rows, columns=["event", "summary_seq", "boundary_seq", "audit_ids", "summary_lost"]
    )
    ev["summary_seq"] = ev["summary_seq"].astype("Int64")
    ev["boundary_seq"] = ev["boundary_seq"].astype("Int64")
    ev = ev.sort_values("boundary_seq", kind="stable").reset_index(drop=True)
    ev["event"] = ev["event"].astype("string")
    ev["summary_lost"] = ev["summary_lost"].astype(bool)
    return ev


def _attach_archives(
    blob_tops: dict[int, int | None], summaries: list[tuple[Any, Any]], present: list[int]
) -> tuple[dict[int, list[int]], list[int]]:
    """``(summary seq -> the loop audit ids archived by its compaction, the other loop audit
    ids)``: an archive belongs to the first summary after it when the rows between are its
    tail (``summaries``: ``(seq, ord)`` by seq)."""
    summary_seqs = [int(x[0]) for x in summaries]
    attached: dict[int, list[int]] = {}
    loose: list[int] = []
    for aid in sorted(blob_tops):
        top = blob_tops[aid]
        if top is None:
            loose.append(aid)
            continue
        i = bisect.bisect_right(summary_seqs, top)  # the first summary after the archive
        target = summaries[i] if i < len(summaries) else None
        if target is not None and _is_tail(top + 1, int(target[0]), target[1], present):
            attached.setdefault(int(target[0]), []).append(aid)
        else:
            loose.append(aid)
    return attached, loose


def _clear_groups(loose: list[int], audit_times: dict[int, int]) -> list[list[int]]:
    """Loose loop audit ids grouped into events: a model-initiated loop_clear writes two in
    quick succession (consecutive ids, within :data:`CLEAR_PAIR_MS`)."""
    groups: list[list[int]] = []
    for aid in loose:
        if (
            groups
            and aid - groups[-1][-1] == 1
            and abs(audit_times.get(aid, 0) - audit_times.get(groups[-1][-1], 0)) <= CLEAR_PAIR_MS
        ):
            groups[-1].append(aid)
        else:
            groups.append([aid])
    return groups


def _count(present: list[int], lo: int, hi: int) -> int:
    """How many of the sorted unique seqs ``present`` lie in ``lo..hi-1``."""
    return bisect.bisect_left(present, hi) - bisect.bisect_left(present, lo)


def _is_tail(lo: int, hi: int, s_ord: object, present: list[int]) -> bool:
    """True when every seq in ``lo..hi-1`` (between an archive and a summary) is present and
    is that summary's preserved tail (a row written after the summary's ``ord``)."""
    if hi <= lo:
        return True
    if _count(present, lo, hi) != hi - lo:
        return False
    if not isinstance(s_ord, int):  # no ord (None or NA): no preserved tail
        return False
    return lo > s_ord


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` by sorting (numpy's hash-based unique is several times slower on the
    nearly sorted seqs of a history)."""
    s = np.sort(values)
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    return s[keep]


def add_epochs(history: pd.DataFrame, ev: pd.DataFrame) -> pd.DataFrame:
    """``epoch`` = number of compactions and clears whose boundary lies before the row's seq
    (a repair empties no loop: it starts no epoch)."""
    emptied = (ev["event"] != "repair").to_numpy(dtype=bool)
    bounds = ev["boundary_seq"].to_numpy(dtype="int64")[emptied]
    history["epoch"] = epochs_of(history["seq"].to_numpy(dtype="int64"), bounds)
    return history


def epochs_of(seqs: np.ndarray, bounds: np.ndarray) -> pd.arrays.IntegerArray:
    """The ``epoch`` of rows with these seqs: how many of the events' ``bounds`` (boundary
    seqs, any order) lie before each seq."""
    return pd.array(np.searchsorted(np.sort(bounds), seqs, side="left"), dtype="Int64")


def gap_ranges(present: np.ndarray, high: int) -> tuple[list[int], list[int]]:
    """The seq ranges in ``1..high`` missing from ``present`` (seqs, any order): their first
    seqs and their last seqs, ascending (plain lists: no frame to make when there is none)."""
    have = sorted_unique(present)
    have = have[(have >= 1) & (have <= high)].tolist()
    starts, ends = [], []
    prev = 0
    for s in have:
        if s > prev + 1:
            starts.append(prev + 1)
            ends.append(s - 1)
        prev = s
    if high > prev:
        starts.append(prev + 1)
        ends.append(high)
    return starts, ends


def gaps_frame(starts: list[int], ends: list[int]) -> pd.DataFrame:
    """The :data:`schema.GAPS` frame of :func:`gap_ranges`."""
    df = pd.DataFrame(
        {"start_seq": pd.array(starts, dtype="Int64"), "end_seq": pd.array(ends, dtype="Int64")}
    )
    df["n_seqs"] = (df["end_seq"] - df["start_seq"] + 1).astype("Int64")
    return df


def reappended_copies(history: pd.DataFrame) -> dict[int, int]:
    """Rows a fallback (or pre-v28) compaction re-appended under new seqs: copy seq -> original.

    The one rule :meth:`AgentFile.usage`, :func:`adfkit._analysis.observe.observe` and
    :meth:`AgentFile.replay` (hence :meth:`compactions`, :meth:`composition`, :func:`simulate`)
    share, so they agree on which rows are copies (ADF_FORMAT.md §4.4, §5.5).

    The fallback path clears the whole loop, appends the summary under a new seq without
    ``ord``, then re-appends the preserved tail (at most :data:`REAPPENDED_TAIL` rows) under
    the next seqs; runtimes before v28 always did this. For every ``compaction_summary`` row
    ``S`` whose ``ord`` is null, with ``k`` = 2, then 1 (the first that matches wins):

    - the copies are the rows with seqs ``S+1 .. S+k``, all present and none a ``context``
      row;
    - the originals are the last ``k`` rows written before ``S`` (seq below ``S``, display
      order ``COALESCE(ord, seq), seq``) that are neither ``context`` rows nor summaries;
    - each pair matches on ``role``, content (``content`` parsed as JSON, else the raw text)
      and tokens (the six ``tokens_*`` columns): the first copy keeps its original's tokens
      exactly; a later copy has the original's tokens or none (the runtime drops them).

    A copy whose original is not in ``history`` (discarded by an unaudited compaction) is not
    in the result: it is then the only record of that row. Copies have fresh ``created_at``,
    which is not compared.

    Parameters
    ----------
    history : a frame with the columns of :meth:`AgentFile.history` (``seq``, ``ord``,
        ``kind``, ``role``, ``content``, ``tokens_*``), one row per seq, in any order; a
        :meth:`AgentFile.loop` frame works too.

    Returns
    -------
    dict mapping each copy's seq to its original's seq (both int); empty when there is none.

    Examples
    --------
    >>> import adfkit
    >>> from adfkit._core.history import reappended_copies
    >>> reappended_copies(adfkit.open_adf("sample_agents/legacy-v27.adf").history())
    {121: 118, 122: 119}
    """
    if not len(history):
        return {}
    kind = _labels(history["kind"])
    no_ord = history["ord"].isna().to_numpy(dtype=bool).tolist()
    if not any(k == "compaction_summary" and n for k, n in zip(kind, no_ord, strict=True)):
        return {}
    ordv = history["ord"].astype("Int64").to_numpy(dtype="int64", na_value=0).tolist()
    content = history["content"].array
    role = history["role"].array
    toks = [history[c].array for c in _TOKEN_COLS]
    # a few rows per summary are compared: their role, content and tokens read then only
    return reappended_pairs(
        history["seq"].to_numpy(dtype="int64").tolist(),
        [None if n else o for o, n in zip(ordv, no_ord, strict=True)],
        kind,
        _OnDemand(len(history), lambda i: _label(role[i])),
        _OnDemand(len(history), content.__getitem__),
        _OnDemand(len(history), lambda i: [_float(a[i]) for a in toks]),
    )


def _labels(col: pd.Series) -> list[str]:
    """A text column's values, "" where NA (a category column's read through its codes)."""
    if isinstance(col.dtype, pd.CategoricalDtype) and col.dtype.categories.dtype == "str":
        names = [*col.dtype.categories.tolist(), ""]  # code -1 (NA): ""
        return [names[c] for c in col.array.codes.tolist()]
    labels: list[str] = col.astype("string").fillna("").to_numpy(dtype=object).tolist()
    return labels


def _label(v: Any) -> str:
    return "" if pd.isna(v) else str(v)


def _float(v: Any) -> float:
    return np.nan if pd.isna(v) else float(v)


class _OnDemand(Sequence[Any]):
    """A column whose row ``i`` is made when it is read (``get(i)``), not all of them first."""

    def __init__(self, n: int, get: Callable[[int], Any]) -> None:
        self._n, self._get = n, get

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        return self._get(i)


def ranges(values: list[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1..3, 7"`` (sorted, unique).

    Examples
    --------
    >>> from adfkit._core.history import ranges
    >>> ranges([7, 1, 2, 3, 9, 10])
    '1..3, 7, 9..10'
    """
    out: list[str] = []
    vals = sorted(set(values))
    i = 0
    while i < len(vals):
        j = i
        while j + 1 < len(vals) and vals[j + 1] == vals[j] + 1:
            j += 1
        out.append(str(vals[i]) if i == j else f"{vals[i]}..{vals[j]}")
        i = j + 1
    return ", ".join(out)
