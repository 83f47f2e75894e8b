"""OTLP JSON lines of GenAI spans -> a :class:`~adfkit._sources.transcript.kit.ParsedTranscript`.

The choices made:

- **Agents.** An ``invoke_agent`` span is an agent; one whose parent is another agent's span is
  that agent's subagent. A file with chat spans and no agent span is one agent. The first root
  agent is the session (a file of several sessions reads its first; the others are findings).
- **Calls.** Each span whose ``gen_ai.operation.name`` is ``chat``, ``text_completion`` or
  ``generate_content`` is one model call of the nearest agent above it, in order of start
  time: an assistant row (its text from ``gen_ai.output.messages`` when the span holds them)
  carrying the call's usage: ``gen_ai.usage.input_tokens`` (the whole prompt),
  ``output_tokens``, ``cache_read.input_tokens``, ``cache_write.input_tokens`` (or the older
  ``cache_creation.input_tokens``), ``reasoning_tokens``. A count the span does not carry is
  unknown (NA), never 0. ``gen_ai.input.messages``, when present, are rows before it.
  A call that adfkit exported as a compaction's own call (``adfkit.call.kind`` =
  ``compaction``) is that compaction's summary row, its usage the compaction call's.
- **Compactions.** An ``adfkit.compaction`` span event (``adfkit export --otlp``) is a
  compaction at its time with what it carries (trigger, tokens before and after); a chat span
  marked ``gen_ai.conversation.compacted`` with no such event says a compaction happened before
  it, trigger unknown. What it swept is estimated: the rows since the previous compaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._core.rows import as_count
from adfkit._sources.transcript.kit import (
    EventDraft,
    Findings,
    JsonLines,
    ParsedTranscript,
    RowDraft,
    check_head,
    final_calls,
    gc_paused,
    number_rows,
    own_call,
    warn_findings,
)

FORMAT = "otel"
CALL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
#: GenAI usage attributes -> adfkit's token keys (input is the whole prompt).
TOKEN_KEYS = {
    "gen_ai.usage.input_tokens": "input",
    "gen_ai.usage.output_tokens": "output",
    "gen_ai.usage.cache_read.input_tokens": "cache_read",
    "gen_ai.usage.cache_write.input_tokens": "cache_write",
    "gen_ai.usage.cache_creation.input_tokens": "cache_write",
    "gen_ai.usage.reasoning_tokens": "reasoning",
    "adfkit.usage.cache_write_1h": "cache_write_1h",
}


@dataclass
class Span:
    trace: str
    id: str
    parent: str | None
    name: str
    start: int  # unix ms
    end: int
    attrs: dict[str, Any]
    events: list[tuple[str, int, dict[str, Any]]]
    line: int
    children: list[Span] = field(default_factory=list)

    @property
    def operation(self) -> str | None:
        op = self.attrs.get("gen_ai.operation.name")
        return op if isinstance(op, str) else None


def value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    if not isinstance(v, dict):
        return None
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        return as_count(int(v["intValue"])) if str(v["intValue"]).lstrip("-").isdigit() else None
    if "arrayValue" in v:
        return [value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    return None


def attributes(items: Any) -> dict[str, Any]:
    if not isinstance(items, list):
        return {}
    return {a["key"]: value(a.get("value")) for a in items if isinstance(a, dict) and "key" in a}


def _ms(nanos: Any) -> int:
    try:
        return int(nanos) // 1_000_000
    except (TypeError, ValueError):
        return 0


def read_spans(path: Path, fnd: Findings) -> list[Span]:
    check_head(path, "OTLP trace file")
    out: list[Span] = []
    for n, obj in JsonLines(path, fnd, "trace file"):
        if obj.get("type") == "span":  # the JS SDK's span object (Copilot CLI)
            out.append(_span(obj, n, SDK))
            continue
        for rs in obj.get("resourceSpans") or []:
            for ss in (rs or {}).get("scopeSpans") or []:
                for s in (ss or {}).get("spans") or []:
                    if isinstance(s, dict):
                        out.append(_span(s, n, OTLP))
    if not out:
        raise NotTranscriptError("no span in the file: not an OTLP trace export", path=path)
    return out


def _sdk_ms(t: Any) -> int:
    """A JS SDK time, ``[seconds, nanoseconds]``, in unix ms (0 when it is not one)."""
    if isinstance(t, list) and len(t) == 2 and all(isinstance(x, int) for x in t):
        seconds, nanos = int(t[0]), int(t[1])
        return seconds * 1000 + nanos // 1_000_000
    return 0


def _flat(raw: Any) -> dict[str, Any]:
    return dict(raw) if isinstance(raw, dict) else {}


@dataclass(frozen=True)
class _Encoding:
    """Where a span's times are and how its times and attributes are written."""

    start: str
    end: str
    time: str
    ms: Callable[[Any], int]
    attrs: Callable[[Any], dict[str, Any]]


#: OTLP/JSON: times in unix nanoseconds, attributes a list of ``{"key", "value": AnyValue}``.
OTLP = _Encoding("startTimeUnixNano", "endTimeUnixNano", "timeUnixNano", _ms, attributes)
#: The OpenTelemetry JS SDK's span object (Copilot CLI): ``[seconds, nanoseconds]``, flat.
SDK = _Encoding("startTime", "endTime", "time", _sdk_ms, _flat)


def _span(s: dict[str, Any], line: int, enc: _Encoding) -> Span:
    events = [
        (str(e.get("name", "")), enc.ms(e.get(enc.time)), enc.attrs(e.get("attributes")))
        for e in s.get("events") or []
        if isinstance(e, dict)
    ]
    return Span(
        str(s.get("traceId", "")),
        str(s.get("spanId", "")),
        s.get("parentSpanId") or None,
        str(s.get("name", "")),
        enc.ms(s.get(enc.start)),
        enc.ms(s.get(enc.end)),
        enc.attrs(s.get("attributes")),
        events,
        line,
    )


def parse_otlp(path: str | Path, *, warn: bool = True) -> ParsedTranscript:
    """Parse one OTLP JSON-lines trace file (see the module docstring)."""
    p = Path(path).expanduser()
    fnd = Findings()
    with gc_paused():
        spans = read_spans(p, fnd)
        by_id = {s.id: s for s in spans}
        for s in spans:
            if s.parent in by_id:
                by_id[s.parent].children.append(s)
        agents = [s for s in spans if s.operation == "invoke_agent"]
        roots = [a for a in agents if _agent_above(a, by_id) is None]
        if not roots:  # chat spans only: one agent of them all
            root = Span("", "", None, p.stem, 0, 0, {}, [], 0)
            root.children = [s for s in spans if s.parent not in by_id]
            roots = [root]
        roots.sort(key=lambda r: (r.start, r.line))
        root = _session(roots, fnd)
        out = _agent(p, root, by_id, fnd)
    if warn:
        warn_findings(str(p), out.findings)
    return out


def _session(roots: list[Span], fnd: Findings) -> Span:
    """The session's agent span: the first root, with the roots of the same conversation
    (``gen_ai.conversation.id``: one per run of an agent resumed, as Copilot CLI writes a trace
    per ``copilot -p``) joined to it; the roots of other conversations are findings."""
    first = roots[0]
    conv = first.attrs.get("gen_ai.conversation.id")
    same = [r for r in roots if conv is not None and r.attrs.get("gen_ai.conversation.id") == conv]
    for extra in roots[1:]:
        if extra not in same:
            fnd.add("extra_session", "warning", extra.line, "a second agent trace; not read")
    if len(same) <= 1:
        return first
    joined = Span(
        first.trace,
        first.id,
        None,
        first.name,
        first.start,
        first.end,
        dict(first.attrs),
        [e for r in same for e in r.events],
        first.line,
    )
    joined.children = [c for r in same for c in r.children]
    return joined


def _agent_above(s: Span, by_id: dict[str, Span]) -> Span | None:
    seen = set()
    parent = by_id.get(s.parent or "")
    while parent is not None and parent.id not in seen:
        if parent.operation == "invoke_agent":
            return parent
        seen.add(parent.id)
        parent = by_id.get(parent.parent or "")
    return None


def _own(agent: Span) -> tuple[list[Span], list[Span], list[Span]]:
    """The agent's calls and tool executions (through spans between, not into subagents) and
    its subagents."""
    calls: list[Span] = []
    tools: list[Span] = []
    subs: list[Span] = []
    stack = list(agent.children)
    seen: set[str] = set()
    while stack:
        s = stack.pop()
        if s.id in seen:
            continue
        seen.add(s.id)
        if s.operation == "invoke_agent":
            subs.append(s)
        else:
            if s.operation in CALL_OPERATIONS:
                calls.append(s)
            elif s.operation == "execute_tool":
                tools.append(s)
            stack.extend(s.children)
    calls.sort(key=lambda s: (s.start, s.end, s.line))
    tools.sort(key=lambda s: (s.start, s.line))
    return calls, tools, sorted(subs, key=lambda s: s.start)


def _agent(path: Path, agent: Span, by_id: dict[str, Span], fnd: Findings) -> ParsedTranscript:
    calls, tools, subs = _own(agent)
    ran = _tools_of_calls(calls, tools)
    rows: list[RowDraft] = []
    drafts = []
    events = _events(agent, calls)
    pending = sorted(events, key=lambda e: e.created_at or 0)
    last_event = 0
    for c in calls:
        while pending and (pending[0].created_at or 0) <= c.end:  # before the first call after it
            last_event = _place(pending.pop(0), rows, last_event)
        rows += _input_rows(c)
        row = _answer_row(c)
        rows.append(row)
        tokens: dict[str, int] = {}
        for attr, key in TOKEN_KEYS.items():
            n = as_count(c.attrs.get(attr))
            if n is not None:
                tokens.setdefault(key, n)
        model = c.attrs.get("gen_ai.response.model") or c.attrs.get("gen_ai.request.model")
        drafts.append(own_call(row, tokens, model if isinstance(model, str) else None))
        row.tokens = tokens
        row.model = model if isinstance(model, str) else None
        rows += _tool_rows(row, ran.get(id(c), []))
    for ev in pending:
        last_event = _place(ev, rows, last_event)
    active, _ = number_rows(rows, [])
    meta = {"format": FORMAT}
    for key, attr in (("session_id", "gen_ai.conversation.id"), ("name", "gen_ai.agent.name")):
        if isinstance(agent.attrs.get(attr), str):
            meta[key] = agent.attrs[attr]
    out = ParsedTranscript(str(path), FORMAT, meta.get("session_id"), meta)
    out.rows = active
    out.events = [e.final() for e in events]
    out.calls = final_calls(drafts)
    out.findings = fnd.items
    for sub in subs:
        child = _agent(path, sub, by_id, Findings())
        name = sub.attrs.get("gen_ai.agent.name")
        child.agent_id = name.removeprefix("agent-") if isinstance(name, str) else sub.id
        child.parent_agent_id = out.session_id
        out.subagents.append(child)
    return out


def _tools_of_calls(calls: list[Span], tools: list[Span]) -> dict[int, list[Span]]:
    """Each tool execution belongs to the last call that ended before it started (the call
    that asked for it)."""
    out: dict[int, list[Span]] = {}
    ends = [c.end for c in calls]
    for t in tools:
        i = max((k for k, e in enumerate(ends) if e <= t.start), default=None)
        if i is not None:
            out.setdefault(id(calls[i]), []).append(t)
    return out


def _tool_rows(answer: RowDraft, tools: list[Span]) -> list[RowDraft]:
    """The tool uses of a call on its assistant row, and one row of their results (the
    spans' ``gen_ai.tool.call.arguments`` and ``.result`` where they carry them)."""
    if not tools:
        return []
    results = []
    for t in tools:
        uid = str(t.attrs.get("gen_ai.tool.call.id") or t.id)
        name = str(t.attrs.get("gen_ai.tool.name") or t.name.removeprefix("execute_tool "))
        raw = t.attrs.get("gen_ai.tool.call.arguments")
        answer.content.append({"type": "tool_use", "id": uid, "name": name, "input": _args(raw)})
        res = t.attrs.get("gen_ai.tool.call.result")
        results.append(
            {
                "type": "tool_result",
                "tool_use_id": uid,
                "content": res if isinstance(res, str) else "",
                "is_error": (t.attrs.get("process.exit.code") or 0) != 0,
            }
        )
    return [RowDraft("user", results, tools[0].line, tools[-1].end)]


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"_raw_arguments": raw}
        return parsed if isinstance(parsed, dict) else {"_raw_arguments": parsed}
    return {}


def _place(ev: EventDraft, rows: list[RowDraft], last: int) -> int:
    """The event sweeps the rows since the previous one (an estimate, the summary rows of
    compaction calls left out) and stands before the next row."""
    ev.swept = [r for r in rows[last:] if r.kind_hint != "compaction_summary"]
    ev.pos = len(rows)
    return len(rows)


def _events(agent: Span, calls: list[Span]) -> list[EventDraft]:
    out = []
    for name, at, attrs in agent.events:
        if name != "adfkit.compaction":
            continue
        kind = attrs.get("adfkit.compaction.kind")
        ev = EventDraft("compaction", agent.line, created_at=at)
        ev.trigger = kind if isinstance(kind, str) else None
        ev.pre_tokens = as_count(attrs.get("adfkit.compaction.tokens_before"))
        ev.post_tokens = as_count(attrs.get("adfkit.compaction.tokens_after"))
        out.append(ev)
    if not out:  # only the flag on the call after each compaction
        for c in calls:
            if c.attrs.get("gen_ai.conversation.compacted") is True:
                out.append(EventDraft("compaction", c.line, created_at=c.start))
    return out


def _input_rows(c: Span) -> list[RowDraft]:
    rows = []
    for m in _messages(c.attrs.get("gen_ai.input.messages")):
        role = str(m.get("role"))
        role = role if role in ("user", "assistant", "system") else "user"  # a tool result too
        row = RowDraft(role, _content(m), c.line, c.start)
        rows.append(row)
    return rows


def _answer_row(c: Span) -> RowDraft:
    out = _messages(c.attrs.get("gen_ai.output.messages"))
    content = [b for m in out for b in _content(m)] or [{"type": "text", "text": ""}]
    row = RowDraft("assistant", content, c.line, c.end)
    if c.attrs.get("adfkit.call.kind") == "compaction":
        row.role, row.kind_hint = "user", "compaction_summary"
    row.uuid = c.id or None
    return row


def _messages(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, str):
        return []
    try:
        parsed = json.loads(raw)
    except ValueError:
        return []
    return [m for m in parsed if isinstance(m, dict)] if isinstance(parsed, list) else []


def _content(m: dict[str, Any]) -> list[dict[str, Any]]:
    parts = m.get("parts")
    if not isinstance(parts, list):
        return []
    return [
        {"type": "text", "text": str(p.get("content", ""))}
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text"
    ]
