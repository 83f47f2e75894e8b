"""pi session files: the header test, the file-name pattern, finding files in folders (light:
recognition and listings use it, no reader is imported)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_HEADER_KEYS = ("id", "timestamp")


def is_header(rec: Any) -> bool:
    """True for a pi session header: ``{"type": "session", "id", "timestamp", "cwd"}`` with
    string values (v1 headers have no ``version``; later ones have an int).

    Examples
    --------
    >>> is_header({"type": "session", "id": "a", "timestamp": "t", "cwd": "/"})
    True
    >>> is_header({"type": "session_meta", "payload": {}})
    False
    """
    if type(rec) is not dict or rec.get("type") != "session":
        return False
    if not all(isinstance(rec.get(k), str) for k in _HEADER_KEYS):
        return False
    v = rec.get("version")
    return isinstance(rec.get("cwd"), str) and (v is None or type(v) is int)


def _first_line(f: Path, n: int = 64 * 1024) -> bytes:
    try:
        with open(f, "rb") as fh:
            return fh.readline(n)
    except OSError:
        return b""


#: pi's session file name: ``<ISO time with - for : and .>_<uuid>.jsonl``.
NAME = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z_"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl"
)


def find(folder: Path) -> Iterator[Path]:
    """pi session files directly in ``folder``, by name only (``<time>_<uuid>.jsonl``; a
    session under another ``.jsonl`` name is found by the Claude Code spec's glob and
    recognised when opened)."""
    for f in sorted(Path(folder).glob("*_*.jsonl")):
        if NAME.fullmatch(f.name):
            yield f


def sessions_under(folder: Path) -> Iterator[Path]:
    """Every pi session file under ``folder`` (recursively: ``--<cwd>--`` folders), whatever
    its name: each ``*.jsonl`` whose first line is a pi session header."""
    import orjson

    for f in sorted(Path(folder).rglob("*.jsonl")):
        if not f.is_file():
            continue
        line = _first_line(f).removeprefix(b"\xef\xbb\xbf")
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if is_header(rec):
            yield f
