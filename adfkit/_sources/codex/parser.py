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
  In a file with ``token_usage_record`` lines (0.171: one per model call, compaction calls
  included) those are the calls instead, keyed by their ``response_id``, and ``token_count``
  events only report totals.
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
  them). ``swept`` = the rest of the window. 0.171 writes the compaction call's answer (the
  summary) as an assistant message just before the ``compacted`` item: that message is the
  call's output (the call ``compaction_response_id`` names), not a row, and its call goes to
  the summary row. ``trigger`` (not recorded by
  Codex): ``auto`` when the compaction's turn has a user message (before or after it: only an
  automatic compaction runs in such a turn); in a turn without one, ``manual`` in files with
  ``context_compacted`` events (the earlier heuristic) and None in 0.171's (an
  ``item_completed`` ``ContextCompaction``; manual and automatic are not told apart); None
  outside turns. ``tokens_before``/``tokens_after`` = input of the last model call
  before the ``compacted`` line and of the first after; ``context_window`` = the latest
  ``model_context_window``.
- **Rollback**: ``thread_rolled_back{num_turns}`` moves the rows of the last *n* user turns of the
  window to ``other_branches`` (``branch-1``...) with a ``rewind`` event sweeping them, like a
  Claude Code rewind.
- ``model`` is the latest ``turn_context.model`` before the row.
"""

from __future__ import annotations

import os
from pathlib import Path

from adfkit._sources.codex.calls import _flush_pending, _usage_record
from adfkit._sources.codex.events import _compacted
from adfkit._sources.codex.records import _UUID_RE, _read, _session_meta
from adfkit._sources.codex.rows import _event, _response_item
from adfkit._sources.codex.state import _Item, _State
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    Findings,
    ParsedTranscript,
    TokenCount,
    final_calls,
    gc_paused,
    number_rows,
    warn_findings,
)


def _build(items: list[_Item], meta: dict[str, str], fnd: Findings, bad: set[int]) -> _State:
    st = _State(usage_records=any(it.type == "token_usage_record" for it in items))
    has_tc = st.usage_records or any(
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
        elif t == "token_usage_record":
            _usage_record(st, it, p, fnd)
        elif t == "session_meta":
            _session_meta(p, meta, it.line, fnd)
    for r in st.rows:
        if r.lines[0] in bad:
            r.malformed = True
            r.note = "non-UTF-8 bytes or lone surrogates replaced"
    return st


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
