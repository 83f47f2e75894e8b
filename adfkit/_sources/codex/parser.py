"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]``).

Reads one rollout read-only, line by line (``.zst`` files as a capped zstd stream), and rebuilds
the conversation as :class:`~adfkit._sources.transcript.kit.TranscriptRow` objects plus compaction
and rollback events, ``token_count`` records and findings. The format reference is
``TRANSCRIPTS.md`` §2; the choices made where it is uncertain:

- **Rows** come from ``response_item`` lines (what the model saw), in line order. ``event_msg``
  ``user_message``/``agent_message`` are used only when a file has no ``message`` response items
  (legacy files). ``developer``/``system`` messages and injected user text (``# AGENTS.md``,
  ``<user_instructions>``, ``<environment_context>``...) are user rows with ``kind_hint="context"``.
- **One call = one assistant row**: the ``reasoning``, assistant ``message`` and ``*_call`` items
  written since the previous model call form one row, placed at its first item; tool outputs are
  their own rows and do not end it; a user/developer message does. In a file without any
  ``token_count`` the row ends at the next non-assistant item instead.
- **Usage**: a ``token_count`` is a model call only when ``total_token_usage.total_tokens`` grew
  (repeats on rate-limit updates are not calls; a ``last_token_usage`` with zero input and output
  is a local estimate, not a call). Its usage is ``last_token_usage`` (or, without it, the
  difference of the totals), counted once: on the open assistant row if there is one; else, when a
  ``compacted`` item comes next, on the compaction's summary row (the summarization call, as ADF
  puts the compaction call's usage on its summary row); else on no row (``ModelCall.seq`` None).
  ``tokens`` map ``input_tokens`` (already including the cached part) -> ``input``,
  ``cached_input_tokens`` -> ``cache_read``, ``output_tokens`` -> ``output``,
  ``reasoning_output_tokens`` -> ``reasoning``; there is no ``cache_write``.
- **Compaction**: each ``compacted`` item is a ``compaction`` event (a following
  ``context_compacted`` event is folded into it; one without a ``compacted`` item is an event of
  its own with nothing swept). A summary row (``kind_hint="compaction_summary"``) is added at the
  ``compacted`` line: ``CompactedItem.message``, else the replacement's user text starting with
  the summary prefix, else (remote compaction) an empty row noted as an encrypted summary.
  ``preserved`` = rows of the current window matched by ``replacement_history`` messages (same role
  and text, latest unmatched row first); without a replacement history, the window's context rows
  and its typed user messages (newest first, up to ~20k tokens at 4 bytes a token, as Codex keeps
  them). ``swept`` = the rest of the window. ``trigger`` (not recorded by Codex) is a heuristic:
  ``manual`` when the compaction is in a turn with no user message yet, ``auto`` when the turn
  has one, None outside turns. ``tokens_before``/``tokens_after`` = input of the last model call
  before the ``compacted`` line and of the first after; ``context_window`` = the latest
  ``model_context_window``.
- **Rollback**: ``thread_rolled_back{num_turns}`` moves the rows of the last *n* user turns of the
  window to ``other_branches`` (``branch-1``...) with a ``rewind`` event sweeping them, like a
  Claude Code rewind.
- ``model`` is the latest ``turn_context.model`` before the row.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from adfkit import schema
from adfkit._base.errors import NotTranscriptError
from adfkit._core.rows import as_count
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    OPENAI_COUNT_KEYS,
    ZSTD_MAGIC,
    CallDraft,
    EventDraft,
    Findings,
    JsonLines,
    ParsedTranscript,
    RowDraft,
    TokenCount,
    TypeCounts,
    as_int,
    bad_counts,
    bad_usage,
    check_head,
    final_calls,
    gc_paused,
    iso_ms,
    iter_lines,
    loads_line,
    number_rows,
    open_lines,
    openai_tokens,
    read_head,
    result_text,
    sessions_frame,
    sniff,
    text_of,
    unknown_counts,
    warn_findings,
)

_WHAT = "Codex rollout"

SUMMARY_PREFIX = "Another language model started to solve this problem"
_CONTEXT_PREFIXES = (
    "# AGENTS.md instructions",
    "<user_instructions>",
    "<environment_context>",
    "<permissions instructions>",
    "<developer_instructions>",
    "<user_shell_command>",
)
TOP_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_COUNT_KEYS = (*OPENAI_COUNT_KEYS, "total_tokens")
#: Newer top-level types seen in protocol code (TRANSCRIPTS.md §2.2): skipped, info only.
NEWER_TOP_TYPES = frozenset(
    {
        "inter_agent_communication",
        "token_usage_record",
        "world_state",
        "security_risk_score",
        "realtime_item",
    }
)
ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "context_compaction",
        "tool_search_call",
        "tool_search_output",
        "additional_tools",
    }
)
_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
_SKIP_ITEMS = frozenset(
    {"ghost_snapshot", "compaction", "compaction_summary", "context_compaction", "additional_tools"}
)
_UUID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


@dataclass
class _Item:
    line: int
    ts: int | None
    type: str
    payload: dict[str, Any]


class _CRow(RowDraft):
    """A row being built; ``turn_start``: a typed user message (a turn a rollback counts)."""

    __slots__ = ("turn_start",)

    def __init__(
        self, it: _Item, role: str, content: list[dict[str, Any]], model: str | None
    ) -> None:
        super().__init__(role, content, it.line, it.ts)
        self.model = model
        i = it.payload.get("id")
        self.uuid = i if isinstance(i, str) else None
        self.turn_start = False


@dataclass(slots=True)
class _Turn:
    """The turn in progress (``task_started`` .. ``task_complete``)."""

    line: int
    #: a typed user message was met in it (a compaction then is automatic)
    has_user: bool = False


@dataclass(slots=True)
class _TokenCountDraft:
    """A ``token_count`` read (``seq`` not set yet) and the row its usage went to."""

    count: TokenCount
    row: _CRow | None


@dataclass
class _State:
    rows: list[_CRow] = field(default_factory=list)
    window: list[_CRow] = field(default_factory=list)
    open_asst: _CRow | None = None
    model: str | None = None
    ctx_window: int | None = None
    turn: _Turn | None = None
    prev_total: int = -1
    last_call_input: int | None = None
    #: a model call not on a row yet: the next compaction's summary row takes it
    pending_call: CallDraft | None = None
    #: compactions waiting for the input of the next model call (``tokens_after``)
    awaiting_after: list[EventDraft] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)
    calls: list[CallDraft] = field(default_factory=list)
    tcs: list[_TokenCountDraft] = field(default_factory=list)
    n_branches: int = 0
    rows_since_comp: int = 0


# --- reading --------------------------------------------------------------------------------


def _read(
    path: Path, max_line_bytes: int, max_decompressed_bytes: int, fnd: Findings
) -> tuple[list[_Item], set[int]]:
    """The rollout's records as items, in line order, and the lines whose bytes were repaired."""
    check_head(path, _WHAT, zst=True)
    items: list[_Item] = []
    unknown = TypeCounts()
    newer = TypeCounts()
    lines = JsonLines(
        path,
        fnd,
        "rollout",
        max_line_bytes=max_line_bytes,
        max_decompressed_bytes=max_decompressed_bytes,
    )
    first = True
    for n, obj in lines:
        t = obj.get("type")
        payload = obj.get("payload")
        if t in TOP_TYPES and type(payload) is dict:
            items.append(_Item(n, iso_ms(obj.get("timestamp")), t, payload))
        elif first and "id" in obj and "timestamp" in obj and t is None:
            items.append(_Item(n, iso_ms(obj.get("timestamp")), "session_meta", obj))  # bare
        elif payload is None and t in ITEM_TYPES:
            items.append(_Item(n, iso_ms(obj.get("timestamp")), "response_item", obj))  # bare
        elif t in NEWER_TOP_TYPES:
            newer.add(t, n)
        else:
            unknown.add(t, n)
        first = False
    if not items and lines.n_parsed:
        raise NotTranscriptError(
            f"JSON lines, but no Codex rollout record (session_meta, response_item, "
            f"event_msg...): not a {_WHAT}",
            path=path,
        )
    unknown.report(
        fnd, "unknown_record_type", "warning", "{n} record(s) of unknown type {t!r} skipped"
    )
    newer.report(
        fnd, "newer_record_type", "info", "{n} record(s) of type {t!r} skipped", at_line=False
    )
    return items, set(lines.repaired)


# --- content --------------------------------------------------------------------------------


def _message_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for c in content if isinstance(content, list) else []:
        if type(c) is not dict:
            continue
        t = c.get("type")
        if t in ("input_text", "output_text", "text", "refusal"):
            txt = c.get("text", c.get("refusal"))
            out.append({"type": "text", "text": txt if isinstance(txt, str) else ""})
        elif t == "input_image":
            url = c.get("image_url")
            out.append(
                {"type": "image_url", "image_url": {"url": url if isinstance(url, str) else ""}}
            )
        else:
            out.append(c)
    return out


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            v = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"_error": "arguments are not valid JSON", "_raw_arguments": raw}
        return v if isinstance(v, dict) else {"_raw_arguments": v}
    return {"_raw_arguments": raw}


def _assistant_block(p: dict[str, Any], line: int) -> dict[str, Any] | None:
    t = p.get("type")
    if t == "reasoning":
        parts: list[str] = []
        for key in ("summary", "content"):
            v = p.get(key)
            if isinstance(v, list):
                parts.extend(
                    x["text"] for x in v if type(x) is dict and isinstance(x.get("text"), str)
                )
        return {"type": "thinking", "thinking": "\n".join(parts)}
    if t == "function_call":
        return {
            "type": "tool_use",
            "id": p.get("call_id"),
            "name": p.get("name"),
            "input": _arguments(p.get("arguments")),
        }
    if t == "custom_tool_call":
        inp = p.get("input")
        return {
            "type": "tool_use",
            "id": p.get("call_id"),
            "name": p.get("name"),
            "input": {"input": inp} if not isinstance(inp, dict) else inp,
        }
    if t in ("local_shell_call", "web_search_call", "tool_search_call"):
        action = p.get("action")
        name = {"local_shell_call": "local_shell", "web_search_call": "web_search"}.get(t, t)
        cid = p.get("call_id") or p.get("id") or f"{name}@{line}"
        args = p.get("arguments")
        inp = action if isinstance(action, dict) else _arguments(args) if args else {}
        return {"type": "tool_use", "id": cid, "name": name, "input": inp}
    return None


def _output_block(p: dict[str, Any]) -> dict[str, Any]:
    out = p.get("output")
    is_error = False
    if isinstance(out, dict):
        is_error = out.get("success") is False
        out = out.get("content", out.get("output"))
    return {
        "type": "tool_result",
        "tool_use_id": p.get("call_id"),
        "content": result_text(out),
        "is_error": is_error,
    }


def _is_context(text: str) -> bool:
    return text.lstrip().startswith(_CONTEXT_PREFIXES)


# --- building -------------------------------------------------------------------------------


def _build(items: list[_Item], meta: dict[str, str], fnd: Findings, bad: set[int]) -> _State:
    st = _State()
    has_tc = any(
        it.type == "event_msg"
        and it.payload.get("type") == "token_count"
        and isinstance(it.payload.get("info"), dict)
        for it in items
    )
    has_messages = any(
        it.type == "response_item" and it.payload.get("type") == "message" for it in items
    )
    for it in items:
        p = it.payload
        t = it.type
        if t == "response_item":
            _response_item(st, it, p, has_tc, fnd)
        elif t == "event_msg":
            _event(st, it, p, fnd, has_messages)
        elif t == "turn_context":
            m = p.get("model")
            if isinstance(m, str):
                st.model = m
                meta.setdefault("model", m)
            c = p.get("cwd")
            if isinstance(c, str):
                meta.setdefault("cwd", c)
        elif t == "compacted":
            _compacted(st, it, p)
        elif t == "session_meta":
            _session_meta(p, meta, it.line, fnd)
    for r in st.rows:
        if r.lines[0] in bad:
            r.malformed = True
            r.note = "non-UTF-8 bytes or lone surrogates replaced"
    return st


def _session_meta(p: dict[str, Any], meta: dict[str, str], line: int, fnd: Findings) -> None:
    if "session_id" in meta:
        fnd.add("extra_session_meta", "info", line, "another session_meta line (fork or replay)")
        return
    for src, dst in (
        ("id", "session_id"),
        ("cwd", "cwd"),
        ("originator", "originator"),
        ("cli_version", "cli_version"),
        ("model_provider", "model_provider"),
        ("timestamp", "started"),
        ("forked_from_id", "forked_from_id"),
    ):
        v = p.get(src)
        if isinstance(v, str):
            meta[dst] = v
    source = p.get("source")
    if isinstance(source, str):
        meta["source"] = source
    elif isinstance(source, dict):
        meta["source"] = str(next(iter(source), "unknown"))
    git = p.get("git")
    if isinstance(git, dict):
        for k, dst in (("branch", "git_branch"), ("commit_hash", "git_commit")):
            v = git.get(k)
            if isinstance(v, str):
                meta[dst] = v


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
                    st.turn.has_user = True
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
    ev = EventDraft(
        "compaction",
        it.line,
        it.ts,
        trigger=_trigger(st),
        tokens_before=st.last_call_input,
        context_window=st.ctx_window,
        extra={"no_compacted_item": True},
    )
    st.events.append(ev)
    st.awaiting_after.append(ev)


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
    row: _CRow | None = None
    if is_call:
        row = st.open_asst
        call = CallDraft(f"token_count@{it.line}", None, it.line, st.model, usage, it.ts)
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
            st.last_call_input = usage["input"]
            for ev in st.awaiting_after:
                ev.tokens_after = usage["input"]
            st.awaiting_after.clear()
    st.tcs.append(_TokenCountDraft(TokenCount(it.line, it.ts, total, last, w, is_call), row))


def _flush_pending(st: _State) -> None:
    """A call no row took stays on no row."""
    if st.pending_call is not None:
        st.calls.append(st.pending_call)
        st.pending_call = None


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
    if isinstance(repl, list):
        _kept_by_replacement(kept, repl, st.window)
    else:
        _kept_by_default(kept, st.window)
    ids = set(map(id, kept.rows))
    swept = [r for r in st.window if id(r) not in ids]
    srow = _summary_row(st, it, kept)
    before = st.last_call_input
    st.rows.append(srow)
    st.window = [*kept.rows, srow]
    st.rows_since_comp = 0
    ev = EventDraft(
        "compaction",
        it.line,
        it.ts,
        trigger=_trigger(st),
        tokens_before=before,
        context_window=st.ctx_window,
        swept=swept,
        preserved=kept.rows,
        summary=srow,
        extra=_compaction_extra(p, repl, kept),
    )
    st.events.append(ev)
    st.awaiting_after.append(ev)


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


def _finish(path: Path, st: _State, meta: dict[str, str], fnd: Findings) -> ParsedTranscript:
    _flush_pending(st)
    rows, branches = number_rows(
        [r for r in st.rows if r.branch is None], [r for r in st.rows if r.branch is not None]
    )
    tcs = [
        TokenCount(
            d.count.line,
            d.count.created_at,
            d.count.total,
            d.count.last,
            d.count.context_window,
            d.count.is_call,
            d.row.seq if d.row is not None else None,
        )
        for d in st.tcs
    ]
    fname = _UUID_RE.search(path.name)
    sid = meta.get("session_id") or (fname.group(1) if fname else None)
    return ParsedTranscript(
        path=str(path),
        format="codex",
        session_id=sid,
        meta=meta,
        rows=rows,
        other_branches=branches,
        events=[ev.final() for ev in st.events],
        findings=fnd.done(),
        calls=final_calls(st.calls, unattributed="usage not attributed to a row"),
        token_counts=tcs,
    )


# --- public ---------------------------------------------------------------------------------


def parse_codex(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    warn: bool = True,
) -> ParsedTranscript:
    """Parse one Codex CLI rollout (``rollout-*.jsonl`` or ``rollout-*.jsonl.zst``).

    :param path: the rollout file.
    :param max_line_bytes: longer lines are skipped with a ``huge_line`` finding.
    :param max_decompressed_bytes: a ``.zst`` file is read up to this many decompressed bytes;
        past it the rest is ignored with a ``decompressed_size_cap`` finding.
    :param warn: emit one :class:`adfkit.AdfWarning` when there are warning- or error-level
        findings.
    :raises NotTranscriptError: the file is empty, binary, an ``.adf``, a Claude Code transcript,
        or JSON lines of another kind.

    Examples
    --------
    >>> t = parse_codex(next(Path("sample_agents/codex").rglob("rollout-*.jsonl")), warn=False)
    >>> t.format
    'codex'
    """
    p = Path(path).expanduser()
    fnd = Findings()
    meta: dict[str, str] = {}
    with gc_paused():
        items, repaired = _read(p, max_line_bytes, max_decompressed_bytes, fnd)
        st = _build(items, meta, fnd, repaired)
        out = _finish(p, st, meta, fnd)
    if warn:
        warn_findings(str(p), out.findings)
    return out


def list_codex_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Codex rollouts under ``folder`` (``~/.codex``, its ``sessions`` folder or a date folder),
    searched recursively. One row per session, newest first; when both ``x.jsonl`` and
    ``x.jsonl.zst`` exist the plain file is listed.

    Columns: ``path`` (str), ``session_id`` (str: ``session_meta.id``, else the uuid in the file
    name), ``cwd``, ``model`` (the first ``turn_context.model``), ``cli_version``, ``originator``
    (str or None), ``size_bytes`` (int, on disk), ``modified`` (datetime64[ns, UTC]),
    ``compressed`` (bool), ``error`` (str or None: why the first lines could not be read).

    Examples
    --------
    >>> df = list_codex_sessions("sample_agents/codex")
    >>> list(df.columns[:3])
    ['path', 'session_id', 'cwd']
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of Codex sessions", path=root)
    files = sorted(set(root.rglob("rollout-*.jsonl")) | set(root.rglob("rollout-*.jsonl.zst")))
    plain = {f for f in files if f.name.endswith(".jsonl")}
    recs: list[dict[str, Any]] = []
    for f in files:
        if (f.name.endswith(".zst") and f.with_name(f.name[:-4]) in plain) or f.is_dir():
            continue  # a FIFO or device is listed, with why it cannot be read in ``error``
        try:
            st = f.stat()
        except OSError:
            continue
        info, err = _peek(f)
        m = _UUID_RE.search(f.name)
        recs.append(
            {
                "path": str(f),
                "session_id": info.get("session_id") or (m.group(1) if m else None),
                "cwd": info.get("cwd"),
                "size_bytes": int(st.st_size),
                "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
                "model": info.get("model"),
                "cli_version": info.get("cli_version"),
                "originator": info.get("originator"),
                "compressed": f.name.endswith(".zst"),
                "error": err,
            }
        )
    return sessions_frame(recs, schema.CODEX_SESSIONS)


def _peek(f: Path, max_lines: int = 200) -> tuple[dict[str, str], str | None]:
    info: dict[str, str] = {}
    try:
        head = read_head(f)
        if f.name.endswith(".zst"):
            if not head.startswith(ZSTD_MAGIC):
                return info, "not zstd-compressed data"
        else:
            sniff(f, head, _WHAT)
        stream, _raw, fh = open_lines(f, 64 << 20)
        try:
            for _, data, _c in iter_lines(stream, 8 << 20):
                if max_lines <= 0 or "model" in info:
                    break
                max_lines -= 1
                if data is None:
                    continue
                obj, _p = loads_line(data)
                if not isinstance(obj, dict):
                    continue
                p = obj.get("payload")
                if not isinstance(p, dict):
                    continue
                if obj.get("type") == "session_meta" and "session_id" not in info:
                    _session_meta(p, info, 0, Findings())
                elif obj.get("type") == "turn_context" and isinstance(p.get("model"), str):
                    info["model"] = p["model"]
        finally:
            fh.close()
    except NotTranscriptError as e:
        return info, e.detail
    except OSError as e:
        return info, f"cannot read ({e.strerror})"
    return info, None
