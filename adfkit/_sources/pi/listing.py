"""Listing pi sessions under a folder (``~/.pi/agent/sessions`` by default)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from adfkit._base.errors import NotTranscriptError
from adfkit._base.files import open_text_stream
from adfkit._sources.pi.files import is_header, sessions_under
from adfkit._sources.pi.parser import header_meta
from adfkit._sources.transcript.kit import (
    head_objects,
    sessions_frame,
)

#: Columns of :func:`list_pi_sessions`.
PI_SESSIONS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "cwd": "string",
    "session_version": "Int64",
    "title": "string",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
    "model": "string",
    "parent_session": "string",
    "error": "string",
}


def _peek(f: Path, max_lines: int = 400) -> tuple[dict[str, Any], str | None]:
    """The header's facts and the first reply's model, from the first lines only."""
    info: dict[str, Any] = {}
    try:
        fh = open_text_stream(f)
    except NotTranscriptError as e:
        return info, e.detail
    try:
        for obj in head_objects(fh, max_lines):
            if not info and is_header(obj):
                info = {"session_id": obj.get("id"), **header_meta(obj)}
                continue
            if obj.get("type") == "session_info" and isinstance(obj.get("name"), str):
                info["title"] = obj["name"].strip()
            m = obj.get("message")
            if type(m) is dict and m.get("role") == "assistant" and isinstance(m.get("model"), str):
                info.setdefault("first_model", m["model"])
    except OSError as e:
        return info, f"cannot read ({e.strerror})"
    finally:
        fh.close()
    return info, None


def list_pi_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """pi sessions under ``folder`` (``~/.pi/agent/sessions``, one project's
    ``--<cwd>--`` folder, or any folder), searched recursively: every ``*.jsonl`` whose first
    line is a pi session header. One row per session, newest first (file modification time).

    Columns: ``path``, ``session_id`` (the header's ``id``), ``cwd``, ``session_version``
    (Int64: 1 for headers without a version), ``title`` (the latest ``session_info`` name in
    the first lines, else NA), ``size_bytes`` (Int64), ``modified`` (datetime64[ns, UTC]),
    ``model`` (the first reply's model, else the v1 header's ``modelId``),
    ``parent_session`` (the session it was forked from), ``error`` (why the first lines could
    not be read, else NA).

    :raises NotTranscriptError: ``folder`` is not a folder.
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of pi sessions", path=root)
    recs: list[dict[str, Any]] = []
    for f in sessions_under(root):
        try:
            st = f.stat()
        except OSError:
            continue
        info, err = _peek(f)
        v = info.get("session_version")
        recs.append(
            {
                "path": str(f),
                "session_id": info.get("session_id"),
                "cwd": info.get("cwd"),
                "session_version": int(v) if v is not None else None,
                "title": info.get("title"),
                "size_bytes": int(st.st_size),
                "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
                "model": info.get("first_model") or info.get("model"),
                "parent_session": info.get("parent_session"),
                "error": err,
            }
        )
    return sessions_frame(recs, PI_SESSIONS)
