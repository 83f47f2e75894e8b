"""The rows of replies and tool results, and the usage that waits for its reply
(the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._sources.copilot_cli.content import text_of, tool_use
from adfkit._sources.copilot_cli.records import Record
from adfkit._sources.copilot_cli.state import Agent, Row
from adfkit._sources.copilot_cli.usage import USAGE_KEYS, billed, counts_of
from adfkit._sources.transcript.kit import Findings, own_call


def add_result(a: Agent, row: Row) -> None:
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


def _is_result(row: Row) -> bool:
    return len(row.content) == 1 and row.content[0].get("type") == "tool_result"


def _call_order(a: Agent) -> dict[Any, int]:
    """Tool-use id -> its place among the calls of the last reply of the window."""
    for row in reversed(a.window):
        if row.role == "assistant":
            uses = [b.get("id") for b in row.content if b.get("type") == "tool_use"]
            return {u: i for i, u in enumerate(uses)}
    return {}


def assistant_row(e: Record, a: Agent, fnd: Findings) -> None:
    d = e.data
    blocks: list[dict[str, Any]] = []
    rt = d.get("reasoningText")
    thinking = [rt] if isinstance(rt, str) and rt else [x for x in a.thinking if x]
    a.thinking = []
    blocks += [{"type": "thinking", "thinking": x} for x in thinking]
    text = text_of(d.get("content"))
    if text:
        blocks.append({"type": "text", "text": text})
    for r in d.get("toolRequests") or []:
        b = tool_use(r)
        if b is not None:
            blocks.append(b)
    row = a.add(Row(e, "assistant", blocks))
    m = d.get("model")
    row.model = m if isinstance(m, str) else a.model
    out = counts_of(d, {"outputTokens": "output"}, fnd, e.line)
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


def usage_record(e: Record, a: Agent, fnd: Findings) -> None:
    """A ``session.usage_record`` (1.0.102: one per call, written just before its reply):
    its counts wait for the ``assistant.message`` of the same ``apiCallId``."""
    u = e.data.get("usage")
    if type(u) is not dict:
        fnd.add("bad_event", "warning", e.line, "session.usage_record without a usage object")
        return
    key = u.get("apiCallId")
    a.usage[key if isinstance(key, str) else None] = billed(u, fnd, e.line)


def late_usage(e: Record, a: Agent, fnd: Findings) -> None:
    """An ``assistant.usage`` line on disk: its counts go to the last reply without them."""
    u = counts_of(e.data, USAGE_KEYS, fnd, e.line)
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
