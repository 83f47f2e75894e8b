"""Listing Copilot CLI sessions under a folder (``~/.copilot/session-state`` by default)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from adfkit._base.errors import NotTranscriptError
from adfkit._sources.copilot_cli.files import EVENTS, first_record, sessions_under
from adfkit._sources.transcript.kit import sessions_frame

#: Columns of :func:`list_copilot_sessions`.
COPILOT_SESSIONS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "cwd": "string",
    "copilot_version": "string",
    "model": "string",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
}


def list_copilot_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Copilot CLI sessions under ``folder`` (``~/.copilot/session-state`` or any folder),
    searched recursively: every folder whose ``events.jsonl`` opens with ``session.start``.
    One row per session, newest first (``events.jsonl`` modification time).

    Columns: ``path`` (the session folder), ``session_id``, ``cwd``, ``copilot_version``,
    ``model`` (``selectedModel`` at start), ``size_bytes`` (Int64: of ``events.jsonl``),
    ``modified`` (datetime64[ns, UTC]).

    :raises NotTranscriptError: ``folder`` is not a folder.
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of Copilot CLI sessions", path=root)
    recs: list[dict[str, Any]] = []
    for d in sessions_under(root):
        f = d / EVENTS
        try:
            st = f.stat()
        except OSError:
            continue
        start = first_record(f)
        data: dict[str, Any] = start.get("data") or {} if isinstance(start, dict) else {}
        ctx = data.get("context")
        ctx = ctx if isinstance(ctx, dict) else {}
        recs.append(
            {
                "path": str(d),
                "session_id": data.get("sessionId"),
                "cwd": ctx.get("cwd"),
                "copilot_version": data.get("copilotVersion"),
                "model": data.get("selectedModel"),
                "size_bytes": int(st.st_size),
                "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
            }
        )
    return sessions_frame(recs, COPILOT_SESSIONS)
