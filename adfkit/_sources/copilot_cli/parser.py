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
  (``copilotUsage.tokenDetails``) as Copilot CLI itself reads them (:func:`billed`). Each
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

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._core.rows import as_count
from adfkit._sources.copilot_cli import events as ev
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_LINE_BYTES,
    CallDraft,
    CallInputs,
    EventDraft,
    Findings,
    JsonLines,
    ParsedTranscript,
    RowDraft,
    TypeCounts,
    bad_counts,
    bad_usage,
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

FORMAT = "copilot_cli"
_WHAT = "Copilot CLI session"
#: Types read for rows, events or metadata; the others of the schema are counted only.
_READ = frozenset(ev.DATA_FIELDS) | {"session.context_cleared"}


@dataclass(slots=True)
class _Ev:
    line: int
    type: str
    data: dict[str, Any]
    ts: int | None
    id: str | None
    agent: str | None


class _CRow(RowDraft):
    """A row being built from one event; a reply (or a compaction's summary with its usage)
    is a model call of its own (:func:`own_call`)."""

    __slots__ = ()

    def __init__(self, e: _Ev, role: str, content: list[dict[str, Any]]) -> None:
        super().__init__(role, content, e.line, e.ts)
        self.uuid = e.id


# --- reading lines --------------------------------------------------------------------------


def _read(path: Path, max_line_bytes: int, fnd: Findings) -> list[_Ev]:
    check_head(path, _WHAT)
    out: list[_Ev] = []
    unknown_types = TypeCounts()
    unknown_env: dict[str, list[int]] = {}
    seen_ids: set[str] = set()
    for n, obj in JsonLines(path, fnd, "session", max_line_bytes=max_line_bytes):
        if not out and not _is_start(obj):
            raise NotTranscriptError(
                "the first record is not a Copilot CLI session.start event "
                '({"type": "session.start", "id", "timestamp", "data"}): '
                f"not a {_WHAT}",
                path=path,
            )
        eid = obj.get("id")
        eid = eid if isinstance(eid, str) else None
        pid = obj.get("parentId")
        if isinstance(pid, str) and pid not in seen_ids:
            fnd.add(
                "dangling_parent",
                "warning",
                n,
                f"parentId {pid[:40]!r} names no earlier event (a lost line?)",
            )
        if eid is not None:
            if eid in seen_ids:
                fnd.add("duplicate_id", "warning", n, f"event id {eid[:40]!r} used twice")
            seen_ids.add(eid)
        t = obj.get("type")
        if not isinstance(t, str) or t not in ev.EVENT_TYPES:
            unknown_types.add(t, n)
            continue
        for k in obj:
            if k not in ev.ENVELOPE:
                unknown_env.setdefault(str(k)[:40], []).append(n)
        d = obj.get("data")
        if type(d) is not dict:
            fnd.add("bad_event", "warning", n, f"{t} event without a data object; skipped")
            continue
        a = obj.get("agentId")
        if obj.get("ephemeral") is True or t in ev.EPHEMERAL:
            fnd.add(
                "ephemeral_on_disk",
                "info",
                n,
                f"{t} is documented as ephemeral (never written to events.jsonl) but is "
                "in the file",
            )
        out.append(
            _Ev(n, t, d, iso_ms(obj.get("timestamp")), eid, a if isinstance(a, str) else None)
        )
    if not out:
        raise NotTranscriptError(
            f"no complete session.start event: not a {_WHAT} (or it is still being written)",
            path=path,
        )
    unknown_types.report(
        fnd,
        "unknown_event_type",
        "warning",
        "{n} event(s) of type {t!r}, not in the Copilot CLI schema this reader knows; skipped",
    )
    for k, lines in unknown_env.items():
        fnd.add(
            "unknown_field",
            "warning",
            lines[0],
            f"{len(lines)} event(s) with envelope field {k!r}, not in the schema; ignored",
        )
    return out


def _is_start(obj: dict[str, Any]) -> bool:
    d = obj.get("data")
    return (
        obj.get("type") == "session.start"
        and isinstance(obj.get("id"), str)
        and isinstance(obj.get("timestamp"), str)
        and type(d) is dict
        and isinstance(d.get("sessionId"), str)
    )


def _check_fields(events: list[_Ev], fnd: Findings) -> None:
    """Fields of the read types (and their nested records) outside the schema; types of the
    schema not read, counted."""
    odd: dict[tuple[str, str], list[int]] = {}
    not_read: dict[str, int] = {}

    def note(t: str, k: Any, line: int) -> None:
        odd.setdefault((t, str(k)[:40]), []).append(line)

    for e in events:
        known = ev.DATA_FIELDS.get(e.type)
        if known is None:
            if e.type not in _READ:
                not_read[e.type] = not_read.get(e.type, 0) + 1
            elif e.data:  # session.context_cleared: its fields are not known
                for k in e.data:
                    note(e.type, k, e.line)
            continue
        for k in e.data:
            if k not in known:
                note(e.type, k, e.line)
        if e.type == "assistant.message":
            for r in e.data.get("toolRequests") or []:
                for k in r if type(r) is dict else ():
                    if k not in ev.TOOL_REQUEST_FIELDS:
                        note("assistant.message.toolRequests[]", k, e.line)
        elif e.type == "session.compaction_complete":
            u = e.data.get("compactionTokensUsed")
            for k in u if type(u) is dict else ():
                if k not in ev.COMPACTION_USAGE_FIELDS:
                    note("compactionTokensUsed", k, e.line)
        elif e.type == "session.shutdown":
            mm = e.data.get("modelMetrics")
            for m in mm.values() if type(mm) is dict else ():
                for k in m if type(m) is dict else ():
                    if k not in ev.MODEL_METRIC_FIELDS:
                        note("modelMetrics[model]", k, e.line)
                u = m.get("usage") if type(m) is dict else None
                for k in u if type(u) is dict else ():
                    if k not in ev.METRIC_USAGE_FIELDS:
                        note("modelMetrics[model].usage", k, e.line)
    for (t, k), lines in odd.items():
        fnd.add(
            "unknown_field",
            "warning",
            lines[0],
            f"{len(lines)} {t} event(s) with field {k!r}, not in the schema; not read",
        )
    for t, n in sorted(not_read.items()):
        fnd.add("event_not_read", "info", None, f"{n} {t} event(s): no row or event in adfkit")


# --- content --------------------------------------------------------------------------------


def _text(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _tool_use(r: Any) -> dict[str, Any] | None:
    if type(r) is not dict:
        return None
    args = tool_input(r.get("arguments"))
    return {"type": "tool_use", "id": r.get("toolCallId"), "name": r.get("name"), "input": args}


def _result_text(d: dict[str, Any]) -> str:
    res, err = d.get("result"), d.get("error")
    if type(res) is dict and isinstance(res.get("content"), str):
        return str(res["content"])
    if type(err) is dict and isinstance(err.get("message"), str):
        return str(err["message"])
    if isinstance(err, str):
        return err
    return ""


def _tokens(u: Any, keys: dict[str, str], fnd: Findings, line: int) -> dict[str, int]:
    """Counts of ``u`` under ``keys`` (source -> ADF key); a bad value is left out (NA)."""
    if type(u) is not dict:
        return {}
    bad = bad_counts(u, tuple(keys))
    if bad:
        bad_usage(fnd, line, bad)
    return mapped_tokens(u, keys)


#: ``session.usage_record`` / ``compactionTokensUsed`` keys -> the ADF keys (the live follower
#: reads them too).
USAGE_KEYS = {
    "inputTokens": "input",
    "outputTokens": "output",
    "cacheReadTokens": "cache_read",
    "cacheWriteTokens": "cache_write",
    "reasoningTokens": "reasoning",
}


def billed(u: Any, fnd: Findings, line: int) -> dict[str, int]:
    """A usage object's counts (``_USAGE_KEYS``), corrected by its ``copilotUsage.tokenDetails``
    (the billing lines CAPI returns, ``[{"tokenType": "cache_write", "tokenCount": n}, ...]``)
    the way Copilot CLI itself reads them (1.0.102, ``cli-main.js``): cache read is the
    ``cache_read`` line where there is one; cache write the larger of ``cacheWriteTokens`` and
    ``cache_write`` + ``cache_write_1h``; input, where an ``input`` line is given, that line plus
    the cache read and write (Copilot's input counts the cached parts); output the ``output``
    line. A compaction recorded ``cacheWriteTokens`` 0 where its billing said 139,926 written.

    Examples
    --------
    >>> f = Findings()
    >>> used = {"inputTokens": 150000, "outputTokens": 900, "cacheReadTokens": 0,
    ...         "cacheWriteTokens": 0, "copilotUsage": {"totalNanoAiu": 1, "tokenDetails": [
    ...             {"tokenType": "input", "tokenCount": 10074, "batchSize": 1, "costPerBatch": 0},
    ...             {"tokenType": "cache_write", "tokenCount": 139926, "batchSize": 1,
    ...              "costPerBatch": 0}]}}
    >>> billed(used, f, 1)
    {'input': 150000, 'output': 900, 'cache_read': 0, 'cache_write': 139926}
    """
    tokens = _tokens(u, USAGE_KEYS, fnd, line)
    billed = _details(u.get("copilotUsage") if type(u) is dict else None)
    if not billed:
        return tokens
    read = billed.get("cache_read", tokens.get("cache_read"))
    if read is not None:
        tokens["cache_read"] = read
    if "cache_write" in billed or "cache_write_1h" in billed:
        parts = billed.get("cache_write", 0) + billed.get("cache_write_1h", 0)
        tokens["cache_write"] = max(tokens.get("cache_write", 0), parts)
    if "input" in billed:
        tokens["input"] = billed["input"] + (read or 0) + tokens.get("cache_write", 0)
    if "output" in billed:
        tokens["output"] = billed["output"]
    return tokens


def _details(usage: Any) -> dict[str, int]:
    """``copilotUsage.tokenDetails`` as ``{tokenType: tokenCount}`` (counts summed per type;
    a line whose count cannot be read makes its type unknown, left out)."""
    lines = usage.get("tokenDetails") if type(usage) is dict else None
    out: dict[str, int] = {}
    bad: set[str] = set()
    for d in lines if isinstance(lines, list) else ():
        kind = d.get("tokenType") if type(d) is dict else None
        if not isinstance(kind, str):
            continue
        n = as_count(d.get("tokenCount"))
        if n is None:
            bad.add(kind)
        else:
            out[kind] = out.get(kind, 0) + n
    return {k: v for k, v in out.items() if k not in bad}


# --- building -------------------------------------------------------------------------------


@dataclass
class _Agent:
    """One agent's rows, events and calls as they are built."""

    rows: list[_CRow] = field(default_factory=list)
    window: list[_CRow] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    #: ``session.usage_record`` counts not yet on a reply: by ``apiCallId`` (None: no id)
    usage: dict[str | None, dict[str, int]] = field(default_factory=dict)
    #: calls no row holds: a compaction call whose compaction was not applied
    loose: list[CallDraft] = field(default_factory=list)
    model: str | None = None
    comp_start: tuple[_Ev, int] | None = None
    #: the calls' prompt sizes as they come, for the compactions around them
    inputs: CallInputs = field(default_factory=CallInputs)
    tool_call: str | None = None  # the task call that spawned it (sub-agents)
    name: str | None = None

    def add(self, row: _CRow) -> _CRow:
        self.rows.append(row)
        self.window.append(row)
        return row


def _agent_of(e: _Ev, agents: dict[str | None, _Agent], by_tool: dict[str, str]) -> _Agent:
    key = e.agent
    if key is None:
        ptc = e.data.get("parentToolCallId")
        if isinstance(ptc, str) and e.type not in ("subagent.started", "subagent.completed"):
            key = by_tool.get(ptc, f"tool-{ptc}")
    a = agents.get(key)
    if a is None:
        a = agents[key] = _Agent()
    return a


def _build(events: list[_Ev], fnd: Findings, meta: dict[str, str]) -> dict[str | None, _Agent]:
    agents: dict[str | None, _Agent] = {None: _Agent()}
    by_tool: dict[str, str] = {}  # task tool call id -> agent key
    for e in events:
        d, t = e.data, e.type
        if t == "subagent.started":
            tc = d.get("toolCallId")
            key = e.agent or (f"tool-{tc}" if isinstance(tc, str) else None)
            if key is not None:
                sub = agents.setdefault(key, _Agent())
                sub.tool_call = tc if isinstance(tc, str) else None
                sub.name = _text(d.get("agentName")) or None
                if isinstance(tc, str):
                    by_tool[tc] = key
            continue
        a = _agent_of(e, agents, by_tool)
        if t == "session.start":
            _start(d, meta)
        elif t == "session.model_change":
            m = d.get("newModel")
            if isinstance(m, str):
                a.model = m
        elif t == "system.message":
            row = a.add(_CRow(e, "user", [{"type": "text", "text": _text(d.get("content"))}]))
            row.kind_hint = "context"
            row.note = f"{_text(d.get('role')) or 'system'} message"
        elif t == "user.message":
            text = d.get("transformedContent")
            text = text if isinstance(text, str) else _text(d.get("content"))
            a.add(_CRow(e, "user", [{"type": "text", "text": text}]))
        elif t == "assistant.reasoning":
            a.thinking.append(_text(d.get("content")))
        elif t == "assistant.message":
            _assistant(e, a, fnd)
        elif t == "assistant.usage":
            _late_usage(e, a, fnd)
        elif t == "session.usage_record":
            _usage_record(e, a, fnd)
        elif t == "tool.execution_complete":
            _add_result(a, _CRow(e, "user", [_tool_result(d)]))
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
            _compaction(e, a, fnd)
        elif t == "session.truncation":
            _truncation(e, a)
        elif t == "session.context_cleared":
            _clear(e, a)
        elif t == "session.shutdown":
            _shutdown(d, meta)
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


def _tool_result(d: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": d.get("toolCallId"),
        "content": _result_text(d),
        "is_error": d.get("success") is not True,
    }


def _add_result(a: _Agent, row: _CRow) -> None:
    """A tool result, placed among the results just before it in the order of the calls of
    the reply that asked for them (Copilot writes them as they complete and sends them in
    the order of the calls)."""
    order = _call_order(a)
    rank = order.get(row.content[0].get("tool_use_id"))
    k = len(a.window)
    while rank is not None and k and _is_result(a.window[k - 1]):
        prev = order.get(a.window[k - 1].content[0].get("tool_use_id"))
        if prev is None or prev < rank:
            break
        k -= 1
    if k == len(a.window):
        a.add(row)
        return
    a.rows.insert(a.rows.index(a.window[k]), row)
    a.window.insert(k, row)


def _is_result(row: _CRow) -> bool:
    return len(row.content) == 1 and row.content[0].get("type") == "tool_result"


def _call_order(a: _Agent) -> dict[Any, int]:
    """Tool-use id -> its place among the calls of the last reply of the window."""
    for row in reversed(a.window):
        if row.role == "assistant":
            uses = [b.get("id") for b in row.content if b.get("type") == "tool_use"]
            return {u: i for i, u in enumerate(uses)}
    return {}


def _clear(e: _Ev, a: _Agent) -> None:
    """``/clear``: every row but the system prompt leaves the window."""
    swept = [r for r in a.window if r.kind_hint != "context"]
    a.events.append(EventDraft("clear", e.line, e.ts, e.id, swept=swept))
    a.window = [r for r in a.window if r.kind_hint == "context"]


def _start(d: dict[str, Any], meta: dict[str, str]) -> None:
    for src, dst in (
        ("sessionId", "session_id"),
        ("copilotVersion", "version"),
        ("producer", "producer"),
        ("selectedModel", "model"),
        ("startTime", "started"),
    ):
        v = d.get(src)
        if isinstance(v, str):
            meta.setdefault(dst, v)
    v = d.get("version")
    if type(v) is int:
        meta["schema_version"] = str(v)
    ctx = d.get("context")
    if type(ctx) is dict:
        for src, dst in (
            ("cwd", "cwd"),
            ("branch", "git_branch"),
            ("headCommit", "git_commit"),
            ("repository", "repository"),
        ):
            v = ctx.get(src)
            if isinstance(v, str):
                meta.setdefault(dst, v)


def _assistant(e: _Ev, a: _Agent, fnd: Findings) -> None:
    d = e.data
    blocks: list[dict[str, Any]] = []
    rt = d.get("reasoningText")
    thinking = [rt] if isinstance(rt, str) and rt else [x for x in a.thinking if x]
    a.thinking = []
    blocks += [{"type": "thinking", "thinking": x} for x in thinking]
    text = _text(d.get("content"))
    if text:
        blocks.append({"type": "text", "text": text})
    for r in d.get("toolRequests") or []:
        b = _tool_use(r)
        if b is not None:
            blocks.append(b)
    row = a.add(_CRow(e, "assistant", blocks))
    m = d.get("model")
    row.model = m if isinstance(m, str) else a.model
    out = _tokens(d, {"outputTokens": "output"}, fnd, e.line)
    key = d.get("apiCallId")
    recorded = a.usage.pop(key if isinstance(key, str) else None, None)
    if recorded is None and a.usage:  # a record without the reply's id: the oldest waiting
        recorded = a.usage.pop(next(iter(a.usage)))
    if recorded is not None:
        out = {**out, **recorded}
        if "input" in recorded:
            a.inputs.call(recorded["input"])
    row.tokens = dict(out)
    own_call(row, out, row.model)
    if recorded is None:
        row.note = "per-call input and cache tokens are not on disk (no session.usage_record)"


def _usage_record(e: _Ev, a: _Agent, fnd: Findings) -> None:
    """A ``session.usage_record`` (1.0.102: one per call, written just before its reply):
    its counts wait for the ``assistant.message`` of the same ``apiCallId``."""
    u = e.data.get("usage")
    if type(u) is not dict:
        fnd.add("bad_event", "warning", e.line, "session.usage_record without a usage object")
        return
    key = u.get("apiCallId")
    a.usage[key if isinstance(key, str) else None] = billed(u, fnd, e.line)


def _late_usage(e: _Ev, a: _Agent, fnd: Findings) -> None:
    """An ``assistant.usage`` line on disk: its counts go to the last reply without them."""
    u = _tokens(e.data, USAGE_KEYS, fnd, e.line)
    for row in reversed(a.rows):
        c = row.call
        if row.role == "assistant" and c is not None and "input" not in (row.tokens or {}):
            row.tokens = {**(row.tokens or {}), **u}
            c.tokens = {**c.tokens, **u}
            row.note = "usage from an assistant.usage line on disk"
            if "input" in u:
                a.inputs.call(u["input"])
            return
    fnd.add("usage_without_reply", "warning", e.line, "assistant.usage with no reply before it")


def _compaction_extra(d: dict[str, Any], start: tuple[_Ev, int] | None) -> dict[str, Any]:
    """What a compaction_complete records beyond the event's own fields."""
    # Copilot sends the summary first, then the rows written while it was made
    extra: dict[str, Any] = {"swept_estimated": True, "summary_first": True}
    for k in (
        "messagesRemoved",
        "tokensRemoved",
        "preCompactionMessagesLength",
        "checkpointNumber",
        "checkpointPath",
        "tokenLimit",
        "requestId",
    ):
        v = d.get(k)
        if isinstance(v, str | int) and not isinstance(v, bool):
            extra[k] = v
    pre = as_count(d.get("preCompactionTokens"))
    if pre is not None:  # Copilot's own count, the one it compacts on (not a call's usage)
        extra["trigger_tokens"] = pre
    ci = d.get("customInstructions")
    if isinstance(ci, str) and ci:
        extra["user_context"] = ci
    if start is not None:
        extra["start_line"] = start[0].line
    return extra


def _compaction(e: _Ev, a: _Agent, fnd: Findings) -> None:
    d = e.data
    start, a.comp_start = a.comp_start, None
    outcome = d.get("outcome")  # 1.0.102: applied, cancelled (absent before)
    if d.get("success") is not True or outcome not in (None, "applied"):
        err = _text(d.get("error"))[:120] or (f"outcome {outcome}" if outcome else "")
        fnd.add(
            "compaction_failed",
            "info",
            e.line,
            f"a compaction that was not applied{': ' + err if err else ''}; the window is "
            "unchanged",
        )
        _loose_call(e, a, fnd)
        return
    swept, kept = _estimate(e, a, start, fnd)
    srow = _summary_row(e, fnd)
    a.rows.append(srow)
    a.window = [*kept, srow]
    started = start[0].data if start is not None else {}
    trigger = d.get("trigger")
    if trigger is None:
        trigger = started.get("trigger")
    window = as_count(d.get("tokenLimit"))
    x = EventDraft(
        "compaction",
        e.line,
        e.ts,
        e.id,
        trigger=trigger if isinstance(trigger, str) else None,
        pre_tokens=as_count(d.get("preCompactionTokens")),
        post_tokens=as_count(d.get("postCompactionTokens")),
        context_window=window if window is not None else as_count(started.get("tokenLimit")),
        swept=swept,
        preserved=kept,
        summary=srow,
        extra=_compaction_extra(d, start),
    )
    a.events.append(x)
    a.inputs.event(x)


def _loose_call(e: _Ev, a: _Agent, fnd: Findings) -> None:
    """The call of a compaction that was not applied, when its usage is recorded: it was made
    (and paid) though no row holds it."""
    used = e.data.get("compactionTokensUsed")
    if type(used) is not dict:
        return
    tokens = billed(used, fnd, e.line)
    m = used.get("model")
    model = m if isinstance(m, str) else None
    a.loose.append(CallDraft(e.id or f"line-{e.line}", None, e.line, model, tokens, e.ts))


def _estimate(
    e: _Ev, a: _Agent, start: tuple[_Ev, int] | None, fnd: Findings
) -> tuple[list[_CRow], list[_CRow]]:
    """``(swept, kept)``, estimated (the file names no removed message): the window's rows
    before the start but its context rows leave, the rows written during the compaction stay."""
    if start is None:
        fnd.add(
            "compaction_incomplete",
            "warning",
            e.line,
            "compaction_complete without a compaction_start: every earlier row counts as swept",
        )
    cut = start[1] if start is not None else len(a.window)
    before, during = a.window[:cut], a.window[cut:]
    kept = [r for r in before if r.kind_hint == "context"] + during
    swept = [r for r in before if r.kind_hint != "context"]
    removed = as_count(e.data.get("messagesRemoved"))
    if removed is not None and removed != len(swept):
        fnd.add(
            "compaction_count_mismatch",
            "info",
            e.line,
            f"messagesRemoved is {removed}, the estimate sweeps {len(swept)} row(s) (which "
            "messages were removed is not recorded)",
        )
    return swept, kept


def _summary_row(e: _Ev, fnd: Findings) -> _CRow:
    """A compaction's summary row, with the compaction call's usage when recorded."""
    d = e.data
    summary = d.get("summaryContent")
    srow = _CRow(e, "user", [{"type": "text", "text": summary}] if isinstance(summary, str) else [])
    srow.kind_hint = "compaction_summary"
    if not isinstance(summary, str):
        srow.note = "compaction without a summaryContent"
    used = d.get("compactionTokensUsed")
    if type(used) is dict:
        tokens = billed(used, fnd, e.line)
        srow.tokens = dict(tokens)
        m = used.get("model")
        srow.model = m if isinstance(m, str) else None
        own_call(srow, tokens, srow.model)
    return srow


def _truncation(e: _Ev, a: _Agent) -> None:
    d = e.data
    n = as_count(d.get("messagesRemovedDuringTruncation")) or 0
    movable = [r for r in a.window if r.kind_hint != "context"]
    swept = movable[:n]
    gone = set(map(id, swept))
    a.window = [r for r in a.window if id(r) not in gone]
    x = EventDraft(
        "compaction",
        e.line,
        e.ts,
        e.id,
        trigger="truncation",
        summarises=False,
        pre_tokens=as_count(d.get("preTruncationTokensInMessages")),
        post_tokens=as_count(d.get("postTruncationTokensInMessages")),
        context_window=as_count(d.get("tokenLimit")),
        swept=swept,
        extra={
            "mechanism": "truncation (no summary by design)",
            "swept_estimated": True,
            "messages_removed": n,
            "performed_by": _text(d.get("performedBy")) or None,
        },
    )
    a.events.append(x)
    a.inputs.event(x)


def _shutdown(d: dict[str, Any], meta: dict[str, str]) -> None:
    mm = d.get("modelMetrics")
    if type(mm) is not dict:
        return
    # A total is known only when every model's part of it is: one model's missing or unreadable
    # count makes the sum unknown (NA: no total_* key), never a sum of the rest as if it were 0.
    totals: dict[str, int | None] = {}
    requests: int | None = 0
    clean: dict[str, Any] = {}
    for model, m in mm.items():
        if type(m) is not dict:
            continue
        raw = m.get("usage")
        u: dict[str, Any] = raw if type(raw) is dict else {}
        counts = {dst: as_count(u.get(src)) for src, dst in USAGE_KEYS.items()}
        req = m.get("requests")
        n = as_count(req.get("count")) if type(req) is dict else None
        clean[str(model)] = {"requests": n, **counts}
        requests = None if n is None or requests is None else requests + n
        for k, v in counts.items():
            before = totals.get(k, 0)
            totals[k] = None if v is None or before is None else before + v
    meta["model_metrics"] = json.dumps(clean, sort_keys=True)
    if requests is not None:
        meta["total_requests"] = str(requests)
    for k, total in totals.items():
        if total is not None:
            meta[f"total_{k}_tokens"] = str(total)
    for src, dst in (("shutdownType", "shutdown_type"), ("currentModel", "current_model")):
        v = d.get(src)
        if isinstance(v, str):
            meta[dst] = v


# --- result ---------------------------------------------------------------------------------


def _transcript(
    path: Path, a: _Agent, fnd: Findings | None, meta: dict[str, str], sid: str | None
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
        raise NotTranscriptError(f"a folder without events.jsonl: not a {_WHAT}", path=given)
    fnd = Findings()
    with gc_paused():  # many small objects, no cycles: the collector only costs
        events = _read(p, max_line_bytes, fnd)
        _check_fields(events, fnd)
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
