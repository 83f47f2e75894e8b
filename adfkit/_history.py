"""Lifetime history: live loop + audited loop rows, deduplicated by seq; events; epochs; gaps.

Works on the rows a :class:`adfkit._frames.RowBuilder` holds (every blob plus the live loop):
:func:`history_rows` picks one copy per seq and orders them by ``COALESCE(ord, seq), seq``
(the rule :meth:`RowBuilder.frame <adfkit._frames.RowBuilder.frame>` and
:func:`adfkit._frames.sort_display` apply too); :func:`events`, :func:`add_epochs` and
:func:`gaps` work on the resulting frame.
"""

from __future__ import annotations

import bisect

import numpy as np
import pandas as pd

from ._frames import RowBuilder

#: Two audit rows of one model-initiated ``loop_clear`` are written within this many ms.
CLEAR_PAIR_MS = 5_000


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


def events(
    history: pd.DataFrame, blob_seqs: dict[int, list[int]], audit_times: dict[int, int]
) -> pd.DataFrame:
    """Compaction and clear events, in order.

    Parameters
    ----------
    history : the merged history frame.
    blob_seqs : loop audit id -> every seq its blob holds.
    audit_times : loop audit id -> its ``created_at`` in ms.

    Returns one row per event: ``event`` (``compaction``/``clear``), ``summary_seq`` (compactions),
    ``boundary_seq`` (rows with a larger seq come after the event), ``audit_ids`` (tuple),
    ``summary_lost`` (a compaction known only from its archive: its summary was discarded).
    """
    # Only the two columns needed: a boolean filter over the whole frame would gather every
    # text column's chunks too.
    summ = history.loc[(history["kind"] == "compaction_summary").to_numpy(bool), ["seq", "ord"]]
    summaries = sorted(
        zip(summ["seq"].astype("int64"), summ["ord"].tolist(), strict=True), key=lambda x: x[0]
    )
    summary_seqs = [int(x[0]) for x in summaries]
    seqs_present = set(history["seq"].astype("int64").tolist())
    attached: dict[int, list[int]] = {}
    loose: list[int] = []
    for aid in sorted(blob_seqs):
        seqs = blob_seqs[aid]
        if not seqs:
            loose.append(aid)
            continue
        top = max(seqs)
        i = bisect.bisect_right(summary_seqs, top)  # the first summary after the archive
        target = summaries[i] if i < len(summaries) else None
        if target is not None and _is_tail(range(top + 1, target[0]), target[1], seqs_present):
            attached.setdefault(int(target[0]), []).append(aid)
        else:
            loose.append(aid)
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
    # Group loose rows: a model-initiated loop_clear writes two in quick succession.
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
    for g in groups:
        top = max((max(blob_seqs[a]) for a in g if blob_seqs[a]), default=0)
        # The row right after the archived ones is missing: that is where a compaction's
        # summary stood before a later, unaudited compaction discarded it.
        high = max(seqs_present, default=0)
        lost = top > 0 and (top + 1) not in seqs_present and (top + 1) <= high
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


def _is_tail(between: range, s_ord: object, present: set[int]) -> bool:
    """True when every seq between an archive and a summary is that summary's preserved tail."""
    if any(q not in present for q in between):
        return False
    if s_ord is None or s_ord is pd.NA:
        return len(between) == 0
    return all(q > int(s_ord) for q in between)  # type: ignore[call-overload]


def add_epochs(history: pd.DataFrame, ev: pd.DataFrame) -> pd.DataFrame:
    """``epoch`` = number of events whose boundary lies before the row's seq."""
    bounds = np.sort(ev["boundary_seq"].to_numpy(dtype="int64"))
    seqs = history["seq"].to_numpy(dtype="int64")
    history["epoch"] = pd.array(np.searchsorted(bounds, seqs, side="left"), dtype="Int64")
    return history


def gaps(present: pd.Series, high: int) -> pd.DataFrame:
    """Seq ranges in ``1..high`` missing from ``present``."""
    have = np.unique(present.to_numpy(dtype="int64"))
    have = have[(have >= 1) & (have <= high)]
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
    df = pd.DataFrame(
        {"start_seq": pd.array(starts, dtype="Int64"), "end_seq": pd.array(ends, dtype="Int64")}
    )
    df["n_seqs"] = (df["end_seq"] - df["start_seq"] + 1).astype("Int64")
    return df
