"""Claude Code sessions under a projects folder, one row per main session file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from adfkit import schema
from adfkit._base.errors import NotTranscriptError
from adfkit._base.files import open_text_stream, read_head
from adfkit._sources.claude_code.records import _WHAT
from adfkit._sources.claude_code.subagents import _first_session_id
from adfkit._sources.transcript.kit import (
    head_objects,
    sessions_frame,
    sniff,
)


def list_claude_code_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Claude Code sessions under a projects folder (``~/.claude/projects``) or one project
    folder. One row per main session file, newest first.

    Columns: ``path`` (str), ``session_id`` (str: the records' ``sessionId``, else the file
    name), ``cwd`` (str: from the records, not from the folder name), ``size_bytes`` (int),
    ``modified`` (datetime64[ns, UTC]), ``n_subagents`` (int: ``agent-*.jsonl`` files of this
    session, compaction helpers ``agent-acompact-*`` excluded), ``error`` (str or None: why the
    first records could not be read). ``agent-*.jsonl`` files are never listed as sessions.

    Examples
    --------
    >>> df = list_claude_code_sessions("sample_agents/claude-code/projects")
    >>> list(df.columns)
    ['path', 'session_id', 'cwd', 'size_bytes', 'modified', 'n_subagents', 'error']
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of Claude Code projects", path=root)
    cands = list(root.glob("*.jsonl")) + list(root.glob("*/*.jsonl"))
    recs: list[dict[str, Any]] = []
    legacy: dict[Path, dict[str, int]] = {}
    for f in sorted(set(cands)):
        if f.name.startswith("agent-") or f.is_dir():
            continue  # a FIFO or device is listed, with why it cannot be read in ``error``
        try:
            st = f.stat()
        except OSError:
            continue  # vanished (cleanup) between listing and stat
        sid, cwd, err = _peek(f)
        sess_dir = f.with_suffix("") / "subagents"
        n_sub = 0
        if sess_dir.is_dir():
            n_sub = sum(
                1 for x in sess_dir.glob("agent-*.jsonl") if not x.name.startswith("agent-acompact")
            )
        sid = sid or f.stem
        if f.parent not in legacy:
            legacy[f.parent] = _legacy_agents(f.parent)
        n_sub += legacy[f.parent].get(sid, 0)
        recs.append(
            {
                "path": str(f),
                "session_id": sid,
                "cwd": cwd,
                "size_bytes": int(st.st_size),
                "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
                "n_subagents": n_sub,
                "error": err,
            }
        )
    return sessions_frame(recs, schema.CLAUDE_CODE_SESSIONS)


def _legacy_agents(folder: Path) -> dict[str, int]:
    """``sessionId`` -> how many legacy ``agent-*.jsonl`` files in ``folder`` belong to it
    (compaction helpers excluded): each file's first records read once per listing, not once
    per session beside it."""
    out: dict[str, int] = {}
    for x in folder.glob("agent-*.jsonl"):
        if not x.name.startswith("agent-acompact"):
            sid = _first_session_id(x, 5)
            if sid is not None:
                out[sid] = out.get(sid, 0) + 1
    return out


def _peek(f: Path, max_lines: int = 200) -> tuple[str | None, str | None, str | None]:
    try:
        sniff(f, read_head(f), _WHAT)
    except NotTranscriptError as e:
        return None, None, e.detail
    sid = cwd = None
    try:
        with open_text_stream(f) as fh:
            for obj in head_objects(fh, max_lines):
                if sid is None and isinstance(obj.get("sessionId"), str):
                    sid = obj["sessionId"]
                if cwd is None and isinstance(obj.get("cwd"), str):
                    cwd = obj["cwd"]
                if sid and cwd:
                    break
    except OSError as e:
        return sid, cwd, f"cannot read ({e.strerror})"
    return sid, cwd, None
