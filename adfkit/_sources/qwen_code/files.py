"""Qwen Code chat files: the record test, the file-name pattern, finding files in folders (light:
recognition and listings use it, no reader is imported)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Record types of a Qwen Code chat (chatRecordingService: ``ChatRecord.type``).
RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})

#: A chat's file name: ``<session uuid>.jsonl`` under ``<project>/chats/``.
NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl")


def is_record(rec: Any) -> bool:
    """True for a Qwen Code chat record: ``uuid``, ``sessionId``, ``timestamp`` strings, a
    ``type`` of its own, and a ``message`` in the Gemini API's shape (``parts``, not
    ``content``), or a ``systemPayload``.

    Examples
    --------
    >>> is_record({"uuid": "u", "sessionId": "s", "timestamp": "t", "type": "user",
    ...            "message": {"role": "user", "parts": [{"text": "hi"}]}})
    True
    >>> is_record({"uuid": "u", "sessionId": "s", "timestamp": "t", "type": "user",
    ...            "message": {"role": "user", "content": "hi"}})
    False
    """
    if type(rec) is not dict or rec.get("type") not in RECORD_TYPES:
        return False
    if not all(isinstance(rec.get(k), str) for k in ("uuid", "sessionId", "timestamp")):
        return False
    m = rec.get("message")
    if isinstance(m, dict):
        return isinstance(m.get("parts"), list) and "content" not in m
    return rec.get("type") == "system" and "systemPayload" in rec


def find(folder: Path) -> Iterator[Path]:
    """Qwen Code chats directly in ``folder``, by name only (``<uuid>.jsonl``) and only in a
    ``chats`` folder (other agents name files by uuid too)."""
    if Path(folder).name != "chats":
        return
    for f in sorted(Path(folder).glob("*.jsonl")):
        if NAME.fullmatch(f.name):
            yield f


def chats_under(folder: Path) -> Iterator[Path]:
    """Every chat file under ``folder``: ``*.jsonl`` files of ``chats`` folders."""
    for f in sorted(Path(folder).rglob("chats/*.jsonl")):
        if f.is_file():
            yield f


def subagent_files(chat: Path, session_id: str | None) -> list[Path]:
    """The subagents' files of the chat: ``<project>/subagents/<session id>/agent-*.jsonl``."""
    if not session_id or chat.parent.name != "chats":
        return []
    folder = chat.parent.parent / "subagents" / session_id
    return sorted(f for f in folder.glob("agent-*.jsonl") if f.is_file())
