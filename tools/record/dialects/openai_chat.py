"""OpenAI Chat Completions: ``POST /v1/chat/completions`` (or ``/chat/completions`` under any
base URL; JSON, or server-sent ``data:`` chunks when ``stream``, a last chunk with ``usage``
when ``stream_options.include_usage``, then ``data: [DONE]``), and ``GET .../models`` (a list
of one model: the one asked for last, else ``rec-model``) logged as ``models``.

Messages: ``system``/``developer`` before the first other message make ``Call.system``; one
later is kept in place as a ``system`` message (the agent sent it there). ``assistant`` with
``tool_calls`` gives ``tool_use`` blocks (``arguments`` parsed as JSON; a string that is not
JSON kept as ``{"$raw": ...}``), ``reasoning_content``/``reasoning_text`` a thinking block;
``tool`` gives a ``tool`` message with one ``tool_result``."""

from __future__ import annotations

import json
from typing import Any

from ..script import Answer, Call
from ..server import Model, Reply, Request

NAME = "openai_chat"
#: A fixed ``created`` time: recordings stay byte-stable.
CREATED = 1764720000
DEFAULT_MODEL = "rec-model"
_last_model = [DEFAULT_MODEL]


def match(method: str, path: str) -> bool:
    p = path.rstrip("/")
    if method == "POST":
        return p.endswith("/chat/completions")
    return method == "GET" and (p.endswith("/models") or "/models/" in p) and ":" not in p


def handle(req: Request, model: Model) -> Reply:
    body = req.body if isinstance(req.body, dict) else {}
    if req.method == "GET":
        model.write(req, NAME, "models")
        return Reply.json(_models(req.path))
    call = parse(body, len(json.dumps(body)))
    if call.model:
        _last_model[0] = call.model
    answer = model.answer(req, NAME, call)
    if not body.get("stream"):
        return Reply.json(_completion(body, answer))
    opts = body.get("stream_options") or {}
    return Reply.sse((None, c) for c in _chunks(body, answer, bool(opts.get("include_usage"))))


def _model_entry(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": CREATED, "owned_by": "rec"}


def _models(path: str) -> dict[str, Any]:
    p = path.rstrip("/")
    if "/models/" in p:
        return _model_entry(p.rsplit("/models/", 1)[1])
    return {"object": "list", "data": [_model_entry(_last_model[0])]}


# --- the request ----------------------------------------------------------------------------


def parse(body: dict[str, Any], size: int) -> Call:
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        if role in ("system", "developer"):
            if messages:
                messages.append({"role": "system", "content": _parts(m.get("content"))})
            else:
                system.append(_text(m.get("content")))
        elif role == "tool":
            messages.append({"role": "tool", "content": [_tool_result(m)]})
        elif role == "assistant":
            messages.append({"role": "assistant", "content": _assistant(m)})
        else:
            messages.append({"role": str(role), "content": _parts(m.get("content"))})
    tools = [_tool(t) for t in body.get("tools") or [] if isinstance(t, dict)]
    return Call(
        NAME,
        str(body.get("model") or ""),
        "\n\n".join(system),
        messages,
        tools,
        bool(body.get("stream")),
        size,
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in _parts(content) if b["type"] == "text")


def _parts(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for p in content if isinstance(content, list) else []:
        if not isinstance(p, dict):
            continue
        kind = p.get("type")
        if kind in ("text", "input_text"):
            out.append({"type": "text", "text": p.get("text", "")})
        else:
            out.append({"type": str(kind)})
    return out


def _assistant(m: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for key in ("reasoning_content", "reasoning_text", "reasoning"):
        r = m.get(key)
        if isinstance(r, str) and r:
            blocks.append({"type": "thinking", "text": r})
            break
    blocks += _parts(m.get("content"))
    for tc in m.get("tool_calls") or []:
        fn = tc.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": tc.get("id", ""),
                "name": fn.get("name", ""),
                "input": _arguments(fn.get("arguments")),
            }
        )
    return blocks


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {"$raw": raw}


def _tool_result(m: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": m.get("tool_call_id", ""),
        "content": _text(m.get("content")),
        "is_error": False,  # Chat Completions has no error flag on a tool message
    }


def _tool(t: dict[str, Any]) -> dict[str, Any]:
    inner = t.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else t
    return {
        "name": fn.get("name", ""),
        "description": fn.get("description", ""),
        "parameters": fn.get("parameters") or {},
    }


# --- the answer -----------------------------------------------------------------------------


def _usage(answer: Answer) -> dict[str, Any]:
    u = answer.usage
    return {
        "prompt_tokens": u.input,
        "completion_tokens": u.output,
        "total_tokens": u.input + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def _tool_calls(answer: Answer) -> list[dict[str, Any]]:
    return [
        {
            "id": t.id,
            "type": "function",
            "function": {"name": t.name, "arguments": json.dumps(t.input)},
        }
        for t in answer.tool_uses
    ]


def _finish(answer: Answer) -> str:
    return "tool_calls" if answer.tool_uses else "stop"


def _completion(body: dict[str, Any], answer: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.tool_uses:
        message["tool_calls"] = _tool_calls(answer)
    return {
        "id": f"chatcmpl-rec{answer.n:05d}",
        "object": "chat.completion",
        "created": CREATED,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(answer)}],
        "usage": _usage(answer),
    }


def _chunks(body: dict[str, Any], answer: Answer, with_usage: bool) -> list[Any]:
    head = {
        "id": f"chatcmpl-rec{answer.n:05d}",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": body.get("model", ""),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out: list[Any] = [chunk({"role": "assistant", "content": ""})]
    if answer.text:
        out.append(chunk({"content": answer.text}))
    for i, tc in enumerate(_tool_calls(answer)):
        fn = tc["function"]
        first = {"index": i, "id": tc["id"], "type": "function", "function": {"name": fn["name"]}}
        first["function"]["arguments"] = ""
        out.append(chunk({"tool_calls": [first]}))
        args = {"index": i, "function": {"arguments": fn["arguments"]}}
        out.append(chunk({"tool_calls": [args]}))
    out.append(chunk({}, _finish(answer)))
    if with_usage:
        out.append({**head, "choices": [], "usage": _usage(answer)})
    out.append("[DONE]")
    return out


class _Dialect:
    name = NAME
    match = staticmethod(match)
    handle = staticmethod(handle)


DIALECT = _Dialect()
