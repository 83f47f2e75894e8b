"""An event's values as ADF content: text, a tool request, a tool result (the format's
notes: :mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._sources.transcript.kit import tool_input


def text_of(v: Any) -> str:
    return v if isinstance(v, str) else ""


def tool_use(r: Any) -> dict[str, Any] | None:
    if type(r) is not dict:
        return None
    args = tool_input(r.get("arguments"))
    return {"type": "tool_use", "id": r.get("toolCallId"), "name": r.get("name"), "input": args}


def _result_text(d: dict[str, Any]) -> str:
    res, err = d.get("result"), d.get("error")
    if type(res) is dict and isinstance(res.get("content"), str):
        return str(res["content"])
    if type(err) is dict and isinstance(err.get("message"), str):
        return str(err["message"])
    if isinstance(err, str):
        return err
    return ""


def tool_result(d: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": d.get("toolCallId"),
        "content": _result_text(d),
        "is_error": d.get("success") is not True,
    }
