"""Compactions and clears: what each one swept, kept, summarised, recalled and cost.

One row per event of the history (``compactions()``), the identifiers each summary kept or
dropped (``summary_recall()``) and the rows the agent fetched again afterwards
(``refetches()``), all over the replay of :mod:`adfkit._analysis.replay`.
"""

from __future__ import annotations

import bisect
from collections import Counter
from typing import Any

import orjson
import pandas as pd

from adfkit import schema
from adfkit._analysis.kept import summaries, summary_text, swept_items
from adfkit._analysis.replay import ReplayRow, ReplayState, as_int, replay_state
from adfkit._analysis.settings import threshold_of_event
from adfkit._analysis.tables import history_calls
from adfkit._analysis.timeline import gap_between
from adfkit._base.errors import AdfError
from adfkit._core.rows import MESSAGE_OVERHEAD, estimate_tokens
from adfkit._core.source import AgentSource, Key, WindowChange

_COMPACTIONS: Key[pd.DataFrame] = Key("compactions")
_REFETCHES: Key[pd.DataFrame] = Key("compactions.refetches")
_AUDIT_TIMES: Key[dict[int, Any]] = Key("compactions.audit_times")
_REFETCH_RECORDS: Key[list[dict[str, Any]]] = Key("compactions.refetch_records")
ITEM_KINDS = schema.ITEM_KINDS
_NOTHING_STATED = WindowChange()


# -- compactions -------------------------------------------------------------------------
def compactions(src: AgentSource, *, cache_window: int = 3) -> pd.DataFrame:
    """Every compaction and clear over the whole history. One row per event, in order.

    Events whose swept rows were discarded (loop audit off) are listed too, with NA sizes.

    Parameters
    ----------
    cache_window : how many model calls before and after each event the cache columns sum.

    Columns (dtype):

    - ``event_id`` (Int64: 0-based, the argument of :meth:`summary_recall`), ``event``
      (string: ``compaction``/``clear``), ``kind`` (string: ``auto`` after a memory-flush
      nudge and grace call, ``preflight`` (the pre-flight guard, no grace call),
      ``manual`` (a ``loop_compact`` call) or ``clear``; when the swept rows were
      discarded, an automatic one is reported as ``auto``; for a transcript, the trigger
      the record states: ``auto`` or ``manual``, NA when it states none, as a Claude Code
      1.0.x summary), ``instructions`` (string: the
      ``loop_compact`` instructions, or a manual compaction's focus text), ``summary_seq``
      (Int64), ``created_at``
      (datetime64[ms, UTC]: the summary's time, else the audit row's)
    - ``boundary_seq`` (Int64: rows with a larger seq came after), ``audited`` (boolean:
      an audit row holds the swept rows), ``audit_ids`` (object: tuple), ``summary_lost``
      (bool: known only from its archive), ``summary_encrypted`` (bool: the record holds the
      summary encrypted, a Codex remote compaction; False for every other event and format)
    - ``swept_start``, ``swept_end``, ``n_swept`` (Int64: seq range and row count swept,
      context rows included; NA when unknown), ``swept_seqs`` (object: tuple of the swept
      seqs present in the history, display order)
    - ``swept_chars``, ``swept_tokens`` (Int64: estimator characters and tokens (§9.1) of the
      swept conversation rows, i.e. what the summarizer was given, tail excluded; NA when
      rows were discarded)
    - ``summary_chars``, ``summary_tokens`` (Int64: the summary row, marker and footer
      included; NA when the summary is lost, encrypted, or a transcript records no text for
      it), ``compression_ratio`` (Float64: swept_tokens / summary_tokens, NA when either is)
    - ``compaction_input``, ``compaction_output`` (Int64: the compaction call's own usage,
      stored on the summary row), ``compaction_model`` (string)
    - ``tail_seqs`` (object: tuple of the preserved tail's original seqs), ``n_tail``
    - ``trigger_tokens`` (Int64: the count the agent compared with its threshold where the
      record states it (Copilot CLI ``preCompactionTokens``); else ``input + output`` of the
      last model call before the event, in its epoch; where no call before it is known, the
      size the record states,
      ``recorded_tokens_before``; NA when rows discarded without audit lie between, so the
      triggering call is unknown), ``threshold`` (Int64: in force then; a change known only
      from ``adf_tasks`` whose place among the seqs was lost to the gap that holds the event
      too is placed by time: in force when the event happened after it)
    - ``recorded_tokens_before``, ``recorded_tokens_after``, ``recorded_duration_ms`` (Int64:
      what the record itself states, e.g. Claude Code's ``compactMetadata.preTokens``,
      ``postTokens``, ``durationMs`` (a microcompaction's ``preTokens`` too); NA where the
      format states none, as ADF files and Codex rollouts do). Claude Code's ``preTokens``
      is its own count of the context before compacting: for an automatic compaction it
      exceeds ``trigger_tokens`` (the provider's count of the last call) by the rows written
      since that call (TRANSCRIPTS.md §0)
    - ``n_identifiers`` (Int64: the items the compaction swept, the rows of
      :meth:`summary_recall` and of the loss ledger; NA when the swept rows are not in the
      record), ``n_recalled`` (Int64: those the summary kept, exactly or in other words),
      ``recall`` and ``recall_<kind>`` for each item kind in ``path, identifier, url, error,
      command, instruction, todo, quantity`` (Float64: the share kept, ``1 - loss_rate`` of
      :meth:`forgetting`; NA, never 0, when the summary text is not in the record or there
      is no item). One rule for all of them: :mod:`adfkit._analysis.kept`
    - ``n_refetches``, ``refetch_tokens`` (Int64: see :meth:`refetches`)
    - ``cache_write_before``, ``cache_write_after``, ``cache_read_before``,
      ``cache_read_after`` (Int64: summed over ``cache_window`` model calls before and after
      the event)

    Examples
    --------
    >>> import adfkit
    >>> c = adfkit.open_adf("sample_agents/long-runner.adf").compactions()
    >>> c["kind"].tolist().count("manual")
    1
    """
    return src.memo.get(_COMPACTIONS, lambda: _compactions(src, cache_window), cache_window).copy(
        deep=False
    )


def _compactions(src: AgentSource, cache_window: int) -> pd.DataFrame:
    if not len(src.events()):  # no event (an Inspect sample without compaction): no walk
        return schema.frame({}, schema.COMPACTIONS)
    st = replay_state(src)
    ev = st.events
    if not len(ev):  # no event: none of the lookups below is needed
        return schema.frame({}, schema.COMPACTIONS)
    present = st.order  # ascending
    h = src.history_view()  # read only
    at = {q: i for i, q in enumerate(h["seq"].tolist())}
    h_created = h["created_at"].array  # a Timestamp made for each event's row only
    h_model = schema.plain(h["model"])
    # the items first: their walk of the history's blocks collects the tool calls as well,
    # which the refetches read (the content parsed once for both)
    swept_items(src)
    ref_counts = _refetch_counts(src)
    calls = st.calls  # ascending
    changes = src.window_changes() or []  # None: the source states no sweep (ADF)
    ev_event = [str(x) for x in ev["event"]]
    ev_bound = [int(x) for x in ev["boundary_seq"]]
    ev_summary = [as_int(x) for x in ev["summary_seq"]]
    ev_aids = [tuple(x) for x in ev["audit_ids"]]
    ev_lost = [bool(x) for x in ev["summary_lost"]]
    # column lists, not one dict per event kept to the end: 100,000 events stay small
    cols: dict[str, list[Any]] = {}
    prev_bound: int | None = None
    prev_tail: list[int] = []
    for j in range(len(ev)):
        b = ev_bound[j]
        s_seq = ev_summary[j]
        audited = bool(len(ev_aids[j]))
        swept = st.swept[j]
        tail = st.tails[j]
        kind = _event_kind(st, j)
        stated = changes[j] if j < len(changes) else _NOTHING_STATED
        lo, hi, n_swept, sch, stok = _swept_size(st, j, b, audited, present, prev_bound, prev_tail)
        if not stated.swept_held:  # the record holds none of what it swept: unknown, not 0
            lo = hi = n_swept = sch = stok = None
        srow = st.rows.get(s_seq) if s_seq is not None else None
        sum_chars, sum_tok = _summary_size(src, st, j, srow)
        ratio = stok / sum_tok if stok is not None and sum_tok else None
        k = bisect.bisect_right(calls, b)  # calls[:k] are at or before the boundary
        trig = _trigger_tokens(src, st, calls[k - 1] if k else None, b, prev_bound)
        created = _event_time(src, s_seq, ev_aids[j], at, h_created)
        rec = {
            "event_id": j,
            "event": ev_event[j],
            "kind": kind,
            "instructions": st.instructions[j] if st.instructions[j] else None,
            "summary_seq": s_seq,
            "created_at": created,
            "boundary_seq": b,
            "audited": audited,
            "audit_ids": ev_aids[j],
            "summary_lost": ev_lost[j],
            "summary_encrypted": bool(st.encrypted[j]) if st.encrypted else False,
            "swept_start": lo,
            "swept_end": hi,
            "n_swept": n_swept,
            "swept_seqs": tuple(swept),
            "swept_chars": sch,
            "swept_tokens": stok,
            "summary_chars": sum_chars,
            "summary_tokens": sum_tok,
            "compression_ratio": ratio,
            "compaction_input": srow.tin if srow else None,
            "compaction_output": srow.tout if srow else None,
            "compaction_model": h_model[at[s_seq]] if srow else None,
            "tail_seqs": tuple(tail),
            "n_tail": len(tail),
            "trigger_tokens": _first_known(stated.trigger_tokens, trig, stated.tokens_before),
            "recorded_tokens_before": stated.tokens_before,
            "recorded_tokens_after": stated.tokens_after,
            "recorded_duration_ms": stated.duration_ms,
            "threshold": threshold_of_event(src, b, created),
        }
        rec.update(_recall_columns(src, j))
        rec["n_refetches"], rec["refetch_tokens"] = ref_counts.get(j, (0, 0))
        rec.update(_cache_around(st, calls, k, cache_window))
        for name, v in rec.items():
            cols.setdefault(name, []).append(v)
        if ev_event[j] != "microcompaction":  # stubs left in the window: no new epoch
            prev_bound, prev_tail = b, list(tail)
    return schema.frame(cols, schema.COMPACTIONS)  # a frame of its own: kept as it is


def _first_known(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)


def _event_time(
    src: AgentSource,
    summary_seq: int | None,
    audit_ids: tuple[int, ...],
    at: dict[int, int],
    h_created: Any,
) -> Any:
    """When an event happened: its summary row's ``created_at``, else the latest of its audit
    rows' (NaT when neither is known; the audit table read only then)."""
    if summary_seq is not None and summary_seq in at:
        return h_created[at[summary_seq]]
    a_times = src.memo.get(_AUDIT_TIMES, lambda: _audit_times(src))
    ts = [t for x in audit_ids if (t := a_times.get(x)) is not None and not pd.isna(t)]
    return max(ts) if ts else pd.NaT


def _audit_times(src: AgentSource) -> dict[int, Any]:
    """Audit id -> its row's ``created_at``."""
    a = src.audit()
    return dict(zip(a["id"].astype("int64"), a["created_at"], strict=True)) if len(a) else {}


def _refetch_counts(src: AgentSource) -> dict[int, tuple[int, int]]:
    """Event id -> (refetches after it, their result tokens), from :func:`refetches`."""
    out: dict[int, tuple[int, int]] = {}
    for r in _refetch_records(src):  # the records, not their frame
        j, t = r["event_id"], r["result_tokens"]
        n, tok = out.get(j, (0, 0))
        out[j] = (n + 1, tok if t is None else tok + int(t))  # a size unknown adds nothing
    return out


def _summary_size(
    src: AgentSource, st: ReplayState, j: int, srow: ReplayRow | None
) -> tuple[int | None, int | None]:
    """``(summary_chars, summary_tokens)`` of event ``j``'s summary row, None when there is
    none or its text is not the summary's (:func:`_summary_readable`)."""
    if srow is None or not _summary_readable(src, st, j):
        return None, None
    return srow.chars, estimate_tokens(srow.chars + MESSAGE_OVERHEAD, srow.media)


def _swept_size(
    st: ReplayState,
    j: int,
    boundary: int,
    audited: bool,
    present: list[int],
    prev_bound: int | None,
    prev_tail: list[int],
) -> tuple[int | None, int | None, int | None, int | None, int | None]:
    """``(swept_start, swept_end, n_swept, swept_chars, swept_tokens)`` of event ``j``. An
    archived (or stated) sweep is its rows; otherwise the range runs from after the previous
    event (its tail included) to the boundary, and the rows missing from it are counted; the
    size is unknown (None) when swept rows are gone."""
    swept = st.swept[j]
    if audited or st.stated:
        missing: int | None = 0
        lo = min(swept) if swept else None
        hi = max(swept) if swept else None
    else:
        lo = min([prev_bound + 1, *prev_tail]) if prev_bound is not None else None
        hi = boundary
        missing = _missing(present, lo, hi, prev_tail) if lo is not None else None
    n_swept = None if missing is None else len(swept) + missing
    if not (audited or (missing == 0 and lo is not None)):
        return lo, hi, n_swept, None, None
    tail_set = set(st.tails[j])
    rows = st.rows
    sch = media = n_conv = 0  # the swept conversation rows, tail excluded: one pass
    for q in swept:
        r = rows[q]
        if r.conv and q not in tail_set:
            sch += r.chars
            media += r.media
            n_conv += 1
    stok = estimate_tokens(sch + MESSAGE_OVERHEAD * n_conv, media)
    return lo, hi, n_swept, sch, stok


def _trigger_tokens(
    src: AgentSource, st: ReplayState, last: int | None, boundary: int, prev_bound: int | None
) -> int | None:
    """The reported tokens of the call that triggered an event: ``last``, the last call at or
    before its boundary, if it is in this epoch with no discarded rows between them (else
    unknown, not the previous event's)."""
    if last is None or (prev_bound is not None and last <= prev_bound):
        return None
    if gap_between(src, last, boundary + 1) is not None:
        return None
    return st.rows[last].ttot


def _cache_around(st: ReplayState, calls: list[int], k: int, cache_window: int) -> dict[str, int]:
    """Cache writes and reads of the ``cache_window`` calls before an event (``calls[:k]``)
    and after it, without copying ``calls``."""
    bef = range(*slice(-cache_window, None).indices(k)) if cache_window else range(0)
    aft = range(*slice(None, cache_window).indices(len(calls) - k))
    before = [calls[i] for i in bef]
    after = [calls[k + i] for i in aft]
    out = {}
    for name, attr in (("cache_write", "cw"), ("cache_read", "cr")):
        out[f"{name}_before"] = sum(getattr(st.rows[q], attr) or 0 for q in before)
        out[f"{name}_after"] = sum(getattr(st.rows[q], attr) or 0 for q in after)
    return out


def _missing(present: list[int], lo: int, hi: int, extra: list[int]) -> int:
    """How many seqs of ``lo..hi`` and ``extra`` are not in ``present`` (sorted, unique):
    interval arithmetic, however wide the range."""

    def has(q: int) -> bool:
        i = bisect.bisect_left(present, q)
        return i < len(present) and present[i] == q

    n = 0
    if hi >= lo:
        n = (hi - lo + 1) - (bisect.bisect_right(present, hi) - bisect.bisect_left(present, lo))
    return n + sum(1 for q in set(extra) if not lo <= q <= hi and not has(q))


def _event_kind(st: ReplayState, j: int) -> str | None:
    if st.kinds[j] in ("clear", "repair"):
        return st.kinds[j]
    if st.manual[j]:
        return "manual"
    if st.stated:  # a transcript: the trigger its record states, NA when it states none
        return st.triggers[j] if st.triggers else None
    swept = st.swept[j]
    if not swept:
        return "auto"
    # auto: a memory-flush nudge followed by at least one model call before the event (the
    # last nudge sought from the end, where it stands)
    rows = st.rows
    last = next((q for q in reversed(swept) if rows[q].sub == "memory_flush"), None)
    if last is not None and any(q > last and rows[q].call for q in reversed(swept)):
        return "auto"
    return "preflight"


def _summary_readable(src: AgentSource, st: ReplayState, j: int) -> bool:
    """Whether the record holds event ``j``'s summary text (:func:`summary_text`: not when it
    is encrypted, nor when a transcript's summary row is empty); a compaction's is known
    from :func:`summaries`, which read it once for every table."""
    summs = summaries(src)
    if j in summs:
        return summs[j] is not None
    return summary_text(st, j) is not None


def _recall_columns(src: AgentSource, j: int) -> dict[str, Any]:
    """``n_identifiers``, ``n_recalled``, ``recall`` and ``recall_<kind>`` of event ``j``:
    the items of :func:`swept_items` (the loss ledger's) and how many its summary kept."""
    rec: dict[str, Any] = {"n_identifiers": None, "n_recalled": None, "recall": None}
    for k in ITEM_KINDS:
        rec[f"recall_{k}"] = None
    sw = swept_items(src).get(j)
    if sw is None:
        return rec
    rec["n_identifiers"] = len(sw)
    n_kept = sw.n_kept  # counted once
    if n_kept is None:  # what was swept is known, what the summary kept is not
        return rec
    rec["n_recalled"] = n_kept
    rec["recall"] = n_kept / len(sw) if len(sw) else None
    n_all = Counter(sw.kinds)  # counted in C: thousands of items per file
    n_lost = Counter(k for k, v in zip(sw.kinds, sw.kept, strict=True) if v == "lost")
    for k, n in n_all.items():
        rec[f"recall_{k}"] = (n - n_lost[k]) / n
    return rec


def summary_recall(src: AgentSource, event: int) -> pd.DataFrame:
    """Which items of what a compaction swept its summary kept. One row per distinct item in
    the swept rows (tail excluded): the loss ledger's items and verdicts
    (:meth:`compaction_ledger`), by the one rule of :mod:`adfkit._analysis.kept`; adfkit's
    own identifiers (seqs, row numbers, tool names) are never items.

    Parameters
    ----------
    event : the ``event_id`` of a compaction in :meth:`compactions`.

    Columns: ``kind`` (string: ``path``, ``identifier``, ``url``, ``error``, ``command``,
    ``instruction``, ``todo``, ``quantity``), ``value`` (string: as first written),
    ``item_key`` (string: its identity), ``first_seq`` (Int64: the first swept row holding
    it), ``kept`` (string: ``exact``, ``normalised`` or ``lost``, as the ledger's),
    ``recalled`` (bool: kept, exactly or in other words). The mean of ``recalled`` is the
    compaction's ``recall`` in :meth:`compactions`, ``1 - loss_rate`` in :meth:`forgetting`.

    Raises
    ------
    AdfError
        no such event, a clear, or a compaction whose swept rows or summary are not in the
        file (audit off, or summary discarded).

    Examples
    --------
    >>> import adfkit
    >>> r = adfkit.open_adf("sample_agents/long-runner.adf").summary_recall(0)
    >>> set(r["kind"]) <= set(adfkit.schema.ITEM_KINDS)
    True
    """
    st = replay_state(src)
    if not 0 <= int(event) < len(st.events):
        raise AdfError(
            f"no compaction event {event} (there are {len(st.events)} events)", path=src.path
        )
    sw = swept_items(src).get(int(event))
    if sw is None or sw.n_kept is None:
        raise AdfError(
            f"event {event} has no summary recall: it is a clear, or its swept rows or its "
            "summary are not in the file (lost, or encrypted: a Codex remote compaction)",
            path=src.path,
        )
    return schema.frame(
        {
            "kind": sw.kinds,
            "value": sw.values,
            "item_key": sw.keys,
            "first_seq": [q[0] for q in sw.seqs],
            "kept": sw.kept,
            "recalled": [v != "lost" for v in sw.kept],
        },
        schema.SUMMARY_RECALL,
    )


# -- refetches ---------------------------------------------------------------------------
def refetches(src: AgentSource) -> pd.DataFrame:
    """Tool calls that repeat, after a compaction, a call that the compaction swept. One row
    per repeating call (same tool name, same arguments), made in the epoch that follows.

    Columns: ``event_id`` (Int64, as in :meth:`compactions`), ``summary_seq`` (Int64),
    ``seq`` (Int64: the assistant row of the repeat), ``tool_name``, ``tool_input``
    (string: compact JSON), ``swept_seq`` (Int64: the latest swept call it repeats),
    ``result_seq`` (Int64), ``result_tokens`` (Int64: the result row's estimated tokens),
    ``call_tokens_input`` (Int64: the reported input of the repeating call).

    Examples
    --------
    >>> import adfkit
    >>> r = adfkit.open_adf("sample_agents/long-runner.adf").refetches()
    >>> bool((r["seq"] > r["swept_seq"]).all())
    True
    """
    return src.memo.get(_REFETCHES, lambda: _refetches(src)).copy(deep=False)


def _refetches(src: AgentSource) -> pd.DataFrame:
    return schema.frame(_refetch_records(src), schema.REFETCHES).copy(deep=False)


def _refetch_records(src: AgentSource) -> list[dict[str, Any]]:
    """The rows of :func:`refetches`, one dict each (found once per source)."""
    return src.memo.get(_REFETCH_RECORDS, lambda: _find_refetches(src))


def _find_refetches(src: AgentSource) -> list[dict[str, Any]]:
    st = replay_state(src)
    ev = st.events
    if "compaction" not in st.kinds:  # nothing swept: no call can repeat a swept one
        return []
    sigs: list[tuple[int, str, str, int | None]] = []
    canons: dict[Any, str] = {}  # each distinct input made canonical once
    for cs, name, inp, rs in history_calls(src):  # the tool calls' columns, no frame
        if cs is pd.NA or name in ("loop_compact", "loop_clear"):
            continue
        canon = canons.get(inp)
        if canon is None:
            canon = canons[inp] = _canonical(inp)
        sigs.append((int(cs), str(name), canon, as_int(rs)))
    bounds = [int(b) for b in ev["boundary_seq"]]
    kinds = [str(e) for e in ev["event"]]
    summ = [as_int(x) for x in ev["summary_seq"]]
    # every row is swept by one event at most: the call signatures each compaction swept
    swept_by: dict[int, int] = {}
    for j in range(len(ev)):
        if kinds[j] == "compaction":
            tail = set(st.tails[j])
            swept_by.update(dict.fromkeys([q for q in st.swept[j] if q not in tail], j))
    last: dict[int, dict[tuple[str, str], int]] = {}  # event -> signature -> latest swept call
    for cs, name, canon, _ in sigs:
        if (e := swept_by.get(cs)) is not None:
            last.setdefault(e, {})[(name, canon)] = cs
    call_seqs = [sig[0] for sig in sigs]
    by_seq = sorted(range(len(sigs)), key=call_seqs.__getitem__)  # stable: ties in order
    seqs = [call_seqs[i] for i in by_seq]
    recs = []
    for j in range(len(ev)):
        if kinds[j] != "compaction":
            continue
        # the calls after this event, up to the next event's boundary, in their order
        lo = bisect.bisect_right(seqs, bounds[j])
        hi = bisect.bisect_right(seqs, bounds[j + 1]) if j + 1 < len(ev) else len(seqs)
        mine = last.get(j, {})
        for i in sorted(by_seq[lo:hi]):
            cs, name, canon, rs = sigs[i]
            orig = mine.get((name, canon))
            if orig is None:
                continue
            rr = st.rows.get(rs) if rs is not None else None
            recs.append(
                {
                    "event_id": j,
                    "summary_seq": summ[j],
                    "seq": cs,
                    "tool_name": name,
                    "tool_input": canon,
                    "swept_seq": orig,
                    "result_seq": rs,
                    "result_tokens": (
                        estimate_tokens(rr.chars + MESSAGE_OVERHEAD, rr.media) if rr else None
                    ),
                    "call_tokens_input": st.rows[cs].tin if cs in st.rows else None,
                }
            )
    return recs


def _canonical(inp: Any) -> str:
    """A call's input as compact JSON with sorted keys (its text as it is when it is not
    JSON): two calls with the same arguments have the same one."""
    try:
        return orjson.dumps(orjson.loads(inp), option=orjson.OPT_SORT_KEYS).decode()
    except (orjson.JSONDecodeError, TypeError):
        return str(inp)
