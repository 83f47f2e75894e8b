"""Consistency checks of an agent file's history: ``AgentFile.integrity()``.

Every audit blob is decompressed and parsed exactly once here: the raw text is needed for
``size_bytes`` (the JS length of the JSON text as stored), the parsed value for the shape and
``entry_count``. The report is cached on the handle. (The rows themselves come from
``history()``, which streams the loop blobs through its own decoder.)

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
``tool_use_without_result``   warning   adf_loop    call seqs (info: the latest row, running)
``tool_result_without_call``  warning   adf_loop    result seqs (info: right after lost seqs)
``created_at_out_of_order``   warning   adf_loop    seqs stamped earlier than the seq before
``created_at_missing``        info      adf_loop    seqs with ``created_at = 0`` (legacy rows)
``malformed_rows``            warning   adf_loop    seqs with unreadable content_json/tokens
============================  ========  ==========  ============================================
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd

from . import _audit
from ._errors import BlobError, BlobTooLargeError

if TYPE_CHECKING:
    from ._agent import AgentFile

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
#: Columns of the report and their dtypes.
INTEGRITY_COLUMNS: dict[str, str] = {
    "check": "string",
    "severity": "category",
    "table": "string",
    "rows": "object",
    "detail": "string",
}
#: Two audit rows of one model-initiated ``loop_clear`` are written within this many ms.
CLEAR_PAIR_MS = 5_000


def ranges(values: list[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1..3, 7"`` (sorted, unique).

    Examples
    --------
    >>> from adfkit._integrity import ranges
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


def _shape_problem(value: Any, source: str) -> str | None:
    if source in _audit.ARRAY_SOURCES and not isinstance(value, list):
        return f"source {source!r} should decode to a JSON array, got {type(value).__name__}"
    if source in _audit.OBJECT_SOURCES and not isinstance(value, dict):
        return f"source {source!r} should decode to a JSON object, got {type(value).__name__}"
    if source == "loop":
        for i, el in enumerate(value):
            if not isinstance(el, dict) or not isinstance(el.get("seq"), int):
                return f"element {i} of the loop blob is not a row with an integer seq"
    return None


class _Report:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, check: str, severity: str, table: str, rows: Any, detail: str) -> None:
        self.rows.append(
            {
                "check": check,
                "severity": severity,
                "table": table,
                "rows": tuple(int(r) for r in rows),
                "detail": detail,
            }
        )

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(self.rows, columns=list(INTEGRITY_COLUMNS))
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


def integrity(agent: AgentFile) -> pd.DataFrame:
    """Consistency checks of one agent file. One row per finding, worst severity first.

    The checks and their severities are tabulated in the docstring of
    ``adfkit._integrity``; in short, ``error`` = the file contradicts itself (undecodable
    blob, wrong ``entry_count``/``size_bytes``), ``warning`` = history lost, duplicated or
    inconsistent, ``info`` = an expected runtime pattern (e.g. the overlapping ranges of a
    model-initiated ``loop_clear``). A clean file gives an empty frame with the columns.

    Returns
    -------
    DataFrame with columns ``check`` (string), ``severity`` (ordered category info < warning
    < error), ``table`` (string: ``adf_audit`` / ``adf_loop`` / ``adf_config``), ``rows``
    (object: tuple of ints, audit ids for ``adf_audit``, seqs for ``adf_loop``), ``detail``
    (string).

    Examples
    --------
    >>> import adfkit
    >>> r = adfkit.open_adf("sample_agents/forgetful.adf").integrity()
    >>> r[["check", "severity"]].drop_duplicates().values.tolist()
    [['lost_seqs', 'warning'], ['loop_audit_off', 'warning']]
    """
    if "integrity" in agent._cache:
        return agent._cache["integrity"].copy(deep=False)
    rep = _Report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # every problem becomes a row instead
        blob_seqs, bad_ranges = _check_blobs(agent, rep)
        _check_ranges(agent, rep, blob_seqs)
        _check_history(agent, rep, bad_ranges)
    df = rep.frame()
    agent._cache["integrity"] = df
    return df.copy(deep=False)


def _check_blobs(
    agent: AgentFile, rep: _Report
) -> tuple[dict[int, list[int]], dict[int, tuple[int, int]]]:
    """Decode every audit blob once: decoding, shape, counters, ranges. Returns
    ``(loop audit id -> seqs held, undecodable loop audit id -> recorded range)``."""
    a = agent.audit()
    blob_seqs: dict[int, list[int]] = {}
    bad_ranges: dict[int, tuple[int, int]] = {}
    for aid, source, start, end, count, size in zip(
        a["id"].astype(int),
        a["source"].astype(str),
        a["start_seq"],
        a["end_seq"],
        a["entry_count"],
        a["size_bytes"],
        strict=True,
    ):
        aid = int(aid)
        where = f"audit row {aid} ({source})"
        _, data = agent._blob(aid)
        try:
            raw = _audit.decompress(data, limit=agent.max_blob_bytes, path=agent.path, audit_id=aid)
        except BlobTooLargeError as exc:
            rep.add("blob_too_large", "warning", "adf_audit", [aid], f"{where}: {exc.detail}")
            continue
        except BlobError as exc:
            rep.add("blob_undecodable", "error", "adf_audit", [aid], f"{where}: {exc.detail}")
            if source == "loop" and not (pd.isna(start) or pd.isna(end)):
                bad_ranges[aid] = (int(start), int(end))
            continue
        try:
            text = raw.decode("utf-8")
            value = orjson.loads(raw)
        except (UnicodeDecodeError, orjson.JSONDecodeError) as exc:
            kind = "UTF-8" if isinstance(exc, UnicodeDecodeError) else "JSON"
            rep.add(
                "blob_undecodable",
                "error",
                "adf_audit",
                [aid],
                f"{where}: decompressed data is not valid {kind}",
            )
            if source == "loop" and not (pd.isna(start) or pd.isna(end)):
                bad_ranges[aid] = (int(start), int(end))
            continue
        problem = _shape_problem(value, source)
        if problem:
            rep.add("blob_wrong_shape", "error", "adf_audit", [aid], f"{where}: {problem}")
            if source == "loop" and not (pd.isna(start) or pd.isna(end)):
                bad_ranges[aid] = (int(start), int(end))
            continue
        n = len(value) if isinstance(value, list) else 1
        if pd.isna(count) or int(count) != n:
            rep.add(
                "entry_count_mismatch",
                "error",
                "adf_audit",
                [aid],
                f"{where}: entry_count is {count} but the blob holds {n} "
                + ("elements" if isinstance(value, list) else "object"),
            )
        js = _audit.js_length(text)
        if pd.isna(size) or int(size) != js:
            rep.add(
                "size_bytes_mismatch",
                "error",
                "adf_audit",
                [aid],
                f"{where}: size_bytes is {size} but the JSON text is {js:,} UTF-16 code units "
                f"({len(raw):,} UTF-8 bytes)",
            )
        if source != "loop":
            continue
        seqs = [int(el["seq"]) for el in value]
        blob_seqs[aid] = seqs
        if agent._src.has("adf_audit", "start_seq") and seqs:
            lo, hi = min(seqs), max(seqs)
            if pd.isna(start) or pd.isna(end):
                rep.add(
                    "audit_range_mismatch",
                    "info",
                    "adf_audit",
                    [aid],
                    f"{where}: start_seq/end_seq not recorded (blob holds seqs {lo}..{hi})",
                )
            elif (int(start), int(end)) != (lo, hi):
                rep.add(
                    "audit_range_mismatch",
                    "warning",
                    "adf_audit",
                    [aid],
                    f"{where}: recorded range {int(start)}..{int(end)} but the blob's seqs run "
                    f"{lo}..{hi}",
                )
    return blob_seqs, bad_ranges


def _check_ranges(agent: AgentFile, rep: _Report, blob_seqs: dict[int, list[int]]) -> None:
    """Overlapping and duplicated seq ranges among ``loop`` audit rows."""
    a = agent.audit()
    a = a[a["source"].astype(str) == "loop"]
    times = {
        int(i): (int(t.value // 1_000_000) if not pd.isna(t) else 0)
        for i, t in zip(a["id"], a["created_at"], strict=True)
    }
    spans: list[tuple[int, int, int]] = []
    for aid, lo, hi in zip(a["id"].astype(int), a["start_seq"], a["end_seq"], strict=True):
        aid = int(aid)
        if aid in blob_seqs and blob_seqs[aid]:
            lo2, hi2 = min(blob_seqs[aid]), max(blob_seqs[aid])
        elif not (pd.isna(lo) or pd.isna(hi)):
            lo2, hi2 = int(lo), int(hi)
        else:
            continue
        spans.append((lo2, hi2, aid))
    spans.sort()
    for i, (lo1, hi1, a1) in enumerate(spans):
        for lo2, hi2, a2 in spans[i + 1 :]:
            if lo2 > hi1:
                break
            x, y = sorted((a1, a2))
            pair = f"audit rows {x} ({lo1 if x == a1 else lo2}..{hi1 if x == a1 else hi2}) and {y} "
            pair += f"({lo2 if y == a2 else lo1}..{hi2 if y == a2 else hi1})"
            known = x in blob_seqs and y in blob_seqs
            shared = sorted(set(blob_seqs.get(x, [])) & set(blob_seqs.get(y, [])))
            if (lo1, hi1) == (lo2, hi2):
                rep.add(
                    "audit_range_duplicate",
                    "warning",
                    "adf_audit",
                    [x, y],
                    f"{pair} have the same seq range"
                    + (f"; {len(shared)} seq(s) archived twice" if shared else ""),
                )
            elif known and not shared:
                clear_pair = y - x == 1 and abs(times.get(x, 0) - times.get(y, 0)) <= CLEAR_PAIR_MS
                rep.add(
                    "audit_range_overlap",
                    "info",
                    "adf_audit",
                    [x, y],
                    f"{pair} overlap but share no seq"
                    + (
                        ": the expected two blobs of a model-initiated loop_clear (slice, then the "
                        "rest)"
                        if clear_pair
                        else " (interleaved ranges: never infer membership from the range)"
                    ),
                )
            else:
                rep.add(
                    "audit_range_overlap",
                    "warning",
                    "adf_audit",
                    [x, y],
                    f"{pair} overlap"
                    + (
                        f" and both hold seq(s) {ranges(shared)}: the reference analyzer counts "
                        "them twice"
                        if shared
                        else " (a blob could not be decoded to check for shared seqs)"
                    ),
                )


def _check_history(agent: AgentFile, rep: _Report, bad_ranges: dict[int, tuple[int, int]]) -> None:
    h = agent.history()
    by_seq = h.sort_values("seq", kind="stable")
    seqs = by_seq["seq"].to_numpy(dtype="int64")

    # Seqs held more than once.
    dup = by_seq.loc[by_seq["copies"].fillna(1) > 1, "seq"].astype(int).tolist()
    if dup:
        rep.add(
            "duplicate_seqs",
            "warning",
            "adf_loop",
            dup,
            f"{len(dup)} seq(s) stored more than once (archived twice, or archived and still "
            f"live: a repair snapshot or fallback compaction): {ranges(dup)}; history() keeps "
            "the oldest copy, the reference analyzer counts every copy",
        )

    # Lost seq ranges.
    gaps = agent.history_gaps()
    lost: set[int] = set()
    for lo, hi, n in zip(gaps["start_seq"], gaps["end_seq"], gaps["n_seqs"], strict=True):
        lo, hi = int(lo), int(hi)
        lost.update(range(lo, hi + 1))
        cover = [aid for aid, (s, e) in bad_ranges.items() if s <= hi and e >= lo]
        detail = (
            f"seq {lo}..{hi} ({int(n)} row(s)) deleted and archived nowhere: not in the live loop "
            "or any decodable audit blob"
        )
        if cover:
            detail += f" (undecodable audit row(s) {', '.join(map(str, cover))} may hold them)"
        rep.add("lost_seqs", "warning", "adf_loop", range(lo, hi + 1), detail)

    # Loop audit switched off.
    if not agent.audit_settings()["loop"]:
        rep.add(
            "loop_audit_off",
            "warning",
            "adf_config",
            [],
            "loop audit is off (context.audit.loop, else audit.loop): the next compaction or "
            "clear discards the rows it removes",
        )

    # Summaries marked audited without an audit row.
    ev = agent.events()
    attached = {
        int(s): tuple(ids)
        for s, ids in zip(ev["summary_seq"], ev["audit_ids"], strict=True)
        if not pd.isna(s)
    }
    marked = h[(h["kind"] == "compaction_summary") & (h["subkind"] == "audited")]
    unmatched = [int(s) for s in marked["seq"] if not attached.get(int(s))]
    if unmatched:
        rep.add(
            "audited_marker_unmatched",
            "warning",
            "adf_loop",
            unmatched,
            f"summary row(s) {ranges(unmatched)} say [Loop Compacted, audited] but no loop audit "
            "row holds the rows they replaced (the marker follows the config, the audit may not)",
        )

    # Tool calls without results, results without calls.
    calls = agent.tool_calls(history=True)
    last_seq = int(h["seq"].iloc[-1]) if len(h) else None
    open_calls = calls[~calls["matched"]]
    if len(open_calls):
        cs = open_calls["call_seq"].astype(int).tolist()
        running = [s for s in cs if s == last_seq]
        rest = [s for s in cs if s != last_seq]
        if rest:
            ids = open_calls.loc[open_calls["call_seq"].isin(rest), "tool_use_id"].tolist()
            rep.add(
                "tool_use_without_result",
                "warning",
                "adf_loop",
                sorted(set(rest)),
                f"{len(rest)} tool call(s) in seq {ranges(rest)} have no tool_result "
                f"(tool_use ids {', '.join(map(str, ids[:5]))}{' ...' if len(ids) > 5 else ''})",
            )
        if running:
            rep.add(
                "tool_use_without_result",
                "info",
                "adf_loop",
                running,
                f"the latest row (seq {running[0]}) has {len(running)} tool call(s) without "
                "result: the tools may still be running",
            )
    blocks = agent.blocks(history=True)
    res = blocks[blocks["type"] == "tool_result"]
    known_ids = set(blocks.loc[blocks["type"] == "tool_use", "tool_use_id"].dropna())
    orphan = res[~res["tool_use_id"].isin(known_ids)]
    if len(orphan):
        os_ = sorted(set(orphan["seq"].astype(int)))
        # Right after lost rows, the call was most likely among them.
        after_lost = [s for s in os_ if (s - 1) in lost]
        other = [s for s in os_ if s not in after_lost]
        if other:
            rep.add(
                "tool_result_without_call",
                "warning",
                "adf_loop",
                other,
                f"tool_result row(s) {ranges(other)} answer no tool_use found in the history",
            )
        if after_lost:
            rep.add(
                "tool_result_without_call",
                "info",
                "adf_loop",
                after_lost,
                f"tool_result row(s) {ranges(after_lost)} answer calls that were in the lost "
                "rows just before them",
            )

    # Time order (by seq: rows are stamped when appended).
    ms = by_seq["created_at"]
    known = ms.notna().to_numpy()
    t = np.array([int(x.value // 1_000_000) if not pd.isna(x) else -1 for x in ms], dtype="int64")
    tk, sk = t[known], seqs[known]
    back = sk[1:][tk[1:] < tk[:-1]].tolist() if len(tk) > 1 else []
    if back:
        rep.add(
            "created_at_out_of_order",
            "warning",
            "adf_loop",
            back,
            f"{len(back)} row(s) stamped earlier than the seq before them: {ranges(back)} "
            "(clock change, or rows written out of order)",
        )
    missing = seqs[~known].tolist()
    if missing:
        rep.add(
            "created_at_missing",
            "info",
            "adf_loop",
            missing,
            f"{len(missing)} row(s) have created_at = 0 (written before the column existed): "
            f"{ranges(missing)}",
        )

    bad = h.loc[h["malformed"], "seq"].astype(int).tolist()
    if bad:
        rep.add(
            "malformed_rows",
            "warning",
            "adf_loop",
            bad,
            f"{len(bad)} row(s) with unreadable content_json or tokens: {ranges(bad)}",
        )
