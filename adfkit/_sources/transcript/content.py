"""Content values: tool-call arguments (:func:`tool_input`), tool-result text
(:func:`result_text`), a row's text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    pass

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).


def tool_input(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as the ``input`` object of a ``tool_use`` block: an object as it
    is, JSON text parsed (not valid JSON: ``{"_error", "_raw_arguments"}``), none at all ``{}``,
    any other value kept under ``_raw_arguments``.

    Examples
    --------
    >>> tool_input('{"cmd": "ls"}'), tool_input(None), tool_input("[1]")
    ({'cmd': 'ls'}, {}, {'_raw_arguments': [1]})
    >>> tool_input("{oops")
    {'_error': 'arguments are not valid JSON', '_raw_arguments': '{oops'}
    """
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            v = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"_error": "arguments are not valid JSON", "_raw_arguments": raw}
        return v if isinstance(v, dict) else {"_raw_arguments": v}
    return {} if raw is None else {"_raw_arguments": raw}


def result_text(content: Any) -> str:
    """A tool result's ``content`` (string or list of parts) as one string (ADF shape).

    Text parts are joined by newlines; other parts become ``[<type>]`` placeholders, so base64
    images never travel in the text.

    Examples
    --------
    >>> result_text([{"type": "text", "text": "a"}, {"type": "image", "source": {}}])
    'a\\n[image]'
    """
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return str(content) if isinstance(content, int | float | bool) else ""
    parts: list[str] = []
    for p in content:
        if isinstance(p, str):
            parts.append(p)
        elif isinstance(p, dict):
            t = p.get("type")
            txt = p.get("text")
            if isinstance(txt, str) and t in ("text", "input_text", "output_text", None):
                parts.append(txt)
            else:
                parts.append(f"[{t if isinstance(t, str) else 'part'}]")
    return "\n".join(parts)


def text_of(content: list[dict[str, Any]]) -> str:
    """The row's text blocks joined by newlines (used to match copies of a message)."""
    return "\n".join(
        b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str)
    )
