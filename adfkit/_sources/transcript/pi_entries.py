"""pi's session entries, read the way pi reads them: what every reader of pi-shaped sessions
shares (pi's own ``.jsonl`` files, :mod:`adfkit._sources.pi`; OpenClaw's, which keeps pi's entries
as JSON lines or as rows of its SQLite store, :mod:`adfkit._sources.openclaw`).

A reader gives :func:`build` an :class:`EntryLog` (the header and the entries in the order
written, each with its place: a line of a file, a row's ``seq`` in a store) and gets the rows,
branches and compaction events; :func:`finish` makes the :class:`ParsedTranscript`. The rules
(the tree, the rows each entry gives, what a compaction sweeps and keeps) are those of
:mod:`adfkit._sources.pi.parser`'s docstring; :func:`read_lines` reads a ``.jsonl`` file of
entries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._core.rows import as_count
from adfkit._sources.transcript.kit import (
    CallDraft,
    CallInputs,
    EventDraft,
    Findings,
    JsonLines,
    ParsedTranscript,
    RowDraft,
    TypeCounts,
    anthropic_usage,
    bad_usage,
    check_head,
    final_calls,
    iso_ms,
    number_rows,
    own_call,
    result_text,
    tool_input,
)

#: Entry types of pi's session file (session-manager.ts ``SessionEntry``; ``hookMessage`` of v2
#: is a message role, not an entry type).
ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
#: Entry types that never reach the model (settings, bookmarks, extension state).
_NO_ROW = frozenset({"model_change", "thinking_level_change", "label", "session_info", "custom"})
MESSAGE_ROLES = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage"}
)
#: pi usage keys -> the Anthropic keys they are (pi's ``input`` is the uncached part, too).
_AS_ANTHROPIC = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cacheRead": "cache_read_input_tokens",
    "cacheWrite": "cache_creation_input_tokens",
}
_UUID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


@dataclass(slots=True)
class Entry:
    """One parsed, non-header line."""

    line: int
    obj: dict[str, Any]
    key: str
    parent: str | None = None
    #: Index in pi's array of parsed lines (header 0), for v1 ``firstKeptEntryIndex``.
    index: int = 0


@dataclass
class EntryLog:
    header: dict[str, Any] | None = None
    header_line: int = 0
    entries: list[Entry] = field(default_factory=list)
    #: pi's array of parsed lines: index -> entry (absent: the header, a skipped huge line, a
    #: value that is no object).
    by_index: dict[int, Entry] = field(default_factory=dict)
    #: Lines pi would have parsed that this reader could not (bad JSON is skipped by pi too).
    first_bad_line: int | None = None
    repaired: set[int] = field(default_factory=set)


# --- reading lines --------------------------------------------------------------------------


def read_lines(path: Path, max_line_bytes: int, fnd: Findings, what: str) -> EntryLog:
    """The entries of a ``.jsonl`` file of them, each with its place among the lines pi parses
    (a v1 compaction's ``firstKeptEntryIndex`` counts them all: the huge and non-object ones
    ``JsonLines`` drops, and the header, included). ``what`` names the file in errors
    (``"pi session"``)."""
    check_head(path, what)
    rd = EntryLog()
    unknown = TypeCounts()
    lines = JsonLines(path, fnd, "session", max_line_bytes=max_line_bytes)
    for n, obj in lines:
        index = lines.n_parsed + lines.n_huge - 1
        t = obj.get("type")
        if index == 0:
            rd.header, rd.header_line = header_of(path, obj, what), n
        elif t == "session":
            fnd.add("extra_header", "warning", n, "a second session header; skipped")
        else:
            if t not in ENTRY_TYPES:  # no row, but a node of the tree (pi indexes it too)
                unknown.add(t, n)
            i = obj.get("id")
            e = Entry(n, obj, i if isinstance(i, str) and i else f"@{n}", index=index)
            rd.entries.append(e)
            rd.by_index[index] = e
    if rd.header is None:
        raise NotTranscriptError(
            f"no complete JSON record: not a {what} (or its header is still being written)",
            path=path,
        )
    rd.first_bad_line, rd.repaired = lines.first_bad_line, set(lines.repaired)
    unknown.report(fnd, "unknown_entry_type", "warning", _unknown_entries)
    return rd


def header_of(path: Path | str, obj: Any, what: str) -> dict[str, Any]:
    """The first entry pi parses: its session header, else not a ``what`` (pi's own test,
    loadEntriesFromFile)."""
    if type(obj) is not dict or obj.get("type") != "session" or not isinstance(obj.get("id"), str):
        raise NotTranscriptError(
            "the first record is not a pi session header "
            f'({{"type": "session", "id", "timestamp", "cwd"}}): not a {what}',
            path=path,
        )
    return obj


def _unknown_entries(n: int, t: str) -> str:
    return (
        f"{n} entr{'y' if n == 1 else 'ies'} of unknown type {t!r} not read (not in pi's "
        "session format; its place in the tree is kept)"
    )


# --- the tree -------------------------------------------------------------------------------


def _link(rd: EntryLog, fnd: Findings) -> tuple[dict[str, Entry], list[Entry]]:
    """Parent keys, the id index (later duplicates win, as in pi) and the leaf's path."""
    by_key: dict[str, Entry] = {}
    prev: Entry | None = None
    for e in rd.entries:
        o = e.obj
        if e.key in by_key:
            fnd.add(
                "duplicate_id",
                "warning",
                e.line,
                f"entry id {e.key[:40]!r} already used on line {by_key[e.key].line}; "
                "the later entry wins (as in pi)",
            )
        if "parentId" in o:
            p = o["parentId"]
            if p is None:
                e.parent = None
            elif isinstance(p, str) and p in by_key:
                e.parent = p
            else:
                e.parent = prev.key if prev is not None else None
                where = f"the entry before it (line {prev.line})" if prev else "the root"
                fnd.add(
                    "dangling_parent",
                    "warning",
                    e.line,
                    f"parentId {str(p)[:40]!r} names no entry in the file (a lost line?); "
                    f"read as a child of {where}",
                )
        else:
            if "id" in o or (rd.header or {}).get("version", 1) not in (None, 1):
                fnd.add(
                    "missing_parent",
                    "warning",
                    e.line,
                    "entry without parentId in a tree-layout session; read as a child of the "
                    "entry before it",
                )
            e.parent = prev.key if prev is not None else None
        by_key[e.key] = e
        prev = e
    if not rd.entries:
        return by_key, []
    path: list[Entry] = []
    seen: set[str] = set()
    cur: Entry | None = by_key[rd.entries[-1].key]
    while cur is not None:
        if cur.key in seen:
            fnd.add("parent_cycle", "error", cur.line, "parentId chain loops; the path stops here")
            break
        seen.add(cur.key)
        path.append(cur)
        cur = by_key.get(cur.parent) if cur.parent is not None else None
    path.reverse()
    return by_key, path


# --- content --------------------------------------------------------------------------------


def _blocks(content: Any) -> list[dict[str, Any]]:
    """pi content (a string or a list of text/thinking/toolCall/image parts) -> ADF blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for b in content if isinstance(content, list) else []:
        if type(b) is not dict:
            continue
        t = b.get("type")
        if t == "text":
            v = b.get("text")
            out.append({"type": "text", "text": v if isinstance(v, str) else ""})
        elif t == "thinking":
            v = b.get("thinking")
            out.append({"type": "thinking", "thinking": v if isinstance(v, str) else ""})
        elif t == "toolCall":
            out.append(
                {
                    "type": "tool_use",
                    "id": b.get("id"),
                    "name": b.get("name"),
                    "input": tool_input(b.get("arguments")),
                }
            )
        elif t == "image":
            mime, data = b.get("mimeType"), b.get("data")
            url = f"data:{mime if isinstance(mime, str) else ''};base64,"
            url += data if isinstance(data, str) else ""
            out.append({"type": "image_url", "image_url": {"url": url}})
        else:
            out.append(b)
    return out


def bash_text(m: dict[str, Any]) -> str:
    """A ``bashExecution`` message as pi sends it to the model (messages.ts
    ``bashExecutionToText``).

    Examples
    --------
    >>> bash_text({"command": "ls", "output": "a", "exitCode": 2})
    'Ran `ls`\\n```\\na\\n```\\n\\nCommand exited with code 2'
    """
    cmd, out = m.get("command"), m.get("output")
    text = f"Ran `{cmd if isinstance(cmd, str) else ''}`\n"
    text += f"```\n{out}\n```" if isinstance(out, str) and out else "(no output)"
    code = m.get("exitCode")
    if m.get("cancelled") is True:
        text += "\n\n(command cancelled)"
    elif type(code) is int and code != 0:
        text += f"\n\nCommand exited with code {code}"
    full = m.get("fullOutputPath")
    if m.get("truncated") is True and isinstance(full, str) and full:
        text += f"\n\n[Output truncated. Full output: {full}]"
    return text


def pi_tokens(usage: Any) -> tuple[dict[str, int], dict[str, Any]]:
    """pi ``usage`` -> ``(ADF tokens, unknown)``: ``input`` = ``input + cacheRead +
    cacheWrite`` (pi's ``input`` is the uncached part), ``output``, ``cache_read``,
    ``cache_write``, and ``reasoning`` where a newer pi-ai writes ``reasoningTokens`` (a part
    of ``output``; OpenClaw 2026.9.6 installed on 2026-12-03 writes it, 0 without reasoning);
    ``unknown`` maps each ADF key whose source is not a count to the value as written (the row
    rule flags it).

    Examples
    --------
    >>> pi_tokens({"input": 3, "output": 7, "cacheRead": 100, "cacheWrite": 20})
    ({'input': 123, 'output': 7, 'cache_read': 100, 'cache_write': 20}, {})
    >>> pi_tokens({"input": -1, "output": 7})
    ({'output': 7}, {'input': -1})
    >>> pi_tokens({"input": 3, "output": 7, "reasoningTokens": 5})[0]
    {'input': 3, 'output': 7, 'reasoning': 5}
    """
    if not isinstance(usage, dict):
        return {}, {}
    same = {_AS_ANTHROPIC[k]: v for k, v in usage.items() if k in _AS_ANTHROPIC}
    tokens, unknown = anthropic_usage(same)
    if "reasoningTokens" in usage:
        r = as_count(usage["reasoningTokens"])
        if r is None:
            unknown["reasoning"] = usage["reasoningTokens"]
        else:
            tokens["reasoning"] = r
    return tokens, unknown


# --- building rows --------------------------------------------------------------------------


class _PRow(RowDraft):
    """A row being built from one entry (its ``id`` and ``parentId``); an assistant row is a
    model call of its own (:func:`own_call`)."""

    __slots__ = ()

    def __init__(self, e: Entry, role: str, content: list[dict[str, Any]]) -> None:
        super().__init__(role, content, e.line, _time(e.obj))
        i, p = e.obj.get("id"), e.obj.get("parentId")
        self.uuid = i if isinstance(i, str) else None
        self.parent_uuid = p if isinstance(p, str) else None


def _time(o: dict[str, Any]) -> int | None:
    m = o.get("message")
    if isinstance(m, dict):
        ts = m.get("timestamp")
        if type(ts) is int and ts > 0:
            return ts
    return iso_ms(o.get("timestamp"))


def _assistant_row(e: Entry, m: dict[str, Any], fnd: Findings, meta: dict[str, str]) -> _PRow:
    """An assistant message: one model call, its usage counted on its row (NA when an aborted
    or failed reply reported all zeros)."""
    row = _PRow(e, "assistant", _blocks(m.get("content")))
    model = m.get("model")
    row.model = model if isinstance(model, str) else None
    prov = m.get("provider")
    if isinstance(prov, str):
        meta["provider"] = prov
    stop = m.get("stopReason")
    tokens, unknown = pi_tokens(m.get("usage"))
    if unknown:
        bad_usage(fnd, e.line, sorted(unknown))
        row.malformed = True
        row.note = "usage holds values that are not token counts"
    if stop in ("aborted", "error") and not unknown and not any(tokens.values()):
        tokens = {}  # an aborted/failed reply reported nothing: unknown, not 0
        row.note = f"{stop} reply: its usage is all zeros (not reported); tokens NA"
    elif stop in ("aborted", "error"):
        row.note = f"{stop} reply"
    err = m.get("errorMessage")
    if isinstance(err, str) and err:
        row.note = f"{row.note or stop}: {err[:120]}"
    row.tokens = {**tokens, **unknown}
    own_call(row, tokens, row.model)
    return row


def _row_of(e: Entry, fnd: Findings, meta: dict[str, str]) -> _PRow | None:
    """The row an entry gives (None: no row: settings, extension state, excluded output)."""
    o = e.obj
    t = o.get("type")
    if t in _NO_ROW or t not in ENTRY_TYPES:
        return None
    if t == "compaction":
        s = o.get("summary")
        row = _PRow(e, "user", [{"type": "text", "text": s}] if isinstance(s, str) else [])
        row.kind_hint = "compaction_summary"
        if not isinstance(s, str):
            row.note = "compaction without a summary text"
        return row
    if t == "branch_summary":
        s = o.get("summary")
        row = _PRow(e, "user", [{"type": "text", "text": s if isinstance(s, str) else ""}])
        row.kind_hint = "message"
        row.note = "summary of an abandoned branch"
        return row
    if t == "custom_message":
        row = _PRow(e, "user", _blocks(o.get("content")))
        row.kind_hint = "message"
        return row
    m = o.get("message")
    if type(m) is not dict:
        fnd.add("bad_entry", "warning", e.line, "message entry without a message object; skipped")
        return None
    role = m.get("role")
    if role == "assistant":
        return _assistant_row(e, m, fnd, meta)
    if role == "toolResult":
        row = _PRow(
            e,
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": m.get("toolCallId"),
                    "content": result_text(m.get("content")),
                    "is_error": m.get("isError") is True,
                }
            ],
        )
        return row
    if role == "user":
        return _PRow(e, "user", _blocks(m.get("content")))
    if role == "bashExecution":
        if m.get("excludeFromContext") is True:
            return None
        row = _PRow(e, "user", [{"type": "text", "text": bash_text(m)}])
        row.kind_hint = "message"
        row.note = "a command the user ran (!)"
        return row
    if role in ("custom", "hookMessage"):
        row = _PRow(e, "user", _blocks(m.get("content")))
        row.kind_hint = "message"
        return row
    fnd.add(
        "unknown_role",
        "warning",
        e.line,
        f"message role {str(role)[:30]!r} is not one of pi's; skipped",
    )
    return None


@dataclass
class Built:
    rows: list[_PRow] = field(default_factory=list)
    branch_rows: list[_PRow] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)


def _first_kept(
    c: Entry, rd: EntryLog, pos: dict[str, int], by_key: dict[str, Entry], fnd: Findings
) -> int | None:
    """Path position of compaction ``c``'s first kept entry (None: not on the path before it)."""
    o = c.obj
    here = pos[c.key]
    target: Entry | None = None
    named: str
    fid, fidx = o.get("firstKeptEntryId"), o.get("firstKeptEntryIndex")
    if isinstance(fid, str):
        named = f"firstKeptEntryId {fid[:40]!r}"
        target = by_key.get(fid)
    elif type(fidx) is int:
        named = f"firstKeptEntryIndex {fidx}"
        target = rd.by_index.get(fidx)
        if rd.first_bad_line is not None and rd.first_bad_line < c.line:
            fnd.add(
                "index_after_bad_line",
                "warning",
                c.line,
                f"{named} counts parsed lines, and line {rd.first_bad_line} could not be "
                "parsed: the index may be off by the lines lost",
            )
    else:
        fnd.add(
            "bad_compaction",
            "warning",
            c.line,
            "compaction names no first kept entry (firstKeptEntryId / firstKeptEntryIndex); "
            "read as keeping nothing",
        )
        return None
    p = pos.get(target.key) if target is not None else None
    if p is None or p >= here:
        fnd.add(
            "dangling_first_kept",
            "warning",
            c.line,
            f"{named} is not an entry on the conversation's path before the compaction; "
            "nothing before it is kept (as pi reads it)",
        )
        return None
    return p


def build(
    rd: EntryLog, fnd: Findings, meta: dict[str, str], window_size: int | None = None
) -> Built:
    """The rows of the conversation's path (the last entry's), its compaction events (each
    with ``window_size``, the context window the record states, where it does) and the rows of
    abandoned branches."""
    by_key, path = _link(rd, fnd)
    pos = {e.key: i for i, e in enumerate(path)}
    b = Built()
    window: list[_PRow] = []
    row_at: dict[int, _PRow] = {}  # path position -> row
    inputs = CallInputs()
    for i, e in enumerate(path):
        row = _row_of(e, fnd, meta)
        if row is None:
            continue
        if e.line in rd.repaired:
            row.malformed = True
            row.note = "non-UTF-8 bytes or lone surrogates replaced"
        b.rows.append(row)
        if e.obj.get("type") == "compaction":
            kept = _kept(path, row_at, _first_kept(e, rd, pos, by_key, fnd), i)
            ev = _compaction(e, row, window, kept)
            ev.context_window = window_size
            b.events.append(ev)
            inputs.event(ev)
            window = [*kept, row]
        else:
            window.append(row)
        row_at[i] = row
        if row.call is not None and "input" in row.call.tokens:
            inputs.call(row.call.tokens["input"])
    _branches(rd, pos, b, meta)
    for e in rd.entries:  # the session's name: the latest session_info's
        if e.obj.get("type") == "session_info" and isinstance(e.obj.get("name"), str):
            meta["title"] = e.obj["name"].strip()
    return b


def _kept(path: list[Entry], row_at: dict[int, _PRow], first: int | None, i: int) -> list[_PRow]:
    """The rows a compaction at path position ``i`` keeps: pi keeps the entries from the first
    kept one on, an earlier summary excepted (only the latest compaction's summary is sent:
    buildSessionContext)."""
    span = range(first, i) if first is not None else range(0)
    return [row_at[j] for j in span if j in row_at and path[j].obj.get("type") != "compaction"]


def _compaction(e: Entry, row: _PRow, window: list[_PRow], kept: list[_PRow]) -> EventDraft:
    """The event of compaction entry ``e`` (its summary ``row``): it sweeps the rows of the
    ``window`` it does not keep."""
    o = e.obj
    i = o.get("id")
    kept_ids = set(map(id, kept))
    return EventDraft(
        "compaction",
        e.line,
        iso_ms(o.get("timestamp")),
        i if isinstance(i, str) else None,
        pre_tokens=as_count(o.get("tokensBefore")),
        post_tokens=as_count(o.get("tokensAfter")),
        swept=[r for r in window if id(r) not in kept_ids],
        preserved=kept,
        summary=row,
        extra=_compaction_extra(o),
    )


def _compaction_extra(o: dict[str, Any]) -> dict[str, Any]:
    """What a compaction entry records beyond the event's own fields (and that pi sends the
    summary ahead of the entries it kept: buildSessionContext)."""
    extra: dict[str, Any] = {"summary_first": True}
    details = o.get("details")
    if isinstance(details, dict):
        for k in ("readFiles", "modifiedFiles"):
            v = details.get(k)
            if isinstance(v, list):
                extra[k] = [x for x in v if isinstance(x, str)]
    if o.get("fromHook") is True:
        extra["from_hook"] = True
    for k in ("firstKeptEntryId", "firstKeptEntryIndex"):
        if k in o:
            extra[k] = o[k]
    return extra


def _branches(rd: EntryLog, pos: dict[str, int], b: Built, meta: dict[str, str]) -> None:
    """Rows of entries off the path, one branch per first off-path entry under an on-path one,
    and a rewind sweeping each branch's rows."""
    branch_of: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for e in rd.entries:
        if e.key in pos:
            continue
        bid = branch_of.get(e.parent) if e.parent is not None else None
        if bid is None:
            bid = f"branch-{len(first_line) + 1}"
            first_line[bid] = e.line
        branch_of[e.key] = bid
        row = _row_of(e, Findings(), meta)  # its findings were not for the conversation
        if row is not None:
            row.branch = bid
            b.branch_rows.append(row)
    for bid, line in first_line.items():
        rows = [r for r in b.branch_rows if r.branch == bid]
        if rows:
            b.events.append(EventDraft("rewind", line, swept=rows, extra={"branch": bid}))


# --- result ---------------------------------------------------------------------------------


def finish(
    path: Path | str,
    fmt: str,
    rd: EntryLog,
    b: Built,
    meta: dict[str, str],
    fnd: Findings,
    extra_calls: Iterable[CallDraft] = (),
) -> ParsedTranscript:
    """The :class:`ParsedTranscript` of format ``fmt``: rows numbered, calls (each reply's, and
    ``extra_calls`` on no row), the session id (the header's, else a uuid in the name)."""
    rows, branches = number_rows(b.rows, b.branch_rows)
    calls = [r.call for r in (*b.rows, *b.branch_rows) if r.call is not None]
    for c in calls:  # a reply's call is noted as its row is (aborted, repaired)
        c.note = c.row.note if c.row is not None else None
    calls.extend(extra_calls)
    sid = (rd.header or {}).get("id")
    if not isinstance(sid, str):
        m = _UUID_RE.search(Path(path).name)
        sid = m.group(1) if m else None
    return ParsedTranscript(
        path=str(path),
        format=fmt,
        session_id=sid,
        meta=meta,
        rows=rows,
        other_branches=branches,
        events=[ev.final() for ev in b.events],
        findings=fnd.done(),
        calls=final_calls(calls),
    )


def header_meta(h: dict[str, Any]) -> dict[str, str]:
    """What a session header says, as text: ``session_version`` (1 when absent), ``cwd``,
    ``started``, ``parent_session`` (v2+ ``parentSession``, v1 ``branchedFrom``), and the v1
    header's ``provider``, ``model`` and ``thinking_level``.

    Examples
    --------
    >>> header_meta({"type": "session", "id": "x", "cwd": "/w", "modelId": "m"})
    {'session_version': '1', 'cwd': '/w', 'model': 'm'}
    """
    v = h.get("version")
    out = {"session_version": str(v if type(v) is int else 1)}
    for src, dst in (
        ("cwd", "cwd"),
        ("timestamp", "started"),
        ("parentSession", "parent_session"),
        ("branchedFrom", "parent_session"),
        ("provider", "provider"),
        ("modelId", "model"),
        ("thinkingLevel", "thinking_level"),
    ):
        val = h.get(src)
        if isinstance(val, str) and val:
            out.setdefault(dst, val)
    return out
