"""Rows from response items and events in line order: one row per model call, tool outputs and
user messages their own rows."""

from __future__ import annotations

from typing import Any

from adfkit._sources.codex.calls import _flush_pending, _token_count
from adfkit._sources.codex.content import (
    _OUTPUT_TYPES,
    _SKIP_ITEMS,
    _assistant_block,
    _is_context,
    _message_blocks,
    _output_block,
)
from adfkit._sources.codex.events import _context_compacted, _context_compaction_item, _rollback
from adfkit._sources.codex.state import _CRow, _Item, _State, _Turn
from adfkit._sources.transcript.kit import (
    Findings,
    as_int,
)


def _add_row(st: _State, row: _CRow) -> None:
    _flush_pending(st)  # a call with no row of its own stays unattributed
    st.rows.append(row)
    st.window.append(row)
    st.rows_since_comp += 1


def _response_item(st: _State, it: _Item, p: dict[str, Any], has_tc: bool, fnd: Findings) -> None:
    pt = p.get("type")
    if pt == "message":
        role = p.get("role")
        blocks = _message_blocks(p.get("content"))
        if role == "assistant":
            _asst(st, it, blocks)
            return
        st.open_asst = None
        row = _CRow(it, "user", blocks, None)
        if role in ("developer", "system"):
            row.kind_hint = "context"
        elif role != "user":
            row.malformed = True
            row.note = f"message role {str(role)[:20]!r}"
        else:
            first = next((b["text"] for b in blocks if b.get("type") == "text"), "")
            if _is_context(first):
                row.kind_hint = "context"
            else:
                row.turn_start = True
                if st.turn is not None:
                    _user_met(st.turn)
        _add_row(st, row)
        return
    if pt in _OUTPUT_TYPES or pt == "local_shell_call_output":
        if not has_tc:
            st.open_asst = None
        _add_row(st, _CRow(it, "user", [_output_block(p)], None))
        return
    blk = _assistant_block(p, it.line)
    if blk is not None:
        _asst(st, it, [blk])
        return
    if pt in _SKIP_ITEMS:
        return
    fnd.add(
        "unknown_item_type", "warning", it.line, f"response_item of type {str(pt)[:40]!r} skipped"
    )


def _user_met(turn: _Turn) -> None:
    """The turn's typed user message: a compaction earlier in the turn ran before it, which
    only an automatic compaction does (a manual one is a turn of its own)."""
    turn.has_user = True
    for ev in turn.pending:
        ev.trigger = "auto"
    turn.pending.clear()


def _item_type(p: dict[str, Any]) -> Any:
    item = p.get("item")
    return item.get("type") if isinstance(item, dict) else None


def _asst(st: _State, it: _Item, blocks: list[dict[str, Any]]) -> None:
    row = st.open_asst
    if row is None:
        row = _CRow(it, "assistant", blocks, st.model)
        st.open_asst = row
        _add_row(st, row)
        return
    row.content.extend(blocks)
    row.lines.append(it.line)


def _event(st: _State, it: _Item, p: dict[str, Any], fnd: Findings, has_messages: bool) -> None:
    et = p.get("type")
    if et == "token_count":
        _token_count(st, it, p, fnd)
    elif et in ("task_started", "turn_started"):
        st.turn = _Turn(it.line)
        w = as_int(p.get("model_context_window"))
        if w is not None:
            st.ctx_window = w
    elif et in ("task_complete", "turn_complete", "turn_aborted"):
        st.turn = None
        st.open_asst = None
    elif et == "context_compacted":
        _context_compacted(st, it)
    elif et == "item_completed" and _item_type(p) == "ContextCompaction":
        _context_compaction_item(st, it)
    elif et == "thread_rolled_back":
        _rollback(st, it, as_int(p.get("num_turns")) or 0)
    elif not has_messages and et in ("user_message", "agent_message"):
        msg = p.get("message")
        blocks = [{"type": "text", "text": msg if isinstance(msg, str) else ""}]
        if et == "agent_message":
            _asst(st, it, blocks)
        else:
            st.open_asst = None
            row = _CRow(it, "user", blocks, None)
            row.turn_start = True
            row.note = "from event_msg (no response items in this file)"
            _add_row(st, row)
