"""OpenHands conversations (V1 SDK and CLI): recognition, listing and the condenser's rule.

A conversation is a folder, ``~/.openhands/conversations/<id hex>/``
(``OPENHANDS_CONVERSATIONS_DIR`` overrides the root), holding ``base_state.json`` and
``events/event-<idx>-<event id>.json``. This module is light: it recognises such a folder from
its names alone and lists them; the reader is :mod:`adfkit._sources.openhands.parser`, imported
when a conversation is opened.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.model_catalog import maker_of
from adfkit._core.registry import FormatSpec, Probe, Rule, Words
from adfkit._sources.openhands import rule
from adfkit._sources.openhands.names import EVENT_NAME, EVENTS_DIR, STATE_FILE, is_conversation

if TYPE_CHECKING:
    import pandas as pd

    from adfkit._core.source import AgentSource

NAME = "openhands"
LABEL = "OpenHands conversation"
DEFAULT_ROOT = "~/.openhands/conversations"
ROOT_ENV = "OPENHANDS_CONVERSATIONS_DIR"
TAXONOMY = "taxonomy.openhands.json"

#: Columns of :func:`list_sessions`.
SESSIONS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "cwd": "string",
    "model": "string",
    "condenser": "string",
    "execution_status": "string",
    "n_events": "Int64",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
    "error": "string",
}


def claims(probe: Probe) -> bool:
    """Recognition for the format registry: a folder that :func:`is_conversation` accepts (or
    the ``events/`` folder of one). Files are never claimed."""
    if not probe.is_dir:
        return False
    p = Path(probe.path)
    if is_conversation(p):
        return True
    return p.name == EVENTS_DIR and is_conversation(p.parent)


def open_session(path: str | os.PathLike[str], **options: Any) -> AgentSource:
    """The conversation at ``path`` as an agent source (options: ``max_event_bytes``,
    ``max_events``; see :func:`adfkit._sources.openhands.parser.parse_openhands`)."""
    from adfkit._sources.openhands.parser import parse_openhands
    from adfkit._sources.openhands.source import OpenHandsSource

    known = ("max_event_bytes", "max_events", "max_total_bytes")
    return OpenHandsSource(parse_openhands(path, **{k: options[k] for k in known if k in options}))


def find(root: str | os.PathLike[str]) -> Iterator[Path]:
    """The conversation folders directly in ``root`` (a fleet's folder, ``~/.openhands`` meaning
    its ``conversations/``), in name order, by their names only. A conversation's own
    ``subagents/`` belong to it and are not listed."""
    top = Path(root).expanduser()
    if not top.is_dir():
        return
    if not is_conversation(top / "conversations") and (top / "conversations").is_dir():
        top = top / "conversations"
    try:
        children = sorted(p for p in top.iterdir() if p.is_dir())
    except OSError:
        return
    for p in children:
        if is_conversation(p):
            yield p


def default_root() -> str:
    """``$OPENHANDS_CONVERSATIONS_DIR`` when set, else ``~/.openhands/conversations``."""
    return os.environ.get(ROOT_ENV) or DEFAULT_ROOT


def list_sessions(root: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per conversation under ``root``, newest first (by the latest event file's or
    ``base_state.json``'s modification time), without reading any event.

    Columns: ``path``, ``session_id`` (``base_state.id``, else the folder name), ``cwd``
    (``workspace.working_dir``), ``model`` (``agent.llm.model``), ``condenser`` (its
    ``kind``), ``execution_status`` (string), ``n_events`` (Int64: event files), ``size_bytes``
    (Int64: every file of the folder), ``modified`` (datetime64[ns, UTC]), ``error`` (string:
    why ``base_state.json`` could not be read).
    """
    import pandas as pd

    from adfkit._base.errors import NotTranscriptError
    from adfkit._sources.openhands.files import DEFAULT_MAX_STATE_BYTES, read_capped
    from adfkit._sources.transcript.kit import sessions_frame

    top = Path(root).expanduser()
    if not top.is_dir():
        raise NotTranscriptError("not a folder of OpenHands conversations", path=top)
    recs: list[dict[str, Any]] = []
    for conv in find(top):
        n_events = 0
        size = 0
        newest = 0
        for p in (conv / STATE_FILE, *_files(conv / EVENTS_DIR)):
            try:
                st = p.lstat()
            except OSError:
                continue
            size += st.st_size
            newest = max(newest, st.st_mtime_ns)
            if EVENT_NAME.match(p.name):
                n_events += 1
        rec: dict[str, Any] = {
            "path": str(conv),
            "session_id": conv.name,
            "n_events": n_events,
            "size_bytes": size,
            "modified": pd.Timestamp(newest or conv.stat().st_mtime_ns, unit="ns", tz="UTC"),
        }
        if (conv / STATE_FILE).exists():
            data, _n, problem = read_capped(conv / STATE_FILE, DEFAULT_MAX_STATE_BYTES)
            state = _json(data) if data is not None else None
            if not isinstance(state, dict):
                rec["error"] = f"{STATE_FILE} {problem or 'is not a JSON object'}"
            else:
                rec.update(_state_fields(state))
        recs.append(rec)
    return sessions_frame(recs, SESSIONS)


def _files(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return [folder / e.name for e in it if not e.name.startswith(".")]
    except OSError:
        return []


def _json(data: bytes) -> Any:
    import orjson

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _state_fields(state: dict[str, Any]) -> dict[str, Any]:
    def get(*keys: str) -> Any:
        d: Any = state
        for k in keys:
            d = d.get(k) if isinstance(d, dict) else None
        return d if isinstance(d, str) and d else None

    out = {
        "cwd": get("workspace", "working_dir"),
        "model": get("agent", "llm", "model"),
        "condenser": get("agent", "condenser", "kind"),
        "execution_status": get("execution_status"),
    }
    sid = get("id")
    if sid:
        out["session_id"] = sid
    return {k: v for k, v in out.items() if v is not None}


def provider(model: str | None) -> str | None:
    """Who serves ``model``: :func:`adfkit._core.model_catalog.maker_of` (the id alone)."""
    return maker_of(model)


def compaction_rule(model: str | None, window: int | None) -> Rule:
    """The registry's rule: the recorded window as the threshold (the source applies a
    recorded ``max_tokens``, :class:`.source.OpenHandsSource`)."""
    return Rule(*rule.compaction_rule(model, window))


def session_folder(path: Path) -> Path | None:
    """The conversation an ``events/`` folder belongs to (by name: the output rule keeps
    writes out of the whole conversation)."""
    return path.parent if path.name == EVENTS_DIR else None


SPEC = FormatSpec(
    name=NAME,
    label=LABEL,
    looks_for="a folder holding base_state.json or events/event-<idx>-<id>.json files",
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=compaction_rule,
    taxonomy=TAXONOMY,
    provider=provider,
    words=Words(history_table="events", archive_table="events"),
    session_folder=session_folder,
)


__all__ = [
    "EVENTS_DIR",
    "EVENT_NAME",
    "SPEC",
    "STATE_FILE",
    "claims",
    "compaction_rule",
    "find",
    "is_conversation",
    "list_sessions",
    "open_session",
    "provider",
]
