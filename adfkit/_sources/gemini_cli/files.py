"""Gemini CLI chat files: the record tests, the file-name pattern, the files of one session
(light: recognition and listings use it, no reader is imported).

A chat is ``~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl``; its first
line is the session header (``sessionId``, ``projectHash``, ``startTime``, ``lastUpdated``,
``kind``). A subagent's chat is ``chats/<parent session id>/<its session id>.jsonl`` (``kind``
``subagent``). A resumed session can write further ``session-*`` files with the same
``sessionId`` (chatRecordingService names a file by the minute it started).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._base.files import open_text_stream
from adfkit._sources.transcript.kit import head_objects

#: ``MessageRecord.type`` values (chatRecordingTypes.ts).
MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
#: A main chat's file name (chatRecordingService: ``SESSION_FILE_PREFIX``, minute, id prefix).
NAME = re.compile(r"session-\d{4}-\d\d-\d\dT\d\d-\d\d-[0-9A-Za-z_-]{1,8}\.jsonl")
_HASH = re.compile(r"[0-9a-f]{64}")
_UUIDISH = re.compile(r"[0-9A-Za-z_-]{8}[0-9A-Za-z_-]*")


def is_header(rec: Any) -> bool:
    """True for a Gemini CLI session header: ``sessionId`` and ``projectHash`` (the sha256 of
    the project's path) strings, no message or patch keys (a whole chat in one record, with
    its ``messages``, is the legacy ``.json`` form, not read).

    Examples
    --------
    >>> is_header({"sessionId": "s", "projectHash": "a" * 64, "startTime": "t", "kind": "main"})
    True
    >>> is_header({"sessionId": "s", "uuid": "u", "type": "user", "message": {}})
    False
    """
    if type(rec) is not dict or not isinstance(rec.get("sessionId"), str):
        return False
    h = rec.get("projectHash")
    if not isinstance(h, str) or not _HASH.fullmatch(h):
        return False
    return not any(k in rec for k in ("id", "type", "uuid", "message", "messages", "$set"))


def is_message(rec: Any) -> bool:
    """True for a message record: an ``id`` string, a message ``type`` and a ``content``.

    Examples
    --------
    >>> is_message({"id": "m", "timestamp": "t", "type": "gemini", "content": "hi"})
    True
    >>> is_message({"id": "m", "type": "assistant", "message": {}})
    False
    """
    return (
        type(rec) is dict
        and isinstance(rec.get("id"), str)
        and isinstance(rec.get("type"), str)
        and rec["type"] in MESSAGE_TYPES
        and "content" in rec
    )


def find(folder: Path) -> Iterator[Path]:
    """The sessions directly in a ``chats`` folder, by name only: the first ``session-*.jsonl``
    file of each session (files of one session end in the same ``<id8>``, the key Gemini CLI
    itself finds a session's files by; the minute in the name orders them)."""
    yield from (files[0] for files in _by_session(Path(folder)).values())


def companions(folder: Path) -> Iterator[Path]:
    """What a ``chats`` folder holds that is read with a session, by name only: a session's
    further ``session-*`` files and its subagents' folder (``<session id>/``)."""
    groups = _by_session(Path(folder))
    yield from (f for files in groups.values() for f in files[1:])
    if groups:
        for d in sorted(Path(folder).iterdir()):
            if d.is_dir() and d.name[:8] in groups and _UUIDISH.fullmatch(d.name):
                yield d


def _by_session(folder: Path) -> dict[str, list[Path]]:
    """``<id8>`` -> the ``session-*.jsonl`` files of a ``chats`` folder ending in it, first
    first."""
    out: dict[str, list[Path]] = {}
    if folder.name != "chats":
        return out
    for f in sorted(folder.glob("session-*.jsonl")):
        if NAME.fullmatch(f.name):
            out.setdefault(f.name[len("session-2026-01-01T00-00-") : -len(".jsonl")], []).append(f)
    return out


def chats_under(folder: Path) -> Iterator[Path]:
    """Every main chat file under ``folder``: ``session-*.jsonl`` files of ``chats`` folders."""
    for f in sorted(Path(folder).rglob("chats/session-*.jsonl")):
        if f.is_file() and NAME.fullmatch(f.name):
            yield f


def header(path: Path) -> dict[str, Any] | None:
    """The file's first header record (None: none in its first lines, or unreadable)."""
    try:
        fh = open_text_stream(path)
    except (NotTranscriptError, OSError):
        return None
    try:
        for obj in head_objects(fh, 5):
            if is_header(obj):
                return obj
    except OSError:
        return None
    finally:
        fh.close()
    return None


def _start(h: dict[str, Any] | None, path: Path) -> tuple[str, str]:
    t = h.get("startTime") if h else None
    return (t if isinstance(t, str) else "~", path.name)


def session_files(path: Path, session_id: str) -> list[Path]:
    """Every main file of the session in ``path``'s folder (``path`` among them), the first
    (earliest ``startTime``) first."""
    found = {path: _start(header(path), path)}
    for f in sorted(path.parent.glob("session-*.jsonl")):
        h = header(f)
        if f.is_file() and h is not None and h.get("sessionId") == session_id:
            found[f] = _start(h, f)
    return sorted(found, key=lambda f: found[f])


def subagent_files(chat: Path, session_id: str | None) -> list[Path]:
    """The subagents' chats of the session: ``chats/<session id>/*.jsonl``."""
    if not session_id or chat.parent.name != "chats" or "/" in session_id:
        return []
    folder = chat.parent / session_id
    return sorted(f for f in folder.glob("*.jsonl") if f.is_file())


def project_path(chat: Path) -> str | None:
    """The project a chat belongs to, from Gemini CLI's ``projects.json`` (project path ->
    the name of its folder under ``tmp``), beside ``tmp``: ``<home>/.gemini/projects.json``
    for ``<home>/.gemini/tmp/<name>/chats/<file>``; None where it does not say."""
    if chat.parent.name != "chats" or len(chat.parents) < 4:
        return None
    name, registry = chat.parents[1].name, chat.parents[3] / "projects.json"
    try:
        with open_text_stream(registry) as fh:
            data = json.loads(fh.read(1 << 20))
    except (NotTranscriptError, OSError, ValueError):
        return None
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return None
    return next((p for p, n in projects.items() if n == name and isinstance(p, str)), None)
