"""pi's session entries, read the way pi reads them: what every reader of pi-shaped sessions
shares (pi's own ``.jsonl`` files, :mod:`adfkit._sources.pi`; OpenClaw's, which keeps pi's entries
as JSON lines or as rows of its SQLite store, :mod:`adfkit._sources.openclaw`).

A reader gives :func:`build` an :class:`~.pi_entry_log.EntryLog` (the header and the entries in
the order written, each with its place: a line of a file, a row's ``seq`` in a store) and gets
the rows, branches and compaction events; :func:`finish` makes the :class:`ParsedTranscript`.
The rules (the tree, the rows each entry gives, what a compaction sweeps and keeps) are those
of :mod:`adfkit._sources.pi.parser`'s docstring. The entries read: :mod:`.pi_entry_log`
(:func:`~.pi_entry_log.read_lines` reads a ``.jsonl`` file of them); the row each gives:
:mod:`.pi_rows`; here, the tree, the compactions and the abandoned branches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adfkit._core.rows import as_count
from adfkit._sources.transcript.kit import (
    CallDraft,
    CallInputs,
    EventDraft,
    Findings,
    ParsedTranscript,
    final_calls,
    iso_ms,
    number_rows,
)
from adfkit._sources.transcript.pi_entry_log import Entry, EntryLog
from adfkit._sources.transcript.pi_rows import PiRow, row_of

_UUID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


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


@dataclass
class Built:
    rows: list[PiRow] = field(default_factory=list)
    branch_rows: list[PiRow] = field(default_factory=list)
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
    window: list[PiRow] = []
    row_at: dict[int, PiRow] = {}  # path position -> row
    inputs = CallInputs()
    for i, e in enumerate(path):
        row = row_of(e, fnd, meta)
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


def _kept(path: list[Entry], row_at: dict[int, PiRow], first: int | None, i: int) -> list[PiRow]:
    """The rows a compaction at path position ``i`` keeps: pi keeps the entries from the first
    kept one on, an earlier summary excepted (only the latest compaction's summary is sent:
    buildSessionContext)."""
    span = range(first, i) if first is not None else range(0)
    return [row_at[j] for j in span if j in row_at and path[j].obj.get("type") != "compaction"]


def _compaction(e: Entry, row: PiRow, window: list[PiRow], kept: list[PiRow]) -> EventDraft:
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
        row = row_of(e, Findings(), meta)  # its findings were not for the conversation
        if row is not None:
            row.branch = bid
            b.branch_rows.append(row)
    for bid, line in first_line.items():
        rows = [r for r in b.branch_rows if r.branch == bid]
        if rows:
            b.events.append(EventDraft("rewind", line, swept=rows, extra={"branch": bid}))


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
