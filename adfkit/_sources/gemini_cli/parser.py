"""Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-*.jsonl``).

Reads a session's files read-only, line by line, into
:class:`~adfkit._sources.transcript.kit.TranscriptRow` objects, one compaction event per
compression, the model calls and findings; a subagent's chat (``chats/<session id>/*.jsonl``)
is read the same way into ``subagents``. What Gemini CLI 0.61 writes (chatRecordingService.ts;
checked on files its release wrote against a recording model server, tests/fixtures/recorded):

- **Lines.** The session header (``sessionId``, ``projectHash``, ``startTime``, ``kind``), then
  message records (``id``, ``timestamp``, ``type``: ``user``, ``gemini``, ``info``, ``error``,
  ``warning``; ``content``: a string or Gemini API ``parts``), patches ``{"$set": {...}}`` and
  ``{"$rewindTo": id}``. A record whose ``id`` is already in the list replaces that message
  (a reply is written again with its ``toolCalls``, its ``tokens`` once known).
- **Calls.** A ``gemini`` record with ``tokens`` is one model call: ``input`` (the whole prompt,
  cached part included), ``output``, ``cached``, ``thoughts``, ``tool`` (tool-use prompt
  tokens), ``total``. Tool calls are its ``toolCalls`` (``id``, ``name``, ``args``); their
  results are the next ``user`` record's ``functionResponse`` parts. A call id is read as the
  model gave it and Gemini CLI sends it (the file writes ``<tool>__<id>``: :func:`_call_id`).
- **The message list.** ``{"$set": {"messages": [...]}}`` replaces the whole list with the
  history Gemini CLI holds (``updateMessagesFromHistory``): at the first call of a process (the
  session context message, regenerated under a fixed id), at each resume (0.61 sends a resumed
  chat's tool results twice, then four times...: the list holds them, and adfkit reads what
  the list holds), and at a compression. Each message of the list is matched to a row of the
  window: the same id and content (a row kept), else the same content (a kept row the list
  copied under a new id), else the same id (the row's content rewritten: it holds the last
  version). Messages matched by nothing are new rows, displayed (``ord``) where the list puts
  them; rows of the window matched by nothing left it.
- **Compaction.** A ``$set`` that drops rows is a compaction: its new user message holding a
  ``<state_snapshot>`` is the summary (none: a truncation, ``summarises`` False), the model's
  "Got it" that follows it is a notice (Gemini CLI writes it, no call), the rest of the list is
  the kept tail. The file holds no trigger: one made in the middle of a turn (after a prompt or
  a reply with tool calls, before the next reply) can only be automatic (``/compress`` is typed
  between turns), others are NA. The two calls of a compression (the summary and its check)
  leave no record and no usage: NA. A ``$set`` that replaces tool outputs with a
  ``<tool_output_masked>`` preview (tool output masking) is a microcompaction: the rows keep
  their outputs, the window holds them cleared. ``$rewindTo`` takes the rows from that
  message on out of the conversation (an abandoned branch,
  :meth:`~TranscriptSource.branches`).
- **Resumes.** A resumed process first writes, as a new session would, its own header and a
  ``$set`` of the list holding only the session context into the file named by the minute it
  started; then it takes up the session (``$set`` of ``sessionId``, then the whole list) in
  the session's first file. Started in another minute, its header and context make a file of
  its own (``session-<minute>-<id>.jsonl``, same ``sessionId``); in the first file's minute,
  they are appended to the first file. The session's files are read together (the first one
  first); a further file whose messages are all in the list already adds nothing
  (``resume_stub``, info), and a header once the session has messages opens what a stub holds:
  a ``$set`` of the list before the resume's ``sessionId`` is not the conversation's (skipped,
  ``resume_stub``; read as the list, the chat's rows left it and came back as new rows).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adfkit._base.errors import CorruptFileError, NotTranscriptError
from adfkit._sources.gemini_cli.files import (
    header,
    is_header,
    is_message,
    project_path,
    session_files,
    subagent_files,
)
from adfkit._sources.transcript.gemini_parts import blocks
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_LINE_BYTES,
    CallInputs,
    EventDraft,
    Findings,
    JsonLines,
    ParsedTranscript,
    RowDraft,
    check_head,
    final_calls,
    gc_paused,
    iso_ms,
    mapped_tokens,
    number_rows,
    own_call,
    tool_input,
    warn_findings,
)

FORMAT = "gemini_cli"
_WHAT = "Gemini CLI chat"
#: ``tokens`` keys (chatRecordingTypes.ts ``TokensSummary``) -> ADF token keys.
TOKEN_KEYS = {
    "input": "input",
    "output": "output",
    "cached": "cache_read",
    "thoughts": "reasoning",
    "tool": "tool_prompt",
    "total": "total",
}
#: What opens the session context message Gemini CLI writes first (environmentContext.ts).
CONTEXT = "<session_context>"
#: What a masked tool output opens with (toolOutputMaskingService.ts MASKING_INDICATOR_TAG).
MASKED = "<tool_output_masked>"
#: What marks a compression's summary (chatCompressionService: getCompressionPrompt).
SNAPSHOT = "<state_snapshot>"
#: Findings that mean a complete line could not be read: the message list after it is unknown.
_LOST = ("bad_json", "huge_line", "too_many_containers", "not_an_object")


class _GRow(RowDraft):
    """A row being built from one message."""

    __slots__ = ("mid", "mtype", "sig", "anchor", "before")

    def __init__(self, msg: dict[str, Any], line: int) -> None:
        t = msg.get("type")
        super().__init__("assistant" if t == "gemini" else "user", [], line, None)
        self.created_at = iso_ms(msg.get("timestamp"))
        self.mid: str = msg["id"]
        self.mtype = t
        self.uuid = self.mid
        self.sig = ""
        #: The row a new row of a ``$set`` list follows there, or (first in the list) the
        #: kept row it goes before; None both: appended.
        self.anchor: _GRow | None = None
        self.before: _GRow | None = None
        self.set_content(msg)

    def set_content(self, msg: dict[str, Any]) -> None:
        self.content = message_blocks(msg)
        self.sig = _sig(self.mtype, self.content)
        if self.mtype == "user" and _text(self.content).startswith(CONTEXT):
            self.kind_hint = "context"  # sent as the conversation's first message


def message_blocks(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """A message record's ADF blocks: its ``content`` parts, then (a reply written with its
    ``toolCalls`` beside a text) a ``tool_use`` per call its parts do not hold, and its
    thoughts (``thoughts``: subject and description) as thinking.

    Examples
    --------
    >>> message_blocks({"type": "gemini", "content": "Looking.",
    ...                 "toolCalls": [{"id": "c1", "name": "ls", "args": {"p": "."}}]})
    [{'type': 'text', 'text': 'Looking.'}, {'type': 'tool_use', 'id': 'c1', 'name': 'ls', \
'input': {'p': '.'}}]
    """
    out: list[dict[str, Any]] = []
    thoughts = msg.get("thoughts") if msg.get("type") == "gemini" else None
    for t in thoughts if isinstance(thoughts, list) else []:
        if isinstance(t, dict):
            text = "\n".join(str(t[k]) for k in ("subject", "description") if t.get(k))
            if text:
                out.append({"type": "thinking", "thinking": text})
    content = msg.get("content")
    out += blocks([_as_sent(p) for p in content] if isinstance(content, list) else content)
    calls = msg.get("toolCalls") if msg.get("type") == "gemini" else None
    have = {b.get("id") for b in out if b["type"] == "tool_use"}
    for c in calls if isinstance(calls, list) else []:
        if isinstance(c, dict) and (cid := _call_id(c)) not in have:
            out.append(
                {
                    "type": "tool_use",
                    "id": cid,
                    "name": c.get("name"),
                    "input": tool_input(c.get("args")),
                }
            )
    return out


def _call_id(f: dict[str, Any]) -> Any:
    """A tool call's id as the model gave it and Gemini CLI sends it back: the file writes
    ``<tool>__<id>``, and geminiChat.ts ``stripToolCallIdPrefixes`` takes the prefix off
    before each request (the compression calls alone are sent the prefixed ids).

    Examples
    --------
    >>> _call_id({"id": "read_file__call_1", "name": "read_file"}), _call_id({"id": "x"})
    ('call_1', 'x')
    """
    cid, name = f.get("id"), f.get("name")
    name = (name.strip() if isinstance(name, str) else "") or "generic_tool"
    if isinstance(cid, str) and cid.startswith(f"{name}__"):
        return cid[len(name) + 2 :]
    return cid


def _as_sent(p: Any) -> Any:
    """A part with its call id as sent (:func:`_call_id`)."""
    if type(p) is not dict:
        return p
    for k in ("functionCall", "functionResponse"):
        f = p.get(k)
        if isinstance(f, dict) and "id" in f:
            return {**p, k: {**f, "id": _call_id(f)}}
    return p


def _sig(mtype: Any, content: list[dict[str, Any]]) -> str:
    """What makes two messages the same: the type and the blocks but thinking (a ``$set``
    list holds a reply's parts without its thoughts)."""
    kept = [b for b in content if b.get("type") != "thinking"]
    return json.dumps([mtype, kept], sort_keys=True)


@dataclass
class _State:
    path: Path
    rows: list[_GRow] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)
    #: The message list as Gemini CLI holds it now, in its order.
    window: list[_GRow] = field(default_factory=list)
    inputs: CallInputs = field(default_factory=CallInputs)
    meta: dict[str, str] = field(default_factory=dict)
    #: Whether a turn is going on: the last record was a prompt or a reply with tool calls.
    in_turn: bool = False
    notices: int = 0
    #: Rows a ``$rewindTo`` took out of the conversation, and how many rewinds.
    abandoned: list[_GRow] = field(default_factory=list)
    branch: int = 0
    #: A process started (a ``$set`` of the list that is no compaction nor masking): its first
    #: call is the next one; those first calls.
    new_process: bool = False
    first_calls: list[_GRow] = field(default_factory=list)
    #: A resumed process's own header came, its ``sessionId`` not yet (module docstring).
    resuming: bool = False

    def last_with(self, mid: str, mtype: Any) -> _GRow | None:
        for r in reversed(self.window):
            if r.mid == mid and r.mtype == mtype:
                return r
        return None


# --- records --------------------------------------------------------------------------------


def _message(msg: dict[str, Any], line: int, st: _State) -> None:
    t = msg.get("type")
    if t not in ("user", "gemini"):
        st.notices += 1  # info, error, warning: shown to the user, never sent to the model
        return
    row = st.last_with(msg["id"], t)
    if row is None:
        row = _GRow(msg, line)
        st.rows.append(row)
        st.window.append(row)
    else:  # the message written again (its tool calls, its tokens)
        row.set_content(msg)
        row.lines.append(line)
    if t == "gemini":
        _reply(msg, row, st)
        st.in_turn = bool(msg.get("toolCalls"))
    else:
        st.in_turn = True


def _reply(msg: dict[str, Any], row: _GRow, st: _State) -> None:
    model = msg.get("model")
    if isinstance(model, str):
        row.model = model
    tokens = mapped_tokens(msg.get("tokens"), TOKEN_KEYS)
    if not tokens:
        return
    first = row.call is None
    row.tokens = dict(tokens)
    if first:
        own_call(row, tokens, row.model)
        if st.new_process:
            st.first_calls.append(row)
            st.new_process = False
        if "input" in tokens:
            st.inputs.call(tokens["input"])
    elif row.call is not None:
        row.call.tokens, row.call.model = tokens, row.model


def _match(
    msgs: list[dict[str, Any]], window: list[_GRow]
) -> tuple[list[_GRow | None], list[_GRow]]:
    """Each message of a ``$set`` list -> the window row it is (None: a new message), and the
    rows it rewrote (matched by id alone, their content replaced)."""
    free: dict[str, list[_GRow]] = {}
    for r in window:
        free.setdefault(r.sig, []).append(r)
    used: set[int] = set()
    out: list[_GRow | None] = [None] * len(msgs)
    sigs = [_sig(m.get("type"), message_blocks(m)) for m in msgs]
    # the same id and content first, then the same content (a copy under a new id)
    for same_id in (True, False):
        for i, m in enumerate(msgs):
            if out[i] is not None:
                continue
            for r in free.get(sigs[i], ()):
                # a summary or notice is the same message by its id only (the next
                # compression may write the same text again: a new summary)
                copy = not same_id and r.kind_hint not in ("compaction_summary", "notice")
                if id(r) not in used and (r.mid == m["id"] or copy):
                    out[i] = r
                    used.add(id(r))
                    break
    rewritten = []
    for i, m in enumerate(msgs):  # then the same id: the content rewritten
        if out[i] is None:
            same = (
                w
                for w in window
                if id(w) not in used and w.mid == m["id"] and w.mtype == m.get("type")
            )
            if (found := next(same, None)) is not None:
                used.add(id(found))
                out[i] = found
                rewritten.append(found)
    return out, rewritten


def _set_messages(
    msgs: list[Any], written: int | None, line: int, st: _State, fnd: Findings
) -> None:
    """A ``$set`` of the message list: the window becomes the list (module docstring)."""
    good = [m for m in msgs if is_message(m) and m.get("type") in ("user", "gemini")]
    if len(good) != len(msgs):
        fnd.add(
            "bad_record",
            "warning",
            line,
            f"{len(msgs) - len(good)} item(s) of the $set message list are not messages; skipped",
        )
    matched, rewritten = _match(good, st.window)
    masked = _rewrite(good, matched, rewritten, written, line, st)
    kept = {id(r) for r in matched if r is not None}
    swept = [r for r in st.window if id(r) not in kept]
    window, new_rows = _place(good, matched, written, line)
    st.rows += new_rows
    if swept:
        _compaction(line, st, swept, [r for r in window if id(r) in kept], new_rows)
    # the list set anew at a process's first call (a start, a resume): not a compaction
    st.new_process = st.new_process or not (swept or masked)
    st.window = window


def _rewrite(
    msgs: list[dict[str, Any]],
    matched: list[_GRow | None],
    rewritten: list[_GRow],
    written: int | None,
    line: int,
    st: _State,
) -> bool:
    """Rows the list holds under their id with other content: the row takes the new content
    (the session context, regenerated), but a tool output masked is a microcompaction that
    clears the row (which keeps its output). Returns whether one was masked."""
    ids = set(map(id, rewritten))
    masked = []
    for m, r in zip(msgs, matched, strict=True):
        if r is None or id(r) not in ids:
            continue
        new = message_blocks(m)
        if _masked(new) and not _masked(r.content):
            masked.append(r)
            r.sig = _sig(r.mtype, new)  # the window's version: the next list matches it
        else:
            r.set_content(m)
            r.lines.append(line)
    if masked:
        ev = EventDraft("microcompaction", line, written, trigger="auto", swept=masked)
        ev.summarises = False
        st.events.append(ev)
    return bool(masked)


def _place(
    msgs: list[dict[str, Any]], matched: list[_GRow | None], written: int | None, line: int
) -> tuple[list[_GRow], list[_GRow]]:
    """The new window in the list's order, and its new rows: each placed after the row it
    follows in the list (or, first in it, before the first kept row), stamped with the
    list's time (``lastUpdated``, written with it; a repeated message holds its original's
    stamp)."""
    window: list[_GRow] = []
    new_rows: list[_GRow] = []
    for m, r in zip(msgs, matched, strict=True):
        if r is None:
            r = _GRow(m, line)
            r.anchor = window[-1] if window else None
            if written is not None:
                r.created_at = written
            new_rows.append(r)
        window.append(r)
    first_kept = next((r for r, m in zip(window, matched, strict=True) if m is not None), None)
    for r in new_rows:
        if r.anchor is None:
            r.before = first_kept
    return window, new_rows


def _compaction(
    line: int, st: _State, swept: list[_GRow], kept: list[_GRow], new_rows: list[_GRow]
) -> None:
    summary = next(
        (r for r in new_rows if r.mtype == "user" and SNAPSHOT in _text(r.content)), None
    )
    if summary is not None:
        summary.kind_hint = "compaction_summary"
        summary.note = "the compression calls' usage is not in the file"
    for r in new_rows:
        if r.mtype == "gemini" and r is not summary:
            r.kind_hint = "notice"  # Gemini CLI's own "Got it": sent, no model call
    ev = EventDraft(
        "compaction",
        line,
        summary.created_at if summary is not None else None,
        summary.mid if summary is not None else None,
        trigger="auto" if st.in_turn else None,
        swept=swept,
        preserved=kept,
        summary=summary,
        summarises=summary is not None,
    )
    st.inputs.event(ev)
    st.events.append(ev)


def _rewind(target: Any, line: int, st: _State) -> None:
    """``$rewindTo``: the messages from ``target`` on leave the conversation (an abandoned
    branch, as Gemini CLI's loader drops them)."""
    i = next((i for i, r in enumerate(st.window) if r.mid == target), None)
    if not isinstance(target, str) or i is None:
        raise CorruptFileError(
            f"line {line}: $rewindTo {target!r} names no message of the chat: the message "
            "list after it is unknown",
            path=st.path,
        )
    gone = st.window[i:]
    st.branch += 1
    for r in gone:
        r.branch = f"branch-{st.branch}"
    ids = set(map(id, gone))
    st.rows = [r for r in st.rows if id(r) not in ids]
    st.abandoned += gone
    st.window = st.window[:i]


def _masked(content: list[dict[str, Any]]) -> bool:
    """Whether a message holds a tool output Gemini CLI masked (toolOutputMaskingService)."""
    return any(b.get("type") == "tool_result" and MASKED in str(b.get("content")) for b in content)


def _text(content: list[dict[str, Any]]) -> str:
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def _patch(rec: dict[str, Any], line: int, st: _State, fnd: Findings) -> None:
    upd = rec["$set"]
    if not isinstance(upd, dict):
        raise CorruptFileError(f"line {line}: $set holds no object", path=st.path)
    if "sessionId" in upd:
        st.resuming = False
    if "messages" in upd and st.resuming:
        fnd.add(
            "resume_stub",
            "info",
            line,
            "a resumed process's own session context, before it takes up the session; skipped",
        )
    elif "messages" in upd:
        if not isinstance(upd["messages"], list):
            raise CorruptFileError(
                f"line {line}: $set messages is not a list: the message list after it is unknown",
                path=st.path,
            )
        _set_messages(upd["messages"], iso_ms(upd.get("lastUpdated")), line, st, fnd)
    for k in ("summary", "kind"):
        if isinstance(upd.get(k), str):
            st.meta[k] = upd[k]


def _record(rec: dict[str, Any], line: int, st: _State, fnd: Findings) -> None:
    if "$set" in rec:
        _patch(rec, line, st, fnd)
    elif "$rewindTo" in rec:
        _rewind(rec["$rewindTo"], line, st)
    elif is_message(rec):
        st.resuming = False
        _message(rec, line, st)
    elif is_header(rec):
        st.resuming = bool(st.rows)  # a resumed process's own header (module docstring)
        for k in ("sessionId", "projectHash", "startTime", "kind"):
            if isinstance(rec.get(k), str):
                st.meta.setdefault(k, rec[k])
        dirs = rec.get("directories")
        if isinstance(dirs, list) and dirs and isinstance(dirs[0], str):
            st.meta.setdefault("cwd", dirs[0])
    else:
        fnd.add("unknown_record", "warning", line, "a line that is no Gemini CLI record; skipped")


def _read(path: Path, st: _State, fnd: Findings, max_line_bytes: int) -> int:
    """Feed ``path``'s records into ``st``; raises when a complete line cannot be read."""
    check_head(path, _WHAT)
    n_records = 0
    seen = len(fnd.items)
    for n, rec in JsonLines(path, fnd, "chat", max_line_bytes=max_line_bytes):
        lost = [f for f in fnd.items[seen:] if f.check in _LOST]
        if lost:
            _raise_lost(path, lost[0].line, lost[0].detail)
        n_records += 1
        _record(rec, n, st, fnd)
    lost = [f for f in fnd.items[seen:] if f.check in _LOST]
    if lost:
        _raise_lost(path, lost[0].line, lost[0].detail)
    return n_records


def _raise_lost(path: Path, line: int | None, detail: str) -> None:
    raise CorruptFileError(
        f"line {line}: {detail.split(';')[0]}: a message or a patch of the message list is "
        "lost, so every list after it is unknown",
        path=path,
    )


def _is_stub(path: Path, known: set[str], max_line_bytes: int) -> bool:
    """A resume's further file that holds no message the list does not hold already."""
    for _n, rec in JsonLines(path, Findings(), "chat", max_line_bytes=max_line_bytes):
        msgs = rec.get("$set", {}).get("messages") if isinstance(rec.get("$set"), dict) else None
        items = msgs if isinstance(msgs, list) else [rec] if is_message(rec) else []
        if any(not is_message(m) or m["id"] not in known for m in items):
            return False
    return True


def _parse_session(files: list[Path], max_line_bytes: int) -> ParsedTranscript:
    fnd = Findings()
    st = _State(files[0])
    n_records = 0
    for i, f in enumerate(files):
        if i and _is_stub(f, {r.mid for r in st.rows}, max_line_bytes):
            fnd.add("resume_stub", "info", None, f"{f.name}: a resume's file adding no message")
            continue
        st.path = f
        n_records += _read(f, st, fnd, max_line_bytes)
    if n_records == 0:
        raise NotTranscriptError("no complete JSON record: not a Gemini CLI chat", path=files[0])
    rows, branches = number_rows(st.rows, st.abandoned)
    _display(st, rows)
    if st.notices:
        st.meta["notices"] = str(st.notices)
    if "cwd" not in st.meta and (cwd := project_path(files[0])) is not None:
        st.meta["cwd"] = cwd
    st.meta["files"] = str(len(files))
    return ParsedTranscript(
        path=str(files[0]),
        format=FORMAT,
        session_id=st.meta.get("sessionId"),
        meta={k: v for k, v in st.meta.items() if k != "sessionId"},
        rows=rows,
        other_branches=branches,
        events=[ev.final() for ev in st.events],
        findings=fnd.done(),
        # an abandoned reply was a call made all the same
        calls=final_calls([r.call for r in (*st.rows, *st.abandoned) if r.call is not None]),
        process_starts=[r.seq for r in st.first_calls],
    )


def _display(st: _State, rows: list[Any]) -> None:
    """A new row of a ``$set`` list is displayed right after the row it follows there, or
    (first in the list) right before the kept row it precedes (rows are created in order, so
    the place of the row it is placed by is set first)."""

    def key(r: _GRow) -> int:
        o = rows[r.seq - 1].ord
        return int(o) if o is not None else r.seq

    for r in st.rows:
        if r.anchor is not None:
            rows[r.seq - 1].ord = key(r.anchor)
        elif r.before is not None:
            rows[r.seq - 1].ord = key(r.before) - 1


def _subagent(sub: ParsedTranscript, parent: ParsedTranscript) -> None:
    """Name the parent's ``invoke_agent`` call whose prompt is the subagent's first prompt."""
    first = next((r for r in sub.rows if r.role == "user"), None)
    prompt = _text(first.content) if first is not None else None
    for r in parent.rows:
        for b in r.content:
            if b.get("type") == "tool_use" and b.get("input", {}).get("prompt") == prompt:
                sub.parent_tool_use_id = b.get("id")
                return


def parse_gemini(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    warn: bool = True,
) -> ParsedTranscript:
    """Parse a Gemini CLI session: the chat at ``path`` with the session's other files and
    its subagents' chats.

    :param path: any of the session's ``.jsonl`` files.
    :param max_line_bytes: a longer line cannot be read (:class:`CorruptFileError`).
    :param warn: emit one :class:`adfkit.AdfWarning` when there are warning- or error-level
        findings.
    :raises NotTranscriptError: the file is empty, binary or holds no JSON record.
    :raises CorruptFileError: a complete line cannot be read, or a patch names no message
        (the message lists after it are unknown), naming the file and the line.
    """
    p = Path(path).expanduser()
    with gc_paused():
        check_head(p, _WHAT)
        h = header(p)
        sid = h.get("sessionId") if h else None
        main = h is None or h.get("kind") != "subagent"
        files = session_files(p, sid) if sid and main and p.parent.name == "chats" else [p]
        out = _parse_session(files, max_line_bytes)
        for f in subagent_files(files[0], out.session_id) if main else []:
            try:
                sub = _parse_session([f], max_line_bytes)
            except NotTranscriptError:
                continue
            sub.agent_id = sub.session_id
            _subagent(sub, out)
            out.subagents.append(sub)
    if warn:
        warn_findings(str(p), out.findings)
    return out
