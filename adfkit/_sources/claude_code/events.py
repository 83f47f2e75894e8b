"""Events met on the active path: compactions (what each swept and preserved), microcompactions,
clears; the context window they change (TRANSCRIPTS.md §1.6)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adfkit._sources.claude_code.content import _CopiedBoundaries
from adfkit._sources.claude_code.records import _Rec
from adfkit._sources.claude_code.rows import _Builder, _RowB
from adfkit._sources.transcript.kit import (
    EventDraft,
    Findings,
    as_int,
    iso_ms,
)


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


def _copied_boundaries(recs: list[_Rec]) -> dict[int, str]:
    """The line of each ``compact_boundary`` a fork copied from its parent -> the session it
    copied it from (:class:`.content._CopiedBoundaries`, the records in file order)."""
    rule = _CopiedBoundaries()
    out: dict[int, str] = {}
    for r in recs:
        obj = r.obj
        if obj is None or r.side:
            continue
        if r.type == "system" and obj.get("subtype") == "compact_boundary":
            rule.boundary(r.line)
        elif r.type == "assistant":
            paid, held = rule.call(obj)
            if paid is not None:
                out.update(dict.fromkeys(held, paid))
            if rule.own:  # no later boundary is a copy
                break
    return out


def _walk_active(
    order: list[_Rec],
    b: _Builder,
    fnd: Findings,
    events: list[EventDraft],
    roots: dict[int, str],
    copied: dict[int, str],
) -> None:
    """Build the active rows in order, and the events met on the way with what each swept
    and kept of the window. A boundary a fork copied (``copied``: its line -> the session it
    was copied from) is no event of this session's: its summary is a row of the history (the
    fork's model was sent it), the compaction is the other session's (``inherited_compaction``,
    info), as the copied calls' usage is (:func:`.content._paid_by`)."""
    w = _Window()
    for r in order:
        obj = r.obj
        if obj is None:
            continue
        if r.type == "system":
            st = obj.get("subtype")
            if st == "compact_boundary" and r.line in copied:
                w.end_compaction()
                w.reset([])
                fnd.add("inherited_compaction", "info", r.line, _inherited_text(copied[r.line]))
            elif st == "compact_boundary":
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


def _inherited_text(session: str) -> str:
    return (
        f"a copy of session {session}'s compaction (claude --fork-session copies the parent's "
        "records): its summary is in this history, the compaction in that session's "
        "compactions()"
    )


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
