"""Listing Letta agent files under a folder: one row per agent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from adfkit._base.errors import AdfError, NotTranscriptError
from adfkit._base.files import read_head
from adfkit._sources.letta.files import files_under, is_agent_file_head
from adfkit._sources.transcript.kit import sessions_frame

#: Columns of :func:`list_letta_files`.
LETTA_AGENTS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "agent_type": "string",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
    "model": "string",
    "n_messages": "Int64",
    "error": "string",
}


def list_letta_files(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Letta agent files (``*.af``) under ``folder``, searched recursively, one row per agent
    (a sleeptime group's file: one per agent; ``path`` then ``file.af#name``), newest file
    first. Columns: ``path``, ``session_id`` (the agent's name), ``agent_type``,
    ``size_bytes`` (Int64), ``modified`` (datetime64[ns, UTC]), ``model``, ``n_messages``
    (Int64: messages the file holds), ``error`` (why the file could not be read, else NA).

    :raises NotTranscriptError: ``folder`` is not a folder.
    """
    from adfkit._sources.letta.parser import agents_of, load_document, member_names

    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of Letta agent files", path=root)
    recs: list[dict[str, Any]] = []
    for f in files_under(root):
        try:
            st = f.stat()
            if not is_agent_file_head(read_head(f, 256 * 1024)):
                continue
        except (OSError, AdfError):
            continue
        base = {
            "size_bytes": int(st.st_size),
            "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
        }
        try:
            agents = agents_of(load_document(f))
        except AdfError as e:
            recs.append({"path": str(f), **base, "error": e.detail})
            continue
        names = member_names(agents)
        for a, n in zip(agents, names, strict=True):
            llm = a.get("llm_config")
            llm = llm if isinstance(llm, dict) else {}
            msgs = a.get("messages")
            recs.append(
                {
                    "path": str(f) if len(agents) == 1 else f"{f}#{n}",
                    "session_id": n,
                    "agent_type": a.get("agent_type")
                    if isinstance(a.get("agent_type"), str)
                    else None,
                    **base,
                    "model": llm.get("model") if isinstance(llm.get("model"), str) else None,
                    "n_messages": len(msgs) if isinstance(msgs, list) else None,
                    "error": None,
                }
            )
    return sessions_frame(recs, LETTA_AGENTS)
