"""Storage checks of an ADF file: every audit blob decoded once, its counters and ranges.

The part of ``integrity()`` that only the ADF reader can do (it needs the stored bytes and the
``adf_audit`` columns); the report's other checks run over the history, in
:mod:`adfkit._analysis.integrity`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from adfkit._base.errors import BlobError, BlobTooLargeError
from adfkit._base.js import JSONError, js_length, parse_json
from adfkit._core import blobs as _blobs
from adfkit._core.history import CLEAR_PAIR_MS, ranges
from adfkit._core.source import Finding, StorageReport


class _Findings:
    def __init__(self) -> None:
        self.items: list[Finding] = []

    def add(self, check: str, severity: str, table: str, rows: Any, detail: str) -> None:
        self.items.append(Finding(check, severity, table, tuple(int(r) for r in rows), detail))


def check_storage(
    audit: pd.DataFrame, blob: Callable[[int], Any], *, limit: int, path: str, recorded: bool
) -> StorageReport:
    """Decode every audit blob once and check its shape, counters and recorded seq range, then
    the overlaps between ``loop`` audit ranges.

    Parameters
    ----------
    audit : the audit metadata (columns of :data:`adfkit.schema.AUDIT`).
    blob : audit id -> the stored (compressed) bytes.
    limit : cap on one decompressed blob.
    path : the file, for messages.
    recorded : whether the layout records ``start_seq``/``end_seq``.
    """
    rep = _Findings()
    blob_seqs, bad_ranges = _check_blobs(
        audit, blob, rep, limit=limit, path=path, recorded=recorded
    )
    _check_ranges(audit, rep, blob_seqs)
    return StorageReport(tuple(rep.items), bad_ranges)


def _shape_problem(value: Any, source: str) -> str | None:
    if source in _blobs.ARRAY_SOURCES and not isinstance(value, list):
        return f"source {source!r} should decode to a JSON array, got {type(value).__name__}"
    if source in _blobs.OBJECT_SOURCES and not isinstance(value, dict):
        return f"source {source!r} should decode to a JSON object, got {type(value).__name__}"
    if source == "loop":
        for i, el in enumerate(value):
            if not isinstance(el, dict) or not isinstance(el.get("seq"), int):
                return f"element {i} of the loop blob is not a row with an integer seq"
    return None


class _Unreadable(Exception):
    """An audit blob :func:`_decode_blob` could not turn into a value of its source's shape: the
    finding's code, severity and detail."""

    def __init__(self, code: str, severity: str, detail: str) -> None:
        super().__init__(detail)
        self.code, self.severity, self.detail = code, severity, detail


def _decode_blob(
    data: Any, source: str, *, aid: int, limit: int, path: str
) -> tuple[bytes, str, Any]:
    """``(decompressed bytes, their text, the JSON value)`` of one audit blob, or
    :class:`_Unreadable` saying why not (too large, undecodable, wrong shape)."""
    try:
        raw = _blobs.decompress(data, limit=limit, path=path, audit_id=aid)
    except BlobTooLargeError as exc:
        raise _Unreadable("blob_too_large", "warning", exc.detail) from None
    except BlobError as exc:
        raise _Unreadable("blob_undecodable", "error", exc.detail) from None
    try:
        text = raw.decode("utf-8")
        value = parse_json(raw)
    except (UnicodeDecodeError, JSONError) as exc:
        kind = "UTF-8" if isinstance(exc, UnicodeDecodeError) else "JSON"
        detail = f"decompressed data is not valid {kind}"
        raise _Unreadable("blob_undecodable", "error", detail) from None
    problem = _shape_problem(value, source)
    if problem:
        raise _Unreadable("blob_wrong_shape", "error", problem)
    return raw, text, value


def _check_counters(
    rep: _Findings,
    aid: int,
    where: str,
    raw: bytes,
    text: str,
    value: Any,
    *,
    count: Any,
    size: Any,
) -> None:
    """The audit row's ``entry_count`` and ``size_bytes`` against the blob it holds."""
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
    js = js_length(text)
    if pd.isna(size) or int(size) != js:
        rep.add(
            "size_bytes_mismatch",
            "error",
            "adf_audit",
            [aid],
            f"{where}: size_bytes is {size} but the JSON text is {js:,} UTF-16 code units "
            f"({len(raw):,} UTF-8 bytes)",
        )


def _check_loop_range(
    rep: _Findings, aid: int, where: str, seqs: list[int], *, start: Any, end: Any
) -> None:
    """A ``loop`` audit row's recorded ``start_seq``/``end_seq`` against the seqs its blob holds."""
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
            f"{where}: recorded range {int(start)}..{int(end)} but the blob's seqs run {lo}..{hi}",
        )


def _check_blobs(
    a: pd.DataFrame,
    blob: Callable[[int], Any],
    rep: _Findings,
    *,
    limit: int,
    path: str,
    recorded: bool,
) -> tuple[dict[int, list[int]], dict[int, tuple[int, int]]]:
    """Decode every audit blob once: decoding, shape, counters, ranges. Returns
    ``(loop audit id -> seqs held, undecodable loop audit id -> recorded range)``."""
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
        try:
            raw, text, value = _decode_blob(blob(aid), source, aid=aid, limit=limit, path=path)
        except _Unreadable as exc:
            rep.add(exc.code, exc.severity, "adf_audit", [aid], f"{where}: {exc.detail}")
            broken = exc.code != "blob_too_large"
            if broken and source == "loop" and not (pd.isna(start) or pd.isna(end)):
                bad_ranges[aid] = (int(start), int(end))
            continue
        _check_counters(rep, aid, where, raw, text, value, count=count, size=size)
        if source != "loop":
            continue
        seqs = [int(el["seq"]) for el in value]
        blob_seqs[aid] = seqs
        if recorded and seqs:
            _check_loop_range(rep, aid, where, seqs, start=start, end=end)
    return blob_seqs, bad_ranges


def _check_ranges(a: pd.DataFrame, rep: _Findings, blob_seqs: dict[int, list[int]]) -> None:
    """Overlapping and duplicated seq ranges among ``loop`` audit rows."""
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
