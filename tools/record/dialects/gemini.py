"""Gemini API: ``POST /v1beta/models/<model>:generateContent``, ``:streamGenerateContent``
(server-sent ``data:`` chunks with ``?alt=sse``, else one JSON array) and ``:countTokens``.

A request's ``contents`` hold ``parts``: ``text`` (``thought: true`` marks thinking),
``functionCall`` {``id``, ``name``, ``args``} and ``functionResponse`` {``id``, ``name``,
``response``}. Each content is one neutral message (``model`` is ``assistant``); a function
response stays in its ``user`` message as a ``tool_result``. The answer streams as one chunk;
its function calls carry an ``id`` (the API's optional field), so an agent that would make up
one of its own (from the clock) keeps the server's and recordings stay byte-stable."""

from __future__ import annotations

import json
import math
from typing import Any

from ..script import Answer, Call
from ..server import Model, Reply, Request

NAME = "gemini"


def match(method: str, path: str) -> bool:
    ends = (":generateContent", ":streamGenerateContent", ":countTokens")
    return method == "POST" and "/models/" in path and path.endswith(ends)


def handle(req: Request, model: Model) -> Reply:
    body = req.body or {}
    name, _, action = req.path.rsplit("/", 1)[-1].partition(":")
    if action == "countTokens":
        model.write(req, NAME, "count_tokens")
        inner = body.get("generateContentRequest") or body
        return Reply.json({"totalTokens": math.ceil(len(json.dumps(inner)) / 4)})
    stream = action == "streamGenerateContent"
    call = parse(body, name, stream, len(json.dumps(body)))
    answer = model.answer(req, NAME, call)
    response = _response(name, answer)
    if not stream:
        return Reply.json(response)
    if "sse" in req.query.get("alt", []):
        return Reply.sse(_chunks(response))
    return Reply.json(_chunks_json(response))


def parse(body: dict[str, Any], model: str, stream: bool, size: int) -> Call:
    system = "\n".join(p.get("text", "") for p in _parts(body.get("systemInstruction")))
    messages = []
    for content in body.get("contents") or []:
        role = "assistant" if content.get("role") == "model" else "user"
        blocks = [_block(p, i) for i, p in enumerate(_parts(content))]
        messages.append({"role": role, "content": [b for b in blocks if b is not None]})
    tools = [
        {
            "name": f.get("name", ""),
            "description": f.get("description", ""),
            "parameters": f.get("parametersJsonSchema") or _schema(f.get("parameters") or {}),
        }
        for t in body.get("tools") or []
        for f in t.get("functionDeclarations") or []
    ]
    return Call(NAME, model, system, messages, tools, stream, size)


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [p for p in content.get("parts") or [] if isinstance(p, dict)]
    if isinstance(content, list):
        return [p for p in content if isinstance(p, dict)]
    return []


def _block(p: dict[str, Any], i: int) -> dict[str, Any] | None:
    if "functionCall" in p:
        f = p["functionCall"]
        fid = f.get("id") or f"{f.get('name', '')}#{i}"
        return {"type": "tool_use", "id": fid, "name": f.get("name", ""), "input": f.get("args")}
    if "functionResponse" in p:
        f = p["functionResponse"]
        response = f.get("response")
        if isinstance(response, dict) and set(response) <= {"output", "error"}:
            text = response.get("output", response.get("error", ""))
        else:
            text = response
        return {
            "type": "tool_result",
            "tool_use_id": f.get("id") or f.get("name", ""),
            "content": text if isinstance(text, str) else json.dumps(text),
            "is_error": isinstance(response, dict) and "error" in response,
        }
    if "text" in p:
        return {"type": "thinking" if p.get("thought") else "text", "text": p["text"]}
    if "thoughtSignature" in p and len(p) == 1:
        return None
    kinds = [k for k in p if k != "thoughtSignature"]
    return {"type": kinds[0] if kinds else "unknown"}


def _schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The API's OpenAPI subset (``type: "OBJECT"``) in JSON-schema spelling."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: _schema(v) if isinstance(v, dict) else v for k, v in value.items()}
        elif key == "items" and isinstance(value, dict):
            out[key] = _schema(value)
        else:
            out[key] = value
    return out


def _usage(answer: Answer) -> dict[str, int]:
    u = answer.usage
    out = {"promptTokenCount": u.input, "candidatesTokenCount": u.output}
    if u.cache_read:
        out["cachedContentTokenCount"] = u.cache_read
    out["totalTokenCount"] = u.input + u.output
    return out


def _response(model: str, answer: Answer) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if answer.text:
        parts.append({"text": answer.text})
    for t in answer.tool_uses:
        parts.append({"functionCall": {"id": t.id, "name": t.name, "args": t.input}})
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": _usage(answer),
        "modelVersion": model,
        "responseId": f"resp_rec{answer.n:05d}",
    }


def _chunks_json(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer as one chunk: parts, finish reason and usage together (a chunk without
    parts is taken by some clients for an empty answer and retried)."""
    return [response]


def _chunks(response: dict[str, Any]) -> list[tuple[str | None, Any]]:
    return [(None, chunk) for chunk in _chunks_json(response)]


class _Dialect:
    name = NAME
    match = staticmethod(match)
    handle = staticmethod(handle)


DIALECT = _Dialect()
