"""Claude Code session transcripts (``~/.claude/projects/<encoded-cwd>/<session>.jsonl``).

Reads one session file read-only, line by line (each line parsed once with orjson), and rebuilds
the conversation the model saw as :class:`~adfkit._sources.transcript.kit.TranscriptRow` objects,
plus compaction events, abandoned branches, subagents and integrity findings. The format reference
is ``TRANSCRIPTS.md`` §1; the choices made where it is uncertain:

- **Active conversation** (TRANSCRIPTS.md §0, which real files settle): ``parentUuid`` walked
  back from the *last-written* main-chain ``user``/``assistant`` record (a ``compact_boundary``'s
  ``logicalParentUuid`` stands for its parent). Where a link names a record never written (a
  boundary's logical parent, 23 of 65 real boundaries in 2.1.17-2.1.42; a Stop hook's
  ``hook_progress`` pointing at an unwritten final block record; a link held by a bad line), the
  walk goes on from the previous user/assistant record in file order (``chain_gap``, info), and
  the boundary records between the two are placed there: a gap, never the start of the session.
  A root met with conversation before it is bridged the same way and starts an event: a user
  record with ``isCompactSummary`` (Claude Code 1.0.x, no boundary) a ``compaction``, any other
  (plan mode's "clear context": a new conversation in the same file) a ``clear`` that swept the
  window before it (``new_root``, info). ``summary.leafUuid`` and ``last-prompt.leafUuid`` are
  recorded in ``meta`` but not used to choose. Records of unknown types that carry a uuid are
  links of the chain, as ``progress`` records are (``unknown_record_type``, info).
- **Off the chain**: a block record of a call on the chain (same ``message.id``, a parallel tool
  call whose later block record hangs off the first one, §0 3) joins that call's row after the
  on-chain block record written before it; its ``tool_result``, and off-chain results answering
  a ``tool_use`` of the chain, are spliced in after the call; off-chain ``attachment`` records
  whose parents reach the chain are spliced in after that point. Every other record is on an
  abandoned branch (``other_branches``, grouped by the branch's topmost record: ``branch-1``...
  in file order). A branch with a model call (the user went back and the model answered from
  there; a resume that answered a prompt again) gives a ``rewind`` event (swept = the branch's
  rows; line and time = the active record that replaced it), and its calls are counted by
  ``usage()`` (made and paid for); a branch of user records only (an ``/exit`` local command, an
  interrupted queued prompt) is no rewind (``aside_records``, info).
- **Duplicate uuids** (§1.4 step 1): a copy with the same ``parentUuid`` is a replay and is
  dropped (first occurrence wins); a copy with a *different* ``parentUuid`` is a re-parented
  preserved message and becomes its own graph node. A ``parentUuid`` resolves to the latest copy
  written before the child. A re-parented copy never makes a second row: the row stays at its
  first position and the compaction lists it as preserved.
- **One API call over several records** (§1.5, §0 3): block records with the same call key
  (``message.id:requestId``, or ``message.id``) that follow each other on the chain, with only
  ``tool_result`` rows between them (interleaved block records, 2.1.25 on), or off it as above,
  are one row; blocks concatenated in order, a block written twice kept once. Usage is counted
  once per key, from the last block record in file order (it carries the final
  ``output_tokens``). A key seen again on a separate row is not counted again
  (``duplicate_usage`` finding). ``isApiErrorMessage`` and ``<synthetic>`` records carry no usage.
- **Compaction** (§1.6): ``compact_boundary`` -> a ``compaction`` event; the next
  ``isCompactSummary`` user row is its summary. ``swept`` = the rows in the context window just
  before the boundary (everything since the session start or the previous summary, plus the
  previous event's preserved rows) minus the preserved ones; ``preserved`` = rows whose uuid is in
  ``preservedMessages.uuids`` (``preserved_messages.all_uuids``), else the run
  ``preservedSegment.headUuid``..``tailUuid``. ``trigger`` is None when ``compactMetadata`` is
  missing (not assumed ``auto``). ``tokens_before``/``tokens_after`` are the prompt sizes of the
  last main-chain call before the boundary and the first one after the summary.
  ``microcompact_boundary`` -> a ``microcompaction`` event whose swept rows are the
  ``tool_result`` rows of ``compactedToolIds`` (and attachment rows of ``clearedAttachmentUUIDs``);
  they stay in the window (as stubs).
- **Subagents** (§1.1, §1.4 step 5): ``<session>/subagents/agent-*.jsonl`` (``.meta.json``
  sidecar) and legacy ``agent-*.jsonl`` files beside the session whose ``sessionId`` matches are
  parsed as their own transcripts. ``agent-acompact-*`` files are included with
  ``meta["agent_type"] = "compact"``; their usage is not linked to any compaction (uncertain).
  Sidechain records inside the main file (older versions) become subagents too, grouped by
  ``agentId`` (else by their root). The spawning ``tool_use`` comes from the sidecar's
  ``toolUseId``, else ``toolUseResult.agentId`` on a trunk result, else an ``agentId: <id>`` tail
  in a result text.
- ``created_at`` of a merged row is the time of its first record. Tool results whose content is a
  list of parts become one string (text joined, other parts as ``[image]``-style placeholders).
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from adfkit import schema
from adfkit._base.errors import AdfError, NotTranscriptError
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_LINE_BYTES,
    CallDraft,
    EventDraft,
    Finding,
    Findings,
    JsonLines,
    ParsedTranscript,
    RowDraft,
    TypeCounts,
    anthropic_bad_counts,
    anthropic_tokens,
    as_int,
    bad_usage,
    check_head,
    final_calls,
    gc_paused,
    iso_ms,
    iter_lines,
    loads_line,
    number_rows,
    open_text_stream,
    read_head,
    result_text,
    sessions_frame,
    sniff,
    unknown_counts,
    warn_findings,
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
    }
)
#: Lines that open with one of these are records adfkit never uses (file-history snapshots are
#: about a third of a large file's bytes, TRANSCRIPTS.md §1.3): counted, not parsed. Claude Code
#: writes ``type`` first in them.
_SKIPPED = (
    b'{"type":"file-history-snapshot"',
    b'{"type":"file-history-delta"',
    b'{"type":"queue-operation"',
)

_CONTEXT_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<system-reminder>",
    "Caveat: The messages below were generated",
)
_AGENT_TAIL = re.compile(r"agentId: ([A-Za-z0-9_-]+)")


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
    #: records of an unknown type: without a uuid (skipped), with one (kept as links)
    unknown: TypeCounts = field(default_factory=TypeCounts)
    linked: TypeCounts = field(default_factory=TypeCounts)


# --- reading --------------------------------------------------------------------------------


def _read(path: Path, max_line_bytes: int, fnd: Findings) -> _FileData:
    check_head(path, _WHAT)
    d = _FileData()
    progress = d.progress
    lines = JsonLines(path, fnd, "session", max_line_bytes=max_line_bytes, skip=_SKIPPED)
    for n, obj in lines:  # once per line of a large file: the usual case in as few steps
        t = obj.get("type")
        if t == "progress":  # most lines of a real file: a parent link, no node
            u = obj.get("uuid")
            if type(u) is str:
                if u not in progress:
                    pu = obj.get("parentUuid")
                    progress[u] = (pu if type(pu) is str else None, n)
                continue
        _take(d, fnd, n, obj, t)
    d.repaired = lines.repaired
    d.n_records += lines.n_skipped + len(progress)
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
        if u not in d.progress:
            pu = obj.get("parentUuid")
            d.progress[u] = (pu if type(pu) is str else None, n)
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


# --- content --------------------------------------------------------------------------------


def _blocks(content: Any) -> tuple[list[dict[str, Any]], bool]:
    """Message content -> ADF blocks, and whether something had to be dropped."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}], False
    if not isinstance(content, list):
        return [], content is not None
    out: list[dict[str, Any]] = []
    bad = False
    for b in content:
        if type(b) is not dict:
            if isinstance(b, str):
                out.append({"type": "text", "text": b})
            else:
                bad = True
            continue
        t = b.get("type")
        if t == "text":
            txt = b.get("text")
            out.append(
                b
                if isinstance(txt, str) and len(b) == 2
                else {"type": "text", "text": txt if isinstance(txt, str) else ""}
            )
        elif t == "tool_use":
            inp = b.get("input")
            if len(b) == 4 and type(inp) is dict and "id" in b and "name" in b:
                out.append(b)  # already the ADF shape: no copy
                continue
            out.append(
                {
                    "type": "tool_use",
                    "id": b.get("id"),
                    "name": b.get("name"),
                    "input": inp if isinstance(inp, dict) else {"_raw_arguments": inp},
                }
            )
        elif t == "tool_result":
            c = b.get("content")
            if len(b) == 4 and type(c) is str and type(b.get("is_error")) is bool:
                out.append(b)  # tool_use_id, content, is_error: already the ADF shape
                continue
            out.append(
                {
                    "type": "tool_result",
                    "tool_use_id": b.get("tool_use_id"),
                    "content": result_text(c),
                    "is_error": b.get("is_error") is True,
                }
            )
        elif t == "thinking":
            th = b.get("thinking")
            out.append({"type": "thinking", "thinking": th if isinstance(th, str) else ""})
        elif t == "redacted_thinking":
            out.append({"type": "thinking", "thinking": "", "redacted": True})
        elif t == "image":
            src = b.get("source")
            url = ""
            if isinstance(src, dict):
                if src.get("type") == "base64":
                    url = f"data:{src.get('media_type', '')};base64,{src.get('data', '')}"
                elif isinstance(src.get("url"), str):
                    url = src["url"]
            out.append({"type": "image_url", "image_url": {"url": url}})
        else:
            out.append(b)
    return out, bad


def _user_hint(obj: dict[str, Any], blocks: list[dict[str, Any]]) -> str | None:
    if obj.get("isCompactSummary") is True:
        return "compaction_summary"
    if obj.get("isMeta") is True:
        return "context"
    for b in blocks:
        if b.get("type") == "text":
            txt = b.get("text")
            if isinstance(txt, str):
                s = txt.lstrip()
                if s.startswith(_CONTEXT_PREFIXES):
                    return "context"
                if s.startswith("<task-notification>"):
                    return "message"
            return None
        if b.get("type") == "tool_result":
            return None
    return None


def _attachment_row(obj: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    att = obj.get("attachment")
    atype = att.get("type") if isinstance(att, dict) else None
    text = ""
    if isinstance(att, dict):
        for k in ("prompt", "content", "text", "message"):
            v = att.get(k)
            if isinstance(v, str):
                text = v
                break
            if isinstance(v, list):
                text = result_text(v)
                break
    hint = "message" if atype == "queued_command" else "context"
    label = atype if isinstance(atype, str) else "attachment"
    if hint == "message" and text:
        return [{"type": "text", "text": text}], hint
    return [{"type": "text", "text": f"[attachment: {label}]" + (f" {text}" if text else "")}], hint


def _call_key(obj: dict[str, Any], msg: dict[str, Any]) -> str | None:
    mid = msg.get("id")
    if not isinstance(mid, str):
        return None
    rid = obj.get("requestId")
    return f"{mid}:{rid}" if isinstance(rid, str) else mid


# --- graph ----------------------------------------------------------------------------------


class _Links:
    """``progress`` records (and records of an unknown type that carry a uuid) are links, not
    nodes: a parent uuid that names one is followed through them to the first uuid that is not
    a link. Memoised, so each link is walked once however many records point through it."""

    def __init__(self, prog: dict[str, tuple[str | None, int]], fnd: Findings) -> None:
        self.prog = prog
        self.fnd = fnd
        self.memo: dict[str, tuple[str | None, int | None]] = {}

    def resolve(self, pu: str | None) -> tuple[str | None, int | None]:
        """(the first uuid reached that is not a link, None at a root; the line of the last
        link passed, None when ``pu`` is not a link)."""
        prog = self.prog
        if pu is None or pu not in prog:
            return pu, None
        memo = self.memo
        hit = memo.get(pu)
        if hit is not None:
            return hit
        chain: list[str] = []
        seen: set[str] = set()
        cur: str | None = pu
        res: tuple[str | None, int | None] | None = None
        while cur is not None and cur in prog:
            res = memo.get(cur)
            if res is not None:
                break
            if cur in seen:
                line = prog[cur][1]
                self.fnd.add("parent_cycle", "warning", line, "parentUuid chain loops; cut here")
                res = (None, line)
                break
            seen.add(cur)
            chain.append(cur)
            cur = prog[cur][0]
        if res is None:
            res = (cur, prog[chain[-1]][1])
        for c in chain:
            memo[c] = res
        return res


class _Graph:
    """uuid index and parent links. A duplicate uuid whose parent resolves to the same node as
    an earlier copy's is a replay (dropped); otherwise it is a node of its own. A parent link
    through ``progress`` records (:class:`_Links`) reaches the first record that is a node (a
    root if the links end, a missing parent if they dangle). ``missing`` maps a record whose
    parent was never written to (that uuid, the line of the record or link that names it)."""

    def __init__(self, recs: list[_Rec], fnd: Findings, links: _Links) -> None:
        latest: dict[str, _Rec] = {}
        copies: dict[str, list[_Rec]] = {}
        nodes: list[_Rec] = []
        later: list[_Rec] = []
        replays = 0
        append = nodes.append
        resolve = links.resolve
        for r in recs:
            pu = r.parent
            if pu is None and r.type == "system":
                pu = _parent_uuid(r)
            pu = resolve(pu)[0]
            pn = latest.get(pu) if pu is not None else None
            if pu is not None and pn is None:
                later.append(r)
            u = r.uuid
            f = latest.get(u)
            if f is not None:
                cs = copies.setdefault(u, [f])
                if any(c.pnode is pn for c in cs):
                    replays += 1
                    continue
                cs.append(r)
            latest[u] = r
            r.pnode = pn
            append(r)
        self.missing: dict[int, tuple[str, int]] = {}
        first = dict(latest)
        for u, cs in copies.items():
            first[u] = cs[0]
        for r in later:  # parents written after their child (or never)
            pu, link_line = resolve(_parent_uuid(r))
            if pu is None:
                continue
            p = first.get(pu)
            if p is None:
                self.missing[id(r)] = (pu, link_line if link_line is not None else r.line)
            r.pnode = p
        if replays:
            fnd.add(
                "duplicate_uuid",
                "info",
                None,
                f"{replays} record(s) repeat an earlier uuid and parent (replays); first kept",
            )
        self.nodes = nodes

    def parent_of(self, r: _Rec) -> tuple[_Rec | None, tuple[str, int] | None]:
        """The record's parent and, when the parent uuid is not in the file, (that uuid, the
        line of the record or progress link that names it)."""
        return r.pnode, self.missing.get(id(r)) if self.missing else None


def _parent_uuid(r: _Rec) -> str | None:
    if r.parent is None and r.type == "system" and r.obj is not None:
        lp = r.obj.get("logicalParentUuid")
        if isinstance(lp, str) and r.obj.get("subtype") == "compact_boundary":
            return lp
    return r.parent


# --- rows -----------------------------------------------------------------------------------


class _RowB(RowDraft):
    """A row being built from one record (then merged with the block records of its call):
    ``uuids`` of every record merged, ``call`` the model call whose usage it carries."""

    __slots__ = ("uuids", "call")

    def __init__(self, r: _Rec, role: str, content: list[dict[str, Any]]) -> None:
        obj = r.obj or {}
        super().__init__(role, content, r.line, iso_ms(obj.get("timestamp")))
        self.uuid = r.uuid
        self.uuids = [r.uuid]
        self.parent_uuid = r.parent
        self.sidechain = r.side
        a = obj.get("agentId")
        self.agent_id = a if isinstance(a, str) else None
        self.call: _Call | None = None


class _Call(CallDraft):
    """A model call over one or more block records: ``usage`` as the record chosen wrote it
    (the last one, ``uline``), turned into ``tokens`` (and ``unknown``: counts that are not
    counts, as written) once, by :func:`_finish`."""

    __slots__ = ("usage", "uline", "unknown")

    def __init__(self, key: str, row: _RowB, line: int, usage: dict[str, Any], side: bool) -> None:
        super().__init__(key, row, line, row.model, {}, row.created_at, side)
        self.row: _RowB = row
        self.usage = usage
        self.uline = line  # the line of the fragment whose usage is kept
        self.unknown: dict[str, Any] = {}


_USAGE_INPUT_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass
class _Built:
    rows: list[_RowB]
    branches: list[_RowB]
    events: list[EventDraft]
    calls: list[_Call]
    agent_results: dict[str, str]


class _Builder:
    """Turns records (in chain order) into rows, merging the fragments of one call."""

    def __init__(self, fnd: Findings, calls: dict[str, _Call], repaired: dict[int, str]) -> None:
        self.fnd = fnd
        self.calls = calls
        self.repaired = repaired
        self.rows: list[_RowB] = []
        self.last_assistant: _RowB | None = None
        self.only_results_since = False
        self.agent_results: dict[str, str] = {}

    def add(self, r: _Rec) -> _RowB | None:
        """Append the row for ``r`` (or merge it); returns the row touched, None if no row."""
        obj = r.obj
        if obj is None:
            return None
        t = r.type
        if t == "assistant":
            return self._assistant(r, obj)
        if t == "user":
            msg = obj.get("message")
            content = msg.get("content") if isinstance(msg, dict) else None
            blocks, bad = _blocks(content)
            row = _RowB(r, "user", blocks)
            row.kind_hint = _user_hint(obj, blocks)
            if bad or not isinstance(msg, dict):
                row.malformed = True
                row.note = "message content of an unexpected shape"
            tur = obj.get("toolUseResult")
            if isinstance(tur, dict):
                aid = tur.get("agentId")
                if isinstance(aid, str):
                    for b in blocks:
                        if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                            self.agent_results[aid] = b["tool_use_id"]
                            break
            self._push(row, r)
            if not (blocks and all(b.get("type") == "tool_result" for b in blocks)):
                self.only_results_since = False
            return row
        if t == "attachment":
            blocks, hint = _attachment_row(obj)
            row = _RowB(r, "user", blocks)
            row.kind_hint = hint
            self._push(row, r)
            self.only_results_since = False
            return row
        return None

    def _push(self, row: _RowB, r: _Rec) -> None:
        if r.line in self.repaired:
            row.malformed = True
            row.note = self.repaired[r.line]
        self.rows.append(row)

    def _assistant(self, r: _Rec, obj: dict[str, Any]) -> _RowB:
        msg = obj.get("message")
        if not isinstance(msg, dict):
            msg = {}
        blocks, bad = _blocks(msg.get("content"))
        key = _call_key(obj, msg)
        model = msg.get("model")
        synthetic = model == "<synthetic>"
        api_error = obj.get("isApiErrorMessage") is True
        la = self.last_assistant
        if key is not None and la is not None and la.call_key == key and self.only_results_since:
            la.content.extend(_new_blocks(la.content, blocks))
            la.lines.append(r.line)
            la.uuids.append(r.uuid)
            if bad:
                la.malformed = True
            self._usage(la, r, msg, key, merged=True)
            return la
        row = _RowB(r, "assistant", blocks)
        row.call_key = key
        row.model = model if isinstance(model, str) and not synthetic else None
        if synthetic:  # Claude Code's own text in the assistant's place: not a model call
            row.kind_hint = "notice"
            row.note = "model <synthetic>: no API call"
        if api_error:
            row.kind_hint = "notice"
            row.note = "isApiErrorMessage: an error shown as a message, no usage"
        if bad:
            row.malformed = True
            row.note = "message content of an unexpected shape"
        self._push(row, r)
        self.last_assistant = row
        self.only_results_since = True
        if not synthetic and not api_error:
            self._usage(row, r, msg, key, merged=False)
        return row

    def _usage(
        self, row: _RowB, r: _Rec, msg: dict[str, Any], key: str | None, merged: bool
    ) -> None:
        usage = msg.get("usage")
        if not isinstance(usage, dict):
            return
        if row.kind_hint == "notice" or row.note == "model <synthetic>: no API call":
            return
        k = key if key is not None else f"line:{r.line}"
        c = self.calls.get(k)
        if c is None:
            c = _Call(k, row, r.line, usage, r.side)
            self.calls[k] = c
            row.call = c
            return
        if c.row is not row:
            self.fnd.add(
                "duplicate_usage",
                "info" if _same_input(c.usage, usage) else "warning",
                r.line,
                f"usage of call {k[:40]} seen again (first on line {c.line}); counted once",
            )
            return
        c.n_records += 1
        if not _same_input(c.usage, usage):
            self.fnd.add(
                "usage_conflict",
                "warning",
                r.line,
                f"fragments of call {k[:40]} report different input/cache counts than line "
                f"{c.line}; the last fragment's is used",
            )
        if r.line >= c.uline:  # the last block record carries the final count (§0 3)
            c.usage = usage
            c.uline = r.line


def _new_blocks(have: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks of a call's next block record that its row does not hold yet (a block record
    written twice, on the chain and off it, is one block)."""
    if not have:
        return blocks
    return [b for b in blocks if b not in have]


def _same_input(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in _USAGE_INPUT_KEYS)


def _tool_use_ids(r: _Rec) -> list[str]:
    obj = r.obj
    msg = obj.get("message") if obj else None
    c = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(c, list):
        return []
    return [
        b["id"]
        for b in c
        if type(b) is dict and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def _result_ids(r: _Rec) -> list[str] | None:
    """tool_use ids answered by a user record made only of tool_result blocks, else None."""
    obj = r.obj
    msg = obj.get("message") if obj else None
    c = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(c, list) or not c:
        return None
    out = []
    for b in c:
        if type(b) is not dict or b.get("type") != "tool_result":
            return None
        i = b.get("tool_use_id")
        if isinstance(i, str):
            out.append(i)
    return out


def _rec_key(r: _Rec) -> str | None:
    o = r.obj or {}
    m = o.get("message")
    return _call_key(o, m) if isinstance(m, dict) else None


def _anchor(frags: list[_Rec], line: int) -> _Rec:
    """The block record on the chain an off-chain block record of the same call follows: the
    last one written before it (the first one if none was)."""
    best = frags[0]
    for f in frags:
        if f.line < line:
            best = f
    return best


@dataclass
class _Path:
    """The active conversation, root first, and what the walk met on the way."""

    recs: list[_Rec]
    on_path: set[int]
    #: a record -> the boundary records of a bridged gap, placed right after it
    after: dict[int, list[_Rec]]
    #: a root met mid-file -> the event it starts: ``compaction`` (an old-form summary) or
    #: ``clear`` (a new conversation in the same file)
    roots: dict[int, str]


class _Back:
    """The records a walk back can step to over a gap: the previous user/assistant record in
    file order not walked yet, and the boundary records between two lines."""

    def __init__(self, g: _Graph, seen: set[int]) -> None:
        self.ua = [r for r in g.nodes if r.type == "user" or r.type == "assistant"]
        self.ua_lines = [r.line for r in self.ua]
        self.bounds = [r for r in g.nodes if r.type == "system" and _is_boundary(r)]
        self.bound_lines = [r.line for r in self.bounds]
        self.seen = seen
        self.skips = 2 * len(self.ua) + 8  # a budget: skipping visited records never goes quadratic

    def last(self) -> _Rec | None:
        """The last-written user/assistant record, where the walk starts."""
        return self.ua[-1] if self.ua else None

    def previous(self, line: int) -> _Rec | None:
        ua, seen = self.ua, self.seen
        i = bisect.bisect_left(self.ua_lines, line) - 1
        while i >= 0 and id(ua[i]) in seen and self.skips > 0:
            i -= 1
            self.skips -= 1
        return ua[i] if i >= 0 and id(ua[i]) not in seen else None

    def bounds_between(self, after_line: int, before_line: int) -> list[_Rec]:
        """The boundary records written between two lines, not walked yet."""
        lo = bisect.bisect_right(self.bound_lines, after_line)
        hi = bisect.bisect_left(self.bound_lines, before_line)
        return [r for r in self.bounds[lo:hi] if id(r) not in self.seen]


def _active_path(g: _Graph, fnd: Findings, side_group: bool) -> _Path:
    """Walk ``parentUuid`` back from the last-written user/assistant record (a boundary's
    ``logicalParentUuid`` stands for its parent). Where a link names a record never written, or
    the walk meets a root with conversation before it, it goes on from the previous
    user/assistant record in file order (TRANSCRIPTS.md §0 1-3): a gap is bridged and flagged,
    never the start of the session."""
    seen: set[int] = set()
    recs: list[_Rec] = []
    after: dict[int, list[_Rec]] = {}
    roots: dict[int, str] = {}
    back = _Back(g, seen)
    cur = back.last()
    while cur is not None:
        if id(cur) in seen:
            fnd.add("parent_cycle", "warning", cur.line, "parentUuid chain loops; cut here")
            break
        seen.add(id(cur))
        recs.append(cur)
        p, missing = g.parent_of(cur)
        if p is not None:
            cur = p
            continue
        nxt = _bridge(cur, missing, back, fnd, side_group, roots)
        if nxt is None:
            break
        extra = back.bounds_between(nxt.line, missing[1] if missing is not None else cur.line)
        if extra:
            after[id(nxt)] = extra
            seen.update(map(id, extra))
        cur = nxt
    recs.reverse()
    return _Path(recs, seen, after, roots)


def _bridge(
    cur: _Rec,
    missing: tuple[str, int] | None,
    back: _Back,
    fnd: Findings,
    side_group: bool,
    roots: dict[int, str],
) -> _Rec | None:
    """Where the walk goes on from ``cur``, a record without a parent in the file: past a
    parent never written (``missing``: its uuid and the line naming it), the previous
    user/assistant record (``chain_gap``); past a root with conversation before it, that
    conversation's last record (``new_root``, and ``roots`` says which event the root starts).
    None: the walk ends here."""
    quiet = cur.side and not side_group
    if missing is not None:
        at = missing[1]
        nxt = back.previous(at)
        what = "logicalParentUuid" if cur.parent is None and cur.type == "system" else "parentUuid"
        if nxt is None:
            if not quiet:
                fnd.add(
                    "broken_parent_chain",
                    "info",
                    at,
                    f"{what} not in the file and no conversation before it: the file "
                    "starts mid-session",
                )
            return None
        if not quiet:
            fnd.add(
                "chain_gap", "info", at, f"{what} not in the file; continued from line {nxt.line}"
            )
        return nxt
    nxt = back.previous(cur.line) if cur.type != "system" else None
    if nxt is None:
        return None
    summary = cur.type == "user" and (cur.obj or {}).get("isCompactSummary") is True
    roots[id(cur)] = "compaction" if summary else "clear"
    fnd.add(
        "new_root",
        "info",
        cur.line,
        (
            "a compaction summary without a boundary (Claude Code 1.0.x)"
            if summary
            else "a new conversation starts in the same file (a cleared context)"
        )
        + f"; the one before it ends at line {nxt.line}",
    )
    return nxt


def _is_boundary(r: _Rec) -> bool:
    st = (r.obj or {}).get("subtype")
    return st == "compact_boundary" or st == "microcompact_boundary"


def _assemble(recs: list[_Rec], fnd: Findings, d: _FileData, side_group: bool) -> _Built:
    """The rows of one conversation (the main one, or one inline subagent's): the active path
    with what joins it from off the chain, its events, then the abandoned branches."""
    g = _Graph(recs, fnd, _Links(d.progress, fnd))
    ap = _active_path(g, fnd, side_group)
    order, branch_recs = _place_off_path(g, ap, side_group)
    calls: dict[str, _Call] = {}
    b = _Builder(fnd, calls, d.repaired)
    events: list[EventDraft] = []
    _walk_active(order, b, fnd, events, ap.roots)
    branch_rows = _branches(g, ap, branch_recs, b, events)
    return _Built(b.rows, branch_rows, events, list(calls.values()), b.agent_results)


def _place_off_path(g: _Graph, ap: _Path, side_group: bool) -> tuple[list[_Rec], list[_Rec]]:
    """The records in the order their rows are built (the active path, each record followed
    by what joins it from off the chain: block records of a call on it, parallel tool calls
    (§0 3), their results, attachments; and the boundaries of a bridged gap), and the records
    left on abandoned branches."""
    path, on_path = ap.recs, ap.on_path
    off_path = [
        r
        for r in g.nodes
        if id(r) not in on_path
        and r.type in ("user", "assistant", "attachment")
        and not (r.side and not side_group)
    ]
    use_rec: dict[str, _Rec] = {}
    answered: set[str] = set()
    key_recs: dict[str, list[_Rec]] = {}
    for r in path if off_path else ():  # only needed to place records off the chain
        if r.type == "assistant":
            for i in _tool_use_ids(r):
                use_rec.setdefault(i, r)
            k = _rec_key(r)
            if k is not None:
                key_recs.setdefault(k, []).append(r)
        elif r.type == "user":
            ids = _result_ids(r)
            if ids:
                answered.update(ids)
    stitched: dict[int, list[_Rec]] = {}
    branch_recs: list[_Rec] = []
    reach = _Reach(g, on_path)
    for r in off_path:  # file order
        if r.type == "assistant":
            k = _rec_key(r)
            if k is not None and k in key_recs:
                anchor = _anchor(key_recs[k], r.line)
                stitched.setdefault(id(anchor), []).append(r)
                for i in _tool_use_ids(r):
                    use_rec.setdefault(i, anchor)
                continue
        elif r.type == "user":
            ids = _result_ids(r)
            if ids and all(i in use_rec and i not in answered for i in ids):
                stitched.setdefault(id(use_rec[ids[0]]), []).append(r)
                answered.update(ids)
                continue
        else:  # attachment: stitch after the point where its parents reach the chain
            a = reach.point(r)
            if a is not None:
                stitched.setdefault(id(a), []).append(r)
                continue
        branch_recs.append(r)
    order: list[_Rec] = []
    for r in path:
        order.append(r)
        extra = stitched.get(id(r))
        if extra:
            order.extend(sorted(extra, key=lambda x: x.line))
        order.extend(ap.after.get(id(r), ()))
    return order, branch_recs


def _branches(
    g: _Graph, ap: _Path, branch_recs: list[_Rec], b: _Builder, events: list[EventDraft]
) -> list[_RowB]:
    """The rows of the abandoned branches (``branch-1``... by their topmost record, in file
    order), and a ``rewind`` event for each branch a model call was made from (line and time:
    the active record that replaced it)."""
    path = ap.recs
    groups: dict[int, list[_Rec]] = {}
    tops: dict[int, _Rec] = {}
    forks: dict[int, _Rec | None] = {}
    top_of = _Tops(ap.on_path)
    for r in branch_recs:
        top, fork = top_of.of(r)
        groups.setdefault(id(top), []).append(r)
        tops[id(top)] = top
        forks[id(top)] = fork
    children_on_path: dict[int, _Rec] = {}
    for r in path:
        p, _ = g.parent_of(r)
        if p is not None and id(p) not in children_on_path:
            children_on_path[id(p)] = r
    roots_on_path = [r for r in path if g.parent_of(r)[0] is None]
    branch_rows: list[_RowB] = []
    asides = 0
    for n, tid in enumerate(sorted(groups, key=lambda t: tops[t].line), start=1):
        bid = f"branch-{n}"
        bb = _Builder(b.fnd, b.calls, b.repaired)
        for r in groups[tid]:
            bb.add(r)
        for row in bb.rows:
            row.branch = bid
        branch_rows.extend(bb.rows)
        if not any(row.role == "assistant" for row in bb.rows):
            asides += 1  # no model call was made from it: not a rewind
            continue
        fork = forks[tid]
        repl = children_on_path.get(id(fork)) if fork is not None else None
        if repl is None and fork is None and roots_on_path:
            repl = roots_on_path[0]
        events.append(
            EventDraft(
                "rewind",
                repl.line if repl is not None else tops[tid].line,
                iso_ms((repl.obj or {}).get("timestamp")) if repl is not None else None,
                uuid=repl.uuid if repl is not None else None,
                swept=list(bb.rows),
                extra={
                    "branch": bid,
                    "fork_uuid": fork.uuid if fork is not None else None,
                    "branch_first_line": tops[tid].line,
                },
            )
        )
        b.agent_results.update(bb.agent_results)
    if asides:
        b.fnd.add(
            "aside_records",
            "info",
            None,
            f"{asides} run(s) of user records off the chain that no model call followed (a "
            "local command, an interrupted queued prompt): in branches(), not a rewind",
        )
    return branch_rows


class _Reach:
    """Where an off-chain attachment joins the chain: the first record on it that its parents
    (through other attachments only) reach. Memoised: each record is walked once."""

    def __init__(self, g: _Graph, on_path: set[int]) -> None:
        self.g = g
        self.on_path = on_path
        self.memo: dict[int, _Rec | None] = {}

    def point(self, r: _Rec) -> _Rec | None:
        memo, on_path = self.memo, self.on_path
        chain: list[_Rec] = []
        seen: set[int] = set()
        cur = r
        res: _Rec | None = None
        while True:
            if id(cur) in memo:
                res = memo[id(cur)]
                break
            if id(cur) in seen:
                break
            seen.add(id(cur))
            chain.append(cur)
            p = cur.pnode
            if p is None:
                break
            if id(p) in on_path:
                res = p
                break
            if p.type != "attachment":
                break
            cur = p
        for c in chain:
            memo[id(c)] = res
        return res


class _Tops:
    """The topmost record of the abandoned branch a record is on, and the record on the chain
    it forks from (None for a branch with no parent). Memoised: each record is walked once."""

    def __init__(self, on_path: set[int]) -> None:
        self.on_path = on_path
        self.memo: dict[int, tuple[_Rec, _Rec | None]] = {}

    def of(self, r: _Rec) -> tuple[_Rec, _Rec | None]:
        memo, on_path = self.memo, self.on_path
        chain: list[_Rec] = []
        seen: set[int] = set()
        top = r
        while True:
            if id(top) in memo:
                res = memo[id(top)]
                break
            seen.add(id(top))
            chain.append(top)
            p = top.pnode
            if p is None:
                res = (top, None)
                break
            if id(p) in on_path:
                res = (top, p)
                break
            if id(p) in seen:  # a cycle: its earliest record stands for it
                res = (min(chain, key=lambda x: x.line), None)
                break
            top = p
        for c in chain:
            memo[id(c)] = res
        return res


@dataclass
class _Compaction:
    """The latest compaction while the active path is walked (until the next one)."""

    event: EventDraft
    #: the event's own lists: re-parented preserved copies met later join ``preserved``, and
    #: leave ``swept`` when the compaction is settled (:meth:`settle`)
    preserved: list[_RowB]
    swept: list[_RowB]
    #: ``preservedMessages`` uuids: rows built later with one of them are preserved too
    preserve_uuids: set[str]
    pres_ids: set[int] = field(default_factory=set)
    unswept: set[int] = field(default_factory=set)
    summary_seen: bool = False

    def settle(self) -> None:
        """Rows the compaction preserved after all (re-parented copies) leave its swept list."""
        if self.unswept:
            drop = self.unswept
            self.swept[:] = [x for x in self.swept if id(x) not in drop]
            drop.clear()


class _Window:
    """The context window while the active path is walked: its rows, the latest compaction,
    and the rows a (micro)compaction names by uuid or by tool_use id."""

    def __init__(self) -> None:
        self.rows: list[_RowB] = []
        self.ids: set[int] = set()
        self.by_uuid: dict[str, _RowB] = {}
        self.result_row: dict[str, _RowB] = {}
        self.comp: _Compaction | None = None

    def reset(self, rows: list[_RowB]) -> None:
        self.rows[:] = rows
        self.ids.clear()
        self.ids.update(map(id, rows))

    def end_compaction(self) -> None:
        """The latest compaction is over (a new one, a clear, the end of the path)."""
        if self.comp is not None:
            self.comp.settle()
        self.comp = None

    def add(self, row: _RowB, r: _Rec) -> None:
        """A new row of record ``r``: in the window, and the latest compaction's summary or
        one of the rows it preserves."""
        self.rows.append(row)
        self.ids.add(id(row))
        comp = self.comp
        if comp is not None:
            if not comp.summary_seen and row.kind_hint == "compaction_summary":
                comp.summary_seen = True
                self.rows.remove(row)
                self.rows.insert(0, row)
                comp.event.summary = row
            elif r.uuid in comp.preserve_uuids:
                comp.preserved.append(row)
                comp.pres_ids.add(id(row))
        if row.role == "user":
            for blk in row.content:
                if blk.get("type") == "tool_result" and isinstance(blk.get("tool_use_id"), str):
                    self.result_row[blk["tool_use_id"]] = row

    def copy_of(self, old: _RowB) -> None:
        """A re-parented preserved copy of ``old``: its row already exists and stays where it
        was; the compaction it follows preserved it."""
        comp = self.comp
        if comp is not None and comp.summary_seen and id(old) not in comp.pres_ids:
            comp.preserved.append(old)
            comp.pres_ids.add(id(old))
            comp.unswept.add(id(old))
            if id(old) not in self.ids:
                self.rows.append(old)
                self.ids.add(id(old))


def _walk_active(
    order: list[_Rec],
    b: _Builder,
    fnd: Findings,
    events: list[EventDraft],
    roots: dict[int, str],
) -> None:
    """Build the active rows in order, and the events met on the way with what each swept
    and kept of the window."""
    w = _Window()
    for r in order:
        obj = r.obj
        if obj is None:
            continue
        if r.type == "system":
            st = obj.get("subtype")
            if st == "compact_boundary":
                w.end_compaction()
                w.comp = _compaction(r, obj, w.rows, fnd, events, len(b.rows))
                w.reset(list(w.comp.preserved))
            elif st == "microcompact_boundary":
                events.append(_microcompaction(r, obj, w, len(b.rows)))
            continue
        root = roots.get(id(r)) if roots else None
        if root == "compaction":  # Claude Code 1.0.x: the summary record is the boundary
            w.end_compaction()
            w.comp = _compaction(r, {}, w.rows, fnd, events, len(b.rows))
            w.comp.event.extra["form"] = "summary_root"
            w.reset([])
        elif root == "clear":
            w.end_compaction()
            ev = _event("clear", r, obj, {}, {}, len(b.rows))
            ev.swept = list(w.rows)
            events.append(ev)
            w.reset([])
        old = w.by_uuid.get(r.uuid)
        if old is not None:
            w.copy_of(old)
            continue
        n_before = len(b.rows)
        row = b.add(r)
        if row is None:
            continue
        w.by_uuid[r.uuid] = row
        if len(b.rows) == n_before:
            continue  # merged into the previous row
        w.add(row, r)
    w.end_compaction()


def _md(obj: dict[str, Any], camel: str, snake: str) -> dict[str, Any]:
    v = obj.get(camel)
    if not isinstance(v, dict):
        v = obj.get(snake)
    return v if isinstance(v, dict) else {}


def _g(md: dict[str, Any], camel: str, snake: str) -> Any:
    v = md.get(camel)
    return md.get(snake) if v is None else v


def _compaction(
    r: _Rec,
    obj: dict[str, Any],
    window: list[_RowB],
    fnd: Findings,
    events: list[EventDraft],
    pos: int,
) -> _Compaction:
    """A ``compact_boundary`` (``obj``: empty for an old-form summary root): its event, the
    rows of the window it preserves and sweeps."""
    md = _md(obj, "compactMetadata", "compact_metadata")
    pm = _g(md, "preservedMessages", "preserved_messages")
    seg = _g(md, "preservedSegment", "preserved_segment")
    uuids: list[str] = []
    if isinstance(pm, dict):
        u = _g(pm, "uuids", "all_uuids")
        if isinstance(u, list):
            uuids = [x for x in u if isinstance(x, str)]
    preserved: list[_RowB] = []
    if uuids:
        want = set(uuids)
        preserved = [row for row in window if any(u in want for u in row.uuids)]
    elif isinstance(seg, dict):
        head, tail = _g(seg, "headUuid", "head_uuid"), _g(seg, "tailUuid", "tail_uuid")
        inside = False
        for row in window:
            if not inside and head in row.uuids:
                inside = True
            if inside:
                preserved.append(row)
                if tail in row.uuids:
                    break
        if head is not None and not preserved:
            fnd.add(
                "preserved_not_found", "warning", r.line, "preservedSegment head not in the window"
            )
    kept = set(map(id, preserved))
    swept = [row for row in window if id(row) not in kept]
    ev = _event("compaction", r, obj, md, _compaction_extra(obj, md), pos)
    ev.swept, ev.preserved = swept, preserved
    events.append(ev)
    return _Compaction(ev, preserved, swept, set(uuids), set(map(id, preserved)))


def _compaction_extra(obj: dict[str, Any], md: dict[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for camel, snake in (
        ("durationMs", "duration_ms"),
        ("messagesSummarized", "messages_summarized"),
        ("userContext", "user_context"),
        ("direction", "direction"),
        ("preCompactDiscoveredTools", "pre_compact_discovered_tools"),
        ("cumulativeDroppedTokens", "cumulative_dropped_tokens"),
    ):
        v = _g(md, camel, snake)
        if v is not None:
            extra[snake] = v
    lp = obj.get("logicalParentUuid")
    if isinstance(lp, str):
        extra["logical_parent_uuid"] = lp
    if not md:
        extra["no_metadata"] = True
    return extra


def _event(
    kind: str, r: _Rec, obj: dict[str, Any], md: dict[str, Any], extra: dict[str, Any], pos: int
) -> EventDraft:
    """An event from its record ``obj`` and that record's metadata ``md``: trigger, the token
    counts it recorded, time, line and uuid; ``pos``: how many active rows came before it."""
    trig = md.get("trigger")
    return EventDraft(
        kind,
        r.line,
        iso_ms(obj.get("timestamp")),
        uuid=r.uuid,
        trigger=trig if isinstance(trig, str) else None,
        pre_tokens=as_int(_g(md, "preTokens", "pre_tokens")),
        post_tokens=as_int(_g(md, "postTokens", "post_tokens")),
        extra=extra,
        pos=pos,
    )


def _microcompaction(r: _Rec, obj: dict[str, Any], w: _Window, pos: int) -> EventDraft:
    """A ``microcompact_boundary``: the tool results (and attachments) it cleared, which stay
    in the window as stubs."""
    md = _md(obj, "microcompactMetadata", "microcompact_metadata")
    ids = _g(md, "compactedToolIds", "compacted_tool_ids")
    att = _g(md, "clearedAttachmentUUIDs", "cleared_attachment_uuids")
    swept: list[_RowB] = []
    taken: set[int] = set()
    for i in ids if isinstance(ids, list) else []:
        row = w.result_row.get(i) if isinstance(i, str) else None
        if row is not None and id(row) in w.ids and id(row) not in taken:
            swept.append(row)
            taken.add(id(row))
    for u in att if isinstance(att, list) else []:
        row = w.by_uuid.get(u) if isinstance(u, str) else None
        if row is not None and id(row) in w.ids and id(row) not in taken:
            swept.append(row)
            taken.add(id(row))
    extra: dict[str, Any] = {}
    ts = as_int(_g(md, "tokensSaved", "tokens_saved"))
    if ts is not None:
        extra["tokens_saved"] = ts
    if isinstance(ids, list):
        extra["n_tool_ids"] = len(ids)
    ev = _event("microcompaction", r, obj, md, extra, pos)
    ev.swept = swept
    return ev


# --- finishing ------------------------------------------------------------------------------


def _finish(
    path: Path,
    built: _Built,
    fnd: Findings,
    meta: dict[str, str],
    session_id: str | None,
    agent_id: str | None,
) -> ParsedTranscript:
    for c in built.calls:  # once per call, from the fragment chosen
        c.tokens = anthropic_tokens(c.usage)
        c.unknown = unknown_counts(c.usage, "anthropic")
        if c.unknown:
            bad_usage(fnd, c.line, anthropic_bad_counts(c.usage))
            c.row.malformed = True
            c.row.note = "usage holds values that are not token counts"
        c.row.tokens = {**c.tokens, **c.unknown}
    rows, branches = number_rows(built.rows, built.branches)
    _event_tokens(built.rows, built.events)
    events = sorted((ev.final() for ev in built.events), key=lambda e: e.line)
    calls = final_calls(built.calls)
    for ev in events:
        if ev.kind == "compaction" and ev.summary_seq is None:
            fnd.add(
                "summary_missing",
                "info",
                ev.line,
                "compact_boundary without a summary row after it",
            )
    if "model" not in meta:
        for r in rows:
            if r.model:
                meta["model"] = r.model
                break
    for rb in (*built.rows, *built.branches):
        rb.call = None  # break the row <-> call cycles: reference counting frees them now
    return ParsedTranscript(
        path=str(path),
        format="claude_code",
        session_id=session_id,
        meta=meta,
        rows=rows,
        other_branches=branches,
        events=events,
        findings=[],
        calls=calls,
        agent_id=agent_id,
    )


def _event_tokens(rows: list[_RowB], events: list[EventDraft]) -> None:
    """Each event's ``tokens_before``/``tokens_after``: the prompt size of the last call before
    its position among the active rows and of the first call from it on."""
    n_rows = len(rows)
    last_before: list[int | None] = [None] * (n_rows + 1)
    first_from: list[int | None] = [None] * (n_rows + 1)
    for i, row in enumerate(rows):
        v = _call_input(row)
        last_before[i + 1] = v if v is not None else last_before[i]
    for i in range(n_rows - 1, -1, -1):
        v = _call_input(rows[i])
        first_from[i] = v if v is not None else first_from[i + 1]
    for ev in events:
        if ev.pos is not None:
            ev.tokens_before, ev.tokens_after = last_before[ev.pos], first_from[ev.pos]


def _call_input(row: _RowB) -> int | None:
    c = row.call
    return c.tokens.get("input") if c is not None and c.row is row else None


# --- public ---------------------------------------------------------------------------------


def parse_claude_code(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    subagents: bool = True,
    warn: bool = True,
) -> ParsedTranscript:
    """Parse one Claude Code session file (``<session>.jsonl``) into rows, events and findings.

    :param path: the session file (or a subagent's ``agent-*.jsonl``).
    :param max_line_bytes: longer lines are skipped with a ``huge_line`` finding.
    :param subagents: also parse the session's subagent files.
    :param warn: emit one :class:`adfkit.AdfWarning` when there are warning- or error-level
        findings (a half-written last line, bad JSON...).
    :raises NotTranscriptError: the file is empty, binary, an ``.adf``, a Codex rollout, or JSON
        lines of another kind.

    Examples
    --------
    >>> t = parse_claude_code(next(Path("sample_agents/claude-code").rglob("*.jsonl")),
    ...                       warn=False)
    >>> t.format
    'claude_code'
    """
    p = Path(path).expanduser()
    with gc_paused():
        return _parse(p, Findings(), max_line_bytes, subagents, warn)


def _parse(
    p: Path, fnd: Findings, max_line_bytes: int, subagents: bool, warn: bool
) -> ParsedTranscript:
    d = _read(p, max_line_bytes, fnd)
    main = [r for r in d.recs if not r.side]
    has_main = any(r.type in ("user", "assistant") for r in main)
    side_file = not has_main
    group = d.recs if side_file else main
    built = _assemble(group, fnd, d, side_group=side_file)
    sid = max(d.session_ids, key=lambda k: d.session_ids[k]) if d.session_ids else None
    agent_id = None
    if side_file:
        for r in d.recs:
            if r.obj is not None and isinstance(r.obj.get("agentId"), str):
                agent_id = r.obj["agentId"]
                break
        if agent_id is None and p.name.startswith("agent-"):
            agent_id = p.name[len("agent-") : -len(".jsonl")] if p.name.endswith(".jsonl") else None
    meta = dict(d.meta)
    if sid is not None:
        meta["session_id"] = sid
    out = _finish(p, built, fnd, meta, sid, agent_id)
    if subagents and not side_file:
        inline = [r for r in d.recs if r.side]
        subs = _inline_sidechains(p, inline, fnd, d, sid) if inline else []
        subs.extend(_subagent_files(p, sid, parse_claude_code, max_line_bytes, warn))
        out.subagents = subs
        _link_subagents(out, built.agent_results)
    out.findings = fnd.done()
    if warn:
        warn_findings(str(p), out.findings, stacklevel=4)
    return out


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
        for f in sorted(sub_dir.glob("agent-*.jsonl")):
            files.append((f, _sidecar(f)))
    if sid is not None:
        for f in sorted(p.parent.glob("agent-*.jsonl")):
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
            for _, data, _c in iter_lines(fh, 8 << 20):
                if max_lines <= 0:
                    break
                max_lines -= 1
                if data is None:
                    continue
                obj, _p = loads_line(data)
                if isinstance(obj, dict) and isinstance(obj.get("sessionId"), str):
                    return str(obj["sessionId"])
    except (NotTranscriptError, OSError):  # a FIFO, gone, unreadable: not this session's
        return None
    return None


def _link_subagents(main: ParsedTranscript, agent_results: dict[str, str]) -> None:
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


def list_claude_code_sessions(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Claude Code sessions under a projects folder (``~/.claude/projects``) or one project
    folder. One row per main session file, newest first.

    Columns: ``path`` (str), ``session_id`` (str: the records' ``sessionId``, else the file
    name), ``cwd`` (str: from the records, not from the folder name), ``size_bytes`` (int),
    ``modified`` (datetime64[ns, UTC]), ``n_subagents`` (int: ``agent-*.jsonl`` files of this
    session, compaction helpers ``agent-acompact-*`` excluded), ``error`` (str or None: why the
    first records could not be read). ``agent-*.jsonl`` files are never listed as sessions.

    Examples
    --------
    >>> df = list_claude_code_sessions("sample_agents/claude-code/projects")
    >>> list(df.columns)
    ['path', 'session_id', 'cwd', 'size_bytes', 'modified', 'n_subagents', 'error']
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise NotTranscriptError("not a folder of Claude Code projects", path=root)
    cands = list(root.glob("*.jsonl")) + list(root.glob("*/*.jsonl"))
    recs: list[dict[str, Any]] = []
    legacy: dict[Path, dict[str, int]] = {}
    for f in sorted(set(cands)):
        if f.name.startswith("agent-") or f.is_dir():
            continue  # a FIFO or device is listed, with why it cannot be read in ``error``
        try:
            st = f.stat()
        except OSError:
            continue  # vanished (cleanup) between listing and stat
        sid, cwd, err = _peek(f)
        sess_dir = f.with_suffix("") / "subagents"
        n_sub = 0
        if sess_dir.is_dir():
            n_sub = sum(
                1 for x in sess_dir.glob("agent-*.jsonl") if not x.name.startswith("agent-acompact")
            )
        sid = sid or f.stem
        if f.parent not in legacy:
            legacy[f.parent] = _legacy_agents(f.parent)
        n_sub += legacy[f.parent].get(sid, 0)
        recs.append(
            {
                "path": str(f),
                "session_id": sid,
                "cwd": cwd,
                "size_bytes": int(st.st_size),
                "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
                "n_subagents": n_sub,
                "error": err,
            }
        )
    return sessions_frame(recs, schema.CLAUDE_CODE_SESSIONS)


def _legacy_agents(folder: Path) -> dict[str, int]:
    """``sessionId`` -> how many legacy ``agent-*.jsonl`` files in ``folder`` belong to it
    (compaction helpers excluded): each file's first records read once per listing, not once
    per session beside it."""
    out: dict[str, int] = {}
    for x in folder.glob("agent-*.jsonl"):
        if not x.name.startswith("agent-acompact"):
            sid = _first_session_id(x, 5)
            if sid is not None:
                out[sid] = out.get(sid, 0) + 1
    return out


def _peek(f: Path, max_lines: int = 200) -> tuple[str | None, str | None, str | None]:
    try:
        sniff(f, read_head(f), _WHAT)
    except NotTranscriptError as e:
        return None, None, e.detail
    sid = cwd = None
    try:
        with open_text_stream(f) as fh:
            for _, data, _c in iter_lines(fh, 8 << 20):
                if max_lines <= 0 or (sid and cwd):
                    break
                max_lines -= 1
                if data is None:
                    continue
                obj, _p = loads_line(data)
                if not isinstance(obj, dict):
                    continue
                if sid is None and isinstance(obj.get("sessionId"), str):
                    sid = obj["sessionId"]
                if cwd is None and isinstance(obj.get("cwd"), str):
                    cwd = obj["cwd"]
    except OSError as e:
        return sid, cwd, f"cannot read ({e.strerror})"
    return sid, cwd, None
