"""Codex rollouts under a folder, one row per session."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from adfkit import schema
from adfkit._base.errors import NotTranscriptError
from adfkit._base.files import read_head
from adfkit._sources.codex.records import _UUID_RE, _WHAT, _session_meta
from adfkit._sources.transcript.kit import (
    ZSTD_MAGIC,
    Findings,
    head_objects,
    open_lines,
    sessions_frame,
    sniff,
)


def list_codex_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Codex rollouts under ``folder`` (``~/.codex``, its ``sessions`` folder or a date folder),
    searched recursively. One row per session, newest first; when both ``x.jsonl`` and
    ``x.jsonl.zst`` exist the plain file is listed.

    Columns: ``path`` (str), ``session_id`` (str: ``session_meta.id``, else the uuid in the file
    name), ``cwd``, ``model`` (the first ``turn_context.model``), ``cli_version``, ``originator``
    (str or None), ``size_bytes`` (int, on disk), ``modified`` (datetime64[ns, UTC]),
    ``compressed`` (bool), ``error`` (str or None: why the first lines could not be read).

    Examples
    --------
    >>> df = list_codex_sessions("sample_agents/codex")
    >>> list(df.columns[:3])
    ['path', 'session_id', 'cwd']
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of Codex sessions", path=root)
    files = sorted(set(root.rglob("rollout-*.jsonl")) | set(root.rglob("rollout-*.jsonl.zst")))
    plain = {f for f in files if f.name.endswith(".jsonl")}
    recs: list[dict[str, Any]] = []
    for f in files:
        if (f.name.endswith(".zst") and f.with_name(f.name[:-4]) in plain) or f.is_dir():
            continue  # a FIFO or device is listed, with why it cannot be read in ``error``
        try:
            st = f.stat()
        except OSError:
            continue
        info, err = _peek(f)
        m = _UUID_RE.search(f.name)
        recs.append(
            {
                "path": str(f),
                "session_id": info.get("session_id") or (m.group(1) if m else None),
                "cwd": info.get("cwd"),
                "size_bytes": int(st.st_size),
                "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
                "model": info.get("model"),
                "cli_version": info.get("cli_version"),
                "originator": info.get("originator"),
                "compressed": f.name.endswith(".zst"),
                "error": err,
            }
        )
    return sessions_frame(recs, schema.CODEX_SESSIONS)


def _peek(f: Path, max_lines: int = 200) -> tuple[dict[str, str], str | None]:
    info: dict[str, str] = {}
    try:
        head = read_head(f)
        if f.name.endswith(".zst"):
            if not head.startswith(ZSTD_MAGIC):
                return info, "not zstd-compressed data"
        else:
            sniff(f, head, _WHAT)
        stream, _raw, fh = open_lines(f, 64 << 20)
        try:
            for obj in head_objects(stream, max_lines):
                p = obj.get("payload")
                if not isinstance(p, dict):
                    continue
                if obj.get("type") == "session_meta" and "session_id" not in info:
                    _session_meta(p, info, 0, Findings())
                elif obj.get("type") == "turn_context" and isinstance(p.get("model"), str):
                    info["model"] = p["model"]
                if "model" in info:
                    break
        finally:
            fh.close()
    except NotTranscriptError as e:
        return info, e.detail
    except OSError as e:
        return info, f"cannot read ({e.strerror})"
    return info, None
