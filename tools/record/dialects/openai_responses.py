"""OpenAI Responses: ``POST .../responses`` (JSON, or server-sent events when ``stream``),
``POST .../responses/compact`` (a remote compaction: the history in, replacement items out;
logged as kind ``compaction``; Codex 0.171 does not use it: its remote compaction is a
``/responses`` call ending with a ``compaction_trigger`` item), ``GET .../models`` (logged,
answered with none) and ``GET .../responses`` (a WebSocket upgrade: logged, refused).

The request's ``instructions`` are the system prompt; its ``input`` items become neutral
messages in order: a ``message`` its role's message (a ``developer`` or ``system`` message,
which sits between the turns apart from ``instructions``, is a ``user`` message, the neutral
roles being three, with its API role kept as ``api_role``); the items the
model wrote (``reasoning``, ``function_call``, ``custom_tool_call``, ``local_shell_call``, an
assistant ``message``) one assistant message while they follow each other; each
``*_output`` a ``tool`` message of one ``tool_result``; any other item (``compaction``...)
a ``user`` message of its own holding a block of its type, but for a ``compaction`` item (a
remote compaction's summary, encrypted by the real API, written readable by this server): a
text block of its ``encrypted_content`` marked ``"item": "compaction"``."""

from __future__ import annotations

import json
from typing import Any

from ..script import Answer, Call
from ..server import Model, Reply, Request

NAME = "openai_responses"

#: Items the model writes: consecutive ones are one assistant message.
MODEL_ITEMS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
OUTPUT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)


def match(method: str, path: str) -> bool:
    p = path.rstrip("/")
    if method == "POST":
        return p.endswith(("/responses", "/responses/compact"))
    return method == "GET" and p.endswith(("/models", "/responses"))


def handle(req: Request, model: Model) -> Reply:
    body = req.body if isinstance(req.body, dict) else {}
    if req.method == "GET" and req.path.rstrip("/").endswith("/responses"):
        # Codex tries the Responses WebSocket first with the OpenAI provider: not served here,
        # it falls back to HTTP after its retries
        model.write(req, NAME, "websocket")
        return Reply.json({"error": {"message": "no WebSocket here"}}, 404)
    if req.method == "GET":
        model.write(req, NAME, "models")
        return Reply.json({"object": "list", "data": [], "models": []})
    call = parse(body, prompt_size(body))
    if req.path.rstrip("/").endswith("/compact"):
        call.system += "\n(remote compaction)"
        return _compact(req, model, call)
    answer = model.answer(req, NAME, call)
    response = _response(body, answer)
    if not body.get("stream"):
        return Reply.json(response)
    return Reply.sse(_events(response))


#: Request fields that are not prompt: ids and metadata (Codex's ``client_metadata`` holds turn
#: ids and, from one run to the next, more or fewer keys), left out of the size usage grows with.
NOT_PROMPT = ("client_metadata", "prompt_cache_key", "metadata", "user", "store", "include")
#: The same in an input item (Codex 0.171 sends each item's id and a metadata passthrough with
#: a creation time whose digits vary).
NOT_PROMPT_ITEM = ("id", "internal_chat_message_metadata_passthrough", "metadata", "status")


def prompt_size(body: dict[str, Any]) -> int:
    """The request's size as the prompt's: its JSON without the fields that are not prompt."""
    out = {k: v for k, v in body.items() if k not in NOT_PROMPT}
    if isinstance(out.get("input"), list):
        out["input"] = [
            {k: v for k, v in i.items() if k not in NOT_PROMPT_ITEM} if isinstance(i, dict) else i
            for i in out["input"]
        ]
    return len(json.dumps(out))


def parse(body: dict[str, Any], size: int) -> Call:
    system = body.get("instructions") or ""
    if not isinstance(system, str):
        system = json.dumps(system)
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    messages: list[dict[str, Any]] = []
    for item in items or []:
        if isinstance(item, dict):
            _add(messages, item)
    tools = [_tool(t) for t in _flat_tools(body.get("tools") or [])]
    stream = bool(body.get("stream"))
    return Call(NAME, str(body.get("model", "")), system, messages, tools, stream, size)


def _add(messages: list[dict[str, Any]], item: dict[str, Any]) -> None:
    kind = item.get("type", "message")
    if kind == "message" and item.get("role") != "assistant":
        role = str(item.get("role"))
        message = {"role": "user", "content": _content(item.get("content"))}
        messages.append(message if role == "user" else {**message, "api_role": role})
        return
    if kind in OUTPUT_ITEMS:
        messages.append({"role": "tool", "content": [_result(item)]})
        return
    if kind == "message" or kind in MODEL_ITEMS:
        blocks = _content(item.get("content")) if kind == "message" else [_model_block(item)]
        if messages and messages[-1]["role"] == "assistant":
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": "assistant", "content": blocks})
        return
    if kind == "compaction":  # a remote compaction's summary: this server wrote it, readable
        text = str(item.get("encrypted_content") or "")
        block: dict[str, Any] = {"type": "text", "text": text, "item": "compaction"}
    else:
        block = {"type": str(kind)}
    messages.append({"role": "user", "content": [block]})


def _content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out = []
    for c in content or []:
        if not isinstance(c, dict):
            continue
        if c.get("type") in ("input_text", "output_text", "text"):
            out.append({"type": "text", "text": c.get("text", "")})
        else:
            out.append({"type": str(c.get("type"))})
    return out


def _model_block(item: dict[str, Any]) -> dict[str, Any]:
    kind = item["type"]
    if kind == "reasoning":
        parts = [s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict)]
        return {"type": "thinking", "text": "\n".join(parts)}
    if kind == "function_call":
        try:
            args = json.loads(item.get("arguments") or "{}")
        except ValueError:
            args = {"$raw": item.get("arguments")}
        return {
            "type": "tool_use",
            "id": item.get("call_id"),
            "name": item.get("name"),
            "input": args,
        }
    if kind == "custom_tool_call":
        inp = {"input": item.get("input")}
        return {
            "type": "tool_use",
            "id": item.get("call_id"),
            "name": item.get("name"),
            "input": inp,
        }
    cid = item.get("call_id") or item.get("id")
    return {"type": "tool_use", "id": cid, "name": kind, "input": item.get("action") or {}}


def _result(item: dict[str, Any]) -> dict[str, Any]:
    out = item.get("output")
    if isinstance(out, list):
        out = "\n".join(x.get("text", "") for x in out if isinstance(x, dict))
    elif isinstance(out, dict):
        out = str(out.get("content", ""))
    return {
        "type": "tool_result",
        "tool_use_id": item.get("call_id"),
        "content": out if isinstance(out, str) else json.dumps(out),
        "is_error": False,
    }


def _flat_tools(tools: list[Any]) -> list[dict[str, Any]]:
    """The request's tools, those of a ``namespace`` (Codex's ``multi_agent_v1``) in its place."""
    out: list[dict[str, Any]] = []
    for t in tools:
        if isinstance(t, dict) and t.get("type") == "namespace":
            out += _flat_tools(t.get("tools") or [])
        elif isinstance(t, dict):
            out.append(t)
    return out


def _tool(t: dict[str, Any]) -> dict[str, Any]:
    name = t.get("name") or t.get("type", "")
    params = t.get("parameters") or {}
    if t.get("type") == "custom":
        params = {"type": "object", "properties": {"input": {"type": "string"}}}
    return {"name": name, "description": t.get("description", ""), "parameters": params}


def _usage(answer: Answer) -> dict[str, Any]:
    u = answer.usage
    return {
        "input_tokens": u.input,
        "input_tokens_details": {"cached_tokens": u.cache_read},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.input + u.output,
    }


def compaction_triggered(body: dict[str, Any]) -> bool:
    """Codex's remote compaction with the OpenAI provider (0.171): a ``/responses`` request
    whose input ends with a ``compaction_trigger`` item, answered with a ``compaction`` item."""
    items = body.get("input")
    last = items[-1] if isinstance(items, list) and items else None
    return isinstance(last, dict) and last.get("type") == "compaction_trigger"


def _output(answer: Answer, body: dict[str, Any]) -> list[dict[str, Any]]:
    tools = _flat_tools(body.get("tools") or [])
    out: list[dict[str, Any]] = []
    if compaction_triggered(body):
        item_id = f"cmp_rec{answer.n:05d}"
        return [{"type": "compaction", "id": item_id, "encrypted_content": answer.text}]
    if answer.text:
        out.append(
            {
                "type": "message",
                "id": f"msg_rec{answer.n:05d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
            }
        )
    custom = {t.get("name") for t in tools if t.get("type") == "custom"}
    spaces = {
        str(x.get("name")): str(t.get("name"))
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("type") == "namespace"
        for x in t.get("tools") or []
        if isinstance(x, dict)
    }
    for i, t in enumerate(answer.tool_uses):
        item_id = f"fc_rec{answer.n:05d}_{i}"
        if t.name in custom:
            text = str(t.input.get("input", ""))
            out.append(
                {"type": "custom_tool_call", "id": item_id, "call_id": t.id, "name": t.name}
                | {"input": text, "status": "completed"}
            )
            continue
        call = {
            "type": "function_call",
            "id": item_id,
            "call_id": t.id,
            "name": t.name,
            "arguments": json.dumps(t.input),
            "status": "completed",
        }
        out.append(call | {"namespace": spaces[t.name]} if t.name in spaces else call)
    return out


def _response(body: dict[str, Any], answer: Answer) -> dict[str, Any]:
    return {
        "id": f"resp_rec{answer.n:05d}",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": body.get("model", ""),
        "output": _output(answer, body),
        "parallel_tool_calls": bool(body.get("parallel_tool_calls")),
        "usage": _usage(answer),
    }


def _events(response: dict[str, Any]) -> list[tuple[str | None, Any]]:
    seq = iter(range(1_000_000))
    opened = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "response": opened}),
        ("response.in_progress", {"type": "response.in_progress", "response": opened}),
    ]
    for i, item in enumerate(response["output"]):
        first = {**item, "status": "in_progress"}
        if item["type"] == "message":
            first["content"] = []
        elif item["type"] == "function_call":
            first["arguments"] = ""
        events.append(_event("response.output_item.added", next(seq), output_index=i, item=first))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            at = {"item_id": item["id"], "output_index": i, "content_index": 0}
            part = {"type": "output_text", "text": "", "annotations": []}
            events += [
                _event("response.content_part.added", next(seq), **at, part=part),
                _event("response.output_text.delta", next(seq), **at, delta=text),
                _event("response.output_text.done", next(seq), **at, text=text),
                _event("response.content_part.done", next(seq), **at, part=item["content"][0]),
            ]
        elif item["type"] == "function_call":
            at = {"item_id": item["id"], "output_index": i}
            events += [
                _event(
                    "response.function_call_arguments.delta",
                    next(seq),
                    **at,
                    delta=item["arguments"],
                ),
                _event(
                    "response.function_call_arguments.done",
                    next(seq),
                    **at,
                    arguments=item["arguments"],
                ),
            ]
        events.append(_event("response.output_item.done", next(seq), output_index=i, item=item))
    events.append(_event("response.completed", next(seq), response=response))
    return events


def _event(name: str, n: int, **data: Any) -> tuple[str, dict[str, Any]]:
    return name, {"type": name, "sequence_number": n, **data}


def _compact(req: Request, model: Model, call: Call) -> Reply:
    """A remote compaction: the user messages the request kept, then a ``compaction`` item
    whose ``encrypted_content`` is the summary (this server's own, so readable)."""
    answer = model.answer(req, NAME, call)
    body = req.body if isinstance(req.body, dict) else {}
    kept = [
        i
        for i in body.get("input") or []
        if isinstance(i, dict) and i.get("type") == "message" and i.get("role") == "user"
    ]
    item = {"type": "compaction", "encrypted_content": answer.text}
    return Reply.json({"output": [*kept, item], "usage": _usage(answer)})


class _Dialect:
    name = NAME
    match = staticmethod(match)
    handle = staticmethod(handle)


DIALECT = _Dialect()
