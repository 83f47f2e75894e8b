"""Claude Code session transcripts (``~/.claude/projects/<encoded-cwd>/<session>.jsonl``).

Reads one session file read-only, line by line (each line parsed once with orjson), and rebuilds
the conversation the model saw as :class:`~adfkit._sources.transcript.kit.TranscriptRow` objects,
plus compaction events, abandoned branches, subagents and integrity findings. The format reference
is ``TRANSCRIPTS.md`` §1; the choices made where it is uncertain:

- **Active conversation** (TRANSCRIPTS.md §0, which real files settle): ``parentUuid`` walked
  back from the *last-written* main-chain ``user``/``assistant`` record (a ``compact_boundary``'s
  ``logicalParentUuid`` stands for its parent). Where a link names a record never written (a
  boundary's logical parent, 23 of 65 real boundaries in 2.1.17-2.1.42; a Stop hook's
  ``hook_progress`` pointing at an unwritten final block record; a link held by a bad line), the
  walk goes on from the previous user/assistant record in file order (``chain_gap``, info), and
  the boundary records between the two are placed there: a gap, never the start of the session.
  A root met with conversation before it is bridged the same way and starts an event: a user
  record with ``isCompactSummary`` (Claude Code 1.0.x, no boundary) a ``compaction``, any other
  (plan mode's "clear context": a new conversation in the same file) a ``clear`` that swept the
  window before it (``new_root``, info). ``summary.leafUuid`` and ``last-prompt.leafUuid`` are
  recorded in ``meta`` but not used to choose. Records of unknown types that carry a uuid are
  links of the chain, as ``progress`` records are (``unknown_record_type``, info).
- **Off the chain**: a block record of a call on the chain (same ``message.id``, a parallel tool
  call whose later block record hangs off the first one, §0 3) joins that call's row after the
  on-chain block record written before it; its ``tool_result``, and off-chain results answering
  a ``tool_use`` of the chain, are spliced in after the call; off-chain ``attachment`` records
  whose parents reach the chain are spliced in after that point. Every other record is on an
  abandoned branch (``other_branches``, grouped by the branch's topmost record: ``branch-1``...
  in file order). A branch with a model call (the user went back and the model answered from
  there; a resume that answered a prompt again) gives a ``rewind`` event (swept = the branch's
  rows; line and time = the active record that replaced it), and its calls are counted by
  ``usage()`` (made and paid for); a branch of user records only (an ``/exit`` local command, an
  interrupted queued prompt) is no rewind (``aside_records``, info).
- **Duplicate uuids** (§1.4 step 1): a copy with the same ``parentUuid`` is a replay and is
  dropped (first occurrence wins); a copy with a *different* ``parentUuid`` is a re-parented
  preserved message and becomes its own graph node. A ``parentUuid`` resolves to the latest copy
  written before the child. A re-parented copy never makes a second row: the row stays at its
  first position and the compaction lists it as preserved.
- **One API call over several records** (§1.5, §0 3): block records with the same call key
  (``message.id:requestId``, or ``message.id``) that follow each other on the chain, with only
  ``tool_result`` rows between them (interleaved block records, 2.1.25 on), or off it as above,
  are one row; blocks concatenated in order, a block written twice kept once. Usage is counted
  once per key, from the last block record in file order (it carries the final
  ``output_tokens``). A key seen again on a separate row is not counted again
  (``duplicate_usage`` finding). ``isApiErrorMessage`` and ``<synthetic>`` records carry no usage.
- **Compaction** (§1.6): ``compact_boundary`` -> a ``compaction`` event; the next
  ``isCompactSummary`` user row is its summary. ``swept`` = the rows in the context window just
  before the boundary (everything since the session start or the previous summary, plus the
  previous event's preserved rows) minus the preserved ones; ``preserved`` = rows whose uuid is in
  ``preservedMessages.uuids`` (``preserved_messages.all_uuids``), else the run
  ``preservedSegment.headUuid``..``tailUuid``. ``trigger`` is None when ``compactMetadata`` is
  missing (not assumed ``auto``). ``tokens_before``/``tokens_after`` are the prompt sizes of the
  last main-chain call before the boundary and the first one after the summary.
  ``microcompact_boundary`` -> a ``microcompaction`` event whose swept rows are the
  ``tool_result`` rows of ``compactedToolIds`` (and attachment rows of ``clearedAttachmentUUIDs``);
  they stay in the window (as stubs).
- **Subagents** (§1.1, §1.4 step 5): ``<session>/subagents/agent-*.jsonl`` (``.meta.json``
  sidecar) and legacy ``agent-*.jsonl`` files beside the session whose ``sessionId`` matches are
  parsed as their own transcripts. ``agent-acompact-*`` files are included with
  ``meta["agent_type"] = "compact"``; their usage is not linked to any compaction (uncertain).
  Sidechain records inside the main file (older versions) become subagents too, grouped by
  ``agentId`` (else by their root). Task subagents that older versions (2.1.x) wrote only as
  ``agent_progress`` records (their records copied into ``data.message``, no file) become
  subagents too (``meta["layout"] = "progress"``), each record a child of the one before, as
  ccusage counts their calls. The spawning ``tool_use`` comes from the sidecar's
  ``toolUseId``, else ``toolUseResult.agentId`` on a trunk result, else an ``agentId: <id>`` tail
  in a result text.
- ``created_at`` of a merged row is the time of its first record. Tool results whose content is a
  list of parts become one string (text joined, other parts as ``[image]``-style placeholders).
"""

from __future__ import annotations

import os
from pathlib import Path

from adfkit._sources.claude_code.conversation import _assemble, _finish
from adfkit._sources.claude_code.records import _read
from adfkit._sources.claude_code.subagents import (
    _inline_sidechains,
    _link_subagents,
    _progress_subagents,
    _subagent_files,
)
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_LINE_BYTES,
    Findings,
    ParsedTranscript,
    gc_paused,
    warn_findings,
)


def parse_claude_code(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    subagents: bool = True,
    warn: bool = True,
) -> ParsedTranscript:
    """Parse one Claude Code session file (``<session>.jsonl``) into rows, events and findings.

    :param path: the session file (or a subagent's ``agent-*.jsonl``).
    :param max_line_bytes: longer lines are skipped with a ``huge_line`` finding.
    :param subagents: also parse the session's subagent files.
    :param warn: emit one :class:`adfkit.AdfWarning` when there are warning- or error-level
        findings (a half-written last line, bad JSON...).
    :raises NotTranscriptError: the file is empty, binary, an ``.adf``, a Codex rollout, or JSON
        lines of another kind.

    Examples
    --------
    >>> t = parse_claude_code(next(Path("sample_agents/claude-code").rglob("*.jsonl")),
    ...                       warn=False)
    >>> t.format
    'claude_code'
    """
    p = Path(path).expanduser()
    with gc_paused():
        return _parse(p, Findings(), max_line_bytes, subagents, warn)


def _parse(
    p: Path, fnd: Findings, max_line_bytes: int, subagents: bool, warn: bool
) -> ParsedTranscript:
    d = _read(p, max_line_bytes, fnd)
    main = [r for r in d.recs if not r.side]
    has_main = any(r.type in ("user", "assistant") for r in main)
    side_file = not has_main
    group = d.recs if side_file else main
    built = _assemble(group, fnd, d, side_group=side_file)
    sid = max(d.session_ids, key=lambda k: d.session_ids[k]) if d.session_ids else None
    agent_id = None
    if side_file:
        for r in d.recs:
            if r.obj is not None and isinstance(r.obj.get("agentId"), str):
                agent_id = r.obj["agentId"]
                break
        if agent_id is None and p.name.startswith("agent-"):
            agent_id = p.name[len("agent-") : -len(".jsonl")] if p.name.endswith(".jsonl") else None
    meta = dict(d.meta)
    if sid is not None:
        meta["session_id"] = sid
    out = _finish(p, built, fnd, meta, sid, agent_id)
    if subagents and not side_file:
        inline = [r for r in d.recs if r.side]
        subs = _inline_sidechains(p, inline, fnd, d, sid) if inline else []
        subs.extend(_subagent_files(p, sid, parse_claude_code, max_line_bytes, warn))
        known = {s.agent_id for s in subs if s.agent_id is not None}
        subs.extend(_progress_subagents(p, d, sid, known))
        out.subagents = subs
        _link_subagents(out, built.agent_results)
    out.findings = fnd.done()
    if warn:
        warn_findings(str(p), out.findings, stacklevel=4)
    return out
