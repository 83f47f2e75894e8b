"""Model calls from ``token_count`` events: which are calls, their usage, counted once, on the
row of the call (or the compaction's summary row, or none)."""

from __future__ import annotations

from typing import Any

from adfkit._core.rows import as_count
from adfkit._sources.codex.state import _CRow, _Item, _State, _TokenCountDraft
from adfkit._sources.transcript.kit import (
    OPENAI_COUNT_KEYS,
    CallDraft,
    Findings,
    TokenCount,
    as_int,
    bad_counts,
    bad_usage,
    openai_tokens,
    unknown_counts,
)

_COUNT_KEYS = (*OPENAI_COUNT_KEYS, "total_tokens")


def _token_count(st: _State, it: _Item, p: dict[str, Any], fnd: Findings) -> None:
    info = p.get("info")
    if not isinstance(info, dict):
        st.tcs.append(_TokenCountDraft(TokenCount(it.line, it.ts, None, None, None, False), None))
        return
    total_raw = info.get("total_token_usage")
    last_raw = info.get("last_token_usage")
    total = openai_tokens(total_raw) or None
    last = openai_tokens(last_raw) or None
    tt = as_count(total_raw.get("total_tokens")) if isinstance(total_raw, dict) else None
    w = as_int(info.get("model_context_window"))
    if w is not None:
        st.ctx_window = w
    estimate = last is not None and not last.get("input") and not last.get("output")
    if tt is not None:
        is_call = tt > st.prev_total and not estimate
    else:
        is_call = last is not None and not estimate
    usage: dict[str, int] = {}
    unknown: dict[str, Any] = {}  # counts that are not counts, as written: the row rule flags
    bad = sorted({*bad_counts(total_raw, _COUNT_KEYS), *bad_counts(last_raw, _COUNT_KEYS)})
    if bad:
        bad_usage(fnd, it.line, bad)
    if is_call:
        if last is not None and not estimate:
            usage = last
            unknown = unknown_counts(last_raw, "openai")
        elif total is not None and st.tcs:
            prev = next((d.count.total for d in reversed(st.tcs) if d.count.total), None) or {}
            usage = {k: v - prev.get(k, 0) for k, v in total.items()}
            unknown = unknown_counts(total_raw, "openai")
    if tt is not None and tt > st.prev_total:
        st.prev_total = tt
    if st.usage_records:
        is_call = False  # the token_usage_record lines are the calls
    row = _attribute(st, it, f"token_count@{it.line}", usage, unknown) if is_call else None
    st.tcs.append(_TokenCountDraft(TokenCount(it.line, it.ts, total, last, w, is_call), row))


def _attribute(
    st: _State, it: _Item, key: str, usage: dict[str, int], unknown: dict[str, Any]
) -> _CRow | None:
    """A model call's usage counted once: on the open assistant row, else pending (the next
    compaction's summary row takes it, or no row does); the row it went to."""
    row = st.open_asst
    call = CallDraft(key, None, it.line, st.model, usage, it.ts)
    if row is not None and row.tokens is None:
        row.tokens = {**usage, **unknown} if unknown else dict(usage)
        if unknown:
            row.malformed = True
            row.note = "usage holds values that are not token counts"
        st.open_asst = None
        st.pending_call = None
        call.row, call.model = row, row.model
        st.calls.append(call)
    else:
        row = None
        _flush_pending(st)
        st.pending_call = call
    if "input" in usage:
        st.inputs.call(usage["input"])
    return row


def _usage_record(st: _State, it: _Item, p: dict[str, Any], fnd: Findings) -> None:
    """A ``token_usage_record`` (Codex 0.171: one per model call, compaction calls included):
    its ``usage`` is the call's, keyed by its ``response_id``."""
    raw = p.get("usage")
    usage = openai_tokens(raw)
    bad = bad_counts(raw, _COUNT_KEYS)
    if bad:
        bad_usage(fnd, it.line, bad)
    rid = p.get("response_id")
    key = rid if isinstance(rid, str) and rid else f"token_usage_record@{it.line}"
    _attribute(st, it, key, usage, unknown_counts(raw, "openai"))


def _flush_pending(st: _State) -> None:
    """A call no row took stays on no row."""
    if st.pending_call is not None:
        st.calls.append(st.pending_call)
        st.pending_call = None
