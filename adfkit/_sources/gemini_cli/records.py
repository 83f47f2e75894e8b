"""A chat file read record by record into the parser's state, every line checked: a line
that cannot be read loses every message list after it (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adfkit._base.errors import CorruptFileError
from adfkit._sources.gemini_cli.files import is_header, is_message
from adfkit._sources.gemini_cli.message_list import set_messages
from adfkit._sources.gemini_cli.rows import message_record, rewind
from adfkit._sources.gemini_cli.state import State
from adfkit._sources.transcript.kit import Findings, JsonLines, check_head, iso_ms

WHAT = "Gemini CLI chat"
#: Findings that mean a complete line could not be read: the message list after it is unknown.
_LOST = ("bad_json", "huge_line", "too_many_containers", "not_an_object")


def read_chat(path: Path, st: State, fnd: Findings, max_line_bytes: int) -> int:
    """Feed ``path``'s records into ``st``; raises when a complete line cannot be read."""
    check_head(path, WHAT)
    n_records = 0
    seen = len(fnd.items)
    for n, rec in JsonLines(path, fnd, "chat", max_line_bytes=max_line_bytes):
        lost = [f for f in fnd.items[seen:] if f.check in _LOST]
        if lost:
            _raise_lost(path, lost[0].line, lost[0].detail)
        n_records += 1
        read_record(rec, n, st, fnd)
    lost = [f for f in fnd.items[seen:] if f.check in _LOST]
    if lost:
        _raise_lost(path, lost[0].line, lost[0].detail)
    return n_records


def _raise_lost(path: Path, line: int | None, detail: str) -> None:
    raise CorruptFileError(
        f"line {line}: {detail.split(';')[0]}: a message or a patch of the message list is "
        "lost, so every list after it is unknown",
        path=path,
    )


def is_stub(path: Path, known: set[str], max_line_bytes: int) -> bool:
    """A resume's further file that holds no message the list does not hold already."""
    for _n, rec in JsonLines(path, Findings(), "chat", max_line_bytes=max_line_bytes):
        msgs = rec.get("$set", {}).get("messages") if isinstance(rec.get("$set"), dict) else None
        items = msgs if isinstance(msgs, list) else [rec] if is_message(rec) else []
        if any(not is_message(m) or m["id"] not in known for m in items):
            return False
    return True


def read_record(rec: dict[str, Any], line: int, st: State, fnd: Findings) -> None:
    if "$set" in rec:
        _patch(rec, line, st, fnd)
    elif "$rewindTo" in rec:
        rewind(rec["$rewindTo"], line, st)
    elif is_message(rec):
        st.resuming = False
        message_record(rec, line, st)
    elif is_header(rec):
        st.resuming = bool(st.rows)  # a resumed process's own header (module docstring)
        for k in ("sessionId", "projectHash", "startTime", "kind"):
            if isinstance(rec.get(k), str):
                st.meta.setdefault(k, rec[k])
        dirs = rec.get("directories")
        if isinstance(dirs, list) and dirs and isinstance(dirs[0], str):
            st.meta.setdefault("cwd", dirs[0])
    else:
        fnd.add("unknown_record", "warning", line, "a line that is no Gemini CLI record; skipped")


def _patch(rec: dict[str, Any], line: int, st: State, fnd: Findings) -> None:
    upd = rec["$set"]
    if not isinstance(upd, dict):
        raise CorruptFileError(f"line {line}: $set holds no object", path=st.path)
    if "sessionId" in upd:
        st.resuming = False
    if "messages" in upd and st.resuming:
        fnd.add(
            "resume_stub",
            "info",
            line,
            "a resumed process's own session context, before it takes up the session; skipped",
        )
    elif "messages" in upd:
        if not isinstance(upd["messages"], list):
            raise CorruptFileError(
                f"line {line}: $set messages is not a list: the message list after it is unknown",
                path=st.path,
            )
        set_messages(upd["messages"], iso_ms(upd.get("lastUpdated")), line, st, fnd)
    for k in ("summary", "kind"):
        if isinstance(upd.get(k), str):
            st.meta[k] = upd[k]
