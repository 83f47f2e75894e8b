"""OpenAI Chat Completions: ``POST .../chat/completions`` (JSON, or server-sent events when
``stream`` is set: the deltas, then a usage chunk when ``stream_options.include_usage`` asks,
then ``[DONE]``) and ``GET .../models``.

Neutral view: ``system``/``developer`` messages are the system prompt; a ``tool`` message is a
neutral ``tool`` message holding one ``tool_result``; an assistant's ``tool_calls`` are
``tool_use`` blocks after its text. (A minimal version, written for Qwen Code, OpenCode and
OpenClaw while the fuller one is written beside Copilot CLI's driver.)"""

from __future__ import annotations

import json
from typing import Any

from ..script import Answer, Call
from ..server import Model, Reply, Request

NAME = "openai_chat"
CREATED = 1_700_000_000  # a fixed time: answers stay byte-stable


def match(method: str, path: str) -> bool:
    path = path.rstrip("/")
    return (method == "POST" and path.endswith("/chat/completions")) or (
        method == "GET" and path.endswith("/models")
    )


def handle(req: Request, model: Model) -> Reply:
    if req.method == "GET":
        model.write(req, NAME, "models")
        return Reply.json({"object": "list", "data": []})
    body = req.body or {}
    call = parse(body, len(json.dumps(body)))
    answer = model.answer(req, NAME, call)
    message = _message(answer)
    out = {
        "id": f"chatcmpl-rec{answer.n:05d}",
        "object": "chat.completion",
        "created": CREATED,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(answer)}],
        "usage": _usage(answer),
    }
    if not body.get("stream"):
        return Reply.json(out)
    return Reply.sse(_events(out, bool((body.get("stream_options") or {}).get("include_usage"))))


def parse(body: dict[str, Any], size: int) -> Call:
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for m in body.get("messages") or []:
        role = m.get("role")
        if role in ("system", "developer"):
            system.append(_text(m.get("content")))
        elif role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": m.get("tool_call_id", ""),
                "content": _text(m.get("content")),
                "is_error": False,
            }
            messages.append({"role": "tool", "content": [result]})
        else:
            blocks = _blocks(m.get("content"))
            for c in m.get("tool_calls") or []:
                f = c.get("function") or {}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": c.get("id", ""),
                        "name": f.get("name", ""),
                        "input": _args(f.get("arguments")),
                    }
                )
            messages.append({"role": role or "user", "content": blocks})
    tools = [
        {
            "name": (t.get("function") or {}).get("name", ""),
            "description": (t.get("function") or {}).get("description", ""),
            "parameters": (t.get("function") or {}).get("parameters") or {},
        }
        for t in body.get("tools") or []
    ]
    stream = bool(body.get("stream"))
    return Call(NAME, body.get("model", ""), "\n".join(system), messages, tools, stream, size)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in _blocks(content) if b["type"] == "text")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out = []
    for b in content:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        out.append(
            {"type": "text", "text": b.get("text", "")} if kind == "text" else {"type": kind}
        )
    return out


def _args(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments) if arguments else {}
    except ValueError:
        return {"$text": arguments}


def _message(answer: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.tool_uses:
        message["tool_calls"] = [
            {
                "id": t.id,
                "type": "function",
                "function": {"name": t.name, "arguments": json.dumps(t.input)},
            }
            for t in answer.tool_uses
        ]
    return message


def _finish(answer: Answer) -> str:
    return "tool_calls" if answer.tool_uses else "stop"


def _usage(answer: Answer) -> dict[str, Any]:
    u = answer.usage
    return {
        "prompt_tokens": u.input,
        "completion_tokens": u.output,
        "total_tokens": u.input + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read},
    }


def _events(out: dict[str, Any], include_usage: bool) -> list[tuple[str | None, Any]]:
    head = {k: out[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    message = out["choices"][0]["message"]
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if message["content"]:
        deltas.append({"content": message["content"]})
    for i, c in enumerate(message.get("tool_calls") or []):
        deltas.append({"tool_calls": [{"index": i, **c}]})
    chunks: list[tuple[str | None, Any]] = [
        (None, {**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]})
        for d in deltas
    ]
    finish = {"index": 0, "delta": {}, "finish_reason": out["choices"][0]["finish_reason"]}
    last = {**head, "choices": [finish]}
    if not include_usage:
        last["usage"] = out["usage"]
    chunks.append((None, last))
    if include_usage:
        chunks.append((None, {**head, "choices": [], "usage": out["usage"]}))
    chunks.append((None, "[DONE]"))
    return chunks


class _Dialect:
    name = NAME
    match = staticmethod(match)
    handle = staticmethod(handle)


DIALECT = _Dialect()
