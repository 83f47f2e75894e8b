"""pi coding agent sessions (``~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl``).

Reads one session file read-only, line by line, and rebuilds the conversation pi itself would
send to the model as :class:`~adfkit._sources.transcript.kit.TranscriptRow` objects, plus one
compaction event per ``compaction`` entry and findings (the entry rules are shared with OpenClaw,
which keeps pi's entries: :mod:`adfkit._sources.transcript.pi_entries`). The format reference is
``SOURCES-NEXT.md``
§4 (pi-mono ``packages/coding-agent/src/core/session-manager.ts``, ``messages.ts``,
``compaction/compaction.ts``); the choices made:

- **Layouts.** A file opens with a header ``{"type": "session", "id", "timestamp", "cwd",
  "version"?}``. Version 2 and 3 entries carry ``id`` and ``parentId`` (a tree in one file);
  version 1 entries carry neither and form a line, each the child of the entry before it, and a
  v1 compaction names its first kept entry by ``firstKeptEntryIndex``, the index of that entry
  among the file's parsed lines with the header at 0 (pi's v1-to-v2 migration,
  ``migrateV1ToV2``). Both read the same way; nothing is migrated or written.
- **Conversation.** As pi resumes a session: the leaf is the last entry in the file, the active
  conversation is the path from the root to it (``buildSessionContext``). Rows are the entries
  that produce a model message: ``message`` (user, assistant, toolResult, bashExecution,
  custom / v2 hookMessage), ``custom_message`` and ``branch_summary``: the last four are user
  messages pi sends in the conversation (``kind_hint="message"``, not ``context``: they are
  turns of the conversation, not parts of the prompt); ``compaction`` gives a
  ``compaction_summary`` row holding its ``summary`` as recorded (pi wraps it in a
  ``<summary>`` preamble when it sends it).
  ``model_change``, ``thinking_level_change``, ``label``, ``session_info`` and ``custom``
  (extension state) are no rows. Entries off the path (a branch the user left through ``/tree``)
  are rows of ``other_branches`` (``branch-1``... by their first line), each with a ``rewind``
  event sweeping them.
- **Blocks.** ``text`` -> text, ``thinking`` -> thinking (signatures dropped), ``toolCall`` ->
  ``tool_use`` (``arguments`` as ``input``), ``image`` -> ``image_url`` (a data URL); a
  ``toolResult`` message is one user row holding one ``tool_result`` (``toolCallId``,
  ``isError``, its text parts joined). A ``bashExecution`` (a command the user ran with ``!``)
  is a user row worded as pi sends it (``Ran `cmd```...); one marked
  ``excludeFromContext`` is left out, as pi leaves it out.
- **Usage.** pi writes each assistant message's usage (``input``, ``output``, ``cacheRead``,
  ``cacheWrite``, ``totalTokens``, ``cost``): one model call per assistant message, counted
  once on its row. ``input`` in adfkit includes the cache parts (``input + cacheRead +
  cacheWrite``); pi's ``input`` is the uncached part. An aborted or failed reply whose usage is
  all zeros reported nothing (pi itself skips it when it measures the context): its tokens are
  unknown (NA), never 0. There is no reasoning count and no compaction-call usage on disk.
- **Compaction.** Each ``compaction`` entry on the path is an event: ``pre_tokens`` =
  ``tokensBefore`` as recorded; ``swept`` = the rows in the window before it that are not from
  its first kept entry up to it (the previous summary included); ``preserved`` = the rows from
  the first kept entry up to the compaction. A first kept entry not on the path before the
  compaction keeps nothing, as in pi, with a ``dangling_first_kept`` finding. No trigger (pi
  records none), no tokens after (``tokens_after`` is the next call's prompt), ``details``
  (``readFiles``/``modifiedFiles``) and ``fromHook`` in ``extra``.
- **Broken files.** A ``parentId`` naming no entry (a lost line) is read as the entry before it
  in the file, with a ``dangling_parent`` finding; a duplicate ``id`` keeps the later entry, as
  pi's index does; a cycle stops the path there.
"""

from __future__ import annotations

import os
from pathlib import Path

from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_LINE_BYTES,
    Findings,
    ParsedTranscript,
    gc_paused,
    warn_findings,
)
from adfkit._sources.transcript.pi_entries import build, finish
from adfkit._sources.transcript.pi_entry_log import header_meta, read_lines
from adfkit._sources.transcript.pi_rows import bash_text, pi_tokens

FORMAT = "pi"
_WHAT = "pi session"

__all__ = ["FORMAT", "bash_text", "header_meta", "parse_pi", "pi_tokens"]


def parse_pi(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    warn: bool = True,
) -> ParsedTranscript:
    """Parse one pi session file (any layout: v1 without entry ids, v2/v3 trees).

    :param path: the ``.jsonl`` session file.
    :param max_line_bytes: longer lines are skipped with a ``huge_line`` finding.
    :param warn: emit one :class:`adfkit.AdfWarning` when there are warning- or error-level
        findings.
    :raises NotTranscriptError: the file is empty, binary, or its first record is not a pi
        session header.
    """
    p = Path(path).expanduser()
    fnd = Findings()
    with gc_paused():  # many small objects, no cycles: the collector only costs
        rd = read_lines(p, max_line_bytes, fnd, _WHAT)
        meta = header_meta(rd.header or {})
        b = build(rd, fnd, meta)
        out = finish(p, FORMAT, rd, b, meta, fnd)
    if warn:
        warn_findings(str(p), out.findings)
    return out
