"""Content blocks: classification of loop rows and the runtime's character estimator.

Pure functions over already-parsed values; no SQL, no pandas.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ._audit import js_length

# --- kinds of rows (ADF_FORMAT.md §3.4, §7, §8.1) -------------------------------------------

KINDS = (
    "message",
    "assistant",
    "tool_result",
    "context",
    "compaction_summary",
    "trigger",
    "notice",
    "unknown",
)

#: Start of a trigger row's text -> trigger kind (§8.1). First match wins.
TRIGGER_PREFIXES: tuple[tuple[str, str], ...] = (
    ("A scheduled timer has fired", "timer"),
    ("Agent started", "startup"),
    ("[Inbox notification]", "inbox"),
    ("You received a message from agent", "inbox"),
    ("A batch of ", "batch"),
    ("A task has been created", "task"),
    ("A task has completed", "task"),
    ("A file has been ", "file_change"),
    ("An outbound message was sent", "outbox"),
    ("A tool call has been intercepted", "tool_call"),
    ("A log entry has been recorded", "log"),
    ("An LLM call completed", "llm_call"),
    ("You have been triggered.", "fallback"),
)

#: Start of a runtime notice's text -> notice kind (§3.4).
NOTICE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("[Continue working autonomously", "continue"),
    ("[You have responded ", "no_tools_escalation"),
    ("[USER INTERRUPT", "user_interrupt"),
    ("Context is about to be compacted.", "memory_flush"),
    ("[System notice:", "system_notice"),
    ("[System] Turn ended by owner", "turn_ended"),
    ("[Provider error (", "provider_error"),
    ("[Provider unavailable (", "provider_unavailable"),
)

COMPACTION_MARKERS = ("[Loop Compacted, audited]", "[Loop Compacted]")
SUMMARY_FOOTER = "\n\n---\nYour loop was compacted."
_CONTEXT_RE = re.compile(r"^\[Context: ([^\]]+)\] ?")


def parse_context_header(text: str) -> dict[str, str] | None:
    """``[Context: cat | loop_inject=v2 | origin=o | key=k] ...`` -> its parts, else None.

    Examples
    --------
    >>> parse_context_header("[Context: skills | loop_inject=v2 | key=reg] body")
    {'category': 'skills', 'loop_inject': 'v2', 'key': 'reg'}
    """
    m = _CONTEXT_RE.match(text)
    if not m:
        return None
    parts = [p.strip() for p in m.group(1).split(" | ")]
    out = {"category": parts[0]}
    for p in parts[1:]:
        k, sep, v = p.partition("=")
        if sep:
            out[k] = v
    return out


def context_body(text: str) -> str:
    """The text of a context row without its ``[Context: ...]`` header (and the one space
    after it); other text unchanged.

    Examples
    --------
    >>> context_body("[Context: system_prompt] You are helpful.")
    'You are helpful.'
    """
    m = _CONTEXT_RE.match(text)
    return text[m.end() :] if m else text


def classify(role: str | None, blocks: list[dict[str, Any]]) -> tuple[str, str | None]:
    """Return ``(kind, subkind)`` of one loop row from its role and blocks.

    ``subkind`` is the context category, trigger kind or notice kind, else None.
    """
    if role == "assistant":
        return "assistant", None
    if role != "user":
        return "unknown", None
    first_text = None
    for b in blocks:
        t = b.get("type")
        if t == "tool_result":
            return "tool_result", None
        if t == "text" and first_text is None:
            first_text = b.get("text")
    if not isinstance(first_text, str):
        return ("message", None) if blocks else ("unknown", None)
    if first_text.startswith("[Context: "):
        hdr = parse_context_header(first_text)
        if hdr:
            return "context", hdr["category"]
    if first_text.startswith("[Loop Compacted"):
        return "compaction_summary", "audited" if first_text.startswith(
            COMPACTION_MARKERS[0]
        ) else "unaudited"
    for prefix, kind in TRIGGER_PREFIXES:
        if first_text.startswith(prefix):
            return "trigger", kind
    for prefix, kind in NOTICE_PREFIXES:
        if first_text.startswith(prefix):
            return "notice", kind
    return "message", "chat"


# --- the runtime's fast estimator (§9.1) -------------------------------------------------


def obj_chars(x: Any) -> int:
    """The estimator's size of a JSON value: ``obj(x)`` in ADF_FORMAT.md §9.1.

    Iterative, so a hostile value nested a thousand levels deep cannot exhaust the stack.
    """
    total = 0
    stack = [x]
    while stack:
        v = stack.pop()
        if v is None:
            total += 4
        elif isinstance(v, str):
            total += js_length(v) + 2
        elif isinstance(v, bool | int | float):
            total += 5
        elif isinstance(v, list):
            total += 2 + len(v)
            stack.extend(v)
        elif isinstance(v, dict):
            total += 2 + sum(js_length(str(k)) + 2 for k in v)
            stack.extend(v.values())
        else:
            total += 10
    return total


def _js_scalar(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return str(int(x)) if x.is_integer() else repr(x)
    return "[object Object]"


def js_string(x: Any) -> str:
    """JavaScript ``String(x ?? '')`` for JSON values (iterative over nested arrays)."""
    if not isinstance(x, list):
        return _js_scalar(x)
    out: list[str] = []
    iters = [iter(x)]
    first = [True]
    while iters:
        item = next(iters[-1], _END)
        if item is _END:
            iters.pop()
            first.pop()
            continue
        if not first[-1]:
            out.append(",")
        first[-1] = False
        if isinstance(item, list):
            iters.append(iter(item))
            first.append(True)
        else:
            out.append(_js_scalar(item))
    return "".join(out)


_END = object()


def block_chars(b: dict[str, Any]) -> tuple[int, int]:
    """``(text_chars, media_chars)`` the estimator counts for one block (no role overhead)."""
    t = b.get("type")
    if t == "text":
        v = b.get("text")
        return (js_length(v) if isinstance(v, str) else 0), 0
    if t == "tool_use":
        name = b.get("name") or ""
        return js_length(str(name)) + obj_chars(b.get("input")), 0
    if t == "tool_result":
        return js_length(js_string(b.get("content"))), 0
    if t == "thinking":
        v = b.get("thinking")
        n = js_length(v) if isinstance(v, str) else 0
        if b.get("reasoning_details") is not None:
            n += obj_chars(b.get("reasoning_details"))
        return n, 0
    if t in ("image_url", "video_url"):
        u = b.get(t) if isinstance(b.get(t), dict) else b
        url = u.get("url") if isinstance(u, dict) else None
        return 0, (js_length(url) if isinstance(url, str) else 0)
    if t == "input_audio":
        a = b.get("input_audio") if isinstance(b.get("input_audio"), dict) else b
        data, fmt = a.get("data"), a.get("format")
        return (
            js_length(fmt) if isinstance(fmt, str) else 0,
            js_length(data) if isinstance(data, str) else 0,
        )
    return 0, 0


#: Characters the estimator adds per message (role overhead).
MESSAGE_OVERHEAD = 16


def estimate_tokens(text_chars: int, media_chars: int = 0) -> int:
    """``ceil(text_chars / 3.5) + ceil(media_chars / 100)``, the runtime's estimate."""
    return math.ceil(text_chars / 3.5) + math.ceil(media_chars / 100)


def block_text(b: dict[str, Any]) -> str:
    """A readable one-string rendering of a block (for search and previews)."""
    t = b.get("type")
    if t == "text":
        v = b.get("text")
        return v if isinstance(v, str) else ""
    if t == "thinking":
        v = b.get("thinking")
        return v if isinstance(v, str) else ""
    if t == "tool_result":
        return js_string(b.get("content"))
    return ""


def strip_summary(text: str) -> str:
    """The summary text of a compaction row, without its marker and footer."""
    for m in COMPACTION_MARKERS:
        if text.startswith(m):
            text = text[len(m) :].lstrip(" ")
            break
    i = text.rfind(SUMMARY_FOOTER)
    return text[:i] if i >= 0 else text
