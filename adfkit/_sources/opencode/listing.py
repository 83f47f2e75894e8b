"""Listing OpenCode sessions (the stores under ``~/.local/share/opencode`` by default)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from adfkit._base.errors import AdfError, NotTranscriptError
from adfkit._sources.opencode.files import stores_under
from adfkit._sources.transcript.kit import sessions_frame

#: Columns of :func:`list_opencode_sessions`.
OPENCODE_SESSIONS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "parent_id": "string",
    "title": "string",
    "cwd": "string",
    "agent_version": "string",
    "size_bytes": "Int64",
    "created": "datetime64[ns, UTC]",
    "modified": "datetime64[ns, UTC]",
    "error": "string",
}


def _ms(v: Any) -> pd.Timestamp | None:
    return pd.Timestamp(int(v), unit="ms", tz="UTC") if isinstance(v, int) and v > 0 else None


def list_opencode_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """OpenCode sessions in the stores (``opencode.db``) under ``folder`` (OpenCode's data
    folder, or a store itself), one row per session, child sessions (subagents) included,
    newest first (``time_updated``). Nothing but the ``session`` table is read.

    Columns: ``path`` (``<store>#<session id>``: what opens that session), ``session_id``,
    ``parent_id`` (the session that made it, NA for a top-level one), ``title``, ``cwd``,
    ``agent_version`` (OpenCode's version that wrote it), ``size_bytes`` (the store's, Int64),
    ``created``, ``modified`` (datetime64[ns, UTC]), ``error`` (why the store could not be read:
    one row for it, else NA).

    :raises NotTranscriptError: ``folder`` does not exist.
    """
    from adfkit._sources.opencode.store import open_store

    root = Path(folder).expanduser()
    if not root.exists():
        raise NotTranscriptError("not a folder of OpenCode stores", path=root)
    recs: list[dict[str, Any]] = []
    for f in stores_under(root):
        try:
            st = f.stat()
        except OSError:
            continue
        size = int(st.st_size)
        mtime = pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC")
        try:
            store = open_store(f)
            try:
                sessions = store.sessions()
            finally:
                store.close()
        except AdfError as e:
            recs.append({"path": str(f), "size_bytes": size, "modified": mtime, "error": e.detail})
            continue
        for s in sessions:
            recs.append(
                {
                    "path": f"{f}#{s['id']}",
                    "session_id": s["id"],
                    "parent_id": s.get("parent_id"),
                    "title": s.get("title"),
                    "cwd": s.get("directory"),
                    "agent_version": s.get("version"),
                    "size_bytes": size,
                    "created": _ms(s.get("time_created")),
                    "modified": _ms(s.get("time_updated")) or mtime,
                    "error": None,
                }
            )
    return sessions_frame(recs, OPENCODE_SESSIONS)
