"""An OpenHands event's values as ADF content: its text and images, thinking, a tool
call's arguments, an observation's text (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._sources.transcript.kit import result_text, tool_input


def get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def adf_blocks(content: Any) -> list[dict[str, Any]]:
    """OpenHands ``TextContent``/``ImageContent`` list -> ADF blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for c in content if isinstance(content, list) else []:
        if type(c) is not dict:
            continue
        t = c.get("type")
        if t == "text":
            txt = c.get("text")
            if isinstance(txt, str) and txt:
                out.append({"type": "text", "text": txt})
        elif t == "image":
            urls = c.get("image_urls")
            for u in urls if isinstance(urls, list) else []:
                out.append(
                    {"type": "image_url", "image_url": {"url": u if isinstance(u, str) else ""}}
                )
        else:
            out.append({k: v for k, v in c.items() if k != "cache_prompt"})
    return out


def thinking_of(ev: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    rc = ev.get("reasoning_content")
    if isinstance(rc, str) and rc:
        out.append({"type": "thinking", "thinking": rc})
    tb = ev.get("thinking_blocks")
    for b in tb if isinstance(tb, list) else []:
        if type(b) is dict and isinstance(b.get("thinking"), str) and b["thinking"]:
            out.append({"type": "thinking", "thinking": b["thinking"]})
    return out


def arguments_of(ev: dict[str, Any]) -> dict[str, Any]:
    raw = get(ev, "tool_call", "arguments")
    if isinstance(raw, str | dict):
        return tool_input(raw)
    action = ev.get("action")
    if isinstance(action, dict):
        return {k: v for k, v in action.items() if k != "kind"}
    return {}


def observation_text(obs: Any) -> tuple[str, bool]:
    if not isinstance(obs, dict):
        return result_text(obs), False
    err = obs.get("is_error") is True or obs.get("error") not in (None, False, "")
    if "content" in obs:
        return result_text(adf_blocks(obs.get("content")) or obs.get("content")), err
    for k in ("output", "text", "message", "error"):
        v = obs.get(k)
        if isinstance(v, str):
            return v, err
    return "", err
