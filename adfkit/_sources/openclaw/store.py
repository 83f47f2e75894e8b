"""OpenClaw's SQLite store (``openclaw-agent.sqlite``), read the way adfkit reads an ``.adf``
file (:class:`adfkit._sources.adf.sqlite.Source`: read-only through a URI, no sidecar created,
a running agent's WAL read through its ``-shm`` mapped read-only, a private copy where SQLite
could not read otherwise; only regular files).

Four tables are read and no other: ``schema_meta`` (the store's schema and OpenClaw's
version), ``session_windows`` (one row per session), ``session_nodes`` (each session key's
entry: what ``sessions.json`` held before, ``compactionCount``, ``contextTokens``,
``memoryFlush``) and ``transcript_events`` (pi's entries, one per row, ``seq`` from 0, the
header first). A row holds its entry as ``event_json`` text or as ``event_zstd``, zstd of
``event_utf8_bytes`` bytes (OpenClaw keeps both within 4 MiB); it is decompressed by the capped
reader every zstd input goes through (:func:`adfkit._sources.transcript.kit.zstd_blob`),
never past the size the row declares. The store's other tables (credentials in
``auth_profile_store`` among them) are never selected.

A row that cannot be read (zstd data damaged or cut short, a size other than declared, text
that is not a JSON object) is an :class:`AdfError` naming the store, the session and the row's
``seq``: the entries form a tree whose shape a lost row changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from adfkit._base.errors import AdfError, CorruptFileError, NotTranscriptError
from adfkit._sources.adf.sqlite import Source
from adfkit._sources.transcript.kit import loads_line, zstd_blob
from adfkit._sources.transcript.pi_entry_log import ENTRY_TYPES, Entry, EntryLog, header_of

#: The most one row may hold, decompressed (OpenClaw's own CHECK on ``event_utf8_bytes``).
MAX_ROW_BYTES = 4 * 1024 * 1024
#: Default cap on the bytes of one session's rows, decompressed.
DEFAULT_MAX_SESSION_BYTES = 256 * 1024**2
WHAT = "OpenClaw session"


class StoreDb(Source):
    """The store's read-only connection (the ADF reader's, with OpenClaw's tables)."""

    allowed = frozenset({"schema_meta", "session_windows", "session_nodes", "transcript_events"})
    guarded = "auth_profile_store (credentials)"

    def _recognise(self) -> None:
        missing = [t for t in ("transcript_events", "session_windows") if t not in self.tables]
        if missing:
            raise NotTranscriptError(
                f"SQLite database without OpenClaw's tables (no {', '.join(missing)}): "
                "not an OpenClaw store",
                path=self.name,
            )
        cols = set(self._table_columns("transcript_events"))
        need = {"session_id", "seq", "event_json", "event_zstd", "event_utf8_bytes"}
        if not need <= cols:
            raise NotTranscriptError(
                "transcript_events lacks OpenClaw's columns "
                f"({', '.join(sorted(need - cols))}): not an OpenClaw store",
                path=self.name,
            )


@dataclass(frozen=True)
class Window:
    """One ``session_windows`` row (a session)."""

    session_id: str
    session_key: str | None
    provider: str | None
    model: str | None
    created_at: int | None
    updated_at: int | None


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _int(v: Any) -> int | None:
    return v if type(v) is int else None


def sessions(db: StoreDb) -> list[Window]:
    """Every session of the store, oldest first (those with rows but no window row too)."""
    rows = db.query(
        "SELECT session_id, session_key, model_provider, model, created_at, updated_at "
        "FROM session_windows ORDER BY created_at, session_id",
        table="session_windows",
    )
    out = [
        Window(str(r[0]), _text(r[1]), _text(r[2]), _text(r[3]), _int(r[4]), _int(r[5]))
        for r in rows
    ]
    known = {w.session_id for w in out}
    for (sid,) in db.query(
        "SELECT DISTINCT session_id FROM transcript_events ORDER BY session_id",
        table="transcript_events",
    ):
        if str(sid) not in known:
            out.append(Window(str(sid), None, None, None, None, None))
    return out


def store_meta(db: StoreDb) -> dict[str, str]:
    """``schema_meta``'s primary row: the store's schema version and OpenClaw's version."""
    if "schema_meta" not in db.tables:
        return {}
    rows = db.query(
        "SELECT schema_version, app_version, agent_id FROM schema_meta WHERE meta_key = 'primary'",
        table="schema_meta",
    )
    if not rows:
        return {}
    out = {}
    for key, v in zip(("store_schema", "app_version", "agent_id"), rows[0], strict=True):
        if v is not None:
            out[key] = str(v)
    return out


def session_entry(db: StoreDb, window: Window) -> dict[str, Any]:
    """The session key's entry (``session_nodes.entry_json``: ``sessions.json``'s record) whose
    current session is this one, else ``{}`` (a session a reset replaced keeps none)."""
    if "session_nodes" not in db.tables:
        return {}
    rows = db.query(
        "SELECT entry_json FROM session_nodes WHERE current_session_id = ? "
        "ORDER BY session_key = ? DESC LIMIT 1",
        (window.session_id, window.session_key or ""),
        table="session_nodes",
    )
    if not rows or not isinstance(rows[0][0], str):
        return {}
    obj, _problem = loads_line(rows[0][0].encode("utf-8", "surrogatepass"))
    return obj if isinstance(obj, dict) else {}


def _place(db: StoreDb, sid: str, seq: Any) -> str:
    return f"session {sid[:80]!r}, transcript_events seq {seq}"


def _row_text(db: StoreDb, sid: str, r: tuple[Any, ...], left: int) -> bytes:
    """The entry bytes of one row: its JSON text, or its zstd data decompressed."""
    seq, text, packed, size = r
    if packed is None:
        if not isinstance(text, str):
            raise CorruptFileError(
                f"{_place(db, sid, seq)}: no event_json and no event_zstd", path=db.name
            )
        return text.encode("utf-8", "surrogatepass")
    if not isinstance(packed, bytes) or type(size) is not int or size < 1:
        raise CorruptFileError(
            f"{_place(db, sid, seq)}: event_zstd without a size in event_utf8_bytes", path=db.name
        )
    if size > MAX_ROW_BYTES:
        raise CorruptFileError(
            f"{_place(db, sid, seq)}: declares {size:,} bytes, more than OpenClaw's own limit "
            f"of {MAX_ROW_BYTES:,}",
            path=db.name,
        )
    if size > left:
        raise AdfError(
            f"{_place(db, sid, seq)}: the session's rows hold more than max_blob_bytes once "
            "decompressed; not read",
            path=db.name,
        )
    data, problem = zstd_blob(packed, size)
    if problem is None and len(data) != size:
        problem = f"{len(data):,} bytes once decompressed, not the {size:,} declared"
    if problem is not None:
        raise CorruptFileError(f"{_place(db, sid, seq)}: event_zstd {problem}", path=db.name)
    return data


def read_entries(db: StoreDb, sid: str, max_bytes: int = DEFAULT_MAX_SESSION_BYTES) -> EntryLog:
    """One session's entries in ``seq`` order, each placed by its ``seq`` (``Entry.line``)."""
    rd = EntryLog()
    left = max_bytes
    cur = db.cursor(
        "SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events "
        "WHERE session_id = ? ORDER BY seq",
        (sid,),
        table="transcript_events",
    )
    for index, r in enumerate(cur):
        data = _row_text(db, sid, r, left)
        left -= len(data)
        obj, problem = loads_line(data)
        seq = int(r[0])
        if type(obj) is not dict:
            why = problem or "a JSON value that is not an object"
            raise CorruptFileError(f"{_place(db, sid, seq)}: {why}", path=db.name)
        if index == 0:
            rd.header, rd.header_line = header_of(f"{db.name}#{sid}", obj, WHAT), seq
        elif obj.get("type") != "session":
            i = obj.get("id")
            e = Entry(seq, obj, i if isinstance(i, str) and i else f"@{seq}", index=index)
            rd.entries.append(e)
            rd.by_index[index] = e
    if rd.header is None:
        raise NotTranscriptError(f"session {sid[:80]!r} has no rows", path=db.name)
    return rd


def unknown_types(rd: EntryLog) -> dict[str, int]:
    """Entry types outside pi's, with the ``seq`` of the first of each."""
    out: dict[str, int] = {}
    for e in rd.entries:
        t = e.obj.get("type")
        if t not in ENTRY_TYPES:
            out.setdefault(str(t)[:40], e.line)
    return out


def open_store(path: str | os.PathLike[str], timeout: float = 5.0) -> StoreDb:
    """The store at ``path``, opened read-only."""
    return StoreDb(path, timeout=timeout)
