"""A Codex item's content as ADF blocks: messages, reasoning, tool calls and their outputs."""

from __future__ import annotations

from typing import Any

from adfkit._sources.transcript.kit import (
    result_text,
    tool_input,
)

_CONTEXT_PREFIXES = (
    "# AGENTS.md instructions",
    "<user_instructions>",
    "<environment_context>",
    "<permissions instructions>",
    "<developer_instructions>",
    "<user_shell_command>",
)


_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})


_SKIP_ITEMS = frozenset(
    {"ghost_snapshot", "compaction", "compaction_summary", "context_compaction", "additional_tools"}
)


def _message_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for c in content if isinstance(content, list) else []:
        if type(c) is not dict:
            continue
        t = c.get("type")
        if t in ("input_text", "output_text", "text", "refusal"):
            txt = c.get("text", c.get("refusal"))
            out.append({"type": "text", "text": txt if isinstance(txt, str) else ""})
        elif t == "input_image":
            url = c.get("image_url")
            out.append(
                {"type": "image_url", "image_url": {"url": url if isinstance(url, str) else ""}}
            )
        else:
            out.append(c)
    return out


def _assistant_block(p: dict[str, Any], line: int) -> dict[str, Any] | None:
    t = p.get("type")
    if t == "reasoning":
        parts: list[str] = []
        for key in ("summary", "content"):
            v = p.get(key)
            if isinstance(v, list):
                parts.extend(
                    x["text"] for x in v if type(x) is dict and isinstance(x.get("text"), str)
                )
        return {"type": "thinking", "thinking": "\n".join(parts)}
    if t == "function_call":
        return {
            "type": "tool_use",
            "id": p.get("call_id"),
            "name": p.get("name"),
            "input": tool_input(p.get("arguments")),
        }
    if t == "custom_tool_call":
        inp = p.get("input")
        return {
            "type": "tool_use",
            "id": p.get("call_id"),
            "name": p.get("name"),
            "input": {"input": inp} if not isinstance(inp, dict) else inp,
        }
    if t in ("local_shell_call", "web_search_call", "tool_search_call"):
        action = p.get("action")
        name = {"local_shell_call": "local_shell", "web_search_call": "web_search"}.get(t, t)
        cid = p.get("call_id") or p.get("id") or f"{name}@{line}"
        args = p.get("arguments")
        inp = action if isinstance(action, dict) else tool_input(args) if args else {}
        return {"type": "tool_use", "id": cid, "name": name, "input": inp}
    return None


def _output_block(p: dict[str, Any]) -> dict[str, Any]:
    out = p.get("output")
    is_error = False
    if isinstance(out, dict):
        is_error = out.get("success") is False
        out = out.get("content", out.get("output"))
    return {
        "type": "tool_result",
        "tool_use_id": p.get("call_id"),
        "content": result_text(out),
        "is_error": is_error,
    }


def _is_context(text: str) -> bool:
    return text.lstrip().startswith(_CONTEXT_PREFIXES)
