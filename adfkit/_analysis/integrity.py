"""Consistency checks of an agent's history: ``AgentFile.integrity()``.

The checks of the storage itself (audit blobs, their counters and ranges) come from the source
(:meth:`AgentSource.storage_report`; for ADF files :mod:`adfkit._sources.adf.checks`, which decodes
every blob once); the checks of the history are made here. The report is cached on the source.

Checks and severities
---------------------
Severity ``error``: the file contradicts itself (a counter or blob is wrong); ``warning``:
history is missing, duplicated or inconsistent in a way the runtime can produce but an
analyst must know about; ``info``: an expected runtime pattern worth seeing.

============================  ========  ==========  ============================================
check                         severity  ``table``   ``rows`` hold / meaning
============================  ========  ==========  ============================================
``blob_undecodable``          error     adf_audit   audit ids: not Brotli, UTF-8 or JSON
``blob_too_large``            warning   adf_audit   audit ids: past ``max_blob_bytes``, unchecked
``blob_wrong_shape``          error     adf_audit   audit ids: array/object does not fit source
``entry_count_mismatch``      error     adf_audit   audit ids: ``entry_count`` != elements
``size_bytes_mismatch``       error     adf_audit   audit ids: ``size_bytes`` != JS length of
                                                    the JSON text
``audit_range_mismatch``      warning   adf_audit   audit ids: ``start_seq``/``end_seq`` != the
                                                    blob's min/max seq (info: not recorded)
``audit_range_duplicate``     warning   adf_audit   audit id pairs with the same seq range
``audit_range_overlap``       warning   adf_audit   audit id pairs whose ranges overlap and whose
                                                    blobs share seqs; **info** when they share
                                                    none (the two blobs of a model-initiated
                                                    ``loop_clear``, §6)
``duplicate_seqs``            warning   adf_loop    seqs stored more than once (archived twice,
                                                    or archived and live): repair snapshots
``lost_seqs``                 warning   adf_loop    seqs in neither the live loop nor any blob
``loop_audit_off``            warning   adf_config  (none): compactions discard history now
``audited_marker_unmatched``  warning   adf_loop    summaries saying ``[Loop Compacted,
                                                    audited]`` with no ``loop`` audit row
``tool_use_without_result``   warning   adf_loop    call seqs (info: the latest row, running;
                                                    a provider-run tool never has a result)
``tool_result_without_call``  warning   adf_loop    result seqs (info: right after lost seqs)
``created_at_out_of_order``   warning   adf_loop    seqs stamped earlier than the seq before
                                                    (info where records are stamped with the
                                                    time of their event: Claude Code)
``created_at_missing``        info      adf_loop    seqs with ``created_at = 0`` (legacy rows)
``malformed_rows``            warning   adf_loop    seqs with unreadable content_json/tokens
============================  ========  ==========  ============================================
"""

from __future__ import annotations

import bisect
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd

from adfkit import schema
from adfkit._analysis.tables import call_index, tool_calls
from adfkit._base.collector import gc_paused
from adfkit._core import registry
from adfkit._core.history import ranges
from adfkit._core.source import AgentSource, Key

_INTEGRITY: Key[pd.DataFrame] = Key("integrity")

SEVERITIES = ("info", "warning", "error")
CHECK_ORDER = (
    "blob_undecodable",
    "blob_too_large",
    "blob_wrong_shape",
    "entry_count_mismatch",
    "size_bytes_mismatch",
    "audit_range_mismatch",
    "audit_range_duplicate",
    "audit_range_overlap",
    "duplicate_seqs",
    "lost_seqs",
    "loop_audit_off",
    "audited_marker_unmatched",
    "tool_use_without_result",
    "tool_result_without_call",
    "created_at_out_of_order",
    "created_at_missing",
    "malformed_rows",
)


#: Lost seqs listed one by one in ``integrity()`` (a tuple per range); beyond this many in all,
#: each ``lost_seqs`` row holds a ``range``.
LISTED_LOST = 1_000_000


class _Range:
    """A range of seqs to report as it is (not expanded to a tuple)."""

    def __init__(self, r: range) -> None:
        self.range = r


class _Report:
    """The findings of one source; ``history_table`` is what a finding about a row of its
    history names, in its format's words (an ADF file's ``adf_loop``, a transcript's
    ``transcript``: :class:`adfkit._core.registry.Words`)."""

    def __init__(self, history_table: str) -> None:
        self.rows: list[dict[str, Any]] = []
        self.history_table = history_table

    def add(self, check: str, severity: str, table: str, rows: Any, detail: str) -> None:
        self.rows.append(
            {
                "check": check,
                "severity": severity,
                "table": table,
                "rows": rows.range if isinstance(rows, _Range) else tuple(int(r) for r in rows),
                "detail": detail,
            }
        )

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(self.rows, columns=list(schema.INTEGRITY))
        if len(df):
            df["_s"] = df["severity"].map({s: -i for i, s in enumerate(SEVERITIES)})
            df["_c"] = df["check"].map({c: i for i, c in enumerate(CHECK_ORDER)})
            df["_r"] = [r[0] if r else -1 for r in df["rows"]]
            df = df.sort_values(["_s", "_c", "_r"], kind="stable").drop(columns=["_s", "_c", "_r"])
        df = df.reset_index(drop=True)
        df["check"] = df["check"].astype("string")
        df["severity"] = pd.Categorical(df["severity"], categories=list(SEVERITIES), ordered=True)
        df["table"] = df["table"].astype("string")
        df["detail"] = df["detail"].astype("string")
        df["rows"] = df["rows"].astype(object)
        return df


def integrity(src: AgentSource) -> pd.DataFrame:
    """Consistency checks of one agent file. One row per finding, worst severity first.

    The checks and their severities are tabulated in the docstring of
    ``adfkit._analysis.integrity``; in short, ``error`` = the file contradicts itself (undecodable
    blob, wrong ``entry_count``/``size_bytes``), ``warning`` = history lost, duplicated or
    inconsistent, ``info`` = an expected runtime pattern (e.g. the overlapping ranges of a
    model-initiated ``loop_clear``). A clean file gives an empty frame with the columns.

    Returns
    -------
    DataFrame with columns ``check`` (string), ``severity`` (ordered category info < warning
    < error), ``table`` (string: where the finding is, in the format's words: an ADF file's
    ``adf_audit`` / ``adf_loop`` / ``adf_config``, a transcript's ``transcript``, an OpenHands
    conversation's ``events``), ``rows`` (object: tuple of ints, audit ids for ``adf_audit``,
    seqs for a finding about history rows; when more
    than :data:`LISTED_LOST` seqs are lost in all, each ``lost_seqs`` row holds a ``range`` of
    its seqs instead, so a seq far beyond the rows costs no memory), ``detail``
    (string).

    Examples
    --------
    >>> import adfkit
    >>> r = adfkit.open_adf("sample_agents/forgetful.adf").integrity()
    >>> r[["check", "severity"]].drop_duplicates().values.tolist()
    [['lost_seqs', 'warning'], ['loop_audit_off', 'warning']]
    """
    return src.memo.get(_INTEGRITY, lambda: _integrity(src)).copy(deep=False)


def _integrity(src: AgentSource) -> pd.DataFrame:
    rep = _Report(registry.words(src.format).history_table)
    with warnings.catch_warnings(), gc_paused():  # every blob parsed: many acyclic objects
        warnings.simplefilter("ignore")  # every problem becomes a row instead
        storage = src.storage_report()
        for f in storage.findings:
            rep.add(f.check, f.severity, f.table, f.rows, f.detail)
        _check_history(src, rep, storage.unreadable)
    return rep.frame()


def _check_history(src: AgentSource, rep: _Report, bad_ranges: dict[int, tuple[int, int]]) -> None:
    """The checks of the history itself, in the order of their rows: copies, lost seqs, the
    audit settings and markers, tool calls and results, times, malformed rows."""
    h = src.history()
    by_seq = h.sort_values("seq", kind="stable")
    _check_copies(src, rep, by_seq)
    lost = _check_lost(src, rep, bad_ranges)
    _check_audit(src, rep, h)
    _check_tool_pairs(src, rep, h, lost)
    _check_times(src, rep, by_seq)
    _check_malformed(rep, h)


def _check_copies(src: AgentSource, rep: _Report, by_seq: pd.DataFrame) -> None:
    """Seqs held more than once: explained by a repair (info) or not (warning)."""
    dup = by_seq.loc[by_seq["copies"].fillna(1) > 1, "seq"].astype(int).tolist()
    if dup:
        ev = src.events()
        repairs = ev[ev["event"] == "repair"]
        repaired = {int(a) for ids in repairs["audit_ids"] for a in ids}
        origin = dict(zip(by_seq["seq"].tolist(), by_seq["audit_id"].tolist(), strict=True))
        explained = bool(repaired) and all(origin.get(q) in repaired for q in dup)
        if explained:
            rep.add(
                "duplicate_seqs",
                "info",
                rep.history_table,
                dup,
                f"{len(dup)} seq(s) stored twice by the provider-compatibility repair (audit "
                f"row(s) {ranges(sorted(repaired))}): the loop was archived, its tool blocks "
                f"stripped and the survivors written back under their old seqs: {ranges(dup)}; "
                "history() keeps the original (archived) copy",
            )
        else:
            rep.add(
                "duplicate_seqs",
                "warning",
                rep.history_table,
                dup,
                f"{len(dup)} seq(s) stored more than once (archived twice, or archived and still "
                f"live: a repair snapshot or fallback compaction): {ranges(dup)}; history() keeps "
                "the oldest copy, the reference analyzer counts every copy",
            )


def _check_lost(
    src: AgentSource, rep: _Report, bad_ranges: dict[int, tuple[int, int]]
) -> Callable[[int], bool]:
    """One ``lost_seqs`` row per seq range lost (naming the undecodable archives that may hold
    it); returns whether a seq is lost."""
    # Lost seq ranges: kept as ranges, never one object per lost seq.
    gaps = src.history_gaps()
    lost_lo = [int(x) for x in gaps["start_seq"]]
    lost_hi = [int(x) for x in gaps["end_seq"]]
    # the seqs of each range as a tuple, like every other finding; past LISTED_LOST seqs in all
    # (a hostile seq or counter far beyond the rows) as a range object, the same seqs lazily
    listed = sum(hi - lo + 1 for lo, hi in zip(lost_lo, lost_hi, strict=True)) <= LISTED_LOST
    for lo, hi, n in zip(lost_lo, lost_hi, gaps["n_seqs"], strict=True):
        cover = [aid for aid, (s, e) in bad_ranges.items() if s <= hi and e >= lo]
        detail = (
            f"seq {lo}..{hi} ({int(n)} row(s)) deleted and archived nowhere: not in the live loop "
            "or any decodable audit blob"
        )
        if cover:
            detail += f" (undecodable audit row(s) {', '.join(map(str, cover))} may hold them)"
        rows = range(lo, hi + 1)
        rep.add("lost_seqs", "warning", rep.history_table, rows if listed else _Range(rows), detail)

    def lost(q: int) -> bool:
        i = bisect.bisect_right(lost_lo, q) - 1  # the last range starting at or before q
        return i >= 0 and q <= lost_hi[i]

    return lost


def _check_audit(src: AgentSource, rep: _Report, h: pd.DataFrame) -> None:
    """Loop audit switched off (where the record says so, not where it has no such switch),
    and summaries marked audited without an audit row."""
    if src.settings().audit.get("loop") is False:
        rep.add(
            "loop_audit_off",
            "warning",
            "adf_config",
            [],
            "loop audit is off (context.audit.loop, else audit.loop): the next compaction or "
            "clear discards the rows it removes",
        )

    # Summaries marked audited without an audit row.
    ev = src.events()
    attached = {
        int(s): tuple(ids)
        for s, ids in zip(ev["summary_seq"], ev["audit_ids"], strict=True)
        if not pd.isna(s)
    }
    marked = h.loc[(h["kind"] == "compaction_summary") & (h["subkind"] == "audited"), "seq"]
    unmatched = [int(s) for s in marked if not attached.get(int(s))]
    if unmatched:
        rep.add(
            "audited_marker_unmatched",
            "warning",
            rep.history_table,
            unmatched,
            f"summary row(s) {ranges(unmatched)} say [Loop Compacted, audited] but no loop audit "
            "row holds the rows they replaced (the marker follows the config, the audit may not)",
        )


def _check_tool_pairs(
    src: AgentSource, rep: _Report, h: pd.DataFrame, lost: Callable[[int], bool]
) -> None:
    """Tool calls without results (the latest row's may still be running), results without
    calls (right after lost rows, the call was most likely among them)."""
    calls = tool_calls(src, history=True)
    last_seq = int(h["seq"].iloc[-1]) if len(h) else None
    open_calls = calls[~calls["matched"] & ~calls["tool_name"].isin(src.provider_tools)]
    if len(open_calls):
        cs = open_calls["call_seq"].astype(int).tolist()
        running = [s for s in cs if s == last_seq]
        rest = [s for s in cs if s != last_seq]
        if rest:
            ids = open_calls.loc[open_calls["call_seq"].isin(rest), "tool_use_id"].tolist()
            rep.add(
                "tool_use_without_result",
                "warning",
                rep.history_table,
                sorted(set(rest)),
                f"{len(rest)} tool call(s) in seq {ranges(rest)} have no tool_result "
                f"(tool_use ids {', '.join(map(str, ids[:5]))}{' ...' if len(ids) > 5 else ''})",
            )
        if running:
            rep.add(
                "tool_use_without_result",
                "info",
                rep.history_table,
                running,
                f"the latest row (seq {running[0]}) has {len(running)} tool call(s) without "
                "result: the tools may still be running",
            )
    ix = call_index(src)  # the calls' and results' ids, not the blocks frame
    kinds = zip(ix.type, ix.tool_use_id, strict=True)
    known_ids = {i for t, i in kinds if t == "tool_use"} - {None}
    orphan = {
        q
        for q, t, i in zip(ix.seq, ix.type, ix.tool_use_id, strict=True)
        if t == "tool_result" and i not in known_ids
    }
    if orphan:
        os_ = sorted(orphan)
        # Right after lost rows, the call was most likely among them.
        after_lost = [s for s in os_ if lost(s - 1)]
        other = [s for s in os_ if s not in after_lost]
        if other:
            rep.add(
                "tool_result_without_call",
                "warning",
                rep.history_table,
                other,
                f"tool_result row(s) {ranges(other)} answer no tool_use found in the history",
            )
        if after_lost:
            rep.add(
                "tool_result_without_call",
                "info",
                rep.history_table,
                after_lost,
                f"tool_result row(s) {ranges(after_lost)} answer calls that were in the lost "
                "rows just before them",
            )


def _check_times(src: AgentSource, rep: _Report, by_seq: pd.DataFrame) -> None:
    """Time order by seq (rows are stamped when appended, where the format does), and rows
    without a time."""
    seqs = by_seq["seq"].to_numpy(dtype="int64")
    ms = by_seq["created_at"]
    known = ms.notna().to_numpy()
    t = ms.to_numpy(dtype="datetime64[ms]").astype("int64")  # ms since the epoch, floored
    tk, sk = t[known], seqs[known]
    back = sk[1:][tk[1:] < tk[:-1]].tolist() if len(tk) > 1 else []
    if back:
        why = (
            "(clock change, or rows written out of order)"
            if src.stamped_on_append
            else "(records stamped with the time of their event, as this format writes them)"
        )
        rep.add(
            "created_at_out_of_order",
            "warning" if src.stamped_on_append else "info",
            rep.history_table,
            back,
            f"{len(back)} row(s) stamped earlier than the seq before them: {ranges(back)} {why}",
        )
    missing = seqs[~known].tolist()
    if missing:
        rep.add(
            "created_at_missing",
            "info",
            rep.history_table,
            missing,
            f"{len(missing)} row(s) have created_at = 0 (written before the column existed): "
            f"{ranges(missing)}",
        )


def _check_malformed(rep: _Report, h: pd.DataFrame) -> None:
    """Rows whose content or tokens could not be read."""
    bad = h.loc[h["malformed"], "seq"].astype(int).tolist()
    if bad:
        rep.add(
            "malformed_rows",
            "warning",
            rep.history_table,
            bad,
            f"{len(bad)} row(s) with unreadable content_json or tokens: {ranges(bad)}",
        )
