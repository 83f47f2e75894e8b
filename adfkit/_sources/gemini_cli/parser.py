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
  model gave it and Gemini CLI sends it (the file writes ``<tool>__<id>``:
  :func:`.content.call_id`).
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

import os
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._sources.gemini_cli.content import text_of
from adfkit._sources.gemini_cli.files import header, project_path, session_files, subagent_files
from adfkit._sources.gemini_cli.records import WHAT, is_stub, read_chat
from adfkit._sources.gemini_cli.state import Row, State
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_LINE_BYTES,
    Findings,
    ParsedTranscript,
    check_head,
    final_calls,
    gc_paused,
    number_rows,
    warn_findings,
)

FORMAT = "gemini_cli"


def _parse_session(files: list[Path], max_line_bytes: int) -> ParsedTranscript:
    fnd = Findings()
    st = State(files[0])
    n_records = 0
    for i, f in enumerate(files):
        if i and is_stub(f, {r.mid for r in st.rows}, max_line_bytes):
            fnd.add("resume_stub", "info", None, f"{f.name}: a resume's file adding no message")
            continue
        st.path = f
        n_records += read_chat(f, st, fnd, max_line_bytes)
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


def _display(st: State, rows: list[Any]) -> None:
    """A new row of a ``$set`` list is displayed right after the row it follows there, or
    (first in the list) right before the kept row it precedes (rows are created in order, so
    the place of the row it is placed by is set first)."""

    def key(r: Row) -> int:
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
    prompt = text_of(first.content) if first is not None else None
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
        check_head(p, WHAT)
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
