"""``opencode export <session id>``: one session as a JSON document (cli/cmd/export.ts):
``{"info": <session>, "messages": [{"info": <message>, "parts": [<part>...]}...], "todos"}``,
written with two-space indents. The same messages and parts as the store's ``data``, with
their ids inside (``info.id``, ``part.id``): read by the store's reader
(:func:`.parser.parse_session`) through :class:`ExportDocument`, which serves them as the
store does (recognised by :func:`.files.is_export`). The ``Exporting session: <id>`` line
OpenCode writes to stderr is skipped when a capture put it first. No child session is in an
export: its ``task`` calls have no ``subagents()``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from adfkit._base.errors import MalformedRowError, NotTranscriptError
from adfkit._base.files import open_text_stream
from adfkit._sources.opencode.store import Record

#: The largest export read (a session of a few thousand calls is tens of MB).
MAX_BYTES = 1 << 30


class ExportDocument:
    """An export's session, messages and parts, served as :class:`.store.OpenCodeStore`
    serves a store's (``name``, :meth:`messages`, :meth:`parts`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.name = str(path)
        with open_text_stream(self.path) as f:
            raw = f.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise NotTranscriptError(f"an export larger than {MAX_BYTES:,} bytes", path=path)
        if raw.startswith(b"Exporting session: "):
            raw = raw.partition(b"\n")[2]
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise MalformedRowError(
                f"not a complete JSON document ({str(exc).split(':')[0]}): an OpenCode export "
                "cut short?",
                path=path,
            ) from None
        info = doc.get("info") if type(doc) is dict else None
        msgs = doc.get("messages") if type(doc) is dict else None
        if type(info) is not dict or not isinstance(info.get("id"), str) or type(msgs) is not list:
            raise NotTranscriptError(
                'not an OpenCode export (no "info" with an id, no "messages" list)', path=path
            )
        self.info = info
        self._messages: list[Record] = []
        self._parts: list[Record] = []
        for i, m in enumerate(msgs):
            self._message(i, m)

    def _bad(self, where: str, what: str) -> MalformedRowError:
        return MalformedRowError(f"{where}: {what}", path=self.name)

    def _message(self, i: int, m: Any) -> None:
        where = f"messages[{i}]"
        info = m.get("info") if type(m) is dict else None
        parts = m.get("parts") if type(m) is dict else None
        if type(info) is not dict or not isinstance(info.get("id"), str):
            raise self._bad(where, 'no "info" object with an id')
        if type(parts) is not list:
            raise self._bad(where, 'no "parts" list')
        mid = info["id"]
        created = _time(info)
        self._messages.append(Record(mid, mid, created, info))
        for j, p in enumerate(parts):
            if type(p) is not dict or not isinstance(p.get("id"), str):
                raise self._bad(f"{where}.parts[{j}]", "not a part object with an id")
            owner = p.get("messageID", mid)
            if owner != mid:
                raise self._bad(
                    f"{where}.parts[{j}] ({p['id']})",
                    f"belongs to message {owner!r}, not to the message holding it ({mid})",
                )
            self._parts.append(Record(p["id"], mid, None, p))

    def session(self) -> dict[str, Any]:
        """The session as a row of :meth:`.store.OpenCodeStore.sessions`."""
        i = self.info
        t: dict[str, Any] = i["time"] if type(i.get("time")) is dict else {}
        keys = {"parentID": "parent_id", "projectID": "project_id"}
        out = {
            keys.get(k, k): i.get(k)
            for k in ("id", "parentID", "projectID", "slug", "directory", "title", "version")
        }
        out["time_created"], out["time_updated"] = t.get("created"), t.get("updated")
        return out

    def messages(self, session_id: str) -> list[Record]:
        """The export's messages, in OpenCode's order (ids ascend with time)."""
        return sorted(self._messages, key=lambda r: r.id)

    def parts(self, session_id: str, messages: set[str]) -> list[Record]:
        """The export's parts, by message then id."""
        return sorted(self._parts, key=lambda r: (r.message_id, r.id))

    def close(self) -> None:
        """Nothing is held open."""


def _time(info: dict[str, Any]) -> int | None:
    t = info.get("time")
    c = t.get("created") if type(t) is dict else None
    return c if type(c) is int and c > 0 else None
