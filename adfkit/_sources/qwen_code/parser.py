"""Qwen Code chats (``~/.qwen/projects/<project>/chats/<session id>.jsonl``).

Reads one chat file read-only, line by line, into
:class:`~adfkit._sources.transcript.kit.TranscriptRow` objects, one compaction event per
``chat_compression`` record, the model calls and findings; a subagent's file
(``<project>/subagents/<session id>/agent-<name>-<tool call id>.jsonl``, same records with
``isSidechain``) is read the same way into ``subagents``. What Qwen Code 0.24 writes (checked
on files its release wrote against a recording model server, tests/fixtures/recorded):

- **Records.** One JSON object a line with ``uuid``, ``parentUuid``, ``sessionId``,
  ``timestamp``, ``type`` (``user``, ``assistant``, ``tool_result``, ``system``), ``cwd``,
  ``version``. A ``message`` is in the Gemini API's shape: ``role`` (``user``/``model``) and
  ``parts`` (``text``, ``thought``, ``functionCall`` {``id``, ``name``, ``args``},
  ``functionResponse`` {``id``, ``name``, ``response``}). Rows follow the file's order (a resume
  with ``--continue`` appends to the same file).
- **Calls.** An ``assistant`` record is one model call, its ``usageMetadata``
  (``promptTokenCount``, the whole prompt, cached part included; ``candidatesTokenCount``;
  ``cachedContentTokenCount``; ``thoughtsTokenCount``; ``totalTokenCount``) on it. A subagent
  writes a reply's text and its function calls as two records, the usage on the first: records
  without usage right after an assistant row are merged into it.
- **Compaction.** A ``system`` record of subtype ``chat_compression`` holds ``info``
  (``originalTokenCount``, ``newTokenCount``, ``compressionStatus``, 1 = compressed,
  ``triggerReason``: ``token_limit`` automatic, ``manual`` for ``/compress``,
  ``payload_overflow``/``image_overflow`` automatic too) and ``compressedHistory``, the whole
  history that replaces the conversation: the summary as a user message, the model's
  acknowledgement, files embedded again, then the kept tail. The summary and the new messages
  are rows, displayed (``ord``) before the kept tail as Qwen Code sends them (the tail is the
  rows whose blocks the compressed history repeats, ``preserved``); the rest of the window is
  swept. The compaction call writes no assistant record: its usage is the
  ``ui_telemetry`` ``qwen-code.api_response`` event of the main agent (``prompt_id`` without an
  agent part) just before the compaction record, put on the summary row.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._core.rows import as_count
from adfkit._sources.qwen_code.files import RECORD_TYPES, subagent_files
from adfkit._sources.transcript.gemini_parts import blocks, json_value
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_LINE_BYTES,
    CallInputs,
    EventDraft,
    Findings,
    JsonLines,
    ParsedTranscript,
    RowDraft,
    TypeCounts,
    check_head,
    final_calls,
    gc_paused,
    iso_ms,
    mapped_tokens,
    number_rows,
    own_call,
    warn_findings,
)

FORMAT = "qwen_code"
_WHAT = "Qwen Code chat"
#: ``usageMetadata`` keys -> ADF token keys (the prompt count includes the cached part).
USAGE_KEYS = {
    "promptTokenCount": "input",
    "candidatesTokenCount": "output",
    "cachedContentTokenCount": "cache_read",
    "thoughtsTokenCount": "reasoning",
    "totalTokenCount": "total",
}
#: ``triggerReason`` -> adfkit's trigger.
TRIGGERS = {
    "token_limit": "auto",
    "payload_overflow": "auto",
    "image_overflow": "auto",
    "manual": "manual",
}
#: ``compressionStatus`` of a compression that replaced the history (CompressionStatus).
COMPRESSED = 1
#: The note of a row the compressed history adds (an acknowledgement, files embedded again).
_WRITTEN = "written by the compaction"
_UUID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


class _QRow(RowDraft):
    """A row being built from one record."""

    __slots__ = ()

    def __init__(self, rec: dict[str, Any], line: int, role: str, content: list[Any]) -> None:
        super().__init__(role, content, line, iso_ms(rec.get("timestamp")))
        u, p = rec.get("uuid"), rec.get("parentUuid")
        self.uuid = u if isinstance(u, str) else None
        self.parent_uuid = p if isinstance(p, str) else None
        self.sidechain = rec.get("isSidechain") is True


@dataclass
class _State:
    rows: list[_QRow] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)
    window: list[_QRow] = field(default_factory=list)
    inputs: CallInputs = field(default_factory=CallInputs)
    #: Tokens and model of the main agent's last telemetry call no assistant record took.
    pending: tuple[dict[str, int], str | None] | None = None
    meta: dict[str, str] = field(default_factory=dict)
    #: The context window the last reply was given (``contextWindowSize``).
    window_size: int | None = None
    #: Per compaction: the rows it writes and the rows it kept (displayed after them).
    ahead: list[tuple[list[_QRow], list[_QRow]]] = field(default_factory=list)


# --- content ---------------------------------------------------------------------------------


def _sig(b: dict[str, Any]) -> str:
    return json.dumps(b, sort_keys=True)


# --- records --------------------------------------------------------------------------------


def _message(rec: dict[str, Any], line: int, st: _State, fnd: Findings) -> None:
    m = json_value(rec.get("message"))
    if type(m) is not dict:
        fnd.add("bad_record", "warning", line, "record without a message object; skipped")
        return
    content = blocks(m.get("parts"))
    t = rec.get("type")
    usage = json_value(rec.get("usageMetadata"))
    prev = st.rows[-1] if st.rows else None
    if t == "assistant" and usage is None and prev is not None and prev.role == "assistant":
        prev.content.extend(content)  # a subagent's function calls, after its text
        prev.lines.append(line)
        return
    row = _QRow(rec, line, "assistant" if t == "assistant" else "user", content)
    if t == "assistant":
        model = rec.get("model")
        row.model = model if isinstance(model, str) else None
        tokens = mapped_tokens(usage, USAGE_KEYS)
        row.tokens = dict(tokens)
        own_call(row, tokens, row.model)
        st.pending = None
        if "input" in tokens:
            st.inputs.call(tokens["input"])
        window = as_count(rec.get("contextWindowSize"))
        if window is not None:
            st.window_size = window
    elif rec.get("subtype") == "notification":
        row.kind_hint = "message"
        row.note = "notification"
    st.rows.append(row)
    st.window.append(row)


def _telemetry(rec: dict[str, Any], st: _State) -> None:
    """A ``qwen-code.api_response`` of the main agent: a call whose record may follow."""
    payload = json_value(rec.get("systemPayload"))
    ev = payload.get("uiEvent") if isinstance(payload, dict) else None
    if not isinstance(ev, dict) or ev.get("event.name") != "qwen-code.api_response":
        return
    pid = ev.get("prompt_id")
    if isinstance(pid, str) and any(pid.split("#")[1:-1]):
        return  # a subagent's call (its own file has it)
    keys = {
        "input_token_count": "input",
        "output_token_count": "output",
        "cached_content_token_count": "cache_read",
        "thoughts_token_count": "reasoning",
        "total_token_count": "total",
    }
    model = ev.get("model")
    st.pending = (mapped_tokens(ev, keys), model if isinstance(model, str) else None)


def _compression(rec: dict[str, Any], line: int, st: _State, fnd: Findings) -> None:
    """A ``chat_compression`` record: a compaction event, its summary row, the rows it wrote
    again, and the window it left (a compression that was not applied is a finding)."""
    payload = json_value(rec.get("systemPayload"))
    info = _applied(payload, line, fnd)
    if info is None:
        return
    history = json_value(payload.get("compressedHistory"))
    history = history if isinstance(history, list) else []
    contents = [(c.get("role"), blocks(c.get("parts"))) for c in history if isinstance(c, dict)]
    summary, rest = (contents[0][1], contents[1:]) if contents else ([], [])
    srow = _summary_row(rec, line, st, summary)
    preserved = _preserved(st.window, rest)
    new_rows = _written_again(rec, line, rest, preserved)
    kept = set(map(id, preserved))
    reason = info.get("triggerReason")
    ev = EventDraft(
        "compaction",
        line,
        iso_ms(rec.get("timestamp")),
        srow.uuid,
        trigger=TRIGGERS.get(reason, reason) if isinstance(reason, str) else None,
        pre_tokens=as_count(info.get("originalTokenCount")),
        post_tokens=as_count(info.get("newTokenCount")),
        swept=[r for r in st.window if id(r) not in kept],
        preserved=preserved,
        summary=srow,
        extra={"triggerReason": reason} if isinstance(reason, str) else {},
        context_window=st.window_size,
    )
    st.inputs.event(ev)
    st.events.append(ev)
    st.rows += [srow, *new_rows]
    st.window = [srow, *new_rows, *preserved]
    st.ahead.append(([srow, *new_rows], preserved))


def _applied(payload: Any, line: int, fnd: Findings) -> dict[str, Any] | None:
    """The ``info`` of a compression that was applied; None (and a finding) otherwise."""
    info = payload.get("info") if isinstance(payload, dict) else None
    if not isinstance(info, dict):
        fnd.add("bad_compression", "warning", line, "chat_compression without info; skipped")
        return None
    status = info.get("compressionStatus")
    if status != COMPRESSED:
        fnd.add(
            "compression_not_applied",
            "info",
            line,
            f"chat_compression with compressionStatus {status!r}: the history was kept",
        )
        return None
    return info


def _summary_row(
    rec: dict[str, Any], line: int, st: _State, summary: list[dict[str, Any]]
) -> _QRow:
    """The summary's row, carrying the compaction call's usage when its telemetry came
    before (said unknown otherwise)."""
    srow = _QRow(rec, line, "user", summary)
    srow.kind_hint = "compaction_summary"
    if st.pending is not None:
        tokens, model = st.pending
        srow.tokens, srow.model = dict(tokens), model
        own_call(srow, tokens, model)
        st.pending = None
    else:
        srow.note = "the compaction call's usage is not in the file"
    return srow


def _preserved(window: list[_QRow], rest: list[tuple[Any, list[Any]]]) -> list[_QRow]:
    """The rows of the window the compressed history kept (every block of theirs is in it)."""
    kept_sigs = {_sig(b) for _r, bs in rest for b in bs}
    return [
        r
        for r in window
        if r.content
        and r.note != _WRITTEN
        and r.kind_hint != "compaction_summary"
        and all(_sig(b) in kept_sigs for b in r.content)
    ]


def _written_again(
    rec: dict[str, Any], line: int, rest: list[tuple[Any, list[Any]]], preserved: list[_QRow]
) -> list[_QRow]:
    """A row per entry of the compressed history after the summary that no preserved row
    holds: sent as messages of the conversation (a user message of files embedded again; the
    model's acknowledgement Qwen Code writes itself, no model call: a notice)."""
    old_sigs = {_sig(b) for r in preserved for b in r.content}
    new_rows = []
    for role, bs in rest:
        if bs and not all(_sig(b) in old_sigs for b in bs):
            row = _QRow(rec, line, "assistant" if role == "model" else "user", bs)
            row.note = _WRITTEN
            if role == "model":
                row.kind_hint = "notice"
            new_rows.append(row)
    return new_rows


def _record(rec: dict[str, Any], line: int, st: _State, fnd: Findings, unknown: TypeCounts) -> None:
    t = rec.get("type")
    if t not in RECORD_TYPES:
        unknown.add(t, line)
        return
    if t != "system":
        _message(rec, line, st, fnd)
    elif rec.get("subtype") == "chat_compression":
        _compression(rec, line, st, fnd)
    elif rec.get("subtype") == "ui_telemetry":
        _telemetry(rec, st)
    for k in ("cwd", "version", "gitBranch"):
        v = rec.get(k)
        if isinstance(v, str) and v:
            st.meta.setdefault("agent_version" if k == "version" else k, v)


def _parse_file(path: Path, max_line_bytes: int) -> tuple[ParsedTranscript, str | None]:
    check_head(path, _WHAT)
    fnd = Findings()
    st = _State()
    unknown = TypeCounts()
    sid: str | None = None
    agent: dict[str, str] = {}
    n_records = 0
    for n, rec in JsonLines(path, fnd, "record", max_line_bytes=max_line_bytes):
        n_records += 1
        s = rec.get("sessionId")
        if sid is None and isinstance(s, str):
            sid = s
        for k in ("agentId", "agentName"):
            if isinstance(rec.get(k), str):
                agent.setdefault(k, rec[k])
        _record(rec, n, st, fnd, unknown)
    if n_records == 0:
        raise NotTranscriptError("no complete JSON record: not a Qwen Code chat", path=path)
    unknown.report(fnd, "unknown_record_type", "warning", _unknown)
    rows, _ = number_rows(st.rows, [])
    _display_ahead(st, rows)
    calls = [r.call for r in st.rows if r.call is not None]
    if sid is None:
        m = _UUID_RE.search(path.name)
        sid = m.group(1) if m else None
    parsed = ParsedTranscript(
        path=str(path),
        format=FORMAT,
        session_id=sid,
        meta=st.meta,
        rows=rows,
        events=[ev.final() for ev in st.events],
        findings=fnd.done(),
        calls=final_calls(calls),
    )
    if agent.get("agentId"):
        aid = agent["agentId"]
        parsed.agent_id = aid
        name = agent.get("agentName", "")
        parsed.parent_tool_use_id = aid.removeprefix(f"{name}-") if name else None
    return parsed, sid


def _display_ahead(st: _State, rows: list[Any]) -> None:
    """Qwen Code sends a compaction's summary and the messages it adds before the tail it
    kept, which was written before them: those rows are displayed (``ord``) right before the
    first kept row."""
    for written, kept in st.ahead:
        if kept:
            first = min(r.seq for r in kept)
            for r in written:
                rows[r.seq - 1].ord = first - 1


def _unknown(n: int, t: str) -> str:
    return f"{n} record{'' if n == 1 else 's'} of unknown type {t!r} not read"


def parse_qwen(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    warn: bool = True,
) -> ParsedTranscript:
    """Parse one Qwen Code chat file, and its subagents' files beside it.

    :param path: the chat's ``.jsonl`` file.
    :param max_line_bytes: longer lines are skipped with a ``huge_line`` finding.
    :param warn: emit one :class:`adfkit.AdfWarning` when there are warning- or error-level
        findings.
    :raises NotTranscriptError: the file is empty, binary or holds no JSON record.
    """
    p = Path(path).expanduser()
    with gc_paused():
        out, sid = _parse_file(p, max_line_bytes)
        for f in subagent_files(p, sid):
            try:
                sub, _ = _parse_file(f, max_line_bytes)
            except NotTranscriptError:
                continue
            sub.parent_agent_id = None
            out.subagents.append(sub)
    if warn:
        warn_findings(str(p), out.findings)
    return out
