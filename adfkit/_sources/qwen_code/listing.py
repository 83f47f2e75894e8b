"""Listing Qwen Code chats under a folder (``~/.qwen/projects`` by default)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from adfkit._base.errors import NotTranscriptError
from adfkit._base.files import open_text_stream
from adfkit._sources.qwen_code.files import chats_under, is_record
from adfkit._sources.transcript.kit import head_objects, sessions_frame

#: Columns of :func:`list_qwen_sessions`.
QWEN_SESSIONS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "cwd": "string",
    "agent_version": "string",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
    "model": "string",
    "error": "string",
}


def _peek(f: Path, max_lines: int = 400) -> tuple[dict[str, Any], str | None]:
    """The session's facts and the first reply's model, from the first lines only."""
    info: dict[str, Any] = {}
    try:
        fh = open_text_stream(f)
    except NotTranscriptError as e:
        return info, e.detail
    try:
        for obj in head_objects(fh, max_lines):
            if not is_record(obj):
                continue
            for src, dst in (
                ("sessionId", "session_id"),
                ("cwd", "cwd"),
                ("version", "agent_version"),
            ):
                if isinstance(obj.get(src), str):
                    info.setdefault(dst, obj[src])
            if obj.get("type") == "assistant" and isinstance(obj.get("model"), str):
                info.setdefault("model", obj["model"])
                break
    except OSError as e:
        return info, f"cannot read ({e.strerror})"
    finally:
        fh.close()
    return info, None


def list_qwen_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Qwen Code chats under ``folder`` (``~/.qwen/projects``, one project's folder, or its
    ``chats`` folder), searched recursively: every ``chats/*.jsonl`` whose first record is a
    Qwen Code chat record. One row per chat, newest first (file modification time).

    Columns: ``path``, ``session_id``, ``cwd``, ``agent_version`` (Qwen Code's version that
    wrote it), ``size_bytes`` (Int64), ``modified`` (datetime64[ns, UTC]), ``model`` (the first
    reply's), ``error`` (why the first lines could not be read, else NA).

    :raises NotTranscriptError: ``folder`` is not a folder.
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of Qwen Code chats", path=root)
    recs: list[dict[str, Any]] = []
    files = chats_under(root) if root.name != "chats" else iter(sorted(root.glob("*.jsonl")))
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        info, err = _peek(f)
        if not info and err is None:
            continue  # not a Qwen Code chat
        recs.append(
            {
                "path": str(f),
                "session_id": info.get("session_id"),
                "cwd": info.get("cwd"),
                "agent_version": info.get("agent_version"),
                "size_bytes": int(st.st_size),
                "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
                "model": info.get("model"),
                "error": err,
            }
        )
    return sessions_frame(recs, QWEN_SESSIONS)
