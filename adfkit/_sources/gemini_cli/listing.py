"""Listing Gemini CLI sessions under a folder (``~/.gemini/tmp`` by default)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from adfkit._base.errors import NotTranscriptError
from adfkit._base.files import open_text_stream
from adfkit._sources.gemini_cli.files import chats_under, find, is_header, project_path
from adfkit._sources.transcript.kit import head_objects, sessions_frame

#: Columns of :func:`list_gemini_sessions`.
GEMINI_SESSIONS: dict[str, str] = {
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
    """The session's id and the first reply's model, from the first lines only (None: not a
    Gemini CLI chat)."""
    info: dict[str, Any] = {}
    try:
        fh = open_text_stream(f)
    except NotTranscriptError as e:
        return info, e.detail
    try:
        for i, obj in enumerate(head_objects(fh, max_lines)):
            if i == 0 and not is_header(obj):
                return {}, None
            if i == 0:
                info["session_id"] = obj["sessionId"]
            elif obj.get("type") == "gemini" and isinstance(obj.get("model"), str):
                info["model"] = obj["model"]
                break
    except OSError as e:
        return info, f"cannot read ({e.strerror})"
    finally:
        fh.close()
    return info, None


def list_gemini_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Gemini CLI sessions under ``folder`` (``~/.gemini/tmp``, one project's folder, or its
    ``chats`` folder), searched recursively: the first ``chats/session-*.jsonl`` file of each
    session (a resume's further files are read with it) whose first record is a Gemini CLI
    session header. One row per session, newest first (file modification time).

    Columns: ``path``, ``session_id``, ``cwd`` (the project, from ``~/.gemini/projects.json``;
    NA where it does not name it), ``agent_version`` (NA: not written), ``size_bytes``
    (Int64), ``modified`` (datetime64[ns, UTC]), ``model`` (the first reply's), ``error`` (why
    the first lines could not be read, else NA).

    :raises NotTranscriptError: ``folder`` is not a folder.
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of Gemini CLI chats", path=root)
    recs: list[dict[str, Any]] = []
    folders = sorted({f.parent for f in chats_under(root)})
    for f in (f for d in folders for f in find(d)):
        try:
            st = f.stat()
        except OSError:
            continue
        info, err = _peek(f)
        if not info and err is None:
            continue  # not a Gemini CLI chat
        recs.append(
            {
                "path": str(f),
                "session_id": info.get("session_id"),
                "cwd": project_path(f),
                "agent_version": None,
                "size_bytes": int(st.st_size),
                "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
                "model": info.get("model"),
                "error": err,
            }
        )
    return sessions_frame(recs, GEMINI_SESSIONS)
