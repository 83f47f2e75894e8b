"""Which rows are model calls: the rules :func:`adfkit._analysis.usage.usage` and ``adfkit usage``
(:mod:`adfkit._sources.transcript.figures`, without pandas) share.

- :data:`CALL_ROW_KINDS`: a row that carries tokens is a call when its kind is one of these.
- :func:`reappended_pairs`: the rows a fallback compaction re-appended (not second calls).
- :func:`paid_order`: where the paid rows of abandoned branches go among the history's.

Pure functions over plain values (lists): neither pandas nor numpy.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Any

from adfkit._base.js import JSONError, parse_json

#: Row kind of a call -> its ``call_kind`` in :meth:`AgentFile.usage`: every assistant row, and
#: a compaction summary that carries the compaction call's usage (ADF_FORMAT.md §3.3). A row is
#: a call when it carries tokens and its kind is a key here.
CALL_ROW_KINDS = {"assistant": "assistant", "compaction_summary": "compaction"}

#: Longest tail a compaction preserves (and the fallback path re-appends): the ``loop_compact``
#: call and its result (ADF_FORMAT.md §5.1).
REAPPENDED_TAIL = 2


def reappended_pairs(
    seq: Sequence[int],
    ordv: Sequence[int | None],
    kind: Sequence[str],
    role: Sequence[str],
    content: Sequence[Any],
    tok: Sequence[Sequence[float | None]],
) -> dict[int, int]:
    """:func:`adfkit._core.history.reappended_copies` over the history's columns: ``seq``,
    ``ordv`` (None where null), ``kind`` and ``role`` ("" where null), ``content`` (JSON text or
    parsed blocks, per row), ``tok`` (the six ``tokens_*`` of each row, None or NaN where
    null). ``content`` and ``tok`` are read only at the rows compared (a few per summary), so
    they may be sequences that make each row on demand. Returns copy seq -> original seq."""
    out: dict[int, int] = {}
    n = len(seq)
    summaries = [i for i in range(n) if kind[i] == "compaction_summary" and ordv[i] is None]
    if not summaries:
        return out
    key = [seq[i] if ordv[i] is None else int(ordv[i]) for i in range(n)]  # type: ignore[arg-type]
    # sorted tuples, not a key function per row: linear when the rows are already in order
    display = [i for _, _, i in sorted(zip(key, seq, range(n), strict=True))]
    eligible = [i for i in display if kind[i] not in ("context", "compaction_summary")]
    eligible_seq = [seq[i] for i in eligible]
    at = {int(s): i for i, s in enumerate(seq)}

    def toks(i: int) -> tuple[float | None, ...]:  # read only for the rows compared
        return tuple(None if v is None or v != v else v for v in tok[i])

    def same_tokens(c: int, o: int, first: bool) -> bool:
        if not first and all(v is None for v in toks(c)):
            return True
        return toks(c) == toks(o)

    last = _last_below(eligible_seq, [int(seq[i]) for i in summaries], REAPPENDED_TAIL)
    for i in summaries:
        s = int(seq[i])
        before = [eligible[p] for p in last[s]]  # display order
        for k in range(REAPPENDED_TAIL, 0, -1):
            found = [at.get(s + 1 + j) for j in range(k)]
            copies = [c for c in found if c is not None]
            if len(copies) < k or any(kind[c] == "context" for c in copies):
                continue
            if len(before) < k:
                continue
            pairs = list(zip(copies, before[-k:], strict=True))
            if all(
                role[c] == role[o]
                and same_tokens(c, o, j == 0)
                and _parsed(content[c]) == _parsed(content[o])
                for j, (c, o) in enumerate(pairs)
            ):
                out.update({int(seq[c]): int(seq[o]) for c, o in pairs})
                break
    return out


def _last_below(values: Sequence[int], limits: list[int], k: int) -> dict[int, list[int]]:
    """For each limit: the last ``k`` positions ``p`` (ascending) with ``values[p] < limit``.

    One sweep over the values in ascending order, however many limits (each keeps the ``k``
    largest positions seen so far).

    Examples
    --------
    >>> _last_below([5, 1, 7, 2, 3], [3, 6, 1], 2)
    {1: [], 3: [1, 3], 6: [3, 4]}
    """
    order = sorted(range(len(values)), key=values.__getitem__)
    out: dict[int, list[int]] = {}
    top: list[int] = []
    i = 0
    for lim in sorted(set(limits)):
        while i < len(order) and values[order[i]] < lim:
            bisect.insort(top, order[i])
            if len(top) > k:
                del top[0]
            i += 1
        out[lim] = list(top)
    return out


def _parsed(raw: Any) -> Any:
    """``content`` parsed as JSON when it is JSON text, else as is."""
    if isinstance(raw, str | bytes):
        try:
            return parse_json(raw)
        except JSONError:
            return raw
    return raw


def paid_order(history_ms: Sequence[int], branch_ms: Sequence[int]) -> list[int]:
    """The order that places the paid rows of abandoned branches among the history's rows:
    each after the last history row written at or before its time (the latest time so far at
    each row: a missing time or a 1 ms inversion does not move it back). ``history_ms`` and
    ``branch_ms`` are ms, int64 min where unknown; the result indexes the history rows
    followed by the branch rows.

    Examples
    --------
    >>> paid_order([10, 30, 20, 40], [25, 5])
    [5, 0, 4, 1, 2, 3]
    """
    latest = list(itertools.accumulate(history_ms, max))
    at = [bisect.bisect_right(latest, b) for b in branch_ms]
    key = [float(i) for i in range(len(history_ms))] + [a - 0.5 for a in at]
    return sorted(range(len(key)), key=key.__getitem__)
