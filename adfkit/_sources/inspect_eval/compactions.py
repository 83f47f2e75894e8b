"""What each ``CompactionEvent`` of a sample swept and kept (the format's notes:
:mod:`.parser`)."""

from __future__ import annotations

import bisect
import itertools
from typing import Any

from adfkit._sources.inspect_eval.calls import Call
from adfkit._sources.inspect_eval.state import Sample
from adfkit._sources.transcript.kit import TranscriptEvent, as_int, iso_ms, result_text

_TRIGGERS = {"threshold": "auto", "forced": "manual", "auto": "auto", "manual": "manual"}


def compactions(st: Sample) -> list[TranscriptEvent]:
    """One event per CompactionEvent: swept = the rows in the window before it (every row
    up to it that no earlier event swept) that the agent's next call no longer holds."""
    # the agent's own calls: those whose output is a row (a scorer's, a tool-agent's not)
    agent = [c for c in st.calls if not c.summarizer and c.out_seq is not None]
    # (event index, the highest row seq it shows existing), in event order
    reach = [(c.index, max([q for q in c.seqs if q] + [c.out_seq or 0])) for c in st.calls]
    reach = sorted(reach + list(st.tool_seq.items()))
    at = [i for i, _ in reach]
    upto = list(itertools.accumulate((q for _, q in reach), max))
    summary_rows = sorted(r.seq for r in st.rows if r.kind_hint == "compaction_summary")
    swept_all: set[int] = set()
    cleared_all: set[int] = set()  # rows an earlier edit compaction cleared
    used: set[int] = set()
    out = []
    for ci, ce in st.comps:
        span = ce.get("span_id")
        mine = [c for c in agent if span is None or c.ev.get("span_id") in (span, None)]
        mine = mine or agent
        k = bisect.bisect_left(at, ci)
        bound = upto[k - 1] if k else 0
        e = _compaction(st, ci, ce, mine, bound, summary_rows, used, swept_all, cleared_all)
        (swept_all if e.kind == "compaction" else cleared_all).update(e.swept)
        out.append(e)
    return out


def _compaction(
    st: Sample,
    ci: int,
    ce: dict[str, Any],
    mine: list[Call],
    bound: int,
    summary_rows: list[int],
    used: set[int],
    swept_all: set[int],
    cleared_all: set[int],
) -> TranscriptEvent:
    before = [c for c in mine if c.index < ci]
    after = next((c for c in mine if c.index > ci), None)
    ctype = ce.get("type")
    s_seq = None
    if ctype in ("summary", None):
        s_seq = _summary_row(st, ce, after, bound, summary_rows, used)
        if s_seq is not None:
            bound = s_seq - 1
    md_raw = ce.get("metadata")
    md: dict[str, Any] = md_raw if isinstance(md_raw, dict) else {}
    extra = _extra(ci, ce, md)
    window = [q for q in range(1, bound + 1) if q not in swept_all]
    swept, kept, edited = _held_after(st, ci, after, window, cleared_all)
    kind = "compaction"
    if ctype == "edit" and not swept:  # cleared in place: a microcompaction
        kind = "microcompaction"
        swept, kept = [q for q in edited if q <= bound], []
        if after is not None and swept:
            extra["stub_chars"] = _stub_chars(after, swept)
    elif edited:
        extra["edited_seqs"] = tuple(edited)
    trig = md.get("trigger")
    extra["_before_call"] = before[-1].index if before else None
    extra["_after_call"] = after.index if after else None
    return TranscriptEvent(
        kind=kind,
        trigger=_TRIGGERS.get(trig) if isinstance(trig, str) else None,
        pre_tokens=as_int(ce.get("tokens_before")),
        post_tokens=as_int(ce.get("tokens_after")),
        created_at=iso_ms(ce.get("timestamp")),
        line=bound + 1,
        uuid=ce.get("uuid") if isinstance(ce.get("uuid"), str) else None,
        summary_seq=s_seq,
        swept=tuple(swept),
        preserved=tuple(kept),
        extra=extra,
        summarises=ctype not in ("trim", "edit"),
    )


def _summary_row(
    st: Sample,
    ce: dict[str, Any],
    after: Call | None,
    bound: int,
    summary_rows: list[int],
    used: set[int],
) -> int | None:
    """The summary row of a summary compaction: the next input's, after the bound (else the
    first summary row after it no compaction took), stamped with the event's time."""
    cand = [q for q in (after.seqs if after else []) if q in summary_rows and q > bound]
    cand = [q for q in cand or summary_rows if q > bound and q not in used]
    if not cand:
        return None
    s_seq = cand[0]
    used.add(s_seq)
    st.times.setdefault(s_seq, iso_ms(ce.get("timestamp")))
    return s_seq


def _extra(ci: int, ce: dict[str, Any], md: dict[str, Any]) -> dict[str, Any]:
    """What the event records beyond the compaction's own fields: its type, place, strategy,
    message counts, source and trigger as written."""
    extra: dict[str, Any] = {"type": ce.get("type"), "event_index": ci + 1}
    for name in ("strategy", "messages_before", "messages_after"):
        if md.get(name) is not None:
            extra[name] = md[name]
    if isinstance(ce.get("source"), str):
        extra["source"] = ce["source"]
    if isinstance(md.get("trigger"), str):
        extra["recorded_trigger"] = md["trigger"]
    return extra


def _held_after(
    st: Sample, ci: int, after: Call | None, window: list[int], cleared_all: set[int]
) -> tuple[list[int], list[int], list[int]]:
    """``(swept, kept, edited)``: the rows of the ``window`` the agent's next call no longer
    holds, those it holds, and those it holds edited (not cleared before); nothing without a
    next call."""
    if after is None:
        st.fnd.add(
            "no_call_after_compaction",
            "info",
            None,
            f"event {ci + 1}: no model call follows the compaction, so what it swept is not "
            "recorded (nothing counted as swept)",
        )
        return [], [], []
    held = {q for q in after.seqs if q is not None}
    swept = [q for q in window if q not in held]
    kept = [q for q in window if q in held]
    return swept, kept, sorted(set(after.edited) - cleared_all)


def _stub_chars(after: Call, cleared: list[int]) -> int:
    """The mean length of the cleared rows' text as the next call's input holds them."""
    sizes = [
        len(result_text(m.get("content")))
        for m, q in zip(after.inputs, after.seqs, strict=True)
        if q in cleared
    ]
    return round(sum(sizes) / len(sizes)) if sizes else 0
