"""An OpenCode store as the agents it holds: one :class:`TranscriptSource` per session, the
sessions no other session made (a ``task`` subagent's session is its parent's
``subagents()``), each read on first use; ``opencode.db#<session id>`` opens one, a child
session's id too."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from adfkit._base.errors import AdfError
from adfkit._sources.opencode.parser import parse_session
from adfkit._sources.opencode.store import OpenCodeStore, open_store
from adfkit._sources.transcript.kit import warn_findings
from adfkit._sources.transcript.source import TranscriptSource


class OpenCodeSessions(Sequence[TranscriptSource]):
    """The top-level sessions of one ``opencode.db``, oldest first; ``store[i]`` reads
    session ``i`` on first use, ``names()`` lists their ids without reading any. The store is
    read once, when this is made (sessions), and then per session; it is closed by
    :meth:`close`.

    Parameters
    ----------
    path : the store (read-only; nothing is created beside it).
    timeout : seconds to wait for a writer's lock (OpenCode running).
    warn : emit one :class:`adfkit.AdfWarning` per session read with warning-level findings.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, timeout: float = 5.0, warn: bool = True
    ) -> None:
        self.path = Path(path)
        self.warn = warn
        self.store: OpenCodeStore = open_store(self.path, timeout=timeout)
        try:
            every = self.store.sessions()
        except BaseException:
            self.store.close()
            raise
        self._by_id = {str(s["id"]): s for s in every}
        self._top = [s for s in every if s.get("parent_id") not in self._by_id]
        self._cache: dict[str, TranscriptSource] = {}

    def children(self, session_id: str) -> list[dict[str, Any]]:
        """The sessions ``session_id`` made (``parent_id``), oldest first."""
        return [s for s in self._by_id.values() if s.get("parent_id") == session_id]

    def names(self) -> list[str]:
        """Each top-level session's id, in order (nothing read)."""
        return [str(s["id"]) for s in self._top]

    def __len__(self) -> int:
        return len(self._top)

    @overload
    def __getitem__(self, i: int) -> TranscriptSource: ...
    @overload
    def __getitem__(self, i: slice) -> list[TranscriptSource]: ...
    def __getitem__(self, i: int | slice) -> TranscriptSource | list[TranscriptSource]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self.by_name(self.names()[range(len(self))[i]])

    def __iter__(self) -> Iterator[TranscriptSource]:
        for j in range(len(self)):
            yield self[j]

    def by_name(self, session_id: str) -> TranscriptSource:
        """The session ``session_id`` (a child session too), read now. Raises
        :class:`AdfError` naming some sessions when the store has none of that id."""
        if session_id not in self._by_id:
            shown = ", ".join(self.names()[:5]) + (" ..." if len(self) > 5 else "")
            raise AdfError(
                f"no OpenCode session {session_id!r} in the store (sessions: {shown or 'none'})",
                path=self.path,
            )
        src = self._cache.get(session_id)
        if src is None:
            parsed = parse_session(self.store, self._by_id[session_id], self.children)
            if self.warn:
                warn_findings(f"{self.path} [{session_id}]", parsed.findings, stacklevel=4)
            src = TranscriptSource(parsed)
            self._cache[session_id] = src
        return src

    def close(self) -> None:
        """Close the store."""
        self.store.close()


def open_sessions(path: str | os.PathLike[str], **options: Any) -> OpenCodeSessions:
    """The sessions of the store at ``path`` (:class:`OpenCodeSessions`)."""
    keep = {k: options[k] for k in ("timeout", "warn") if k in options}
    return OpenCodeSessions(Path(path).expanduser(), **keep)


def open_member(path: str | os.PathLike[str], member: str, **options: Any) -> TranscriptSource:
    """One session of the store at ``path``, by id; the store is closed once it is read."""
    sessions = open_sessions(path, **options)
    try:
        return sessions.by_name(member)
    finally:
        sessions.close()


def open_export(path: str | os.PathLike[str], **options: Any) -> TranscriptSource:
    """The one session of an ``opencode export`` document (:mod:`.export`)."""
    from adfkit._sources.opencode.export import ExportDocument

    doc = ExportDocument(Path(path).expanduser())
    parsed = parse_session(doc, doc.session(), lambda _sid: [])
    if options.get("warn", True):
        warn_findings(str(path), parsed.findings, stacklevel=4)
    return TranscriptSource(parsed)
