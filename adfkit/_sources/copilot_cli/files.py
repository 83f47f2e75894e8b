"""Copilot CLI session folders: the ``session.start`` test, reading a first record, finding
sessions in folders (light: recognition and listings use it, no reader is imported)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

EVENTS = "events.jsonl"


def is_start(rec: Any) -> bool:
    """True for a Copilot CLI ``session.start`` event (envelope ``id``, ``timestamp``,
    ``type``, ``data.sessionId``).

    Examples
    --------
    >>> is_start({"type": "session.start", "id": "e", "timestamp": "t",
    ...           "data": {"sessionId": "s"}})
    True
    >>> is_start({"type": "session", "id": "e", "timestamp": "t", "cwd": "/"})
    False
    """
    if type(rec) is not dict or rec.get("type") != "session.start":
        return False
    d = rec.get("data")
    return (
        isinstance(rec.get("id"), str)
        and isinstance(rec.get("timestamp"), str)
        and type(d) is dict
        and isinstance(d.get("sessionId"), str)
    )


def first_record(f: Path, n: int = 256 * 1024) -> Any:
    import orjson

    try:
        with open(f, "rb") as fh:
            line = fh.readline(n)
    except OSError:
        return None
    try:
        return orjson.loads(line.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError:
        return None


def find(folder: Path) -> Iterator[Path]:
    """Copilot CLI session folders directly in ``folder``, by name only: the subfolders
    holding an ``events.jsonl`` (what it holds is checked when a session is opened)."""
    for d in sorted(Path(folder).iterdir()) if Path(folder).is_dir() else ():
        if (d / EVENTS).is_file():
            yield d


def sessions_under(folder: Path) -> Iterator[Path]:
    """Every session folder under ``folder`` (recursively) whose ``events.jsonl`` opens with
    a ``session.start`` event."""
    for f in sorted(Path(folder).rglob(EVENTS)):
        if f.is_file() and is_start(first_record(f)):
            yield f.parent
