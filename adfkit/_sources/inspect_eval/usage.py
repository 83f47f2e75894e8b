"""A sample's token counts: each call's ``output.usage`` as ADF tokens, counted once on the
row that is its output (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._core.rows import as_count
from adfkit._sources.inspect_eval.calls import row_model
from adfkit._sources.inspect_eval.state import Sample
from adfkit._sources.transcript.kit import (
    Findings,
    ModelCall,
    TranscriptEvent,
    anthropic_tokens,
    bad_usage,
    iso_ms,
    unknown_counts,
)


def usage_tokens(u: Any, fnd: Findings, line: int) -> tuple[dict[str, int], dict[str, Any]]:
    """(ADF tokens, counts that are not counts as written) of an Inspect ``ModelUsage``."""
    if not isinstance(u, dict):
        return {}, {}
    a = {
        "input_tokens": u.get("input_tokens"),
        "output_tokens": u.get("output_tokens"),
        "cache_read_input_tokens": u.get("input_tokens_cache_read"),
        "cache_creation_input_tokens": u.get("input_tokens_cache_write"),
    }
    tokens = anthropic_tokens(a)
    unknown = unknown_counts(a, "anthropic")
    bad = [k for k, v in u.items() if k.endswith("_tokens") or k.startswith("input_tokens")]
    bad = [k for k in bad if u.get(k) is not None and as_count(u.get(k)) is None]
    if bad:
        bad_usage(fnd, line, sorted(bad))
    r = as_count(u.get("reasoning_tokens"))
    if r is not None:
        tokens["reasoning"] = r
    return tokens, unknown


def call_usage(st: Sample, events: list[TranscriptEvent]) -> tuple[list[ModelCall], dict[int, int]]:
    """Every call's usage counted once, on the row that is its output (a summarizer's: its
    compaction's summary row); and each call's ADF input, by event index."""
    out: list[ModelCall] = []
    on_row: set[int] = set()
    input_of: dict[int, int] = {}
    summaries = [(ci, e.summary_seq) for (ci, _), e in zip(st.comps, events, strict=True)]
    for c in st.calls:
        out_ = c.ev.get("output")
        u = out_.get("usage") if isinstance(out_, dict) else None
        tokens, unknown = usage_tokens(u, st.fnd, c.index + 1)
        seq, note = c.out_seq, None
        if c.summarizer:
            seq = next((q for ci, q in summaries if ci > c.index), None)
            note = "the summarizer call of a summary compaction"
        if seq is not None and seq in on_row:
            seq, note = None, "a second call for the same row"
        if seq is not None:
            on_row.add(seq)
            r = st.rows[seq - 1]
            r.tokens = {**tokens, **unknown} if unknown else dict(tokens)
            if unknown:
                r.malformed = True
                r.note = "usage holds values that are not token counts"
            if r.model is None:
                r.model = row_model(c.ev)
        elif note is None:
            note = "no row holds the call's output (a scorer's or a failed call)"
        if "input" in tokens:
            input_of[c.index] = tokens["input"]
        model, uid = c.ev.get("model"), c.ev.get("uuid")
        out.append(
            ModelCall(
                key=uid if isinstance(uid, str) else f"model@{c.index + 1}",
                seq=seq,
                line=c.index + 1,
                model=model if isinstance(model, str) else None,
                tokens=tokens,
                created_at=iso_ms(c.ev.get("timestamp")),
                note=note,
            )
        )
    return out, input_of
