"""The runtime's fast token estimator and the JavaScript string semantics it counts in.

``js_len`` is ``String.length`` (UTF-16 code units), ``jdump`` is ``JSON.stringify`` (compact,
key order kept, non-ASCII unescaped) and ``estimate_tokens`` is the estimator of ADF_FORMAT
§9.1: 16 characters per message plus the JS lengths of its text, thinking, tool-use (name and
the ``obj`` size of the input) and tool-result content, divided by 3.5 and rounded up (media
is never simulated). The simulator uses it for the pre-flight guard, for the chat-token count
after a compaction and to invent plausible ``tokens``.

Written from ADF_FORMAT.md, independently of adfkit's ``_tokens``/``_content``: the ground
truth built on it cross-checks the reader, so do not replace it with imports from adfkit.
"""

from __future__ import annotations

import json
import math
from typing import Any


def js_len(s: str) -> int:
    """Length of ``s`` in UTF-16 code units (JavaScript ``String.length``)."""
    return len(s.encode("utf-16-le")) // 2


def jdump(x: Any) -> str:
    """Compact JSON like ``JSON.stringify`` (key order kept, non-ASCII unescaped)."""
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False)


def _obj(x: Any) -> int:
    if x is None:
        return 4
    if isinstance(x, (bool, int | float)):
        return 5
    if isinstance(x, str):
        return js_len(x) + 2
    if isinstance(x, list):
        return 2 + sum(_obj(i) + 1 for i in x)
    if isinstance(x, dict):
        return 2 + sum(js_len(str(k)) + _obj(v) + 2 for k, v in x.items())
    return 10


def _block_chars(b: dict) -> int:
    t = b.get("type")
    if t == "text":
        return js_len(b.get("text") or "")
    if t == "tool_use":
        return js_len(b.get("name") or "") + _obj(b.get("input"))
    if t == "tool_result":
        c = b.get("content")
        return js_len("" if c is None else str(c))
    if t == "thinking":
        n = js_len(b.get("thinking") or "")
        if b.get("reasoning_details") is not None:
            n += _obj(b["reasoning_details"])
        return n
    return 0


def row_chars(content: list[dict]) -> int:
    return 16 + sum(_block_chars(b) for b in content)


def estimate_tokens(messages: list[list[dict]]) -> int:
    """The runtime's fast estimator (ADF_FORMAT §9.1) over message contents (text only)."""
    return math.ceil(sum(row_chars(m) for m in messages) / 3.5)
