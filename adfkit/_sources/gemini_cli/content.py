"""A Gemini CLI message's content as ADF blocks, the tool call ids as sent, and the marks the
parser looks for in it (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

import json
from typing import Any

from adfkit._sources.transcript.gemini_parts import blocks
from adfkit._sources.transcript.kit import tool_input

#: What opens the session context message Gemini CLI writes first (environmentContext.ts).
CONTEXT = "<session_context>"
#: What a masked tool output opens with (toolOutputMaskingService.ts MASKING_INDICATOR_TAG).
MASKED = "<tool_output_masked>"
#: What marks a compression's summary (chatCompressionService: getCompressionPrompt).
SNAPSHOT = "<state_snapshot>"


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
    out += blocks([as_sent(p) for p in content] if isinstance(content, list) else content)
    calls = msg.get("toolCalls") if msg.get("type") == "gemini" else None
    have = {b.get("id") for b in out if b["type"] == "tool_use"}
    for c in calls if isinstance(calls, list) else []:
        if isinstance(c, dict) and (cid := call_id(c)) not in have:
            out.append(
                {
                    "type": "tool_use",
                    "id": cid,
                    "name": c.get("name"),
                    "input": tool_input(c.get("args")),
                }
            )
    return out


def call_id(f: dict[str, Any]) -> Any:
    """A tool call's id as the model gave it and Gemini CLI sends it back: the file writes
    ``<tool>__<id>``, and geminiChat.ts ``stripToolCallIdPrefixes`` takes the prefix off
    before each request (the compression calls alone are sent the prefixed ids).

    Examples
    --------
    >>> call_id({"id": "read_file__call_1", "name": "read_file"}), call_id({"id": "x"})
    ('call_1', 'x')
    """
    cid, name = f.get("id"), f.get("name")
    name = (name.strip() if isinstance(name, str) else "") or "generic_tool"
    if isinstance(cid, str) and cid.startswith(f"{name}__"):
        return cid[len(name) + 2 :]
    return cid


def as_sent(p: Any) -> Any:
    """A part with its call id as sent (:func:`call_id`)."""
    if type(p) is not dict:
        return p
    for k in ("functionCall", "functionResponse"):
        f = p.get(k)
        if isinstance(f, dict) and "id" in f:
            return {**p, k: {**f, "id": call_id(f)}}
    return p


def signature(mtype: Any, content: list[dict[str, Any]]) -> str:
    """What makes two messages the same: the type and the blocks but thinking (a ``$set``
    list holds a reply's parts without its thoughts)."""
    kept = [b for b in content if b.get("type") != "thinking"]
    return json.dumps([mtype, kept], sort_keys=True)


def is_masked(content: list[dict[str, Any]]) -> bool:
    """Whether a message holds a tool output Gemini CLI masked (toolOutputMaskingService)."""
    return any(b.get("type") == "tool_result" and MASKED in str(b.get("content")) for b in content)


def text_of(content: list[dict[str, Any]]) -> str:
    return "\n".join(b["text"] for b in content if b.get("type") == "text")
