"""A session's subagents: inline sidechains, ``subagents/agent-*.jsonl`` files and legacy
``agent-*.jsonl`` files beside the session, and the ``tool_use`` that spawned each
(TRANSCRIPTS.md §1.1)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from adfkit._base.errors import AdfError, NotTranscriptError
from adfkit._base.files import open_text_stream
from adfkit._sources.claude_code.conversation import _assemble, _finish
from adfkit._sources.claude_code.graph import _Links
from adfkit._sources.claude_code.records import _FileData, _Rec
from adfkit._sources.transcript.kit import (
    Finding,
    Findings,
    ParsedTranscript,
    head_objects,
)

_AGENT_TAIL = re.compile(r"agentId: ([A-Za-z0-9_-]+)")


def _inline_sidechains(
    p: Path, recs: list[_Rec], fnd: Findings, d: _FileData, sid: str | None
) -> list[ParsedTranscript]:
    groups: dict[str, list[_Rec]] = {}
    by_uuid = {r.uuid: r for r in recs}
    prog = d.progress

    links = _Links(prog, Findings())
    tops: dict[int, _Rec] = {}

    def top_of(r: _Rec) -> _Rec:
        chain: list[_Rec] = []
        seen: set[int] = set()
        top = r
        while id(top) not in tops:
            seen.add(id(top))
            chain.append(top)
            p = by_uuid.get(links.resolve(top.parent)[0] or "")
            if p is None or id(p) in seen:
                break
            top = p
        res = tops.get(id(top), top)
        for c in chain:
            tops[id(c)] = res
        return res

    for r in recs:
        a = r.obj.get("agentId") if r.obj is not None else None
        if not isinstance(a, str):
            a = f"sidechain@{top_of(r).line}"
        groups.setdefault(a, []).append(r)
    out = []
    for aid, group in groups.items():
        sub_f = Findings()
        built = _assemble(group, sub_f, d, side_group=True)
        t = _finish(p, built, sub_f, {"inline": "true"}, sid, aid)
        t.findings = sub_f.done()
        t.meta["agent_id"] = aid
        out.append(t)
    return out


def _progress_subagents(
    p: Path, d: _FileData, sid: str | None, known: set[str]
) -> list[ParsedTranscript]:
    """Task subagents seen only through the ``agent_progress`` records of the session (older
    versions wrote no file for them), one per ``agentId`` not in ``known``: their records in
    file order, each a child of the one before (the copies carry no parent), a record seen
    twice taken once."""
    groups: dict[str, list[_Rec]] = {}
    tool_use: dict[str, str] = {}
    seen: set[str] = set()
    for line, aid, tu, inner in d.agent_progress:
        u = inner["uuid"]
        if aid in known or u in seen or inner.get("type") not in ("user", "assistant"):
            continue
        seen.add(u)
        group = groups.setdefault(aid, [])
        parent = group[-1].uuid if group else None
        obj = {**inner, "parentUuid": parent, "isSidechain": True, "agentId": aid}
        group.append(_Rec(line, u, parent, inner["type"], obj, True))
        if isinstance(tu, str):
            tool_use.setdefault(aid, tu)
    out = []
    for aid, group in groups.items():
        sub_f = Findings()
        built = _assemble(group, sub_f, d, side_group=True)
        t = _finish(p, built, sub_f, {"layout": "progress"}, sid, aid)
        t.findings = sub_f.done()
        t.meta["agent_id"] = aid
        t.parent_tool_use_id = tool_use.get(aid)
        out.append(t)
    return out


def _subagent_files(
    p: Path,
    sid: str | None,
    parse: Callable[..., ParsedTranscript],
    max_line_bytes: int,
    warn: bool,
) -> list[ParsedTranscript]:
    """The session's subagent files (``<session>/subagents/agent-*.jsonl``, and legacy
    ``agent-*.jsonl`` beside it whose ``sessionId`` is the session's), each read with
    ``parse`` (:func:`parse_claude_code`); one that is not a transcript is an empty one with
    a ``not_transcript`` finding."""
    files: list[tuple[Path, dict[str, Any]]] = []
    sub_dir = p.with_suffix("") / "subagents"
    if sub_dir.is_dir():
        for f in _agent_files(sub_dir):
            files.append((f, _sidecar(f)))
    if sid is not None:
        for f in _agent_files(p.parent):
            if _first_session_id(f) == sid:
                files.append((f, _sidecar(f)))
    out = []
    for f, side in files:
        try:
            t = parse(f, max_line_bytes=max_line_bytes, subagents=False, warn=warn)
        except NotTranscriptError as e:
            out.append(
                ParsedTranscript(
                    path=str(f),
                    format="claude_code",
                    session_id=sid,
                    findings=[Finding("not_transcript", "error", None, e.detail)],
                    agent_id=_agent_id_from_name(f),
                )
            )
            continue
        if t.agent_id is None:
            t.agent_id = _agent_id_from_name(f)
        for k, dst in (("agentType", "agent_type"), ("description", "description")):
            v = side.get(k)
            if isinstance(v, str):
                t.meta[dst] = v
        if "agent_type" not in t.meta and f.name.startswith("agent-acompact"):
            t.meta["agent_type"] = "compact"
        tu = side.get("toolUseId")
        if isinstance(tu, str):
            t.parent_tool_use_id = tu
        t.meta["layout"] = "subagents" if f.parent.name == "subagents" else "legacy"
        out.append(t)
    return out


def _agent_files(folder: Path) -> list[Path]:
    """The ``agent-*.jsonl`` entries of ``folder``, sorted by name (none when it cannot be
    listed): what ``sorted(folder.glob("agent-*.jsonl"))`` gives, without a pattern match and a
    path object per entry (every session lists its project's folder, which holds every other
    session of the project)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [folder / n for n in sorted(names) if n.startswith("agent-") and n.endswith(".jsonl")]


def _agent_id_from_name(f: Path) -> str:
    return f.name[len("agent-") : -len(".jsonl")]


def _sidecar(f: Path) -> dict[str, Any]:
    m = f.with_name(f.name[: -len(".jsonl")] + ".meta.json")
    try:
        with open_text_stream(m, buffering=0) as fh:
            v = orjson.loads(fh.read(1 << 20))
    except (AdfError, OSError, orjson.JSONDecodeError):
        return {}
    return v if isinstance(v, dict) else {}


def _first_session_id(f: Path, max_lines: int = 50) -> str | None:
    try:
        with open_text_stream(f) as fh:
            for obj in head_objects(fh, max_lines):
                if isinstance(obj.get("sessionId"), str):
                    return str(obj["sessionId"])
    except (NotTranscriptError, OSError):  # a FIFO, gone, unreadable: not this session's
        return None
    return None


def _link_subagents(main: ParsedTranscript, agent_results: dict[str, str]) -> None:
    if not main.subagents:  # nothing to link: the rows' tool calls are not looked through
        return
    owner: dict[str, str | None] = {}
    for r in main.rows:
        for b in r.content:
            if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                owner[b["id"]] = None
    for s in main.subagents:
        for r in s.rows:
            for b in r.content:
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    owner[b["id"]] = s.agent_id
    tails: dict[str, str] | None = None
    for s in main.subagents:
        if s.parent_tool_use_id is None and s.agent_id is not None:
            tu = agent_results.get(s.agent_id)
            if tu is None:
                if tails is None:
                    tails = _agent_tails([main, *main.subagents])
                tu = tails.get(s.agent_id)
            s.parent_tool_use_id = tu
        if s.parent_tool_use_id is not None:
            s.parent_agent_id = owner.get(s.parent_tool_use_id)


def _agent_tails(ts: Iterable[ParsedTranscript]) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in ts:
        for r in t.rows:
            for b in r.content:
                if b.get("type") == "tool_result":
                    c = b.get("content")
                    if isinstance(c, str) and "agentId: " in c:
                        m = _AGENT_TAIL.search(c)
                        if m and isinstance(b.get("tool_use_id"), str):
                            out[m.group(1)] = b["tool_use_id"]
    return out
