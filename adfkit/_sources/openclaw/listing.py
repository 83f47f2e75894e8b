"""Listing OpenClaw sessions under a folder (``~/.openclaw/agents`` by default): each store's
sessions (read from its ``session_windows``, read-only) and each session file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from adfkit._base.errors import AdfError, NotTranscriptError
from adfkit._core.registry import MEMBER, Probe
from adfkit._sources.openclaw.files import STORE_NAME, is_session_file, is_store
from adfkit._sources.transcript.kit import sessions_frame

#: Columns of :func:`list_openclaw_sessions`.
OPENCLAW_SESSIONS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "session_key": "string",
    "layout": "string",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
    "model": "string",
    "provider": "string",
    "error": "string",
}


def _ms(v: Any) -> pd.Timestamp | None:
    return pd.Timestamp(v, unit="ms", tz="UTC") if type(v) is int and v > 0 else None


def _mtime(path: Path) -> pd.Timestamp | None:
    try:
        return pd.Timestamp(path.stat().st_mtime_ns, unit="ns", tz="UTC")
    except OSError:
        return None


def _store_rows(path: Path) -> list[dict[str, Any]]:
    """One row per session of the store (its rows' bytes, decompressed, as its size)."""
    from adfkit._sources.openclaw.store import open_store, sessions

    bad = {"path": str(path), "layout": "store", "modified": _mtime(path)}
    try:
        db = open_store(path)
    except AdfError as e:
        return [{**bad, "error": e.detail}]
    try:
        sizes = dict(
            db.query(
                "SELECT session_id, sum(coalesce(length(CAST(event_json AS BLOB)), "
                "event_utf8_bytes)) FROM transcript_events GROUP BY session_id",
                table="transcript_events",
            )
        )
        out = []
        for w in sessions(db):
            size = sizes.get(w.session_id)
            out.append(
                {
                    "path": f"{path}{MEMBER}{w.session_id}",
                    "session_id": w.session_id,
                    "session_key": w.session_key,
                    "layout": "store",
                    "size_bytes": int(size) if type(size) is int else None,
                    "modified": _ms(w.updated_at) or _mtime(path),
                    "model": w.model,
                    "provider": w.provider,
                }
            )
        return out
    except AdfError as e:
        return [{**bad, "error": e.detail}]
    finally:
        db.close()


def _file_row(path: Path) -> dict[str, Any] | None:
    """The row of a session file (None: not OpenClaw's)."""
    probe = Probe(path)
    if not is_session_file(probe):
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    head = probe.records[0]
    model = None
    for rec in probe.records:
        m = rec.get("message")
        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("model"), str):
            model = m["model"]
            break
    return {
        "path": str(path),
        "session_id": head.get("id"),
        "layout": "jsonl",
        "size_bytes": int(st.st_size),
        "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
        "model": model,
    }


def list_openclaw_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """OpenClaw sessions under ``folder`` (``~/.openclaw/agents``, one agent's folder, or any
    folder), searched recursively: every session of each ``openclaw-agent.sqlite`` store
    (``path`` is ``<store>#<session id>``, what opens it) and every session file OpenClaw wrote.
    One row per session, newest first.

    Columns: ``path``, ``session_id``, ``session_key`` (``agent:main:...``; NA for a file),
    ``layout`` (``store`` or ``jsonl``), ``size_bytes`` (Int64: a store session's rows,
    decompressed; a file's size), ``modified`` (datetime64[ns, UTC]: the store's
    ``updated_at``, a file's modification time), ``model``, ``provider`` (the store's; NA for a
    file), ``error`` (why a store could not be read, else NA).

    :raises NotTranscriptError: ``folder`` is not a folder.
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of OpenClaw agents", path=root)
    recs: list[dict[str, Any]] = []
    for f in sorted(root.rglob(STORE_NAME)):
        if f.is_file() and is_store(Probe(f)):
            recs.extend(_store_rows(f))
    for f in sorted(root.rglob("*.jsonl")):
        if f.is_file() and (row := _file_row(f)) is not None:
            recs.append(row)
    return sessions_frame(recs, OPENCLAW_SESSIONS)
