"""Identifiers in agent text, and whether a compaction summary kept them.

:func:`identifiers` finds file paths, URLs, tool names, message ids, long numbers and seq
citations in swept rows; :func:`recalled` says whether a summary mentions one. Used by
:mod:`adfkit._compactions` (the recall columns of ``compactions()``, ``summary_recall()``).
"""

from __future__ import annotations

import re
from typing import Any

from ._replay import ReplayRow
from ._rows import parse_content, strip_summary

_URL = re.compile(r"https?://[^\s\"'<>)\]`]+")


_PATH = re.compile(
    r"(?<![\w/.:-])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b|\b[\w-]+\.(?:md|json|txt|csv|py|js|ts|ya?ml|html|log)\b"
)


_NUMBER = re.compile(r"(?<![\w.#/-])\d{3,}(?![\w/-])")


_CITE = re.compile(r"\[S(\d+)\]")


_MSG_ID = re.compile(r'"(?:id|message_id|thread_id|parent_id)"\s*:\s*"([A-Za-z0-9_-]{8,64})"')


_PATH_KEYS = ("path", "file", "filename", "filepath", "prefix", "dir", "directory")


_ID_KEYS = ("id", "message_id", "msg_id", "thread_id", "parent_id", "reply_to_id")


def _walk_input(x: Any, key: str | None, out: list[tuple[str, str]]) -> None:
    if isinstance(x, dict):
        for k, v in x.items():
            _walk_input(v, str(k), out)
    elif isinstance(x, list):
        for v in x:
            _walk_input(v, key, out)
    elif isinstance(x, str):
        k = (key or "").lower()
        if _URL.fullmatch(x):
            out.append(("url", x))
        elif k in _PATH_KEYS or k == "url":
            out.append(("url" if k == "url" else "path", x))
        elif k in _ID_KEYS:
            out.append(("message_id", x))
        else:
            _scan_text(x, out, numbers=False)
    elif isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 100:
        out.append(("number", str(x)))


def _scan_text(t: str, out: list[tuple[str, str]], *, numbers: bool) -> None:
    for m in _URL.finditer(t):
        out.append(("url", m.group(0).rstrip(".,;:")))
    rest = _URL.sub(" ", t)
    for m in _PATH.finditer(rest):
        out.append(("path", m.group(0)))
    for m in _MSG_ID.finditer(t):
        out.append(("message_id", m.group(1)))
    for m in _CITE.finditer(t):
        out.append(("seq", m.group(1)))
    if numbers:
        for m in _NUMBER.finditer(_PATH.sub(" ", rest)):
            out.append(("number", m.group(0)))


def identifiers(rows: list[ReplayRow]) -> list[tuple[str, str, int]]:
    """``(kind, value, first_seq)`` of every identifier in the given rows (deduplicated).

    Kinds: ``path`` (tool-input paths and path-like text), ``url``, ``tool`` (names of tools
    called), ``message_id`` (ids in tool inputs and message JSON), ``number`` (3+ digit numbers
    in message and assistant text, numeric tool inputs >= 100), ``seq`` (the seqs of rows that
    made tool calls, the provenance a summary should cite as ``[S<seq>]``, plus ``[S<n>]``
    citations found in the swept text).
    """
    found: list[tuple[str, str, int]] = []
    seen: set[tuple[str, str]] = set()
    for r in rows:
        if not r.conv:
            continue
        blocks, _ = parse_content(r.content)
        items: list[tuple[str, str]] = []
        for b in blocks:
            t = b.get("type")
            if t == "tool_use":
                items.append(("tool", str(b.get("name"))))
                _walk_input(b.get("input"), None, items)
                items.append(("seq", str(r.seq)))
            elif t == "tool_result":
                c = b.get("content")
                if isinstance(c, str):
                    _scan_text(c, items, numbers=False)
            elif t == "text" and isinstance(b.get("text"), str):
                txt = b["text"]
                if r.kind == "compaction_summary":
                    txt = strip_summary(txt)
                _scan_text(txt, items, numbers=r.kind in ("message", "assistant", "trigger"))
        for k, v in items:
            if (k, v) not in seen:
                seen.add((k, v))
                found.append((k, v, r.seq))
    return found


def recalled(kind: str, value: str, summary: str) -> bool:
    if kind == "seq":
        return re.search(rf"\bS{re.escape(value)}\b", summary) is not None
    if kind == "number":
        return re.search(rf"(?<!\d){re.escape(value)}(?!\d)", summary) is not None
    return value in summary
