"""The Gemini API's message parts as ADF blocks: one rule for the agents that keep their
conversation in that shape (Gemini CLI, and Qwen Code, its fork)."""

from __future__ import annotations

import json
from typing import Any

from adfkit._sources.transcript.kit import tool_input


def json_value(v: Any) -> Any:
    """A value some versions write as JSON text: parsed, else as it is.

    Examples
    --------
    >>> json_value('{"a": 1}'), json_value("{not json"), json_value(3)
    ({'a': 1}, '{not json', 3)
    """
    if isinstance(v, str) and v[:1] in ("{", "["):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def blocks(parts: Any) -> list[dict[str, Any]]:
    """Gemini API ``parts`` -> ADF blocks (a bare string is one text part).

    Examples
    --------
    >>> blocks([{"text": "a"}, {"functionCall": {"id": "c1", "name": "ls", "args": {}}}])
    [{'type': 'text', 'text': 'a'}, {'type': 'tool_use', 'id': 'c1', 'name': 'ls', 'input': {}}]
    >>> blocks([{"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "x"}}}])
    [{'type': 'tool_result', 'tool_use_id': 'c1', 'content': 'x', 'is_error': False}]
    >>> blocks("hi"), blocks([{"text": None}])
    ([{'type': 'text', 'text': 'hi'}], [{'type': 'malformed_text'}])
    """
    if isinstance(parts, str):
        return [{"type": "text", "text": parts}] if parts else []
    out: list[dict[str, Any]] = []
    for p in parts if isinstance(parts, list) else []:
        if type(p) is not dict:
            continue
        if "functionCall" in p and isinstance(p["functionCall"], dict):
            f = p["functionCall"]
            out.append(
                {
                    "type": "tool_use",
                    "id": f.get("id"),
                    "name": f.get("name"),
                    "input": tool_input(f.get("args")),
                }
            )
        elif "functionResponse" in p and isinstance(p["functionResponse"], dict):
            f = p["functionResponse"]
            r = f.get("response")
            text = r.get("output", r.get("error")) if isinstance(r, dict) else r
            out.append(
                {
                    "type": "tool_result",
                    "tool_use_id": f.get("id"),
                    "content": text if isinstance(text, str) else json.dumps(text),
                    "is_error": isinstance(r, dict) and "error" in r,
                }
            )
        elif isinstance(p.get("text"), str):
            if p.get("thought") is True:
                out.append({"type": "thinking", "thinking": p["text"]})
            else:
                out.append({"type": "text", "text": p["text"]})
        else:  # another kind of part (inlineData...), or a known one holding no object
            kinds = [k for k in p if k != "thoughtSignature"]
            if kinds:
                known = kinds[0] in ("text", "functionCall", "functionResponse")
                out.append({"type": f"malformed_{kinds[0]}" if known else kinds[0]})
    return out
