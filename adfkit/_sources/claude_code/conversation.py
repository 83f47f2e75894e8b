"""One conversation (a session's main chain, or an inline subagent's) from its records: the
active rows and events, the abandoned branches and their rewinds, the finished transcript."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from adfkit._sources.claude_code.active_path import _active_path, _Path, _place_off_path, _Tops
from adfkit._sources.claude_code.events import _copied_boundaries, _walk_active
from adfkit._sources.claude_code.graph import _Graph, _Links
from adfkit._sources.claude_code.records import _FileData, _Rec
from adfkit._sources.claude_code.rows import _Builder, _Call, _RowB
from adfkit._sources.transcript.kit import (
    EventDraft,
    Findings,
    ParsedTranscript,
    TranscriptRow,
    anthropic_bad_counts,
    anthropic_usage,
    bad_usage,
    event_tokens,
    final_calls,
    iso_ms,
    number_rows,
)


@dataclass
class _Built:
    rows: list[_RowB]
    branches: list[_RowB]
    events: list[EventDraft]
    calls: list[_Call]
    agent_results: dict[str, str]


def _assemble(recs: list[_Rec], fnd: Findings, d: _FileData, side_group: bool) -> _Built:
    """The rows of one conversation (the main one, or one inline subagent's): the active path
    with what joins it from off the chain, its events, then the abandoned branches."""
    copied = _copied_boundaries(recs) if d.copies else {}
    g = _Graph(recs, fnd, _Links(d.progress, fnd), copied)
    ap = _active_path(g, fnd, side_group)
    order, branch_recs = _place_off_path(g, ap, side_group)
    calls: dict[str, _Call] = {}
    b = _Builder(fnd, calls, d.repaired)
    events: list[EventDraft] = []
    _walk_active(order, b, fnd, events, ap.roots, copied)
    branch_rows = _branches(ap, branch_recs, b, events)
    return _Built(b.rows, branch_rows, events, list(calls.values()), b.agent_results)


def _branches(
    ap: _Path, branch_recs: list[_Rec], b: _Builder, events: list[EventDraft]
) -> list[_RowB]:
    """The rows of the abandoned branches (``branch-1``... by their topmost record, in file
    order), and a ``rewind`` event for each branch a model call was made from (line and time:
    the active record that replaced it)."""
    groups, tops, forks = _by_top(ap, branch_recs)
    if not groups:
        return []
    on_path = _OnPath(ap.recs)
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
        events.append(_rewind(bid, bb.rows, tops[tid], forks[tid], on_path))
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


def _by_top(
    ap: _Path, branch_recs: list[_Rec]
) -> tuple[dict[int, list[_Rec]], dict[int, _Rec], dict[int, _Rec | None]]:
    """The records off the active path grouped by their topmost record (keyed by its id):
    each group's records, its top, and the record on the path it forks from (None: none)."""
    groups: dict[int, list[_Rec]] = {}
    tops: dict[int, _Rec] = {}
    forks: dict[int, _Rec | None] = {}
    top_of = _Tops(ap.on_path)
    for r in branch_recs:
        top, fork = top_of.of(r)
        groups.setdefault(id(top), []).append(r)
        tops[id(top)] = top
        forks[id(top)] = fork
    return groups, tops, forks


class _OnPath:
    """The records of the active path that replace a branch: the first child on the path of
    each record, and the path's roots."""

    def __init__(self, path: list[_Rec]) -> None:
        self.first_child: dict[int, _Rec] = {}
        for r in path:
            p = r.pnode
            if p is not None and id(p) not in self.first_child:
                self.first_child[id(p)] = r
        self.roots = [r for r in path if r.pnode is None]

    def replacing(self, fork: _Rec | None) -> _Rec | None:
        """The active record that replaced a branch forking from ``fork`` (None: from no
        record, replaced by the path's first root)."""
        if fork is not None:
            return self.first_child.get(id(fork))
        return self.roots[0] if self.roots else None


def _rewind(
    bid: str, rows: list[_RowB], top: _Rec, fork: _Rec | None, on_path: _OnPath
) -> EventDraft:
    """The ``rewind`` event of branch ``bid``: at the active record that replaced it (at the
    branch's top when none did)."""
    repl = on_path.replacing(fork)
    return EventDraft(
        "rewind",
        repl.line if repl is not None else top.line,
        iso_ms((repl.obj or {}).get("timestamp")) if repl is not None else None,
        uuid=repl.uuid if repl is not None else None,
        swept=list(rows),
        extra={
            "branch": bid,
            "fork_uuid": fork.uuid if fork is not None else None,
            "branch_first_line": top.line,
        },
    )


def _finish(
    path: Path,
    built: _Built,
    fnd: Findings,
    meta: dict[str, str],
    session_id: str | None,
    agent_id: str | None,
) -> ParsedTranscript:
    for c in built.calls:  # once per call, from the fragment chosen
        c.tokens, c.unknown = anthropic_usage(c.usage)
        if c.unknown:
            bad_usage(fnd, c.line, anthropic_bad_counts(c.usage))
            c.row.malformed = True
            c.row.note = "usage holds values that are not token counts"
        c.row.tokens = {**c.tokens, **c.unknown}
    rows, branches = number_rows(built.rows, built.branches)
    _summaries_before_preserved(built.events, rows)
    event_tokens(built.events, [_call_input(r) for r in built.rows])
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


def _call_input(row: _RowB) -> int | None:
    c = row.call
    return c.tokens.get("input") if c is not None and c.row is row else None


def _summaries_before_preserved(events: list[EventDraft], rows: list[TranscriptRow]) -> None:
    """A compaction's summary is sent before the rows it preserved (the model gets the summary,
    then the preserved segment), but those rows were written before it: the summary row is
    displayed (``ord``) right before the first of them."""
    for ev in events:
        s = ev.summary
        if ev.kind != "compaction" or s is None or not ev.preserved:
            continue
        first = min(p.seq for p in ev.preserved)
        if first < s.seq:
            rows[s.seq - 1].ord = first - 1
