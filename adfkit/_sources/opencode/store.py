"""The only place a connection to OpenCode's store is made: opened as adfkit opens an ``.adf``
file (:class:`adfkit._sources.adf.sqlite.Source`: read-only, ``immutable`` when no sidecar is
beside it and so creating none, ``mode=ro&readonly_shm=1`` while OpenCode runs and holds its
``-wal`` and ``-shm``, a private copy otherwise; regular files only, a FIFO or device refused
before SQLite sees it), reading only the tables it needs (``session``, ``message``, ``part``,
``project``: never ``account``, ``credential`` or ``control_account``).

Each message and part row holds its fields as JSON text (``data``); a row that is not a JSON
object, or a part whose message is not in the session, is a :class:`MalformedRowError` naming
the store, the table and the row's id.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from adfkit._base.errors import MalformedRowError, NotTranscriptError
from adfkit._sources.adf.sqlite import Source

#: Tables read (an allowlist: the store's ``account`` and ``credential`` tables hold tokens).
TABLES = frozenset({"session", "message", "part", "project"})
#: Columns each table must have.
NEEDED = {
    "session": ("id", "parent_id", "title", "time_created"),
    "message": ("id", "session_id", "time_created", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
#: ``session`` columns read where the store has them (added over OpenCode's releases).
SESSION_COLUMNS = (
    "id",
    "parent_id",
    "project_id",
    "slug",
    "directory",
    "title",
    "version",
    "agent",
    "model",
    "time_created",
    "time_updated",
    "time_archived",
)


@dataclass(frozen=True)
class Record:
    """One message or part row: its id, its message's id (a message: its own), its
    ``time_created`` (ms) and its ``data`` parsed."""

    id: str
    message_id: str
    time_created: int | None
    data: dict[str, Any]


class Rows(Protocol):
    """Where a session's rows come from: a store, or an ``opencode export`` document."""

    name: str

    def messages(self, session_id: str) -> list[Record]: ...
    def parts(self, session_id: str, messages: set[str]) -> list[Record]: ...


class OpenCodeStore(Source):
    """A read-only connection to an ``opencode.db``."""

    allowed = TABLES
    guarded = "account and credential (credentials)"

    def _recognise(self) -> None:
        missing = [t for t in NEEDED if t not in self.tables]
        if missing:
            raise NotTranscriptError(
                f"SQLite database without OpenCode's tables (no {', '.join(missing)}): "
                "not an OpenCode store",
                path=self.name,
            )

    def _open_and_probe(self) -> None:
        super()._open_and_probe()
        for table, cols in NEEDED.items():
            lack = [c for c in cols if c not in self.columns.get(table, [])]
            if lack:
                raise NotTranscriptError(
                    f"table {table} has no column {', '.join(lack)}: not an OpenCode store "
                    "adfkit reads",
                    path=self.name,
                )

    # -- sessions -----------------------------------------------------------------------
    def sessions(self) -> list[dict[str, Any]]:
        """Every session row (the columns of :data:`SESSION_COLUMNS` the store has), oldest
        first, with ``worktree`` (its project's folder) where the store has projects."""
        have = [c for c in SESSION_COLUMNS if c in self.columns["session"]]
        cols = ", ".join(f"s.{c}" for c in have)
        join = ""
        if "project_id" in have and "worktree" in self.columns.get("project", []):
            cols += ", p.worktree"
            have.append("worktree")
            join = " LEFT JOIN project p ON p.id = s.project_id"
        rows = self.query(
            f"SELECT {cols} FROM session s{join} ORDER BY s.time_created, s.id",  # noqa: S608
            table="session",
        )
        return [dict(zip(have, r, strict=True)) for r in rows]

    def messages(self, session_id: str) -> list[Record]:
        """The session's messages in OpenCode's order (ids ascend with time)."""
        rows = self.query(
            "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY id",
            (session_id,),
            table="message",
        )
        return [Record(i, i, t, self._data("message", i, d)) for i, t, d in rows]

    def parts(self, session_id: str, messages: set[str]) -> list[Record]:
        """The session's parts, by message then id; a part whose message is not among
        ``messages`` (the session's) is a :class:`MalformedRowError`."""
        rows = self.query(
            "SELECT id, message_id, time_created, data FROM part WHERE session_id = ? "
            "ORDER BY message_id, id",
            (session_id,),
            table="part",
        )
        out = []
        for i, m, t, d in rows:
            if m not in messages:
                raise MalformedRowError(
                    f"part {i} (session {session_id}) belongs to message {m!r}, which the "
                    "session does not have",
                    path=self.name,
                )
            out.append(Record(i, m, t, self._data("part", i, d)))
        return out

    def _data(self, table: str, row_id: str, raw: Any) -> dict[str, Any]:
        try:
            data = orjson.loads(raw)
        except (orjson.JSONDecodeError, TypeError) as exc:
            why = str(exc).split(":")[0]
            raise MalformedRowError(
                f"{table} {row_id}: data is not JSON ({why})", path=self.name
            ) from None
        if type(data) is not dict:
            raise MalformedRowError(
                f"{table} {row_id}: data is JSON but not an object", path=self.name
            )
        return data


def open_store(path: str | os.PathLike[str], *, timeout: float = 5.0) -> OpenCodeStore:
    """The store at ``path``, open read-only."""
    return OpenCodeStore(path, timeout=timeout)
