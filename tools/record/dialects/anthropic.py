"""Anthropic Messages: ``POST /v1/messages`` (JSON, or server-sent events when ``stream``)
and ``POST /v1/messages/count_tokens``."""

from __future__ import annotations

import json
import math
from typing import Any

from ..script import Answer, Call
from ..server import Model, Reply, Request

NAME = "anthropic"


def match(method: str, path: str) -> bool:
    ends = ("/v1/messages", "/messages/count_tokens")
    return method == "POST" and path.rstrip("/").endswith(ends)


def handle(req: Request, model: Model) -> Reply:
    body = req.body or {}
    if req.path.rstrip("/").endswith("count_tokens"):
        model.write(req, NAME, "count_tokens")
        return Reply.json({"input_tokens": math.ceil(len(json.dumps(body)) / 4)})
    call = parse(body, len(json.dumps(body)))
    answer = model.answer(req, NAME, call)
    message = _message(body, answer)
    reply = Reply.json(message) if not body.get("stream") else Reply.sse(_events(message))
    # the API's id of the request, as the real one sends it: Claude Code writes it as requestId
    reply.headers["request-id"] = f"req_rec{answer.n:05d}"
    return reply


def parse(body: dict[str, Any], size: int) -> Call:
    system = body.get("system") or ""
    if isinstance(system, list):
        system = "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    messages = [
        {"role": m["role"], "content": [_block(b) for b in _blocks(m.get("content"))]}
        for m in body.get("messages") or []
    ]
    tools = [
        {
            "name": t.get("name", ""),
            "description": t.get("description", ""),
            "parameters": t.get("input_schema") or {},
        }
        for t in body.get("tools") or []
    ]
    stream = bool(body.get("stream"))
    return Call(NAME, body.get("model", ""), system, messages, tools, stream, size)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _block(b: dict[str, Any]) -> dict[str, Any]:
    kind = b.get("type")
    if kind == "text":
        return {"type": "text", "text": b.get("text", "")}
    if kind in ("thinking", "redacted_thinking"):
        return {"type": "thinking", "text": b.get("thinking", "")}
    if kind == "tool_use":
        return {"type": "tool_use", "id": b["id"], "name": b["name"], "input": b.get("input")}
    if kind == "tool_result":
        inner = _blocks(b.get("content"))
        text = "\n".join(x.get("text", "") for x in inner if x.get("type") == "text")
        return {
            "type": "tool_result",
            "tool_use_id": b["tool_use_id"],
            "content": text,
            "is_error": bool(b.get("is_error")),
        }
    return {"type": str(kind)}


def _usage(body: dict[str, Any], answer: Answer) -> dict[str, Any]:
    """The prompt split as Anthropic reports it: read from cache, written to cache (when the
    request marks a breakpoint; with the ``cache_creation`` split by lifetime the API sends, all
    of it to the 5-minute cache: a client that finds no split writes zeros there), and the
    rest."""
    rest = answer.usage.input - answer.usage.cache_read
    written = max(0, rest - 4) if "cache_control" in json.dumps(body) else 0
    return {
        "input_tokens": rest - written,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": answer.usage.cache_read,
        "cache_creation": {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0},
        "output_tokens": answer.usage.output,
    }


def _message(body: dict[str, Any], answer: Answer) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if answer.text:
        content.append({"type": "text", "text": answer.text})
    for t in answer.tool_uses:
        content.append({"type": "tool_use", "id": t.id, "name": t.name, "input": t.input})
    return {
        "id": f"msg_rec{answer.n:05d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": content,
        "stop_reason": "tool_use" if answer.tool_uses else "end_turn",
        "stop_sequence": None,
        "usage": _usage(body, answer),
    }


def _events(message: dict[str, Any]) -> list[tuple[str | None, Any]]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            first: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            first = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        opened = {"type": "content_block_start", "index": i, "content_block": first}
        events += [
            ("content_block_start", opened),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


class _Dialect:
    name = NAME
    match = staticmethod(match)
    handle = staticmethod(handle)


DIALECT = _Dialect()
