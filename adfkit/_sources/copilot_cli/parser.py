"""GitHub Copilot CLI sessions (``~/.copilot/session-state/<sessionId>/events.jsonl``).

**Built from the writer's published schema only**: no real ``events.jsonl`` was available
(``SOURCES-NEXT.md`` §3; the event types and fields this reader knows are in :mod:`.events`).
So the reader is strict about what it does not know: an event type outside the schema, a field
outside the schema on an event it reads, an event the schema marks ephemeral (never written)
found on disk, each gives a finding; nothing unknown is dropped silently.

One file is one session; events carry ``id``/``parentId`` (a chain in time order) and an
optional ``agentId`` (a sub-agent's events; absent for the main agent). The choices made:

- **Rows** (per agent, in file order): ``system.message`` -> a user context row;
  ``user.message`` -> a user row holding ``transformedContent`` (what the model was sent) when
  recorded, else ``content``; ``assistant.message`` -> an assistant row: ``reasoningText`` (or
  the ``assistant.reasoning`` events before it) as thinking, ``content`` as text,
  ``toolRequests`` as ``tool_use`` blocks; ``tool.execution_complete`` -> a user row holding
  one ``tool_result`` (``result.content``, the text sent to the model, or ``error.message``;
  ``is_error`` = not ``success``). Events with an ``agentId`` (or the older
  ``parentToolCallId``) are the sub-agent's: each sub-agent is a transcript of its own
  (:attr:`ParsedTranscript.subagents`), tied to the ``task`` call that spawned it.
- **Usage.** Per-call usage (``assistant.usage``) is ephemeral: not on disk. Since 1.0.102 a
  ``session.usage_record`` is written just before every reply (main agent and subagents), its
  ``usage.apiCallId`` the reply's ``apiCallId``: its input (cache read included), cache read,
  cache write, output and reasoning counts are that call's, corrected by its billing lines
  (``copilotUsage.tokenDetails``) as Copilot CLI itself reads them (:func:`.usage.billed`). Each
  ``assistant.message`` is one model call; without a usage record (older releases) its only
  recorded count is ``outputTokens`` and its input and cache counts are unknown (NA). The
  compaction call's own usage (``compactionTokensUsed``, billing lines applied the same way) is on
  its summary row (input = ``inputTokens`` as recorded, assumed to include the cached part as
  CAPI's OpenAI-style usage does: uncertain). Session totals per model
  (``session.shutdown.modelMetrics``) go to ``meta`` (``total_*`` keys, summed over models, and
  ``model_metrics`` as JSON). An ``assistant.usage`` line found on disk (a release that persists
  it) gives its call's input/cache counts, with a finding.
- **Compaction** (``session.compaction_start`` then ``session.compaction_complete``): one event
  at the complete line with ``pre_tokens``/``post_tokens`` = ``preCompactionTokens`` /
  ``postCompactionTokens`` (``preCompactionTokens``, Copilot's own count, is also the count it
  compacted on: ``trigger_tokens``), the trigger as recorded (``threshold``, ``manual``,
  ``context_limit_retry``, ``memory_pressure``, ``model_switch``), a summary row holding
  ``summaryContent``, and ``messagesRemoved``, ``tokensRemoved``, ``checkpointNumber`` ...
  in ``extra``. The file names no removed message (a count only): ``swept`` is **estimated**
  from GitHub's documented behaviour (docs "Managing context in Copilot CLI": the history is
  replaced by the summary, system instructions stay, messages added while the compaction ran
  in the background are kept): the window's rows before ``compaction_start`` except context
  rows; ``preserved`` = the context rows and the rows written between start and complete. A
  swept count that differs from ``messagesRemoved`` is a finding. A failed compaction
  (``success: false``) or one whose ``outcome`` is not ``applied`` (1.0.102: ``cancelled``,
  e.g. a background compaction still running when ``copilot -p`` exits) changes nothing and
  is a finding.
- **Truncation** (``session.truncation``, a second mechanism that drops messages without a
  summary): a ``compaction`` event with trigger ``truncation`` and no summary, sweeping the
  window's oldest ``messagesRemovedDuringTruncation`` non-context rows (estimated).
- ``session.context_cleared`` empties the window (a ``clear`` event).
"""

from __future__ import annotations

import os
from pathlib import Path

from adfkit._base.errors import NotTranscriptError
from adfkit._sources.copilot_cli.compactions import clear, compaction, truncation
from adfkit._sources.copilot_cli.content import text_of, tool_result
from adfkit._sources.copilot_cli.meta import session_shutdown, session_start
from adfkit._sources.copilot_cli.records import WHAT, Record, check_fields, read_records
from adfkit._sources.copilot_cli.rows import add_result, assistant_row, late_usage, usage_record
from adfkit._sources.copilot_cli.state import Agent, Row
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_LINE_BYTES,
    Findings,
    ParsedTranscript,
    final_calls,
    gc_paused,
    number_rows,
    warn_findings,
)

FORMAT = "copilot_cli"


def _agent_of(e: Record, agents: dict[str | None, Agent], by_tool: dict[str, str]) -> Agent:
    key = e.agent
    if key is None:
        ptc = e.data.get("parentToolCallId")
        if isinstance(ptc, str) and e.type not in ("subagent.started", "subagent.completed"):
            key = by_tool.get(ptc, f"tool-{ptc}")
    a = agents.get(key)
    if a is None:
        a = agents[key] = Agent()
    return a


def _build(events: list[Record], fnd: Findings, meta: dict[str, str]) -> dict[str | None, Agent]:
    agents: dict[str | None, Agent] = {None: Agent()}
    by_tool: dict[str, str] = {}  # task tool call id -> agent key
    for e in events:
        d, t = e.data, e.type
        if t == "subagent.started":
            tc = d.get("toolCallId")
            key = e.agent or (f"tool-{tc}" if isinstance(tc, str) else None)
            if key is not None:
                sub = agents.setdefault(key, Agent())
                sub.tool_call = tc if isinstance(tc, str) else None
                sub.name = text_of(d.get("agentName")) or None
                if isinstance(tc, str):
                    by_tool[tc] = key
            continue
        a = _agent_of(e, agents, by_tool)
        if t == "session.start":
            session_start(d, meta)
        elif t == "session.model_change":
            m = d.get("newModel")
            if isinstance(m, str):
                a.model = m
        elif t == "system.message":
            row = a.add(Row(e, "user", [{"type": "text", "text": text_of(d.get("content"))}]))
            row.kind_hint = "context"
            row.note = f"{text_of(d.get('role')) or 'system'} message"
        elif t == "user.message":
            text = d.get("transformedContent")
            text = text if isinstance(text, str) else text_of(d.get("content"))
            a.add(Row(e, "user", [{"type": "text", "text": text}]))
        elif t == "assistant.reasoning":
            a.thinking.append(text_of(d.get("content")))
        elif t == "assistant.message":
            assistant_row(e, a, fnd)
        elif t == "assistant.usage":
            late_usage(e, a, fnd)
        elif t == "session.usage_record":
            usage_record(e, a, fnd)
        elif t == "tool.execution_complete":
            add_result(a, Row(e, "user", [tool_result(d)]))
        elif t == "session.compaction_start":
            if a.comp_start is not None:
                fnd.add(
                    "compaction_incomplete",
                    "warning",
                    a.comp_start[0].line,
                    "compaction_start without its compaction_complete",
                )
            a.comp_start = (e, len(a.window))
        elif t == "session.compaction_complete":
            compaction(e, a, fnd)
        elif t == "session.truncation":
            truncation(e, a)
        elif t == "session.context_cleared":
            clear(e, a)
        elif t == "session.shutdown":
            session_shutdown(d, meta)
        elif t == "session.resume":
            meta["resumes"] = str(int(meta.get("resumes", "0")) + 1)
    for a in agents.values():
        if a.comp_start is not None:
            fnd.add(
                "compaction_incomplete",
                "warning",
                a.comp_start[0].line,
                "compaction_start without its compaction_complete (the session may still be "
                "compacting)",
            )
    return agents


def _transcript(
    path: Path, a: Agent, fnd: Findings | None, meta: dict[str, str], sid: str | None
) -> ParsedTranscript:
    rows, _ = number_rows(a.rows, ())
    calls = final_calls(
        [*(r.call for r in a.rows if r.call is not None), *a.loose],
        "the call of a compaction that was not applied (its usage recorded, no row holds it)",
    )
    return ParsedTranscript(
        path=str(path),
        format=FORMAT,
        session_id=sid,
        meta=meta,
        rows=rows,
        events=[x.final() for x in a.events],
        findings=fnd.done() if fnd is not None else [],
        calls=calls,
    )


def events_file(path: Path) -> Path:
    """The ``events.jsonl`` of a session folder, or ``path`` itself."""
    return path / "events.jsonl" if path.is_dir() else path


def parse_copilot_cli(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    warn: bool = True,
) -> ParsedTranscript:
    """Parse one Copilot CLI session: its folder (``session-state/<id>/``) or its
    ``events.jsonl``.

    :param max_line_bytes: longer lines are skipped with a ``huge_line`` finding.
    :param warn: emit one :class:`adfkit.AdfWarning` when there are warning- or error-level
        findings.
    :raises NotTranscriptError: the file is empty, binary, or does not open with a
        ``session.start`` event.
    """
    given = Path(path).expanduser()
    p = events_file(given)
    if given.is_dir() and not p.exists():
        raise NotTranscriptError(f"a folder without events.jsonl: not a {WHAT}", path=given)
    fnd = Findings()
    with gc_paused():  # many small objects, no cycles: the collector only costs
        events = read_records(p, max_line_bytes, fnd)
        check_fields(events, fnd)
        meta: dict[str, str] = {}
        agents = _build(events, fnd, meta)
        sid = meta.get("session_id") or (p.parent.name if p.name == "events.jsonl" else None)
        subs = []
        for key, a in agents.items():
            if key is None:
                continue
            t = _transcript(p, a, None, {"agent_name": a.name} if a.name else {}, sid)
            t.agent_id = key
            t.parent_tool_use_id = a.tool_call
            subs.append(t)
        out = _transcript(p, agents[None], fnd, meta, sid)
        out.subagents = subs
    if warn:
        warn_findings(str(p), out.findings)
    return out
