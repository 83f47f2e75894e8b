"""Reading a Claude Code session file: its records with a uuid (the nodes and links of the
conversation graph), its metadata records, and the records it skips (TRANSCRIPTS.md §1.3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from adfkit._base.errors import NotTranscriptError
from adfkit._sources.transcript.kit import (
    Findings,
    JsonLines,
    Narrow,
    TypeCounts,
    check_head,
)

_WHAT = "Claude Code transcript"


#: Record types that carry no conversation content (§1.3), read as metadata or skipped.
META_TYPES = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "custom-title",
        "agent-name",
        "ai-title",
        "mode",
        "permission-mode",
        "pr-link",
        "agent-setting",
        "file-history-delta",
        "tag",
        # Claude Code 2.1.3xx: the requests of main-chain calls (``api-request``, its
        # ``api-request-shape`` and the ``api-request-blob`` records holding its messages), and
        # session state (``atis-latch``, ``tools-used``, ``cost-state``): no conversation rows
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "atis-latch",
        "tools-used",
        "cost-state",
    }
)


#: Lines that open with one of these are records adfkit never uses (file-history snapshots are
#: about a third of a large file's bytes, TRANSCRIPTS.md §1.3): counted, not parsed. Claude Code
#: writes ``type`` first in them.
_SKIPPED = (
    b'{"type":"file-history-snapshot"',
    b'{"type":"file-history-delta"',
    b'{"type":"queue-operation"',
    b'{"type":"api-request-blob"',
    b'{"type":"api-request-shape"',
)


class _LinkData(msgspec.Struct):
    type: Any = None


class _Link(msgspec.Struct, tag_field="type", tag="progress"):
    """What :func:`_read` takes of a ``progress`` record (most lines of a session, TRANSCRIPTS.md
    §1.3; mostly bash output): the link, and its data's type (an ``agent_progress`` record is
    parsed whole). A record of another shape (no uuid, a parentUuid not text, data not an
    object) fails it and is parsed whole."""

    uuid: str
    parentUuid: str | None = None
    data: _LinkData | None = None


_LINK = msgspec.json.Decoder(_Link).decode


class _Rec:
    """One record with a uuid (or a uuid-less user/assistant record), in file order."""

    __slots__ = ("line", "uuid", "parent", "type", "obj", "side", "pnode")

    def __init__(
        self, line: int, uuid: str, parent: Any, type_: str, obj: dict[str, Any] | None, side: bool
    ) -> None:
        self.line = line
        self.uuid = uuid
        self.parent = parent if isinstance(parent, str) else None
        self.type = type_
        self.obj = obj
        self.side = side
        self.pnode: _Rec | None = None


@dataclass
class _FileData:
    recs: list[_Rec] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)
    session_ids: dict[str, int] = field(default_factory=dict)
    #: records read (rows, metadata, links, skipped lines): none means not a session
    n_records: int = 0
    #: line -> what was repaired in its bytes (the row it starts is flagged malformed)
    repaired: dict[int, str] = field(default_factory=dict)
    #: ``progress`` records (and records of an unknown type that carry a uuid) are links,
    #: never rows: uuid -> (parentUuid, line) (first copy wins)
    progress: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    #: the records of Task subagents that older versions wrote only inside ``agent_progress``
    #: records (no file of their own): ``(line, agentId, parentToolUseID, record)``
    agent_progress: list[tuple[int, str, Any, dict[str, Any]]] = field(default_factory=list)
    #: records of an unknown type: without a uuid (skipped), with one (kept as links)
    unknown: TypeCounts = field(default_factory=TypeCounts)
    linked: TypeCounts = field(default_factory=TypeCounts)
    #: an assistant record carries ``requestSessionId``: the file may hold a fork's copies of
    #: its parent's records (:class:`.content._CopiedBoundaries` is asked only then)
    copies: bool = False

    def link(self, uuid: str, parent: Any, n: int) -> bool:
        """Keep record ``uuid`` (line ``n``) as a link of the chain to ``parent`` (None unless
        text); the first copy wins. Whether this was the first."""
        if uuid in self.progress:
            return False
        self.progress[uuid] = (parent if type(parent) is str else None, n)
        return True

    def take_link(self, n: int, link: _Link) -> bool:
        """Keep a ``progress`` record read narrowly (:class:`Narrow`) as :func:`_read` keeps
        it; False for one that carries a subagent's record (parsed whole)."""
        data = link.data
        if data is not None and data.type == "agent_progress":
            return False
        self.link(link.uuid, link.parentUuid, n)
        return True


def _read(path: Path, max_line_bytes: int, fnd: Findings) -> _FileData:
    check_head(path, _WHAT)
    d = _FileData()
    narrow = Narrow(b'"type":"progress"', _LINK, d.take_link)
    lines = JsonLines(
        path, fnd, "session", max_line_bytes=max_line_bytes, skip=_SKIPPED, narrow=narrow
    )
    for n, obj in lines:  # once per line of a large file: the usual case in as few steps
        t = obj.get("type")
        if t == "progress":  # most lines of a real file: a parent link, no node
            u = obj.get("uuid")
            if type(u) is str:
                if d.link(u, obj.get("parentUuid"), n):
                    data = obj.get("data")  # a Task subagent's record (older versions)
                    if type(data) is dict and data.get("type") == "agent_progress":
                        _agent_progress(d, n, obj, data)
                continue
        _take(d, fnd, n, obj, t)
    d.repaired = lines.repaired
    d.n_records += lines.n_skipped + len(d.progress)
    if d.n_records == 0 and lines.n_parsed:
        raise NotTranscriptError(
            f"JSON lines, but no Claude Code record (user, assistant, system, progress, "
            f"summary...): not a {_WHAT}",
            path=path,
        )
    d.unknown.report(
        fnd, "unknown_record_type", "warning", "{n} record(s) of unknown type {t!r} skipped"
    )
    d.linked.report(
        fnd,
        "unknown_record_type",
        "info",
        "{n} record(s) of unknown type {t!r} with a uuid: kept as links of the chain (as "
        "progress records are), not as rows",
    )
    return d


def _agent_progress(d: _FileData, n: int, obj: dict[str, Any], data: dict[str, Any]) -> None:
    """Keep the subagent record an ``agent_progress`` record (``obj``, its ``data``) carries
    (its ``data.message``: a user or assistant record with its uuid, older versions' only copy
    of a Task subagent's calls; ccusage counts them)."""
    inner, aid = data.get("message"), data.get("agentId")
    if type(inner) is dict and type(aid) is str and type(inner.get("uuid")) is str:
        d.agent_progress.append((n, aid, obj.get("parentToolUseID"), inner))


def _take(d: _FileData, fnd: Findings, n: int, obj: dict[str, Any], t: Any) -> None:
    """Every record but a ``progress`` one with a uuid (:func:`_read` does those)."""
    if t == "progress":
        d.n_records += 1
        return  # no uuid: a link to nothing
    if t == "user" or t == "assistant" or t == "attachment" or t == "system":
        d.n_records += 1
        u = obj.get("uuid")
        if type(u) is not str:
            if t == "system":
                return
            fnd.add("missing_uuid", "warning", n, f"{t} record without a uuid; kept as a root")
            u = f"line:{n}"
        d.recs.append(_Rec(n, u, obj.get("parentUuid"), t, obj, obj.get("isSidechain") is True))
        if t == "assistant" and "requestSessionId" in obj:
            d.copies = True
        sid = obj.get("sessionId")
        if type(sid) is str:
            d.session_ids[sid] = d.session_ids.get(sid, 0) + 1
        if "cwd" not in d.meta:
            _meta_from(obj, d.meta)
        return
    if t in META_TYPES:
        d.n_records += 1
        _meta_record(t, obj, d.meta)
        return
    u = obj.get("uuid")
    if type(u) is str:  # unknown, but a link other records may point through
        d.link(u, obj.get("parentUuid"), n)
        d.linked.add(t, n)
        return
    d.unknown.add(t, n)


def _meta_from(obj: dict[str, Any], meta: dict[str, str]) -> None:
    for src, dst in (
        ("cwd", "cwd"),
        ("version", "version"),
        ("gitBranch", "git_branch"),
        ("slug", "slug"),
        ("entrypoint", "entrypoint"),
    ):
        v = obj.get(src)
        if isinstance(v, str) and dst not in meta:
            meta[dst] = v


def _meta_record(t: str, obj: dict[str, Any], meta: dict[str, str]) -> None:
    if t == "summary":
        s, leaf = obj.get("summary"), obj.get("leafUuid")
        if isinstance(s, str) and "summary" not in meta:
            meta["summary"] = s
        if isinstance(leaf, str):
            meta["summary_leaf_uuid"] = leaf
    elif t in ("custom-title", "ai-title"):
        v = obj.get("customTitle") or obj.get("aiTitle") or obj.get("title")
        if isinstance(v, str) and (t == "custom-title" or "title" not in meta):
            meta["title"] = v
    elif t == "last-prompt":
        leaf = obj.get("leafUuid")
        if isinstance(leaf, str):
            meta["last_prompt_leaf_uuid"] = leaf
