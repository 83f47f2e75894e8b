"""A parsed transcript's identity, calls and events as plain values (no pandas): the
``figures`` fast path (:mod:`adfkit._core.figures`) of the transcript formats (:func:`reader`).

What :class:`~adfkit._sources.transcript.source.TranscriptSource` shows as frames, for the
readers of many files that need only figures (``adfkit usage``): the same rules, applied to the
reader's objects without making the row frames. :func:`name_of` and :func:`meta_of` are the
source's ``name`` and ``meta()``; :func:`event_bounds` is where its :meth:`events` place each
event; :func:`usage_calls` gives the calls of :meth:`AgentFile.usage` (the row rule of
:mod:`adfkit._core.rows`, the call rules of :mod:`adfkit._core.calls`, the cost rule of
:mod:`adfkit._core.prices`), in the same order, with the same figures.
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from adfkit._base.collector import gc_paused
from adfkit._core.calls import CALL_ROW_KINDS, paid_order, reappended_pairs
from adfkit._core.figures import SessionFigures, UsageCall
from adfkit._core.prices import PriceTable, cost_warning, costs, unpriced
from adfkit._core.rows import (
    created_ms,
    parse_content,
    stored_facts,
    stored_kind,
    token_counts,
)
from adfkit._sources.transcript.kit import ParsedTranscript, TranscriptEvent, TranscriptRow

#: Events :meth:`TranscriptSource.events` lists (a rewind's rows are not in the history).
WINDOW_EVENTS = ("compaction", "microcompaction", "clear")
#: ``created_at`` NA in int64 ms (the history frame's NaT).
_NA_MS = -(2**63)


def name_of(parsed: ParsedTranscript) -> str:
    """The session id (subagents: ``agent-<id>``), else the file name without extensions."""
    if parsed.agent_id:
        return f"agent-{parsed.agent_id}"
    if parsed.session_id:
        return parsed.session_id
    return re.sub(r"\.jsonl(\.zst)?$", "", os.path.basename(parsed.path))


def meta_of(parsed: ParsedTranscript) -> dict[str, str]:
    """What the file says about the session, plus ``format`` and a subagent's ids (text)."""
    p = parsed
    out = {str(k): str(v) for k, v in p.meta.items() if v is not None}
    out["format"] = p.format
    for k, v in (
        ("session_id", p.session_id),
        ("agent_id", p.agent_id),
        ("parent_tool_use_id", p.parent_tool_use_id),
        ("parent_agent_id", p.parent_agent_id),
    ):
        if v is not None:
            out[k] = str(v)
    return out


def writes_1h(parsed: ParsedTranscript) -> dict[int, int]:
    """1-hour cache writes by seq, from the calls that hold a row."""
    return {
        int(c.seq): int(w)
        for c in parsed.calls
        if c.seq is not None and (w := c.tokens.get("cache_write_1h")) is not None
    }


def _boundary(
    e: TranscriptEvent, rows: list[TranscriptRow], lines: list[int], top: list[int]
) -> int:
    """``boundary_seq`` of an event: rows with a larger seq came after it. A compaction's is
    the row before its summary; otherwise the last row whose first line precedes the event's
    (``lines``: the rows' first lines, sorted; ``top``: the largest row index among the first
    ``i`` of them, for each ``i``)."""
    if e.summary_seq is not None:
        return int(e.summary_seq) - 1
    i = bisect.bisect_left(lines, e.line)
    return int(rows[top[i]].seq) if i else 0


def event_bounds(parsed: ParsedTranscript) -> list[tuple[TranscriptEvent, int]]:
    """Each event of :data:`WINDOW_EVENTS`, in order, with its ``boundary_seq``."""
    rows = parsed.rows
    events = [e for e in parsed.events if e.kind in WINDOW_EVENTS]
    if not events:
        return []
    order = sorted(range(len(rows)), key=lambda i: rows[i].line)
    lines = [rows[i].line for i in order]
    top = [-1, *itertools.accumulate(order, max)]
    return [(e, _boundary(e, rows, lines, top)) for e in events]


def event_times(parsed: ParsedTranscript) -> list[tuple[str, int | None]]:
    """``(event, created_at ms or None)`` of each event of :meth:`TranscriptSource.events`:
    the time of its boundary row, else of its summary row (a row of the history)."""
    bounds = event_bounds(parsed)
    if not bounds:  # most sessions: no row's time is needed
        return []
    when: dict[int, int] = {}
    for r in parsed.rows:
        if r.seq not in when:
            when[r.seq] = created_ms(r.created_at, None)
    out = []
    for e, bound in bounds:
        at = when.get(bound)
        if at is None and e.kind != "microcompaction" and e.summary_seq is not None:
            at = when.get(e.summary_seq)
        out.append((e.kind, at))
    return out


def user_messages(parsed: ParsedTranscript) -> Iterator[tuple[str | None, str]]:
    """``(subkind, text)`` of each history row of role ``user`` and kind ``message``, in seq
    order (what :func:`adfkit._facade.fleet.agent_label` looks through for a first prompt)."""
    for r in parsed.rows:
        if r.role != "user":
            continue
        blocks, bad = parse_content(r.content)
        kind, sub, _types, _tools, text, _c, _m = stored_facts(r.role, blocks, bad, r.kind_hint)
        if kind == "message":
            yield sub, text


def _row_facts(rows: list[TranscriptRow]) -> list[tuple[Any, ...]]:
    """Per row, what the history frame holds of it: seq, kind, role, content, model, the six
    token counts (None when absent), created_at (ms, int64 min when unknown)."""
    out = []
    for r in rows:
        blocks, bad = parse_content(r.content)
        kind = stored_kind(r.role, blocks, bad, r.kind_hint)[0]
        ti, to, tcr, tcw, tr, tt, _bad = token_counts(r.tokens or None)
        model = r.model if isinstance(r.model, str) else None
        role = r.role if r.role in ("user", "assistant") else ""
        ms = created_ms(r.created_at, _NA_MS)
        out.append((r.seq, kind, role, r.content, model, (ti, to, tcr, tcw, tr, tt), ms))
    return out


def usage_calls(parsed: ParsedTranscript, prices: PriceTable) -> tuple[list[UsageCall], str]:
    """The calls :func:`adfkit._analysis.usage.usage` gives for this transcript (subagents'
    own files not included), in its order: every history row that carries tokens and is of a
    kind of :data:`CALL_ROW_KINDS`, with the paid rows of abandoned branches placed by
    :func:`paid_order`, re-appended copies left out (:func:`reappended_pairs`), priced by
    :func:`adfkit._core.prices.costs`; and the warning ``usage()`` gives about calls whose
    cost is unknown (:func:`adfkit._core.prices.cost_warning`, "" when none)."""
    hist = _row_facts(parsed.rows)
    paid = [f for f in _row_facts(parsed.other_branches) if any(v is not None for v in f[5])]
    if paid:
        both = hist + paid
        rows = [both[i] for i in paid_order([f[6] for f in hist], [f[6] for f in paid])]
    else:
        rows = hist
    copies: dict[int, int] = {}
    if any(f[1] == "compaction_summary" for f in rows):
        copies = reappended_pairs(
            [f[0] for f in rows],
            [None] * len(rows),
            [f[1] for f in rows],
            [f[2] for f in rows],
            [f[3] for f in rows],
            [f[5] for f in rows],
        )
    calls = [
        f
        for f in rows
        if f[1] in CALL_ROW_KINDS and any(v is not None for v in f[5]) and f[0] not in copies
    ]
    if not calls:
        return [], ""
    w = writes_1h(parsed)

    def col(k: int, na: float) -> list[float]:
        return [na if (v := f[5][k]) is None else float(v) for f in calls]

    w1h = [w.get(int(f[0])) for f in calls]
    cost, rates = costs(
        [f[4] for f in calls],
        col(0, math.nan),
        col(1, math.nan),
        col(2, 0.0),
        col(3, 0.0),
        [0.0 if v is None else float(v) for v in w1h],
        prices,
    )
    missing = unpriced([f[4] for f in calls], prices)
    total_only = sum(1 for r, c in zip(rates, cost, strict=True) if r[0] == r[0] and c != c)
    note = ""
    if missing or total_only:
        legacy = sum(1 for f in calls if f[5][0] is None and f[5][5] is not None)
        note = cost_warning(missing, total_only, legacy)
    out = [
        UsageCall(
            CALL_ROW_KINDS[f[1]],
            None if f[6] == _NA_MS else f[6],
            f[4],
            f[5][0],
            f[5][1],
            f[5][2],
            f[5][3],
            w1h[i],
            c,
        )
        for i, (f, c) in enumerate(zip(calls, cost, strict=True))
    ]
    return out, note


def session_figures(parsed: ParsedTranscript, prices: PriceTable) -> SessionFigures:
    """The :class:`SessionFigures` of a parsed transcript and its subagents."""
    calls: list[UsageCall] = []
    notes = []
    for p in [parsed, *parsed.subagents]:
        got, note = usage_calls(p, prices)
        calls += got
        if note:
            notes.append(f"{p.path}: {note}")
    return SessionFigures(
        name_of(parsed),
        meta_of(parsed),
        user_messages(parsed),  # lazily: a label needs the first prompt at most
        calls,
        event_times(parsed),
        notes,
    )


def reader(
    parse: Callable[..., ParsedTranscript],
) -> Callable[[str, PriceTable], SessionFigures]:
    """A format's ``figures`` (:class:`~adfkit._core.registry.FormatSpec`): ``parse`` the file,
    then its figures."""

    def figures(path: str, prices: PriceTable) -> SessionFigures:
        # the collector paused until the parsed file is dropped, not only while it is parsed:
        # a pause that ends with the file still held leaves one pass over all of it (a quarter
        # of a generated session's time)
        with gc_paused():
            return session_figures(parse(path), prices)

    return figures
