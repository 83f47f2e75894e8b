"""Compactions (``compacted`` items, ``context_compacted`` events) with the rows each kept and
swept, and rollbacks (``thread_rolled_back``) as rewinds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adfkit._sources.codex.calls import _flush_pending
from adfkit._sources.codex.content import _message_blocks
from adfkit._sources.codex.state import _CRow, _Item, _State
from adfkit._sources.transcript.kit import (
    EventDraft,
    text_of,
)

SUMMARY_PREFIX = "Another language model started to solve this problem"


def _context_compacted(st: _State, it: _Item) -> None:
    """The event Codex writes after a ``compacted`` item (folded into its compaction), or a
    compaction of its own when no such item came just before."""
    last = st.events[-1] if st.events else None
    if (
        last is not None
        and last.kind == "compaction"
        and "context_compacted_line" not in last.extra
        and (st.rows_since_comp == 0)
    ):
        last.extra["context_compacted_line"] = it.line
        return
    _compaction(st, it, extra={"no_compacted_item": True})


def _compaction(st: _State, it: _Item, **fields: Any) -> None:
    """A compaction event at ``it``: its trigger, the context window, the calls around it."""
    ev = EventDraft(
        "compaction", it.line, it.ts, trigger=_trigger(st), context_window=st.ctx_window, **fields
    )
    st.events.append(ev)
    st.inputs.event(ev)
    if st.turn is not None and not st.turn.has_user:
        st.turn.pending.append(ev)


def _context_compaction_item(st: _State, it: _Item) -> None:
    """Codex 0.171's ``item_completed`` ``ContextCompaction`` after a ``compacted`` item (the
    ``context_compacted`` event is gone). Its turn says no more than that a compaction ran: a
    compaction before the turn's user message is automatic if one comes (``_user_met``), and
    otherwise not told apart from a manual one on disk, so its trigger is unknown, not guessed."""
    last = st.events[-1] if st.events else None
    if last is None or last.kind != "compaction" or "context_compaction_item_line" in last.extra:
        return
    last.extra["context_compaction_item_line"] = it.line
    if last.trigger == "manual" and "context_compacted_line" not in last.extra:
        last.trigger = None


def _trigger(st: _State) -> str | None:
    if st.turn is None:
        return None
    return "auto" if st.turn.has_user else "manual"


def _compacted(st: _State, it: _Item, p: dict[str, Any]) -> None:
    """A ``compacted`` item: its summary row, the rows kept and swept, the event."""
    st.open_asst = None
    msg = p.get("message")
    repl = p.get("replacement_history")
    kept = _Kept(msg if isinstance(msg, str) and msg else None)
    _summary_output(st, p, kept.summary_text)
    if isinstance(repl, list):
        _kept_by_replacement(kept, repl, st.window)
    else:
        _kept_by_default(kept, st.window)
    ids = set(map(id, kept.rows))
    swept = [r for r in st.window if id(r) not in ids]
    srow = _summary_row(st, it, kept)
    st.rows.append(srow)
    st.window = [*kept.rows, srow]
    st.rows_since_comp = 0
    _compaction(
        st,
        it,
        swept=swept,
        preserved=kept.rows,
        summary=srow,
        extra=_compaction_extra(p, repl, kept),
    )


def _summary_output(st: _State, p: dict[str, Any], summary: str | None) -> None:
    """Codex 0.171 writes the compaction call's answer, the summary, as an assistant message
    before the ``compacted`` item. That message is the compaction call's output, not a turn of
    the conversation (no later request holds it as such): it leaves the rows, and its call
    waits for the compaction's summary row. The call is the one ``compaction_response_id``
    names; without it, the call of the last row when that is an assistant message the summary
    holds."""
    rid = p.get("compaction_response_id")
    rid = rid if isinstance(rid, str) and rid else None
    pending = st.pending_call
    if rid is not None and pending is not None and pending.key == rid:
        return  # no message before it (a remote compaction): its call waits already
    call = next((c for c in reversed(st.calls) if c.key == rid), None) if rid else None
    row = call.row if call is not None else _summary_message(st, summary)
    if row is not None and st.window and st.window[-1] is row and row.role == "assistant":
        st.window.pop()
        st.rows = [r for r in st.rows if r is not row]
    elif call is None:
        return
    call = call or next((c for c in reversed(st.calls) if c.row is row), None)
    if call is not None:
        st.calls = [c for c in st.calls if c is not call]
        _flush_pending(st)
        call.row = None
        st.pending_call = call


def _summary_message(st: _State, summary: str | None) -> _CRow | None:
    """The last row when it is an assistant message whose text the summary holds."""
    last = st.window[-1] if st.window else None
    if last is None or last.role != "assistant" or summary is None:
        return None
    text = text_of(last.content).strip()
    return last if text and text in summary else None


@dataclass
class _Kept:
    """What a compaction kept of the window, and what its replacement history said."""

    summary_text: str | None
    rows: list[_CRow] = field(default_factory=list)
    #: the replacement history holds an opaque (remote, encrypted) compaction item
    opaque: bool = False
    #: replacement messages that match no row of the window
    unmatched: int = 0

    @property
    def encrypted(self) -> bool:
        return self.summary_text is None and self.opaque


def _kept_by_replacement(kept: _Kept, repl: list[Any], window: list[_CRow]) -> None:
    """Rows of the window matched by the replacement history's messages (same role and text,
    latest unmatched row first); its user text starting with the summary prefix is the
    summary when the item has none."""
    used: set[int] = set()
    for x in repl:
        if type(x) is not dict:
            continue
        xt = x.get("type")
        if xt in ("compaction", "compaction_summary"):
            kept.opaque = True
            continue
        if xt != "message":
            continue
        role = "assistant" if x.get("role") == "assistant" else "user"
        text = text_of(_message_blocks(x.get("content")))
        if role == "user" and text.startswith(SUMMARY_PREFIX):
            if kept.summary_text is None:
                kept.summary_text = text
            continue
        hit = None
        for row in reversed(window):
            if id(row) not in used and row.role == role and text_of(row.content) == text:
                hit = row
                break
        if hit is None:
            kept.unmatched += 1
        else:
            used.add(id(hit))
            kept.rows.append(hit)


def _kept_by_default(kept: _Kept, window: list[_CRow]) -> None:
    """Without a replacement history: the window's context rows and its typed user messages
    (newest first, up to ~20k tokens at 4 bytes a token, as Codex keeps them)."""
    budget = 20_000 * 4
    for row in reversed(window):
        if row.kind_hint == "context":
            kept.rows.append(row)
        elif row.turn_start and budget > 0:
            budget -= len(text_of(row.content).encode())
            kept.rows.append(row)
    kept.rows.reverse()


def _summary_row(st: _State, it: _Item, kept: _Kept) -> _CRow:
    """The compaction's summary row, with the summarization call's usage if one is pending."""
    text = kept.summary_text
    srow = _CRow(it, "user", [{"type": "text", "text": text}] if text is not None else [], None)
    srow.kind_hint = "compaction_summary"
    srow.uuid = None
    if text is None:
        srow.note = (
            "remote compaction: the summary is encrypted (not readable)"
            if kept.encrypted
            else "compaction without a summary text"
        )
    call = st.pending_call
    if call is not None:
        srow.tokens = dict(call.tokens)
        srow.model = call.model
        call.row = srow
        st.calls.append(call)
        st.pending_call = None
    return srow


def _compaction_extra(p: dict[str, Any], repl: Any, kept: _Kept) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "replacement_history": "absent"
        if repl is None
        else ("list" if isinstance(repl, list) else "other"),
    }
    if kept.unmatched:
        extra["unmatched_replacement_items"] = kept.unmatched
    if kept.opaque:
        extra["remote"] = True
    if kept.encrypted:
        extra["summary_encrypted"] = True
    for k in ("window_number", "window_id", "previous_window_id", "first_window_id"):
        v = p.get(k)
        if isinstance(v, str | int) and not isinstance(v, bool):
            extra[k] = v
    return extra


def _rollback(st: _State, it: _Item, n: int) -> None:
    if n <= 0:
        return
    starts = [i for i, r in enumerate(st.window) if r.turn_start]
    if not starts:
        return
    cut = starts[-n] if n <= len(starts) else starts[0]
    gone = st.window[cut:]
    st.window = st.window[:cut]
    st.open_asst = None
    st.n_branches += 1
    bid = f"branch-{st.n_branches}"
    for r in gone:
        r.branch = bid
    st.events.append(
        EventDraft("rewind", it.line, it.ts, swept=gone, extra={"branch": bid, "num_turns": n})
    )
